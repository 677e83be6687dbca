/* The Majordomo broker with an in-flight table (see broker.h).
 *
 * State is three small arrays: workers, outstanding requests, and events
 * waiting for the caller. Counts are tens, not thousands, so linear scans
 * keep the code obvious. A request is "queued" while its worker is NULL
 * and "in flight" otherwise; losing a worker puts its request back at the
 * front of the queue (lowest sequence number). */
#include "orchestrator/broker.h"
#include "orchestrator/broker_int.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zmq.h>

#include "common/clock.h"
#include "common/error.h"
#include "common/log.h"
#include "common/xalloc.h"
#include "orchestrator/zap.h"
#include "proto/body.h"

/* ---- bookkeeping -------------------------------------------------------- */

static worker *find_worker(tnd_broker *b, const unsigned char *id, size_t len)
{
    for (size_t i = 0; i < b->nworkers; i++)
        if (b->workers[i]->id_len == len &&
            memcmp(b->workers[i]->id, id, len) == 0)
            return b->workers[i];
    return NULL;
}

static request *find_request(const tnd_broker *b, const char *key, size_t len)
{
    for (size_t i = 0; i < b->nrequests; i++)
        if (strlen(b->requests[i]->key) == len &&
            memcmp(b->requests[i]->key, key, len) == 0)
            return b->requests[i];
    return NULL;
}

static void request_free(request *r)
{
    free(r->key);
    free(r->service);
    free(r->body);
    free(r->given);
    free(r);
}

/* Whether r was ever dispatched to w (under w's identity: a worker that
 * reconnected is the same one, and may answer late). */
static bool was_given(const request *r, const worker *w)
{
    for (int i = 0; i < r->dispatches; i++)
        if (r->given[i].id_len == w->id_len &&
            memcmp(r->given[i].id, w->id, w->id_len) == 0)
            return true;
    return false;
}

static void remove_request(tnd_broker *b, request *r)
{
    for (size_t i = 0; i < b->nrequests; i++) {
        if (b->requests[i] == r) {
            memmove(&b->requests[i], &b->requests[i + 1],
                    (b->nrequests - i - 1) * sizeof(request *));
            b->nrequests--;
            break;
        }
    }
    request_free(r);
}

static tnd_broker_event *push_event(tnd_broker *b, tnd_broker_event_kind kind,
                                    const request *r, const worker *w)
{
    tnd_broker_event *ev;

    TND_GROW(b->events, b->aevents, b->nevents + 1);
    ev = &b->events[b->nevents++];
    memset(ev, 0, sizeof(*ev));
    ev->kind = kind;
    ev->dispatches = r->dispatches;
    snprintf(ev->key, sizeof(ev->key), "%s", r->key);
    if (w)
        snprintf(ev->worker, sizeof(ev->worker), "%s", w->name);
    return ev;
}

void tnd_broker_send_command(tnd_broker *b, worker *w, int command)
{
    tnd_mdp_msg msg;

    tnd_mdp_msg_init(&msg, true, command, NULL);
    /* a peer already gone (EHOSTUNREACH: an agent stopped before the
     * broker says goodbye at the end of a run) is no news */
    if (tnd_mdp_send(b->socket, w->id, w->id_len, &msg) < 0 &&
        errno != EHOSTUNREACH)
        tnd_log_debug("cannot send %s to %s: %s",
                      tnd_mdp_command_name(true, command), w->name,
                      tnd_error_last());
}

/* Take a request back from its worker and put it at the front of the
 * queue, or fail it when it has been lost too often. */
static void requeue(tnd_broker *b, request *r, const char *why)
{
    r->worker = NULL;
    if (r->dispatches >= b->max_dispatches) {
        char *msg = tnd_xasprintf(
            "request %s was lost %d times (%s each time); giving up", r->key,
            r->dispatches, why);
        tnd_log_error("%s", msg);
        push_event(b, TND_BROKER_FAILED, r, NULL)->error = msg;
        remove_request(b, r);
        return;
    }
    tnd_log_warn("request %s goes back on the queue: %s", r->key, why);
    r->seq = --b->front_seq;
}

void tnd_broker_remove_worker(tnd_broker *b, worker *w, const char *why)
{
    for (size_t i = 0; i < b->nrequests; i++) {
        request *r = b->requests[i];
        if (r->worker == w) {
            char *reason = tnd_xasprintf("worker %s %s", w->name, why);
            requeue(b, r, reason); /* may remove r: restart the scan */
            free(reason);
            i = (size_t)-1;
        }
    }
    for (size_t i = 0; i < b->nworkers; i++) {
        if (b->workers[i] == w) {
            memmove(&b->workers[i], &b->workers[i + 1],
                    (b->nworkers - i - 1) * sizeof(worker *));
            b->nworkers--;
            break;
        }
    }
    free(w->service);
    free(w->busy);
    free(w->answered);
    free(w);
}

/* Tell a peer it broke the protocol and forget it. */
void tnd_broker_disconnect_worker(tnd_broker *b, worker *w, const char *why)
{
    tnd_log_warn("disconnecting %s: %s", w->name, why);
    tnd_broker_send_command(b, w, TND_MDPW_DISCONNECT);
    tnd_broker_remove_worker(b, w, "was disconnected");
}

/* ---- dispatch ----------------------------------------------------------- */

static worker *idle_worker(tnd_broker *b, const char *service)
{
    worker *best = NULL;

    for (size_t i = 0; i < b->nworkers; i++) {
        worker *w = b->workers[i];
        if (w->service && !w->busy && strcmp(w->service, service) == 0 &&
            (!best || w->idle_since < best->idle_since))
            best = w;
    }
    return best;
}

static void dispatch(tnd_broker *b)
{
    for (;;) {
        request *next = NULL;
        worker *w = NULL;
        tnd_mdp_msg msg;
        for (size_t i = 0; i < b->nrequests; i++) {
            request *r = b->requests[i];
            if (r->worker || (next && r->seq >= next->seq))
                continue;
            if (idle_worker(b, r->service))
                next = r;
        }
        if (!next)
            return;
        w = idle_worker(b, next->service);
        tnd_mdp_msg_init(&msg, true, TND_MDPW_REQUEST, NULL);
        memcpy(msg.address, next->key, strlen(next->key));
        msg.address_len = strlen(next->key);
        msg.body = next->body;
        msg.body_len = next->len;
        if (tnd_mdp_send(b->socket, w->id, w->id_len, &msg) < 0) {
            tnd_log_warn("cannot reach %s (%s); dropping it", w->name,
                         tnd_error_last());
            tnd_broker_remove_worker(b, w, "could not be reached");
            continue;
        }
        TND_GROW(next->given, next->agiven, (size_t)next->dispatches + 1);
        memcpy(next->given[next->dispatches].id, w->id, w->id_len);
        next->given[next->dispatches].id_len = w->id_len;
        next->worker = w;
        next->heard = 0;
        next->dispatches++;
        w->busy = tnd_xstrdup(next->key);
        tnd_log_debug("request %s -> %s (dispatch %d)", next->key, w->name,
                      next->dispatches);
    }
}

/* ---- incoming ----------------------------------------------------------- */

static void deliver(tnd_broker *b, request *r, worker *w,
                    const tnd_mdp_msg *msg, bool final)
{
    tnd_broker_event *ev =
        push_event(b, final ? TND_BROKER_FINAL : TND_BROKER_PARTIAL, r, w);

    ev->body = tnd_xmalloc(msg->body_len + 1);
    memcpy(ev->body, msg->body, msg->body_len);
    ev->body[msg->body_len] = '\0';
    ev->body_len = msg->body_len;
    if (final)
        remove_request(b, r);
}

static void on_reply(tnd_broker *b, worker *w, tnd_mdp_msg *msg)
{
    bool final = msg->command == TND_MDPW_FINAL;
    request *r = find_request(b, (const char *)msg->address, msg->address_len);
    char key[TND_MDP_MAX_PRINTABLE];

    if (final && w->busy && strlen(w->busy) == msg->address_len &&
        memcmp(w->busy, msg->address, msg->address_len) == 0) {
        free(w->answered);
        w->answered = w->busy;
        w->busy = NULL;
        w->idle_since = tnd_now_ms();
    } else if (final && w->answered &&
               strlen(w->answered) == msg->address_len &&
               memcmp(w->answered, msg->address, msg->address_len) == 0) {
        /* its last answer again, after a reconnect: taken the first
         * time (it was disconnected for it, and the request it holds
         * now requeued and paid for again) */
        tnd_log_debug("discarding %s's FINAL for %s again", w->name,
                      w->answered);
        return;
    }
    if ((!r || !was_given(r, w)) && final && w->busy) {
        /* it holds one request and answers one it was never given: a
         * wrong address, not a late reply (a late reply comes from a
         * worker that was given up on, so holds nothing, or names a
         * request it was given that is still outstanding). Left alone,
         * the request it holds would wait for its reply until the
         * timeout; taken, its answer would be another worker's. */
        char *why;
        tnd_mdp_printable(key, sizeof(key), msg->address, msg->address_len);
        why = tnd_xasprintf("it sent a FINAL for '%s' while it holds '%s'", key,
                            w->busy);
        tnd_broker_disconnect_worker(b, w, why);
        free(why);
        return;
    }
    if (!r) {
        tnd_mdp_printable(key, sizeof(key), msg->address, msg->address_len);
        tnd_log_debug("discarding a late %s for %s from %s",
                      tnd_mdp_command_name(true, msg->command), key, w->name);
        return;
    }
    if (!was_given(r, w)) {
        tnd_log_warn("discarding a %s for %s from agent %s, which was "
                     "never given it",
                     tnd_mdp_command_name(true, msg->command), r->key, w->name);
        return;
    }
    if (!w->service || strcmp(r->service, w->service) != 0) {
        /* an agent answers for its own service only: a key allowed to
         * review does not write a coder's proposal */
        tnd_log_warn("discarding a %s for %s from agent %s, which serves %s, "
                     "not %s",
                     tnd_mdp_command_name(true, msg->command), r->key, w->name,
                     w->service ? w->service : "nothing", r->service);
        return;
    }
    if (!final && r->worker == w)
        r->heard = tnd_now_ms();
    deliver(b, r, w, msg, final);
}

/* READY from a worker we know: it reconnected under the same identity
 * (ROUTER_HANDOVER gives the new connection the old name), after it
 * thought us dead or after its process restarted. RFC 18 calls a second
 * READY a protocol error, but disconnecting would only make it reconnect
 * again. Treat it as a fresh registration: whatever it held may be lost,
 * so that goes back on the queue; if the old job is still running, its
 * reply is taken when it comes (first reply wins). */
static void reregister(tnd_broker *b, worker *w, const char *service)
{
    char *why;

    tnd_log_info("agent %s registered again (service %s)", w->name, service);
    why = tnd_xasprintf("worker %s registered again", w->name);
    for (size_t i = 0; i < b->nrequests; i++) {
        request *r = b->requests[i];
        if (r->worker == w) {
            requeue(b, r, why); /* may remove r: restart the scan */
            i = (size_t)-1;
        }
    }
    free(why);
    free(w->busy);
    w->busy = NULL;
    free(w->service);
    w->service = tnd_xstrdup(service);
    w->idle_since = tnd_now_ms();
}

/* Over CURVE, a READY only for a service the key's roles allow; a
 * refused peer is told DISCONNECT and logged. */
static bool may_serve(tnd_broker *b, const unsigned char *id, size_t id_len,
                      const tnd_mdp_msg *msg)
{
    worker peer = {0};

    if (!b->zap || tnd_zap_may_serve(msg->user_id, msg->service))
        return true;
    memcpy(peer.id, id, id_len);
    peer.id_len = id_len;
    tnd_mdp_printable(peer.name, sizeof(peer.name), id, id_len);
    tnd_log_warn("refused agent %s: its key's roles (%s) do not include "
                 "service %s",
                 peer.name, *msg->user_id ? msg->user_id : "none",
                 msg->service);
    tnd_broker_send_command(b, &peer, TND_MDPW_DISCONNECT);
    return false;
}

static void on_worker(tnd_broker *b, worker *w, const unsigned char *id,
                      size_t id_len, tnd_mdp_msg *msg)
{
    if (!w) {
        if (msg->command == TND_MDPW_READY && !may_serve(b, id, id_len, msg))
            return;
        if (msg->command == TND_MDPW_READY) {
            w = tnd_xcalloc(1, sizeof(*w));
            memcpy(w->id, id, id_len);
            w->id_len = id_len;
            tnd_mdp_printable(w->name, sizeof(w->name), id, id_len);
            w->service = tnd_xstrdup(msg->service);
            snprintf(w->key_fingerprint, sizeof(w->key_fingerprint), "%s",
                     msg->key_fingerprint);
            w->idle_since = tnd_now_ms();
            w->expiry = tnd_now_ms() + (int64_t)b->heartbeat_ms * b->liveness;
            TND_GROW(b->workers, b->aworkers, b->nworkers + 1);
            b->workers[b->nworkers++] = w;
            tnd_log_info("agent %s ready for service %s", w->name, w->service);
            return;
        }
        if (msg->command == TND_MDPW_DISCONNECT)
            return;
        /* A peer we do not know: one we expired, or one from before a
         * restart. Keep a final reply we still wait for (requests are
         * idempotent) if it was given that request, then tell it to
         * start over. */
        worker ghost = {0};
        memcpy(ghost.id, id, id_len);
        ghost.id_len = id_len;
        tnd_mdp_printable(ghost.name, sizeof(ghost.name), id, id_len);
        if (msg->command == TND_MDPW_FINAL) {
            request *r =
                find_request(b, (const char *)msg->address, msg->address_len);
            if (r && was_given(r, &ghost) &&
                (!b->zap || tnd_zap_may_serve(msg->user_id, r->service)))
                deliver(b, r, &ghost, msg, true);
        }
        tnd_log_info("telling unknown agent %s to reconnect", ghost.name);
        tnd_broker_send_command(b, &ghost, TND_MDPW_DISCONNECT);
        return;
    }
    if (strcmp(msg->key_fingerprint, w->key_fingerprint) != 0) {
        /* another key speaks under an agent's name (ROUTER_HANDOVER gave
         * it the connection): it is not that agent, whatever its roles,
         * and what the agent held goes back on the queue */
        tnd_log_warn("refused a message from key %s (%s) under the name of "
                     "agent %s, which registered with key %s",
                     *msg->key_fingerprint ? msg->key_fingerprint : "none",
                     *msg->key_name ? msg->key_name : "unnamed", w->name,
                     *w->key_fingerprint ? w->key_fingerprint : "none");
        tnd_broker_send_command(b, w, TND_MDPW_DISCONNECT);
        tnd_broker_remove_worker(b, w, "had its name taken by another key");
        return;
    }
    w->expiry = tnd_now_ms() + (int64_t)b->heartbeat_ms * b->liveness;
    switch (msg->command) {
    case TND_MDPW_HEARTBEAT:
        break;
    case TND_MDPW_PARTIAL:
    case TND_MDPW_FINAL:
        on_reply(b, w, msg);
        break;
    case TND_MDPW_DISCONNECT:
        tnd_log_info("agent %s disconnected", w->name);
        tnd_broker_remove_worker(b, w, "disconnected");
        break;
    case TND_MDPW_READY:
        if (!may_serve(b, id, id_len, msg))
            tnd_broker_remove_worker(b, w, "is not allowed that service");
        else
            reregister(b, w, msg->service);
        break;
    default:
        tnd_broker_disconnect_worker(b, w,
                                     "sent a command only a broker may send");
        break;
    }
}

static int read_one(tnd_broker *b)
{
    unsigned char id[TND_MDP_MAX_IDENTITY];
    size_t id_len = 0;
    tnd_mdp_msg msg;
    int rc = tnd_mdp_recv(&msg, id, &id_len, b->socket);
    worker *w;

    if (rc == TND_ETIMEOUT)
        return 0;
    w = id_len ? find_worker(b, id, id_len) : NULL;
    if (rc < 0) {
        char name[TND_MDP_MAX_PRINTABLE];
        tnd_mdp_printable(name, sizeof(name), id, id_len);
        if (w) {
            tnd_broker_disconnect_worker(b, w, tnd_error_last());
        } else {
            tnd_log_warn("dropping a message from %s: %s",
                         id_len ? name : "an unknown peer", tnd_error_last());
        }
        return 1;
    }
    if (msg.worker)
        on_worker(b, w, id, id_len, &msg);
    else
        tnd_broker_on_client(b, id, id_len, &msg);
    tnd_mdp_msg_clear(&msg);
    return 1;
}

int tnd_broker_poll(tnd_broker *self, tnd_broker_event *out, long timeout_ms)
{
    int64_t deadline = tnd_now_ms() + (timeout_ms > 0 ? timeout_ms : 0);

    memset(out, 0, sizeof(*out));
    for (;;) {
        zmq_pollitem_t items[2] = {
            {self->socket, 0, ZMQ_POLLIN, 0},
            {self->zap ? tnd_zap_socket(self->zap) : NULL, 0, ZMQ_POLLIN, 0}};
        long wait;
        int n;

        if (self->nevents > 0) {
            *out = self->events[0];
            memmove(&self->events[0], &self->events[1],
                    (self->nevents - 1) * sizeof(*self->events));
            self->nevents--;
            return 1;
        }
        tnd_broker_away(self, tnd_now_ms());
        dispatch(self);
        wait = tnd_clock_remaining(deadline, -1);
        if (wait > self->next_beat - tnd_now_ms())
            wait = (long)(self->next_beat - tnd_now_ms());
        if (wait < 0)
            wait = 0;
        n = zmq_poll(items, self->zap ? 2 : 1, wait);
        if (n < 0) {
            if (errno == EINTR)
                return 0; /* let the caller look at its signals */
            return tnd_error_set("broker poll failed: %s", zmq_strerror(errno));
        }
        if (self->zap && (items[1].revents & ZMQ_POLLIN) &&
            tnd_zap_serve(self->zap) < 0)
            tnd_log_warn("%s", tnd_error_last());
        /* read a bounded batch so timers still run under a flood */
        for (int i = 0; n > 0 && i < 256; i++)
            if (read_one(self) == 0)
                break;
        /* after reading: heartbeats that queued while our caller was busy
         * elsewhere are signs of life, not silence */
        tnd_broker_away(self, tnd_now_ms());
        if (tnd_now_ms() >= self->next_beat)
            tnd_broker_beat(self);
        if (self->nevents == 0 && tnd_now_ms() >= deadline) {
            dispatch(self);
            return 0;
        }
    }
}

/* ---- public ------------------------------------------------------------- */

tnd_broker *tnd_broker_new(const tnd_broker_options *opts)
{
    tnd_broker *b = tnd_xcalloc(1, sizeof(*b));
    int one = 1;
    char last[512];
    size_t len = sizeof(last);

    b->heartbeat_ms = opts->heartbeat_ms > 0 ? opts->heartbeat_ms : 1000;
    b->liveness = opts->liveness > 1 ? opts->liveness : 3;
    b->max_dispatches = opts->max_dispatches > 0 ? opts->max_dispatches : 3;
    b->max_queue = opts->max_queue > 0 ? opts->max_queue : 1024;
    b->silent = opts->silent;
    b->silent_payload = opts->silent_payload;
    b->clients = opts->clients;
    b->next_beat = tnd_now_ms() + b->heartbeat_ms;
    if (!(b->ctx = zmq_ctx_new())) {
        tnd_error_set("cannot create a ZeroMQ context: %s",
                      zmq_strerror(errno));
        goto fail;
    }
    if (!(b->socket = zmq_socket(b->ctx, ZMQ_ROUTER))) {
        tnd_error_set("cannot create the broker socket: %s",
                      zmq_strerror(errno));
        goto fail;
    }
    if (tnd_mdp_socket_limits(b->socket) < 0 ||
        zmq_setsockopt(b->socket, ZMQ_ROUTER_MANDATORY, &one, sizeof(one)) <
            0 ||
        zmq_setsockopt(b->socket, ZMQ_ROUTER_HANDOVER, &one, sizeof(one)) < 0) {
        tnd_error_set("cannot configure the broker socket: %s",
                      zmq_strerror(errno));
        goto fail;
    }
    if (tnd_broker_bind(b, opts) < 0)
        goto fail;
    if (zmq_getsockopt(b->socket, ZMQ_LAST_ENDPOINT, last, &len) == 0)
        b->endpoint = tnd_xstrdup(last);
    else
        b->endpoint = tnd_xstrdup(opts->endpoint);
    return b;
fail:
    tnd_broker_destroy(&b);
    return NULL;
}

void tnd_broker_destroy(tnd_broker **self_p)
{
    tnd_broker *b = self_p ? *self_p : NULL;
    int linger = 200;

    if (!b)
        return;
    if (b->socket) {
        for (size_t i = 0; i < b->nworkers; i++)
            tnd_broker_send_command(b, b->workers[i], TND_MDPW_DISCONNECT);
        /* give the DISCONNECTs a moment to leave, but never hang */
        zmq_setsockopt(b->socket, ZMQ_LINGER, &linger, sizeof(linger));
        zmq_close(b->socket);
    }
    while (b->nworkers > 0)
        tnd_broker_remove_worker(b, b->workers[b->nworkers - 1],
                                 "was shut down");
    while (b->nrequests > 0)
        remove_request(b, b->requests[b->nrequests - 1]);
    for (size_t i = 0; i < b->nevents; i++)
        tnd_broker_event_clear(&b->events[i]);
    tnd_zap_destroy(&b->zap);
    if (b->ctx)
        zmq_ctx_term(b->ctx);
    free(b->workers);
    free(b->requests);
    free(b->events);
    free(b->endpoint);
    free(b);
    *self_p = NULL;
}

const char *tnd_broker_endpoint(const tnd_broker *self)
{
    return self->endpoint;
}

void *tnd_broker_socket(const tnd_broker *self)
{
    return self->socket;
}

int tnd_broker_submit(tnd_broker *self, const char *service, const char *key,
                      const char *body, size_t len)
{
    request *r;
    size_t klen = strlen(key);

    if (klen == 0 || klen > TND_BROKER_MAX_KEY)
        return tnd_error_set("request key must be 1..%d bytes",
                             TND_BROKER_MAX_KEY);
    if (find_request(self, key, klen))
        return tnd_error_set("request %s is already outstanding", key);
    if (self->nrequests >= self->max_queue)
        return tnd_error_set("the broker queue is full (%zu requests)",
                             self->max_queue);
    if (len > TND_MDP_MAX_BODY)
        return tnd_error_set("request body is %zu bytes, more than the "
                             "limit of %d",
                             len, TND_MDP_MAX_BODY);
    r = tnd_xcalloc(1, sizeof(*r));
    r->key = tnd_xstrdup(key);
    r->service = tnd_xstrdup(service);
    r->body = tnd_xmalloc(len + 1);
    memcpy(r->body, body, len);
    r->body[len] = '\0';
    r->len = len;
    r->seq = self->next_seq++;
    TND_GROW(self->requests, self->arequests, self->nrequests + 1);
    self->requests[self->nrequests++] = r;
    dispatch(self);
    return 0;
}

int tnd_broker_cancel(tnd_broker *self, const char *key)
{
    request *r = find_request(self, key, strlen(key));

    if (!r)
        return TND_ENOTFOUND;
    remove_request(self, r);
    return 0;
}

int tnd_broker_dispatches(const tnd_broker *self, const char *key)
{
    const request *r = find_request(self, key, strlen(key));

    return r ? r->dispatches : 0;
}

void tnd_broker_event_clear(tnd_broker_event *ev)
{
    free(ev->body);
    free(ev->error);
    memset(ev, 0, sizeof(*ev));
}

/* Whether worker name is the agent process named agent: the same name,
 * or AGENT.N, one of its threads (tandem-coder --threads). */
static bool of_agent(const char *name, const char *agent)
{
    char process[TND_MDP_MAX_PRINTABLE];

    tnd_mdp_worker_agent(process, sizeof(process), name);
    return strcmp(name, agent) == 0 || strcmp(process, agent) == 0;
}

void tnd_broker_worker_gone(tnd_broker *self, const char *identity)
{
    for (size_t i = self->nworkers; i-- > 0;)
        if (i < self->nworkers && of_agent(self->workers[i]->name, identity))
            tnd_broker_remove_worker(self, self->workers[i], "exited");
}

void tnd_broker_drop_worker(tnd_broker *self, const char *identity,
                            const char *why)
{
    for (size_t i = 0; i < self->nworkers; i++) {
        if (strcmp(self->workers[i]->name, identity) == 0) {
            tnd_broker_disconnect_worker(self, self->workers[i], why);
            return;
        }
    }
}

size_t tnd_broker_workers(const tnd_broker *self, const char *service)
{
    size_t n = 0;

    for (size_t i = 0; i < self->nworkers; i++)
        if (self->workers[i]->service &&
            strcmp(self->workers[i]->service, service) == 0)
            n++;
    return n;
}

const char *tnd_broker_worker_elsewhere(const tnd_broker *self,
                                        const char *const *services,
                                        const char **service_out)
{
    for (size_t i = 0; i < self->nworkers; i++) {
        const worker *w = self->workers[i];
        const char *const *s = services;
        if (!w->service)
            continue;
        while (*s && strcmp(*s, w->service) != 0)
            s++;
        if (!*s) {
            *service_out = w->service;
            return w->name;
        }
    }
    return NULL;
}

const char *tnd_broker_worker_unasked(const tnd_broker *self, bool coder,
                                      int quorum, const char **service_out)
{
    char **members = tnd_xcalloc((size_t)quorum + 1, sizeof(char *));
    const char **services = tnd_xcalloc((size_t)quorum + 3, sizeof(char *));
    const char *other;
    int n = 0;

    if (coder)
        services[n++] = "coder";
    if (quorum <= 1)
        services[n++] = "reviewer";
    for (int m = 1; quorum > 1 && m <= quorum; m++)
        services[n++] = members[m] = tnd_xasprintf("reviewer.%d", m);
    other = tnd_broker_worker_elsewhere(self, services, service_out);
    for (int m = 1; m <= quorum; m++)
        free(members[m]);
    free(members);
    free(services);
    return other;
}

size_t tnd_broker_pending(const tnd_broker *self, const char *service)
{
    size_t n = 0;

    for (size_t i = 0; i < self->nrequests; i++)
        if (strcmp(self->requests[i]->service, service) == 0)
            n++;
    return n;
}
