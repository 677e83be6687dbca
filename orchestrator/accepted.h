/* tnd_accepted - the sessions tandem serve accepted and has not ended,
 * kept on disk so that a server killed outright resumes them all when
 * it starts again (Titanic, ZeroMQ RFC 9).
 *
 * STATE/accepted.jsonl is a journal (journal.h: one fsync'd record per
 * line): "accept" {repo, session} when a client's task becomes a
 * session, before the client hears its id, or {repo, session, answer}
 * when a client answers a session that waits for a person, before the
 * client hears that the server took the answer; "end" {session} when the
 * session ended or was handed to a person. Opening reads it, keeps the
 * sessions accepted and not ended, in order, and writes them to a fresh
 * file (temporary name, fsync, rename); so does an end once the file
 * holds far more records than sessions pending, so the file (and the
 * memory the journal keeps) stays as small as the work in hand. */
#ifndef TND_ACCEPTED_H
#define TND_ACCEPTED_H

#include <json-c/json.h>
#include <stddef.h>

#include "proto/client.h"

typedef struct tnd_accepted tnd_accepted;

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

/* Record a session ended (fsync'd). */
int tnd_accepted_end(tnd_accepted *self, const char *id);

#endif
