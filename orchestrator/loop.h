/* tnd_loop - the state of one run of the gate loop, shared by the files
 * that make `tandem run` (internal to them: nothing else includes this
 * but their unit tests).
 *
 * run.c sets a run up, starts it and ends it; attempt.c is the loop
 * itself: propose, apply, decide; steps.c journals steps and asks
 * agents; resume.c continues a session; audit_step.c asks the reviewer
 * (the baseline, one request, or phases with a quorum); person.c asks a
 * person and applies the answer; paid_loop.c journals and counts the
 * model calls no reply accounts for. struct run owns everything a run holds
 * and is released in one place (tnd_loop_close). */
#ifndef TND_LOOP_H
#define TND_LOOP_H

#include <json-c/json.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "common/buf.h"
#include "common/config.h"
#include "orchestrator/change.h"
#include "orchestrator/content.h"
#include "orchestrator/own_files.h"
#include "orchestrator/crew.h"
#include "orchestrator/doing.h"
#include "orchestrator/escalate.h"
#include "orchestrator/events.h"
#include "orchestrator/findings.h"
#include "orchestrator/gate.h"
#include "orchestrator/journal.h"
#include "orchestrator/lessons.h"
#include "orchestrator/report.h"
#include "orchestrator/run.h"
#include "orchestrator/session.h"
#include "orchestrator/snapshot.h"
#include "orchestrator/views.h"
#include "orchestrator/workspace.h"
#include "proto/audit.h"
#include "proto/code.h"

typedef struct run {
    tnd_run_options opts;
    const tnd_run_host *host; /* the server driving it, or NULL */
    FILE *out;                /* stdout's part: the diff, findings */
    FILE *err;                /* stderr's part: progress, the summary */
    atomic_int *stop;         /* a signal's number: stop as it would */
    char *owned[6];           /* strings behind opts when read from a journal */
    const tnd_config *cfg;    /* own_cfg, or the server's (host->config) */
    tnd_config *own_cfg;      /* the config this run loaded (freed with it);
                                 NULL when it uses the server's */
    tnd_gate_config gate;     /* cfg->gate, plus what a person granted */
    char *repo;
    tnd_session *session;
    tnd_journal *journal;
    tnd_views_state views; /* what the views keep between steps of journal */
    tnd_crew *crew;
    tnd_snapshot *base;   /* what every attempt starts from */
    tnd_content *content; /* base and changes by content, for reviewers
                             that do not share this filesystem; made when
                             first needed */
    tnd_workspace *ws;
    tnd_report *report;
    char *record_partial; /* FILE.partial while recording */
    int record_lock;      /* FILE.partial open and locked while this run
                             records: set with record_partial */
    int64_t started;      /* this run's start (monotonic ms) */
    int64_t wall_from;    /* gate.max_wall_s counts from here: this run's
                             start, or the last answer a person gave */
    int iterations;
    tnd_session_status status; /* TND_SESSION_OPEN while the loop runs */
    char *reason;
    bool final_escalation; /* escalated with gate.escalate never */
    bool waiting;          /* escalated, waiting for an answer */
    bool go_on;            /* a person answered at the terminal a budget that
                              ran out while an agent worked: the session goes
                              on from its journal, in this process, once
                              this run has ended (tnd_run_continue) */
    char *final_rel;       /* final.diff relative to the repo */
    char *last_rel;        /* the last attempt's diff */
    char *last_diff;       /* the last non-empty diff, for an approval */
    int last_n;            /* the attempt that made it */
    char *last_rationale;  /* the coder's rationale for last_diff: the
                              message of a --commit */
    char *head;            /* --commit: the commit HEAD named when the
                              snapshot was taken ("" for none) */
    char **history;        /* one line per attempt, NULL-terminated */
    size_t nhistory, ahistory;
    uint64_t *hashes; /* diff hash per attempt (0: no diff) */
    size_t nhashes, ahashes;
    char **required; /* required skill names, NULL-terminated */
    char *hidden[TND_OWN_FILES_WORDS + 8]; /* repo files the coder is not
                               shown and no change may touch: tandem's own
                               config, cassettes and command files
                               (own_files.h), agents.yaml; NULL-terminated */
    size_t in_use;          /* hidden[0..in_use) this run uses; the rest
                               (agents.yaml) a later run may */
    bool no_key;            /* a model's API key is not set */
    bool no_model;          /* an answer that asks no model (approve,
                               reject): its keys are not needed */
    bool answer_ends;       /* the answer ends the session (approve,
                               reject): the attempts it replays are taken
                               as the session holds them, whatever the
                               files are now (tnd_loop_as_audited) */
    tnd_doing doing;        /* what the agent asked last is doing now */
    bool progress_line;     /* it is on stderr, to be redrawn or ended */
    int64_t progress_drawn; /* when it was drawn last (monotonic ms) */
    char reply_type[32];    /* the "type" of the reply tnd_loop_ask or
                               tnd_loop_ask_model returned last (the crew
                               checked it), so it is not parsed to know */
    tnd_escalate_mode mode; /* who answers an escalation: tty, queue or
                               never (auto resolved) */
    size_t cursor;          /* journal records before this have been used up
                               as escalations and answers */
    char *guidance;         /* a person's words for the coder's next attempt */
    json_object *pending;   /* a command's answer (tandem approve ...), not
                               journaled until the replay reaches the
                               question it answers: a replay that fails on
                               the way (the files changed) leaves the
                               session waiting, not holding an answer it
                               never took */
    tnd_events *events;     /* the stream watchers read; NULL when none */
    tnd_lessons *bank;      /* what earlier tasks taught; NULL when none */
    char **lessons;         /* rendered for the coder, NULL-terminated */
    size_t nlessons;
    char **lesson_ids;      /* the ids behind them, NULL-terminated */
    bool builtin_config;    /* no agents.yaml, no --config: the defaults */
    bool finished_now;      /* this process journaled the session's
                               finish: its lessons are credited once */
    long ordinal;           /* this task's number among the repo's sessions */
    double last_confidence; /* the last critique's; < 0: none yet */
    long critique_tokens;   /* what the last critique asked cost */
    tnd_change change;      /* review: the change and its base tree */
    bool create_only;       /* tnd_run_create: the session is made, not
                               run (no base tree is exported) */
    tnd_edit *edits;        /* review: the change as edits */
    size_t nedits;
    tnd_exec_change *modes; /* review: the modes it sets (chmod +x) */
    size_t nmodes;
    const char *review_rev;   /* resumed review: the commit of its base */
    tnd_audit_reply baseline; /* the skills on the unmodified tree */
    bool has_baseline;
    char baseline_flight[65]; /* the key of the baseline this run runs
                                 for the server's other sessions too
                                 (basecache.h); "" when none */
    bool config_error;        /* stopped by a configuration mistake: exit 2 */
    tnd_findings *findings;   /* review --format: what the attempt found */
    char *findings_text;      /* what a review puts on stdout without --json:
                                 the text findings of a rejected change, or
                                 the --format document; NULL: nothing */
    char *out_lost;           /* why the result could not be written on stdout
                                 (tnd_loop_put), or NULL: finish says so, exit 1 */
} run;

/* The loop's memory between attempts. */
typedef struct loop_state {
    char *feedback;
    char *hints;
    uint64_t last_sig;
    int streak;
} loop_state;

/* What one attempt builds up, freed in one place. */
typedef struct attempt {
    int n;
    tnd_code_request req;
    tnd_code_reply reply;
    tnd_audit_reply audit;
    bool audited;
    tnd_gate_input in;
    tnd_gate_decision decision;
    char *diff;
    char *diff_rel;
    char *apply_error;
    char *risky;       /* a changed path in gate.risk_paths, or NULL */
    bool as_journaled; /* its diff is the one the session holds, not the
                          one its edits make of the files now: audited
                          when the journal says it was */
} attempt;

/* ---- run.c: setting up, going, ending ------------------------------------ */

/* Resolve the configuration (exit 2 on any mistake, before anything is
 * created); r->repo is set. 0, TND_ECONFIG or -1. */
int tnd_loop_prepare(run *r);

/* Start the agents and the workspace, run the loop, finish; a TND_EXIT_*
 * code. */
int tnd_loop_go(run *r, int64_t started_wall);

/* A zeroed run, its streams and stop flag the host's (NULL: stdout,
 * stderr, and the flag SIGINT, SIGTERM and SIGHUP set). */
void tnd_loop_init(run *r, const tnd_run_host *host);

/* Release everything r holds. */
void tnd_loop_close(run *r);

/* ---- finish.c: the end --------------------------------------------------- */

/* End the run: report.json, the `finish` record when the session ended
 * for good, --apply/--commit, the recording, the lessons; then the
 * summary on r->err. A TND_EXIT_* code (TND_EXIT_HUMAN, silently, when
 * the session goes on here: r->go_on). A run that failed or was stopped
 * while its session still waits (the journal's last step is the
 * question: an answer refused, a resume that failed on the way) leaves
 * the question's report.json and says the session waits. */
int tnd_loop_finish(run *r);

/* A review that could not be done: exit 4, or, under --on-error pass, 0
 * with a warning that the change went through unreviewed. */
int tnd_loop_not_reviewed(const run *r, const char *raw);

/* What --json or review --format put on stdout once the session has
 * ended: the report's text, or the findings (a review that could not be
 * done says so in them). */
void tnd_loop_emit(run *r, const char *report);

/* ---- attempt.c: the loop ------------------------------------------------- */

/* Attempts until the loop ends (r->status says how). 0, or -1. */
int tnd_loop_attempts(run *r);

/* The lessons earlier tasks of this kind left, for every attempt: chosen
 * once and journaled (`lessons`), so a session that goes on (resume,
 * approve, reject) gives its coder the same. None for a review: it has
 * no coder. */
void tnd_loop_recall(run *r);

/* When this process ended the session (r->finished_now), the lessons its
 * coder got did (or did not) lead to an approval; the bank is saved. An
 * interruption, a failure or a wait credits nothing. */
void tnd_loop_remember(run *r);

/* ---- steps.c: saying, journaling, asking agents -------------------------- */

/* A progress line on stderr, unless --quiet. */
void tnd_loop_say(run *r, const char *fmt, ...) TND_PRINTF(2, 3);

/* End a streaming progress line so the next line starts clean. */
void tnd_loop_end_progress(run *r);

/* Write text, the command's result (what: "the approved diff"), on to
 * (r->out, or stdout for --json and --format) and flush it; with line, a
 * newline ends it when it has none. A failed or short write is kept in
 * r->out_lost, and finish then says the output was lost and exits 1
 * where it would have exited 0. A server's session writes to its
 * client's stream, and keeps nothing. */
void tnd_loop_put(run *r, FILE *to, const char *what, const char *text,
                  bool line);

/* The loop ends with status (an outcome: approved, rejected, escalated,
 * failed, interrupted) for reason. */
void tnd_loop_stop(run *r, tnd_session_status status, const char *reason);

/* Journal a step (fsync'd), publish it and refresh the views; the run
 * does not act on a step it could not record. fields is consumed. */
int tnd_loop_step(run *r, const char *type, json_object *fields);

/* Tell watchers what the run does now (not journaled). */
void tnd_loop_phase(run *r, int n, const char *what);

/* The index of the first record of type for attempt n at or after from;
 * -1 when there is none. */
long tnd_loop_find(const run *r, const char *type, int n, size_t from);

/* The reply journaled for (type, attempt n) as the body it came in; NULL
 * when there is none. Caller frees. */
char *tnd_loop_journaled_reply(const run *r, const char *type, int n,
                               size_t *len);

/* That reply as the journal holds it (borrowed from the journal, its
 * LLM exchanges removed), to decode without printing and parsing it;
 * NULL when the journal has none. */
json_object *tnd_loop_journaled(const run *r, const char *type, int n);

/* Journal an agent's reply body under type (its LLM exchanges go to the
 * session's llm/ directory; an error reply is not journaled). parsed is
 * body parsed (tnd_crew_request.parsed), taken whatever this returns, or
 * NULL: body is parsed here. */
int tnd_loop_journal_reply(run *r, const char *type, int n, const char *body,
                           size_t len, json_object *parsed);

/* Where a request's timeout (tnd_budget_request_s) came from, for
 * messages. */
const char *tnd_loop_timeout_source(const run *r);

/* A request's deadline: its timeout, or the end of gate.max_wall_s if
 * that comes first; *by_budget says which. */
int64_t tnd_loop_deadline(const run *r, const char *service, bool *by_budget);

/* Before asking service: what it does is not known yet. */
void tnd_loop_progress_start(run *r, const char *service);

/* Progress from an agent (a PARTIAL): the terminal line and the events.
 * A NULL body is the call's timer tick: the line is redrawn (at most 4
 * times a second) so its time counts up while the phase lasts. */
void tnd_loop_on_progress(const char *body, size_t len, void *payload);

/* Ask service for one reply (caller frees *reply). Unless parsed is NULL,
 * *parsed is the reply parsed, as the crew checked it (caller puts), on
 * 0; else NULL. */
int tnd_loop_ask(run *r, const char *service, const char *key, char *body,
                 size_t len, char **reply, size_t *reply_len,
                 json_object **parsed);

/* Approve diff: final.diff, and the diff on stdout. */
int tnd_loop_approve(run *r, const char *diff, const char *reason);

/* ---- paid_loop.c: calls no reply accounts for (paid.h) ------------------ */

/* Ask service for a reply that may cost model calls (the coder's, a
 * critique): journaled as `asked` step of attempt n before it goes out,
 * and as `unanswered` after when agents were lost with it, its reply is
 * an error or none came; then as tnd_loop_ask. */
int tnd_loop_ask_model(run *r, int n, const char *step, const char *service,
                       const char *key, const char *body, size_t len,
                       char **reply, size_t *reply_len, json_object **parsed);

/* The two halves of tnd_loop_ask_model, for requests sent together
 * (tnd_crew_call_many): `asked` before, `unanswered` (and its count in
 * the report) after, from what q says. -1 when the journal failed. */
int tnd_loop_asked(run *r, int n, const char *step, const char *service);
int tnd_loop_unanswered(run *r, int n, const char *step,
                        const tnd_crew_request *q);

/* At the start of role's stage of attempt n: count into the report what
 * the session's earlier runs paid there that no reply accounts for. */
void tnd_loop_count_paid(run *r, int n, tnd_role role);

/* ---- audit_step.c: the reviewer ----------------------------------------- */

/* The audit of attempt a, from the journal or the reviewer(s); a->audit
 * and the gate's input are filled. */
int tnd_loop_audit(run *r, attempt *a);

/* "build pass, test FAIL (exit 2)": a's skills on one line, into b. */
void tnd_loop_skills_line(tnd_buf *b, const tnd_audit_reply *a);

/* Drop the places a reply points at (its skills' locations, its
 * critique's issue files) that are not files in the workspace. */
void tnd_loop_keep_real_places(run *r, tnd_audit_reply *a);

/* Ask for the skills' run in the workspace (with the critique when
 * model), asked again once when an agent set aside had had it; a: the
 * attempt whose edits the workspace holds, or NULL for the base; parsed
 * as tnd_loop_ask's. */
int tnd_loop_ask_clean(run *r, int n, const char *type, const char *service,
                       const char *key, bool model, tnd_audit_request *ar,
                       const attempt *a, char **reply, size_t *reply_len,
                       json_object **parsed);

/* ---- baseline.c --------------------------------------------------------- */

/* Before attempt 1 (gate.baseline, tandem run): the skills on the
 * unmodified tree, from the journal or the reviewer, into r->baseline.
 * 0 to go on; 1 when a budget ran out meanwhile (the run stops, waiting
 * for a person); TND_ECONFIG (nothing journaled) when a required skill
 * cannot run at all: no change could pass it, or any skill wants a
 * sandbox the reviewer's host cannot make; -1. Without a baseline
 * (tandem review, gate.baseline: false) only the sandbox is checked, on
 * this host for local reviewers. */
int tnd_loop_baseline(run *r);

/* ---- baseline_reuse.c: a baseline shared by a server's sessions ------- */

/* The baseline of ar's tree (service: the reviewer asked) from the
 * server's cache (tandem serve, gate.baseline_reuse_s above 0), as this
 * session's reviewer would have sent it: 0 with *reply (caller frees)
 * and *from (the session that ran it; caller frees). 0 with *reply NULL:
 * run it here; when the other sessions wait for this run,
 * r->baseline_flight is set and tnd_loop_baseline_done must follow.
 * TND_ECANCELLED (stopped while waiting), TND_ETIMEOUT (the deadline of
 * a request passed while waiting), -1. */
int tnd_loop_baseline_reuse(run *r, const tnd_audit_request *ar,
                            const char *service, char **reply, size_t *len,
                            char **from);

/* Whether another session may take base (a baseline run under cfg) as
 * its own: every skill is one cfg names, passed, failed or was skipped,
 * and ended by itself (no timeout, no limit kill, nothing
 * tnd_review_cannot_run names), and every command cfg asks to sandbox
 * ran in the sandbox. A result of the moment is not kept. false for
 * NULL. Pure: the rule tnd_loop_baseline_done applies. */
bool tnd_loop_baseline_reusable(const tnd_config *cfg,
                                const tnd_audit_reply *base);

/* End this run's flight, if it has one: the reply (len bytes; base is
 * it decoded) goes to the sessions waiting and is kept when another
 * session may rely on it (every skill ran, sandboxed as configured);
 * base NULL: the baseline failed, and they run their own. */
void tnd_loop_baseline_done(run *r, const tnd_audit_reply *base,
                            const char *reply, size_t len);

/* Journal the baseline reply as `baseline`, with `reused_from` when it
 * came from session from (NULL: this session's reviewer ran it). */
int tnd_loop_journal_baseline(run *r, const char *reply, size_t len,
                              const char *from);

/* The session the journaled baseline came from; NULL when it ran here
 * or none is journaled. Caller frees. */
char *tnd_loop_baseline_source(const run *r);

/* ---- audit_content.c: the tree by content ------------------------------ */

/* Name the base tree and, for an attempt (a != NULL), its changed files
 * in ar (borrowed from r->content until the next attempt). -1 with the
 * error set. */
int tnd_loop_with_content(run *r, tnd_audit_request *ar, const attempt *a);

/* The base by content (r->content), made when first asked. */
tnd_content *tnd_loop_content(run *r);

/* ---- attempt.c ----------------------------------------------------------- */

/* A proposal's edits into the workspace; a review's change with the
 * modes it sets. As tnd_workspace_apply. */
int tnd_loop_apply(run *r, const tnd_code_reply *reply);

/* ar encoded with the blobs hashes name (NULL: none), as many as fit in
 * one frame. NULL with the error set. Caller frees. */
char *tnd_loop_encode_round(run *r, tnd_audit_request *ar,
                            const char *const *hashes, size_t *len);

/* While *reply is a "need", send ar to service again (under key+N) with
 * the blobs it asks for; *reply becomes the answer. type is *reply's
 * type as the crew found it (tnd_crew_request.reply_type, r->reply_type). -1
 * with the error set when a reviewer keeps asking past the rounds a tree takes,
 * or a blob cannot be had (*reply may still hold the need then). parsed
 * (or NULL) is *reply parsed, the caller's: put and replaced with the
 * answer's as *reply is (NULL on -1). */
int tnd_loop_answer_needs(run *r, const char *service, const char *key,
                          tnd_audit_request *ar, const char *type, char **reply,
                          size_t *reply_len, json_object **parsed);

/* Send ar (its tree and changes set) to service under key, the changed
 * files along (with model: as tnd_loop_ask_model for step type of
 * attempt n; else tnd_loop_ask), and see any "need" through; parsed as
 * tnd_loop_ask's. */
int tnd_loop_ask_content(run *r, int n, const char *type, const char *service,
                         const char *key, bool model, tnd_audit_request *ar,
                         char **reply, size_t *reply_len, json_object **parsed);

/* ---- replayed.c: an attempt replayed against the session's files -------- */

/* Whether the journal holds anything of attempt n's audit a replay will
 * use: the merged reply, a phased audit's skills or a critique, or an
 * escalation at the audit (a person read attempt-N.diff). */
bool tnd_loop_audit_journaled(const run *r, int n);

/* Attempt a replayed: its diff, made again from its journaled edits, must
 * be its diff file name (attempt-N.diff, written and fsync'd before its
 * audit was asked) when anything of its audit is journaled, for the
 * repository's files may have changed since (a resume after a context
 * line changed replayed the audit's approval for a diff no audit had
 * seen). Otherwise -1, the error naming the files that differ. Under
 * r->answer_ends (approve, reject) every decided attempt is held to its
 * file, and one that differs is taken as the session holds it
 * (a->as_journaled, with a warning): the person answered what they were
 * shown, and the session ends without another step. 0 otherwise. */
int tnd_loop_as_audited(run *r, attempt *a, const char *name);

/* ---- person.c: people and budgets --------------------------------------- */

/* An answer as the fields of an `answer` record: by ("tty",
 * "command") and who gave it: with who NULL (or via NONE) the user the
 * system says runs this process; else who's fields (a served answer:
 * "user" as the server's transport proved it, "via", "key",
 * "address"). */
json_object *tnd_loop_answer_json(const tnd_answer *ans, const char *by,
                                  const tnd_client_who *who);

/* The loop must ask a person about attempt n at `at` ("decision", or
 * "start"/"audit" for a budget). 1 with *ans to apply; 0 when the loop
 * stops (waiting, or gate.escalate never); -1 on a journal failure. */
int tnd_loop_escalate(run *r, int n, const char *at, const char *reason,
                      tnd_answer *ans);

/* Apply a person's answer at attempt a (NULL: before it started). 1 when
 * the loop goes on, 0 when it ends, -1 on failure. */
int tnd_loop_take_answer(run *r, attempt *a, loop_state *ls,
                         const tnd_answer *ans);

/* A budget spent at `at` of attempt n escalates; 1 when the loop goes
 * on (nothing spent, or a person granted more), 0 when it stops, -1.
 * Replayed, each escalation journaled at that point is taken in turn: an
 * answer that let the step run again, which then ran out again, left
 * another there. */
int tnd_loop_check_budget(run *r, int n, const char *at, attempt *a,
                          loop_state *ls);

/* A budget ran out while waiting for an agent at `at` of attempt n
 * ("start": its proposal; "audit": its audit, the proposal applied):
 * the escalation is journaled there, where the replay of an answer
 * meets it (tnd_loop_check_budget), and the session waits (or fails
 * with gate.escalate never). At a terminal (gate.escalate tty, no server)
 * the person is asked now; an answer that goes on sets r->go_on: the
 * caller ends this run and continues the session (tnd_loop_go_on). */
int tnd_loop_budget_ran_out(run *r, int n, const char *at);

/* ---- resume.c: going on ---------------------------------------------------
 */

/* End r, a run whose person answered at its terminal (r->go_on), and go
 * on with its session in this process, from the journal, the way
 * `tandem resume` does, with r's options (--apply, --json, ...); again
 * for each such answer. Closes r; the last run's TND_EXIT_* code. */
int tnd_loop_go_on(run *r);

#endif
