/* fakellm's request handling: routing, steps, the log and the faults
 * (see serve.h). The lock covers only counting, step choice and the log
 * line; waiting (delay_ms, stall, slow clients) happens outside it, so one
 * stalled request never holds up another. */
#include "tests/fakellm/serve.h"

#include <json-c/json.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/clock.h"
#include "common/xalloc.h"
#include "tests/fakellm/wire.h"

#define JSON_FLAGS   (JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE)
#define JSON_TYPE    "application/json"
#define LINGER_MS    2000
#define DEFAULT_NAME "fake-model"

static const char models_json[] =
    "{\"object\":\"list\",\"data\":[{\"id\":\"fake-model\",\"object\":"
    "\"model\",\"owned_by\":\"fakellm\"}]}";
static const char tags_json[] =
    "{\"models\":[{\"name\":\"fake-model\",\"model\":\"fake-model\"}]}";
/* Not JSON, not UTF-8, not even text: NULs, 0xff and a stray HTML page. */
static const char garbage[] =
    "\xff\xfe<html>\x00\x01<body>502 Bad Gateway\xff\x00</body></html>"
    "\r\n\x00\xff\xff{\"not\": json\x80\xc0\xc1";

struct fl_server {
    pthread_mutex_t lock;
    fl_script *script; /* owned */
    FILE *log;         /* owned; NULL when not logging */
    long requests;     /* requests seen: the log's "n" */
    long served;       /* requests answered by a step */
    size_t step;       /* the step now serving */
    long used;         /* requests that step has served */
    long *taken;       /* per step with "when": requests it has served */
};

typedef enum route {
    ROUTE_OPENAI = FL_API_OPENAI,
    ROUTE_ANTHROPIC = FL_API_ANTHROPIC,
    ROUTE_OLLAMA = FL_API_OLLAMA,
    ROUTE_MODELS,
    ROUTE_TAGS,
    ROUTE_NONE,
} route;

/* What the chat request asked for. */
typedef struct ask {
    json_object *json; /* the parsed body; NULL when it is not JSON */
    const char *model;
    int stream;
    int stream_usage;
} ask;

fl_server *fl_server_new(fl_script *script, FILE *log)
{
    fl_server *self = tnd_xcalloc(1, sizeof(*self));

    pthread_mutex_init(&self->lock, NULL);
    self->script = script;
    self->log = log;
    self->taken = tnd_xcalloc(fl_script_count(script) + 1, sizeof(long));
    return self;
}

void fl_server_destroy(fl_server **self_p)
{
    if (!self_p || !*self_p)
        return;
    pthread_mutex_destroy(&(*self_p)->lock);
    fl_script_destroy(&(*self_p)->script);
    free((*self_p)->taken);
    if ((*self_p)->log)
        fclose((*self_p)->log);
    free(*self_p);
    *self_p = NULL;
}

static int ends_with(const char *s, size_t len, const char *suffix)
{
    size_t n = strlen(suffix);

    return len >= n && !memcmp(s + len - n, suffix, n);
}

static route route_of(const char *method, const char *target)
{
    size_t len = strcspn(target, "?#");
    int post = !strcmp(method, "POST"), get = !strcmp(method, "GET");

    if (post && ends_with(target, len, "/chat/completions"))
        return ROUTE_OPENAI;
    if (post && ends_with(target, len, "/messages"))
        return ROUTE_ANTHROPIC;
    if (post && len == 9 && !memcmp(target, "/api/chat", 9))
        return ROUTE_OLLAMA;
    if (get && ends_with(target, len, "/models"))
        return ROUTE_MODELS;
    if (get && len == 9 && !memcmp(target, "/api/tags", 9))
        return ROUTE_TAGS;
    return ROUTE_NONE;
}

static int is_chat(route r)
{
    return r == ROUTE_OPENAI || r == ROUTE_ANTHROPIC || r == ROUTE_OLLAMA;
}

/* The whole body as one JSON value, or NULL. */
static json_object *parse_json(const tnd_buf *body)
{
    const char *text = tnd_buf_str(body);
    json_tokener *tok;
    json_object *v;
    size_t end;

    if (body->len == 0 || body->len > 0x7ffffffe)
        return NULL;
    tok = json_tokener_new();
    json_tokener_set_flags(tok, JSON_TOKENER_VALIDATE_UTF8);
    /* len + 1 feeds the NUL too, which ends a trailing number. */
    v = json_tokener_parse_ex(tok, text, (int)body->len + 1);
    end = json_tokener_get_parse_end(tok);
    json_tokener_free(tok);
    for (; v && end < body->len; end++)
        if (!strchr(" \t\r\n", text[end]) || !text[end]) {
            json_object_put(v);
            v = NULL;
        }
    return v;
}

static void read_ask(ask *out, const fl_request *req, route r)
{
    json_object *v, *opts;

    memset(out, 0, sizeof(*out));
    out->model = DEFAULT_NAME;
    out->stream = r == ROUTE_OLLAMA; /* Ollama streams unless told not to */
    out->json = parse_json(&req->body);
    if (!json_object_is_type(out->json, json_type_object))
        return;
    if (json_object_object_get_ex(out->json, "model", &v) &&
        json_object_is_type(v, json_type_string))
        out->model = json_object_get_string(v);
    if (json_object_object_get_ex(out->json, "stream", &v) &&
        json_object_is_type(v, json_type_boolean))
        out->stream = json_object_get_boolean(v);
    if (json_object_object_get_ex(out->json, "stream_options", &opts) &&
        json_object_object_get_ex(opts, "include_usage", &v))
        out->stream_usage = json_object_get_boolean(v);
}

/* Length of the valid UTF-8 sequence at s, or 0 when it is not one. */
static size_t utf8_len(const unsigned char *s, size_t left)
{
    unsigned long cp, min;
    size_t n;

    if (s[0] < 0x80)
        return 1;
    if (s[0] >= 0xc2 && s[0] <= 0xdf)
        n = 2, min = 0x80, cp = s[0] & 0x1f;
    else if (s[0] >= 0xe0 && s[0] <= 0xef)
        n = 3, min = 0x800, cp = s[0] & 0x0f;
    else if (s[0] >= 0xf0 && s[0] <= 0xf4)
        n = 4, min = 0x10000, cp = s[0] & 0x07;
    else
        return 0;
    if (left < n)
        return 0;
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = cp << 6 | (s[i] & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return n;
}

/* A JSON string of bytes that may not be UTF-8: bad bytes become U+FFFD,
 * so the log stays one valid JSON object per line. */
static json_object *text_value(const char *s, size_t len)
{
    json_object *v;
    tnd_buf b;

    tnd_buf_init(&b, TND_BUF_NOCAP);
    for (size_t i = 0, n; i < len; i += n ? n : 1) {
        n = utf8_len((const unsigned char *)s + i, len - i);
        if (n)
            tnd_buf_append(&b, s + i, n);
        else
            tnd_buf_puts(&b, "\xef\xbf\xbd");
    }
    v = json_object_new_string_len(tnd_buf_str(&b), (int)b.len);
    tnd_buf_free(&b);
    return v;
}

static json_object *headers_value(const fl_request *req)
{
    json_object *h = json_object_new_object(), *old;

    for (size_t i = 0; i < req->nheaders; i++) {
        const fl_header *f = &req->headers[i];

        if (json_object_object_get_ex(h, f->name, &old)) {
            char *both =
                tnd_xasprintf("%s, %s", json_object_get_string(old), f->value);

            json_object_object_add(h, f->name, text_value(both, strlen(both)));
            free(both);
        } else {
            json_object_object_add(h, f->name,
                                   text_value(f->value, strlen(f->value)));
        }
    }
    return h;
}

/* Append the request's line to the log and flush it, so a test reading
 * the log after the response sees the request. Caller holds the lock. */
static void log_request(fl_server *self, long n, const fl_request *req,
                        const ask *q, long step, const char *error)
{
    json_object *o;

    if (!self->log)
        return;
    o = json_object_new_object();
    json_object_object_add(o, "n", json_object_new_int64(n));
    json_object_object_add(o, "method", json_object_new_string(req->method));
    json_object_object_add(o, "path",
                           text_value(req->target, strlen(req->target)));
    json_object_object_add(o, "headers", headers_value(req));
    if (!q)
        json_object_object_add(o, "body", NULL);
    else if (q->json)
        json_object_object_add(o, "body", json_object_get(q->json));
    else
        json_object_object_add(
            o, "body", text_value(tnd_buf_str(&req->body), req->body.len));
    json_object_object_add(o, "step",
                           step >= 0 ? json_object_new_int64(step) : NULL);
    json_object_object_add(o, "time_ms", json_object_new_int64(tnd_wall_ms()));
    if (error)
        json_object_object_add(o, "error", json_object_new_string(error));
    fputs(json_object_to_json_string_ext(o, JSON_FLAGS), self->log);
    fputc('\n', self->log);
    fflush(self->log);
    json_object_put(o);
}

static int contains_all(const tnd_buf *body, char *const *list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!memmem(tnd_buf_str(body), body->len, list[i], strlen(list[i])))
            return 0;
    return 1;
}

/* The index of the step that serves this request, or -1 when the script
 * is used up: the first step with "when" whose strings the body holds and
 * that has uses left, else the next step in order (steps with "when" are
 * not in it). Caller holds the lock. */
static long take_step(fl_server *self, const tnd_buf *body)
{
    size_t count = fl_script_count(self->script);
    const fl_step *s;

    for (size_t i = 0; i < count; i++) {
        s = fl_script_step(self->script, i);
        if (s->nwhen && self->taken[i] < s->repeat &&
            contains_all(body, s->when, s->nwhen)) {
            self->taken[i]++;
            self->served++;
            return (long)i;
        }
    }
    while (self->step < count &&
           ((s = fl_script_step(self->script, self->step))->nwhen ||
            self->used >= s->repeat)) {
        self->step++;
        self->used = 0;
    }
    if (self->step >= count)
        return -1;
    self->used++;
    self->served++;
    return (long)self->step;
}

static const char *missing_expect(const fl_step *step, const tnd_buf *body)
{
    for (size_t i = 0; i < step->nexpect; i++)
        if (!contains_all(body, &step->expect[i], 1))
            return step->expect[i];
    return NULL;
}

/* Send a whole body (half of it when the step truncates). 1 when the
 * connection stays open, 0 when it closes, negative on failure. */
static int send_fixed(fl_conn *conn, const fl_request *req, int status,
                      const char *data, size_t len, const fl_step *step)
{
    int truncate = step && step->truncate;
    fl_head head = {
        .status = status,
        .content_type = JSON_TYPE,
        .content_length = (long long)len,
        .keep_alive = req->keep_alive && !truncate && !(step && step->close),
        .extra = step ? step->headers : NULL,
        .nextra = step ? step->nheaders : 0,
    };
    int error;

    if ((error = fl_conn_send_head(conn, &head)) < 0 ||
        (error = fl_conn_send(conn, data, truncate ? len / 2 : len)) < 0)
        return error;
    return head.keep_alive;
}

static int send_error(fl_conn *conn, const fl_request *req, fl_api api,
                      int status, const char *message, const fl_step *step)
{
    size_t len;
    char *body = fl_wire_error(&len, api, status, message);
    int result = send_fixed(conn, req, status, body, len, step);

    free(body);
    return result;
}

/* Byte pos of an oversize body of total bytes: {"pad":"xxx...x"}. */
static char oversize_byte(long long pos, long long total)
{
    static const char shape[] = "{\"pad\":\"\"}";

    if (pos < 8 || total < 10)
        return shape[pos];
    if (pos >= total - 2)
        return shape[8 + pos - (total - 2)];
    return 'x';
}

/* The oversize body, made a block at a time so a gigabyte costs 64 KiB
 * of memory. Chunked, with no Content-Length to warn the client: its cap
 * has to hold while it reads, which is the case that matters. */
static int send_oversize(fl_conn *conn, const fl_request *req,
                         const fl_step *step)
{
    int chunked = req->minor >= 1;
    long long total = step->oversize;
    long long limit = step->truncate ? total / 2 : total;
    fl_head head = {
        .status = 200,
        .content_type = JSON_TYPE,
        .content_length = chunked ? FL_HTTP_CHUNKED : FL_HTTP_UNTIL_CLOSE,
        .keep_alive =
            chunked && req->keep_alive && !step->truncate && !step->close,
        .extra = step->headers,
        .nextra = step->nheaders,
    };
    char block[65536];
    int error;

    if ((error = fl_conn_send_head(conn, &head)) < 0)
        return error;
    for (long long off = 0, end; off < limit; off = end) {
        end = limit - off < (long long)sizeof(block)
                  ? limit
                  : off + (long long)sizeof(block);
        memset(block, 'x', (size_t)(end - off));
        for (long long p = off; p < end && p < 10; p++)
            block[p - off] = oversize_byte(p, total);
        for (long long p = total - 2 > off ? total - 2 : off; p < end; p++)
            block[p - off] = oversize_byte(p, total);
        if ((error = fl_conn_send_chunk(conn, chunked, block,
                                        (size_t)(end - off))) < 0)
            return error;
    }
    if (chunked && !step->truncate &&
        (error = fl_conn_send_last_chunk(conn)) < 0)
        return error;
    return head.keep_alive;
}

/* The answer as stream events; a truncated stream stops halfway, after
 * at least one content event, without any terminator. */
static int send_stream(fl_conn *conn, const fl_request *req,
                       const fl_step *step, const fl_answer *answer)
{
    int chunked = req->minor >= 1;
    fl_head head = {
        .status = 200,
        .content_type = fl_wire_stream_type(answer->api),
        .content_length = chunked ? FL_HTTP_CHUNKED : FL_HTTP_UNTIL_CLOSE,
        .keep_alive =
            chunked && req->keep_alive && !step->truncate && !step->close,
        .extra = step->headers,
        .nextra = step->nheaders,
    };
    fl_events events;
    size_t count;
    int error;

    fl_wire_events(&events, answer);
    count = events.count;
    if (step->truncate) {
        count /= 2;
        for (size_t i = 0; i < events.count; i++)
            if (events.items[i].content) {
                if (count <= i)
                    count = i + 1;
                break;
            }
    }
    error = fl_conn_send_head(conn, &head);
    for (size_t i = 0; error == 0 && i < count; i++) {
        if (i > 0)
            error = fl_conn_sleep(conn, step->chunk_delay_ms);
        if (error == 0)
            error = fl_conn_send_chunk(conn, chunked, events.items[i].data,
                                       events.items[i].len);
    }
    if (error == 0 && step->hold_open) {
        /* the end marker is sent, the body never ends */
        fl_events_free(&events);
        fl_conn_stall(conn);
        return 0;
    }
    if (error == 0 && chunked && !step->truncate)
        error = fl_conn_send_last_chunk(conn);
    fl_events_free(&events);
    return error < 0 ? error : head.keep_alive;
}

/* Answer a chat request with its step, faults first. */
static int play(fl_conn *conn, const fl_request *req, const fl_step *step,
                fl_api api, const ask *q)
{
    fl_answer answer = {
        .api = api,
        .model = q->model,
        .content = step->content,
        .content_len = step->content_len,
        .prompt_tokens = step->prompt_tokens,
        .completion_tokens = step->completion_tokens,
        .usage = !step->no_usage,
        .stream_usage = q->stream_usage,
        .chunk_size = step->chunk_size,
        .hit_max_tokens = step->hit_max_tokens,
        .filtered = step->filtered,
    };
    size_t len;
    char *body;
    int error;

    if ((error = fl_conn_sleep(conn, step->delay_ms)) < 0)
        return error;
    if (step->stall) {
        fl_conn_stall(conn);
        return 0;
    }
    if (step->garbage)
        return send_fixed(conn, req, 200, garbage, sizeof(garbage) - 1, step);
    if (step->oversize >= 0)
        return send_oversize(conn, req, step);
    if (step->body)
        return send_fixed(conn, req, step->status, step->body, step->body_len,
                          step);
    if (step->status != 200) {
        char msg[64];

        snprintf(msg, sizeof(msg), "fakellm: injected status %d", step->status);
        return send_error(conn, req, api, step->status, msg, step);
    }
    if (answer.prompt_tokens < 0)
        answer.prompt_tokens = (long long)(req->body.len / 4);
    if (answer.completion_tokens < 0)
        answer.completion_tokens = (long long)(step->content_len / 4);
    if (answer.completion_tokens < 1 && step->completion_tokens < 0)
        answer.completion_tokens = 1;
    if (q->stream)
        return send_stream(conn, req, step, &answer);
    body = fl_wire_body(&len, &answer);
    error = send_fixed(conn, req, 200, body, len, step);
    free(body);
    return error;
}

/* Handle one well-formed request: 1 keep the connection, 0 close it,
 * negative on failure. */
static int answer(fl_server *self, fl_conn *conn, const fl_request *req)
{
    route r = route_of(req->method, req->target);
    const fl_step *step = NULL;
    const char *missing = NULL;
    char *note = NULL;
    long n, index = -1;
    int result;
    ask q;

    read_ask(&q, req, r);
    pthread_mutex_lock(&self->lock);
    n = ++self->requests;
    if (is_chat(r) && (index = take_step(self, &req->body)) < 0)
        note = tnd_xasprintf("fakellm: script exhausted after %ld requests",
                             self->served);
    if (index >= 0) {
        step = fl_script_step(self->script, (size_t)index);
        if ((missing = missing_expect(step, &req->body)))
            note = tnd_xasprintf("fakellm: request body does not contain "
                                 "expected string \"%s\" (step %ld)",
                                 missing, index);
    }
    log_request(self, n, req, &q, index, note);
    pthread_mutex_unlock(&self->lock);
    if (note)
        fprintf(stderr, "%s\n", note);

    if (r == ROUTE_MODELS)
        result = send_fixed(conn, req, 200, models_json,
                            sizeof(models_json) - 1, NULL);
    else if (r == ROUTE_TAGS)
        result =
            send_fixed(conn, req, 200, tags_json, sizeof(tags_json) - 1, NULL);
    else if (r == ROUTE_NONE) {
        char *msg = tnd_xasprintf("fakellm: no route for %s %s", req->method,
                                  req->target);

        result = send_error(conn, req, FL_API_OPENAI, 404, msg, NULL);
        free(msg);
    } else if (!step)
        result = send_error(conn, req, FL_API_OPENAI, 500, note, NULL);
    else if (missing)
        result = send_error(conn, req, (fl_api)r, 400, note, NULL);
    else
        result = play(conn, req, step, (fl_api)r, &q);
    free(note);
    json_object_put(q.json);
    return result;
}

/* Answer a request we could not read (400, 413, 431) and close. */
static void refuse(fl_server *self, fl_conn *conn, const fl_request *req,
                   int why)
{
    int status = why == FL_HTTP_ETOOBIG ? 413
                 : why == FL_HTTP_EHEAD ? 431
                                        : 400;
    route r = req->method ? route_of(req->method, req->target) : ROUTE_NONE;
    char *msg = tnd_xasprintf("fakellm: %s", tnd_error_last());
    fl_head head = {.status = status, .content_type = JSON_TYPE};
    size_t len;
    char *body;

    fprintf(stderr, "fakellm: refused a request with %d: %s\n", status,
            tnd_error_last());
    if (why == FL_HTTP_ETOOBIG) {
        pthread_mutex_lock(&self->lock);
        log_request(self, ++self->requests, req, NULL, -1, msg);
        pthread_mutex_unlock(&self->lock);
    }
    body = fl_wire_error(&len, is_chat(r) ? (fl_api)r : FL_API_OPENAI, status,
                         msg);
    head.content_length = (long long)len;
    if (fl_conn_send_head(conn, &head) == 0 &&
        fl_conn_send(conn, body, len) == 0)
        fl_conn_linger(conn, LINGER_MS);
    free(body);
    free(msg);
}

void fl_server_serve(fl_server *self, int fd, int stop_fd)
{
    fl_conn *conn = fl_conn_new(fd, stop_fd);
    fl_request req;
    int result;

    do {
        result = fl_conn_read_request(&req, conn);
        if (result == 0)
            result = answer(self, conn, &req);
        else if (result == FL_HTTP_EBAD || result == FL_HTTP_EHEAD ||
                 result == FL_HTTP_ETOOBIG)
            refuse(self, conn, &req, result);
        fl_request_free(&req);
    } while (result > 0);
    fl_conn_destroy(&conn);
}
