/* A session thread's line to the hub (see link.h). */
#include "orchestrator/link.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

#include "common/error.h"
#include "common/xalloc.h"

#define MAX_PARTS  5 /* identity (hub side), verb, three frames */
#define LINGER_MS  2000
#define STREAM_BUF (64 * 1024)

static const char *const verbs[] = {
    NULL, "SUBMIT", "CANCEL", "DROP", "OUT", "ERR", "DONE",
};

/* Open requests the hub said went to an agent, and how many times: what
 * a session that gives up on one counts as asked. */
#define SEEN_MAX 64

typedef struct seen {
    char key[TND_BROKER_MAX_KEY + 1];
    int dispatches;
} seen;

struct tnd_link {
    void *socket;
    seen seen[SEEN_MAX];
    size_t nseen;
};

static seen *seen_find(tnd_link *self, const char *key)
{
    for (size_t i = 0; i < self->nseen; i++)
        if (strcmp(self->seen[i].key, key) == 0)
            return &self->seen[i];
    return NULL;
}

/* Remember key went out n times; the oldest is forgotten past the cap
 * (a session has a handful of requests open at once). A request's count
 * only grows: a smaller one (a PARTIAL counted after the broker let the
 * request go) does not undo the calls already made. */
static void seen_note(tnd_link *self, const char *key, int n)
{
    seen *s = seen_find(self, key);

    if (!s) {
        if (self->nseen == SEEN_MAX)
            memmove(&self->seen[0], &self->seen[1],
                    (SEEN_MAX - 1) * sizeof(seen));
        else
            self->nseen++;
        s = &self->seen[self->nseen - 1];
        snprintf(s->key, sizeof(s->key), "%s", key);
        s->dispatches = 0;
    }
    if (n > s->dispatches)
        s->dispatches = n;
}

static int seen_take(tnd_link *self, const char *key)
{
    seen *s = seen_find(self, key);
    int n;

    if (!s)
        return 0;
    n = s->dispatches;
    memmove(s, s + 1,
            (size_t)(&self->seen[self->nseen] - (s + 1)) * sizeof(seen));
    self->nseen--;
    return n;
}

int tnd_link_dispatches(tnd_link *self, const char *key)
{
    return seen_take(self, key);
}

typedef struct frame {
    const void *data;
    size_t len;
} frame;

/* Send frames as one message. Blocking: the peer is in this process and
 * reads all the time, and a message must not be lost. */
static int send_frames(void *socket, const frame *f, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (zmq_send(socket, f[i].data, f[i].len, i + 1 < n ? ZMQ_SNDMORE : 0) <
            0)
            return tnd_error_set("cannot send to the hub: %s",
                                 zmq_strerror(errno));
    return 0;
}

tnd_link *tnd_link_new(void *ctx, const char *endpoint, const char *name)
{
    tnd_link *l = tnd_xcalloc(1, sizeof(*l));
    int linger = LINGER_MS, hwm = 0; /* no message of a session is dropped */
    size_t len = strlen(name);

    if (len == 0 || len >= sizeof(((tnd_link_msg *)0)->from)) {
        tnd_error_set("a link's name must be 1..63 bytes");
        goto fail;
    }
    if (!(l->socket = zmq_socket(ctx, ZMQ_DEALER)) ||
        zmq_setsockopt(l->socket, ZMQ_ROUTING_ID, name, len) < 0 ||
        zmq_setsockopt(l->socket, ZMQ_LINGER, &linger, sizeof(linger)) < 0 ||
        zmq_setsockopt(l->socket, ZMQ_SNDHWM, &hwm, sizeof(hwm)) < 0 ||
        zmq_setsockopt(l->socket, ZMQ_RCVHWM, &hwm, sizeof(hwm)) < 0 ||
        zmq_connect(l->socket, endpoint) < 0) {
        tnd_error_set("cannot connect to the hub at %s: %s", endpoint,
                      zmq_strerror(errno));
        goto fail;
    }
    return l;
fail:
    tnd_link_destroy(&l);
    return NULL;
}

void tnd_link_destroy(tnd_link **self_p)
{
    tnd_link *l = self_p ? *self_p : NULL;

    if (!l)
        return;
    if (l->socket)
        zmq_close(l->socket);
    free(l);
    *self_p = NULL;
}

static frame str(const char *s)
{
    return (frame){s, strlen(s)};
}

int tnd_link_submit(tnd_link *self, const char *service, const char *key,
                    const char *body, size_t len)
{
    frame f[] = {str("SUBMIT"), str(service), str(key), {body, len}};

    return send_frames(self->socket, f, 4);
}

int tnd_link_cancel(tnd_link *self, const char *key)
{
    frame f[] = {str("CANCEL"), str(key)};

    return send_frames(self->socket, f, 2);
}

int tnd_link_drop(tnd_link *self, const char *worker, const char *why)
{
    frame f[] = {str("DROP"), str(worker), str(why)};

    return send_frames(self->socket, f, 3);
}

int tnd_link_write(tnd_link *self, tnd_link_verb verb, const char *text,
                   size_t len)
{
    frame f[] = {str(verb == TND_LINK_OUT ? "OUT" : "ERR"), {text, len}};

    return send_frames(self->socket, f, 2);
}

int tnd_link_done(tnd_link *self, int code)
{
    char text[16];
    frame f[] = {str("DONE"), {text, 0}};

    f[1].len = (size_t)snprintf(text, sizeof(text), "%d", code);
    return send_frames(self->socket, f, 2);
}

/* ---- streams ------------------------------------------------------------ */

typedef struct stream_cookie {
    tnd_link *link;
    tnd_link_verb verb;
} stream_cookie;

static ssize_t stream_write(void *c, const char *buf, size_t size)
{
    stream_cookie *sc = c;

    if (tnd_link_write(sc->link, sc->verb, buf, size) < 0) {
        errno = EIO;
        return -1;
    }
    return (ssize_t)size;
}

static int stream_close(void *c)
{
    free(c);
    return 0;
}

FILE *tnd_link_stream(tnd_link *self, tnd_link_verb verb)
{
    stream_cookie *sc = tnd_xcalloc(1, sizeof(*sc));
    cookie_io_functions_t io = {NULL, stream_write, NULL, stream_close};
    FILE *f;

    sc->link = self;
    sc->verb = verb;
    if (!(f = fopencookie(sc, "w", io))) {
        free(sc);
        tnd_error_sys("cannot open a stream to the hub");
        return NULL;
    }
    setvbuf(f, NULL, _IOLBF, STREAM_BUF);
    return f;
}

/* ---- receiving ---------------------------------------------------------- */

/* Read one whole message (up to MAX_PARTS frames; more is an error, the
 * rest drained). 0 with n parts, TND_ETIMEOUT when none is waiting. */
static int recv_parts(zmq_msg_t *parts, size_t *n, void *socket)
{
    int more = 1, error = 0;

    *n = 0;
    while (more) {
        zmq_msg_t scratch, *m = *n < MAX_PARTS ? &parts[*n] : &scratch;
        zmq_msg_init(m);
        if (zmq_msg_recv(m, socket, *n == 0 ? ZMQ_DONTWAIT : 0) < 0) {
            int e = errno;
            zmq_msg_close(m);
            if (*n == 0 && e == EAGAIN)
                return TND_ETIMEOUT;
            error = tnd_error_set("cannot read a link message: %s",
                                  zmq_strerror(e));
            break;
        }
        more = zmq_msg_more(m);
        if (m == &scratch) {
            zmq_msg_close(m);
            error = tnd_error_set("a link message has more than %d frames",
                                  MAX_PARTS);
        } else {
            (*n)++;
        }
    }
    if (error < 0) {
        for (size_t i = 0; i < *n; i++)
            zmq_msg_close(&parts[i]);
        *n = 0;
    }
    return error;
}

static char *dup_part(zmq_msg_t *m, size_t *len)
{
    size_t n = zmq_msg_size(m);
    char *s = tnd_xmalloc(n + 1);

    memcpy(s, zmq_msg_data(m), n);
    s[n] = '\0';
    if (len)
        *len = n;
    return s;
}

static bool part_is(zmq_msg_t *m, const char *s)
{
    return zmq_msg_size(m) == strlen(s) &&
           memcmp(zmq_msg_data(m), s, strlen(s)) == 0;
}

/* A frame holding a small decimal number; 0 when it holds none. */
static int part_int(zmq_msg_t *m)
{
    char text[16];
    size_t len = zmq_msg_size(m);

    if (len == 0 || len >= sizeof(text))
        return 0;
    memcpy(text, zmq_msg_data(m), len);
    text[len] = '\0';
    return atoi(text);
}

static void close_parts(zmq_msg_t *parts, size_t n)
{
    for (size_t i = 0; i < n; i++)
        zmq_msg_close(&parts[i]);
}

int tnd_link_poll(tnd_link *self, tnd_broker_event *out, long timeout_ms)
{
    zmq_pollitem_t item = {self->socket, 0, ZMQ_POLLIN, 0};
    zmq_msg_t parts[MAX_PARTS];
    size_t n = 0;
    int rc;

    memset(out, 0, sizeof(*out));
    if (zmq_poll(&item, 1, timeout_ms) < 0)
        return errno == EINTR ? 0
                              : tnd_error_set("cannot poll the link: %s",
                                              zmq_strerror(errno));
    /* a STOP only wakes the poll: the events behind it are still read
     * (a session that stops takes the replies already here) */
    while ((rc = recv_parts(parts, &n, self->socket)) == 0 && n == 1 &&
           part_is(&parts[0], "STOP"))
        close_parts(parts, n);
    if (rc == TND_ETIMEOUT)
        return 0;
    if (rc < 0)
        return -1;
    if (n == 5 &&
        (part_is(&parts[0], "FINAL") || part_is(&parts[0], "PARTIAL"))) {
        out->kind =
            part_is(&parts[0], "FINAL") ? TND_BROKER_FINAL : TND_BROKER_PARTIAL;
        snprintf(out->key, sizeof(out->key), "%.*s",
                 (int)zmq_msg_size(&parts[1]), (char *)zmq_msg_data(&parts[1]));
        snprintf(out->worker, sizeof(out->worker), "%.*s",
                 (int)zmq_msg_size(&parts[2]), (char *)zmq_msg_data(&parts[2]));
        out->dispatches = part_int(&parts[3]);
        out->body = dup_part(&parts[4], &out->body_len);
    } else if (n == 4 && part_is(&parts[0], "FAILED")) {
        out->kind = TND_BROKER_FAILED;
        snprintf(out->key, sizeof(out->key), "%.*s",
                 (int)zmq_msg_size(&parts[1]), (char *)zmq_msg_data(&parts[1]));
        out->dispatches = part_int(&parts[2]);
        out->error = dup_part(&parts[3], NULL);
    } else {
        close_parts(parts, n);
        return tnd_error_set("the hub sent a message a link does not know "
                             "(%zu frames)",
                             n);
    }
    close_parts(parts, n);
    if (out->kind == TND_BROKER_PARTIAL)
        seen_note(self, out->key, out->dispatches);
    else
        seen_take(self, out->key); /* counted with this event */
    return 1;
}

int tnd_link_recv(tnd_link_msg *out, void *router)
{
    zmq_msg_t parts[MAX_PARTS];
    size_t n = 0, want[] = {0, 5, 3, 4, 3, 3, 3};
    int rc, verb = 0;

    memset(out, 0, sizeof(*out));
    if ((rc = recv_parts(parts, &n, router)) == TND_ETIMEOUT)
        return 0;
    if (rc < 0)
        return -1;
    for (int v = 1; n >= 2 && v <= TND_LINK_DONE; v++)
        if (part_is(&parts[1], verbs[v]))
            verb = v;
    if (!verb || n != want[verb] || zmq_msg_size(&parts[0]) == 0 ||
        zmq_msg_size(&parts[0]) >= sizeof(out->from)) {
        close_parts(parts, n);
        return tnd_error_set("a link sent a message the hub does not know "
                             "(%zu frames)",
                             n);
    }
    out->verb = (tnd_link_verb)verb;
    memcpy(out->from, zmq_msg_data(&parts[0]), zmq_msg_size(&parts[0]));
    switch (out->verb) {
    case TND_LINK_SUBMIT:
        out->a = dup_part(&parts[2], NULL);
        out->b = dup_part(&parts[3], NULL);
        out->body = dup_part(&parts[4], &out->len);
        break;
    case TND_LINK_CANCEL:
        out->a = dup_part(&parts[2], NULL);
        break;
    case TND_LINK_DROP:
        out->a = dup_part(&parts[2], NULL);
        out->b = dup_part(&parts[3], NULL);
        break;
    default:
        out->body = dup_part(&parts[2], &out->len);
        break;
    }
    close_parts(parts, n);
    return 1;
}

void tnd_link_msg_clear(tnd_link_msg *msg)
{
    free(msg->a);
    free(msg->b);
    free(msg->body);
    memset(msg, 0, sizeof(*msg));
}

int tnd_link_send_event(void *router, const char *to,
                        const tnd_broker_event *ev)
{
    char n[16];

    snprintf(n, sizeof(n), "%d", ev->dispatches > 0 ? ev->dispatches : 0);
    if (ev->kind == TND_BROKER_FAILED) {
        frame f[] = {str(to), str("FAILED"), str(ev->key), str(n),
                     str(ev->error ? ev->error : "failed")};
        return send_frames(router, f, 5);
    }
    frame f[] = {
        str(to),      str(ev->kind == TND_BROKER_FINAL ? "FINAL" : "PARTIAL"),
        str(ev->key), str(ev->worker),
        str(n),       {ev->body, ev->body_len}};
    return send_frames(router, f, 6);
}

int tnd_link_send_stop(void *router, const char *to)
{
    frame f[] = {str(to), str("STOP")};

    return send_frames(router, f, 2);
}
