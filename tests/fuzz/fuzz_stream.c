/* Fuzz agents/stream: the SSE and NDJSON parsers, fed as libcurl feeds
 * them, in chunks cut anywhere.
 *
 * Input: a byte choosing the kind (bit 0: NDJSON), the cap (bits 1-7:
 * lines and events of 1..127 bytes, or 0 for TND_STREAM_MAX_EVENT), and
 * when to stop (the callback returns 7 at that event: 1..255 when byte
 * two is not 0); a byte seeding the chunk sizes; then the body. The
 * body is parsed twice, in one piece and in chunks: both runs must hear
 * the same events and end the same way, since where the network cuts a
 * stream is chance. Each event is NUL-terminated, within the cap, and an
 * NDJSON line holds no line ending. */
#include "tests/fuzz/fuzz.h"

#include "agents/stream.h"
#include "common/buf.h"

typedef struct heard {
    tnd_buf log;    /* "name\0data\0" per event */
    size_t max;     /* the parser's cap */
    size_t stop_at; /* return 7 at this event (1-based); 0: never */
    size_t events;
    tnd_stream_kind kind;
} heard;

static int on_event(const char *name, const char *data, size_t len,
                    void *payload)
{
    heard *h = payload;

    FUZZ_CHECK(data[len] == '\0');
    FUZZ_CHECK(len <= h->max);
    if (h->kind == TND_STREAM_NDJSON)
        FUZZ_CHECK(*name == '\0' && !memchr(data, '\n', len) &&
                   !memchr(data, '\r', len));
    tnd_buf_append(&h->log, name, strlen(name) + 1);
    tnd_buf_append(&h->log, data, len + 1);
    return ++h->events == h->stop_at ? 7 : 0;
}

static int run(heard *h, const uint8_t *body, size_t size, unsigned seed,
               bool chunked)
{
    tnd_stream *s = tnd_stream_new(h->kind, h->max);
    size_t at = 0;
    int rc = 0;

    while (rc == 0 && at < size) {
        size_t n = size - at;
        if (chunked) {
            seed = seed * 1103515245u + 12345u;
            n = 1 + (seed >> 16) % 17;
            if (n > size - at)
                n = size - at;
        }
        rc = tnd_stream_feed(s, (const char *)body + at, n, on_event, h);
        at += n;
    }
    if (rc == 0)
        rc = tnd_stream_finish(s, on_event, h);
    else /* a failed parser keeps failing the same way */
        FUZZ_CHECK(tnd_stream_finish(s, on_event, h) == rc);
    FUZZ_CHECK(tnd_stream_events(s) == h->events);
    FUZZ_CHECK(tnd_stream_bytes(s) == at);
    tnd_stream_destroy(&s);
    return rc;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    heard one, two;
    unsigned seed;
    int rc1, rc2;

    if (size < 3)
        return 0;
    memset(&one, 0, sizeof(one));
    one.kind = data[0] & 1 ? TND_STREAM_NDJSON : TND_STREAM_SSE;
    one.max = data[0] >> 1 ? (size_t)(data[0] >> 1) : TND_STREAM_MAX_EVENT;
    one.stop_at = data[1];
    seed = data[2];
    two = one;
    tnd_buf_init(&one.log, TND_BUF_NOCAP);
    tnd_buf_init(&two.log, TND_BUF_NOCAP);
    rc1 = run(&one, data + 3, size - 3, seed, false);
    rc2 = run(&two, data + 3, size - 3, seed, true);
    FUZZ_CHECK(rc1 == rc2);
    FUZZ_CHECK(one.events == two.events);
    FUZZ_CHECK(
        one.log.len == two.log.len &&
        memcmp(tnd_buf_str(&one.log), tnd_buf_str(&two.log), one.log.len) == 0);
    tnd_buf_free(&one.log);
    tnd_buf_free(&two.log);
    return 0;
}
