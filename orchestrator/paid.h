/* tnd_paid - the model calls a session paid for that no journaled reply
 * accounts for.
 *
 * A reply's usage counts the calls that made it, and the report adds
 * up the replies. Some calls have no reply to count them:
 *
 * - the request that was out when tandem died: a resume sends it again;
 * - a request whose agent died, went silent or was dropped, or whose
 *   reply was refused: the crew sends it to another agent;
 * - a request given up at its deadline or on a signal;
 * - a request an agent answered with an `error` body, which is not
 *   journaled (there is nothing to replay).
 *
 * Two journal records keep them, for requests that may ask a model (the
 * coder's, and the reviewer's when it critiques; skills alone ask
 * none):
 *
 *   asked       {attempt, step, service}: before the request is sent
 *   unanswered  {attempt, step, service, calls, usage}: after it, when
 *               `calls` times an agent had it and no usable reply came
 *               of it, and `usage` is what an error reply said its
 *               model calls cost
 *
 * A request sent is closed by its step's reply (a record of type `step`)
 * or by an `unanswered` record; one closed by neither (tandem died while
 * it was out) counts as one call. Such calls are counted as one each
 * because that is what a request usually costs; their tokens are not
 * known, so they are counted apart (report.json's `calls_unanswered`)
 * rather than guessed. */
#ifndef TND_PAID_H
#define TND_PAID_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

#include "orchestrator/journal.h"
#include "orchestrator/report.h"
#include "proto/body.h"

/* What a stage of an attempt paid that its replies do not say. */
typedef struct tnd_paid {
    long unanswered; /* calls whose tokens nobody reported */
    tnd_usage known; /* error replies' calls and tokens */
} tnd_paid;

/* The fields of an `asked` record (caller puts, or hands to the
 * journal). */
json_object *tnd_paid_asked_json(int attempt, const char *step,
                                 const char *service);

/* The fields of an `unanswered` record; known may be NULL. */
json_object *tnd_paid_unanswered_json(int attempt, const char *step,
                                      const char *service, long calls,
                                      const tnd_usage *known);

/* True when body is an `error` reply, with *out what it says its model
 * calls cost: its `usage` when it has one, else the sum of its
 * `exchanges`' usage (tandem's agents send every call they made). False,
 * and *out zero, for any other body or one that does not parse. */
bool tnd_paid_error_usage(tnd_usage *out, const char *body, size_t len);

/* The role whose calls service's are: "coder", or a reviewer. */
tnd_role tnd_paid_role(const char *service);

/* Add up, over the journal's records of attempt whose service is role's,
 * every `unanswered` record and every `asked` that nothing closed. */
void tnd_paid_count(tnd_paid *out, const tnd_journal *journal, int attempt,
                    tnd_role role);

#endif
