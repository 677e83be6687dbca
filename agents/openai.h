/* tnd_openai_backend - OpenAI Chat Completions over libcurl.
 *
 * Speaks POST {base_url}/chat/completions, which OpenAI, vLLM, llama.cpp's
 * server, Ollama's /v1, LM Studio and OpenRouter all serve. The key comes
 * from the environment variable named by api_key_env and is sent only in
 * the Authorization header; without it no Authorization is sent (local
 * servers need none), and a 401 says which variable to set. The config's
 * extra headers go with every request (one of them named like ours, e.g.
 * Authorization for a gateway, replaces ours).
 *
 * With llm.stream (the default) the request asks for
 * `"stream": true, "stream_options": {"include_usage": true}` and the
 * Server-Sent Events are read as they arrive: each chunk's
 * choices[0].delta.content is appended to the answer and handed to the
 * call's delta callback, the last chunk (`"choices": []`) carries the
 * usage, and `data: [DONE]` ends it. A stream that stops before [DONE]
 * is truncated and retried (TND_ERETRY). An `{"error": {...}}` event is
 * an error with the server's message, retried when its type says the
 * server failed (server_error, overloaded, rate limits). A server that
 * ignores "stream" and answers with one JSON body is understood too. */
#ifndef TND_OPENAI_H
#define TND_OPENAI_H

#include "agents/backend.h"

extern const tnd_llm_backend tnd_openai_backend;

/* Largest response body accepted without streaming. */
#define TND_OPENAI_MAX_RESPONSE (8 << 20)

/* Largest answer text accepted, streamed or not. */
#define TND_OPENAI_MAX_ANSWER (4 << 20)

/* Most bytes read from one stream (events carry much more than their
 * text). */
#define TND_OPENAI_MAX_STREAM (64 << 20)

#endif
