/* Unit tests for proto/linewatch: a connection that ends is seen, one
 * that stays is not, and a peer coming back is seen as the end of the
 * old connection (a ROUTER then knows the client as a new peer). Real
 * ipc:// sockets in a directory of this test's. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zmq.h>

#include "common/clock.h"
#include "common/fs.h"
#include "proto/linewatch.h"
#include "tests/unit/zap_answer.h"

static char tmpdir[] = "/tmp/tnd-test-linewatch-XXXXXX"; /* mkdtemp's */
static char endpoint[128];

typedef struct line {
    void *ctx, *router, *dealer;
    tnd_linewatch *watch;
} line;

static void *router_on(void *ctx)
{
    void *r = zmq_socket(ctx, ZMQ_ROUTER);
    int linger = 0;

    assert_non_null(r);
    zmq_setsockopt(r, ZMQ_LINGER, &linger, sizeof(linger));
    assert_int_equal(zmq_bind(r, endpoint), 0);
    return r;
}

/* A message from the dealer reaches the router within 5 s: connected. */
static void round_trip(line *l)
{
    char buf[16];
    zmq_pollitem_t item = {l->router, 0, ZMQ_POLLIN, 0};

    assert_int_equal(zmq_send(l->dealer, "hi", 2, 0), 2);
    assert_int_equal(zmq_poll(&item, 1, 5000), 1);
    assert_true(zmq_recv(l->router, buf, sizeof(buf), 0) > 0); /* its id */
    assert_int_equal(zmq_recv(l->router, buf, sizeof(buf), 0), 2);
}

/* Whether the watch says broke within ms. */
static bool broke_within(line *l, int ms)
{
    int64_t until = tnd_now_ms() + ms;

    do {
        zmq_pollitem_t item = {tnd_linewatch_socket(l->watch), 0, ZMQ_POLLIN,
                               0};
        if (tnd_linewatch_broke(l->watch))
            return true;
        zmq_poll(&item, 1, 50);
    } while (tnd_now_ms() < until);
    return tnd_linewatch_broke(l->watch);
}

static int setup(void **state)
{
    line *l = calloc(1, sizeof(*l));
    int linger = 0;

    l->ctx = zmq_ctx_new();
    l->router = router_on(l->ctx);
    l->dealer = zmq_socket(l->ctx, ZMQ_DEALER);
    zmq_setsockopt(l->dealer, ZMQ_LINGER, &linger, sizeof(linger));
    l->watch = tnd_linewatch_new(l->ctx, l->dealer);
    if (!l->watch || zmq_connect(l->dealer, endpoint) < 0)
        return -1;
    *state = l;
    return 0;
}

static int teardown(void **state)
{
    line *l = *state;

    tnd_linewatch_destroy(&l->watch);
    assert_null(l->watch);
    zmq_close(l->dealer);
    if (l->router)
        zmq_close(l->router);
    zmq_ctx_term(l->ctx);
    free(l);
    return 0;
}

static void test_a_line_that_stays_is_not_broken(void **state)
{
    line *l = *state;

    round_trip(l);
    assert_false(broke_within(l, 200));
    round_trip(l);
    assert_false(tnd_linewatch_broke(l->watch));
}

static void test_a_peer_that_goes_is_seen(void **state)
{
    line *l = *state;

    round_trip(l);
    zmq_close(l->router);
    l->router = NULL;
    assert_true(broke_within(l, 5000));
    /* said once */
    assert_false(tnd_linewatch_broke(l->watch));
}

static void test_a_peer_that_comes_back_is_seen(void **state)
{
    line *l = *state;

    round_trip(l);
    zmq_close(l->router);
    l->router = router_on(l->ctx);
    assert_true(broke_within(l, 5000));
    /* the dealer reconnects by itself; the watch goes on */
    round_trip(l);
    assert_false(tnd_linewatch_broke(l->watch));
    zmq_close(l->router);
    l->router = NULL;
    assert_true(broke_within(l, 5000));
}

/* A server whose ZAP handler (answering here) refuses every peer with
 * 400: the watch says refused, with that code, and the line is broken.
 * A client saw only a server that never answers. */
static void test_a_key_the_peer_refuses_is_seen(void **state)
{
    void *c = zmq_ctx_new(), *zap = zmq_socket(c, ZMQ_REP),
         *r = zmq_socket(c, ZMQ_ROUTER), *d = zmq_socket(c, ZMQ_DEALER);
    char server_pub[41], server_sec[41], pub[41], sec[41];
    int on = 1, linger = 0, asked = 0;
    int64_t until = tnd_now_ms() + 5000;
    tnd_linewatch *w;

    (void)state;
    assert_int_equal(zmq_curve_keypair(server_pub, server_sec), 0);
    assert_int_equal(zmq_curve_keypair(pub, sec), 0);
    zmq_setsockopt(d, ZMQ_LINGER, &linger, sizeof(linger));
    zmq_setsockopt(r, ZMQ_LINGER, &linger, sizeof(linger));
    zmq_setsockopt(zap, ZMQ_LINGER, &linger, sizeof(linger));
    assert_int_equal(zmq_bind(zap, "inproc://zeromq.zap.01"), 0);
    zmq_setsockopt(r, ZMQ_CURVE_SERVER, &on, sizeof(on));
    zmq_setsockopt(r, ZMQ_CURVE_SECRETKEY, server_sec, 40);
    assert_int_equal(zmq_bind(r, endpoint), 0);
    zmq_setsockopt(d, ZMQ_CURVE_SERVERKEY, server_pub, 40);
    zmq_setsockopt(d, ZMQ_CURVE_PUBLICKEY, pub, 40);
    zmq_setsockopt(d, ZMQ_CURVE_SECRETKEY, sec, 40);
    assert_non_null(w = tnd_linewatch_new(c, d));
    assert_int_equal(tnd_linewatch_refused(w), 0);
    assert_int_equal(zmq_connect(d, endpoint), 0);
    while (!tnd_linewatch_refused(w) && tnd_now_ms() < until) {
        zmq_pollitem_t items[2] = {{zap, 0, ZMQ_POLLIN, 0},
                                   {tnd_linewatch_socket(w), 0, ZMQ_POLLIN, 0}};
        zmq_poll(items, 2, 100);
        if (items[0].revents & ZMQ_POLLIN) {
            zap_answer(zap, "400", "no", "", NULL, 0);
            asked++;
        }
        tnd_linewatch_broke(w);
    }
    assert_true(asked >= 1);
    assert_int_equal(tnd_linewatch_refused(w), 400);
    tnd_linewatch_destroy(&w);
    zmq_close(d);
    zmq_close(r);
    zmq_close(zap);
    zmq_ctx_term(c);
}

static void test_destroy_null(void **state)
{
    tnd_linewatch *w = NULL;

    (void)state;
    tnd_linewatch_destroy(&w);
    assert_null(w);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_a_line_that_stays_is_not_broken,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_a_peer_that_goes_is_seen, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_a_peer_that_comes_back_is_seen,
                                        setup, teardown),
        cmocka_unit_test(test_a_key_the_peer_refuses_is_seen),
        cmocka_unit_test(test_destroy_null),
    };
    int rc;

    if (!mkdtemp(tmpdir))
        return 1;
    snprintf(endpoint, sizeof(endpoint), "ipc://%s/s.sock", tmpdir);
    rc = cmocka_run_group_tests(tests, NULL, NULL);
    tnd_fs_rmtree(tmpdir);
    return rc;
}
