/* tnd_events - what a running session publishes for watchers.
 *
 * A ZeroMQ PUB socket (an XPUB, to know whether anyone subscribes: an
 * event nobody would get is not built) bound at
 * ipc://RUNTIME/events.sock; the endpoint is
 * written to the session's `events` file so `tandem watch` can find it.
 * Each message is one frame of JSON: every journaled step (the journal
 * record itself plus "session"), and progress while agents work
 * ({"type": "progress", ...}). Publishing never blocks and never fails
 * the run: a slow or absent watcher just misses messages
 * (proto/PROTOCOL.md, "Events"). */
#ifndef TND_EVENTS_H
#define TND_EVENTS_H

#include <json-c/json.h>

typedef struct tnd_events tnd_events;

/* Bind at endpoint, with a socket in ctx (borrowed: it must outlive
 * this) or, when ctx is NULL, in a context of its own; NULL with the
 * error set. */
tnd_events *tnd_events_new(void *ctx, const char *endpoint);

/* Close; sets *self_p to NULL; safe on NULL. */
void tnd_events_destroy(tnd_events **self_p);

/* The bound endpoint. Borrowed. */
const char *tnd_events_endpoint(const tnd_events *self);

/* Publish event with "session" added (event is borrowed). Safe on a NULL
 * self (does nothing). */
void tnd_events_publish(tnd_events *self, const char *session,
                        json_object *event);

#endif
