/* The OpenAI Chat Completions backend (see openai.h).
 *
 * Two ways to read an answer: one JSON body (stream off), or Server-Sent
 * Events taken apart as libcurl hands them over (stream on). In the
 * streaming case a 2xx body's first bytes decide how it is read: some
 * OpenAI-compatible servers ignore "stream" and send one JSON object.
 * (An error status's body is kept whole by http.c.) */
#include "agents/openai.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "agents/apierror.h"
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
typedef tnd_endpoint openai;

/* How a streamed response's body turned out to be shaped. */
typedef enum body_mode {
    MODE_UNKNOWN, /* too few bytes yet to tell */
    MODE_SSE,     /* Server-Sent Events */
    MODE_PLAIN,   /* one JSON body: an error, or a server that ignored
                     "stream" */
} body_mode;

/* What a streaming attempt has received so far. */
typedef struct receiver {
    const openai *o;
    const tnd_llm_call *call;
    body_mode mode;
    tnd_buf body; /* MODE_UNKNOWN: the first bytes; MODE_PLAIN: all */
    tnd_stream *sse;
    tnd_buf answer; /* the delta texts so far */
    size_t total;   /* bytes received */
    bool done;      /* data: [DONE] came */
    int cut;        /* finish_reason "length" (TND_LLM_CUT), or
                       "content_filter" (TND_LLM_FILTERED) */
    long prompt_tokens;
    long completion_tokens;
    int error; /* why the receiver stopped the transfer; 0 */
} receiver;

static void *openai_open(const tnd_llm_config *cfg)
{
    static const char *const plain[] = {"Content-Type: application/json", NULL};
    static const char *const streamed[] = {"Content-Type: application/json",
                                           "Accept: text/event-stream", NULL};
    char *not_found = tnd_xasprintf("check the model name '%s' and the base "
                                    "URL (OpenAI-compatible bases end in /v1)",
                                    cfg->model);
    openai *o = tnd_endpoint_new(cfg, "/chat/completions",
                                 cfg->stream ? streamed : plain,
                                 "Authorization: Bearer ", not_found);

    free(not_found);
    return o;
}

static char *build_request(const openai *o, const tnd_prompt *p, size_t *len)
{
    json_object *req = tnd_endpoint_body(o, p, true);
    char *s;

    if (o->temperature >= 0)
        json_object_object_add(req, "temperature",
                               json_object_new_double(o->temperature));
    if (o->max_tokens > 0)
        json_object_object_add(req, "max_tokens",
                               json_object_new_int(o->max_tokens));
    if (o->stream) {
        json_object *opts = json_object_new_object();
        json_object_object_add(opts, "include_usage",
                               json_object_new_boolean(1));
        json_object_object_add(req, "stream_options", opts);
    }
    s = tnd_json_dump(req, len);
    json_object_put(req);
    return s;
}

static int read_usage(tnd_llm_answer *out, json_object *root)
{
    json_object *usage = NULL;

    if (tnd_json_get_object(&usage, root, "usage", TND_JSON_OPTIONAL) < 0)
        return -1;
    if (usage &&
        (tnd_json_get_int(&out->usage.prompt_tokens, usage, "prompt_tokens", 0,
                          100000000, TND_JSON_OPTIONAL) < 0 ||
         tnd_json_get_int(&out->usage.completion_tokens, usage,
                          "completion_tokens", 0, 100000000,
                          TND_JSON_OPTIONAL) < 0))
        return -1;
    return 0;
}

/* How a choice ended, from its finish_reason (null or missing in all but
 * a stream's last chunk): at max_tokens ("length"), by the content filter
 * ("content_filter": applied as a whole answer, one of two edits was
 * approved as the change), or whole. */
static int cut_short(json_object *choice)
{
    json_object *why = tnd_json_field(choice, "finish_reason");
    const char *s = json_object_is_type(why, json_type_string)
                        ? json_object_get_string(why)
                        : "";

    return strcmp(s, "length") == 0           ? TND_LLM_CUT
           : strcmp(s, "content_filter") == 0 ? TND_LLM_FILTERED
                                              : TND_LLM_DONE;
}

/* A whole (not streamed) answer. */
static int parse_answer(tnd_llm_answer *out, const openai *o, const char *body,
                        size_t len)
{
    json_object *root = NULL, *choices = NULL, *choice, *msg = NULL;
    tnd_llm_answer got;
    tnd_buf text;
    int error = -1;

    memset(&got, 0, sizeof(got));
    if (tnd_json_parse(&root, body, len) < 0 ||
        tnd_json_get_array(&choices, root, "choices", 1000, TND_JSON_REQUIRED) <
            0)
        goto out;
    if (json_object_array_length(choices) == 0) {
        tnd_error_set("the answer has no choices");
        goto out;
    }
    choice = json_object_array_get_idx(choices, 0);
    if (tnd_json_get_object(&msg, choice, "message", TND_JSON_REQUIRED) < 0 ||
        tnd_json_get_str(&got.text, msg, "content", TND_OPENAI_MAX_ANSWER,
                         TND_JSON_REQUIRED | TND_JSON_TEXT) < 0 ||
        read_usage(&got, root) < 0)
        goto out;
    tnd_buf_init(&text, TND_BUF_NOCAP);
    tnd_buf_puts(&text, got.text);
    tnd_endpoint_answer(o, out, &text, got.usage.prompt_tokens,
                        got.usage.completion_tokens, cut_short(choice));
    tnd_buf_free(&text);
    error = 0;
out:
    if (error < 0)
        tnd_error_prefix("bad answer from %s", o->url);
    tnd_llm_answer_clear(&got);
    json_object_put(root);
    return error;
}

/* One attempt without streaming: the whole body, then the answer. */
static int complete_plain(openai *o, tnd_llm_answer *out, tnd_http_request *req,
                          long *retry_after_ms)
{
    tnd_http_response res = {0};
    int error;

    error = tnd_http_post(&res, o->http, req);
    if (error == 0 && (res.status < 200 || res.status > 299))
        error = tnd_endpoint_status_error(o, &res, retry_after_ms);
    else if (error == 0)
        error = parse_answer(out, o, res.body, res.len);
    tnd_http_response_clear(&res);
    return error;
}

/* An error event in the stream (data holds {"error": ...}): the
 * server's message, retried when the server says the fault was its own. */
static int stream_error(receiver *r, json_object *err, const char *data,
                        size_t len)
{
    char *msg = tnd_apierror_message(data, len);
    char *type = NULL, *code = NULL;
    int error = -1;

    if (json_object_is_type(err, json_type_object)) {
        tnd_json_get_str(&type, err, "type", 200, TND_JSON_OPTIONAL);
        if (json_object_is_type(json_object_object_get(err, "code"),
                                json_type_string))
            tnd_json_get_str(&code, err, "code", 200, TND_JSON_OPTIONAL);
    }
    if ((type && (strcmp(type, "server_error") == 0 ||
                  strstr(type, "overloaded") || strstr(type, "rate_limit"))) ||
        (code && strstr(code, "rate_limit")))
        error = TND_ERETRY;
    tnd_error_set("%s sent an error in the stream after %zu bytes: %s",
                  r->o->url, r->total, *msg ? msg : "(no message)");
    free(msg);
    free(type);
    free(code);
    return error;
}

static int add_text(receiver *r, const char *text, size_t len)
{
    if (len == 0)
        return 0;
    if (tnd_buf_append(&r->answer, text, len) < 0)
        return tnd_error_set("the answer from %s is longer than %d bytes; "
                             "lower llm.max_tokens",
                             r->o->url, TND_OPENAI_MAX_ANSWER);
    if (r->call->delta)
        r->call->delta(text, len, r->call->delta_payload);
    return 0;
}

/* One SSE event: a chat.completion.chunk, an error, or [DONE]. */
static int on_event(const char *name, const char *data, size_t len,
                    void *payload)
{
    receiver *r = payload;
    json_object *root = NULL, *err = NULL, *choices = NULL, *delta = NULL;
    json_object *choice = NULL, *content = NULL, *usage = NULL;
    int error = 0;

    (void)name;
    if (r->done || len == 0)
        return 0; /* nothing counts after [DONE] */
    if (len == 6 && memcmp(data, "[DONE]", 6) == 0) {
        r->done = true;
        return 0;
    }
    if (tnd_json_parse(&root, data, len) < 0) {
        tnd_error_prefix("bad event in the stream from %s", r->o->url);
        return r->error = -1;
    }
    if (json_object_object_get_ex(root, "error", &err) &&
        !json_object_is_type(err, json_type_null)) {
        error = stream_error(r, err, data, len);
        goto out;
    }
    if (json_object_object_get_ex(root, "choices", &choices) &&
        json_object_is_type(choices, json_type_array) &&
        json_object_array_length(choices) > 0)
        choice = json_object_array_get_idx(choices, 0);
    if (!r->cut)
        r->cut = cut_short(choice);
    if (choice && json_object_object_get_ex(choice, "delta", &delta) &&
        json_object_object_get_ex(delta, "content", &content) &&
        json_object_is_type(content, json_type_string))
        error = add_text(r, json_object_get_string(content),
                         (size_t)json_object_get_string_len(content));
    if (error == 0 && json_object_object_get_ex(root, "usage", &usage) &&
        json_object_is_type(usage, json_type_object)) {
        tnd_llm_answer u = {0};
        if ((error = read_usage(&u, root)) < 0)
            tnd_error_prefix("bad usage in the stream from %s", r->o->url);
        r->prompt_tokens = u.usage.prompt_tokens;
        r->completion_tokens = u.usage.completion_tokens;
    }
out:
    json_object_put(root);
    return r->error = error;
}

/* Feed the SSE parser; its own errors (a line over the cap) get the URL,
 * on_event's already say everything. */
static int feed(receiver *r, const char *data, size_t len)
{
    int rc = tnd_stream_feed(r->sse, data, len, on_event, r);

    if (rc != 0 && r->error == 0)
        tnd_error_prefix("the stream from %s", r->o->url);
    return r->error = rc;
}

/* Enough of the body has come to tell events from one JSON object. An
 * empty body counts as a stream with no events (so: truncated). */
static void decide(receiver *r, bool at_end)
{
    static const char *const fields[] = {"data:", ":",
                                         "event:", "id:", "retry:"};
    const char *s = tnd_buf_str(&r->body);
    size_t skip = strspn(s, " \t\r\n"), left = r->body.len - skip;

    if (!at_end && left < 6 && !memchr(s + skip, '\n', left))
        return;
    r->mode = left == 0 ? MODE_SSE : MODE_PLAIN;
    for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
        if (tnd_str_starts_with(s + skip, fields[i]))
            r->mode = MODE_SSE;
    if (r->mode == MODE_SSE) {
        r->sse = tnd_stream_new(TND_STREAM_SSE, TND_OPENAI_MAX_RESPONSE);
        feed(r, s + skip, left);
        tnd_buf_free(&r->body);
    }
}

/* libcurl's bytes as they come. Non-zero stops the transfer. */
static int on_chunk(const char *data, size_t len, void *payload)
{
    receiver *r = payload;

    r->total += len;
    if (r->total > TND_OPENAI_MAX_STREAM)
        return r->error = tnd_error_set("the stream from %s is longer than "
                                        "%d bytes",
                                        r->o->url, TND_OPENAI_MAX_STREAM);
    if (r->mode == MODE_SSE) {
        int rc = feed(r, data, len);
        return rc == 0 && r->done ? TND_HTTP_CHUNK_END : rc;
    }
    if (tnd_buf_append(&r->body, data, len) < 0)
        return r->error = tnd_error_set("the response from %s is larger "
                                        "than %d bytes",
                                        r->o->url, TND_OPENAI_MAX_RESPONSE);
    if (r->mode == MODE_UNKNOWN)
        decide(r, false);
    return r->error;
}

static int truncated(const receiver *r, const char *why)
{
    tnd_error_set("the stream from %s ended before [DONE] after %zu bytes%s%s",
                  r->o->url, r->total, why ? ": " : "", why ? why : "");
    return TND_ERETRY;
}

/* One attempt with streaming. */
static int complete_stream(openai *o, tnd_llm_answer *out,
                           tnd_http_request *req, const tnd_llm_call *call,
                           long *retry_after_ms)
{
    tnd_http_response res = {0};
    receiver r;
    int error;

    memset(&r, 0, sizeof(r));
    r.o = o;
    r.call = call;
    tnd_buf_init(&r.body, TND_OPENAI_MAX_RESPONSE);
    tnd_buf_init(&r.answer, TND_OPENAI_MAX_ANSWER);
    req->on_chunk = on_chunk;
    req->payload = &r;
    req->chunks_only = 1; /* an error status's body still lands in res */
    error = tnd_http_post(&res, o->http, req);
    if (r.error) {
        error = r.error; /* the receiver stopped it and said why */
    } else if (error < 0) {
        if (error == TND_ERETRY && r.mode == MODE_SSE && !r.done) {
            /* curl's reason, without the "POST URL: " we say anyway */
            char *said = tnd_xstrdup(tnd_error_last());
            const char *why = strstr(said, o->url);
            why = why && strncmp(why + strlen(o->url), ": ", 2) == 0
                      ? why + strlen(o->url) + 2
                      : said;
            error = truncated(&r, why);
            free(said);
        }
    } else if (res.status < 200 || res.status > 299) {
        error = tnd_endpoint_status_error(o, &res, retry_after_ms);
    } else {
        if (r.mode == MODE_UNKNOWN)
            decide(&r, true);
        if (r.mode == MODE_SSE && r.error == 0)
            r.error = tnd_stream_finish(r.sse, on_event, &r);
        if (r.error)
            error = r.error;
        else if (r.mode == MODE_PLAIN) {
            error = parse_answer(out, o, tnd_buf_str(&r.body), r.body.len);
            if (error == 0 && call->delta && out->text[0])
                call->delta(out->text, strlen(out->text), call->delta_payload);
        } else if (!r.done) {
            error = truncated(&r, NULL);
        } else {
            tnd_endpoint_answer(o, out, &r.answer, r.prompt_tokens,
                                r.completion_tokens, r.cut);
        }
    }
    tnd_stream_destroy(&r.sse);
    tnd_buf_free(&r.body);
    tnd_buf_free(&r.answer);
    tnd_http_response_clear(&res);
    return error;
}

static int openai_complete(void *state, tnd_llm_answer *out,
                           const tnd_llm_call *call, long *retry_after_ms)
{
    openai *o = state;
    tnd_http_request req;
    size_t len = 0;
    char *body = build_request(o, call->prompt, &len);
    int error;

    *retry_after_ms = -1;
    /* the receiver is complete_stream's, which sets it */
    tnd_endpoint_request(&req, o, body, len, call, TND_OPENAI_MAX_RESPONSE,
                         NULL, NULL);
    if (o->stream)
        error = complete_stream(o, out, &req, call, retry_after_ms);
    else
        error = complete_plain(o, out, &req, retry_after_ms);
    free(body);
    return error;
}

const tnd_llm_backend tnd_openai_backend = {
    .provider = TND_PROVIDER_OPENAI,
    .base_url = "https://api.openai.com/v1",
    .key_env = "OPENAI_API_KEY",
    .open = openai_open,
    .complete = openai_complete,
    .close = tnd_endpoint_free,
};
