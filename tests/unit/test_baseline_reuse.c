/* Unit tests for orchestrator/baseline_reuse: which baselines a served
 * session keeps for the others (tnd_loop_baseline_reusable, one row per
 * rule), and tnd_loop_baseline_done ending the flight with the reply or
 * without it. The journal side (reused_from) is covered by
 * tests/integration/test_serve_baseline.sh. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "common/clock.h"
#include "common/config.h"
#include "common/error.h"
#include "orchestrator/basecache.h"
#include "orchestrator/loop.h"
#include "proto/audit.h"

/* unit: a command in the sandbox (the default); lint: a command that
 * asks for none; secrets: a built-in, which runs inside the reviewer. */
static const char CONFIG[] = "version: 1\n"
                             "agents:\n"
                             "  reviewer:\n"
                             "    skills: [unit, lint, secrets]\n"
                             "skills:\n"
                             "  unit:\n"
                             "    command: make test\n"
                             "  lint:\n"
                             "    command: make lint\n"
                             "    sandbox: none\n"
                             "  secrets:\n"
                             "    builtin: git\n";

static tnd_config *config(void)
{
    tnd_config *cfg = NULL;

    if (tnd_config_parse(&cfg, CONFIG, strlen(CONFIG), "agents.yaml", ".") < 0)
        fail_msg("%s", tnd_error_last());
    return cfg;
}

typedef struct row {
    const char *why;
    const char *name;
    tnd_skill_status status;
    int exit_code;
    const char *output;
    const char *ended;
    tnd_isolation sandbox;
    bool keep;
} row;

static const row rows[] = {
    {"a pass in the sandbox", "unit", TND_SKILL_PASS, 0, "ok", NULL,
     TND_ISOLATION_BWRAP, true},
    {"a failure that was there before the change", "unit", TND_SKILL_FAIL, 2,
     "1 test failed", NULL, TND_ISOLATION_BWRAP, true},
    {"a skill skipped (no sandbox said)", "unit", TND_SKILL_SKIPPED, 0, "",
     NULL, TND_ISOLATION_UNSAID, true},
    {"a command configured with sandbox: none", "lint", TND_SKILL_PASS, 0, "",
     NULL, TND_ISOLATION_NONE, true},
    {"a built-in (never sandboxed)", "secrets", TND_SKILL_PASS, 0, "", NULL,
     TND_ISOLATION_UNSAID, true},
    {"a timeout", "unit", TND_SKILL_TIMEOUT, -1, "", "timed out after 600 s",
     TND_ISOLATION_BWRAP, false},
    {"a skill that could not start", "unit", TND_SKILL_ERROR, -1, "", NULL,
     TND_ISOLATION_BWRAP, false},
    {"a command not found", "unit", TND_SKILL_FAIL, 127, "make: not found",
     NULL, TND_ISOLATION_BWRAP, false},
    {"a command that cannot be executed", "unit", TND_SKILL_FAIL, 126, "", NULL,
     TND_ISOLATION_BWRAP, false},
    {"make with no rule for its target", "unit", TND_SKILL_FAIL, 2,
     "make: *** No rule to make target 'test'.  Stop.", NULL,
     TND_ISOLATION_BWRAP, false},
    {"a failure ended by a limit", "unit", TND_SKILL_FAIL, 137, "",
     "killed: over the 512-process limit", TND_ISOLATION_BWRAP, false},
    {"a pass ended by a limit", "unit", TND_SKILL_PASS, 0, "",
     "killed: over the CPU limit", TND_ISOLATION_BWRAP, false},
    {"a sandboxed command run without one", "unit", TND_SKILL_PASS, 0, "", NULL,
     TND_ISOLATION_NONE, false},
    {"a sandboxed command with no sandbox to be had", "unit", TND_SKILL_PASS, 0,
     "", NULL, TND_ISOLATION_UNAVAILABLE, false},
    {"a sandboxed command whose reviewer does not say", "unit", TND_SKILL_PASS,
     0, "", NULL, TND_ISOLATION_UNSAID, false},
    {"a skill this config does not have", "e2e", TND_SKILL_PASS, 0, "", NULL,
     TND_ISOLATION_BWRAP, false},
};

static tnd_skill_result result_of(const row *r)
{
    tnd_skill_result s;

    memset(&s, 0, sizeof(s));
    s.name = (char *)r->name;
    s.status = r->status;
    s.exit_code = r->exit_code;
    s.command = (char *)"make";
    s.output = (char *)r->output;
    s.ended = (char *)r->ended;
    s.sandbox = r->sandbox;
    return s;
}

static void one_row_per_rule(void **state)
{
    tnd_config *cfg = config();

    (void)state;
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        tnd_skill_result s = result_of(&rows[i]);
        tnd_audit_reply base = {.skills = &s, .nskills = 1};
        bool keep = tnd_loop_baseline_reusable(cfg, &base);
        if (keep != rows[i].keep)
            fail_msg("%s: %s, want %s", rows[i].why, keep ? "kept" : "not kept",
                     rows[i].keep ? "kept" : "not kept");
    }
    tnd_config_destroy(&cfg);
}

/* One skill of the moment makes the whole baseline the moment's. */
static void one_bad_skill_spoils_the_baseline(void **state)
{
    tnd_config *cfg = config();
    tnd_skill_result s[3] = {result_of(&rows[0]), result_of(&rows[3]),
                             result_of(&rows[5])};
    tnd_audit_reply base = {.skills = s, .nskills = 2};

    (void)state;
    assert_true(tnd_loop_baseline_reusable(cfg, &base));
    base.nskills = 3;
    assert_false(tnd_loop_baseline_reusable(cfg, &base));
    tnd_config_destroy(&cfg);
}

static void no_skills_and_no_baseline(void **state)
{
    tnd_config *cfg = config();
    tnd_audit_reply none = {0};

    (void)state;
    assert_true(tnd_loop_baseline_reusable(cfg, &none));
    assert_false(tnd_loop_baseline_reusable(cfg, NULL));
    tnd_config_destroy(&cfg);
}

/* ---- tnd_loop_baseline_done: the flight ends either way ------------- */

#define TREE "3333333333333333333333333333333333333333333333333333333333333333"

typedef struct fixture {
    tnd_config *cfg;
    tnd_basecache *cache;
    tnd_run_host host;
    run r;
    char key[TND_SHA256_HEX + 1];
} fixture;

/* A served session that took the flight of TREE's baseline. */
static void start_flight(fixture *f)
{
    tnd_basecache_hit hit;

    memset(f, 0, sizeof(*f));
    f->cfg = config();
    f->cache = tnd_basecache_new(8, 60000);
    f->host.baselines = f->cache;
    f->r.cfg = f->cfg;
    f->r.host = &f->host;
    tnd_basecache_key(f->key, f->cfg, TREE, NULL, "reviewer");
    assert_int_equal(tnd_basecache_take(&hit, f->cache, f->key, "s1", "/ws1",
                                        tnd_now_ms() + 60000, NULL, NULL, NULL),
                     TND_BASECACHE_RUN);
    snprintf(f->r.baseline_flight, sizeof(f->r.baseline_flight), "%s", f->key);
}

static int take_again(fixture *f, tnd_basecache_hit *hit)
{
    return tnd_basecache_take(hit, f->cache, f->key, "s2", "/ws2",
                              tnd_now_ms() + 60000, NULL, NULL, NULL);
}

static void finish(fixture *f)
{
    tnd_basecache_destroy(&f->cache);
    tnd_config_destroy(&f->cfg);
}

static void a_reusable_baseline_is_kept(void **state)
{
    fixture f;
    tnd_skill_result s = result_of(&rows[1]);
    tnd_audit_reply base = {.skills = &s, .nskills = 1};
    tnd_basecache_hit hit;

    (void)state;
    start_flight(&f);
    tnd_loop_baseline_done(&f.r, &base, "{\"r\":1}", 7);
    assert_string_equal(f.r.baseline_flight, "");
    assert_int_equal(take_again(&f, &hit), TND_BASECACHE_HIT);
    assert_string_equal(hit.reply, "{\"r\":1}");
    assert_string_equal(hit.session, "s1");
    tnd_basecache_hit_clear(&hit);
    finish(&f);
}

/* The flight ended and kept nothing: the next task runs its own. */
static void assert_not_kept(fixture *f)
{
    tnd_basecache_hit hit;

    assert_string_equal(f->r.baseline_flight, "");
    assert_int_equal(tnd_basecache_size(f->cache), 0);
    assert_int_equal(take_again(f, &hit), TND_BASECACHE_RUN);
}

static void a_result_of_the_moment_is_not_kept(void **state)
{
    fixture f;
    tnd_skill_result s = result_of(&rows[5]); /* a timeout */
    tnd_audit_reply base = {.skills = &s, .nskills = 1};

    (void)state;
    start_flight(&f);
    tnd_loop_baseline_done(&f.r, &base, "{\"r\":1}", 7);
    assert_not_kept(&f);
    finish(&f);
}

static void a_failed_baseline_is_not_kept(void **state)
{
    fixture f;

    (void)state;
    start_flight(&f);
    tnd_loop_baseline_done(&f.r, NULL, NULL, 0);
    assert_not_kept(&f);
    finish(&f);
}

/* A run with no flight (tandem run, a replayed or reused baseline) has
 * nothing to end: the cache is not touched, and need not exist. */
static void no_flight_no_cache(void **state)
{
    run r;
    tnd_skill_result s = result_of(&rows[0]);
    tnd_audit_reply base = {.skills = &s, .nskills = 1};

    (void)state;
    memset(&r, 0, sizeof(r));
    r.cfg = r.own_cfg = config();
    tnd_loop_baseline_done(&r, &base, "{}", 2);
    tnd_loop_baseline_done(&r, NULL, NULL, 0);
    tnd_config_destroy(&r.own_cfg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(one_row_per_rule),
        cmocka_unit_test(one_bad_skill_spoils_the_baseline),
        cmocka_unit_test(no_skills_and_no_baseline),
        cmocka_unit_test(a_reusable_baseline_is_kept),
        cmocka_unit_test(a_result_of_the_moment_is_not_kept),
        cmocka_unit_test(a_failed_baseline_is_not_kept),
        cmocka_unit_test(no_flight_no_cache),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
