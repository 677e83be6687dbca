/* The Anthropic Messages backend (see anthropic.h).
 *
 * One attempt is one POST. Streaming answers go through a tnd_stream SSE
 * parser straight from libcurl's chunks; the text is kept under
 * TND_ANTHROPIC_MAX_ANSWER and the raw events are not kept at all. */
#include "agents/anthropic.h"

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
typedef tnd_endpoint anthropic;

/* One attempt's reading of the answer. */
typedef struct reading {
    const anthropic *a;
    const tnd_llm_call *call;
    tnd_stream *sse;
    tnd_buf text;
    tnd_buf raw; /* a 200 body that turned out not to be a stream */
    enum { UNKNOWN, EVENTS, RAW } mode;
    long in_tokens, out_tokens;
    bool stopped;       /* message_stop came */
    bool finishing;     /* the body ended; an event may be cut short */
    int max_tokens_hit; /* TND_LLM_CUT at max_tokens; TND_LLM_FILTERED
                           on a refusal */
    int error;          /* why the chunk callback stopped the transfer */
} reading;

static void *anthropic_open(const tnd_llm_config *cfg)
{
    static const char *const own[] = {
        "content-type: application/json",
        "anthropic-version: " TND_ANTHROPIC_VERSION, NULL};
    char *not_found = tnd_xasprintf(
        "check the model name '%s' and the base URL (Anthropic's base has "
        "no /v1: tandem adds /v1/messages, e.g. https://api.anthropic.com)",
        cfg->model);
    anthropic *a =
        tnd_endpoint_new(cfg, "/v1/messages", own, "x-api-key: ", not_found);

    free(not_found);
    if (a && a->max_tokens <= 0)
        a->max_tokens = 4096; /* the API requires one */
    return a;
}

static char *build_request(const anthropic *a, const tnd_prompt *p, size_t *len)
{
    /* the system prompt is a key of its own, not a message */
    json_object *req = tnd_endpoint_body(a, p, false);
    char *s;

    json_object_object_add(req, "max_tokens",
                           json_object_new_int(a->max_tokens));
    if (p->system && *p->system)
        json_object_object_add(req, "system",
                               json_object_new_string(p->system));
    if (a->temperature >= 0)
        json_object_object_add(req, "temperature",
                               json_object_new_double(a->temperature));
    s = tnd_json_dump(req, len);
    json_object_put(req);
    return s;
}

/* Add text to the answer, telling the delta callback when streaming. */
static int add_text(reading *r, const char *text, bool streamed)
{
    size_t n = strlen(text);

    if (tnd_buf_append(&r->text, text, n) < 0)
        return tnd_error_set("the answer from %s is longer than %d bytes",
                             r->a->url, TND_ANTHROPIC_MAX_ANSWER);
    if (streamed && n > 0 && r->call->delta)
        r->call->delta(text, n, r->call->delta_payload);
    return 0;
}

/* usage: input tokens (with the cached ones, which are still prompt)
 * and output tokens; either may be missing. */
/* How a message ended, from its stop_reason: at max_tokens, refused (its
 * text is not the answer asked for), or whole. */
static int stop_of(const char *stop)
{
    return !stop                             ? TND_LLM_DONE
           : strcmp(stop, "max_tokens") == 0 ? TND_LLM_CUT
           : strcmp(stop, "refusal") == 0    ? TND_LLM_FILTERED
                                             : TND_LLM_DONE;
}

static int read_usage(reading *r, json_object *usage)
{
    long in = -1, out = -1, cache_write = 0, cache_read = 0;

    if (!usage)
        return 0;
    if (tnd_json_get_int(&in, usage, "input_tokens", 0, 100000000,
                         TND_JSON_OPTIONAL) < 0 ||
        tnd_json_get_int(&out, usage, "output_tokens", 0, 100000000,
                         TND_JSON_OPTIONAL) < 0 ||
        tnd_json_get_int(&cache_write, usage, "cache_creation_input_tokens", 0,
                         100000000, TND_JSON_OPTIONAL) < 0 ||
        tnd_json_get_int(&cache_read, usage, "cache_read_input_tokens", 0,
                         100000000, TND_JSON_OPTIONAL) < 0)
        return -1;
    if (in >= 0 && in + cache_write + cache_read > 0)
        r->in_tokens = in + cache_write + cache_read;
    if (out >= 0)
        r->out_tokens = out;
    return 0;
}

/* An "error" object, in a stream event or a 200 body. Sets the error;
 * returns TND_ERETRY when the server failed or was busy, else -1. */
static int api_error(const reading *r, json_object *err)
{
    char *type = NULL, *msg = NULL, *shown;
    int error;

    if (err && json_object_is_type(err, json_type_object)) {
        tnd_json_get_str(&type, err, "type", 200, TND_JSON_OPTIONAL);
        tnd_json_get_str(&msg, err, "message", 4096, TND_JSON_OPTIONAL);
    }
    shown = tnd_log_printable(msg ? msg : "", 300);
    error = type && (strcmp(type, "overloaded_error") == 0 ||
                     strcmp(type, "api_error") == 0 ||
                     strcmp(type, "rate_limit_error") == 0 ||
                     strcmp(type, "timeout_error") == 0)
                ? TND_ERETRY
                : -1;
    tnd_error_set("%s reported %s%s%s", r->a->url, type ? type : "an error",
                  *shown ? ": " : "", shown);
    free(type);
    free(msg);
    free(shown);
    return error;
}

static int on_delta(reading *r, json_object *ev)
{
    json_object *delta = NULL;
    char *type = NULL, *text = NULL;
    int error = -1;

    if (tnd_json_get_object(&delta, ev, "delta", TND_JSON_REQUIRED) < 0 ||
        tnd_json_get_str(&type, delta, "type", 200, TND_JSON_OPTIONAL) < 0)
        goto out;
    /* thinking, signatures and tool input are not the answer */
    if (!type || strcmp(type, "text_delta") != 0) {
        error = 0;
        goto out;
    }
    if (tnd_json_get_str(&text, delta, "text", TND_ANTHROPIC_MAX_ANSWER,
                         TND_JSON_REQUIRED | TND_JSON_TEXT) < 0)
        goto out;
    error = add_text(r, text, true);
out:
    free(type);
    free(text);
    return error;
}

static int take_event(reading *r, const char *type, json_object *ev)
{
    json_object *o = NULL, *usage = NULL;
    char *stop = NULL;
    int error = 0;

    if (strcmp(type, "message_start") == 0) {
        if (tnd_json_get_object(&o, ev, "message", TND_JSON_REQUIRED) < 0 ||
            tnd_json_get_object(&usage, o, "usage", TND_JSON_OPTIONAL) < 0 ||
            read_usage(r, usage) < 0)
            error = -1;
    } else if (strcmp(type, "content_block_delta") == 0) {
        error = on_delta(r, ev);
    } else if (strcmp(type, "message_delta") == 0) {
        if (tnd_json_get_object(&usage, ev, "usage", TND_JSON_OPTIONAL) < 0 ||
            read_usage(r, usage) < 0 ||
            tnd_json_get_object(&o, ev, "delta", TND_JSON_OPTIONAL) < 0 ||
            (o && tnd_json_get_str(&stop, o, "stop_reason", 200,
                                   TND_JSON_OPTIONAL) < 0))
            error = -1;
        if (!r->max_tokens_hit)
            r->max_tokens_hit = stop_of(stop);
    } else if (strcmp(type, "message_stop") == 0) {
        r->stopped = true;
    } else if (strcmp(type, "error") == 0) {
        json_object_object_get_ex(ev, "error", &o);
        return api_error(r, o);
    }
    /* ping, content_block_start/stop and new event types: nothing */
    free(stop);
    if (error < 0 && !strstr(tnd_error_last(), r->a->url))
        tnd_error_prefix("bad %s event from %s", type, r->a->url);
    return error;
}

static int on_event(const char *name, const char *data, size_t len,
                    void *payload)
{
    reading *r = payload;
    json_object *ev = NULL;
    char *type = NULL;
    int error;

    if (r->stopped || strcmp(name, "ping") == 0)
        return 0;
    if (tnd_json_parse(&ev, data, len) < 0) {
        if (r->finishing)
            return 0; /* cut off mid-event: a truncated stream */
        tnd_error_prefix("bad event from %s", r->a->url);
        return -1;
    }
    if (strcmp(name, "message") != 0) {
        error = take_event(r, name, ev);
    } else if (tnd_json_get_str(&type, ev, "type", 200, TND_JSON_REQUIRED) <
               0) {
        tnd_error_prefix("bad event from %s", r->a->url);
        error = -1;
    } else {
        error = take_event(r, type, ev);
    }
    free(type);
    json_object_put(ev);
    return error;
}

static bool looks_like_events(char c)
{
    /* an SSE stream starts with a field name or a ':' comment */
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == ':';
}

static int on_chunk(const char *data, size_t len, void *payload)
{
    reading *r = payload;
    int rc;

    for (size_t i = 0; r->mode == UNKNOWN && i < len; i++)
        if (data[i] != ' ' && data[i] != '\t' && data[i] != '\r' &&
            data[i] != '\n')
            r->mode = looks_like_events(data[i]) ? EVENTS : RAW;
    if (r->mode == RAW) {
        if (tnd_buf_append(&r->raw, data, len) == 0)
            return 0;
        tnd_error_set("POST %s: the response is larger than %d bytes",
                      r->a->url, TND_ANTHROPIC_MAX_RESPONSE);
        r->error = -1;
        return 1;
    }
    rc = tnd_stream_feed(r->sse, data, len, on_event, r);
    if (rc == 0)
        return r->stopped ? TND_HTTP_CHUNK_END : 0;
    if (rc == -1 && !strstr(tnd_error_last(), r->a->url))
        tnd_error_prefix("the stream from %s", r->a->url);
    r->error = rc;
    return 1;
}

/* A whole JSON message: content[] text blocks and usage. */
static int parse_message(reading *r, const char *body, size_t len)
{
    json_object *root = NULL, *content = NULL, *usage = NULL, *err = NULL;
    char *stop = NULL;
    int error = -1;

    if (tnd_json_parse(&root, body, len) < 0)
        goto out;
    if (json_object_is_type(root, json_type_object) &&
        json_object_object_get_ex(root, "error", &err)) {
        error = api_error(r, err);
        json_object_put(root);
        return error;
    }
    if (tnd_json_get_array(&content, root, "content", 1000, TND_JSON_REQUIRED) <
            0 ||
        tnd_json_get_object(&usage, root, "usage", TND_JSON_OPTIONAL) < 0 ||
        read_usage(r, usage) < 0 ||
        tnd_json_get_str(&stop, root, "stop_reason", 200, TND_JSON_OPTIONAL) <
            0)
        goto out;
    r->max_tokens_hit = stop_of(stop);
    for (size_t i = 0; i < json_object_array_length(content); i++) {
        json_object *block = json_object_array_get_idx(content, i);
        char *type = NULL, *text = NULL;
        int rc = 0;

        if (!json_object_is_type(block, json_type_object)) {
            tnd_error_set("content[%zu] must be an object", i);
            goto out;
        }
        if (tnd_json_get_str(&type, block, "type", 200, TND_JSON_REQUIRED) <
                0 ||
            (strcmp(type, "text") == 0 &&
             (tnd_json_get_str(&text, block, "text", TND_ANTHROPIC_MAX_ANSWER,
                               TND_JSON_REQUIRED | TND_JSON_TEXT) < 0 ||
              add_text(r, text, false) < 0)))
            rc = -1;
        free(type);
        free(text);
        if (rc < 0)
            goto out;
    }
    error = 0;
out:
    if (error < 0 && !strstr(tnd_error_last(), r->a->url))
        tnd_error_prefix("bad answer from %s", r->a->url);
    free(stop);
    json_object_put(root);
    return error;
}

/* The transfer ended with a 200: make sense of what came. */
static int finish_reading(reading *r, const tnd_http_response *res)
{
    int rc;

    if (!r->a->stream)
        return parse_message(r, res->body, res->len);
    if (r->mode == RAW)
        return parse_message(r, r->raw.data, r->raw.len);
    r->finishing = true;
    if ((rc = tnd_stream_finish(r->sse, on_event, r)) != 0)
        return rc;
    if (!r->stopped) {
        tnd_error_set("the stream from %s ended before message_stop after "
                      "%zu bytes",
                      r->a->url, tnd_stream_bytes(r->sse));
        return TND_ERETRY;
    }
    return 0;
}

static int anthropic_complete(void *state, tnd_llm_answer *out,
                              const tnd_llm_call *call, long *retry_after_ms)
{
    anthropic *a = state;
    tnd_http_request req;
    tnd_http_response res = {0};
    reading r;
    size_t len = 0;
    char *body = build_request(a, call->prompt, &len);
    int error;

    *retry_after_ms = -1;
    memset(&r, 0, sizeof(r));
    r.a = a;
    r.call = call;
    r.sse = tnd_stream_new(TND_STREAM_SSE, TND_STREAM_MAX_EVENT);
    tnd_buf_init(&r.text, TND_ANTHROPIC_MAX_ANSWER);
    tnd_buf_init(&r.raw, TND_ANTHROPIC_MAX_RESPONSE);
    tnd_endpoint_request(&req, a, body, len, call, TND_ANTHROPIC_MAX_RESPONSE,
                         on_chunk, &r);
    error = tnd_http_post(&res, a->http, &req);
    if (r.error) {
        error = r.error; /* on_chunk set the error */
    } else if (error == TND_ERETRY && r.mode == EVENTS && !r.stopped) {
        char *why = tnd_xstrdup(tnd_error_last());

        tnd_error_set("the stream from %s ended before message_stop after "
                      "%zu bytes (%s)",
                      a->url, tnd_stream_bytes(r.sse), why);
        free(why);
    } else if (error == 0 && res.status != 200) {
        error = tnd_endpoint_status_error(a, &res, retry_after_ms);
    } else if (error == 0) {
        error = finish_reading(&r, &res);
    }
    if (error == 0)
        tnd_endpoint_answer(a, out, &r.text, r.in_tokens, r.out_tokens,
                            r.max_tokens_hit);
    tnd_buf_free(&r.text);
    tnd_buf_free(&r.raw);
    tnd_stream_destroy(&r.sse);
    tnd_http_response_clear(&res);
    free(body);
    return error > 0 ? -1 : error;
}

const tnd_llm_backend tnd_anthropic_backend = {
    .provider = TND_PROVIDER_ANTHROPIC,
    .base_url = "https://api.anthropic.com",
    .key_env = "ANTHROPIC_API_KEY",
    .open = anthropic_open,
    .complete = anthropic_complete,
    .close = tnd_endpoint_free,
};
