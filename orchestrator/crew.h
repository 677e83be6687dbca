/* tnd_crew - the agents one run works with, and how to talk to them.
 *
 * A crew owns a private runtime directory (mode 0700, under $TMPDIR: see
 * rundir.h; making it sweeps away those of runs that are gone) and a way
 * to the agents: for `tandem run`, a pool of its own (pool.h: the broker
 * bound in the runtime directory, or on the configured endpoint, and the
 * local agent processes the config asks for); for a session of `tandem
 * serve`, a link to the hub (link.h), whose pool serves every session.
 * The calls are the same either way. tnd_crew_call sends one request and
 * waits for its reply while keeping everything alive: the broker polls,
 * exited agents are restarted, progress is passed on, and the wait ends
 * at a deadline or when the run is interrupted (with a link, the request
 * is cancelled at the hub). */
#ifndef TND_CREW_H
#define TND_CREW_H

#include <json-c/json.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/config.h"
#include "orchestrator/link.h"

typedef struct tnd_crew tnd_crew;

typedef struct tnd_crew_options {
    const tnd_config *config;
    const char *session_id;  /* names the runtime directory */
    const char *session_dir; /* a kept runtime directory records it */
    const char *logs_dir;    /* the agents' logs go here */
    const char *llm;         /* --llm for the agents, or NULL */
    const char *base_url;    /* --base-url for the agents, or NULL */
    const char *record;      /* --record for the agents, or NULL */
    bool verbose;
    bool no_coder;                 /* a review: start no coder, wait for none */
    const atomic_int *interrupted; /* non-zero (a signal's number): stop
                                      waiting */
    tnd_link *link;    /* tandem serve: reach the hub's agents through
                                 this (borrowed) instead of starting a broker
                                 and agents of the run's own */
    bool agents_later; /* the runtime directory only: tnd_crew_start
                          binds the broker and starts the agents */
} tnd_crew_options;

/* Progress from an agent while it works: the body of a PARTIAL; or a
 * NULL body, a tick at least every 200 ms while a call waits (so what is
 * shown can count time without a message). */
typedef void (*tnd_crew_progress_fn)(const char *body, size_t len,
                                     void *payload);

/* Check that the agent programs the config names can be run (the
 * coder's only when coder is true), before anything is started. TND_ECONFIG
 * with a message saying how to fix it. */
int tnd_crew_check(const tnd_config *config, bool coder);

/* Create the runtime directory, bind the broker and start the agents
 * (not with agents_later). NULL with the error set. */
tnd_crew *tnd_crew_new(const tnd_crew_options *opts);

/* Bind the broker and start the agents of a crew made with agents_later;
 * nothing when they run, or the hub's serve it. tandem run makes its
 * workspace first: a large tree's copy and hash, on the thread that
 * answers the broker, outlasted the agents' heartbeats, and they
 * reconnected ("cannot reach ..., dropping it" under review -q). 0, or
 * TND_ECONFIG (an endpoint taken, say) or -1 with the error set. */
int tnd_crew_start(tnd_crew *self);

/* Stop the agents, close the broker, remove the runtime directory unless
 * keep is true (then only the socket goes). Sets *self_p to NULL; safe on
 * NULL. */
void tnd_crew_destroy(tnd_crew **self_p, bool keep);

/* The runtime directory (absolute). Borrowed. */
const char *tnd_crew_runtime(const tnd_crew *self);

/* The local broker's endpoint; NULL with a link. Borrowed. */
const char *tnd_crew_endpoint(const tnd_crew *self);

/* Send body to service ("coder", "reviewer", or "reviewer.N" for quorum
 * member N) under key and wait until
 * deadline (a tnd_now_ms() value) for the reply. Returns 0 with *reply
 * (caller frees); TND_ETIMEOUT at the deadline; TND_ECANCELLED when
 * interrupted; -1 with the error set (the request failed, an agent was
 * given up on). progress may be NULL.
 *
 * A reply that does not answer the request (tnd_answer_check: bad JSON,
 * a wrong type or field, another task's ids) is the agent's fault, not
 * the task's: the agent is dropped (told DISCONNECT, so it registers
 * anew) and the request is sent again, up to TND_CREW_MAX_INVALID
 * replies; then the call fails with the agent and the reason named. Such
 * a reply is never returned, so it is never journaled. */
#define TND_CREW_MAX_INVALID 3
int tnd_crew_call(tnd_crew *self, const char *service, const char *key,
                  const char *body, size_t len, int64_t deadline,
                  tnd_crew_progress_fn progress, void *payload, char **reply,
                  size_t *reply_len);

/* One of several requests sent at once. */
typedef struct tnd_crew_request {
    const char *service; /* "coder", "reviewer", "reviewer.2", ... */
    const char *key;     /* unique among the requests */
    const char *body;
    size_t len;
    /* set by tnd_crew_call_many */
    bool done;
    int rc;      /* as tnd_crew_call returns */
    char *reply; /* rc 0: the reply body */
    size_t reply_len;
    char reply_type[32]; /* rc 0: the reply's "type" (tnd_answer_check) */
    json_object *parsed; /* rc 0: the reply parsed (tnd_answer_check), this
                            request's until a caller takes it (leaving
                            NULL); tnd_crew_request_clear puts it */
    char *error;         /* rc != 0: why */
    int invalid;         /* replies refused (see tnd_crew_call) */
    int sent;            /* times it went to an agent: more than the one answer
                            when agents were lost with it or their replies were
                            refused; each of those may have paid for model calls
                            that no reply accounts for (see paid.h); a
                            request sent again to an agent that acknowledged it
                            still held it (progress phase "held") counts once */
    int held;            /* such acknowledgements */
} tnd_crew_request;

/* Send n requests at once (a quorum's critiques) and wait for all of
 * them, as tnd_crew_call does for one. Returns 0 when every request got a
 * reply, else the first failing request's code with the error set to its
 * reason (the others keep what they got). Free each with
 * tnd_crew_request_clear. */
int tnd_crew_call_many(tnd_crew *self, tnd_crew_request *reqs, size_t n,
                       int64_t deadline, tnd_crew_progress_fn progress,
                       void *payload);

void tnd_crew_request_clear(tnd_crew_request *q);

/* How many times, over every request so far, a request went to an agent
 * again (one lost with it, or whose reply was refused): what a caller
 * compares before and after a call to learn that an agent before the one
 * that answered worked on the same request, and may have left its
 * traces in a workspace they share. */
long tnd_crew_resent(const tnd_crew *self);

/* Keep the agents' side going for up to ms while nothing of ours is
 * outstanding (a person reads a question): heartbeats both ways, agents
 * registering, dead local agents restarted. Without it an agent waiting
 * longer than the broker's liveness thinks the orchestrator dead and
 * reconnects. A reply that comes (to a request given up on) is
 * discarded. TND_ECANCELLED when interrupted; -1 with the error set
 * when the broker or the supervisor fails. */
int tnd_crew_idle(tnd_crew *self, long ms);

#endif
