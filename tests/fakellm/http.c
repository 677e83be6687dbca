/* fakellm's HTTP/1.1 connection: request parsing and response writing
 * (see http.h). The socket is non-blocking and every wait is a poll() that
 * also watches stop_fd; that is what lets a stalled client, a slow reader
 * or a long delay coexist with a prompt SIGTERM. */
#include "tests/fakellm/http.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/xalloc.h"

#define LINE_MAX_CHUNK 4096 /* a chunk-size line or a trailer line */

struct fl_conn {
    int fd;
    int stop_fd;             /* borrowed; readable = shut down */
    size_t in_start, in_end; /* unconsumed bytes are in[in_start..in_end) */
    char in[FL_HTTP_MAX_HEAD];
};

fl_conn *fl_conn_new(int fd, int stop_fd)
{
    fl_conn *self = tnd_xcalloc(1, sizeof(*self));
    int flags = fcntl(fd, F_GETFL);

    if (flags >= 0)
        fcntl(fd, F_SETFL, flags | O_NONBLOCK);
    self->fd = fd;
    self->stop_fd = stop_fd;
    return self;
}

void fl_conn_destroy(fl_conn **self_p)
{
    if (!self_p || !*self_p)
        return;
    if ((*self_p)->fd >= 0)
        close((*self_p)->fd);
    free(*self_p);
    *self_p = NULL;
}

/* Set the error message and return code: the parser's one way out. */
static int fail(int code, const char *fmt, ...) TND_PRINTF(2, 3);
static int fail(int code, const char *fmt, ...)
{
    char msg[512];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    tnd_error_set("%s", msg);
    return code;
}

/* Wait for events on the socket (or just for time, when events is 0):
 * 0 ready, TND_ETIMEOUT after ms (ms < 0: no limit), TND_ECANCELLED. */
static int wait_for(fl_conn *self, short events, long ms)
{
    int64_t deadline = tnd_now_ms() + (ms < 0 ? 0 : ms);
    struct pollfd p[2] = {{.fd = self->stop_fd, .events = POLLIN},
                          {.fd = self->fd, .events = events}};

    for (;;) {
        int timeout = ms < 0 ? -1 : (int)tnd_clock_remaining(deadline, -1);
        int n = poll(p, events ? 2 : 1, timeout);

        if (n < 0 && errno != EINTR)
            return tnd_error_sys("poll");
        if (n < 0)
            continue;
        if (p[0].revents)
            return TND_ECANCELLED;
        if (events && p[1].revents)
            return 0; /* errors and hang-ups show in the recv/send */
        if (n == 0)
            return TND_ETIMEOUT;
    }
}

/* Receive into buf: bytes read, 0 at end of stream, or a negative code. */
static long recv_some(fl_conn *self, void *buf, size_t len, long ms)
{
    for (;;) {
        ssize_t n = recv(self->fd, buf, len, 0);
        int error;

        if (n >= 0)
            return (long)n;
        if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
            return tnd_error_sys("recv");
        if ((error = wait_for(self, POLLIN, ms)) < 0)
            return error;
    }
}

/* Read more into in[], compacting first. 0 when bytes arrived,
 * FL_HTTP_EOF, FL_HTTP_EHEAD when in[] is full, or an error code. */
static int fill(fl_conn *self)
{
    long n;

    if (self->in_start > 0) {
        memmove(self->in, self->in + self->in_start,
                self->in_end - self->in_start);
        self->in_end -= self->in_start;
        self->in_start = 0;
    }
    if (self->in_end == sizeof(self->in))
        return FL_HTTP_EHEAD;
    n = recv_some(self, self->in + self->in_end,
                  sizeof(self->in) - self->in_end, -1);
    if (n < 0)
        return (int)n;
    if (n == 0)
        return FL_HTTP_EOF;
    self->in_end += (size_t)n;
    return 0;
}

/* Find the blank line that ends the head; its end offset, or 0. */
static size_t head_end(const fl_conn *self)
{
    for (size_t i = self->in_start; i < self->in_end; i++) {
        if (self->in[i] != '\n')
            continue;
        if (i + 1 < self->in_end && self->in[i + 1] == '\n')
            return i + 2;
        if (i + 2 < self->in_end && self->in[i + 1] == '\r' &&
            self->in[i + 2] == '\n')
            return i + 3;
    }
    return 0;
}

/* Read until a whole head is buffered; its length in *len_out. */
static int read_head(size_t *len_out, fl_conn *self)
{
    int error;

    for (;;) {
        size_t end;

        /* RFC 9112 2.2: ignore blank lines before the request line. */
        while (self->in_start < self->in_end &&
               (self->in[self->in_start] == '\r' ||
                self->in[self->in_start] == '\n'))
            self->in_start++;
        if ((end = head_end(self)) > 0) {
            *len_out = end - self->in_start;
            return 0;
        }
        error = fill(self);
        if (error == FL_HTTP_EOF && self->in_start < self->in_end)
            return tnd_error_set("peer closed inside a request head");
        if (error == FL_HTTP_EHEAD)
            return fail(FL_HTTP_EHEAD, "request head exceeds %u bytes",
                        FL_HTTP_MAX_HEAD);
        if (error < 0)
            return error;
    }
}

static int is_tchar(int c)
{
    return isalnum(c) || (c && strchr("!#$%&'*+-.^_`|~", c));
}

static int parse_request_line(fl_request *out, char *line)
{
    char *sp1 = strchr(line, ' '), *sp2;
    size_t i;

    if (!sp1 || sp1 == line || !(sp2 = strchr(sp1 + 1, ' ')) || sp2 == sp1 + 1)
        return fail(FL_HTTP_EBAD, "bad request line \"%.80s\"", line);
    *sp1 = *sp2 = '\0';
    for (i = 0; line[i]; i++)
        if (!is_tchar((unsigned char)line[i]))
            return fail(FL_HTTP_EBAD, "bad method \"%.40s\"", line);
    if (strcmp(sp2 + 1, "HTTP/1.1") && strcmp(sp2 + 1, "HTTP/1.0"))
        return fail(FL_HTTP_EBAD, "unsupported version \"%.20s\"", sp2 + 1);
    for (i = 0; sp1[1 + i]; i++)
        if ((unsigned char)sp1[1 + i] <= ' ' || sp1[1 + i] == 0x7f)
            return fail(FL_HTTP_EBAD, "bad request target");
    out->method = tnd_xstrdup(line);
    out->target = tnd_xstrdup(sp1 + 1);
    out->minor = sp2[8] - '0';
    return 0;
}

static int parse_header(fl_request *out, char *line)
{
    char *colon = strchr(line, ':'), *value, *end;
    fl_header *h;

    if (line[0] == ' ' || line[0] == '\t')
        return fail(FL_HTTP_EBAD, "obsolete header line folding");
    if (!colon || colon == line)
        return fail(FL_HTTP_EBAD, "bad header line \"%.80s\"", line);
    for (const char *p = line; p < colon; p++)
        if (!is_tchar((unsigned char)*p))
            return fail(FL_HTTP_EBAD, "bad header name \"%.*s\"",
                        (int)(colon - line), line);
    for (char *p = line; p < colon; p++)
        *p = (char)tolower((unsigned char)*p);
    if (out->nheaders == FL_HTTP_MAX_HEADERS)
        return fail(FL_HTTP_EBAD, "more than %d headers", FL_HTTP_MAX_HEADERS);
    *colon = '\0';
    for (value = colon + 1; *value == ' ' || *value == '\t'; value++)
        ;
    end = value + strlen(value);
    while (end > value && (end[-1] == ' ' || end[-1] == '\t'))
        *--end = '\0';
    if (!out->headers)
        out->headers = tnd_xcalloc(FL_HTTP_MAX_HEADERS, sizeof(fl_header));
    h = &out->headers[out->nheaders++];
    h->name = tnd_xstrdup(line);
    h->value = tnd_xstrdup(value);
    return 0;
}

/* Parse head text (NUL-free, NUL-terminated, lines end in LF or CRLF). */
static int parse_head(fl_request *out, char *text)
{
    char *line = text, *nl;
    int error;

    for (int first = 1; (nl = strchr(line, '\n')); line = nl + 1) {
        if (nl > line && nl[-1] == '\r')
            nl[-1] = '\0';
        *nl = '\0';
        if (!*line)
            break;
        if ((error = first ? parse_request_line(out, line)
                           : parse_header(out, line)) < 0)
            return error;
        first = 0;
    }
    return out->method ? 0 : (tnd_error_set("empty request"), FL_HTTP_EBAD);
}

/* Does a comma-separated header value list token (case-insensitive)? */
static int has_token(const char *list, const char *token)
{
    size_t n = strlen(token);

    for (const char *p = list; p && *p;) {
        while (*p == ' ' || *p == '\t' || *p == ',')
            p++;
        if (!strncasecmp(p, token, n) &&
            (p[n] == '\0' || p[n] == ',' || p[n] == ' ' || p[n] == '\t'))
            return 1;
        p = strchr(p, ',');
    }
    return 0;
}

/* Move n bytes of body from the socket (via in[]) into body. */
static int read_bytes(fl_conn *self, tnd_buf *body, size_t n)
{
    int error;

    while (n > 0) {
        size_t avail = self->in_end - self->in_start;

        if (avail == 0) {
            if ((error = fill(self)) == FL_HTTP_EOF)
                return tnd_error_set("peer closed inside a request body");
            if (error < 0)
                return error;
            continue;
        }
        if (avail > n)
            avail = n;
        if (tnd_buf_append(body, self->in + self->in_start, avail) < 0)
            return FL_HTTP_ETOOBIG;
        self->in_start += avail;
        n -= avail;
    }
    return 0;
}

/* Read one line (chunk size or trailer) without its CRLF into out. */
static int read_line(char *out, size_t size, fl_conn *self)
{
    int error;

    for (;;) {
        char *start = self->in + self->in_start;
        size_t avail = self->in_end - self->in_start;
        char *nl = memchr(start, '\n', avail);

        if (nl) {
            size_t len = (size_t)(nl - start);

            if (len > 0 && nl[-1] == '\r')
                len--;
            if (len >= size)
                break;
            memcpy(out, start, len);
            out[len] = '\0';
            self->in_start += (size_t)(nl - start) + 1;
            return 0;
        }
        if (avail >= size)
            break;
        if ((error = fill(self)) == FL_HTTP_EOF)
            return tnd_error_set("peer closed inside a chunked body");
        if (error < 0)
            return error;
    }
    return fail(FL_HTTP_EBAD, "chunk line longer than %d bytes",
                LINE_MAX_CHUNK);
}

static int read_chunked(fl_conn *self, tnd_buf *body)
{
    char line[LINE_MAX_CHUNK];
    int error;

    for (;;) {
        unsigned long long size = 0;
        const char *p = line;

        if ((error = read_line(line, sizeof(line), self)) < 0)
            return error;
        if (!isxdigit((unsigned char)*p))
            return fail(FL_HTTP_EBAD, "bad chunk size \"%.40s\"", line);
        for (; isxdigit((unsigned char)*p); p++) {
            if (size > FL_HTTP_MAX_BODY)
                break;
            size = size * 16 +
                   (unsigned)(isdigit((unsigned char)*p)
                                  ? *p - '0'
                                  : tolower((unsigned char)*p) - 'a' + 10);
        }
        if (size > FL_HTTP_MAX_BODY - body->len)
            return fail(FL_HTTP_ETOOBIG,
                        "chunked request body exceeds %u bytes",
                        FL_HTTP_MAX_BODY);
        if (*p && *p != ';' && *p != ' ' && *p != '\t')
            return fail(FL_HTTP_EBAD, "bad chunk size \"%.40s\"", line);
        if (size == 0)
            break;
        if ((error = read_bytes(self, body, (size_t)size)) < 0 ||
            (error = read_line(line, sizeof(line), self)) < 0)
            return error;
        if (line[0])
            return fail(FL_HTTP_EBAD, "chunk data longer than its size");
    }
    do { /* trailer fields, ignored, up to the blank line */
        if ((error = read_line(line, sizeof(line), self)) < 0)
            return error;
    } while (line[0]);
    return 0;
}

/* Content-Length: all the copies agree and are plain digits; -1 absent. */
static int content_length(long long *out, const fl_request *req)
{
    *out = -1;
    for (size_t i = 0; i < req->nheaders; i++) {
        const char *v = req->headers[i].value;
        long long n = 0;

        if (strcmp(req->headers[i].name, "content-length"))
            continue;
        if (!*v || strspn(v, "0123456789") != strlen(v) || strlen(v) > 15)
            return fail(FL_HTTP_EBAD, "bad Content-Length \"%.40s\"", v);
        n = strtoll(v, NULL, 10);
        if (*out >= 0 && *out != n)
            return fail(FL_HTTP_EBAD, "conflicting Content-Length headers");
        *out = n;
    }
    return 0;
}

static int send_continue(fl_conn *self)
{
    static const char msg[] = "HTTP/1.1 100 Continue\r\n\r\n";

    return fl_conn_send(self, msg, sizeof(msg) - 1);
}

int fl_conn_read_request(fl_request *out, fl_conn *self)
{
    const char *te, *conn, *expect;
    long long length;
    size_t len = 0;
    char *text;
    int error;

    memset(out, 0, sizeof(*out));
    tnd_buf_init(&out->body, FL_HTTP_MAX_BODY);
    if ((error = read_head(&len, self)) < 0)
        return error;
    if (memchr(self->in + self->in_start, '\0', len))
        return fail(FL_HTTP_EBAD, "NUL byte in request head");
    text = tnd_xstrndup(self->in + self->in_start, len);
    self->in_start += len;
    error = parse_head(out, text);
    free(text);
    if (error < 0 || (error = content_length(&length, out)) < 0)
        return error;

    conn = fl_request_header(out, "connection");
    out->keep_alive = out->minor >= 1 ? !has_token(conn, "close")
                                      : has_token(conn, "keep-alive");
    te = fl_request_header(out, "transfer-encoding");
    if (te && strcasecmp(te, "chunked"))
        return fail(FL_HTTP_EBAD, "unsupported Transfer-Encoding \"%.40s\"",
                    te);
    if (te && length >= 0)
        return fail(FL_HTTP_EBAD, "both Transfer-Encoding and Content-Length");
    if (length > (long long)FL_HTTP_MAX_BODY)
        return fail(FL_HTTP_ETOOBIG,
                    "request body of %lld bytes exceeds %u bytes", length,
                    FL_HTTP_MAX_BODY);
    expect = fl_request_header(out, "expect");
    if (expect && !strcasecmp(expect, "100-continue") && out->minor >= 1 &&
        (te || length > 0) && (error = send_continue(self)) < 0)
        return error;
    if (te)
        return read_chunked(self, &out->body);
    if (length > 0)
        return read_bytes(self, &out->body, (size_t)length);
    return 0;
}

void fl_request_free(fl_request *req)
{
    if (!req)
        return;
    for (size_t i = 0; i < req->nheaders; i++) {
        free(req->headers[i].name);
        free(req->headers[i].value);
    }
    free(req->headers);
    free(req->method);
    free(req->target);
    tnd_buf_free(&req->body);
    memset(req, 0, sizeof(*req));
}

const char *fl_request_header(const fl_request *req, const char *name)
{
    for (size_t i = 0; i < req->nheaders; i++)
        if (!strcmp(req->headers[i].name, name))
            return req->headers[i].value;
    return NULL;
}

const char *fl_http_reason(int status)
{
    static const struct {
        int status;
        const char *reason;
    } reasons[] = {
        {100, "Continue"},
        {200, "OK"},
        {201, "Created"},
        {204, "No Content"},
        {301, "Moved Permanently"},
        {302, "Found"},
        {400, "Bad Request"},
        {401, "Unauthorized"},
        {402, "Payment Required"},
        {403, "Forbidden"},
        {404, "Not Found"},
        {405, "Method Not Allowed"},
        {408, "Request Timeout"},
        {409, "Conflict"},
        {413, "Content Too Large"},
        {422, "Unprocessable Content"},
        {429, "Too Many Requests"},
        {431, "Request Header Fields Too Large"},
        {500, "Internal Server Error"},
        {501, "Not Implemented"},
        {502, "Bad Gateway"},
        {503, "Service Unavailable"},
        {504, "Gateway Timeout"},
        {529, "Overloaded"},
    };

    for (size_t i = 0; i < sizeof(reasons) / sizeof(reasons[0]); i++)
        if (reasons[i].status == status)
            return reasons[i].reason;
    return "Status";
}

int fl_conn_send_head(fl_conn *self, const fl_head *head)
{
    const char *type = head->content_type;
    tnd_buf b;
    int error;

    tnd_buf_init(&b, TND_BUF_NOCAP);
    for (size_t i = 0; i < head->nextra; i++)
        if (!strcasecmp(head->extra[i].name, "content-type"))
            type = NULL;
    tnd_buf_printf(&b, "HTTP/1.1 %d %s\r\nServer: fakellm\r\n", head->status,
                   fl_http_reason(head->status));
    if (type)
        tnd_buf_printf(&b, "Content-Type: %s\r\n", type);
    if (head->content_length >= 0)
        tnd_buf_printf(&b, "Content-Length: %lld\r\n", head->content_length);
    else if (head->content_length == FL_HTTP_CHUNKED)
        tnd_buf_puts(&b, "Transfer-Encoding: chunked\r\n");
    if (head->content_length < 0)
        tnd_buf_puts(&b, "Cache-Control: no-cache\r\n");
    tnd_buf_printf(&b, "Connection: %s\r\n",
                   head->keep_alive ? "keep-alive" : "close");
    for (size_t i = 0; i < head->nextra; i++)
        tnd_buf_printf(&b, "%s: %s\r\n", head->extra[i].name,
                       head->extra[i].value);
    tnd_buf_puts(&b, "\r\n");
    error = fl_conn_send(self, b.data, b.len);
    tnd_buf_free(&b);
    return error;
}

int fl_conn_send(fl_conn *self, const void *data, size_t len)
{
    const char *p = data;
    int error;

    while (len > 0) {
        ssize_t n = send(self->fd, p, len, MSG_NOSIGNAL);

        if (n >= 0) {
            p += n;
            len -= (size_t)n;
            continue;
        }
        if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)
            return tnd_error_sys("send");
        if ((error = wait_for(self, POLLOUT, -1)) < 0)
            return error;
    }
    return 0;
}

int fl_conn_send_chunk(fl_conn *self, int chunked, const void *data, size_t len)
{
    tnd_buf b;
    int error;

    if (!chunked)
        return fl_conn_send(self, data, len);
    if (len == 0)
        return 0; /* a zero-length chunk would end the body */
    tnd_buf_init(&b, TND_BUF_NOCAP);
    tnd_buf_printf(&b, "%zx\r\n", len);
    tnd_buf_append(&b, data, len);
    tnd_buf_puts(&b, "\r\n");
    error = fl_conn_send(self, b.data, b.len);
    tnd_buf_free(&b);
    return error;
}

int fl_conn_send_last_chunk(fl_conn *self)
{
    return fl_conn_send(self, "0\r\n\r\n", 5);
}

int fl_conn_sleep(fl_conn *self, long ms)
{
    int error;

    if (ms <= 0)
        return 0;
    error = wait_for(self, 0, ms);
    return error == TND_ETIMEOUT ? 0 : error;
}

int fl_conn_stall(fl_conn *self)
{
    char scratch[4096];

    for (;;) {
        long n = recv_some(self, scratch, sizeof(scratch), -1);

        if (n <= 0)
            return n == 0 ? 0 : (int)n;
    }
}

void fl_conn_linger(fl_conn *self, long ms)
{
    int64_t deadline = tnd_now_ms() + ms;
    char scratch[4096];

    shutdown(self->fd, SHUT_WR);
    for (;;) {
        long left = tnd_clock_remaining(deadline, -1);

        if (left <= 0 || recv_some(self, scratch, sizeof(scratch), left) <= 0)
            return;
    }
}
