/* tnd_hubsession - one session tandem serve holds: queued, or running on
 * a thread of its own, and the clients that follow it.
 *
 * The hub (hub.c) makes one for every task it accepts and for every
 * session an earlier server left unfinished. Starting it opens its link
 * (link.h) and a thread that runs the session with tnd_run_continue, as
 * `tandem resume` would but with a host: the link as its crew and its
 * streams, a stop flag instead of signals. The thread blocks every
 * signal: signals are the main thread's. What the session writes reaches
 * its followers as output replies, its end as a done reply
 * (proto/client.h). Everything here but the thread itself runs on the
 * hub's thread. */
#ifndef TND_HUBSESSION_H
#define TND_HUBSESSION_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

#include "orchestrator/basecache.h"
#include "orchestrator/broker.h"
#include "orchestrator/escalate.h"
#include "orchestrator/run.h"
#include "proto/client.h"

typedef struct tnd_hubsession tnd_hubsession;

typedef enum tnd_hubsession_state {
    TND_HS_QUEUED = 1,
    TND_HS_RUNNING,
} tnd_hubsession_state;

/* Clients that may follow one session. */
#define TND_HUBSESSION_MAX_FOLLOWERS 8

/* A queued session: name is its link's (unique in the server), repo, id
 * and dir say where it lives. The strings are copied. */
tnd_hubsession *tnd_hubsession_new(const char *name, const char *repo,
                                   const char *id, const char *dir);

/* Free; a running session's thread is waited for (stop it first).
 * Sets *self_p to NULL; safe on NULL. */
void tnd_hubsession_destroy(tnd_hubsession **self_p);

const char *tnd_hubsession_name(const tnd_hubsession *self);
const char *tnd_hubsession_id(const tnd_hubsession *self);
const char *tnd_hubsession_dir(const tnd_hubsession *self);
const char *tnd_hubsession_repo(const tnd_hubsession *self);
tnd_hubsession_state tnd_hubsession_state_of(const tnd_hubsession *self);

/* It goes on with a person's answer, which tnd_run_continue checks and
 * journals: its kind (approve, reject, guide, budget), text (copied; may
 * be NULL) and grants, for the escalation whose record has seq escalation
 * (0: whichever waits). Before tnd_hubsession_start. */
void tnd_hubsession_set_answer(tnd_hubsession *self, const tnd_answer *ans,
                               long escalation);

/* The session's lock, taken by the hub (fd holds it): kept while the
 * session waits in the queue, so `tandem sessions prune` and `tandem
 * resume` leave it alone, and handed to its thread, which runs the
 * session under it; closed when the session never starts. Before
 * tnd_hubsession_start. */
void tnd_hubsession_hold_lock(tnd_hubsession *self, int fd);

/* Who gives that answer, as the server's transport proved it (copied);
 * the session journals it with the answer. Before tnd_hubsession_start. */
void tnd_hubsession_set_who(tnd_hubsession *self, const tnd_client_who *who);

/* The CURVE key that submitted the session (its fingerprint, as
 * tnd_client_who.key gives it; copied), or NULL when not known: a
 * session submitted over ipc:// or tcp:// without CURVE. Over CURVE only
 * that key, or a key with the person role, may follow the session. */
void tnd_hubsession_set_owner(tnd_hubsession *self, const char *owner);
const char *tnd_hubsession_owner(const tnd_hubsession *self);

/* Run it: a link to the hub's ROUTER at endpoint in shared->zmq_ctx, and
 * a thread, whose session runs with shared (copied; what its pointers
 * name is borrowed and must outlive the session: the server's insecure
 * endpoint, baselines, context), its own link, streams and stop flag
 * put in. -1 with the error set. */
int tnd_hubsession_start(tnd_hubsession *self, const char *endpoint,
                         const tnd_run_host *shared);

/* Ask the running session to stop as signal sig would (it stays
 * resumable), and wake it through the hub's router (the ROUTER its link
 * is on; NULL: not woken, it sees the stop at its next poll). Nothing
 * for a queued one. */
void tnd_hubsession_stop(tnd_hubsession *self, void *router, int sig);

/* A client (a ROUTER identity; service is what it asked) follows the
 * session from now on; one that follows it already is told once, with
 * the service it asked last. -1 with the error set when too many do. */
int tnd_hubsession_follow(tnd_hubsession *self, const unsigned char *client,
                          size_t client_len, const char *service);

/* What the session wrote, to every follower (a client that cannot be
 * reached any more is forgotten). */
void tnd_hubsession_output(tnd_hubsession *self, tnd_broker *broker, bool err,
                           const char *text, size_t len);

/* "Still here" to every follower. */
void tnd_hubsession_alive(tnd_hubsession *self, tnd_broker *broker);

/* The `done` reply of a session that ended with code: its report.json
 * read from dir, the descriptor of its directory (tnd_session_dir_open;
 * none when dir is -1, when it cannot be read, or when the reply would
 * not fit in a body: TND_MDP_MAX_BODY), or wrote, the report as the
 * session's run wrote it (tnd_run_host.report, borrowed), unless NULL.
 * Caller frees. */
char *tnd_hubsession_done_body(const char *id, int dir, int code,
                               json_object *wrote, size_t *len);

/* The session's thread ended with code: wait for it, and tell every
 * follower the outcome with report.json, read from its directory as
 * tnd_session_dir_open opens it (without, and warned, when that
 * refuses). */
void tnd_hubsession_finish(tnd_hubsession *self, tnd_broker *broker, int code);

/* The session cannot go on here: every follower gets an error of kind. */
void tnd_hubsession_fail(tnd_hubsession *self, tnd_broker *broker,
                         const char *kind, const char *why);

/* {"session", "repo", "state", "followers"} for a status reply. Caller
 * puts. */
json_object *tnd_hubsession_json(const tnd_hubsession *self);

/* The entries of s[0..n) in order, those of owner only when owner is
 * not NULL, as long as their text stays within max bytes (a long queue
 * of long paths must not make a reply too large to send); *more counts
 * those left out. Caller puts. */
json_object *tnd_hubsession_list(tnd_hubsession *const *s, size_t n,
                                 const char *owner, size_t max, size_t *more);

#endif
