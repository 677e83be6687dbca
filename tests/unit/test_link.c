/* Unit tests for orchestrator/link: a session thread's line to the hub
 * of `tandem serve`, and a crew that reaches its agents through it. The
 * hub here is a fake: this test's main thread reading the inproc ROUTER
 * and answering as tandem serve's hub would. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zmq.h>

#include "common/clock.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/rmtree.h"
#include "orchestrator/crew.h"
#include "orchestrator/link.h"
#include "proto/code.h"

#define S(x)     ((char *)(x))
#define ENDPOINT "inproc://test-hub"

static char tmpdir[] = "/tmp/tnd-test-link-XXXXXX";

typedef struct hub {
    void *ctx;
    void *router;
} hub;

static void hub_open(hub *h)
{
    int hwm = 0;

    assert_non_null(h->ctx = zmq_ctx_new());
    assert_non_null(h->router = zmq_socket(h->ctx, ZMQ_ROUTER));
    zmq_setsockopt(h->router, ZMQ_SNDHWM, &hwm, sizeof(hwm));
    assert_int_equal(zmq_bind(h->router, ENDPOINT), 0);
}

static void hub_close(hub *h)
{
    int linger = 0;

    zmq_setsockopt(h->router, ZMQ_LINGER, &linger, sizeof(linger));
    zmq_close(h->router);
    zmq_ctx_term(h->ctx);
}

/* The next message from a link, waiting up to 5 s. */
static void hub_recv(hub *h, tnd_link_msg *m)
{
    int64_t deadline = tnd_now_ms() + 5000;
    int rc;

    while ((rc = tnd_link_recv(m, h->router)) == 0) {
        zmq_pollitem_t item = {h->router, 0, ZMQ_POLLIN, 0};
        assert_true(tnd_now_ms() < deadline);
        zmq_poll(&item, 1, 100);
    }
    assert_int_equal(rc, 1);
}

static void hub_send_n(hub *h, const char *to, tnd_broker_event_kind kind,
                       const char *key, const char *body, int dispatches)
{
    tnd_broker_event ev;

    memset(&ev, 0, sizeof(ev));
    ev.kind = kind;
    ev.dispatches = dispatches;
    snprintf(ev.key, sizeof(ev.key), "%s", key);
    snprintf(ev.worker, sizeof(ev.worker), "coder-1");
    ev.body = (char *)body;
    ev.body_len = body ? strlen(body) : 0;
    ev.error = kind == TND_BROKER_FAILED ? (char *)body : NULL;
    assert_int_equal(tnd_link_send_event(h->router, to, &ev), 0);
}

static void hub_send(hub *h, const char *to, tnd_broker_event_kind kind,
                     const char *key, const char *body)
{
    hub_send_n(h, to, kind, key, body, 1);
}

static void every_verb_reaches_the_hub_and_back(void **state)
{
    hub h;
    tnd_link *l;
    tnd_link_msg m;
    tnd_broker_event ev;
    FILE *err;

    (void)state;
    hub_open(&h);
    assert_non_null(l = tnd_link_new(h.ctx, ENDPOINT, "s1"));

    assert_int_equal(tnd_link_submit(l, "coder", "t/1/coder", "{}", 2), 0);
    hub_recv(&h, &m);
    assert_string_equal(m.from, "s1");
    assert_int_equal(m.verb, TND_LINK_SUBMIT);
    assert_string_equal(m.a, "coder");
    assert_string_equal(m.b, "t/1/coder");
    assert_string_equal(m.body, "{}");
    tnd_link_msg_clear(&m);

    assert_int_equal(tnd_link_cancel(l, "t/1/coder"), 0);
    hub_recv(&h, &m);
    assert_int_equal(m.verb, TND_LINK_CANCEL);
    assert_string_equal(m.a, "t/1/coder");
    tnd_link_msg_clear(&m);

    assert_int_equal(tnd_link_drop(l, "coder-1", "bad reply"), 0);
    hub_recv(&h, &m);
    assert_int_equal(m.verb, TND_LINK_DROP);
    assert_string_equal(m.a, "coder-1");
    assert_string_equal(m.b, "bad reply");
    tnd_link_msg_clear(&m);

    /* a stream sends a line at a time */
    assert_non_null(err = tnd_link_stream(l, TND_LINK_ERR));
    fprintf(err, "tandem: [1/5] coder: ");
    fprintf(err, "proposing\n");
    hub_recv(&h, &m);
    assert_int_equal(m.verb, TND_LINK_ERR);
    assert_string_equal(m.body, "tandem: [1/5] coder: proposing\n");
    tnd_link_msg_clear(&m);
    fclose(err);

    assert_int_equal(tnd_link_done(l, 3), 0);
    hub_recv(&h, &m);
    assert_int_equal(m.verb, TND_LINK_DONE);
    assert_string_equal(m.body, "3");
    tnd_link_msg_clear(&m);

    /* and the hub's events come back */
    assert_int_equal(tnd_link_poll(l, &ev, 0), 0);
    hub_send(&h, "s1", TND_BROKER_PARTIAL, "t/1/coder", "{\"chars\": 1}");
    hub_send(&h, "s1", TND_BROKER_FINAL, "t/1/coder", "{\"x\": 2}");
    hub_send(&h, "s1", TND_BROKER_FAILED, "t/1/coder", "lost 3 times");
    assert_int_equal(tnd_link_poll(l, &ev, 5000), 1);
    assert_int_equal(ev.kind, TND_BROKER_PARTIAL);
    assert_string_equal(ev.key, "t/1/coder");
    assert_string_equal(ev.worker, "coder-1");
    assert_string_equal(ev.body, "{\"chars\": 1}");
    tnd_broker_event_clear(&ev);
    assert_int_equal(tnd_link_poll(l, &ev, 5000), 1);
    assert_int_equal(ev.kind, TND_BROKER_FINAL);
    assert_string_equal(ev.body, "{\"x\": 2}");
    assert_int_equal(ev.body_len, 8);
    tnd_broker_event_clear(&ev);
    assert_int_equal(tnd_link_poll(l, &ev, 5000), 1);
    assert_int_equal(ev.kind, TND_BROKER_FAILED);
    assert_string_equal(ev.error, "lost 3 times");
    assert_int_equal(ev.dispatches, 1);
    tnd_broker_event_clear(&ev);

    /* what a session that gives up counts as asked: the last PARTIAL's
     * count; a request that ended counted with its FINAL */
    hub_send_n(&h, "s1", TND_BROKER_PARTIAL, "t/2/audit", "{}", 1);
    hub_send_n(&h, "s1", TND_BROKER_PARTIAL, "t/2/audit", "{}", 2);
    hub_send_n(&h, "s1", TND_BROKER_PARTIAL, "t/2/coder", "{}", 1);
    hub_send_n(&h, "s1", TND_BROKER_FINAL, "t/2/coder", "{}", 1);
    for (int i = 0; i < 4; i++) {
        assert_int_equal(tnd_link_poll(l, &ev, 5000), 1);
        tnd_broker_event_clear(&ev);
    }
    assert_int_equal(tnd_link_dispatches(l, "t/2/audit"), 2);
    assert_int_equal(tnd_link_dispatches(l, "t/2/audit"), 0); /* taken */
    assert_int_equal(tnd_link_dispatches(l, "t/2/coder"), 0);
    assert_int_equal(tnd_link_dispatches(l, "never"), 0);

    /* a smaller count later (a PARTIAL counted after its FINAL let the
     * request go) does not undo the call: a session stopped then said
     * "calls": 0 in its unanswered record, and its report left out a
     * call its model made */
    hub_send_n(&h, "s1", TND_BROKER_PARTIAL, "t/3/coder", "{}", 1);
    hub_send_n(&h, "s1", TND_BROKER_PARTIAL, "t/3/coder", "{}", 0);
    for (int i = 0; i < 2; i++) {
        assert_int_equal(tnd_link_poll(l, &ev, 5000), 1);
        tnd_broker_event_clear(&ev);
    }
    assert_int_equal(tnd_link_dispatches(l, "t/3/coder"), 1);

    tnd_link_destroy(&l);
    assert_null(l);
    tnd_link_destroy(&l);
    hub_close(&h);
}

static void a_message_the_hub_does_not_know_is_refused(void **state)
{
    hub h;
    void *dealer;
    tnd_link_msg m;
    int64_t deadline;
    int rc;

    (void)state;
    hub_open(&h);
    assert_non_null(dealer = zmq_socket(h.ctx, ZMQ_DEALER));
    zmq_setsockopt(dealer, ZMQ_ROUTING_ID, "s9", 2);
    assert_int_equal(zmq_connect(dealer, ENDPOINT), 0);
    zmq_send(dealer, "SUBMIT", 6, ZMQ_SNDMORE);
    zmq_send(dealer, "coder", 5, 0); /* two frames short */
    deadline = tnd_now_ms() + 5000;
    while ((rc = tnd_link_recv(&m, h.router)) == 0) {
        assert_true(tnd_now_ms() < deadline);
        usleep(1000);
    }
    assert_int_equal(rc, -1);
    assert_non_null(strstr(tnd_error_last(), "does not know"));
    zmq_close(dealer);
    hub_close(&h);
}

/* A session thread waiting on its link, as the crew waits for a reply,
 * for far longer than the test may last. */
typedef struct waiter {
    hub *h;
    atomic_int woken;
    int rc, kind;
} waiter;

static void *wait_long(void *arg)
{
    waiter *w = arg;
    tnd_link *l = tnd_link_new(w->h->ctx, ENDPOINT, "s1");
    tnd_broker_event ev;

    if (!l) {
        w->rc = -2;
    } else {
        /* a message from the link makes the hub know it by name */
        tnd_link_write(l, TND_LINK_ERR, "waiting\n", 8);
        w->rc = tnd_link_poll(l, &ev, 3600 * 1000L);
        atomic_store(&w->woken, 1);
        /* a STOP with an event behind it: the event is read, by this
         * poll or (the event not in yet as the STOP was read) the next,
         * as a crew polls again; a STOP wakes one poll at most */
        for (int tries = 0; w->rc == 0 && tries < 2; tries++) {
            int rc = tnd_link_poll(l, &ev, 3600 * 1000L);
            if (rc == 1) {
                w->kind = ev.kind;
                tnd_broker_event_clear(&ev);
            }
            if (rc != 0)
                break;
        }
    }
    tnd_link_destroy(&l);
    return NULL;
}

/* A stop reaches a session at once: the hub's STOP ends its wait on the
 * link however long that was to be (the crew waited up to 200 ms for
 * the next poll, and a second SIGTERM to tandem serve, "at once",
 * waited that long for every running session). */
static void a_stop_wakes_a_waiting_link(void **state)
{
    hub h;
    waiter w;
    pthread_t t;
    tnd_link_msg m;
    int64_t deadline = tnd_now_ms() + 30000; /* a hang guard, not a timing */

    (void)state;
    hub_open(&h);
    memset(&w, 0, sizeof(w));
    w.h = &h;
    assert_int_equal(pthread_create(&t, NULL, wait_long, &w), 0);
    hub_recv(&h, &m);
    assert_int_equal(m.verb, TND_LINK_ERR);
    tnd_link_msg_clear(&m);
    assert_int_equal(tnd_link_send_stop(h.router, "s1"), 0);
    while (!atomic_load(&w.woken) && tnd_now_ms() < deadline)
        usleep(1000);
    assert_true(atomic_load(&w.woken)); /* woken, not hung */
    assert_int_equal(w.rc, 0);
    assert_int_equal(tnd_link_send_stop(h.router, "s1"), 0);
    hub_send(&h, "s1", TND_BROKER_FINAL, "t-1/1/coder", "{}");
    pthread_join(t, NULL);
    assert_int_equal(w.kind, TND_BROKER_FINAL);
    /* to a link that is gone, nothing, and no error */
    assert_int_equal(tnd_link_send_stop(h.router, "s1"), 0);
    assert_int_equal(tnd_link_send_stop(h.router, "s99"), 0);
    hub_close(&h);
}

/* ---- a crew on a link ---------------------------------------------------- */

typedef struct caller {
    tnd_link *link;
    atomic_int stop;
    long timeout_ms;
    int rc;
    char *reply;
    size_t reply_len;
    char error[512];
    hub *h;
    bool stop_at_progress; /* the stop comes with the first PARTIAL */
    atomic_int hub_sent;   /* the hub sent what follows that PARTIAL */
} caller;

/* The server stops while the crew takes a PARTIAL: the stop is set
 * once the hub sent what came after it, so the crew, stopping, finds it
 * waiting (take_waiting) whatever the threads' timing. */
static void stop_at_progress(const char *body, size_t len, void *payload)
{
    caller *c = payload;
    int64_t deadline = tnd_now_ms() + 10000; /* a hang guard */

    (void)len;
    if (!body || atomic_load(&c->stop))
        return;
    while (!atomic_load(&c->hub_sent) && tnd_now_ms() < deadline)
        usleep(1000);
    atomic_store(&c->stop, 15);
}

static char *code_request(void)
{
    tnd_code_request r = {.task_id = S("t-1"),
                          .attempt = 1,
                          .task = S("fix it"),
                          .repo_map = S(""),
                          .feedback = S("")};

    return tnd_code_request_encode(&r, NULL);
}

static char *code_reply(const char *task_id)
{
    tnd_code_reply r = {
        .task_id = (char *)task_id, .attempt = 1, .rationale = S("because")};

    return tnd_code_reply_encode(&r, NULL);
}

/* A session thread: a crew on a link asks the coder once. */
static void *call(void *arg)
{
    caller *c = arg;
    tnd_config *cfg = tnd_config_defaults();
    tnd_crew_options o;
    tnd_crew *crew;
    char *body = code_request();

    memset(&o, 0, sizeof(o));
    o.config = cfg;
    o.session_id = "20260101-000000-0001";
    o.session_dir = tmpdir;
    o.logs_dir = tmpdir;
    o.interrupted = &c->stop;
    c->link = tnd_link_new(c->h->ctx, ENDPOINT, "s1");
    o.link = c->link;
    if (!(crew = tnd_crew_new(&o))) {
        c->rc = -2;
        snprintf(c->error, sizeof(c->error), "%s", tnd_error_last());
    } else {
        c->rc = tnd_crew_call(crew, "coder", "t-1/1/coder", body, strlen(body),
                              tnd_now_ms() + c->timeout_ms,
                              c->stop_at_progress ? stop_at_progress : NULL, c,
                              &c->reply, &c->reply_len);
        snprintf(c->error, sizeof(c->error), "%s", tnd_error_last());
        tnd_crew_destroy(&crew, false);
    }
    tnd_link_destroy(&c->link);
    tnd_config_destroy(&cfg);
    free(body);
    return NULL;
}

/* A caller thread t asking through h, the stop set with its first
 * PARTIAL (stop_at_progress) when at_progress. */
static void start_with(caller *c, hub *h, long timeout_ms, bool at_progress,
                       pthread_t *t)
{
    memset(c, 0, sizeof(*c));
    c->h = h;
    c->timeout_ms = timeout_ms;
    c->stop_at_progress = at_progress;
    assert_int_equal(pthread_create(t, NULL, call, c), 0);
}

static void start(caller *c, hub *h, long timeout_ms, pthread_t *t)
{
    start_with(c, h, timeout_ms, false, t);
}

static void a_crew_on_a_link_gets_its_reply(void **state)
{
    hub h;
    caller c;
    pthread_t t;
    tnd_link_msg m;
    char *bad = code_reply("another-task"), *good = code_reply("t-1");

    (void)state;
    hub_open(&h);
    start(&c, &h, 10000, &t);
    hub_recv(&h, &m);
    assert_int_equal(m.verb, TND_LINK_SUBMIT);
    assert_string_equal(m.a, "coder");
    assert_string_equal(m.b, "t-1/1/coder");
    tnd_link_msg_clear(&m);
    /* a reply for another task: the agent is dropped, the request sent
     * again */
    hub_send(&h, "s1", TND_BROKER_FINAL, "t-1/1/coder", bad);
    hub_recv(&h, &m);
    assert_int_equal(m.verb, TND_LINK_DROP);
    assert_string_equal(m.a, "coder-1");
    tnd_link_msg_clear(&m);
    hub_recv(&h, &m);
    assert_int_equal(m.verb, TND_LINK_SUBMIT);
    tnd_link_msg_clear(&m);
    hub_send(&h, "s1", TND_BROKER_FINAL, "t-1/1/coder", good);
    pthread_join(t, NULL);
    assert_int_equal(c.rc, 0);
    assert_string_equal(c.reply, good);
    free(c.reply);
    free(bad);
    free(good);
    hub_close(&h);
}

static void a_deadline_cancels_at_the_hub(void **state)
{
    hub h;
    caller c;
    pthread_t t;
    tnd_link_msg m;

    (void)state;
    hub_open(&h);
    start(&c, &h, 300, &t);
    hub_recv(&h, &m);
    assert_int_equal(m.verb, TND_LINK_SUBMIT);
    tnd_link_msg_clear(&m);
    hub_recv(&h, &m);
    assert_int_equal(m.verb, TND_LINK_CANCEL);
    assert_string_equal(m.a, "t-1/1/coder");
    tnd_link_msg_clear(&m);
    pthread_join(t, NULL);
    assert_int_equal(c.rc, TND_ETIMEOUT);
    hub_close(&h);
}

static void a_stop_cancels_at_the_hub(void **state)
{
    hub h;
    caller c;
    pthread_t t;
    tnd_link_msg m;

    (void)state;
    hub_open(&h);
    start(&c, &h, 10000, &t);
    hub_recv(&h, &m);
    assert_int_equal(m.verb, TND_LINK_SUBMIT);
    tnd_link_msg_clear(&m);
    atomic_store(&c.stop, 15); /* the server drains: SIGTERM */
    hub_recv(&h, &m);
    assert_int_equal(m.verb, TND_LINK_CANCEL);
    tnd_link_msg_clear(&m);
    pthread_join(t, NULL);
    assert_int_equal(c.rc, TND_ECANCELLED);
    assert_non_null(strstr(c.error, "signal 15"));
    hub_close(&h);
}

/* A caller c through h whose stop comes with the PARTIAL of its request,
 * once the FINAL (final) is sent behind it; returns once c ended. */
static void stop_with_final(caller *c, hub *h, const char *final)
{
    pthread_t t;
    tnd_link_msg m;

    start_with(c, h, 10000, true, &t);
    hub_recv(h, &m);
    assert_int_equal(m.verb, TND_LINK_SUBMIT);
    tnd_link_msg_clear(&m);
    hub_send(h, "s1", TND_BROKER_PARTIAL, "t-1/1/coder", "{\"chars\": 1}");
    hub_send(h, "s1", TND_BROKER_FINAL, "t-1/1/coder", final);
    atomic_store(&c->hub_sent, 1);
    pthread_join(t, NULL);
}

/* The stop noticed on a PARTIAL with the FINAL right behind it: the
 * reply, paid for, is taken (it was thrown away, and the next server
 * asked the model again). */
static void a_reply_here_at_a_stop_is_taken(void **state)
{
    hub h;
    caller c;
    char *good = code_reply("t-1");

    (void)state;
    hub_open(&h);
    /* the stop with the PARTIAL, once the FINAL is sent: set before the
     * PARTIAL, a crew that was slow to look found neither there at its
     * next look, and the test failed under load */
    stop_with_final(&c, &h, good);
    assert_int_equal(c.rc, 0);
    assert_string_equal(c.reply, good);
    free(c.reply);
    free(good);
    hub_close(&h);
}

/* A reply that cannot be used, taken as the session stops: the agent
 * is dropped, and the request is not sent again. It was, and cancelled
 * at once: meanwhile the hub could hand it to an agent, whose work was
 * thrown away. */
static void a_bad_reply_at_a_stop_is_not_asked_again(void **state)
{
    hub h;
    caller c;
    tnd_link_msg m;
    zmq_pollitem_t item;
    char *bad = code_reply("another-task");

    (void)state;
    hub_open(&h);
    stop_with_final(&c, &h, bad);
    hub_recv(&h, &m);
    assert_int_equal(m.verb, TND_LINK_DROP);
    assert_string_equal(m.a, "coder-1");
    tnd_link_msg_clear(&m);
    /* the thread ended: all it sent is here; no SUBMIT, and no CANCEL
     * of a request no longer at the hub */
    item = (zmq_pollitem_t){h.router, 0, ZMQ_POLLIN, 0};
    zmq_poll(&item, 1, 0);
    while (tnd_link_recv(&m, h.router) == 1) {
        assert_int_not_equal(m.verb, TND_LINK_SUBMIT);
        assert_int_not_equal(m.verb, TND_LINK_CANCEL);
        tnd_link_msg_clear(&m);
    }
    assert_int_equal(c.rc, TND_ECANCELLED);
    assert_non_null(strstr(c.error, "signal 15"));
    assert_non_null(strstr(c.error, "cannot be used"));
    free(bad);
    hub_close(&h);
}

/* A session stopped already sends nothing: no agent starts work that
 * is thrown away at once. */
static void a_stopped_session_sends_nothing(void **state)
{
    hub h;
    caller c;
    pthread_t t;
    tnd_link_msg m;
    zmq_pollitem_t item;

    (void)state;
    hub_open(&h);
    memset(&c, 0, sizeof(c));
    c.h = &h;
    c.timeout_ms = 10000;
    atomic_store(&c.stop, 15);
    assert_int_equal(pthread_create(&t, NULL, call, &c), 0);
    pthread_join(t, NULL);
    assert_int_equal(c.rc, TND_ECANCELLED);
    item = (zmq_pollitem_t){h.router, 0, ZMQ_POLLIN, 0};
    zmq_poll(&item, 1, 100);
    assert_int_equal(tnd_link_recv(&m, h.router), 0);
    hub_close(&h);
}

static int setup(void **state)
{
    (void)state;
    if (!mkdtemp(tmpdir))
        return -1;
    return setenv("TMPDIR", tmpdir, 1);
}

static int teardown(void **state)
{
    (void)state;
    return tnd_fs_rmtree(tmpdir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_verb_reaches_the_hub_and_back),
        cmocka_unit_test(a_message_the_hub_does_not_know_is_refused),
        cmocka_unit_test(a_stop_wakes_a_waiting_link),
        cmocka_unit_test(a_crew_on_a_link_gets_its_reply),
        cmocka_unit_test(a_deadline_cancels_at_the_hub),
        cmocka_unit_test(a_stop_cancels_at_the_hub),
        cmocka_unit_test(a_reply_here_at_a_stop_is_taken),
        cmocka_unit_test(a_bad_reply_at_a_stop_is_not_asked_again),
        cmocka_unit_test(a_stopped_session_sends_nothing),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}
