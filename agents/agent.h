/* tnd_agent - the MDP/Worker runtime every tandem agent runs on.
 *
 * It connects a DEALER socket to the broker, says READY for its service,
 * and hands each REQUEST body to a handler running on a job thread. The
 * worker's loop keeps the socket: it beats while a job runs (a two-minute
 * LLM call or a long test run never looks like a dead agent), forwards
 * the job's progress (PARTIAL) and reply (FINAL), and reconnects when the
 * broker goes silent or says DISCONNECT. SIGTERM and SIGINT stop it
 * cleanly: the running job sees its cancel flag, the broker gets
 * DISCONNECT, and tnd_agent_run returns.
 *
 * One process may serve several requests at once (threads > 1): it is
 * then that many MDP workers, each with its own socket, loop and job
 * thread, named ID.1, ID.2, ...; the broker sees separate workers. They
 * share the process's libraries and heap, which is what makes a pool of
 * 32 cost a few megabytes instead of 32 processes. */
#ifndef TND_AGENT_H
#define TND_AGENT_H

#include <stdatomic.h>
#include <stddef.h>

#include "proto/curve.h"

typedef struct tnd_agent_job tnd_agent_job;

/* The most requests one agent process serves at once. */
#define TND_AGENT_MAX_THREADS 64

/* Handle one request body and return the reply body (caller of the
 * handler frees it); never NULL: a failure is answered with an error
 * body (see tnd_error_reply_encode). Runs on the job thread. */
typedef char *(*tnd_agent_handler)(tnd_agent_job *job, const char *body,
                                   size_t len, size_t *reply_len,
                                   void *payload);

typedef struct tnd_agent_options {
    const char *service;  /* "coder", "reviewer", ... */
    const char *endpoint; /* the broker's endpoint */
    const char *identity; /* routing id; NULL: "SERVICE-PID" */
    int heartbeat_ms;     /* must match the broker's */
    int liveness;         /* broker beats missed before reconnecting */
    /* CURVE: the orchestrator's public key and this agent's pair; NULL
     * for a plain connection (ipc://, or a tcp:// the orchestrator
     * allows without) */
    const char *server_key;
    const tnd_curve_pair *curve_pair;
    tnd_agent_handler handler;
    void *payload; /* passed to handler */
    /* requests served at once, 1..TND_AGENT_MAX_THREADS (0: 1); with
     * payloads, worker k (0-based) passes payloads[k] to handler instead
     * of payload: whatever a job changes must be its worker's own */
    int threads;
    void *const *payloads;
} tnd_agent_options;

/* What a handler answers when it cannot do the job: the last error,
 * logged, as the error reply to task_id's attempt (the reply's length in
 * *reply_len). Caller frees. */
char *tnd_agent_fail(const char *task_id, int attempt, size_t *reply_len);

/* Serve requests until SIGTERM or SIGINT. Returns 0 after a clean stop,
 * -1 when the socket could not be set up (error set). */
int tnd_agent_run(const tnd_agent_options *opts);

/* Send a progress body (a PARTIAL) for the job's request. From the job
 * thread only. */
int tnd_agent_job_progress(tnd_agent_job *job, const char *body, size_t len);

/* Becomes non-zero when the agent is stopping; long work polls it. */
const atomic_int *tnd_agent_job_cancel(const tnd_agent_job *job);

/* Readable once the agent is stopping (its stop pipe; -1 for none):
 * what a wait polls to wake at the stop, not the next look at the
 * flag. */
int tnd_agent_job_cancel_fd(const tnd_agent_job *job);

#endif
