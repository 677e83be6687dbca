/* fl_http - one HTTP/1.1 client connection of fakellm.
 *
 * Reads requests (Content-Length or chunked bodies, Expect: 100-continue,
 * keep-alive with pipelined leftovers kept for the next request) and writes
 * responses. Every wait also watches stop_fd, so a stalled or slow peer
 * never holds up shutdown: once stop_fd is readable, every call returns
 * TND_ECANCELLED. Names carry fl_ (fakellm), not tnd_, so the test server
 * never collides with libtandem's own symbols. */
#ifndef FL_HTTP_H
#define FL_HTTP_H

#include <stddef.h>

#include "common/buf.h"

#define FL_HTTP_MAX_BODY    (16u << 20) /* request body cap: 413 beyond */
#define FL_HTTP_MAX_HEAD    (64u << 10) /* request line + headers: 431 */
#define FL_HTTP_MAX_HEADERS 100

/* Results of fl_conn_read_request besides 0 and the tnd_error codes. */
enum {
    FL_HTTP_EOF = -20,     /* peer closed cleanly between requests */
    FL_HTTP_EBAD = -21,    /* malformed request: answer 400, then close */
    FL_HTTP_ETOOBIG = -22, /* body over FL_HTTP_MAX_BODY: 413, then close */
    FL_HTTP_EHEAD = -23,   /* head over FL_HTTP_MAX_HEAD: 431, then close */
};

/* fl_head.content_length values that are not lengths. */
#define FL_HTTP_CHUNKED     (-1) /* Transfer-Encoding: chunked */
#define FL_HTTP_UNTIL_CLOSE (-2) /* no length; the body ends at close */

typedef struct fl_header {
    char *name; /* lower-cased in requests; as written in scripts */
    char *value;
} fl_header;

typedef struct fl_request {
    char *method;
    char *target; /* as sent, query string included */
    int minor;    /* the 1 of HTTP/1.1 */
    fl_header *headers;
    size_t nheaders;
    tnd_buf body;   /* decoded body, NUL-terminated */
    int keep_alive; /* what the client asked for, by version + Connection */
} fl_request;

/* What a response head says. */
typedef struct fl_head {
    int status;
    const char *content_type; /* NULL: no Content-Type */
    long long content_length; /* bytes, or FL_HTTP_CHUNKED/_UNTIL_CLOSE */
    int keep_alive;           /* Connection: keep-alive, else close */
    const fl_header *extra;   /* appended verbatim; a Content-Type here */
    size_t nextra;            /* replaces content_type */
} fl_head;

typedef struct fl_conn fl_conn;

/* Wrap an accepted socket (made non-blocking here); takes ownership of
 * fd. stop_fd is borrowed: readable means "shut down now". */
fl_conn *fl_conn_new(int fd, int stop_fd);

/* Close the socket and free; sets *self_p to NULL. Safe on NULL. */
void fl_conn_destroy(fl_conn **self_p);

/* Read the next request into out (fl_request_free it whatever the
 * result). 0, FL_HTTP_EOF, FL_HTTP_EBAD/ETOOBIG/EHEAD (out holds what was
 * parsed, tnd_error_last() says why), TND_ECANCELLED, or TND_ERROR when the
 * peer vanished mid-request. */
int fl_conn_read_request(fl_request *out, fl_conn *self);

/* Free what a request holds; leaves it zeroed. */
void fl_request_free(fl_request *req);

/* First value of a header by lower-case name; NULL if absent. Borrowed. */
const char *fl_request_header(const fl_request *req, const char *name);

/* Send a status line and headers. 0, TND_ECANCELLED or TND_ERROR. */
int fl_conn_send_head(fl_conn *self, const fl_head *head);

/* Send bytes as they are. 0, TND_ECANCELLED or TND_ERROR. */
int fl_conn_send(fl_conn *self, const void *data, size_t len);

/* Send one chunk of a chunked body (or the bare bytes when !chunked). */
int fl_conn_send_chunk(fl_conn *self, int chunked, const void *data,
                       size_t len);

/* Send the zero-length chunk that ends a chunked body. */
int fl_conn_send_last_chunk(fl_conn *self);

/* Sleep ms milliseconds: 0, or TND_ECANCELLED when stop_fd fires. */
int fl_conn_sleep(fl_conn *self, long ms);

/* Read and discard until the peer closes (0) or stop fires
 * (TND_ECANCELLED). */
int fl_conn_stall(fl_conn *self);

/* Half-close and discard input for up to ms, so a peer still sending a
 * body we refused reads our answer instead of a reset. */
void fl_conn_linger(fl_conn *self, long ms);

/* "OK", "Not Found", ... ("Status" for codes we do not name). */
const char *fl_http_reason(int status);

#endif
