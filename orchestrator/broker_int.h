/* The broker's insides, shared by broker.c (workers, dispatch),
 * broker_bind.c (its socket bound), broker_client.c (requests from MDP
 * clients) and broker_time.c (heartbeats and silence). Nothing else
 * includes this: the rest of tandem uses broker.h. */
#ifndef TND_BROKER_INT_H
#define TND_BROKER_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "orchestrator/broker.h"
#include "orchestrator/zap.h"
#include "proto/mdp.h"

typedef struct request request;

/* a worker's identity, as a request remembers who it was given to */
typedef struct given {
    unsigned char id[TND_MDP_MAX_IDENTITY];
    size_t id_len;
} given;

typedef struct worker {
    unsigned char id[TND_MDP_MAX_IDENTITY];
    size_t id_len;
    char name[TND_MDP_MAX_PRINTABLE]; /* printable id, for logs and events */
    char *service;                    /* NULL until READY */
    /* the Key-Fingerprint its READY came with over CURVE ("" without):
     * every later message under its name must carry the same */
    char key_fingerprint[TND_MDP_MAX_KEY_NAME + 1];
    int64_t expiry;     /* dead after this (monotonic ms) */
    int64_t idle_since; /* for least-recently-used dispatch */
    char *busy;         /* key of the request it works on, or NULL;
                           kept after the request is cancelled or
                           answered elsewhere, until the worker's own
                           FINAL frees it */
    char *answered;     /* key of the request its last FINAL answered: a
                           FINAL sent again for it (an agent that thought
                           the broker gone resends its last on
                           reconnecting) is dropped, not a stray answer */
} worker;

struct request {
    char *key;
    char *service;
    char *body;
    size_t len;
    int dispatches;
    given *given; /* the workers it went to, one a dispatch: only they
                     answer it */
    size_t agiven;
    int64_t seq; /* queue order: lower goes first */
    worker *worker;
    int64_t heard; /* the last PARTIAL from its worker; 0: none yet, so
                      the worker never promised to report progress */
};

struct tnd_broker {
    void *ctx;
    void *socket;
    char *endpoint;
    int heartbeat_ms;
    int liveness;
    int max_dispatches;
    size_t max_queue;
    void (*silent)(const char *name, void *payload);
    void *silent_payload;
    bool clients;
    tnd_zap *zap; /* CURVE: admits keys, gives their roles; NULL: none */
    int64_t next_beat;
    int64_t last_poll; /* when tnd_broker_poll last looked (monotonic ms) */
    int64_t next_seq;
    int64_t front_seq; /* decreasing: requeued requests go first */
    worker **workers;
    size_t nworkers, aworkers;
    request **requests;
    size_t nrequests, arequests;
    tnd_broker_event *events;
    size_t nevents, aevents;
};

/* A client's message (not a worker's), read from the socket: refused,
 * handed to the caller as an event (clients), or queued for a worker.
 * msg's body may be taken. */
/* Bind b's socket at opts->endpoint (broker_bind.c): refused when
 * another process listens on that ipc:// path; on tcp:// a handshake's
 * time limit and, with opts->curve, CURVE and its ZAP handler. 0, or -1
 * with the error set (a configuration error, tnd_error_is_config, when
 * the endpoint is the user's to change). */
int tnd_broker_bind(tnd_broker *b, const tnd_broker_options *opts);

void tnd_broker_on_client(tnd_broker *b, const unsigned char *id, size_t id_len,
                          tnd_mdp_msg *msg);

/* Send command (no body) to w; a peer already gone is no news, another
 * failure is logged (broker.c). */
void tnd_broker_send_command(tnd_broker *b, worker *w, int command);

/* Forget w and free it: what it held goes back on the queue, or fails
 * when lost too often; why ("went silent") says so in the log
 * (broker.c). */
void tnd_broker_remove_worker(tnd_broker *b, worker *w, const char *why);

/* Tell w it broke the protocol (DISCONNECT), why logged, and forget it
 * (broker.c). */
void tnd_broker_disconnect_worker(tnd_broker *b, worker *w, const char *why);

/* Once a heartbeat (broker_time.c): forget the workers gone silent,
 * beat to the others, disconnect those that stopped reporting on their
 * request, and those whose key lost their service's role. */
void tnd_broker_beat(tnd_broker *b);

/* Move every worker's deadline on by the time since the last call, when
 * that is longer than a beat: the broker was not listening
 * (broker_time.c). */
void tnd_broker_away(tnd_broker *b, int64_t now);

#endif
