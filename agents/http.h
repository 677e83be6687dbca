/* tnd_http - HTTP POST over one reused libcurl handle.
 *
 * One handle per agent keeps connections alive between calls and lets
 * curl negotiate HTTP/2 where the server offers it. Every response body
 * is capped; every call has a timeout and watches a cancel flag. Request
 * headers (which carry API keys) are never logged or put into errors. */
#ifndef TND_HTTP_H
#define TND_HTTP_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct tnd_http tnd_http;

/* Called with each piece of the body as it arrives (for streaming); a
 * non-zero return aborts the transfer, as an error, except
 * TND_HTTP_CHUNK_END: the answer is complete (its end marker came), and
 * the transfer stops as a success, whether or not the server closes the
 * body (one that sent [DONE] and kept it open was waited on until the
 * timeout, then retried and paid for again). */
typedef int (*tnd_http_chunk_fn)(const char *data, size_t len, void *payload);

#define TND_HTTP_CHUNK_END 2

typedef struct tnd_http_request {
    const char *url;
    const char *body;
    size_t body_len;
    const char *const *headers; /* "Name: value", NULL-terminated */
    long timeout_ms;            /* whole transfer */
    size_t max_response;        /* body bytes kept; more is an error */
    const atomic_int *cancel;   /* may be NULL */
    int cancel_fd; /* with cancel: readable once the call is to stop, as
                      a non-zero *cancel (the agent's stop pipe): a call
                      waiting on the server wakes at once, where libcurl
                      looks at the flag once a second; -1: none */
    tnd_http_chunk_fn on_chunk; /* may be NULL */
    void *payload;
    int chunks_only; /* with on_chunk: a 2xx body goes only to on_chunk
                        (out->body is "", max_response is not applied:
                        the callback bounds what it keeps); any other
                        status's body skips on_chunk and is kept in
                        out->body under max_response, for the error */
    bool probe;      /* tandem doctor's own check: an unreachable server's
                        error ends "check --base-url", not also "or run
                        `tandem doctor`" as a model call's does */
} tnd_http_request;

typedef struct tnd_http_response {
    long status; /* HTTP status code */
    char *body;  /* NUL-terminated; owned */
    size_t len;
    long retry_after_ms; /* from Retry-After (seconds or HTTP date); -1 */
} tnd_http_response;

/* A handle; NULL with the error set when libcurl cannot start. */
tnd_http *tnd_http_new(void);

/* Free; sets *self_p to NULL. Safe on NULL. */
void tnd_http_destroy(tnd_http **self_p);

/* POST and wait for the whole response. Returns 0 when a response came
 * back (any status: look at out->status); TND_ERETRY for transport
 * failures worth retrying (refused, reset, DNS, timeout); TND_ECANCELLED;
 * -1 otherwise (bad URL, body over the cap...). The error names the URL
 * and the cause. Free out with tnd_http_response_clear (always safe). */
int tnd_http_post(tnd_http_response *out, tnd_http *self,
                  const tnd_http_request *req);

/* GET, same rules as tnd_http_post (body and on_chunk ignored). */
int tnd_http_get(tnd_http_response *out, tnd_http *self,
                 const tnd_http_request *req);

/* Free a response; safe on a zeroed one. */
void tnd_http_response_clear(tnd_http_response *res);

/* Parse a Retry-After value (delta seconds or an HTTP date) into
 * milliseconds from now; -1 when it is neither. */
long tnd_http_parse_retry_after(const char *value);

#endif
