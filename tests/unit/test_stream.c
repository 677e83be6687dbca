/* Unit tests for agents/stream: the incremental SSE and NDJSON parser,
 * fed the way libcurl feeds it (chunks cut anywhere). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "agents/stream.h"
#include "common/buf.h"
#include "common/error.h"

/* Every event heard, as "NAME|DATA\n" lines. */
typedef struct heard {
    tnd_buf log;
    int stop_at; /* return 7 from this event on (1-based); 0: never */
    int n;
} heard;

static int hear(const char *name, const char *data, size_t len, void *payload)
{
    heard *h = payload;

    assert_int_equal(strlen(data), len); /* NUL-terminated, no NUL inside */
    h->n++;
    tnd_buf_printf(&h->log, "%s|%s\n", name, data);
    return h->stop_at && h->n >= h->stop_at ? 7 : 0;
}

static void heard_init(heard *h)
{
    memset(h, 0, sizeof(*h));
    tnd_buf_init(&h->log, TND_BUF_NOCAP);
}

/* Parse text fed in the pieces cut at the given positions (ascending,
 * npos of them), then finish; returns what was heard (caller frees). */
static char *parse_cut(tnd_stream_kind kind, const char *text,
                       const size_t *pos, size_t npos)
{
    tnd_stream *s = tnd_stream_new(kind, 1024);
    size_t len = strlen(text), from = 0;
    heard h;

    heard_init(&h);
    for (size_t i = 0; i <= npos; i++) {
        size_t to = i < npos ? pos[i] : len;
        assert_int_equal(tnd_stream_feed(s, text + from, to - from, hear, &h),
                         0);
        from = to;
    }
    assert_int_equal(tnd_stream_finish(s, hear, &h), 0);
    assert_int_equal(tnd_stream_bytes(s), len);
    assert_int_equal(tnd_stream_events(s), (size_t)h.n);
    tnd_stream_destroy(&s);
    assert_null(s);
    return tnd_buf_detach(&h.log, NULL);
}

static char *parse_whole(tnd_stream_kind kind, const char *text)
{
    return parse_cut(kind, text, NULL, 0);
}

/* An Anthropic Messages stream as the API sends it, with a keep-alive
 * comment, id/retry fields and CRLF line endings in the middle. */
static const char anthropic_stream[] =
    "event: message_start\n"
    "data: {\"type\":\"message_start\",\"message\":{\"usage\":"
    "{\"input_tokens\":25,\"output_tokens\":1}}}\n"
    "\n"
    ": keep-alive\n"
    "event: ping\r\n"
    "data: {\"type\": \"ping\"}\r\n"
    "\r\n"
    "id: 7\n"
    "retry: 1000\n"
    "event: content_block_delta\n"
    "data: {\"type\":\"content_block_delta\",\"index\":0,"
    "\"delta\":{\"type\":\"text_delta\",\"text\":\"Hello\"}}\n"
    "\n"
    "event: message_stop\r"
    "data: {\"type\":\"message_stop\"}\r"
    "\r";

static const char anthropic_heard[] =
    "message_start|{\"type\":\"message_start\",\"message\":{\"usage\":"
    "{\"input_tokens\":25,\"output_tokens\":1}}}\n"
    "ping|{\"type\": \"ping\"}\n"
    "content_block_delta|{\"type\":\"content_block_delta\",\"index\":0,"
    "\"delta\":{\"type\":\"text_delta\",\"text\":\"Hello\"}}\n"
    "message_stop|{\"type\":\"message_stop\"}\n";

static void sse_whole_stream(void **state)
{
    char *got;

    (void)state;
    got = parse_whole(TND_STREAM_SSE, anthropic_stream);
    assert_string_equal(got, anthropic_heard);
    free(got);
}

static void sse_cut_at_every_byte(void **state)
{
    size_t len = strlen(anthropic_stream);

    (void)state;
    for (size_t p = 0; p <= len; p++) {
        char *got = parse_cut(TND_STREAM_SSE, anthropic_stream, &p, 1);
        if (strcmp(got, anthropic_heard) != 0)
            fail_msg("cut at byte %zu: heard\n%s", p, got);
        free(got);
    }
}

static void sse_one_byte_at_a_time_and_three_pieces(void **state)
{
    size_t len = strlen(anthropic_stream);
    size_t *every = calloc(len, sizeof(size_t));
    char *got;

    (void)state;
    for (size_t i = 0; i < len; i++)
        every[i] = i;
    got = parse_cut(TND_STREAM_SSE, anthropic_stream, every, len);
    assert_string_equal(got, anthropic_heard);
    free(got);
    free(every);
    for (size_t a = 0; a <= len; a += 7)
        for (size_t b = a; b <= len; b++) {
            size_t pos[2] = {a, b};
            got = parse_cut(TND_STREAM_SSE, anthropic_stream, pos, 2);
            if (strcmp(got, anthropic_heard) != 0)
                fail_msg("cut at %zu and %zu: heard\n%s", a, b, got);
            free(got);
        }
}

static void sse_line_endings(void **state)
{
    char *got;

    (void)state;
    got = parse_whole(TND_STREAM_SSE, "data: a\r\n\r\ndata: b\r\rdata: c\n\n"
                                      "data: d\r\n\n");
    assert_string_equal(got, "message|a\nmessage|b\nmessage|c\nmessage|d\n");
    free(got);
}

static void sse_multi_line_data_and_fields(void **state)
{
    char *got;

    (void)state;
    /* one space after the colon is dropped, more are kept; a line
     * without a colon is a field with an empty value */
    got = parse_whole(TND_STREAM_SSE, "data: one\ndata:two\ndata\n"
                                      "data:  three\n\n");
    assert_string_equal(got, "message|one\ntwo\n\n three\n");
    free(got);
    /* the last event: field wins; unknown fields are ignored */
    got = parse_whole(TND_STREAM_SSE,
                      "event: a\nfoo: bar\nevent:b\ndata: x\n\ndata: y\n\n");
    assert_string_equal(got, "b|x\nmessage|y\n");
    free(got);
}

static void sse_comments_and_empty_lines(void **state)
{
    char *got;

    (void)state;
    got = parse_whole(TND_STREAM_SSE, "\n\n\r\n: hello\n:\n\n");
    assert_string_equal(got, "");
    free(got);
    /* an event without data is not dispatched; empty data is */
    got = parse_whole(TND_STREAM_SSE, "event: ping\n\ndata:\n\ndata\n\n");
    assert_string_equal(got, "message|\nmessage|\n");
    free(got);
    /* a byte order mark before the first line is not part of it */
    got = parse_whole(TND_STREAM_SSE, "\xEF\xBB\xBF"
                                      "data: x\n\n");
    assert_string_equal(got, "message|x\n");
    free(got);
}

static void sse_finish_flushes_the_last_event(void **state)
{
    char *got;

    (void)state;
    got = parse_whole(TND_STREAM_SSE, "data: a\n\nevent: end\ndata: b");
    assert_string_equal(got, "message|a\nend|b\n");
    free(got);
    got = parse_whole(TND_STREAM_SSE, "data: a\n\nevent: end\ndata: b\r\n");
    assert_string_equal(got, "message|a\nend|b\n");
    free(got);
    got = parse_whole(TND_STREAM_SSE, "data: a\n\nevent: nodata");
    assert_string_equal(got, "message|a\n");
    free(got);
}

static void oversize_line_is_an_error(void **state)
{
    tnd_stream *s = tnd_stream_new(TND_STREAM_SSE, 16);
    heard h;

    (void)state;
    heard_init(&h);
    /* exactly the cap is fine */
    assert_int_equal(tnd_stream_feed(s, "data: 0123456789\n\n", 18, hear, &h),
                     0);
    assert_int_equal(h.n, 1);
    /* one more byte, even spread over chunks, is not */
    assert_int_equal(tnd_stream_feed(s, "data: 01234", 11, hear, &h), 0);
    assert_int_equal(tnd_stream_feed(s, "567890", 6, hear, &h), -1);
    assert_non_null(strstr(tnd_error_last(), "line of the stream is longer "
                                             "than 16 bytes"));
    /* a failed parser stays failed */
    assert_int_equal(tnd_stream_feed(s, "\n\n", 2, hear, &h), -1);
    assert_int_equal(tnd_stream_finish(s, hear, &h), -1);
    assert_int_equal(h.n, 1);
    tnd_stream_destroy(&s);
    tnd_buf_free(&h.log);
}

static void oversize_event_is_an_error(void **state)
{
    tnd_stream *s = tnd_stream_new(TND_STREAM_SSE, 16);
    heard h;

    (void)state;
    heard_init(&h);
    /* short lines, but together more data than the cap */
    assert_int_equal(tnd_stream_feed(s, "data: 12345678\n", 15, hear, &h), 0);
    assert_int_equal(tnd_stream_feed(s, "data: 12345678\n", 15, hear, &h), -1);
    assert_non_null(strstr(tnd_error_last(), "event of the stream is longer "
                                             "than 16 bytes"));
    assert_int_equal(h.n, 0);
    tnd_stream_destroy(&s);
    tnd_buf_free(&h.log);
}

static void callback_return_stops_the_parser(void **state)
{
    tnd_stream *s = tnd_stream_new(TND_STREAM_SSE, 1024);
    heard h;
    static const char text[] = "data: 1\n\ndata: 2\n\ndata: 3\n\n";

    (void)state;
    heard_init(&h);
    h.stop_at = 2;
    assert_int_equal(tnd_stream_feed(s, text, strlen(text), hear, &h), 7);
    assert_int_equal(h.n, 2);
    assert_int_equal(tnd_stream_feed(s, "data: 4\n\n", 9, hear, &h), 7);
    assert_int_equal(tnd_stream_finish(s, hear, &h), 7);
    assert_int_equal(h.n, 2);
    tnd_stream_destroy(&s);
    tnd_buf_free(&h.log);
    tnd_stream_destroy(&s); /* safe on NULL */
    tnd_stream_destroy(NULL);
}

static const char ollama_stream[] =
    "{\"message\":{\"content\":\"He\"},\"done\":false}\n"
    "\n"
    "{\"message\":{\"content\":\"llo\"},\"done\":false}\r\n"
    "  \n"
    "{\"done\":true,\"eval_count\":2}";

static const char ollama_heard[] =
    "|{\"message\":{\"content\":\"He\"},\"done\":false}\n"
    "|{\"message\":{\"content\":\"llo\"},\"done\":false}\n"
    "|{\"done\":true,\"eval_count\":2}\n";

static void ndjson_with_and_without_final_newline(void **state)
{
    char *got, *with_newline;
    size_t len = strlen(ollama_stream);

    (void)state;
    got = parse_whole(TND_STREAM_NDJSON, ollama_stream);
    assert_string_equal(got, ollama_heard);
    free(got);
    with_newline = malloc(len + 2);
    memcpy(with_newline, ollama_stream, len);
    memcpy(with_newline + len, "\n", 2);
    for (size_t p = 0; p <= len + 1; p++) {
        got = parse_cut(TND_STREAM_NDJSON, with_newline, &p, 1);
        if (strcmp(got, ollama_heard) != 0)
            fail_msg("cut at byte %zu: heard\n%s", p, got);
        free(got);
        if (p <= len) {
            got = parse_cut(TND_STREAM_NDJSON, ollama_stream, &p, 1);
            if (strcmp(got, ollama_heard) != 0)
                fail_msg("no newline, cut at byte %zu: heard\n%s", p, got);
            free(got);
        }
    }
    free(with_newline);
}

static void ndjson_oversize_line_is_an_error(void **state)
{
    tnd_stream *s = tnd_stream_new(TND_STREAM_NDJSON, 8);
    heard h;

    (void)state;
    heard_init(&h);
    assert_int_equal(tnd_stream_feed(s, "{\"a\":1}\n", 8, hear, &h), 0);
    assert_int_equal(tnd_stream_feed(s, "{\"a\":123}\n", 10, hear, &h), -1);
    assert_int_equal(h.n, 1);
    tnd_stream_destroy(&s);
    tnd_buf_free(&h.log);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sse_whole_stream),
        cmocka_unit_test(sse_cut_at_every_byte),
        cmocka_unit_test(sse_one_byte_at_a_time_and_three_pieces),
        cmocka_unit_test(sse_line_endings),
        cmocka_unit_test(sse_multi_line_data_and_fields),
        cmocka_unit_test(sse_comments_and_empty_lines),
        cmocka_unit_test(sse_finish_flushes_the_last_event),
        cmocka_unit_test(oversize_line_is_an_error),
        cmocka_unit_test(oversize_event_is_an_error),
        cmocka_unit_test(callback_return_stops_the_parser),
        cmocka_unit_test(ndjson_with_and_without_final_newline),
        cmocka_unit_test(ndjson_oversize_line_is_an_error),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
