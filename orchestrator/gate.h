/* tnd_gate - the audit gate: the decision, made in code.
 *
 * The reviewer reports evidence (skill results) and an opinion (the
 * critique); the gate decides. The rules (docs/ARCHITECTURE.md, "The
 * gate"):
 *   - a required skill that is missing, failed, timed out or could not
 *     run means not approved, whatever the critique says;
 *   - no valid critique means not approved (never a pass), unless none
 *     was asked for (gate.critique on_trigger, no trigger fired): then
 *     the skills alone decide and no confidence rule applies;
 *   - a change passes when every required skill passed and the critique
 *     has verdict "approve" and no major or critical issue; then its
 *     confidence decides: at or above gate.confidence_threshold it is
 *     approved, below gate.human_review_below it goes to a human (the
 *     reviewer is too unsure to trust either way), in between it goes
 *     back to the coder;
 *   - a change that passes but touches gate.risk_paths goes to a human;
 *   - a change that is not approved goes back to the coder, unless
 *     gate.max_iterations is reached, the same failure repeated
 *     gate.persistent_failure_threshold times in a row, or the proposal
 *     repeats an earlier one (stuck): then it goes to a human.
 * Pure functions: no I/O, so every rule has a table-driven test. */
#ifndef TND_GATE_H
#define TND_GATE_H

#include <stdbool.h>
#include <stdint.h>

#include "common/config.h"
#include "proto/audit.h"

typedef enum tnd_gate_action {
    TND_GATE_APPROVE = 1,
    TND_GATE_REVISE,   /* back to the coder with feedback */
    TND_GATE_ESCALATE, /* a human must decide */
} tnd_gate_action;

typedef struct tnd_gate_input {
    int attempt;                  /* 1-based */
    const char *apply_error;      /* the proposal could not be applied */
    const char *format_error;     /* the coder's answer had no usable edits */
    bool empty;                   /* the proposal changes nothing */
    int repeats;                  /* > 0: the diff is identical to that of
                                     this earlier attempt (stuck) */
    const tnd_audit_reply *audit; /* NULL when no audit ran */
    const char *const *required;  /* skills the orchestrator's config
                                     requires, NULL-terminated */
    int streak;                   /* attempts in a row, this one included,
                                     that failed with this attempt's
                                     failure signature */
    bool critique_skipped;        /* gate.critique on_trigger and no
                                     trigger fired: the skills decide */
    const char *risky;            /* a changed path matching
                                     gate.risk_paths, or NULL */
    const tnd_audit_reply *baseline; /* the skills on the unmodified tree,
                                        or NULL: a failing skill that
                                        passed there is a regression */
} tnd_gate_input;

typedef struct tnd_gate_decision {
    tnd_gate_action action;
    bool passed;      /* the change itself passed every check */
    char reason[600]; /* one line for people and for the coder */
} tnd_gate_decision;

/* Decide what happens to this attempt. */
void tnd_gate_decide(tnd_gate_decision *out, const tnd_gate_config *cfg,
                     const tnd_gate_input *in);

/* A hash of what went wrong in this attempt, insensitive to numbers,
 * addresses and temporary paths, so the same failure in two attempts
 * gives the same value. 0 when nothing failed. */
uint64_t tnd_gate_signature(const tnd_gate_input *in);

/* Copy of s with what changes between runs of the same failure folded:
 * digit runs and hex runs after "0x" become "#", /tmp/... paths "<tmp>",
 * runs of white space one space. Never longer than s. Caller frees. */
char *tnd_gate_normalise(const char *s);

/* The first required skill (named in required, NULL-terminated, or
 * flagged required by the reviewer) that is missing from a or did not
 * pass (skipped is no failure): its name, with *result NULL when it is
 * missing. NULL when every required skill passed. */
const char *tnd_gate_unmet(const tnd_audit_reply *a,
                           const char *const *required,
                           const tnd_skill_result **result);

/* How the skill named name did on the unmodified tree: its result in
 * baseline, or NULL when there is none (no baseline, not run there). */
const tnd_skill_result *tnd_gate_before(const tnd_audit_reply *baseline,
                                        const char *name);

/* "approve", "revise", "escalate". */
const char *tnd_gate_action_name(tnd_gate_action a);

#endif
