/* The OpenAI Chat Completions backend (see openai.h). */
#include "agents/openai.h"

#include <stdlib.h>
#include <string.h>

#include "agents/http.h"
#include "common/error.h"
#include "common/log.h"
#include "common/str.h"
#include "common/xalloc.h"
#include "proto/json.h"

typedef struct openai {
    tnd_http *http;
    char *url;
    char *model;
    char *key_env;
    char *auth; /* "Authorization: Bearer KEY" or NULL */
    double temperature;
    int max_tokens;
} openai;

static void openai_close(void *state)
{
    openai *o = state;

    if (!o)
        return;
    tnd_http_destroy(&o->http);
    free(o->url);
    free(o->model);
    free(o->key_env);
    if (o->auth) {
        /* do not leave the key lying around in freed memory */
        memset(o->auth, 0, strlen(o->auth));
        free(o->auth);
    }
    free(o);
}

static void *openai_open(const tnd_llm_config *cfg)
{
    openai *o = tnd_xcalloc(1, sizeof(*o));
    const char *key;
    const char *base = tnd_llm_base_url(cfg);
    size_t n = strlen(base);

    while (n > 0 && base[n - 1] == '/')
        n--;
    o->url = tnd_xasprintf("%.*s/chat/completions", (int)n, base);
    o->model = tnd_xstrdup(cfg->model);
    o->key_env = tnd_xstrdup(tnd_llm_key_env(cfg));
    o->temperature = cfg->temperature;
    o->max_tokens = cfg->max_tokens;
    key = getenv(o->key_env);
    if (key && *key) {
        tnd_log_secret(key);
        o->auth = tnd_xasprintf("Authorization: Bearer %s", key);
    }
    if (!(o->http = tnd_http_new())) {
        openai_close(o);
        return NULL;
    }
    return o;
}

static char *build_request(const openai *o, const tnd_prompt *p, size_t *len)
{
    json_object *req = json_object_new_object();
    json_object *msgs = json_object_new_array();
    json_object *m;
    char *s;

    json_object_object_add(req, "model", json_object_new_string(o->model));
    if (p->system && *p->system) {
        m = json_object_new_object();
        json_object_object_add(m, "role", json_object_new_string("system"));
        json_object_object_add(m, "content", json_object_new_string(p->system));
        json_object_array_add(msgs, m);
    }
    m = json_object_new_object();
    json_object_object_add(m, "role", json_object_new_string("user"));
    json_object_object_add(m, "content", json_object_new_string(p->user));
    json_object_array_add(msgs, m);
    json_object_object_add(req, "messages", msgs);
    if (o->temperature >= 0)
        json_object_object_add(req, "temperature",
                               json_object_new_double(o->temperature));
    if (o->max_tokens > 0)
        json_object_object_add(req, "max_tokens",
                               json_object_new_int(o->max_tokens));
    json_object_object_add(req, "stream", json_object_new_boolean(0));
    s = tnd_json_dump(req, len);
    json_object_put(req);
    return s;
}

/* The server's own explanation, when the body carries one. Caller frees. */
static char *server_message(const char *body, size_t len)
{
    json_object *root = NULL, *err = NULL;
    char *msg = NULL, *shown;

    if (tnd_json_parse(&root, body, len) == 0) {
        if (tnd_json_get_object(&err, root, "error", TND_JSON_OPTIONAL) == 0 &&
            err)
            tnd_json_get_str(&msg, err, "message", 4096, TND_JSON_OPTIONAL);
        else
            tnd_json_get_str(&msg, root, "error", 4096, TND_JSON_OPTIONAL);
    }
    json_object_put(root);
    tnd_error_clear();
    if (!msg && len > 0 && !tnd_str_is_binary(body, len))
        msg = tnd_xstrndup(body, len);
    if (!msg)
        return tnd_xstrdup("");
    shown = tnd_str_printable(msg, 300);
    free(msg);
    return tnd_log_redact(shown);
}

static int status_error(const openai *o, const tnd_http_response *res)
{
    char *said = server_message(res->body, res->len);
    const char *sep = *said ? ": " : "";
    int error = -1;

    switch (res->status) {
    case 401:
    case 403:
        tnd_error_set("%ld from %s%s%s; check the key in $%s%s", res->status,
                      o->url, sep, said, o->key_env,
                      o->auth ? "" : " (it is not set)");
        break;
    case 404:
        tnd_error_set("404 from %s%s%s; check the model name '%s' and the "
                      "base URL (OpenAI-compatible bases end in /v1)",
                      o->url, sep, said, o->model);
        break;
    case 400:
    case 413:
    case 422:
        tnd_error_set("%ld from %s: the request was rejected%s%s", res->status,
                      o->url, sep, said);
        break;
    case 408:
    case 409:
    case 425:
    case 429:
    case 500:
    case 502:
    case 503:
    case 504:
    case 529:
        tnd_error_set("%ld from %s%s%s", res->status, o->url, sep, said);
        error = TND_ERETRY;
        break;
    default:
        tnd_error_set("unexpected HTTP %ld from %s%s%s", res->status, o->url,
                      sep, said);
        error = res->status >= 500 ? TND_ERETRY : -1;
        break;
    }
    free(said);
    return error;
}

static int parse_answer(tnd_llm_answer *out, const openai *o,
                        const tnd_http_response *res)
{
    json_object *root = NULL, *choices = NULL, *usage = NULL, *msg = NULL;
    int error = -1;

    if (tnd_json_parse(&root, res->body, res->len) < 0 ||
        tnd_json_get_array(&choices, root, "choices", 1000, TND_JSON_REQUIRED) <
            0)
        goto out;
    if (json_object_array_length(choices) == 0) {
        tnd_error_set("the answer has no choices");
        goto out;
    }
    if (tnd_json_get_object(&msg, json_object_array_get_idx(choices, 0),
                            "message", TND_JSON_REQUIRED) < 0 ||
        tnd_json_get_str(&out->text, msg, "content", 4 << 20,
                         TND_JSON_REQUIRED) < 0)
        goto out;
    if (tnd_json_get_object(&usage, root, "usage", TND_JSON_OPTIONAL) < 0 ||
        (usage &&
         (tnd_json_get_int(&out->usage.prompt_tokens, usage, "prompt_tokens", 0,
                           100000000, TND_JSON_OPTIONAL) < 0 ||
          tnd_json_get_int(&out->usage.completion_tokens, usage,
                           "completion_tokens", 0, 100000000,
                           TND_JSON_OPTIONAL) < 0)))
        goto out;
    error = 0;
out:
    if (error < 0)
        tnd_error_prefix("bad answer from %s", o->url);
    json_object_put(root);
    return error;
}

static int openai_complete(void *state, tnd_llm_answer *out,
                           const tnd_llm_call *call, long *retry_after_ms)
{
    const tnd_prompt *p = call->prompt;
    openai *o = state;
    const char *headers[3] = {"Content-Type: application/json", o->auth, NULL};
    tnd_http_request req = {0};
    tnd_http_response res = {0};
    size_t len = 0;
    char *body = build_request(o, p, &len);
    int error;

    *retry_after_ms = -1;
    req.url = o->url;
    req.body = body;
    req.body_len = len;
    req.headers = headers;
    req.timeout_ms = call->timeout_ms;
    req.max_response = TND_OPENAI_MAX_RESPONSE;
    req.cancel = call->cancel;
    error = tnd_http_post(&res, o->http, &req);
    if (error == 0 && res.status != 200) {
        error = status_error(o, &res);
        *retry_after_ms = res.retry_after_ms;
    } else if (error == 0) {
        error = parse_answer(out, o, &res);
    }
    tnd_http_response_clear(&res);
    free(body);
    return error;
}

const tnd_llm_backend tnd_openai_backend = {
    "openai",
    openai_open,
    openai_complete,
    openai_close,
};
