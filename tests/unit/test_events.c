/* Unit tests for orchestrator/events: a session's event stream reaches a
 * watcher with the session's id added, from a context of its own (tandem
 * run) or from the caller's (tandem serve's sessions share the server's);
 * closing it leaves the caller's context to its owner, and an endpoint
 * that cannot be bound is an error naming it. */
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
#include "common/error.h"
#include "common/fs.h"
#include "common/log.h"
#include "common/rmtree.h"
#include "orchestrator/events.h"
#include "proto/json.h"

static char dir[] = "/tmp/tnd-test-events-XXXXXX";

static int setup(void **state)
{
    (void)state;
    tnd_log_init("test", TND_LOG_ERROR);
    return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    return tnd_fs_rmtree(dir);
}

/* Publish until a subscriber in its own context receives one event
 * (a SUB socket that has just connected misses the first ones), within
 * a deadline; the text received, which the caller frees. */
static char *received(tnd_events *e, const char *endpoint)
{
    void *ctx = zmq_ctx_new();
    void *sub = zmq_socket(ctx, ZMQ_SUB);
    json_object *ev = json_object_new_object();
    int64_t deadline = tnd_now_ms() + 10000;
    char buf[512], *text = NULL;
    int linger = 0;

    assert_non_null(sub);
    zmq_setsockopt(sub, ZMQ_LINGER, &linger, sizeof(linger));
    assert_int_equal(zmq_setsockopt(sub, ZMQ_SUBSCRIBE, "", 0), 0);
    assert_int_equal(zmq_connect(sub, endpoint), 0);
    json_object_object_add(ev, "type", json_object_new_string("phase"));
    while (!text && tnd_now_ms() < deadline) {
        zmq_pollitem_t item = {sub, 0, ZMQ_POLLIN, 0};

        tnd_events_publish(e, "20261125-070000-0a1b2c3d", ev);
        if (zmq_poll(&item, 1, 50) == 1) {
            int n = zmq_recv(sub, buf, sizeof(buf) - 1, 0);
            assert_true(n > 0);
            buf[n] = '\0';
            text = strdup(buf);
        }
    }
    json_object_put(ev);
    zmq_close(sub);
    zmq_ctx_term(ctx);
    if (!text)
        fail_msg("no event reached the subscriber on %s", endpoint);
    return text;
}

static void assert_is_the_event(const char *text)
{
    assert_non_null(strstr(text, "\"session\":\"20261125-070000-0a1b2c3d\""));
    assert_non_null(strstr(text, "\"type\":\"phase\""));
}

static void a_watcher_gets_events_from_a_context_of_its_own(void **state)
{
    char ep[128], *text;
    tnd_events *e;

    (void)state;
    snprintf(ep, sizeof(ep), "ipc://%s/own.sock", dir);
    e = tnd_events_new(NULL, ep);
    assert_non_null(e);
    assert_string_equal(tnd_events_endpoint(e), ep);
    text = received(e, ep);
    assert_is_the_event(text);
    free(text);
    tnd_events_destroy(&e);
    assert_null(e);
}

/* Events are only built while someone watches (the XPUB counts the
 * subscriptions): a watcher that comes after another left gets them as
 * the first did. */
static void a_watcher_after_one_that_left_gets_events(void **state)
{
    char ep[128], *text;
    tnd_events *e;

    (void)state;
    snprintf(ep, sizeof(ep), "ipc://%s/again.sock", dir);
    e = tnd_events_new(NULL, ep);
    assert_non_null(e);
    for (int i = 0; i < 3; i++) {
        text = received(e, ep);
        assert_is_the_event(text);
        free(text);
    }
    tnd_events_destroy(&e);
}

/* A peer of the XPUB may send it messages of its own, not
 * subscriptions: an empty one ended the reading of what came, and each
 * event read only as far as the next, so a watcher that subscribed after
 * a peer had sent many got no event for as many events. */
static void empty_messages_hold_no_subscription_back(void **state)
{
    void *ctx = zmq_ctx_new(), *peer = zmq_socket(ctx, ZMQ_XSUB);
    json_object *ev = json_object_new_object();
    int64_t deadline = tnd_now_ms() + 5000;
    int linger = 0, hwm = 0;
    char ep[128], buf[512], *text = NULL;
    tnd_events *e;

    (void)state;
    snprintf(ep, sizeof(ep), "ipc://%s/empty.sock", dir);
    e = tnd_events_new(NULL, ep);
    assert_non_null(e);
    assert_non_null(peer);
    zmq_setsockopt(peer, ZMQ_LINGER, &linger, sizeof(linger));
    zmq_setsockopt(peer, ZMQ_SNDHWM, &hwm, sizeof(hwm));
    assert_int_equal(zmq_connect(peer, ep), 0);
    for (int i = 0; i < 5000; i++)
        assert_int_equal(zmq_send(peer, "", 0, 0), 0);
    assert_int_equal(zmq_send(peer, "\x01", 1, 0), 1); /* everything */
    json_object_object_add(ev, "type", json_object_new_string("phase"));
    while (!text && tnd_now_ms() < deadline) {
        zmq_pollitem_t item = {peer, 0, ZMQ_POLLIN, 0};

        tnd_events_publish(e, "20261125-070000-0a1b2c3d", ev);
        if (zmq_poll(&item, 1, 10) == 1) {
            int n = zmq_recv(peer, buf, sizeof(buf) - 1, 0);
            assert_true(n > 0);
            buf[n] = '\0';
            text = strdup(buf);
        }
    }
    json_object_put(ev);
    zmq_close(peer);
    tnd_events_destroy(&e);
    assert_int_equal(zmq_ctx_term(ctx), 0);
    if (!text)
        fail_msg("no event reached the subscriber behind 5000 empty messages");
    assert_is_the_event(text);
    free(text);
}

/* Sessions of a server share its context: each stream works, and
 * closing one leaves the context to its owner, who can still use it and
 * end it without waiting. */
static void streams_share_the_callers_context(void **state)
{
    void *ctx = zmq_ctx_new();
    char ep1[128], ep2[128], *text;
    tnd_events *a, *b;
    void *after;

    (void)state;
    snprintf(ep1, sizeof(ep1), "ipc://%s/a.sock", dir);
    snprintf(ep2, sizeof(ep2), "ipc://%s/b.sock", dir);
    a = tnd_events_new(ctx, ep1);
    b = tnd_events_new(ctx, ep2);
    assert_non_null(a);
    assert_non_null(b);
    text = received(b, ep2);
    assert_is_the_event(text);
    free(text);
    tnd_events_destroy(&b);
    text = received(a, ep1);
    assert_is_the_event(text);
    free(text);
    tnd_events_destroy(&a);
    after = zmq_socket(ctx, ZMQ_PUB);
    assert_non_null(after);
    zmq_close(after);
    assert_int_equal(zmq_ctx_term(ctx), 0);
}

static void an_endpoint_that_cannot_be_bound_is_named(void **state)
{
    void *ctx = zmq_ctx_new();
    char ep[160];

    (void)state;
    snprintf(ep, sizeof(ep), "ipc://%s/missing/dir/events.sock", dir);
    assert_null(tnd_events_new(NULL, ep));
    assert_non_null(strstr(tnd_error_last(), ep));
    assert_null(tnd_events_new(ctx, ep));
    assert_non_null(strstr(tnd_error_last(), "cannot publish events on"));
    assert_int_equal(zmq_ctx_term(ctx), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_watcher_gets_events_from_a_context_of_its_own),
        cmocka_unit_test(a_watcher_after_one_that_left_gets_events),
        cmocka_unit_test(empty_messages_hold_no_subscription_back),
        cmocka_unit_test(streams_share_the_callers_context),
        cmocka_unit_test(an_endpoint_that_cannot_be_bound_is_named),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}
