/* tnd_probe - does an LLM configuration work, without asking for a
 * completion?
 *
 * For `tandem doctor`: asks each API for its model list (OpenAI-style
 * GET /models, Anthropic GET /v1/models, Ollama GET /api/tags) with the
 * configured key and headers and checks the model is offered; opens a
 * replay cassette; finds a command provider's program. The key's value is
 * never put into the detail. */
#ifndef TND_PROBE_H
#define TND_PROBE_H

#include <stdbool.h>
#include <stddef.h>

#include "common/config.h"

/* Whether the key the provider needs is available: true when none is
 * needed. detail tells which variable and whether it is set ("$X is
 * set", "$X is not set"), never the value. */
bool tnd_probe_key(char *detail, size_t size, const tnd_llm_config *llm);

/* Reach the provider within timeout_ms. 0 when it answers and offers the
 * model (detail says what was checked), -1 when not (detail says why and
 * what to fix). */
int tnd_probe_endpoint(char *detail, size_t size, const tnd_llm_config *llm,
                       long timeout_ms);

/* Find program on PATH (or check it when it has a '/'); the full path
 * into found (may be NULL). */
bool tnd_probe_program(char *found, size_t size, const char *program);

#endif
