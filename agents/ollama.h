/* tnd_ollama_backend - Ollama's native chat API over libcurl.
 *
 * Speaks POST {base_url}/api/chat (the base has no /v1: that is
 * Ollama's OpenAI-compatible API, which the openai backend speaks). No
 * key is needed; when api_key_env is set in the config and the variable
 * holds a key, it is sent as "Authorization: Bearer KEY" for a proxy in
 * front of Ollama. temperature and max_tokens go in "options"
 * (num_predict); the config's extra headers go with every request.
 *
 * With llm.stream the answer arrives as newline-delimited JSON: each
 * object's message.content is appended (and handed to the call's delta
 * callback), and the last object has "done": true and the token counts.
 * A stream without it is truncated and retried (TND_ERETRY). An
 * {"error": "..."} object, as the body or mid-stream, is an error with
 * that message; a model that is not there says to `ollama pull` it. */
#ifndef TND_OLLAMA_H
#define TND_OLLAMA_H

#include "agents/backend.h"

extern const tnd_llm_backend tnd_ollama_backend;

/* Largest response body accepted without streaming. */
#define TND_OLLAMA_MAX_RESPONSE (8 << 20)

/* Largest answer text accepted, streamed or not. */
#define TND_OLLAMA_MAX_ANSWER (4 << 20)

#endif
