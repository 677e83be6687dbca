/* The hub's insides, shared by hub.c (sessions, the loop, life),
 * hubclient.c (what clients ask) and hubanswer.c (a person's answer).
 * Not for anyone else: the rest of tandem uses hub.h. */
#ifndef TND_HUB_INT_H
#define TND_HUB_INT_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stdint.h>

#include "orchestrator/accepted.h"
#include "orchestrator/basecache.h"
#include "orchestrator/broker.h"
#include "orchestrator/hub.h"
#include "orchestrator/hubsession.h"
#include "orchestrator/pool.h"

struct tnd_hub {
    const tnd_hub_options *o;
    tnd_pool *pool;
    tnd_broker *broker;       /* the pool's */
    tnd_accepted *accepted;   /* and the outcomes of sessions that ended */
    tnd_basecache *baselines; /* shared by the sessions (gate.baseline_reuse_s);
                                 NULL when off */
    void *ctx, *router;       /* the links' side */
    tnd_hubsession **s;       /* queued first-come first-served, and running */
    size_t n, alloc;
    unsigned long seq; /* names sessions: s1, s2, ... */
    int64_t next_alive;
    bool draining, stopped;
    int64_t drain_deadline;
    char **left; /* pending sessions take_over left for a next server (with
                    their configuration, or able to read or trust them);
                    NULL-terminated */
    const char **left_why; /* why each was, for a client that attaches:
                              never its repository (any key may ask) */
    /* since when requests of each service (coder, reviewer, members)
     * wait with no agent to take them, and whether that was said */
    int64_t unserved_since[2 + 32];
    int unserved_said[2 + 32]; /* 0 not yet; 1 said; 2 said with an agent
                                  registered for a service not asked */
};

/* The exit code for a client that comes back to a session that ended
 * with code, whose directory dirfd is (tnd_session_dir_open; dir names
 * it; -1: none, code is kept): what its journal says now when it says the
 * session finished or waits for a person, else code. The journal is the
 * session's own word; the code kept was this server's at the time: a
 * session waiting for a person and answered with no server running
 * ended for good since, which the accepted list never heard of; an
 * answer the session refused left it waiting (kept as 3 since, an
 * earlier server's list may say 1 or 2); a `tandem
 * resume` that held it when a server took it over (exit 2) finished
 * it. */
int tnd_hub_code_now(int dirfd, const char *dir, int code);

/* The exit code an earlier server told, or would have told, the clients
 * of a session it left ended (records: its journal): the session ended
 * between its last record and the accepted list's end record, and a
 * client that comes back for it gets this. */
int tnd_hub_code_of_ended(json_object *records);

/* The whole id of the session part names among those this server holds,
 * the pending ones of its accepted list and the kept outcomes: the best
 * match (tnd_session_match), when one session has it. NULL with the
 * error set when none or several do (not which: they may be other
 * clients'). With mine (a client key's fingerprint, over CURVE without
 * the person role), a part matches only that key's sessions; a whole id
 * matches whoever's it is. *none says whether none did (not several).
 * Caller frees. */
char *tnd_hub_resolve_id(const tnd_hub *h, const char *part, const char *mine,
                         bool *none);

/* Whether config (a task record's, or a client's --config: a path, NULL
 * for the built-in defaults) is the one this server's agents run with. */
bool tnd_hub_runs_config(const tnd_hub *h, const char *config);

/* Sessions in state. */
size_t tnd_hub_count(const tnd_hub *h, tnd_hubsession_state state);

/* The session of id, or NULL. Borrowed. */
tnd_hubsession *tnd_hub_by_id(tnd_hub *h, const char *id);

/* A session queued last, named sN, submitted by owner (the CURVE key,
 * or NULL: tnd_hubsession_set_owner). Borrowed: the hub owns it. */
tnd_hubsession *tnd_hub_add(tnd_hub *h, const char *repo, const char *id,
                            const char *dir, const char *owner);

/* Let go of s and destroy it. */
void tnd_hub_forget(tnd_hub *h, tnd_hubsession *s);

/* Sessions waiting ahead of s (0 when s runs, or will at once). */
long tnd_hub_ahead_of(const tnd_hub *h, const tnd_hubsession *s);

/* Start queued sessions while slots are free. */
void tnd_hub_start_queued(tnd_hub *h);

/* An earlier server's sessions that did not end, from the accepted
 * list: queued again, ended, or left for a next server with the reason
 * (h->left, h->left_why), each said on stderr (hubtake.c). */
void tnd_hub_take_over(tnd_hub *h);

/* A client's request: answered, or refused with the reason
 * (hubclient.c). */
void tnd_hub_on_client(tnd_hub *h, const tnd_broker_event *ev);

/* The reply body (taken) to the client of ev; final: its last. */
void tnd_hub_answer(tnd_hub *h, const tnd_broker_event *ev, bool final,
                    char *body, size_t len);

/* An error reply of kind (proto/client.h) saying why, logged. */
void tnd_hub_refuse(tnd_hub *h, const tnd_broker_event *ev, const char *kind,
                    const char *why);

/* Whether the server may act in repo by this very path (make and run a
 * session there, or go on with one): repo is absolute and names no link
 * on the way, and no user but the server's (and root) can move a
 * directory on it (common/trust.h), and `.tandem` and
 * `.tandem/sessions`, where they are, are the server user's and nobody
 * else's to write in (tnd_session_check_own_home). The path checked is
 * the path acted by: one through a link is refused, since whoever may
 * change the link may lead it elsewhere after the check. 0, or -1 with
 * the error naming the path, why, and what to do. */
int tnd_hub_trust_repo(const char *repo);

/* Whether the server may take a task in repo, a path a client sent, or
 * an answer to one of its sessions: it sees and reads it, and
 * tnd_hub_trust_repo of its real path. That real path, the one the
 * server then acts by and no other (resolved again, a link on the way
 * that changed since named another repository), or NULL with the error
 * set and *kind the client error to answer with (bad_request, or
 * forbidden for a repository it may not act in). Caller frees. */
char *tnd_hub_check_repo(const char *repo, const char **kind);

/* Whether config (a client's --config, or NULL) is the one the server's
 * agents run with. 0, or -1 with the error set naming both. */
int tnd_hub_check_config(const tnd_hub *h, const char *config);

/* The repository a client named, by its real path (the path as sent
 * when it has none). Caller frees. */
char *tnd_hub_real_repo(const char *sent);

/* The directory of session id in repo, opened for an answer to a
 * client through its own directories (tnd_session_dir_open): the
 * descriptor, or -1 (TND_ENOTFOUND: not there) with the error set. */
int tnd_hub_open_session(const char *repo, const char *id);

/* A person's answer (req, a tandem.answer) to a session that waits,
 * checked and given to it, or refused (hubanswer.c). */
void tnd_hub_on_answer(tnd_hub *h, const tnd_broker_event *ev,
                       const tnd_client_request *req);

/* s goes on with the answer ans ({answer, text, iterations, tokens}, as
 * the accepted list keeps it); -1 with the error set when it names no
 * answer a person may give through a server (hubclient.c). */
int tnd_hub_set_answer(tnd_hubsession *s, json_object *ans);

#endif
