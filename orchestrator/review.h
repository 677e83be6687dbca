/* tnd_review - the parts of an audit the orchestrator decides itself:
 * when the LLM critique is worth its tokens and which paths are risky
 * (how a quorum's critiques become one is review_merge.h).
 *
 * With gate.critique "always" and one reviewer, an audit is one request:
 * the reviewer runs the skills and asks its model. Otherwise it runs in
 * two phases: the skills first (one reviewer, no critique), then, when
 * tnd_review_triggers says so, a critique of that evidence from each
 * quorum member, merged by tnd_review_merge (review_merge.h). Before the first
 * attempt, tnd_review_cannot_run reads the baseline for skills that cannot run.
 * Pure functions: no I/O, so every rule has a table-driven test. */
#ifndef TND_REVIEW_H
#define TND_REVIEW_H

#include <stdbool.h>
#include <stddef.h>

#include "common/config.h"
#include "proto/audit.h"

typedef struct tnd_trigger_input {
    const tnd_audit_reply *skills;   /* the first phase's results */
    const char *const *required;     /* required skill names,
                                        NULL-terminated */
    size_t changed_lines;            /* added + removed lines of the diff */
    const char *risky;               /* a changed path in gate.risk_paths,
                                        or NULL */
    const char *checks;              /* a changed file that defines the
                                        checks, and why (tnd_review_checks),
                                        or NULL */
    const tnd_audit_reply *baseline; /* the skills on the unmodified tree,
                                        or NULL */
    double last_confidence;          /* the previous attempt's critique;
                                        < 0 when there was none */
    long ordinal;                    /* this task's number in the repo
                                        (1-based) */
} tnd_trigger_input;

/* Whether the critique runs. With gate.critique "always" it does; with
 * "on_trigger" it does when a required skill did not pass, or failed on
 * the unmodified tree and passes now (a change that deletes the failing
 * assertions makes the suite pass too: only the model tells a fix from
 * that), the change
 * touches gate.risk_paths or a file that defines the checks
 * (tnd_review_checks), it changes more than gate.critique_diff_lines
 * lines, the previous critique's confidence was below
 * gate.confidence_threshold, or the task is every gate.critique_every-th.
 * why gets the reasons, "; "-separated (or why it was skipped). */
bool tnd_review_triggers(char *why, size_t size, const tnd_gate_config *cfg,
                         const tnd_trigger_input *in);

/* The first file of diff that defines the checks: one gate.check_paths
 * matches (a Makefile, a conftest.py), or one a skill's command names
 * ("./scripts/smoke.sh"): a change that edits the checker is critiqued
 * under on_trigger (a test recipe made to echo success passed its
 * skills, and no trigger fired). Into buf, with why; NULL when none. */
const char *tnd_review_checks(char *buf, size_t size, const tnd_config *cfg,
                              const char *diff);

/* The first path of diff matching one of globs (NULL-terminated), copied
 * into buf; NULL when none does or there are no globs. */
const char *tnd_review_risky(char *buf, size_t size, char *const *globs,
                             const char *diff);

/* Lines diff adds and removes. */
size_t tnd_review_changed_lines(const char *diff);

/* Why a skill's result on the unmodified tree (the baseline) says it
 * cannot run at all, so no change could ever pass it: it could not start,
 * its command was not found (exit 127) or not executable (126), or make
 * has no rule for the target the command names ("No rule to make target
 * 'check'.  Stop.", not "... 'x.c', needed by 'x.o'", which is the
 * project's own breakage). Borrowed static text; NULL when it ran. */
const char *tnd_review_cannot_run(const tnd_skill_result *s);

#endif
