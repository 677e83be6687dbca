/* tnd_link - a session thread's line to the hub of `tandem serve`.
 *
 * In serve, every session runs on a thread of its own and the hub (the
 * main thread) owns the broker and the agents (hub.c). A session reaches
 * the agents through its link: a DEALER socket on the hub's inproc
 * ROUTER, named by the hub when it starts the session. The crew (crew.h)
 * uses it as it would use a local broker: submit a request, cancel it,
 * drop an agent whose reply cannot be used, and poll for the events of
 * its requests. The session's progress lines and its stdout go to the
 * hub the same way, for the clients that follow the session, and its
 * last message says how it ended.
 *
 * Messages are frames on an inproc socket inside one process, never on
 * the wire: a verb frame, then the verb's frames.
 *
 *   session -> hub                      hub -> session
 *   SUBMIT service key body             FINAL key worker body
 *   CANCEL key                          PARTIAL key worker body
 *   DROP worker why                     FAILED key error
 *   OUT text  (stdout)                  STOP (look at the stop flag)
 *   ERR text  (stderr)
 *   DONE code (the exit code, decimal)
 *
 * A link belongs to the thread that made it (ZeroMQ sockets are not
 * thread-safe); the hub reads every link on its one ROUTER. */
#ifndef TND_LINK_H
#define TND_LINK_H

#include <stdio.h>

#include "orchestrator/broker.h"

typedef struct tnd_link tnd_link;

typedef enum tnd_link_verb {
    TND_LINK_SUBMIT = 1,
    TND_LINK_CANCEL,
    TND_LINK_DROP,
    TND_LINK_OUT,
    TND_LINK_ERR,
    TND_LINK_DONE,
} tnd_link_verb;

/* Connect to the hub's ROUTER at endpoint (inproc://...) in ctx, as name
 * (printable, 1..63 bytes). NULL with the error set. */
tnd_link *tnd_link_new(void *ctx, const char *endpoint, const char *name);

/* Close (messages already sent still reach the hub). Sets *self_p to
 * NULL; safe on NULL. */
void tnd_link_destroy(tnd_link **self_p);

/* Ask the hub to queue a request for service under key (unique among
 * this session's outstanding requests). 0, or -1 with the error set. */
int tnd_link_submit(tnd_link *self, const char *service, const char *key,
                    const char *body, size_t len);

/* Forget an outstanding request. */
int tnd_link_cancel(tnd_link *self, const char *key);

/* An agent sent a reply that cannot be used: have the hub drop it. */
int tnd_link_drop(tnd_link *self, const char *worker, const char *why);

/* Text for the clients that follow the session: verb TND_LINK_OUT
 * (stdout) or TND_LINK_ERR (stderr). */
int tnd_link_write(tnd_link *self, tnd_link_verb verb, const char *text,
                   size_t len);

/* The session ended with the exit code code; its last message. */
int tnd_link_done(tnd_link *self, int code);

/* A stream that sends what is written to it with tnd_link_write (verb
 * TND_LINK_OUT or TND_LINK_ERR), a line at a time; fflush sends what
 * is buffered. Close it with fclose before the link is destroyed. NULL
 * with the error set. */
FILE *tnd_link_stream(tnd_link *self, tnd_link_verb verb);

/* Wait up to timeout_ms for an event of this session's requests (kind
 * FINAL, PARTIAL or FAILED, fields as the broker gives them). 1 with
 * *out filled (free with tnd_broker_event_clear), 0 when none came or
 * the hub sent STOP (tnd_link_send_stop: it returns then, however long
 * the wait was to be), -1 on a socket failure. */
int tnd_link_poll(tnd_link *self, tnd_broker_event *out, long timeout_ms);

/* The times the open request under key went to an agent, as the hub's
 * last event for it said (0 when none came), and forget it: what a
 * session that gives up on the request counts as asked. */
int tnd_link_dispatches(tnd_link *self, const char *key);

/* ---- the hub's side ------------------------------------------------------ */

/* One message from a link, as the hub reads it. */
typedef struct tnd_link_msg {
    char from[64]; /* the link's name */
    tnd_link_verb verb;
    char *a;    /* SUBMIT: service; CANCEL: key; DROP: worker */
    char *b;    /* SUBMIT: key; DROP: why */
    char *body; /* SUBMIT: body; OUT, ERR: text; DONE: the code */
    size_t len;
} tnd_link_msg;

/* Read one message from the hub's ROUTER without waiting. 1 with *out
 * filled (free with tnd_link_msg_clear), 0 when none is waiting, -1 with
 * the error set for a message that is not one of the above (it is
 * dropped). */
int tnd_link_recv(tnd_link_msg *out, void *router);

void tnd_link_msg_clear(tnd_link_msg *msg);

/* Send an event of one of its requests to the link called to: FINAL,
 * PARTIAL or FAILED, with ev->key already the session's own key. */
int tnd_link_send_event(void *router, const char *to,
                        const tnd_broker_event *ev);

/* Wake the link called to: its poll returns now, so a session whose stop
 * flag was just set sees it at once, not at the end of its wait. To a
 * link that is gone, nothing is sent. */
int tnd_link_send_stop(void *router, const char *to);

#endif
