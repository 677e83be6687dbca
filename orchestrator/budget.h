/* tnd_budget - the limits on what one task, and one request, may spend.
 *
 * gate.max_tokens, gate.max_llm_calls and gate.max_wall_s (0: no limit),
 * and how long one agent request may take.
 * The run loop asks before every request that can spend more; an
 * exhausted budget stops the loop and hands the task to a human with the
 * reason. A pure function, so every limit has a test. */
#ifndef TND_BUDGET_H
#define TND_BUDGET_H

#include <stddef.h>
#include <stdint.h>

#include "common/config.h"
#include "proto/body.h"

/* Whether the task may go on: 0 when every budget has room; 1 with a
 * reason in why ("gate.max_tokens (10,000) reached: 10,482 tokens used")
 * when one is spent. elapsed_ms is the task's age. */
int tnd_budget_spent(char *why, size_t size, const tnd_gate_config *gate,
                     const tnd_usage *used, int64_t elapsed_ms);

/* Milliseconds left of gate.max_wall_s (clamped at 0), or -1 when there
 * is no wall-clock budget. */
long tnd_budget_wall_left(const tnd_gate_config *gate, int64_t elapsed_ms);

/* How long one request to service ("coder", "reviewer", "reviewer.N")
 * may take, in seconds: orchestrator.request_timeout_s when set (above
 * 0), else what the work may take: the agent's model calls at their
 * timeout_s and max_retries with the backoff between (30 s at most),
 * twice (an unusable answer is asked again), plus, for a reviewer, every
 * configured skill's timeout_s, plus a minute. */
long tnd_budget_request_s(const tnd_config *config, const char *service);

#endif
