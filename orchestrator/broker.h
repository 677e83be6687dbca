/* tnd_broker - the Majordomo broker at the heart of the orchestrator.
 *
 * One ROUTER socket serves agents (MDP/Worker) and outside clients
 * (MDP/Client). Requests queue per service and go to the least recently
 * used idle worker. Unlike the classic Majordomo broker, a request is
 * never dropped with its worker: an in-flight table remembers which
 * worker holds which request, and when that worker disconnects, goes
 * silent, or cannot be reached, the request goes back to the front of its
 * queue. Requests are keyed by the caller (task id + attempt), so a late
 * duplicate reply after such a retry is recognised and discarded.
 *
 * Single-threaded: everything happens inside tnd_broker_poll(). */
#ifndef TND_BROKER_H
#define TND_BROKER_H

#include <stdbool.h>
#include <stddef.h>

#include "proto/client.h"
#include "proto/curve.h"
#include "proto/mdp.h"

typedef struct tnd_broker tnd_broker;

typedef struct tnd_broker_options {
    const char *endpoint; /* to bind: ipc://PATH or tcp://HOST:PORT */
    int heartbeat_ms;     /* beat interval, both ways */
    int liveness;         /* beats missed before a worker is dead */
    int max_dispatches;   /* times a request may be lost with its worker
                             before it fails; 0: 3 */
    size_t max_queue;     /* outstanding requests in all; 0: 1024 */
    /* called with a worker's name when it went silent (its request, if
     * any, is already back on the queue): a stopped or hung process of
     * ours can be killed, so it is restarted. May be NULL. */
    void (*silent)(const char *name, void *payload);
    void *silent_payload;
    /* false: every client request is refused with an error reply (tandem
     * run serves no client; queued for services no one served, a local
     * client's requests held gigabytes). true: every client request is
     * an event for the caller (TND_BROKER_CLIENT), who answers it with
     * tnd_broker_client_send (tandem serve: a client may not drive the
     * agents). */
    bool clients;
    /* CURVE (tcp://): the orchestrator's key pair and the keys admitted,
     * with their roles (orchestrator/zap.h); NULL: no CURVE. A worker
     * registers only for a service its key's roles allow, and a client
     * request needs the client role. Both borrowed; they must outlive
     * the broker. */
    const tnd_curve_pair *curve;
    const tnd_curve_list *authorized;
    /* the file authorized came from, read again when it changes (a key
     * removed from it is refused, and its agents disconnected, without
     * a restart), and the server's own key, always admitted; NULL: the
     * list stays as given */
    const char *authorized_path;
    const tnd_curve_entry *own_key;
} tnd_broker_options;

#define TND_BROKER_MAX_KEY 128

typedef enum tnd_broker_event_kind {
    TND_BROKER_FINAL = 1, /* the reply to an internal request */
    TND_BROKER_PARTIAL,   /* a progress message for one */
    TND_BROKER_FAILED,    /* the request was lost too often; see error */
    TND_BROKER_CLIENT,    /* a client's request (options.clients) */
} tnd_broker_event_kind;

typedef struct tnd_broker_event {
    tnd_broker_event_kind kind;
    char key[TND_BROKER_MAX_KEY + 1];
    char worker[TND_MDP_MAX_PRINTABLE]; /* printable identity of the worker that
                                           answered */
    char *body;                         /* owned; NUL-terminated */
    size_t body_len;
    char *error;    /* owned; FAILED only */
    int dispatches; /* times the request went to a worker (FINAL, FAILED;
                       PARTIAL over a link: the hub fills it),
                       the one that answered included; more than 1 means
                       workers were lost with it (each may have done, and
                       paid for, the work) */
    /* CLIENT only: who asked (key holds it printable), and for what */
    unsigned char client[TND_MDP_MAX_IDENTITY];
    size_t client_len;
    char service[TND_MDP_MAX_SERVICE + 1];
    /* CLIENT only: the person or machine behind the client as the
     * transport proved it: over CURVE the key's name (from the ZAP
     * handler), over ipc:// the account of the peer's uid (the kernel's
     * SO_PEERCRED as libzmq gives it; the server's own account where
     * libzmq does not, the only one besides root that may enter the
     * endpoint's 0700 directory), over tcp:// without CURVE its address
     * only */
    tnd_client_who who;
    unsigned roles; /* CLIENT over CURVE: its key's roles (proto/curve.h);
                       0 otherwise */
} tnd_broker_event;

/* Bind and start. NULL with the error set (e.g. the endpoint is in use). */
tnd_broker *tnd_broker_new(const tnd_broker_options *opts);

/* Tell every worker DISCONNECT, close the socket and free. Sets *self_p to
 * NULL; safe on NULL. */
void tnd_broker_destroy(tnd_broker **self_p);

/* The endpoint agents should connect to (a tcp port 0 or "*" resolved).
 * Borrowed. */
const char *tnd_broker_endpoint(const tnd_broker *self);

/* The ROUTER socket, for a caller that polls it together with sockets of
 * its own (zmq_poll) and then calls tnd_broker_poll with no wait. Read
 * it only through tnd_broker_poll. Borrowed. */
void *tnd_broker_socket(const tnd_broker *self);

/* Queue a request of ours for service. key (printable, 1..128 bytes) must
 * not be outstanding already. The body is copied. */
int tnd_broker_submit(tnd_broker *self, const char *service, const char *key,
                      const char *body, size_t len);

/* Forget an outstanding request; a reply that comes later is discarded.
 * Returns 0, or TND_ENOTFOUND when key is not outstanding. */
int tnd_broker_cancel(tnd_broker *self, const char *key);

/* How many times the outstanding request key went to a worker so far
 * (0: it waits in the queue, or key is not outstanding). Ask before
 * tnd_broker_cancel, which forgets it. */
int tnd_broker_dispatches(const tnd_broker *self, const char *key);

/* Run the broker for up to timeout_ms (0: only what is ready now). Returns
 * 1 with *out filled (free with tnd_broker_event_clear), 0 when the time
 * passed without an event for us, -1 on a socket failure. */
int tnd_broker_poll(tnd_broker *self, tnd_broker_event *out, long timeout_ms);

/* Answer a client's request (a TND_BROKER_CLIENT event): a PARTIAL, or
 * the FINAL when final is true. -1 with the error set when the client
 * cannot be reached (it is gone) or the body is over the limit. */
int tnd_broker_client_send(tnd_broker *self, const unsigned char *client,
                           size_t client_len, const char *service, bool final,
                           const char *body, size_t len);

/* Free an event's strings; safe on a zeroed event. */
void tnd_broker_event_clear(tnd_broker_event *ev);

/* The agent process with this printable identity is known to be gone
 * (it exited): requeue what its workers held (identity itself, and
 * IDENTITY.N for each of its threads) now rather than at heartbeat
 * expiry. */
void tnd_broker_worker_gone(tnd_broker *self, const char *identity);

/* A worker with this printable identity broke the contract (e.g. its
 * reply cannot be used): tell it DISCONNECT, forget it, and requeue what
 * it held. It may connect again, as a new registration. why is logged. */
void tnd_broker_drop_worker(tnd_broker *self, const char *identity,
                            const char *why);

/* Workers that said READY for service and are alive. */
size_t tnd_broker_workers(const tnd_broker *self, const char *service);

/* The name of the first alive worker registered for a service that is
 * none of services (NULL-terminated), its service in *service_out; NULL
 * when there is none. Borrowed until the next poll: how a run waiting
 * for "reviewer" names the agent started with --service reviewer.1. */
const char *tnd_broker_worker_elsewhere(const tnd_broker *self,
                                        const char *const *services,
                                        const char **service_out);

/* tnd_broker_worker_elsewhere for the services a run or a server asks:
 * "coder" (when coder is true), and "reviewer", or with a quorum above
 * 1 one service a member, "reviewer.1" .. "reviewer.QUORUM". The one
 * place that list is made for that question. */
const char *tnd_broker_worker_unasked(const tnd_broker *self, bool coder,
                                      int quorum, const char **service_out);

/* Outstanding requests (queued or in flight) for service. */
size_t tnd_broker_pending(const tnd_broker *self, const char *service);

#endif
