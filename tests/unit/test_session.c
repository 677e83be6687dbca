/* Unit tests for orchestrator/session: the names of a session's status,
 * which report.json, the journal and tandem sessions show. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "common/error.h"
#include "orchestrator/session.h"

static void statuses_have_their_names(void **state)
{
    static const struct {
        tnd_session_status status;
        const char *name;
        bool outcome; /* a run ends with it; files name it */
    } rows[] = {
        {TND_SESSION_APPROVED, "approved", true},
        {TND_SESSION_REJECTED, "rejected", true},
        {TND_SESSION_ESCALATED, "escalated", true},
        {TND_SESSION_FAILED, "failed", true},
        {TND_SESSION_INTERRUPTED, "interrupted", true},
        {TND_SESSION_RUNNING, "running", false},
        {TND_SESSION_WAITING, "waiting", false},
        {TND_SESSION_UNREADABLE, "unreadable", false},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        tnd_session_status got = TND_SESSION_OPEN;
        assert_string_equal(tnd_session_status_name(rows[i].status),
                            rows[i].name);
        assert_int_equal(tnd_session_status_parse(&got, rows[i].name),
                         rows[i].outcome ? 0 : -1);
        assert_int_equal(got,
                         rows[i].outcome ? rows[i].status : TND_SESSION_OPEN);
    }
    assert_string_equal(tnd_session_status_name(TND_SESSION_OPEN), "?");
    assert_string_equal(tnd_session_status_name((tnd_session_status)99), "?");
}

static void an_unknown_status_names_the_outcomes(void **state)
{
    tnd_session_status got = TND_SESSION_OPEN;

    (void)state;
    assert_int_equal(tnd_session_status_parse(&got, "Approved"), -1);
    assert_string_equal(tnd_error_last(),
                        "unknown session status 'Approved' (known: approved, "
                        "rejected, escalated, failed, interrupted)");
    assert_int_equal(tnd_session_status_parse(&got, "?"), -1);
    assert_int_equal(got, TND_SESSION_OPEN);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(statuses_have_their_names),
        cmocka_unit_test(an_unknown_status_names_the_outcomes),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
