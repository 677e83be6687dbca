/* Unit tests for orchestrator/broker_client: requests from MDP clients.
 * A tandem run refuses a client's request for an agent (or any service)
 * with an error body and ignores what only a broker sends; a broker made
 * for clients (tandem serve) hands them to its caller, whose partial and
 * final answers reach the client.
 *
 * A real broker and fake peers driven from this thread (broker_peers.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "common/xalloc.h"
#include "orchestrator/broker.h"
#include "tests/unit/broker_peers.h"

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        TEST(client_requests_for_agents_are_refused),
        TEST(client_requests_go_to_the_caller_when_asked),
    };

    return cmocka_run_group_tests(tests, broker_setup, broker_teardown);
}
