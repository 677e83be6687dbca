/* tnd_stream - incremental parser for streamed LLM answers.
 *
 * libcurl hands a streamed body over in chunks cut anywhere, even inside
 * a CRLF. A tnd_stream takes those chunks as they come and calls back
 * once per complete event: a Server-Sent Event (Anthropic, OpenAI) or
 * one line of newline-delimited JSON (Ollama). Every line and every
 * event has a cap, so a peer that never sends a newline costs at most
 * the cap, and crossing it is an error. */
#ifndef TND_STREAM_H
#define TND_STREAM_H

#include <stddef.h>

typedef struct tnd_stream tnd_stream;

typedef enum tnd_stream_kind {
    TND_STREAM_SSE,    /* text/event-stream */
    TND_STREAM_NDJSON, /* one JSON value per line */
} tnd_stream_kind;

/* A sensible max_event for LLM APIs: 1 MiB. */
#define TND_STREAM_MAX_EVENT (1 << 20)

/* One complete event. name: the SSE "event:" field ("message" when the
 * event had none; "" for NDJSON). data: the SSE data lines joined by
 * "\n", or the NDJSON line without its line ending; NUL-terminated, len
 * bytes. Both borrowed for the call. A non-zero return stops the parser,
 * and the feed or finish that made the call returns it. */
typedef int (*tnd_stream_event_fn)(const char *name, const char *data,
                                   size_t len, void *payload);

/* A parser whose lines and events are at most max_event bytes. Never
 * NULL. */
tnd_stream *tnd_stream_new(tnd_stream_kind kind, size_t max_event);

/* Free; sets *self_p to NULL. Safe on NULL. */
void tnd_stream_destroy(tnd_stream **self_p);

/* Feed len bytes of the body, cut anywhere; fn hears every event they
 * complete. Returns 0; -1 with the error set when a line or an event
 * crosses the cap; or fn's non-zero return. Once it has failed, a parser
 * keeps returning that code. */
int tnd_stream_feed(tnd_stream *self, const char *data, size_t len,
                    tnd_stream_event_fn fn, void *payload);

/* The body ended: dispatch a last event that lacked its blank line (SSE)
 * or a last line that lacked its newline (NDJSON). Returns as
 * tnd_stream_feed. */
int tnd_stream_finish(tnd_stream *self, tnd_stream_event_fn fn, void *payload);

/* Bytes fed so far. */
size_t tnd_stream_bytes(const tnd_stream *self);

/* Events dispatched so far. */
size_t tnd_stream_events(const tnd_stream *self);

#endif
