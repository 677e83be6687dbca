/* tnd_feedback - what the coder hears after a failed attempt.
 *
 * Concrete and bounded: the gate's reason, each failing skill's output
 * (an excerpt chosen by relevance, see skills/excerpt.h: the lines that
 * name the failure first, compiler warnings the unmodified tree printed
 * too folded into a count) and whether it is a regression or failed
 * before the change too, the reviewer's issues with evidence and
 * suggested fixes, a line per earlier attempt, the last diff, and a
 * plain "try a different approach" when the same failure repeats. The
 * size does not grow with the number of attempts: only the last attempt
 * is shown in full, earlier ones get one line each, and every part has
 * its own cap. */
#ifndef TND_FEEDBACK_H
#define TND_FEEDBACK_H

#include "orchestrator/gate.h"

/* Caps (bytes) of the parts of a feedback text. */
#define TND_FEEDBACK_MAX_OUTPUT 3000 /* per failing skill's excerpt */
#define TND_FEEDBACK_MAX_DIFF   6000
#define TND_FEEDBACK_MAX_TOTAL  (24 * 1024)

/* Feedback for the attempt after in->attempt. history holds one line per
 * earlier attempt (may be NULL); diff is the failed attempt's diff (may
 * be NULL). Caller frees. */
char *tnd_feedback_build(const tnd_gate_input *in,
                         const tnd_gate_decision *decision,
                         const char *const *history, const char *diff);

/* What the coder hears before attempt 1 when checks already fail on the
 * unmodified tree (each such skill's command, status and an excerpt of
 * its output, nothing folded): its first clue. "" when every skill passed
 * there. Caller frees. */
char *tnd_feedback_baseline(const tnd_audit_reply *baseline);

#endif
