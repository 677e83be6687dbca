/* tnd_endpoint - what the HTTP backends (openai, anthropic, ollama)
 * share: the connection, the URL, the model and its settings, the
 * request headers, and what an error status means.
 *
 * The headers are the backend's own first (its content type, the key
 * header when the key variable is set), each left out when the config
 * sets that header itself, then the config's. The key, and every
 * configured header that looks like it carries a credential, are
 * redacted from every log line. */
#ifndef TND_ENDPOINT_H
#define TND_ENDPOINT_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

#include "agents/backend.h"
#include "agents/http.h"
#include "common/buf.h"
#include "common/config.h"

typedef struct tnd_endpoint {
    tnd_http *http;
    char *url;          /* the base URL and the API's path */
    char *model;        /* as the config names it */
    char *key_env;      /* the variable the key comes from; "" for none */
    bool keyed;         /* that variable was set: a key is sent */
    char **headers;     /* "Name: value", NULL-terminated; may hold the key */
    char *not_found;    /* the fix a 404 suggests */
    double temperature; /* < 0: the API's default */
    int max_tokens;
    bool stream;
} tnd_endpoint;

/* The endpoint for cfg at its base URL + path. own: the backend's
 * headers ("Name: value", NULL-terminated); key_prefix: the start of the
 * header that carries the key ("Authorization: Bearer ", "x-api-key: ");
 * not_found: what a 404 asks the user to check (copied). NULL with the
 * error set when libcurl cannot start. Free with tnd_endpoint_free: a
 * backend's open and close. */
tnd_endpoint *tnd_endpoint_new(const tnd_llm_config *cfg, const char *path,
                               const char *const *own, const char *key_prefix,
                               const char *not_found);

/* A request body's common part, {"model", "messages": [the system
 * prompt when system_message and there is one, the user's], "stream"},
 * for the backend to add its own keys to. Caller puts. */
json_object *tnd_endpoint_body(const tnd_endpoint *self, const tnd_prompt *p,
                               bool system_message);

/* A POST of body (len bytes, borrowed) for call, keeping at most
 * max_response bytes of the answer. When the endpoint streams and
 * on_chunk is given, a success's body goes to on_chunk (with payload)
 * as it arrives, and only there. */
void tnd_endpoint_request(tnd_http_request *req, const tnd_endpoint *self,
                          const char *body, size_t len,
                          const tnd_llm_call *call, size_t max_response,
                          tnd_http_chunk_fn on_chunk, void *payload);

/* The error for an answer whose status is not a success (apierror.h):
 * TND_ERETRY or -1, with *retry_after_ms the wait the server asked
 * for. */
int tnd_endpoint_status_error(const tnd_endpoint *self,
                              const tnd_http_response *res,
                              long *retry_after_ms);

/* Hand an attempt's answer over: text (taken from the buffer), the
 * tokens the API counted, and how the API said it stopped (cut: 0 whole,
 * TND_LLM_CUT at max_tokens, TND_LLM_FILTERED by its content filter;
 * either sets out->truncated, with a warning in the log). */
void tnd_endpoint_answer(const tnd_endpoint *self, tnd_llm_answer *out,
                         tnd_buf *text, long prompt_tokens,
                         long completion_tokens, int cut);

/* Free an endpoint (the headers wiped: they may hold the key); safe on
 * NULL. A backend's close (void * for tnd_llm_backend). */
void tnd_endpoint_free(void *self);

#endif
