/* tnd_supervisor - the local agent processes tandem starts and keeps.
 *
 * Each agent runs as a child in its own process group, with stdout and
 * stderr going to a log file in the session, and dies with tandem
 * (PR_SET_PDEATHSIG) if tandem is killed outright, so no agent is ever
 * orphaned. tandem becomes the parent of every orphaned descendant
 * (skills/reap.h): when an agent exits, what its skills or model program
 * left running is killed and reaped before the agent is reported gone
 * (and its request handed out again) or restarted. An agent that exits
 * is restarted with backoff; one that exits with status 2 (its
 * configuration is wrong) or fails three times in a row shortly after
 * starting is given up on, and the error carries the last lines of its
 * log.
 *
 * Nothing else in the process may wait for a child of its own while
 * tnd_supervisor_tick() or tnd_supervisor_destroy() runs: every child
 * that is not a running agent is taken for a leftover. */
#ifndef TND_SUPERVISOR_H
#define TND_SUPERVISOR_H

#include <stddef.h>

typedef struct tnd_supervisor tnd_supervisor;

typedef struct tnd_agent_spec {
    const char *name;        /* "coder-1": also its --id */
    const char *service;     /* "coder" or "reviewer" */
    const char *const *argv; /* program and arguments; copied */
    const char *log_path;    /* its output goes here (appended) */
} tnd_agent_spec;

/* Called for each agent that exited, with its name, so the broker can
 * requeue its request at once. */
typedef void (*tnd_supervisor_gone_fn)(const char *name, void *payload);

tnd_supervisor *tnd_supervisor_new(void);

/* Start an agent. -1 when it cannot be started at all (the program does
 * not exist or cannot be run); the error names the program. */
int tnd_supervisor_add(tnd_supervisor *self, const tnd_agent_spec *spec);

/* Reap agents that exited, kill what they left running, then report them
 * to gone (may be NULL), and restart those whose backoff has passed.
 * Returns -1 with the error set when an agent was given up on. Cheap:
 * call it often. */
int tnd_supervisor_tick(tnd_supervisor *self, tnd_supervisor_gone_fn gone,
                        void *payload);

/* Kill the agent called name with SIGKILL (a stopped or hung process
 * does not heed SIGTERM): the next tick reaps it, sweeps what it left
 * and restarts it. 0, or TND_ENOTFOUND when no running agent of ours has
 * that name (an agent on another host). */
int tnd_supervisor_kill(tnd_supervisor *self, const char *name);

/* Agents of service that are running now. */
size_t tnd_supervisor_running(const tnd_supervisor *self, const char *service);

/* Stop every agent: SIGTERM, up to grace_ms for them to exit, SIGKILL
 * for the rest (whole process groups), reap all, then kill and reap
 * whatever they left. Sets *self_p to NULL; safe on NULL. */
void tnd_supervisor_destroy(tnd_supervisor **self_p, long grace_ms);

#endif
