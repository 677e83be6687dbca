/* The agent runtime's insides, shared by agent.c (the workers' loops and
 * their broker connections) and agent_job.c (a request's job thread).
 * Nothing else includes this: the rest of tandem uses agent.h. */
#ifndef TND_AGENT_INT_H
#define TND_AGENT_INT_H

#include <stdatomic.h>
#include <stddef.h>

#include "agents/agent.h"

/* Start a job thread that runs opts->handler on body (with payload) and
 * sends its progress and its reply to the worker's loop over a PUSH
 * connected to endpoint, in ctx (see JOB_ENDPOINT in agent.c). cancel is
 * the worker's flag, borrowed; cancel_fd is readable once it is set. Takes
 * ownership of body, on failure too. NULL with the error set. */
tnd_agent_job *tnd_agent_job_start(void *ctx, const char *endpoint,
                                   const tnd_agent_options *opts, void *payload,
                                   atomic_int *cancel, int cancel_fd,
                                   char *body, size_t len);

/* Wait for the job's thread to end, then free the job; sets *job_p to
 * NULL. Safe on NULL. */
void tnd_agent_job_join(tnd_agent_job **job_p);

#endif
