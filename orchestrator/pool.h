/* tnd_pool - the agents on this machine and the broker they talk to.
 *
 * A pool binds the broker (MDP/0.2 ROUTER) at an endpoint and starts the
 * agent processes the config asks for (agents.*.count; quorum members
 * as reviewer.N), as many sets of them as `copies` says, which connect
 * to it; agents on other hosts may connect too. Dead local agents are reaped,
 * what they left is ended, and they are restarted (supervisor.h); a silent one
 * is killed so it restarts. `tandem run` has one pool for its one task
 * (crew.c); `tandem serve` keeps one for every session it runs (hub.c). */
#ifndef TND_POOL_H
#define TND_POOL_H

#include <stdbool.h>

#include "common/config.h"
#include "orchestrator/broker.h"

typedef struct tnd_pool tnd_pool;

typedef struct tnd_pool_options {
    const tnd_config *config;
    const char *endpoint; /* to bind: ipc://PATH or tcp://HOST:PORT */
    const char *logs_dir; /* the agents' logs go here (made if missing) */
    const char *llm;      /* --llm for the agents, or NULL */
    const char *base_url; /* --base-url for the agents, or NULL */
    const char *record;   /* --record for the agents, or NULL */
    const char *runtime;  /* --runtime for the reviewers: the private
                             directory their workspaces lie in (NULL:
                             $TMPDIR/tandem-UID, every run's) */
    bool verbose;
    int copies;    /* sets of the config's agents to start (0: one) */
    bool no_coder; /* start no coder */
    bool clients;  /* client requests are the caller's (tandem serve):
                      see tnd_broker_options.clients */
} tnd_pool_options;

/* Check that the agent programs the config names can be run (the
 * coder's only when coder is true), and that endpoint (NULL: the
 * config's orchestrator.endpoint) has what it needs (CURVE keys that
 * load; with clients, as for tandem serve, CURVE or insecure even on
 * loopback), before anything is started. TND_ECONFIG with a message saying
 * how to fix it. */
int tnd_pool_check(const tnd_config *config, const char *endpoint, bool coder,
                   bool clients);

/* The config's endpoint when it is a tcp:// one beyond loopback without
 * CURVE, allowed by orchestrator.insecure; NULL otherwise. Borrowed. */
const char *tnd_pool_insecure_endpoint(const tnd_config *config);

/* Bind the broker and start the agents. NULL with the error set. The
 * options' strings are copied where kept. */
tnd_pool *tnd_pool_new(const tnd_pool_options *opts);

/* Stop the agents (DISCONNECT, SIGTERM, then SIGKILL after grace_ms)
 * and close the broker. Sets *self_p to NULL; safe on NULL. */
void tnd_pool_destroy(tnd_pool **self_p, long grace_ms);

/* Whether the pool's endpoint is tcp:// without CURVE where that needs
 * orchestrator.insecure (beyond loopback, or any with clients): every
 * report must say so. */
bool tnd_pool_insecure(const tnd_pool *self);

/* The broker. Borrowed until tnd_pool_destroy. */
tnd_broker *tnd_pool_broker(tnd_pool *self);

/* The endpoint agents connect to. Borrowed. */
const char *tnd_pool_endpoint(const tnd_pool *self);

/* Reap agents that exited, end what they left, tell the broker, restart
 * them. -1 with the error set when one was given up on. Cheap: call it
 * often. */
int tnd_pool_tick(tnd_pool *self);

#endif
