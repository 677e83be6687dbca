/* Unit tests for orchestrator/broker_time: the broker's clock.
 * Heartbeats sent to idle workers; a silent worker expired and its
 * request sent on; a caller busy elsewhere, or the broker itself away,
 * expiring nobody; a request acknowledged and then left given up.
 *
 * A real broker and fake peers driven from this thread (broker_peers.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdint.h>

#include "common/clock.h"
#include "orchestrator/broker.h"
#include "tests/unit/broker_peers.h"

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        TEST(silent_worker_is_expired_and_its_request_goes_on),
        TEST(time_the_broker_was_away_is_no_silence),
        TEST(busy_caller_does_not_expire_live_workers),
        TEST(a_request_acknowledged_then_left_is_given_up),
        TEST(idle_workers_get_heartbeats_and_stay),
    };

    return cmocka_run_group_tests(tests, broker_setup, broker_teardown);
}
