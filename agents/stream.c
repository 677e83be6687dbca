/* Incremental SSE and NDJSON parser (see stream.h).
 *
 * Bytes go into a line buffer until a line ending (LF, CRLF or a lone
 * CR, as the SSE spec allows); a CR at the end of one chunk remembers to
 * swallow an LF at the start of the next. Complete lines are then read
 * as SSE fields or as one NDJSON value. */
#include "agents/stream.h"

#include <assert.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/error.h"
#include "common/xalloc.h"

struct tnd_stream {
    tnd_stream_kind kind;
    size_t max;    /* cap of a line and of an event's data */
    tnd_buf line;  /* the line being received */
    tnd_buf data;  /* SSE: the event's data lines, joined by \n */
    tnd_buf name;  /* SSE: the event's "event:" field */
    bool has_data; /* SSE: a data line came (maybe an empty one) */
    bool skip_lf;  /* the last line ended in CR: an LF next is its end */
    bool seen_line;
    size_t bytes;
    size_t events;
    int failed; /* the code feed returned when it stopped; 0 */
};

tnd_stream *tnd_stream_new(tnd_stream_kind kind, size_t max_event)
{
    tnd_stream *s = tnd_xcalloc(1, sizeof(*s));

    assert(max_event > 0);
    s->kind = kind;
    s->max = max_event;
    tnd_buf_init(&s->line, max_event);
    tnd_buf_init(&s->data, max_event);
    tnd_buf_init(&s->name, max_event);
    return s;
}

void tnd_stream_destroy(tnd_stream **self_p)
{
    tnd_stream *s = self_p ? *self_p : NULL;

    if (!s)
        return;
    tnd_buf_free(&s->line);
    tnd_buf_free(&s->data);
    tnd_buf_free(&s->name);
    free(s);
    *self_p = NULL;
}

size_t tnd_stream_bytes(const tnd_stream *self)
{
    return self->bytes;
}

size_t tnd_stream_events(const tnd_stream *self)
{
    return self->events;
}

static int dispatch_sse(tnd_stream *s, tnd_stream_event_fn fn, void *payload)
{
    int rc;

    if (!s->has_data) {
        /* an event without data is no event (the SSE spec) */
        tnd_buf_reset(&s->name);
        return 0;
    }
    s->events++;
    rc = fn(s->name.len ? tnd_buf_str(&s->name) : "message",
            tnd_buf_str(&s->data), s->data.len, payload);
    tnd_buf_reset(&s->name);
    tnd_buf_reset(&s->data);
    s->has_data = false;
    return rc;
}

static int field_is(const char *field, size_t len, const char *name)
{
    return len == strlen(name) && memcmp(field, name, len) == 0;
}

static int sse_line(tnd_stream *s, const char *l, size_t n,
                    tnd_stream_event_fn fn, void *payload)
{
    const char *colon, *value;
    size_t flen, vlen;

    if (n == 0)
        return dispatch_sse(s, fn, payload);
    if (l[0] == ':')
        return 0; /* a comment, often a keep-alive */
    colon = memchr(l, ':', n);
    flen = colon ? (size_t)(colon - l) : n;
    value = colon ? colon + 1 : l + n;
    vlen = n - (size_t)(value - l);
    if (vlen > 0 && *value == ' ') {
        value++;
        vlen--;
    }
    if (field_is(l, flen, "event")) {
        tnd_buf_reset(&s->name);
        tnd_buf_append(&s->name, value, vlen); /* fits: vlen < max */
    } else if (field_is(l, flen, "data")) {
        if ((s->has_data && tnd_buf_append(&s->data, "\n", 1) < 0) ||
            tnd_buf_append(&s->data, value, vlen) < 0)
            return tnd_error_set("an event of the stream is longer than %zu "
                                 "bytes",
                                 s->max);
        s->has_data = true;
    }
    /* id:, retry: and unknown fields mean nothing to an LLM client */
    return 0;
}

static int ndjson_line(tnd_stream *s, const char *l, size_t n,
                       tnd_stream_event_fn fn, void *payload)
{
    size_t i;

    for (i = 0; i < n; i++)
        if (l[i] != ' ' && l[i] != '\t')
            break;
    if (i == n)
        return 0; /* blank lines separate nothing */
    s->events++;
    return fn("", l, n, payload);
}

/* A complete line is in s->line: act on it and empty the buffer. */
static int end_line(tnd_stream *s, tnd_stream_event_fn fn, void *payload)
{
    const char *l = tnd_buf_str(&s->line);
    size_t n = s->line.len;
    int rc;

    if (!s->seen_line && n >= 3 && memcmp(l, "\xEF\xBB\xBF", 3) == 0) {
        l += 3; /* a byte order mark starts the first line */
        n -= 3;
    }
    s->seen_line = true;
    if (s->kind == TND_STREAM_SSE)
        rc = sse_line(s, l, n, fn, payload);
    else
        rc = ndjson_line(s, l, n, fn, payload);
    tnd_buf_reset(&s->line);
    return rc;
}

int tnd_stream_feed(tnd_stream *self, const char *data, size_t len,
                    tnd_stream_event_fn fn, void *payload)
{
    size_t i = 0;
    int rc;

    if (self->failed)
        return self->failed;
    self->bytes += len;
    while (i < len) {
        size_t k = i;

        if (self->skip_lf) {
            self->skip_lf = false;
            if (data[i] == '\n') {
                i++;
                continue;
            }
        }
        while (k < len && data[k] != '\n' && data[k] != '\r')
            k++;
        if (tnd_buf_append(&self->line, data + i, k - i) < 0) {
            tnd_error_set("a line of the stream is longer than %zu bytes",
                          self->max);
            return self->failed = -1;
        }
        if (k == len)
            break;
        self->skip_lf = data[k] == '\r';
        i = k + 1;
        if ((rc = end_line(self, fn, payload)) != 0)
            return self->failed = rc;
    }
    return 0;
}

int tnd_stream_finish(tnd_stream *self, tnd_stream_event_fn fn, void *payload)
{
    int rc;

    if (self->failed)
        return self->failed;
    self->skip_lf = false;
    if (self->line.len > 0 && (rc = end_line(self, fn, payload)) != 0)
        return self->failed = rc;
    if (self->kind == TND_STREAM_SSE &&
        (rc = dispatch_sse(self, fn, payload)) != 0)
        return self->failed = rc;
    return 0;
}
