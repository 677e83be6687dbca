/* tnd_anthropic_backend - the Anthropic Messages API over libcurl.
 *
 * Speaks POST {base_url}/v1/messages (the base has no /v1 of its own:
 * https://api.anthropic.com). The key comes from the variable named by
 * api_key_env (ANTHROPIC_API_KEY by default) and goes only in the
 * x-api-key header; without it none is sent, and a 401 names the
 * variable. The system prompt is the top-level "system", max_tokens is
 * always sent (the API requires it), and the config's extra headers go
 * with every request.
 *
 * With llm.stream the answer arrives as Server-Sent Events: text from
 * content_block_delta events (handed to the call's delta callback as it
 * comes), input tokens from message_start, output tokens from
 * message_delta, and message_stop ends it. A stream that stops before
 * message_stop is truncated and retried (TND_ERETRY); an error event is
 * retried when the server was overloaded or failed, else permanent. A
 * server that ignores "stream" and sends one JSON body is understood
 * too. */
#ifndef TND_ANTHROPIC_H
#define TND_ANTHROPIC_H

#include "agents/backend.h"

extern const tnd_llm_backend tnd_anthropic_backend;

/* The API version this backend speaks. */
#define TND_ANTHROPIC_VERSION "2023-06-01"

/* Largest response body accepted without streaming. */
#define TND_ANTHROPIC_MAX_RESPONSE (8 << 20)

/* Largest answer text accepted, streamed or not. */
#define TND_ANTHROPIC_MAX_ANSWER (4 << 20)

#endif
