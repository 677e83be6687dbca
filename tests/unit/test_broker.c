/* Unit tests for orchestrator/broker: the Majordomo broker with its
 * in-flight table. Dispatch (and how often), balancing, workers lost and
 * their requests requeued, late replies, protocol errors, the caller's
 * side (submit, cancel, the counts), the broker destroyed.
 *
 * A real broker and fake peers driven from this thread (broker_peers.h).
 * Heartbeats and expiry are in test_broker_time.c, MDP clients in
 * test_broker_client.c, binding in test_broker_bind.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>
#include <zmq.h>

#include "common/clock.h"
#include "common/error.h"
#include "orchestrator/broker.h"
#include "tests/unit/broker_peers.h"

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

/* ---- shutdown --------------------------------------------------------- */

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        TEST(request_goes_to_a_worker_and_its_final_comes_back),
        TEST(partials_come_before_the_final),
        TEST(least_recently_used_idle_worker_goes_first),
        TEST(late_final_still_awaited_is_taken),
        TEST(disconnect_mid_request_requeues_it),
        TEST(worker_gone_requeues_at_once),
        TEST(request_lost_too_often_fails),
        TEST(ready_again_reregisters_and_requeues),
        TEST(a_final_sent_again_keeps_its_worker),
        TEST(a_final_for_another_request_drops_its_worker),
        TEST(an_answer_for_a_request_never_given_is_refused),
        TEST(a_dropped_worker_is_told_and_forgotten),
        TEST(a_broker_command_from_a_worker_is_disconnected),
        TEST(one_leading_empty_frame_is_accepted),
        TEST(malformed_messages_are_dropped),
        TEST(cancelled_request_reply_is_discarded),
        TEST(submit_checks_its_input),
        TEST(queue_is_bounded),
        TEST(counts_are_per_service),
        TEST(a_worker_for_another_service_is_named),
        TEST(a_worker_for_a_service_not_asked_is_named),
        TEST(destroy_tells_workers_to_disconnect),
    };

    return cmocka_run_group_tests(tests, broker_setup, broker_teardown);
}
