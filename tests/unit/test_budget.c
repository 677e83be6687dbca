/* Unit tests for orchestrator/budget: the task budgets. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "orchestrator/budget.h"

static tnd_gate_config gate(long tokens, int calls, int wall_s)
{
    tnd_gate_config g;

    memset(&g, 0, sizeof(g));
    g.max_iterations = 3;
    g.max_tokens = tokens;
    g.max_llm_calls = calls;
    g.max_wall_s = wall_s;
    return g;
}

static tnd_usage used(long prompt, long completion, long calls)
{
    tnd_usage u;

    memset(&u, 0, sizeof(u));
    u.prompt_tokens = prompt;
    u.completion_tokens = completion;
    u.calls = calls;
    return u;
}

static void no_limits_never_stop(void **state)
{
    tnd_gate_config g = gate(0, 0, 0);
    tnd_usage u = used(1000000, 1000000, 1000);
    char why[256] = "";

    (void)state;
    assert_int_equal(tnd_budget_spent(why, sizeof(why), &g, &u, 86400000), 0);
    assert_string_equal(why, "");
    assert_int_equal(tnd_budget_wall_left(&g, 5000), -1);
}

static void tokens_count_prompt_and_completion(void **state)
{
    tnd_gate_config g = gate(1000, 0, 0);
    tnd_usage below = used(600, 399, 2), at = used(600, 400, 2);
    char why[256];

    (void)state;
    assert_int_equal(tnd_budget_spent(why, sizeof(why), &g, &below, 0), 0);
    assert_int_equal(tnd_budget_spent(why, sizeof(why), &g, &at, 0), 1);
    assert_string_equal(why,
                        "gate.max_tokens (1000) reached: 1000 tokens used");
    at.estimated = true;
    assert_int_equal(tnd_budget_spent(why, sizeof(why), &g, &at, 0), 1);
    assert_non_null(strstr(why, "(partly estimated)"));
}

static void calls_are_counted(void **state)
{
    tnd_gate_config g = gate(0, 4, 0);
    tnd_usage three = used(1, 1, 3), four = used(1, 1, 4);
    char why[256];

    (void)state;
    assert_int_equal(tnd_budget_spent(why, sizeof(why), &g, &three, 0), 0);
    assert_int_equal(tnd_budget_spent(why, sizeof(why), &g, &four, 0), 1);
    assert_string_equal(why, "gate.max_llm_calls (4) reached: 4 calls made");
}

static void wall_time_is_counted_and_left(void **state)
{
    tnd_gate_config g = gate(0, 0, 10);
    tnd_usage none = used(0, 0, 0);
    char why[256];

    (void)state;
    assert_int_equal(tnd_budget_spent(why, sizeof(why), &g, &none, 9999), 0);
    assert_int_equal(tnd_budget_wall_left(&g, 9999), 1);
    assert_int_equal(tnd_budget_spent(why, sizeof(why), &g, &none, 10000), 1);
    assert_string_equal(why, "gate.max_wall_s (10) reached: 10.0 s since "
                             "this run started (or a person last answered)");
    assert_int_equal(tnd_budget_wall_left(&g, 12000), 0);
    assert_int_equal(tnd_budget_wall_left(&g, 2500), 7500);
}

/* A request's timeout follows the work unless the config sets one: the
 * old default waited 30 minutes for any reply, whatever the agent could
 * spend (issue 10). */
static void a_request_may_take_what_its_work_may(void **state)
{
    tnd_config *c = tnd_config_defaults();

    (void)state;
    assert_non_null(c);
    c->coder.llm.timeout_s = 20;
    c->coder.llm.max_retries = 1;
    /* two calls of two tries at 20 s with one 30 s wait, and a minute */
    assert_int_equal(tnd_budget_request_s(c, "coder"), 2 * (40 + 30) + 60);
    c->reviewer.llm.timeout_s = 10;
    c->reviewer.llm.max_retries = 0;
    /* the default skills: make and make test, 600 s each */
    assert_int_equal(tnd_budget_request_s(c, "reviewer"),
                     600 + 600 + 2 * 10 + 60);
    assert_int_equal(tnd_budget_request_s(c, "reviewer.2"),
                     tnd_budget_request_s(c, "reviewer"));
    c->orchestrator.request_timeout_s = 45;
    assert_int_equal(tnd_budget_request_s(c, "coder"), 45);
    assert_int_equal(tnd_budget_request_s(c, "reviewer"), 45);
    tnd_config_destroy(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(no_limits_never_stop),
        cmocka_unit_test(tokens_count_prompt_and_completion),
        cmocka_unit_test(calls_are_counted),
        cmocka_unit_test(wall_time_is_counted_and_left),
        cmocka_unit_test(a_request_may_take_what_its_work_may),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
