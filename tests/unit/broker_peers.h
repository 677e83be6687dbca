/* A real broker and fake peers, for the unit tests of orchestrator/broker
 * and the sources it is split into (test_broker.c, test_broker_time.c,
 * test_broker_client.c, test_broker_bind.c).
 *
 * The broker binds an ipc:// socket in a temporary directory, with a
 * short heartbeat. Fake agents and clients are DEALER sockets driven from
 * this thread: each step (pump) lets the beating peers heartbeat, lets
 * every peer collect what the broker sent it, and runs the broker for a
 * few milliseconds. Every wait is a loop with a deadline. A case runs
 * as TEST(f): a broker started before it and stopped after, its peers
 * closed; broker_setup and broker_teardown are the group's. Included by
 * the test files that need it; static, so each has its own copy. */
#ifndef TND_TEST_BROKER_PEERS_H
#define TND_TEST_BROKER_PEERS_H

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

static inline void nap_ms(long ms)
{
    struct timespec ts = {0, ms * 1000000L};

    nanosleep(&ts, NULL);
}

static bool clients_mode; /* the next broker hands client requests over */

static inline void start_broker(int max_dispatches, size_t max_queue)
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
static inline peer *connect_peer(const char *name)
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

static inline void send_msg(peer *p, tnd_mdp_msg *m)
{
    assert_int_equal(tnd_mdp_send(p->socket, NULL, 0, m), 0);
    tnd_mdp_msg_clear(m);
}

/* An MDP/Worker command from p. READY is for service; REQUEST, PARTIAL
 * and FINAL carry key as the address, and body. */
static inline void send_worker(peer *p, int command, const char *key,
                               const char *body)
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

static inline void send_frames(peer *p, const tnd_frame *f, size_t n)
{
    for (size_t i = 0; i < n; i++)
        assert_true(zmq_send(p->socket, f[i].data, f[i].size,
                             i + 1 < n ? ZMQ_SNDMORE : 0) >= 0);
}

/* Read everything the broker sent p. A DISCONNECT ends its beating, as
 * it would end a real agent's connection. */
static inline void collect(peer *p)
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
static inline int pump(tnd_broker_event *ev)
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
static inline void pump_for(long ms)
{
    int64_t until = tnd_now_ms() + ms;

    PUMP_UNTIL(tnd_now_ms() >= until);
}

/* Pump until the broker reports an event. */
static inline void next_event(tnd_broker_event *ev)
{
    int64_t deadline = tnd_now_ms() + DEADLINE_MS;
    int rc;

    while ((rc = pump(ev)) == 0)
        if (tnd_now_ms() > deadline)
            fail_msg("no event within %d ms", DEADLINE_MS);
    assert_int_equal(rc, 1);
}

static inline void expect_event(tnd_broker_event_kind kind, const char *key,
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
static inline void take(tnd_mdp_msg *out, peer *p)
{
    PUMP_UNTIL(p->ninbox > 0);
    *out = p->inbox[0];
    memmove(&p->inbox[0], &p->inbox[1], --p->ninbox * sizeof(p->inbox[0]));
}

/* p must be handed the request key with body. */
static inline void expect_request(peer *p, const char *key, const char *body)
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
static inline peer *ready_worker_for(const char *name, const char *service)
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

static inline peer *ready_worker(const char *name)
{
    return ready_worker_for(name, SERVICE);
}

/* ---- fixture ---------------------------------------------------------- */

static inline int broker_start(void **state)
{
    (void)state;
    npeers = 0;
    start_broker(0, 0);
    return 0;
}

static inline int broker_stop(void **state)
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

static inline int broker_setup(void **state)
{
    (void)state;
    if (!mkdtemp(tmpdir))
        return -1;
    snprintf(endpoint, sizeof(endpoint), "ipc://%s/broker.ipc", tmpdir);
    tnd_log_init("test_broker", TND_LOG_ERROR);
    ctx = zmq_ctx_new();
    return ctx ? 0 : -1;
}

static inline int broker_teardown(void **state)
{
    char path[PATH_MAX + 16];

    (void)state;
    zmq_ctx_term(ctx);
    snprintf(path, sizeof(path), "%s/broker.ipc", tmpdir);
    unlink(path);
    return rmdir(tmpdir);
}

#define TEST(f) cmocka_unit_test_setup_teardown(f, broker_start, broker_stop)

#endif
