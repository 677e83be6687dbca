/* tnd_report - what one run leaves in report.json, and its summary line.
 *
 * The run loop feeds it as things happen (usage per role, one entry per
 * attempt) and asks it at the end for the JSON and the one-line summary
 * people read ("approved after 2 iterations · 4 LLM calls · ..."). */
#ifndef TND_REPORT_H
#define TND_REPORT_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "orchestrator/context.h"
#include "orchestrator/gate.h"
#include "proto/code.h"

typedef struct tnd_report tnd_report;

/* The roles usage is counted for. */
typedef enum tnd_role {
    TND_ROLE_CODER = 0,
    TND_ROLE_REVIEWER = 1,
} tnd_role;

/* Start a report. Strings are copied; config may be NULL. */
tnd_report *tnd_report_new(const char *session, const char *task,
                           const char *repo, const char *config,
                           int64_t started_wall_ms);

/* Free; sets *self_p to NULL; safe on NULL. */
void tnd_report_destroy(tnd_report **self_p);

/* Add one reply's LLM use to role. */
void tnd_report_usage(tnd_report *self, tnd_role role, const tnd_usage *u);

/* Count calls paid for with no reply to say what they cost (see
 * paid.h): they are added to role's calls, and to the total of such
 * calls report.json gives as `calls_unanswered`; their tokens are
 * unknown, so none are added. */
void tnd_report_unanswered(tnd_report *self, tnd_role role, long calls);

/* Usage so far: of one role, or of both with tnd_report_total. The
 * calls include the unanswered ones. */
const tnd_usage *tnd_report_role(const tnd_report *self, tnd_role role);
tnd_usage tnd_report_total(const tnd_report *self);

/* The skills' results on the unmodified tree (each attempt's skills then
 * say how they did before the change, and which failures are
 * regressions); reused_from: the session whose baseline this is (tandem
 * serve, the same tree), or NULL when it ran here. */
void tnd_report_baseline(tnd_report *self, const tnd_audit_reply *baseline,
                         const char *reused_from);

/* What the attempts' tree held (tnd_snapshot_json's object, taken). */
void tnd_report_workspace(tnd_report *self, json_object *about);

/* How the coming attempt's critique went: asked or skipped (why says
 * which triggers fired or that none did), the tokens a skipped one
 * would have cost (an estimate), and each quorum member's verdict
 * (members: a JSON array, taken; may be NULL). Goes into the next
 * tnd_report_attempt and the totals under "critiques". */
void tnd_report_critique(tnd_report *self, bool asked, const char *why,
                         long tokens_saved, json_object *members);

/* What the coming attempt's coder was sent: files and their bytes
 * against agents.coder.context_max_kb, the files listed as data and the
 * bytes sent as U+FFFD, and the whole request's bytes (reported with a
 * token estimate of a quarter of that). */
void tnd_report_context(tnd_report *self, const tnd_context_stats *st,
                        size_t budget, size_t request_bytes);

/* Record one attempt: the coder's reply (may be NULL), the gate's input
 * and decision, the attempt's diff (relative path, may be NULL) and its
 * failure signature. */
void tnd_report_attempt(tnd_report *self, int attempt,
                        const tnd_code_reply *reply, const tnd_gate_input *in,
                        const tnd_gate_decision *decision,
                        const char *diff_path, uint64_t signature);

/* Set the outcome. status is "approved", "escalated" or "failed";
 * paths are relative to the repository and may be NULL. */
void tnd_report_outcome(tnd_report *self, const char *status,
                        const char *reason, int iterations,
                        const char *final_diff, const char *last_diff,
                        int64_t elapsed_ms);

/* The run's endpoint when agents connect to it over tcp:// beyond
 * loopback without CURVE (orchestrator.insecure: true), NULL otherwise:
 * report.json's "insecure_endpoint", so every report of such a run says
 * anyone who could connect may have acted as an agent. Copied. */
void tnd_report_insecure(tnd_report *self, const char *endpoint);

/* The session reviews an existing change (`kind` "review"), rather than
 * doing a task ("run"). */
void tnd_report_review(tnd_report *self);

/* The approved change, a unified diff (copied): report.json's
 * final_diff_text, so a reader of the report alone (--json) has it. */
void tnd_report_approved(tnd_report *self, const char *diff);

/* What a review put on stdout without --json (copied; NULL: nothing):
 * report.json's findings_text, so a client that comes back for a review
 * that ended while nobody followed it has its findings. */
void tnd_report_findings(tnd_report *self, const char *text);

/* A person's answer to the escalation of attempt attempt: record is its
 * journal record (borrowed; kind, text, by, and who gave it: via, user,
 * key, address, as proto/client.h's tnd_client_who_add writes them). */
void tnd_report_answer(tnd_report *self, int attempt, json_object *record);

/* What `tandem run --apply` or `--commit` did with the approved change
 * (tnd_apply_json's object, taken): report.json's "apply", null when
 * neither was asked. */
void tnd_report_apply(tnd_report *self, json_object *about);

/* report.json's text, pretty, with registered secrets redacted; its
 * "unsandboxed_skills" lists the skills that ran with sandbox: none, in
 * the baseline or an attempt. Caller frees. */
char *tnd_report_json(const tnd_report *self);

/* As tnd_report_json, and *kept is the report as an object, the text's
 * JSON (caller puts), so a reader in this process need not parse the
 * text; NULL when a secret was redacted from the text, which the object
 * still holds. */
char *tnd_report_json_kept(const tnd_report *self, json_object **kept);

/* Put one JSON document (tnd_report_json's text, or any) on `to` and
 * flush it: what --json prints, for every command that has it. -1 with
 * the error set when it cannot be written (a closed pipe, a full
 * disk). */
int tnd_report_emit(FILE *to, const char *text);

/* "approved after 2 iterations · 4 LLM calls · 3,837 tokens (3,330
 * prompt + 507 completion) · 0.4s", with "5 LLM calls (1 unanswered)"
 * when some were, and a second line when skills ran unsandboxed
 * ("unsandboxed: skills build, test ran with sandbox: none, ..."). Caller
 * frees. */
char *tnd_report_summary(const tnd_report *self);

#endif
