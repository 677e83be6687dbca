/* Response bodies and stream events of the three chat APIs (see wire.h).
 * Field order and names follow the public API references, so a client
 * that parses fakellm's answers parses the real services' answers too. */
#include "tests/fakellm/wire.h"

#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/buf.h"
#include "common/clock.h"
#include "common/xalloc.h"

#define JSON_FLAGS (JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)

/* Ollama reports durations in nanoseconds; fixed, plausible values. */
#define OLLAMA_LOAD_NS   1000000LL
#define OLLAMA_PROMPT_NS 2000000LL
#define OLLAMA_EVAL_NS   3000000LL

/* before + obj as JSON + after; frees obj. Caller frees the result. */
static char *framed(size_t *len_out, const char *before, json_object *obj,
                    const char *after)
{
    size_t len = 0;
    const char *s = json_object_to_json_string_length(obj, JSON_FLAGS, &len);
    tnd_buf b;

    tnd_buf_init(&b, TND_BUF_NOCAP);
    tnd_buf_puts(&b, before);
    tnd_buf_append(&b, s, len);
    tnd_buf_puts(&b, after);
    json_object_put(obj);
    return tnd_buf_detach(&b, len_out);
}

static void put(json_object *o, const char *key, json_object *v)
{
    json_object_object_add(o, key, v);
}

static json_object *str(const char *s)
{
    return json_object_new_string(s);
}

static json_object *int64(long long n)
{
    return json_object_new_int64(n);
}

/* End of the piece of s that starts at pos: chunk bytes, stretched so a
 * UTF-8 sequence is never split between two events. */
static size_t piece_end(const char *s, size_t len, size_t pos, size_t chunk)
{
    size_t end = len - pos > chunk ? pos + chunk : len;

    while (end < len && ((unsigned char)s[end] & 0xc0) == 0x80)
        end++;
    return end;
}

static void push(fl_events *events, char *data, size_t len, int content)
{
    TND_GROW(events->items, events->alloc, events->count + 1);
    events->items[events->count].data = data;
    events->items[events->count].len = len;
    events->items[events->count].content = content;
    events->count++;
}

/* ---- OpenAI Chat Completions ---------------------------------------- */

static json_object *openai_head(const fl_answer *a, const char *object)
{
    json_object *o = json_object_new_object();

    put(o, "id", str("chatcmpl-fake"));
    put(o, "object", str(object));
    put(o, "created", int64((long long)time(NULL)));
    put(o, "model", str(a->model));
    return o;
}

static json_object *openai_usage(const fl_answer *a)
{
    json_object *u = json_object_new_object();

    put(u, "prompt_tokens", int64(a->prompt_tokens));
    put(u, "completion_tokens", int64(a->completion_tokens));
    put(u, "total_tokens", int64(a->prompt_tokens + a->completion_tokens));
    return u;
}

/* Why the answer ended: "length" when max_tokens cut it. */
static const char *openai_finish(const fl_answer *a)
{
    return a->filtered         ? "content_filter"
           : a->hit_max_tokens ? "length"
                               : "stop";
}

static char *openai_body(size_t *len_out, const fl_answer *a)
{
    json_object *o = openai_head(a, "chat.completion");
    json_object *choices = json_object_new_array();
    json_object *choice = json_object_new_object();
    json_object *msg = json_object_new_object();

    put(msg, "role", str("assistant"));
    put(msg, "content",
        json_object_new_string_len(a->content, (int)a->content_len));
    put(msg, "refusal", NULL);
    put(choice, "index", int64(0));
    put(choice, "message", msg);
    put(choice, "logprobs", NULL);
    put(choice, "finish_reason", str(openai_finish(a)));
    json_object_array_add(choices, choice);
    put(o, "choices", choices);
    if (a->usage)
        put(o, "usage", openai_usage(a));
    return framed(len_out, "", o, "");
}

/* One chat.completion.chunk event; takes ownership of delta. */
static void openai_chunk(fl_events *out, const fl_answer *a, json_object *delta,
                         const char *finish, int content)
{
    json_object *o = openai_head(a, "chat.completion.chunk");
    json_object *choices = json_object_new_array();
    json_object *choice = json_object_new_object();
    size_t len;
    char *text;

    put(choice, "index", int64(0));
    put(choice, "delta", delta);
    put(choice, "logprobs", NULL);
    put(choice, "finish_reason", finish ? str(finish) : NULL);
    json_object_array_add(choices, choice);
    put(o, "choices", choices);
    /* With include_usage every chunk has "usage": null but the last. */
    if (a->stream_usage && a->usage)
        put(o, "usage", NULL);
    text = framed(&len, "data: ", o, "\n\n");
    push(out, text, len, content);
}

static void openai_events(fl_events *out, const fl_answer *a)
{
    json_object *delta = json_object_new_object();
    size_t len;
    char *text;

    put(delta, "role", str("assistant"));
    put(delta, "content", str(""));
    openai_chunk(out, a, delta, NULL, 0);
    for (size_t pos = 0, end; pos < a->content_len; pos = end) {
        end = piece_end(a->content, a->content_len, pos, a->chunk_size);
        delta = json_object_new_object();
        put(delta, "content",
            json_object_new_string_len(a->content + pos, (int)(end - pos)));
        openai_chunk(out, a, delta, NULL, 1);
    }
    openai_chunk(out, a, json_object_new_object(), openai_finish(a), 0);
    if (a->stream_usage && a->usage) {
        json_object *o = openai_head(a, "chat.completion.chunk");

        put(o, "choices", json_object_new_array());
        put(o, "usage", openai_usage(a));
        text = framed(&len, "data: ", o, "\n\n");
        push(out, text, len, 0);
    }
    push(out, tnd_xstrdup("data: [DONE]\n\n"), strlen("data: [DONE]\n\n"), 0);
}

/* ---- Anthropic Messages --------------------------------------------- */

static json_object *anthropic_usage(long long in, long long out)
{
    json_object *u = json_object_new_object();

    put(u, "input_tokens", int64(in));
    put(u, "output_tokens", int64(out));
    return u;
}

static json_object *anthropic_message(const fl_answer *a, json_object *blocks,
                                      const char *stop, long long out_tokens)
{
    json_object *m = json_object_new_object();

    put(m, "id", str("msg_fake"));
    put(m, "type", str("message"));
    put(m, "role", str("assistant"));
    put(m, "model", str(a->model));
    put(m, "content", blocks);
    put(m, "stop_reason", stop ? str(stop) : NULL);
    put(m, "stop_sequence", NULL);
    put(m, "usage",
        anthropic_usage(a->usage ? a->prompt_tokens : 0,
                        a->usage ? out_tokens : 0));
    return m;
}

static json_object *text_block(const char *text, size_t len)
{
    json_object *b = json_object_new_object();

    put(b, "type", str("text"));
    put(b, "text", json_object_new_string_len(text, (int)len));
    return b;
}

/* Why the answer ended: "max_tokens" when that cut it. */
static const char *anthropic_stop(const fl_answer *a)
{
    return a->filtered         ? "refusal"
           : a->hit_max_tokens ? "max_tokens"
                               : "end_turn";
}

static char *anthropic_body(size_t *len_out, const fl_answer *a)
{
    json_object *blocks = json_object_new_array();

    json_object_array_add(blocks, text_block(a->content, a->content_len));
    return framed(
        len_out, "",
        anthropic_message(a, blocks, anthropic_stop(a), a->completion_tokens),
        "");
}

/* One "event: NAME" SSE event whose data is {"type": NAME, ...}. */
static json_object *sse_data(const char *type)
{
    json_object *o = json_object_new_object();

    put(o, "type", str(type));
    return o;
}

static void sse_push(fl_events *out, const char *type, json_object *data,
                     int content)
{
    char before[64];
    size_t len;
    char *text;

    snprintf(before, sizeof(before), "event: %s\ndata: ", type);
    text = framed(&len, before, data, "\n\n");
    push(out, text, len, content);
}

static void anthropic_events(fl_events *out, const fl_answer *a)
{
    json_object *o = sse_data("message_start"), *d;

    put(o, "message", anthropic_message(a, json_object_new_array(), NULL, 1));
    sse_push(out, "message_start", o, 0);

    o = sse_data("content_block_start");
    put(o, "index", int64(0));
    put(o, "content_block", text_block("", 0));
    sse_push(out, "content_block_start", o, 0);

    sse_push(out, "ping", sse_data("ping"), 0);

    for (size_t pos = 0, end; pos < a->content_len; pos = end) {
        end = piece_end(a->content, a->content_len, pos, a->chunk_size);
        o = sse_data("content_block_delta");
        d = json_object_new_object();
        put(d, "type", str("text_delta"));
        put(d, "text",
            json_object_new_string_len(a->content + pos, (int)(end - pos)));
        put(o, "index", int64(0));
        put(o, "delta", d);
        sse_push(out, "content_block_delta", o, 1);
    }

    o = sse_data("content_block_stop");
    put(o, "index", int64(0));
    sse_push(out, "content_block_stop", o, 0);

    o = sse_data("message_delta");
    d = json_object_new_object();
    put(d, "stop_reason", str(anthropic_stop(a)));
    put(d, "stop_sequence", NULL);
    put(o, "delta", d);
    d = json_object_new_object();
    put(d, "output_tokens", int64(a->usage ? a->completion_tokens : 0));
    put(o, "usage", d);
    sse_push(out, "message_delta", o, 0);

    sse_push(out, "message_stop", sse_data("message_stop"), 0);
}

/* ---- Ollama /api/chat ----------------------------------------------- */

static json_object *ollama_object(const fl_answer *a, const char *text,
                                  size_t len, int done)
{
    json_object *o = json_object_new_object();
    json_object *msg = json_object_new_object();
    char when[40];

    tnd_clock_iso8601(when, sizeof(when), tnd_wall_ms());
    put(msg, "role", str("assistant"));
    put(msg, "content", json_object_new_string_len(text, (int)len));
    put(o, "model", str(a->model));
    put(o, "created_at", str(when));
    put(o, "message", msg);
    put(o, "done", json_object_new_boolean(done));
    if (!done)
        return o;
    put(o, "done_reason", str(a->hit_max_tokens ? "length" : "stop"));
    put(o, "total_duration",
        int64(OLLAMA_LOAD_NS + OLLAMA_PROMPT_NS + OLLAMA_EVAL_NS));
    put(o, "load_duration", int64(OLLAMA_LOAD_NS));
    if (a->usage)
        put(o, "prompt_eval_count", int64(a->prompt_tokens));
    put(o, "prompt_eval_duration", int64(OLLAMA_PROMPT_NS));
    if (a->usage)
        put(o, "eval_count", int64(a->completion_tokens));
    put(o, "eval_duration", int64(OLLAMA_EVAL_NS));
    return o;
}

static void ollama_events(fl_events *out, const fl_answer *a)
{
    size_t len;
    char *text;

    for (size_t pos = 0, end; pos < a->content_len; pos = end) {
        end = piece_end(a->content, a->content_len, pos, a->chunk_size);
        text = framed(&len, "",
                      ollama_object(a, a->content + pos, end - pos, 0), "\n");
        push(out, text, len, 1);
    }
    text = framed(&len, "", ollama_object(a, "", 0, 1), "\n");
    push(out, text, len, 0);
}

/* ---- dispatch --------------------------------------------------------- */

char *fl_wire_body(size_t *len_out, const fl_answer *answer)
{
    switch (answer->api) {
    case FL_API_ANTHROPIC:
        return anthropic_body(len_out, answer);
    case FL_API_OLLAMA:
        return framed(
            len_out, "",
            ollama_object(answer, answer->content, answer->content_len, 1), "");
    case FL_API_OPENAI:
    default:
        return openai_body(len_out, answer);
    }
}

void fl_wire_events(fl_events *out, const fl_answer *answer)
{
    memset(out, 0, sizeof(*out));
    switch (answer->api) {
    case FL_API_ANTHROPIC:
        anthropic_events(out, answer);
        break;
    case FL_API_OLLAMA:
        ollama_events(out, answer);
        break;
    case FL_API_OPENAI:
    default:
        openai_events(out, answer);
        break;
    }
}

void fl_events_free(fl_events *events)
{
    if (!events)
        return;
    for (size_t i = 0; i < events->count; i++)
        free(events->items[i].data);
    free(events->items);
    memset(events, 0, sizeof(*events));
}

/* The error "type" (and OpenAI "code") the real services use for a
 * status, near enough for a client that branches on them. */
static void openai_kind(const char **type, const char **code, int status)
{
    *type = "invalid_request_error";
    *code = NULL;
    if (status == 401)
        *code = "invalid_api_key";
    else if (status == 429) {
        *type = "requests";
        *code = "rate_limit_exceeded";
    } else if (status >= 500)
        *type = "server_error";
}

static const char *anthropic_kind(int status)
{
    switch (status) {
    case 401:
        return "authentication_error";
    case 402:
        return "billing_error";
    case 403:
        return "permission_error";
    case 404:
        return "not_found_error";
    case 413:
        return "request_too_large";
    case 429:
        return "rate_limit_error";
    case 504:
        return "timeout_error";
    case 529:
        return "overloaded_error";
    default:
        return status >= 500 ? "api_error" : "invalid_request_error";
    }
}

char *fl_wire_error(size_t *len_out, fl_api api, int status,
                    const char *message)
{
    json_object *o = json_object_new_object(), *e;
    const char *type, *code;

    switch (api) {
    case FL_API_ANTHROPIC:
        e = json_object_new_object();
        put(e, "type", str(anthropic_kind(status)));
        put(e, "message", str(message));
        put(o, "type", str("error"));
        put(o, "error", e);
        break;
    case FL_API_OLLAMA:
        put(o, "error", str(message));
        break;
    case FL_API_OPENAI:
    default:
        openai_kind(&type, &code, status);
        e = json_object_new_object();
        put(e, "message", str(message));
        put(e, "type", str(type));
        put(e, "param", NULL);
        put(e, "code", code ? str(code) : NULL);
        put(o, "error", e);
        break;
    }
    return framed(len_out, "", o, "");
}

const char *fl_wire_stream_type(fl_api api)
{
    return api == FL_API_OLLAMA ? "application/x-ndjson" : "text/event-stream";
}
