/* The session's event stream (see events.h). */
#include "orchestrator/events.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

#include "common/error.h"
#include "common/log.h"
#include "common/xalloc.h"
#include "proto/json.h"

struct tnd_events {
    void *own;  /* the context made here, or NULL: the caller's */
    void *pub;  /* XPUB: it says when watchers come and go */
    int topics; /* subscribed to by at least one watcher */
    char *endpoint;
};

tnd_events *tnd_events_new(void *ctx, const char *endpoint)
{
    tnd_events *e = tnd_xcalloc(1, sizeof(*e));
    int linger = 0, hwm = 10000;

    e->endpoint = tnd_xstrdup(endpoint);
    /* the server passes its own: a context per session would be two
     * threads made and joined for each */
    if (!ctx)
        ctx = e->own = zmq_ctx_new();
    if (!ctx || !(e->pub = zmq_socket(ctx, ZMQ_XPUB)) ||
        zmq_setsockopt(e->pub, ZMQ_LINGER, &linger, sizeof(linger)) < 0 ||
        zmq_setsockopt(e->pub, ZMQ_SNDHWM, &hwm, sizeof(hwm)) < 0 ||
        zmq_bind(e->pub, endpoint) < 0) {
        tnd_error_set("cannot publish events on %s: %s", endpoint,
                      zmq_strerror(errno));
        tnd_events_destroy(&e);
        return NULL;
    }
    return e;
}

void tnd_events_destroy(tnd_events **self_p)
{
    tnd_events *e = self_p ? *self_p : NULL;

    if (!e)
        return;
    if (e->pub)
        zmq_close(e->pub);
    if (e->own)
        zmq_ctx_term(e->own);
    free(e->endpoint);
    free(e);
    *self_p = NULL;
}

const char *tnd_events_endpoint(const tnd_events *self)
{
    return self->endpoint;
}

/* Whether anyone watches: the (un)subscriptions that came since the
 * last event are read first. An XPUB passes on the first subscription to
 * a topic and the last one's end (a watcher that leaves unsubscribes);
 * so while no topic is subscribed, an event would reach nobody, as a PUB
 * drops it, and is not even built. A peer may send messages of its own
 * too (an XSUB's): each is read past, an empty one as well (one ended
 * the reading, and the subscriptions behind it waited an event each). */
static bool watched(tnd_events *self)
{
    unsigned char msg[256]; /* 1 or 0, then the topic: only the first */
    int n;

    while ((n = zmq_recv(self->pub, msg, sizeof(msg), ZMQ_DONTWAIT)) >= 0) {
        if (n > 0 && msg[0] == 1)
            self->topics++;
        else if (n > 0 && msg[0] == 0 && self->topics > 0)
            self->topics--;
    }
    return self->topics > 0;
}

void tnd_events_publish(tnd_events *self, const char *session,
                        json_object *event)
{
    json_object *copy;
    char *text;
    size_t len;

    /* most sessions have no watcher, and an event is a record, a whole
     * reply at times, printed as JSON */
    if (!self || !watched(self))
        return;
    copy = json_object_new_object();
    json_object_object_add(copy, "session", json_object_new_string(session));
    json_object_object_foreach(event, key, val)
    {
        json_object_object_add(copy, key, json_object_get(val));
    }
    text = tnd_json_dump(copy, &len);
    json_object_put(copy);
    tnd_log_redact_json(text);
    /* a full queue means nobody is reading fast enough: drop, never wait */
    if (zmq_send(self->pub, text, strlen(text), ZMQ_DONTWAIT) < 0)
        tnd_log_debug("event dropped: %s", zmq_strerror(errno));
    free(text);
}
