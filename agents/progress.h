/* tnd_progress - streamed model output passed on as progress.
 *
 * Plugged into an LLM as its delta callback, it sends the text that
 * arrived as MDP PARTIAL bodies ({"tandem": 1, "type": "progress",
 * "role", "chars", "delta"}; see proto/PROTOCOL.md), batched to at most
 * one message per interval so a fast stream cannot flood the broker.
 * Phase messages ({"phase": "skill build"}) say what an agent is doing
 * when nothing streams. */
#ifndef TND_PROGRESS_H
#define TND_PROGRESS_H

#include <stddef.h>
#include <stdint.h>

#include "agents/agent.h"
#include "common/buf.h"

typedef struct tnd_progress {
    tnd_agent_job *job;
    const char *role;
    size_t chars;    /* characters streamed in all */
    tnd_buf pending; /* not sent yet */
    int64_t last_ms; /* when the last message went */
    long interval_ms;
} tnd_progress;

/* Start for job; role is borrowed ("coder", "reviewer"). */
void tnd_progress_init(tnd_progress *p, tnd_agent_job *job, const char *role);

/* A tnd_llm_delta_fn: payload is the tnd_progress. */
void tnd_progress_delta(const char *text, size_t len, void *payload);

/* Say what the agent does now ("skill build", "critique"): a progress
 * body with "phase" and no "delta", sent at once. NULL p: nothing. */
void tnd_progress_phase(tnd_progress *p, const char *phase);

/* Send what is pending, then free. */
void tnd_progress_finish(tnd_progress *p);

#endif
