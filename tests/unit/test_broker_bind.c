/* Unit tests for orchestrator/broker_bind: the broker's socket bound.
 * A tcp port the system chooses is resolved; a directory that is not
 * there, a port taken and an endpoint another broker listens on are
 * the user's to fix (configuration errors, exit 2).
 *
 * The broker of broker_peers.h holds the test's own endpoint. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "common/error.h"
#include "orchestrator/broker.h"
#include "tests/unit/broker_peers.h"

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        TEST(endpoint_and_bind_errors),
    };

    return cmocka_run_group_tests(tests, broker_setup, broker_teardown);
}
