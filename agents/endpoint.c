/* What the HTTP backends share (see endpoint.h). */
#include "agents/endpoint.h"

#include <stdlib.h>
#include <string.h>

#include "agents/apierror.h"
#include "agents/llm.h"
#include "common/log.h"
#include "common/str.h"
#include "common/utf8.h"
#include "common/xalloc.h"

/* Add line to the headers at *n, unless the config sets its header. */
static void add_own(tnd_endpoint *self, size_t *n, const tnd_llm_config *cfg,
                    const char *line)
{
    char *name = tnd_xstrndup(line, strcspn(line, ":"));

    if (!tnd_llm_header_set(cfg->headers, name))
        self->headers[(*n)++] = tnd_xstrdup(line);
    free(name);
}

tnd_endpoint *tnd_endpoint_new(const tnd_llm_config *cfg, const char *path,
                               const char *const *own, const char *key_prefix,
                               const char *not_found)
{
    tnd_endpoint *self = tnd_xcalloc(1, sizeof(*self));
    const char *key;
    size_t n = 0, room = 2;

    self->url = tnd_llm_url(cfg, path);
    tnd_llm_url_guard(self->url);
    self->model = tnd_xstrdup(cfg->model);
    self->key_env = tnd_xstrdup(tnd_llm_key_env(cfg));
    self->not_found = tnd_xstrdup(not_found);
    self->temperature = cfg->temperature;
    self->max_tokens = cfg->max_tokens;
    self->stream = cfg->stream;
    for (const char *const *h = own; *h; h++)
        room++;
    for (char **h = cfg->headers; h && *h; h++)
        room++;
    self->headers = tnd_xcalloc(room, sizeof(char *));
    for (const char *const *h = own; *h; h++)
        add_own(self, &n, cfg, *h);
    key = *self->key_env ? getenv(self->key_env) : NULL;
    if (key && *key) {
        char *line = tnd_xasprintf("%s%s", key_prefix, key);
        tnd_log_secret(key);
        self->keyed = true;
        add_own(self, &n, cfg, line);
        tnd_str_free_secret(&line);
    }
    for (char **h = cfg->headers; h && *h; h++) {
        tnd_llm_header_guard(*h);
        self->headers[n++] = tnd_xstrdup(*h);
    }
    if (!(self->http = tnd_http_new())) {
        tnd_endpoint_free(self);
        return NULL;
    }
    return self;
}

static void add_message(json_object *msgs, const char *role, const char *text)
{
    json_object *m = json_object_new_object();

    json_object_object_add(m, "role", json_object_new_string(role));
    json_object_object_add(m, "content", json_object_new_string(text));
    json_object_array_add(msgs, m);
}

json_object *tnd_endpoint_body(const tnd_endpoint *self, const tnd_prompt *p,
                               bool system_message)
{
    json_object *req = json_object_new_object();
    json_object *msgs = json_object_new_array();

    json_object_object_add(req, "model", json_object_new_string(self->model));
    if (system_message && p->system && *p->system)
        add_message(msgs, "system", p->system);
    add_message(msgs, "user", p->user);
    json_object_object_add(req, "messages", msgs);
    json_object_object_add(req, "stream",
                           json_object_new_boolean(self->stream));
    return req;
}

void tnd_endpoint_request(tnd_http_request *req, const tnd_endpoint *self,
                          const char *body, size_t len,
                          const tnd_llm_call *call, size_t max_response,
                          tnd_http_chunk_fn on_chunk, void *payload)
{
    memset(req, 0, sizeof(*req));
    req->url = self->url;
    req->body = body;
    req->body_len = len;
    req->headers = (const char *const *)self->headers;
    req->timeout_ms = call->timeout_ms;
    req->max_response = max_response;
    req->cancel = call->cancel;
    req->cancel_fd = call->cancel ? call->cancel_fd : -1;
    if (self->stream && on_chunk) {
        req->on_chunk = on_chunk;
        req->payload = payload;
        req->chunks_only = 1;
    }
}

int tnd_endpoint_status_error(const tnd_endpoint *self,
                              const tnd_http_response *res,
                              long *retry_after_ms)
{
    tnd_apierror_ctx ctx = {self->url, self->key_env, self->keyed,
                            self->not_found};

    *retry_after_ms = res->retry_after_ms;
    return tnd_apierror_status(&ctx, res->status, res->body, res->len);
}

void tnd_endpoint_answer(const tnd_endpoint *self, tnd_llm_answer *out,
                         tnd_buf *text, long prompt_tokens,
                         long completion_tokens, int cut)
{
    size_t len;

    if (cut == TND_LLM_FILTERED)
        tnd_log_warn("the answer from %s was stopped by the provider's "
                     "content filter",
                     self->url);
    else if (cut && self->max_tokens > 0)
        tnd_log_warn("the answer from %s was cut at max_tokens (%d); raise "
                     "llm.max_tokens",
                     self->url, self->max_tokens);
    else if (cut)
        tnd_log_warn("the answer from %s was cut at the server's max_tokens; "
                     "set llm.max_tokens",
                     self->url);
    out->text = tnd_buf_detach(text, &len);
    /* a NUL a stream's chunk carried (as "\u0000") would end the text
     * there, and the coder's edits after it were lost: read as U+FFFD,
     * as a byte that is not UTF-8 is */
    if (memchr(out->text, '\0', len)) {
        char *clean = tnd_utf8_clean(out->text, len, NULL);
        free(out->text);
        out->text = clean;
    }
    out->truncated = cut != TND_LLM_DONE;
    out->filtered = cut == TND_LLM_FILTERED;
    out->usage.prompt_tokens = prompt_tokens;
    out->usage.completion_tokens = completion_tokens;
}

void tnd_endpoint_free(void *state)
{
    tnd_endpoint *self = state;

    if (!self)
        return;
    tnd_http_destroy(&self->http);
    free(self->url);
    free(self->model);
    free(self->key_env);
    free(self->not_found);
    for (char **h = self->headers; h && *h; h++)
        tnd_str_free_secret(h); /* any of them may carry a key */
    free(self->headers);
    free(self);
}
