/* tnd_accepted - the sessions tandem serve accepted and has not ended,
 * kept on disk so that a server killed outright resumes them all when
 * it starts again (Titanic, ZeroMQ RFC 9).
 *
 * STATE/accepted.jsonl is a journal (journal.h: one fsync'd record per
 * line): "accept" {repo, session} when a client's task becomes a
 * session, before its task is journaled (so before the client hears
 * its id), or {repo, session, answer}
 * when a client answers a session that waits for a person, before the
 * client hears that the server took the answer; "end" {session, repo,
 * code, owner} when the session ended or was handed to a person (code:
 * the exit code its clients were told, or 3 when it still waits for a
 * person after an answer it refused). Opening reads it, keeps the
 * sessions accepted and not ended, in order, and the outcomes of the
 * newest TND_ACCEPTED_ENDED_MAX that ended, and writes them to a fresh
 * file (temporary name, fsync, rename); so does an end once the file
 * holds far more records than it keeps, so the file (and the memory the
 * journal keeps) stays as small as the work in hand.
 *
 * The outcomes are for a client that comes back for its session after
 * its `done` was lost (a cut connection, a server restarted): the next
 * server tells it how the session ended, where it used to say it knew
 * no such session, and the client exited 1 for an approved change. */
#ifndef TND_ACCEPTED_H
#define TND_ACCEPTED_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

#include "proto/client.h"

typedef struct tnd_accepted tnd_accepted;

/* How many ended sessions' outcomes the list keeps, the newest. */
#define TND_ACCEPTED_ENDED_MAX 1024

/* How a session ended, as the list keeps it. */
typedef struct tnd_accepted_outcome {
    const char *repo, *id;
    const char *owner; /* the CURVE key that submitted it; NULL: none */
    int code;          /* the exit code its clients were told (3: waits) */
} tnd_accepted_outcome;

/* Open (or create) the list at path. NULL with the error set. */
tnd_accepted *tnd_accepted_open(const char *path);

/* Close; sets *self_p to NULL; safe on NULL. */
void tnd_accepted_close(tnd_accepted **self_p);

/* The sessions accepted and not ended, oldest first: the repository and
 * the id of the i-th. Borrowed until the next add or end. */
size_t tnd_accepted_pending(const tnd_accepted *self);
const char *tnd_accepted_repo(const tnd_accepted *self, size_t i);
const char *tnd_accepted_id(const tnd_accepted *self, size_t i);

/* The answer the i-th goes on with ({answer, text, iterations, tokens}
 * as a client sent it, and who sent it: the fields of
 * tnd_client_who_add), or NULL for a task to run. Borrowed. */
json_object *tnd_accepted_answer(const tnd_accepted *self, size_t i);

/* Record a session accepted (fsync'd before it returns), with the answer
 * it goes on with (copied, with who gave it: the fields of
 * tnd_client_who_add; who may be NULL), or NULL. */
int tnd_accepted_add(tnd_accepted *self, const char *repo, const char *id,
                     json_object *answer, const tnd_client_who *who);

/* Record a session ended (fsync'd), with the exit code its clients were
 * told and its owner (copied; NULL: none). Its outcome is kept when it
 * was pending here and code >= 0; -1 says it ended without one (its
 * journal could not be read). The outcome is kept in memory even when
 * the record could not be written (-1 returned). */
int tnd_accepted_end(tnd_accepted *self, const char *id, int code,
                     const char *owner);

/* The outcome of the newest end of session id into *out (borrowed until
 * the next add or end); false when none is kept (it never ended, it was
 * accepted again since, or it is older than the newest
 * TND_ACCEPTED_ENDED_MAX). */
bool tnd_accepted_outcome_of(const tnd_accepted *self, const char *id,
                             tnd_accepted_outcome *out);

/* The most records the file holds before it is rewritten, whatever it
 * keeps (150,000 by default: well under the 200,000 a journal reader
 * takes, and over the most it keeps, 1,024 running, 100,000 queued and
 * TND_ACCEPTED_ENDED_MAX outcomes). For tests. */
void tnd_accepted_set_records_max(tnd_accepted *self, size_t max);

/* The sessions whose outcomes are kept: how many, and the id of the k-th
 * (0 the newest; NULL for one let go since). Borrowed until the next add
 * or end. */
size_t tnd_accepted_ended(const tnd_accepted *self);
const char *tnd_accepted_ended_id(const tnd_accepted *self, size_t k);

#endif
