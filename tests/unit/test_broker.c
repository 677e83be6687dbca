/* Unit tests for orchestrator/broker: the Majordomo broker with its
 * in-flight table.
 *
 * A real broker binds an ipc:// socket in a temporary directory, with a
 * short heartbeat. Fake agents and clients are DEALER sockets driven from
 * this thread: each step (pump) lets the beating peers heartbeat, lets
 * every peer collect what the broker sent it, and runs the broker for a
 * few milliseconds. Every wait is a loop with a deadline. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <zmq.h>

#include "common/clock.h"
#include "common/error.h"
#include "common/log.h"
#include "common/xalloc.h"
#include "orchestrator/broker.h"

#define SERVICE      "coder"
#define HEARTBEAT_MS 50
#define LIVENESS     3
#define DEADLINE_MS  3000 /* for anything that must happen */

/* A frame from a string literal (its size without the NUL). */
#define F(s)             \
    {                    \
        s, sizeof(s) - 1 \
    }
#define SEND_FRAMES(p, ...)                          \
    send_frames(p, (const tnd_frame[]){__VA_ARGS__}, \
                sizeof((tnd_frame[]){__VA_ARGS__}) / sizeof(tnd_frame))

typedef struct peer {
    void *socket;
    bool beats; /* sends HEARTBEAT while the test pumps */
    int64_t last_beat;
    int heartbeats;       /* HEARTBEATs the broker sent us */
    int disconnects;      /* DISCONNECTs the broker sent us */
    tnd_mdp_msg inbox[8]; /* everything else, oldest first */
    size_t ninbox;
} peer;

static char tmpdir[] = "/tmp/tnd-test-broker-XXXXXX";
static char endpoint[PATH_MAX + 16];
static void *ctx;
static tnd_broker *broker;
static peer peers[8];
static size_t npeers;

static void nap_ms(long ms)
{
    struct timespec ts = {0, ms * 1000000L};

    nanosleep(&ts, NULL);
}

static bool clients_mode; /* the next broker hands client requests over */

static void start_broker(int max_dispatches, size_t max_queue)
{
    tnd_broker_options o = {
        .endpoint = endpoint,
        .heartbeat_ms = HEARTBEAT_MS,
        .liveness = LIVENESS,
        .max_dispatches = max_dispatches,
        .max_queue = max_queue,
        .clients = clients_mode,
    };

    tnd_broker_destroy(&broker);
    if (!(broker = tnd_broker_new(&o)))
        fail_msg("cannot start the broker: %s", tnd_error_last());
}

/* ---- fake peers ------------------------------------------------------- */

/* A DEALER connected to the broker, with ZMQ_ROUTING_ID name. */
static peer *connect_peer(const char *name)
{
    peer *p;

    assert_true(npeers < sizeof(peers) / sizeof(peers[0]));
    p = &peers[npeers++];
    memset(p, 0, sizeof(*p));
    p->socket = zmq_socket(ctx, ZMQ_DEALER);
    assert_non_null(p->socket);
    assert_int_equal(tnd_mdp_socket_limits(p->socket), 0);
    assert_int_equal(
        zmq_setsockopt(p->socket, ZMQ_ROUTING_ID, name, strlen(name)), 0);
    assert_int_equal(zmq_connect(p->socket, endpoint), 0);
    return p;
}

static void send_msg(peer *p, tnd_mdp_msg *m)
{
    assert_int_equal(tnd_mdp_send(p->socket, NULL, 0, m), 0);
    tnd_mdp_msg_clear(m);
}

/* An MDP/Worker command from p. READY is for service; REQUEST, PARTIAL
 * and FINAL carry key as the address, and body. */
static void send_worker(peer *p, int command, const char *key, const char *body)
{
    tnd_mdp_msg m;

    tnd_mdp_msg_init(&m, true, command, SERVICE);
    if (key) {
        m.address_len = strlen(key);
        memcpy(m.address, key, m.address_len);
    }
    if (body) {
        m.body = tnd_xstrdup(body);
        m.body_len = strlen(body);
    }
    send_msg(p, &m);
}

static void send_frames(peer *p, const tnd_frame *f, size_t n)
{
    for (size_t i = 0; i < n; i++)
        assert_true(zmq_send(p->socket, f[i].data, f[i].size,
                             i + 1 < n ? ZMQ_SNDMORE : 0) >= 0);
}

/* Read everything the broker sent p. A DISCONNECT ends its beating, as
 * it would end a real agent's connection. */
static void collect(peer *p)
{
    tnd_mdp_msg m;
    int rc;

    while ((rc = tnd_mdp_recv(&m, NULL, NULL, p->socket)) == 0) {
        if (m.worker && m.command == TND_MDPW_HEARTBEAT) {
            p->heartbeats++;
        } else if (m.worker && m.command == TND_MDPW_DISCONNECT) {
            p->disconnects++;
            p->beats = false;
        } else {
            assert_true(p->ninbox < sizeof(p->inbox) / sizeof(p->inbox[0]));
            p->inbox[p->ninbox++] = m;
            continue;
        }
        tnd_mdp_msg_clear(&m);
    }
    if (rc != TND_ETIMEOUT)
        fail_msg("a peer received a bad message: %s", tnd_error_last());
}

/* One step of the world; the result of tnd_broker_poll. */
static int pump(tnd_broker_event *ev)
{
    int64_t now = tnd_now_ms();

    for (size_t i = 0; i < npeers; i++) {
        peer *p = &peers[i];
        if (p->beats && now - p->last_beat >= HEARTBEAT_MS / 2) {
            send_worker(p, TND_MDPW_HEARTBEAT, NULL, NULL);
            p->last_beat = now;
        }
        collect(p);
    }
    return tnd_broker_poll(broker, ev, 5);
}

/* Pump until cond holds; no event may reach the caller meanwhile. */
#define PUMP_UNTIL(cond)                                                      \
    do {                                                                      \
        int64_t deadline_ = tnd_now_ms() + DEADLINE_MS;                       \
        tnd_broker_event ev_;                                                 \
        while (!(cond)) {                                                     \
            if (pump(&ev_) != 0)                                              \
                fail_msg("unexpected event for '%s' waiting for %s", ev_.key, \
                         #cond);                                              \
            if (tnd_now_ms() > deadline_)                                     \
                fail_msg("timed out waiting for %s", #cond);                  \
        }                                                                     \
    } while (0)

/* Pump for ms, in which nothing may reach the caller. */
static void pump_for(long ms)
{
    int64_t until = tnd_now_ms() + ms;

    PUMP_UNTIL(tnd_now_ms() >= until);
}

/* Pump until the broker reports an event. */
static void next_event(tnd_broker_event *ev)
{
    int64_t deadline = tnd_now_ms() + DEADLINE_MS;
    int rc;

    while ((rc = pump(ev)) == 0)
        if (tnd_now_ms() > deadline)
            fail_msg("no event within %d ms", DEADLINE_MS);
    assert_int_equal(rc, 1);
}

static void expect_event(tnd_broker_event_kind kind, const char *key,
                         const char *worker, const char *body)
{
    tnd_broker_event ev;

    next_event(&ev);
    assert_int_equal(ev.kind, kind);
    assert_string_equal(ev.key, key);
    assert_string_equal(ev.worker, worker);
    assert_string_equal(ev.body, body);
    assert_int_equal(ev.body_len, strlen(body));
    assert_null(ev.error);
    tnd_broker_event_clear(&ev);
}

/* Pump until p has received a message and take the oldest. */
static void take(tnd_mdp_msg *out, peer *p)
{
    PUMP_UNTIL(p->ninbox > 0);
    *out = p->inbox[0];
    memmove(&p->inbox[0], &p->inbox[1], --p->ninbox * sizeof(p->inbox[0]));
}

/* p must be handed the request key with body. */
static void expect_request(peer *p, const char *key, const char *body)
{
    tnd_mdp_msg m;

    take(&m, p);
    assert_true(m.worker);
    assert_int_equal(m.command, TND_MDPW_REQUEST);
    assert_int_equal(m.address_len, strlen(key));
    assert_memory_equal(m.address, key, m.address_len);
    assert_string_equal(m.body, body);
    tnd_mdp_msg_clear(&m);
}

/* A beating worker named name that said READY for service. */
static peer *ready_worker_for(const char *name, const char *service)
{
    size_t before = tnd_broker_workers(broker, service);
    peer *p = connect_peer(name);
    tnd_mdp_msg m;

    tnd_mdp_msg_init(&m, true, TND_MDPW_READY, service);
    send_msg(p, &m);
    p->beats = true;
    p->last_beat = tnd_now_ms();
    PUMP_UNTIL(tnd_broker_workers(broker, service) == before + 1);
    return p;
}

static peer *ready_worker(const char *name)
{
    return ready_worker_for(name, SERVICE);
}

/* ---- dispatch and replies --------------------------------------------- */

static void request_goes_to_a_worker_and_its_final_comes_back(void **state)
{
    char body[] = "{\"ask\":1}";
    peer *w;
    tnd_broker_event ev;

    (void)state;
    w = ready_worker("w1");
    assert_int_equal(tnd_broker_workers(broker, SERVICE), 1);
    assert_int_equal(tnd_broker_workers(broker, "reviewer"), 0);

    assert_int_equal(
        tnd_broker_submit(broker, SERVICE, "t1/1/coder", body, strlen(body)),
        0);
    memset(body, 'x', strlen(body)); /* the broker has its own copy */
    assert_int_equal(tnd_broker_pending(broker, SERVICE), 1);
    expect_request(w, "t1/1/coder", "{\"ask\":1}");
    send_worker(w, TND_MDPW_FINAL, "t1/1/coder", "{\"answer\":2}");

    next_event(&ev);
    assert_int_equal(ev.kind, TND_BROKER_FINAL);
    assert_string_equal(ev.key, "t1/1/coder");
    assert_string_equal(ev.worker, "w1");
    assert_string_equal(ev.body, "{\"answer\":2}");
    assert_int_equal(ev.body_len, 12);
    assert_null(ev.error);
    assert_int_equal(ev.dispatches, 1);
    tnd_broker_event_clear(&ev);
    assert_null(ev.body);
    tnd_broker_event_clear(&ev); /* twice is fine */

    assert_int_equal(tnd_broker_pending(broker, SERVICE), 0);
    assert_int_equal(tnd_broker_workers(broker, SERVICE), 1);
    /* and the worker is free for the next one */
    assert_int_equal(tnd_broker_submit(broker, SERVICE, "t1/2/coder", "{}", 2),
                     0);
    expect_request(w, "t1/2/coder", "{}");
}

static void partials_come_before_the_final(void **state)
{
    peer *w;

    (void)state;
    w = ready_worker("w1");
    assert_int_equal(tnd_broker_submit(broker, SERVICE, "k", "{}", 2), 0);
    expect_request(w, "k", "{}");
    send_worker(w, TND_MDPW_PARTIAL, "k", "{\"step\":1}");
    expect_event(TND_BROKER_PARTIAL, "k", "w1", "{\"step\":1}");
    assert_int_equal(tnd_broker_pending(broker, SERVICE), 1); /* not done */
    send_worker(w, TND_MDPW_PARTIAL, "k", "{\"step\":2}");
    send_worker(w, TND_MDPW_FINAL, "k", "{\"done\":true}");
    expect_event(TND_BROKER_PARTIAL, "k", "w1", "{\"step\":2}");
    expect_event(TND_BROKER_FINAL, "k", "w1", "{\"done\":true}");
    assert_int_equal(tnd_broker_pending(broker, SERVICE), 0);
}

static void least_recently_used_idle_worker_goes_first(void **state)
{
    peer *w1, *w2;

    (void)state;
    w1 = ready_worker("w1");
    w2 = ready_worker("w2");
    /* both idle: the one idle longer gets the first request */
    assert_int_equal(tnd_broker_submit(broker, SERVICE, "a", "{}", 2), 0);
    assert_int_equal(tnd_broker_submit(broker, SERVICE, "b", "{}", 2), 0);
    expect_request(w1, "a", "{}");
    expect_request(w2, "b", "{}");

    /* w2 finishes first, so it has been idle longer when c arrives */
    send_worker(w2, TND_MDPW_FINAL, "b", "{}");
    expect_event(TND_BROKER_FINAL, "b", "w2", "{}");
    pump_for(5); /* the clock moves on (ms resolution) */
    send_worker(w1, TND_MDPW_FINAL, "a", "{}");
    expect_event(TND_BROKER_FINAL, "a", "w1", "{}");
    assert_int_equal(tnd_broker_submit(broker, SERVICE, "c", "{}", 2), 0);
    expect_request(w2, "c", "{}");
    assert_int_equal(w1->ninbox, 0);

    /* a queued request waits for the first worker to come free */
    assert_int_equal(tnd_broker_submit(broker, SERVICE, "d", "{}", 2), 0);
    expect_request(w1, "d", "{}");
    assert_int_equal(tnd_broker_submit(broker, SERVICE, "e", "{}", 2), 0);
    pump_for(20);
    assert_int_equal(w1->ninbox + w2->ninbox, 0);
    send_worker(w1, TND_MDPW_FINAL, "d", "{}");
    expect_event(TND_BROKER_FINAL, "d", "w1", "{}");
    expect_request(w1, "e", "{}");
    assert_int_equal(w2->ninbox, 0);
}

/* ---- losing workers --------------------------------------------------- */

static void silent_worker_is_expired_and_its_request_goes_on(void **state)
{
    peer *w1, *w2;

    (void)state;
    w1 = ready_worker("w1");
    w2 = ready_worker("w2");
    assert_int_equal(tnd_broker_submit(broker, SERVICE, "k", "{\"n\":1}", 7),
                     0);
    expect_request(w1, "k", "{\"n\":1}"); /* w1 was idle longer */
    w1->beats = false;                    /* and now it hangs */

    /* after LIVENESS missed beats w1 is dead and w2 gets its request */
    expect_request(w2, "k", "{\"n\":1}");
    assert_int_equal(tnd_broker_workers(broker, SERVICE), 1);
    assert_int_equal(tnd_broker_pending(broker, SERVICE), 1);
    send_worker(w2, TND_MDPW_FINAL, "k", "{\"from\":2}");
    expect_event(TND_BROKER_FINAL, "k", "w2", "{\"from\":2}");

    /* w1 wakes up and answers: discarded, and w1 is told to start over */
    send_worker(w1, TND_MDPW_FINAL, "k", "{\"from\":1}");
    PUMP_UNTIL(w1->disconnects >= 1);
    pump_for(20);
    assert_int_equal(tnd_broker_pending(broker, SERVICE), 0);
    assert_int_equal(tnd_broker_workers(broker, SERVICE), 1);
}

static void late_final_still_awaited_is_taken(void **state)
{
    peer *w1, *w2;

    (void)state;
    w1 = ready_worker("w1");
    w2 = ready_worker("w2");
    assert_int_equal(tnd_broker_submit(broker, SERVICE, "k", "{}", 2), 0);
    expect_request(w1, "k", "{}");
    w1->beats = false;
    expect_request(w2, "k", "{}");

    /* requests are idempotent: the first answer wins, whoever sends it */
    send_worker(w1, TND_MDPW_FINAL, "k", "{\"from\":1}");
    expect_event(TND_BROKER_FINAL, "k", "w1", "{\"from\":1}");
    PUMP_UNTIL(w1->disconnects >= 1);
    /* w2 stays busy until its own FINAL, which is then discarded */
    assert_int_equal(tnd_broker_submit(broker, SERVICE, "next", "{}", 2), 0);
    pump_for(20);
    assert_int_equal(w2->ninbox, 0);
    send_worker(w2, TND_MDPW_FINAL, "k", "{\"from\":2}");
    expect_request(w2, "next", "{}");
}

static void busy_caller_does_not_expire_live_workers(void **state)
{
    tnd_broker_event ev;
    int64_t until;
    peer *w;

    (void)state;
    w = ready_worker("w1");
    assert_int_equal(tnd_broker_submit(broker, SERVICE, "k", "{}", 2), 0);
    expect_request(w, "k", "{}");

    /* The caller does other work (applies edits, writes the session) for
     * twice the liveness window without polling, while the agent keeps
     * beating. The naps stand for that work; they wait for nothing. */
    until = tnd_now_ms() + 2 * HEARTBEAT_MS * LIVENESS;
    while (tnd_now_ms() < until) {
        send_worker(w, TND_MDPW_HEARTBEAT, NULL, NULL);
        nap_ms(HEARTBEAT_MS / 2);
    }
    w->last_beat = tnd_now_ms();

    /* the heartbeats waiting in the socket still count */
    assert_int_equal(tnd_broker_poll(broker, &ev, 0), 0);
    assert_int_equal(tnd_broker_workers(broker, SERVICE), 1);
    send_worker(w, TND_MDPW_FINAL, "k", "{}");
    expect_event(TND_BROKER_FINAL, "k", "w1", "{}");
    assert_int_equal(w->disconnects, 0);
}

/* The broker itself away (its process stopped with Ctrl-Z) for longer
 * than the liveness window, the agent silent too meanwhile (it had
 * nobody to beat to): that is not the agent's silence. A tandem stopped
 * so killed every agent when it went on, before their beats could come. */
static void time_the_broker_was_away_is_no_silence(void **state)
{
    tnd_broker_event ev;
    peer *w;

    (void)state;
    w = ready_worker("w1");
    assert_int_equal(tnd_broker_submit(broker, SERVICE, "k", "{}", 2), 0);
    expect_request(w, "k", "{}");
    /* nobody polls, nobody beats: the nap is the time away */
    nap_ms(2 * HEARTBEAT_MS * LIVENESS);
    w->last_beat = tnd_now_ms();
    assert_int_equal(tnd_broker_poll(broker, &ev, 0), 0);
    assert_int_equal(tnd_broker_workers(broker, SERVICE), 1);
    send_worker(w, TND_MDPW_FINAL, "k", "{}");
    expect_event(TND_BROKER_FINAL, "k", "w1", "{}");
    assert_int_equal(w->disconnects, 0);
}

static void disconnect_mid_request_requeues_it(void **state)
{
    peer *w1, *w2;

    (void)state;
    w1 = ready_worker("w1");
    assert_int_equal(tnd_broker_submit(broker, SERVICE, "k", "{}", 2), 0);
    expect_request(w1, "k", "{}");
    send_worker(w1, TND_MDPW_DISCONNECT, NULL, NULL);
    w1->beats = false;
    PUMP_UNTIL(tnd_broker_workers(broker, SERVICE) == 0);
    assert_int_equal(tnd_broker_pending(broker, SERVICE), 1);

    w2 = ready_worker("w2");
    expect_request(w2, "k", "{}");
    send_worker(w2, TND_MDPW_FINAL, "k", "{}");
    expect_event(TND_BROKER_FINAL, "k", "w2", "{}");
    assert_int_equal(w1->disconnects, 0); /* it left; nothing to say */
}

static void worker_gone_requeues_at_once(void **state)
{
    tnd_broker_event ev;
    peer *w1, *w2;

    (void)state;
    w1 = ready_worker("w1");
    assert_int_equal(tnd_broker_submit(broker, SERVICE, "k", "{}", 2), 0);
    expect_request(w1, "k", "{}");
    assert_int_equal(tnd_broker_submit(broker, SERVICE, "later", "{}", 2), 0);
    w1->beats = false; /* its process exited */

    tnd_broker_worker_gone(broker, "nobody"); /* unknown: no effect */
    assert_int_equal(tnd_broker_workers(broker, SERVICE), 1);
    tnd_broker_worker_gone(broker, "w1");
    assert_int_equal(tnd_broker_workers(broker, SERVICE), 0);
    assert_int_equal(tnd_broker_pending(broker, SERVICE), 2);

    /* the lost request goes back to the front of the queue */
    assert_int_equal(tnd_broker_dispatches(broker, "k"), 1);
    w2 = ready_worker("w2");
    expect_request(w2, "k", "{}");
    assert_int_equal(tnd_broker_dispatches(broker, "k"), 2);
    send_worker(w2, TND_MDPW_FINAL, "k", "{}");
    /* the answer says w1 had it too: its work may have been paid for */
    next_event(&ev);
    assert_int_equal(ev.kind, TND_BROKER_FINAL);
    assert_string_equal(ev.worker, "w2");
    assert_int_equal(ev.dispatches, 2);
    tnd_broker_event_clear(&ev);
    assert_int_equal(tnd_broker_dispatches(broker, "k"), 0); /* answered */
    expect_request(w2, "later", "{}");
}

static void request_lost_too_often_fails(void **state)
{
    tnd_broker_event ev;
    peer *w1, *w2;

    (void)state;
    start_broker(2, 0);
    w1 = ready_worker("w1");
    assert_int_equal(tnd_broker_submit(broker, SERVICE, "k", "{}", 2), 0);
    expect_request(w1, "k", "{}");
    w1->beats = false;
    tnd_broker_worker_gone(broker, "w1"); /* lost once: requeued */
    assert_int_equal(tnd_broker_pending(broker, SERVICE), 1);

    w2 = ready_worker("w2");
    expect_request(w2, "k", "{}");
    w2->beats = false;
    tnd_broker_worker_gone(broker, "w2"); /* twice: that is the limit */
    assert_int_equal(tnd_broker_pending(broker, SERVICE), 0);

    next_event(&ev);
    assert_int_equal(ev.kind, TND_BROKER_FAILED);
    assert_string_equal(ev.key, "k");
    assert_string_equal(ev.worker, "");
    assert_null(ev.body);
    assert_non_null(ev.error);
    assert_non_null(strstr(ev.error, "request k was lost 2 times"));
    assert_non_null(strstr(ev.error, "worker w2 exited"));
    assert_non_null(strstr(ev.error, "giving up"));
    assert_int_equal(ev.dispatches, 2);
    tnd_broker_event_clear(&ev);
    assert_null(ev.error);
}

/* ---- protocol breaches ------------------------------------------------ */

/* A worker that reconnects with the same identity says READY again: it
 * stays registered, and what it held goes back on the queue (its old job
 * may have died with an earlier process). */
static void ready_again_reregisters_and_requeues(void **state)
{
    peer *w1;

    (void)state;
    w1 = ready_worker("w1");
    assert_int_equal(tnd_broker_submit(broker, SERVICE, "k", "{}", 2), 0);
    expect_request(w1, "k", "{}");
    send_worker(w1, TND_MDPW_READY, NULL, NULL);
    /* the request comes to it again, as to any idle worker */
    expect_request(w1, "k", "{}");
    assert_int_equal(w1->disconnects, 0);
    assert_int_equal(tnd_broker_workers(broker, SERVICE), 1);
    send_worker(w1, TND_MDPW_FINAL, "k", "{\"done\":1}");
    expect_event(TND_BROKER_FINAL, "k", "w1", "{\"done\":1}");
}

/* Issue 10: a FINAL under another address from the worker that holds a
 * request left that request waiting until the request timeout (30 min by
 * default). It is a broken worker: disconnected, the request requeued. */
static void a_final_for_another_request_drops_its_worker(void **state)
{
    peer *w1, *w2;

    (void)state;
    w1 = ready_worker("w1");
    assert_int_equal(tnd_broker_submit(broker, SERVICE, "k", "{}", 2), 0);
    expect_request(w1, "k", "{}");
    send_worker(w1, TND_MDPW_FINAL, "not-k", "{}");
    PUMP_UNTIL(w1->disconnects >= 1);
    assert_int_equal(tnd_broker_workers(broker, SERVICE), 0);
    assert_int_equal(tnd_broker_pending(broker, SERVICE), 1);
    w2 = ready_worker("w2");
    expect_request(w2, "k", "{}");
    send_worker(w2, TND_MDPW_FINAL, "k", "{}");
    expect_event(TND_BROKER_FINAL, "k", "w2", "{}");
}

/* An agent that thought the broker gone (the orchestrator's loop stalled
 * past its patience: a reset of a deep tree) sends its last FINAL again
 * when it reconnects; by then the broker may have given it the next
 * request. That resend is no stray answer: dropped, the worker kept (it
 * was disconnected, the next request requeued and paid for again). */
static void a_final_sent_again_keeps_its_worker(void **state)
{
    peer *w1;

    (void)state;
    w1 = ready_worker("w1");
    assert_int_equal(tnd_broker_submit(broker, SERVICE, "k1", "{}", 2), 0);
    expect_request(w1, "k1", "{}");
    send_worker(w1, TND_MDPW_FINAL, "k1", "{\"n\":1}");
    expect_event(TND_BROKER_FINAL, "k1", "w1", "{\"n\":1}");
    assert_int_equal(tnd_broker_submit(broker, SERVICE, "k2", "{}", 2), 0);
    expect_request(w1, "k2", "{}");
    send_worker(w1, TND_MDPW_FINAL, "k1", "{\"n\":1}");
    send_worker(w1, TND_MDPW_FINAL, "k2", "{\"n\":2}");
    expect_event(TND_BROKER_FINAL, "k2", "w1", "{\"n\":2}");
    assert_int_equal(w1->disconnects, 0);
    assert_int_equal(tnd_broker_workers(broker, SERVICE), 1);
}

/* A worker answers only what it was given: w1, holding k1, sent a FINAL
 * for k2, which w2 holds, and its answer was taken as k2's. It is a
 * broken or hostile worker: disconnected, its own request requeued, and
 * k2 still waits for w2. A worker not busy gets its stray answer
 * (PARTIAL or FINAL) discarded. */
static void an_answer_for_a_request_never_given_is_refused(void **state)
{
    peer *w1, *w2, *w3;

    (void)state;
    w1 = ready_worker("w1");
    assert_int_equal(tnd_broker_submit(broker, SERVICE, "k1", "{}", 2), 0);
    expect_request(w1, "k1", "{}");
    w2 = ready_worker("w2");
    assert_int_equal(tnd_broker_submit(broker, SERVICE, "k2", "{}", 2), 0);
    expect_request(w2, "k2", "{}");
    send_worker(w1, TND_MDPW_FINAL, "k2", "{\"from\":1}");
    PUMP_UNTIL(w1->disconnects >= 1);
    w3 = ready_worker("w3");
    expect_request(w3, "k1", "{}");
    send_worker(w3, TND_MDPW_PARTIAL, "k2", "{\"from\":3}");
    send_worker(w2, TND_MDPW_FINAL, "k2", "{\"from\":2}");
    expect_event(TND_BROKER_FINAL, "k2", "w2", "{\"from\":2}");
    send_worker(w3, TND_MDPW_FINAL, "k1", "{}");
    expect_event(TND_BROKER_FINAL, "k1", "w3", "{}");

    /* nor does a peer that never said READY */
    w1 = connect_peer("stranger");
    assert_int_equal(tnd_broker_submit(broker, SERVICE, "k3", "{}", 2), 0);
    send_worker(w1, TND_MDPW_FINAL, "k3", "{\"from\":\"stranger\"}");
    PUMP_UNTIL(w1->disconnects >= 1);
    assert_int_equal(tnd_broker_pending(broker, SERVICE), 1);
}

/* Issue 10: a worker that acknowledged its request and then said nothing
 * more of it while it still beat (a FINAL too large to arrive, a job that
 * died) held the request until its timeout. Once acknowledged, silence on
 * the request for the liveness period drops the worker and requeues. A
 * worker that never acknowledged is judged by its heartbeats alone. */
static void a_request_acknowledged_then_left_is_given_up(void **state)
{
    tnd_broker_event ev;
    peer *w1, *w2;

    (void)state;
    w1 = ready_worker("w1");
    assert_int_equal(tnd_broker_submit(broker, SERVICE, "k", "{}", 2), 0);
    expect_request(w1, "k", "{}");
    pump_for(HEARTBEAT_MS * (LIVENESS + 2)); /* no ack: it may take long */
    assert_int_equal(w1->disconnects, 0);
    send_worker(w1, TND_MDPW_PARTIAL, "k", "{\"started\":1}");
    next_event(&ev); /* the acknowledgement reaches the caller */
    assert_int_equal(ev.kind, TND_BROKER_PARTIAL);
    tnd_broker_event_clear(&ev);
    /* it keeps beating, but says nothing more of k */
    PUMP_UNTIL(w1->disconnects >= 1);
    assert_int_equal(tnd_broker_pending(broker, SERVICE), 1);
    w2 = ready_worker("w2");
    expect_request(w2, "k", "{}");
    send_worker(w2, TND_MDPW_FINAL, "k", "{}");
    expect_event(TND_BROKER_FINAL, "k", "w2", "{}");
}

/* A worker whose reply cannot be used is dropped by name; what it held
 * goes back on the queue. */
static void a_dropped_worker_is_told_and_forgotten(void **state)
{
    peer *w1;

    (void)state;
    w1 = ready_worker("w1");
    assert_int_equal(tnd_broker_submit(broker, SERVICE, "k", "{}", 2), 0);
    expect_request(w1, "k", "{}");
    tnd_broker_drop_worker(broker, "nobody", "unknown: no effect");
    assert_int_equal(tnd_broker_workers(broker, SERVICE), 1);
    tnd_broker_drop_worker(broker, "w1", "its reply was not valid");
    assert_int_equal(tnd_broker_workers(broker, SERVICE), 0);
    assert_int_equal(tnd_broker_pending(broker, SERVICE), 1);
    PUMP_UNTIL(w1->disconnects >= 1);
}

static void a_broker_command_from_a_worker_is_disconnected(void **state)
{
    peer *w2;

    (void)state;
    w2 = ready_worker("w2");
    send_worker(w2, TND_MDPW_REQUEST, "k", "{}");
    PUMP_UNTIL(w2->disconnects >= 1);
    assert_int_equal(tnd_broker_workers(broker, SERVICE), 0);
}

static void one_leading_empty_frame_is_accepted(void **state)
{
    peer *p;

    (void)state;
    p = connect_peer("old-style");
    SEND_FRAMES(p, F(""), F("MDPW02"), F("\x01"), F(SERVICE));
    p->beats = true;
    PUMP_UNTIL(tnd_broker_workers(broker, SERVICE) == 1);
    assert_int_equal(tnd_broker_submit(broker, SERVICE, "k", "{}", 2), 0);
    expect_request(p, "k", "{}");
    SEND_FRAMES(p, F(""), F("MDPW02"), F("\x04"), F("k"), F(""), F("{}"));
    expect_event(TND_BROKER_FINAL, "k", "old-style", "{}");
}

static void malformed_messages_are_dropped(void **state)
{
    peer *x, *w1, *w2;

    (void)state;
    /* a stranger's garbage is dropped ... */
    x = connect_peer("x");
    SEND_FRAMES(x, F("hello"));
    SEND_FRAMES(x, F("MDPW01"), F("\x01"), F(SERVICE));
    SEND_FRAMES(x, F("MDPW02"), F("\x01\x00"), F(SERVICE));
    SEND_FRAMES(x, F("MDPW02"), F("\x01"), F("two words"));
    SEND_FRAMES(x, F("MDPC02"), F("\x01"), F(""), F("{}"));
    SEND_FRAMES(x, F("MDPW02"), F("\x09"));
    /* ... and its heartbeat, from a peer never READY, gets DISCONNECT;
     * peers' messages arrive in order, so all of the above was read */
    send_worker(x, TND_MDPW_HEARTBEAT, NULL, NULL);
    PUMP_UNTIL(x->disconnects >= 1);
    assert_int_equal(x->ninbox, 0);
    assert_int_equal(tnd_broker_workers(broker, SERVICE), 0);
    assert_int_equal(tnd_broker_pending(broker, SERVICE), 0);

    /* a known worker that sends garbage is disconnected; its request
     * goes on to another */
    w1 = ready_worker("w1");
    assert_int_equal(tnd_broker_submit(broker, SERVICE, "k", "{}", 2), 0);
    expect_request(w1, "k", "{}");
    SEND_FRAMES(w1, F("MDPW02"), F("\x04"), F("k"), F(""), F("{\"a\":"),
                F("1}"));
    PUMP_UNTIL(w1->disconnects >= 1);
    assert_int_equal(tnd_broker_workers(broker, SERVICE), 0);
    assert_int_equal(tnd_broker_pending(broker, SERVICE), 1);

    /* the broker keeps working */
    w2 = ready_worker("w2");
    expect_request(w2, "k", "{}");
    send_worker(w2, TND_MDPW_FINAL, "k", "{\"ok\":1}");
    expect_event(TND_BROKER_FINAL, "k", "w2", "{\"ok\":1}");
}

/* ---- the caller's side ------------------------------------------------ */

static void cancelled_request_reply_is_discarded(void **state)
{
    peer *w;

    (void)state;
    w = ready_worker("w1");
    assert_int_equal(tnd_broker_submit(broker, SERVICE, "a", "{}", 2), 0);
    expect_request(w, "a", "{}");
    assert_int_equal(tnd_broker_dispatches(broker, "a"), 1);
    assert_int_equal(tnd_broker_cancel(broker, "a"), 0);
    assert_int_equal(tnd_broker_dispatches(broker, "a"), 0);
    assert_int_equal(tnd_broker_cancel(broker, "a"), TND_ENOTFOUND);
    assert_int_equal(tnd_broker_cancel(broker, "never"), TND_ENOTFOUND);
    assert_int_equal(tnd_broker_pending(broker, SERVICE), 0);

    /* the worker is still at work on a: b waits */
    assert_int_equal(tnd_broker_submit(broker, SERVICE, "b", "{\"b\":1}", 7),
                     0);
    pump_for(3 * HEARTBEAT_MS);
    assert_int_equal(w->ninbox, 0);
    assert_int_equal(tnd_broker_pending(broker, SERVICE), 1);

    /* a's answer frees the worker and is dropped (take() fails on any
     * event), then b goes out */
    send_worker(w, TND_MDPW_FINAL, "a", "{\"a\":1}");
    expect_request(w, "b", "{\"b\":1}");
    send_worker(w, TND_MDPW_FINAL, "b", "{}");
    expect_event(TND_BROKER_FINAL, "b", "w1", "{}");

    /* a queued request can be cancelled too */
    assert_int_equal(tnd_broker_submit(broker, "reviewer", "c", "{}", 2), 0);
    assert_int_equal(tnd_broker_pending(broker, "reviewer"), 1);
    assert_int_equal(tnd_broker_dispatches(broker, "c"), 0); /* not sent */
    assert_int_equal(tnd_broker_cancel(broker, "c"), 0);
    assert_int_equal(tnd_broker_pending(broker, "reviewer"), 0);
}

/* tandem run: a client may not drive the agents. A request for an agent
 * service is answered with an error and never reaches a worker; what
 * only a broker sends is ignored. */
static void client_requests_for_agents_are_refused(void **state)
{
    peer *w, *c;
    tnd_mdp_msg m;

    (void)state;
    w = ready_worker("w1");
    c = connect_peer("c1");
    tnd_mdp_msg_init(&m, false, TND_MDPC_REQUEST, SERVICE);
    m.body = tnd_xstrdup("{\"q\":1}");
    m.body_len = 7;
    send_msg(c, &m);

    take(&m, c);
    assert_false(m.worker);
    assert_int_equal(m.command, TND_MDPC_FINAL);
    assert_string_equal(m.service, SERVICE);
    assert_non_null(strstr(m.body, "\"type\":\"error\""));
    /* a client body, with the kind a client reads (PROTOCOL.md) */
    assert_non_null(strstr(m.body, "\"kind\":\"bad_request\""));
    assert_non_null(strstr(m.body, "tandem's own sessions only"));
    tnd_mdp_msg_clear(&m);
    pump_for(20);
    assert_int_equal(tnd_broker_pending(broker, SERVICE), 0);
    assert_int_equal(w->ninbox, 0);

    /* nor any other service: a run serves no client (a request for a
     * service no agent served was queued for ever, body and all) */
    tnd_mdp_msg_init(&m, false, TND_MDPC_REQUEST, "nobody.serves.this");
    m.body = tnd_xstrdup("{\"q\":2}");
    m.body_len = 7;
    send_msg(c, &m);
    take(&m, c);
    assert_int_equal(m.command, TND_MDPC_FINAL);
    assert_non_null(strstr(m.body, "a tandem run takes no client's request"));
    tnd_mdp_msg_clear(&m);
    assert_int_equal(tnd_broker_pending(broker, "nobody.serves.this"), 0);

    /* a client may not send what only a broker sends: ignored */
    tnd_mdp_msg_init(&m, false, TND_MDPC_FINAL, SERVICE);
    send_msg(c, &m);
    pump_for(20);
    assert_int_equal(tnd_broker_pending(broker, SERVICE), 0);
    assert_int_equal(w->ninbox + c->ninbox, 0);
}

/* tandem serve: a client's request is the caller's to answer, whatever
 * the service; it never reaches an agent. */
static void client_requests_go_to_the_caller_when_asked(void **state)
{
    tnd_broker_event ev;
    peer *w, *c;
    tnd_mdp_msg m;

    (void)state;
    clients_mode = true;
    start_broker(0, 0);
    clients_mode = false;
    w = ready_worker("w1");
    c = connect_peer("c1");
    tnd_mdp_msg_init(&m, false, TND_MDPC_REQUEST, SERVICE);
    m.body = tnd_xstrdup("{\"q\":1}");
    m.body_len = 7;
    send_msg(c, &m);
    next_event(&ev);
    assert_int_equal(ev.kind, TND_BROKER_CLIENT);
    assert_string_equal(ev.key, "c1");
    assert_string_equal(ev.service, SERVICE);
    assert_int_equal(ev.client_len, 2);
    assert_memory_equal(ev.client, "c1", 2);
    assert_string_equal(ev.body, "{\"q\":1}");
    assert_int_equal(tnd_broker_pending(broker, SERVICE), 0);

    assert_int_equal(tnd_broker_client_send(broker, ev.client, ev.client_len,
                                            ev.service, false, "{\"p\":1}", 7),
                     0);
    assert_int_equal(tnd_broker_client_send(broker, ev.client, ev.client_len,
                                            ev.service, true, "{\"f\":1}", 7),
                     0);
    take(&m, c);
    assert_false(m.worker);
    assert_int_equal(m.command, TND_MDPC_PARTIAL);
    assert_string_equal(m.service, SERVICE);
    assert_string_equal(m.body, "{\"p\":1}");
    tnd_mdp_msg_clear(&m);
    take(&m, c);
    assert_int_equal(m.command, TND_MDPC_FINAL);
    assert_string_equal(m.body, "{\"f\":1}");
    tnd_mdp_msg_clear(&m);
    tnd_broker_event_clear(&ev);
    assert_int_equal(w->ninbox, 0);
}

static void submit_checks_its_input(void **state)
{
    char key[TND_BROKER_MAX_KEY + 2];
    char *big;

    (void)state;
    assert_int_equal(tnd_broker_submit(broker, SERVICE, "k", "{}", 2), 0);
    assert_int_equal(tnd_broker_submit(broker, SERVICE, "k", "{}", 2), -1);
    assert_string_equal(tnd_error_last(), "request k is already outstanding");
    assert_int_equal(tnd_broker_pending(broker, SERVICE), 1);

    assert_int_equal(tnd_broker_submit(broker, SERVICE, "", "{}", 2), -1);
    assert_string_equal(tnd_error_last(), "request key must be 1..128 bytes");
    memset(key, 'k', sizeof(key));
    key[TND_BROKER_MAX_KEY] = '\0';
    assert_int_equal(tnd_broker_submit(broker, SERVICE, key, "{}", 2), 0);
    key[TND_BROKER_MAX_KEY] = 'k';
    key[TND_BROKER_MAX_KEY + 1] = '\0';
    assert_int_equal(tnd_broker_submit(broker, SERVICE, key, "{}", 2), -1);

    big = malloc(TND_MDP_MAX_BODY + 1);
    assert_non_null(big);
    assert_int_equal(
        tnd_broker_submit(broker, SERVICE, "big", big, TND_MDP_MAX_BODY + 1),
        -1);
    assert_non_null(strstr(tnd_error_last(), "more than the limit"));
    free(big);
    assert_int_equal(tnd_broker_pending(broker, SERVICE), 2);
}

static void queue_is_bounded(void **state)
{
    (void)state;
    start_broker(0, 2);
    assert_int_equal(tnd_broker_submit(broker, SERVICE, "a", "{}", 2), 0);
    assert_int_equal(tnd_broker_submit(broker, "reviewer", "b", "{}", 2), 0);
    assert_int_equal(tnd_broker_submit(broker, SERVICE, "c", "{}", 2), -1);
    assert_string_equal(tnd_error_last(),
                        "the broker queue is full (2 requests)");
    assert_int_equal(tnd_broker_cancel(broker, "a"), 0);
    assert_int_equal(tnd_broker_submit(broker, SERVICE, "c", "{}", 2), 0);
}

/* The agent registered for a service none of the given ones: how a
 * run waiting for "reviewer" names one started with --service
 * reviewer.1 (it said only that it waited). */
static void a_worker_for_another_service_is_named(void **state)
{
    const char *asked[] = {SERVICE, "reviewer", NULL};
    const char *its = NULL;

    (void)state;
    ready_worker_for("c1", SERVICE);
    assert_null(tnd_broker_worker_elsewhere(broker, asked, &its));
    ready_worker_for("m1", "reviewer.1");
    assert_string_equal(tnd_broker_worker_elsewhere(broker, asked, &its), "m1");
    assert_string_equal(its, "reviewer.1");
}

/* The services a run asks, made in one place for tandem run and tandem
 * serve: the coder's (unless it has none), and the reviewer's or, with
 * a quorum, one per member. */
static void a_worker_for_a_service_not_asked_is_named(void **state)
{
    const char *its = NULL;

    (void)state;
    ready_worker_for("c1", SERVICE);
    ready_worker_for("m1", "reviewer.1");
    assert_null(tnd_broker_worker_unasked(broker, true, 2, &its));
    assert_string_equal(tnd_broker_worker_unasked(broker, true, 1, &its), "m1");
    assert_string_equal(its, "reviewer.1");
    ready_worker_for("r1", "reviewer");
    assert_string_equal(tnd_broker_worker_unasked(broker, false, 3, &its),
                        "c1");
    assert_string_equal(its, SERVICE);
}

static void counts_are_per_service(void **state)
{
    (void)state;
    ready_worker_for("c1", SERVICE);
    ready_worker_for("r1", "reviewer");
    ready_worker_for("r2", "reviewer");
    assert_int_equal(tnd_broker_workers(broker, SERVICE), 1);
    assert_int_equal(tnd_broker_workers(broker, "reviewer"), 2);
    assert_int_equal(tnd_broker_workers(broker, "tester"), 0);

    /* in flight and queued both count */
    assert_int_equal(tnd_broker_submit(broker, SERVICE, "a", "{}", 2), 0);
    assert_int_equal(tnd_broker_submit(broker, SERVICE, "b", "{}", 2), 0);
    assert_int_equal(tnd_broker_submit(broker, "tester", "c", "{}", 2), 0);
    pump_for(20);
    assert_int_equal(tnd_broker_pending(broker, SERVICE), 2);
    assert_int_equal(tnd_broker_pending(broker, "tester"), 1);
    assert_int_equal(tnd_broker_pending(broker, "reviewer"), 0);
}

/* ---- heartbeats and shutdown ------------------------------------------ */

static void idle_workers_get_heartbeats_and_stay(void **state)
{
    peer *w;

    (void)state;
    w = ready_worker("w1");
    /* more beats than the liveness window holds: it is kept alive */
    PUMP_UNTIL(w->heartbeats >= LIVENESS + 1);
    assert_int_equal(w->disconnects, 0);
    assert_int_equal(w->ninbox, 0);
    assert_int_equal(tnd_broker_workers(broker, SERVICE), 1);
}

static void destroy_tells_workers_to_disconnect(void **state)
{
    int64_t deadline;
    peer *w1, *w2;

    (void)state;
    w1 = ready_worker("w1");
    w2 = ready_worker("w2");
    assert_int_equal(tnd_broker_submit(broker, SERVICE, "k", "{}", 2), 0);
    expect_request(w1, "k", "{}");
    tnd_broker_destroy(&broker);
    assert_null(broker);
    tnd_broker_destroy(&broker); /* NULL: fine */

    deadline = tnd_now_ms() + DEADLINE_MS;
    while (w1->disconnects == 0 || w2->disconnects == 0) {
        zmq_pollitem_t items[] = {{w1->socket, 0, ZMQ_POLLIN, 0},
                                  {w2->socket, 0, ZMQ_POLLIN, 0}};
        assert_true(zmq_poll(items, 2, 50) >= 0);
        collect(w1);
        collect(w2);
        assert_true(tnd_now_ms() < deadline);
    }
}

static void endpoint_and_bind_errors(void **state)
{
    char bad[PATH_MAX + 32];
    tnd_broker_options o = {.heartbeat_ms = HEARTBEAT_MS};
    tnd_broker *b;

    (void)state;
    assert_string_equal(tnd_broker_endpoint(broker), endpoint);

    snprintf(bad, sizeof(bad), "ipc://%s/no-such-dir/b.ipc", tmpdir);
    o.endpoint = bad;
    assert_null(tnd_broker_new(&o));
    assert_memory_equal(tnd_error_last(), "cannot bind ipc://", 18);
    assert_non_null(strstr(tnd_error_last(), "no-such-dir/b.ipc"));
    /* the user's to fix: exit 2 for whoever made the broker */
    assert_true(tnd_error_is_config());

    /* a tcp port chosen by the system is resolved */
    o.endpoint = "tcp://127.0.0.1:*";
    b = tnd_broker_new(&o);
    assert_non_null(b);
    assert_memory_equal(tnd_broker_endpoint(b), "tcp://127.0.0.1:", 16);
    assert_null(strchr(tnd_broker_endpoint(b), '*'));

    /* a port taken, and an endpoint another broker listens on, are
     * configuration errors too (a second server exited 1) */
    snprintf(bad, sizeof(bad), "%s", tnd_broker_endpoint(b));
    o.endpoint = bad;
    assert_null(tnd_broker_new(&o));
    assert_non_null(strstr(tnd_error_last(), "another process listens there"));
    assert_true(tnd_error_is_config());
    o.endpoint = endpoint;
    assert_null(tnd_broker_new(&o));
    assert_true(tnd_error_is_config());
    tnd_error_set("another error");
    assert_false(tnd_error_is_config());
    tnd_broker_destroy(&b);
    assert_null(b);
}

/* ---- fixture ---------------------------------------------------------- */

static int start(void **state)
{
    (void)state;
    npeers = 0;
    start_broker(0, 0);
    return 0;
}

static int stop(void **state)
{
    (void)state;
    for (size_t i = 0; i < npeers; i++) {
        for (size_t j = 0; j < peers[i].ninbox; j++)
            tnd_mdp_msg_clear(&peers[i].inbox[j]);
        zmq_close(peers[i].socket);
    }
    npeers = 0;
    tnd_broker_destroy(&broker);
    return 0;
}

static int setup(void **state)
{
    (void)state;
    if (!mkdtemp(tmpdir))
        return -1;
    snprintf(endpoint, sizeof(endpoint), "ipc://%s/broker.ipc", tmpdir);
    tnd_log_init("test_broker", TND_LOG_ERROR);
    ctx = zmq_ctx_new();
    return ctx ? 0 : -1;
}

static int teardown(void **state)
{
    char path[PATH_MAX + 16];

    (void)state;
    zmq_ctx_term(ctx);
    snprintf(path, sizeof(path), "%s/broker.ipc", tmpdir);
    unlink(path);
    return rmdir(tmpdir);
}

#define TEST(f) cmocka_unit_test_setup_teardown(f, start, stop)

int main(void)
{
    const struct CMUnitTest tests[] = {
        TEST(request_goes_to_a_worker_and_its_final_comes_back),
        TEST(partials_come_before_the_final),
        TEST(least_recently_used_idle_worker_goes_first),
        TEST(silent_worker_is_expired_and_its_request_goes_on),
        TEST(time_the_broker_was_away_is_no_silence),
        TEST(late_final_still_awaited_is_taken),
        TEST(busy_caller_does_not_expire_live_workers),
        TEST(disconnect_mid_request_requeues_it),
        TEST(worker_gone_requeues_at_once),
        TEST(request_lost_too_often_fails),
        TEST(ready_again_reregisters_and_requeues),
        TEST(a_final_sent_again_keeps_its_worker),
        TEST(a_final_for_another_request_drops_its_worker),
        TEST(an_answer_for_a_request_never_given_is_refused),
        TEST(a_dropped_worker_is_told_and_forgotten),
        TEST(a_request_acknowledged_then_left_is_given_up),
        TEST(a_broker_command_from_a_worker_is_disconnected),
        TEST(one_leading_empty_frame_is_accepted),
        TEST(malformed_messages_are_dropped),
        TEST(cancelled_request_reply_is_discarded),
        TEST(client_requests_for_agents_are_refused),
        TEST(client_requests_go_to_the_caller_when_asked),
        TEST(submit_checks_its_input),
        TEST(queue_is_bounded),
        TEST(counts_are_per_service),
        TEST(a_worker_for_another_service_is_named),
        TEST(a_worker_for_a_service_not_asked_is_named),
        TEST(idle_workers_get_heartbeats_and_stay),
        TEST(destroy_tells_workers_to_disconnect),
        TEST(endpoint_and_bind_errors),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}
