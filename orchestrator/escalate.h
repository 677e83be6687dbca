/* tnd_escalate - a person's answer when the loop cannot settle a task.
 *
 * The answers, wherever they come from (a prompt on the terminal, or
 * `tandem approve|reject|guide|budget` for a queued session): approve the
 * last proposal, reject the task, give guidance for the coder's next
 * attempt, grant more budget, skip (one more attempt as it stands), or
 * stop (leave the session waiting and answer later). */
#ifndef TND_ESCALATE_H
#define TND_ESCALATE_H

#include <stdbool.h>
#include <stdio.h>

#include "common/names.h"

typedef enum tnd_answer_kind {
    TND_ANSWER_APPROVE = 1,
    TND_ANSWER_REJECT,
    TND_ANSWER_GUIDE,
    TND_ANSWER_BUDGET,
    TND_ANSWER_SKIP,
    TND_ANSWER_STOP,
} tnd_answer_kind;

TND_NAMES_INT_SIZED(tnd_answer_kind);

typedef struct tnd_answer {
    tnd_answer_kind kind;
    char *text;     /* reject: why; guide: the guidance; may be NULL */
    int iterations; /* budget: more attempts */
    long tokens;    /* budget: more tokens */
    long calls;     /* budget: more LLM calls */
} tnd_answer;

/* "approve", "reject", "guide", "budget", "skip", "stop". */
const char *tnd_answer_name(tnd_answer_kind kind);

/* The kind called name (as an answer record or a command names it) into
 * *out; -1 with "unknown answer 'NAME' (known: approve, ...)". */
int tnd_answer_kind_parse(tnd_answer_kind *out, const char *name);

/* Called about five times a second while a person has not answered yet,
 * so the caller can keep its agents alive; false stops asking (the
 * answer is then "stop"). */
typedef bool (*tnd_escalate_idle_fn)(void *payload);

/* Ask on a terminal: print the choices to out, read the choice (and the
 * guidance, reason or amount it needs) from in. A choice is its letter
 * or its word (a or approve, ...), nothing else: "abort" is no approve.
 * With review, only approve, reject and stop are offered (a review has
 * no coder to guide or to try again). With diff (may be NULL: the person
 * saw all of it), "d" shows it whole (escapes made harmless), and asks
 * again. Guidance or a reason longer than an answer holds, or filling a
 * terminal's line, is said so, and kept only if the person says yes. End
 * of input is "stop". idle (may be NULL) runs while nothing has been
 * typed. Returns 0 with *answer filled (free with tnd_answer_clear). */
int tnd_escalate_ask(tnd_answer *answer, FILE *in, FILE *out, bool review,
                     const char *diff, tnd_escalate_idle_fn idle,
                     void *payload);

/* Free the answer's text; safe on a zeroed answer. */
void tnd_answer_clear(tnd_answer *answer);

#endif
