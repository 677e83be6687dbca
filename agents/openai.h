/* tnd_openai_backend - OpenAI Chat Completions over libcurl.
 *
 * Speaks POST {base_url}/chat/completions, which OpenAI, vLLM, llama.cpp's
 * server, Ollama's /v1, LM Studio and OpenRouter all serve. The key comes
 * from the environment variable named by api_key_env and is sent only in
 * the Authorization header; without it no Authorization is sent (local
 * servers need none), and a 401 says which variable to set. */
#ifndef TND_OPENAI_H
#define TND_OPENAI_H

#include "agents/backend.h"

extern const tnd_llm_backend tnd_openai_backend;

/* Largest response body accepted. */
#define TND_OPENAI_MAX_RESPONSE (8 << 20)

#endif
