/* The Ollama native chat backend (see ollama.h).
 *
 * A plain answer and each line of a streamed one have the same shape
 * (message.content, done, the counts on the last), so one function reads
 * both. Streamed lines go through a tnd_stream NDJSON parser straight
 * from libcurl's chunks and are not kept. */
#include "agents/ollama.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "agents/endpoint.h"
#include "agents/http.h"
#include "agents/stream.h"
#include "common/buf.h"
#include "common/error.h"
#include "common/log.h"
#include "common/str.h"
#include "common/xalloc.h"
#include "proto/json.h"

/* Everything the backend keeps is what every HTTP backend keeps. */
typedef tnd_endpoint ollama;

/* One attempt's reading of the answer. */
typedef struct reading {
    const ollama *o;
    const tnd_llm_call *call;
    tnd_stream *lines;
    tnd_buf text;
    long in_tokens, out_tokens;
    bool done; /* the "done": true object came */
    bool length_hit;
    int error; /* why the chunk callback stopped the transfer */
} reading;

static void *ollama_open(const tnd_llm_config *cfg)
{
    static const char *const own[] = {"Content-Type: application/json", NULL};
    char *not_found = tnd_xasprintf(
        "pull the model on the server (ollama pull %s) or check its name, "
        "and check the base URL (Ollama's own API has no /v1, e.g. "
        "http://localhost:11434)",
        cfg->model);
    ollama *o = tnd_endpoint_new(cfg, "/api/chat", own,
                                 "Authorization: Bearer ", not_found);

    free(not_found);
    return o;
}

static char *build_request(const ollama *o, const tnd_prompt *p, size_t *len)
{
    json_object *req = tnd_endpoint_body(o, p, true);
    json_object *opts = json_object_new_object();
    char *s;

    if (o->temperature >= 0)
        json_object_object_add(opts, "temperature",
                               json_object_new_double(o->temperature));
    if (o->max_tokens > 0)
        json_object_object_add(opts, "num_predict",
                               json_object_new_int(o->max_tokens));
    json_object_object_add(req, "options", opts);
    s = tnd_json_dump(req, len);
    json_object_put(req);
    return s;
}

/* {"error": "..."}: permanent; a missing model says how to get it. */
static int server_error(const reading *r, json_object *root)
{
    char *msg = NULL, *shown;
    bool missing;

    tnd_json_get_str(&msg, root, "error", 4096, TND_JSON_OPTIONAL);
    shown = tnd_log_printable(msg ? msg : "", 300);
    missing = strstr(shown, "not found") != NULL;
    tnd_error_set("%s reported an error: %s%s%s", r->o->url,
                  *shown ? shown : "(no message)", missing ? "; " : "",
                  missing ? r->o->not_found : "");
    free(msg);
    free(shown);
    return -1;
}

/* One answer object: a whole plain answer or one line of a stream. */
static int take_object(reading *r, json_object *root, bool streamed)
{
    json_object *msg = NULL;
    char *text = NULL, *reason = NULL;
    bool done = false;
    int error = -1;

    if (!json_object_is_type(root, json_type_object))
        return tnd_error_set("the answer is not a JSON object");
    if (json_object_object_get_ex(root, "error", NULL))
        return server_error(r, root);
    if (tnd_json_get_object(&msg, root, "message",
                            streamed ? TND_JSON_OPTIONAL : TND_JSON_REQUIRED) <
            0 ||
        (msg && tnd_json_get_str(&text, msg, "content", TND_OLLAMA_MAX_ANSWER,
                                 TND_JSON_OPTIONAL | TND_JSON_TEXT) < 0) ||
        tnd_json_get_bool(&done, root, "done", TND_JSON_OPTIONAL) < 0 ||
        tnd_json_get_str(&reason, root, "done_reason", 200, TND_JSON_OPTIONAL) <
            0 ||
        tnd_json_get_int(&r->in_tokens, root, "prompt_eval_count", 0, 100000000,
                         TND_JSON_OPTIONAL) < 0 ||
        tnd_json_get_int(&r->out_tokens, root, "eval_count", 0, 100000000,
                         TND_JSON_OPTIONAL) < 0)
        goto out;
    if (text && *text) {
        if (tnd_buf_append(&r->text, text, strlen(text)) < 0) {
            tnd_error_set("the answer from %s is longer than %d bytes",
                          r->o->url, TND_OLLAMA_MAX_ANSWER);
            goto out;
        }
        if (streamed && r->call->delta)
            r->call->delta(text, strlen(text), r->call->delta_payload);
    }
    r->done = r->done || done || !streamed;
    r->length_hit = reason && strcmp(reason, "length") == 0;
    error = 0;
out:
    free(text);
    free(reason);
    return error;
}

static int on_line(const char *name, const char *data, size_t len,
                   void *payload)
{
    reading *r = payload;
    json_object *root = NULL;
    int error;

    (void)name;
    if (r->done)
        return 0;
    if (tnd_json_parse(&root, data, len) < 0)
        error = -1;
    else
        error = take_object(r, root, true);
    json_object_put(root);
    if (error < 0 && !strstr(tnd_error_last(), r->o->url))
        tnd_error_prefix("bad answer from %s", r->o->url);
    return error;
}

static int on_chunk(const char *data, size_t len, void *payload)
{
    reading *r = payload;
    int rc = tnd_stream_feed(r->lines, data, len, on_line, r);

    if (rc == 0)
        return r->done ? TND_HTTP_CHUNK_END : 0;
    if (!strstr(tnd_error_last(), r->o->url))
        tnd_error_prefix("the stream from %s", r->o->url);
    r->error = rc;
    return 1;
}

/* The transfer ended with a 200: make sense of what came. */
static int finish_reading(reading *r, const tnd_http_response *res)
{
    json_object *root = NULL;
    int rc;

    if (!r->o->stream) {
        if ((rc = tnd_json_parse(&root, res->body, res->len)) == 0)
            rc = take_object(r, root, false);
        json_object_put(root);
        if (rc < 0 && !strstr(tnd_error_last(), r->o->url))
            tnd_error_prefix("bad answer from %s", r->o->url);
        return rc;
    }
    if ((rc = tnd_stream_finish(r->lines, on_line, r)) != 0)
        return rc;
    if (!r->done) {
        tnd_error_set("the stream from %s ended before the final "
                      "\"done\": true object after %zu bytes",
                      r->o->url, tnd_stream_bytes(r->lines));
        return TND_ERETRY;
    }
    return 0;
}

static int ollama_complete(void *state, tnd_llm_answer *out,
                           const tnd_llm_call *call, long *retry_after_ms)
{
    ollama *o = state;
    tnd_http_request req;
    tnd_http_response res = {0};
    reading r;
    size_t len = 0;
    char *body = build_request(o, call->prompt, &len);
    int error;

    *retry_after_ms = -1;
    memset(&r, 0, sizeof(r));
    r.o = o;
    r.call = call;
    r.lines = tnd_stream_new(TND_STREAM_NDJSON, TND_STREAM_MAX_EVENT);
    tnd_buf_init(&r.text, TND_OLLAMA_MAX_ANSWER);
    tnd_endpoint_request(&req, o, body, len, call, TND_OLLAMA_MAX_RESPONSE,
                         on_chunk, &r);
    error = tnd_http_post(&res, o->http, &req);
    if (r.error) {
        error = r.error; /* on_chunk set the error */
    } else if (error == TND_ERETRY && tnd_stream_bytes(r.lines) > 0 &&
               !r.done) {
        char *why = tnd_xstrdup(tnd_error_last());

        tnd_error_set("the stream from %s ended before the final \"done\": "
                      "true object after %zu bytes (%s)",
                      o->url, tnd_stream_bytes(r.lines), why);
        free(why);
    } else if (error == 0 && res.status != 200) {
        error = tnd_endpoint_status_error(o, &res, retry_after_ms);
    } else if (error == 0) {
        error = finish_reading(&r, &res);
    }
    if (error == 0)
        tnd_endpoint_answer(o, out, &r.text, r.in_tokens, r.out_tokens,
                            r.length_hit);
    tnd_buf_free(&r.text);
    tnd_stream_destroy(&r.lines);
    tnd_http_response_clear(&res);
    free(body);
    return error > 0 ? -1 : error;
}

const tnd_llm_backend tnd_ollama_backend = {
    .provider = TND_PROVIDER_OLLAMA,
    .base_url = "http://localhost:11434",
    .key_env = "",
    .open = ollama_open,
    .complete = ollama_complete,
    .close = tnd_endpoint_free,
};
