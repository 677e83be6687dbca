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
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <zmq.h>

#include "common/clock.h"
#include "common/fs.h"
#include "common/rmtree.h"
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

/* What a watch of a dealer says within 1.5 s of connecting to a server
 * that uses CURVE when server_curve, the dealer with server_key (NULL:
 * none; "right": the server's): tnd_linewatch_why's text, or "" for
 * NULL. A wrong server key, a missing one and a missing server all
 * read as "no answer; is it running?". */
static const char *why_after(bool server_curve, const char *server_key,
                             bool listen, bool *mismatch)
{
    static char said[512];
    void *c = zmq_ctx_new(), *r = zmq_socket(c, ZMQ_ROUTER),
         *d = zmq_socket(c, ZMQ_DEALER);
    char server_pub[41], server_sec[41], pub[41], sec[41];
    int on = 1, linger = 0;
    int64_t until = tnd_now_ms() + 1500;
    tnd_linewatch *w;
    const char *why;

    assert_int_equal(zmq_curve_keypair(server_pub, server_sec), 0);
    assert_int_equal(zmq_curve_keypair(pub, sec), 0);
    zmq_setsockopt(d, ZMQ_LINGER, &linger, sizeof(linger));
    zmq_setsockopt(r, ZMQ_LINGER, &linger, sizeof(linger));
    if (server_curve) {
        zmq_setsockopt(r, ZMQ_CURVE_SERVER, &on, sizeof(on));
        zmq_setsockopt(r, ZMQ_CURVE_SECRETKEY, server_sec, 40);
    }
    if (listen)
        assert_int_equal(zmq_bind(r, endpoint), 0);
    if (server_key) {
        zmq_setsockopt(d, ZMQ_CURVE_SERVERKEY,
                       strcmp(server_key, "right") == 0 ? server_pub : pub, 40);
        zmq_setsockopt(d, ZMQ_CURVE_PUBLICKEY, pub, 40);
        zmq_setsockopt(d, ZMQ_CURVE_SECRETKEY, sec, 40);
    }
    assert_non_null(w = tnd_linewatch_new(c, d));
    assert_int_equal(zmq_connect(d, endpoint), 0);
    zmq_send(d, "hi", 2, ZMQ_DONTWAIT);
    while (tnd_now_ms() < until) {
        zmq_pollitem_t item = {tnd_linewatch_socket(w), 0, ZMQ_POLLIN, 0};
        zmq_poll(&item, 1, 100);
        tnd_linewatch_broke(w);
        if (tnd_linewatch_mismatch(w))
            break; /* said for good */
    }
    why = tnd_linewatch_why(w, server_key != NULL);
    snprintf(said, sizeof(said), "%s", why ? why : "");
    *mismatch = tnd_linewatch_mismatch(w);
    tnd_linewatch_destroy(&w);
    zmq_close(d);
    zmq_close(r);
    zmq_ctx_term(c);
    return said;
}

static void test_why_a_server_never_answers_is_told(void **state)
{
    bool mismatch;

    (void)state;
    /* a handshake that succeeded: silence is the caller's to explain */
    assert_string_equal(why_after(true, "right", true, &mismatch), "");
    assert_false(mismatch);
    assert_non_null(
        strstr(why_after(true, "wrong", true, &mismatch), "--server-key"));
    assert_false(mismatch);
    assert_non_null(strstr(why_after(true, NULL, true, &mismatch),
                           "it uses CURVE: give the server's public key"));
    assert_true(mismatch);
    assert_non_null(strstr(why_after(false, "right", true, &mismatch),
                           "it does not use CURVE"));
    assert_true(mismatch);
    assert_non_null(strstr(why_after(false, NULL, false, &mismatch),
                           "nothing accepts a connection there"));
    assert_false(mismatch);
}

/* A peer whose kernel accepts the connection and which never speaks (a
 * server stopped with SIGSTOP): the handshake never ends, and that is
 * what is said, not a name in use or a wrong key. */
static void test_a_peer_that_never_shakes_hands_is_told(void **state)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    void *c = zmq_ctx_new(), *d = zmq_socket(c, ZMQ_DEALER);
    int fd = socket(AF_UNIX, SOCK_STREAM, 0), linger = 0;
    int64_t until = tnd_now_ms() + 1500;
    tnd_linewatch *w;
    const char *why;

    (void)state;
    snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", endpoint + 6);
    unlink(sa.sun_path);
    assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
    assert_int_equal(listen(fd, 4), 0);
    zmq_setsockopt(d, ZMQ_LINGER, &linger, sizeof(linger));
    assert_non_null(w = tnd_linewatch_new(c, d));
    assert_int_equal(zmq_connect(d, endpoint), 0);
    while (tnd_now_ms() < until) {
        zmq_pollitem_t item = {tnd_linewatch_socket(w), 0, ZMQ_POLLIN, 0};
        zmq_poll(&item, 1, 100);
        tnd_linewatch_broke(w);
    }
    why = tnd_linewatch_why(w, true);
    assert_non_null(why);
    assert_non_null(strstr(why, "never ended the handshake"));
    assert_false(tnd_linewatch_shook(w));
    tnd_linewatch_destroy(&w);
    zmq_close(d);
    zmq_ctx_term(c);
    close(fd);
    unlink(sa.sun_path);
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
        cmocka_unit_test(test_why_a_server_never_answers_is_told),
        cmocka_unit_test(test_a_peer_that_never_shakes_hands_is_told),
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
