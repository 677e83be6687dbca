/* Unit tests for orchestrator/basecache: baselines shared by a server's
 * sessions (hits, keys that follow the config and the directories, age,
 * the bound, one flight for many waiters, and failures that are not
 * kept). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "common/clock.h"
#include "common/config.h"
#include "orchestrator/basecache.h"

#define TREE  "1111111111111111111111111111111111111111111111111111111111111111"
#define TREE2 "2222222222222222222222222222222222222222222222222222222222222222"
#define FAR   (tnd_now_ms() + 60000)

/* key for tree with the built-in config */
static void key_of(char out[TND_SHA256_HEX + 1], const char *tree)
{
    tnd_config *cfg = tnd_config_defaults();

    tnd_basecache_key(out, cfg, tree, NULL, "reviewer");
    tnd_config_destroy(&cfg);
}

static int take(tnd_basecache_hit *hit, tnd_basecache *c, const char *key,
                const char *session)
{
    return tnd_basecache_take(hit, c, key, session, "/ws", FAR, NULL, NULL,
                              NULL);
}

static void a_kept_baseline_is_a_hit(void **state)
{
    tnd_basecache *c = tnd_basecache_new(8, 60000);
    tnd_basecache_hit hit;
    char key[TND_SHA256_HEX + 1];

    (void)state;
    key_of(key, TREE);
    assert_int_equal(take(&hit, c, key, "s1"), TND_BASECACHE_RUN);
    tnd_basecache_done(c, key, "{\"r\":1}", 7);
    assert_int_equal(
        tnd_basecache_take(&hit, c, key, "s2", "/ws2", FAR, NULL, NULL, NULL),
        TND_BASECACHE_HIT);
    assert_string_equal(hit.reply, "{\"r\":1}");
    assert_int_equal(hit.len, 7);
    assert_string_equal(hit.session, "s1");
    assert_string_equal(hit.workspace, "/ws");
    tnd_basecache_hit_clear(&hit);
    assert_null(hit.reply);
    tnd_basecache_destroy(&c);
    assert_null(c);
}

static void another_key_is_a_miss(void **state)
{
    tnd_basecache *c = tnd_basecache_new(8, 60000);
    tnd_basecache_hit hit;
    char k1[TND_SHA256_HEX + 1], k2[TND_SHA256_HEX + 1];

    (void)state;
    key_of(k1, TREE);
    key_of(k2, TREE2);
    assert_string_not_equal(k1, k2);
    assert_int_equal(take(&hit, c, k1, "s1"), TND_BASECACHE_RUN);
    tnd_basecache_done(c, k1, "a", 1);
    assert_int_equal(take(&hit, c, k2, "s2"), TND_BASECACHE_RUN);
    tnd_basecache_done(c, k2, "b", 1);
    assert_int_equal(tnd_basecache_size(c), 2);
    tnd_basecache_destroy(&c);
}

/* Everything the skills' results depend on is in the key; the same
 * config loaded twice gives the same key. */
static void the_key_follows_the_config(void **state)
{
    tnd_config *cfg = tnd_config_defaults();
    char base[TND_SHA256_HEX + 1], k[TND_SHA256_HEX + 1];
    tnd_skill_config *build =
        (tnd_skill_config *)tnd_config_skill(cfg, "build");
    char *old;

    (void)state;
    assert_non_null(build);
    tnd_basecache_key(base, cfg, TREE, NULL, "reviewer");
    tnd_basecache_key(k, cfg, TREE, NULL, "reviewer");
    assert_string_equal(base, k);
    tnd_basecache_key(k, cfg, TREE, NULL, "reviewer.1");
    assert_string_not_equal(base, k);

    build->timeout_s++;
    tnd_basecache_key(k, cfg, TREE, NULL, "reviewer");
    assert_string_not_equal(base, k);
    build->timeout_s--;

    build->sandbox = TND_SANDBOX_NONE;
    tnd_basecache_key(k, cfg, TREE, NULL, "reviewer");
    assert_string_not_equal(base, k);
    build->sandbox = TND_SANDBOX_BWRAP;

    build->required = !build->required;
    tnd_basecache_key(k, cfg, TREE, NULL, "reviewer");
    assert_string_not_equal(base, k);
    build->required = !build->required;

    old = build->command.argv[0];
    build->command.argv[0] = (char *)"gmake";
    tnd_basecache_key(k, cfg, TREE, NULL, "reviewer");
    assert_string_not_equal(base, k);
    build->command.argv[0] = old;

    cfg->workspace.include_untracked = true;
    tnd_basecache_key(k, cfg, TREE, NULL, "reviewer");
    assert_string_not_equal(base, k);
    cfg->workspace.include_untracked = false;

    /* the order the skills run in */
    old = cfg->reviewer.skills[0];
    cfg->reviewer.skills[0] = cfg->reviewer.skills[1];
    cfg->reviewer.skills[1] = old;
    tnd_basecache_key(k, cfg, TREE, NULL, "reviewer");
    assert_string_not_equal(base, k);
    cfg->reviewer.skills[1] = cfg->reviewer.skills[0];
    cfg->reviewer.skills[0] = old;

    tnd_basecache_key(k, cfg, TREE, NULL, "reviewer");
    assert_string_equal(base, k);
    tnd_config_destroy(&cfg);
}

/* Two trees with the same files and links may differ in an empty
 * directory, which the tree's hash does not list but the skills see
 * (`mkdir build` fails when it is there): the directories are in the
 * key, and no directories differs from one. */
static void the_key_follows_the_directories(void **state)
{
    tnd_config *cfg = tnd_config_defaults();
    char *none[] = {NULL};
    char *build[] = {(char *)"build", NULL};
    char *src_build[] = {(char *)"build", (char *)"src", NULL};
    char *joined[] = {(char *)"buildsrc", NULL};
    char k0[TND_SHA256_HEX + 1], k1[TND_SHA256_HEX + 1], k2[TND_SHA256_HEX + 1],
        k3[TND_SHA256_HEX + 1], again[TND_SHA256_HEX + 1];

    (void)state;
    tnd_basecache_key(k0, cfg, TREE, none, "reviewer");
    tnd_basecache_key(k1, cfg, TREE, build, "reviewer");
    tnd_basecache_key(k2, cfg, TREE, src_build, "reviewer");
    tnd_basecache_key(k3, cfg, TREE, joined, "reviewer");
    assert_string_not_equal(k0, k1);
    assert_string_not_equal(k1, k2);
    assert_string_not_equal(k2, k3); /* each name goes in on its own */
    tnd_basecache_key(again, cfg, TREE, build, "reviewer");
    assert_string_equal(k1, again);
    tnd_config_destroy(&cfg);
}

static void an_old_baseline_is_not_reused(void **state)
{
    tnd_basecache *c = tnd_basecache_new(8, 20);
    tnd_basecache_hit hit;
    char key[TND_SHA256_HEX + 1];
    int64_t kept, deadline = tnd_now_ms() + 10000;
    int rc;

    (void)state;
    key_of(key, TREE);
    assert_int_equal(take(&hit, c, key, "s1"), TND_BASECACHE_RUN);
    /* before done, which stamps the entry: read after it, under valgrind
     * the entry could expire less than 20 ms after this */
    kept = tnd_now_ms();
    tnd_basecache_done(c, key, "a", 1);
    /* hits until it is 20 ms old, then a run of its own */
    while ((rc = take(&hit, c, key, "s2")) == TND_BASECACHE_HIT) {
        tnd_basecache_hit_clear(&hit);
        assert_true(tnd_now_ms() < deadline);
    }
    assert_int_equal(rc, TND_BASECACHE_RUN);
    assert_true(tnd_now_ms() - kept >= 20);
    tnd_basecache_done(c, key, NULL, 0);
    assert_int_equal(tnd_basecache_size(c), 0);
    tnd_basecache_destroy(&c);
}

static void the_oldest_goes_when_full(void **state)
{
    tnd_basecache *c = tnd_basecache_new(3, 60000);
    tnd_basecache_hit hit;
    char keys[5][TND_SHA256_HEX + 1];

    (void)state;
    for (int i = 0; i < 5; i++) {
        char tree[TND_SHA256_HEX + 1];
        memset(tree, 'a' + i, TND_SHA256_HEX);
        tree[TND_SHA256_HEX] = '\0';
        key_of(keys[i], tree);
        assert_int_equal(take(&hit, c, keys[i], "s"), TND_BASECACHE_RUN);
        tnd_basecache_done(c, keys[i], "x", 1);
        assert_true(tnd_basecache_size(c) <= 3);
    }
    assert_int_equal(tnd_basecache_size(c), 3);
    /* the two oldest went, the three newest are kept */
    for (int i = 4; i >= 2; i--) {
        assert_int_equal(take(&hit, c, keys[i], "t"), TND_BASECACHE_HIT);
        tnd_basecache_hit_clear(&hit);
    }
    assert_int_equal(take(&hit, c, keys[0], "t"), TND_BASECACHE_RUN);
    tnd_basecache_done(c, keys[0], NULL, 0);
    tnd_basecache_destroy(&c);
}

/* ---- one flight --------------------------------------------------------- */

typedef struct waiter {
    tnd_basecache *c;
    const char *key;
    atomic_int waiting; /* on_wait was called */
    atomic_int stop;
    int64_t deadline;
    int rc;
    tnd_basecache_hit hit;
    char runner[64];
} waiter;

static void on_wait(const char *runner, void *payload)
{
    waiter *w = payload;

    snprintf(w->runner, sizeof(w->runner), "%s", runner);
    atomic_store(&w->waiting, 1);
}

static void *waiter_main(void *arg)
{
    waiter *w = arg;

    w->rc = tnd_basecache_take(&w->hit, w->c, w->key, "s2", "/ws2", w->deadline,
                               &w->stop, on_wait, w);
    return NULL;
}

/* Start a waiter on key's flight; returns once it waits. */
static void start_waiter(waiter *w, pthread_t *t, tnd_basecache *c,
                         const char *key, int64_t deadline)
{
    int64_t until = tnd_now_ms() + 10000;

    memset(w, 0, sizeof(*w));
    w->c = c;
    w->key = key;
    w->deadline = deadline;
    atomic_init(&w->waiting, 0);
    atomic_init(&w->stop, 0);
    assert_int_equal(pthread_create(t, NULL, waiter_main, w), 0);
    /* poll, giving the CPU up between looks: under valgrind, which runs
     * one thread at a time, a bare spin kept the waiter from running
     * until the deadline passed (memcheck failed so) */
    while (!atomic_load(&w->waiting)) {
        assert_true(tnd_now_ms() < until);
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    }
    assert_string_equal(w->runner, "s1");
}

static void one_runs_and_the_other_waits_for_it(void **state)
{
    tnd_basecache *c = tnd_basecache_new(8, 60000);
    tnd_basecache_hit hit;
    char key[TND_SHA256_HEX + 1];
    waiter w;
    pthread_t t;

    (void)state;
    key_of(key, TREE);
    assert_int_equal(take(&hit, c, key, "s1"), TND_BASECACHE_RUN);
    start_waiter(&w, &t, c, key, FAR);
    tnd_basecache_done(c, key, "{\"ok\":true}", 11);
    pthread_join(t, NULL);
    assert_int_equal(w.rc, TND_BASECACHE_HIT);
    assert_string_equal(w.hit.reply, "{\"ok\":true}");
    assert_string_equal(w.hit.session, "s1");
    tnd_basecache_hit_clear(&w.hit);
    tnd_basecache_destroy(&c);
}

static void a_failed_run_is_not_kept(void **state)
{
    tnd_basecache *c = tnd_basecache_new(8, 60000);
    tnd_basecache_hit hit;
    char key[TND_SHA256_HEX + 1];
    waiter w;
    pthread_t t;

    (void)state;
    key_of(key, TREE);
    assert_int_equal(take(&hit, c, key, "s1"), TND_BASECACHE_RUN);
    start_waiter(&w, &t, c, key, FAR);
    tnd_basecache_done(c, key, NULL, 0);
    pthread_join(t, NULL);
    /* the waiter runs its own, and the next session too */
    assert_int_equal(w.rc, TND_BASECACHE_ALONE);
    assert_null(w.hit.reply);
    assert_int_equal(tnd_basecache_size(c), 0);
    assert_int_equal(take(&hit, c, key, "s3"), TND_BASECACHE_RUN);
    tnd_basecache_done(c, key, NULL, 0);
    tnd_basecache_destroy(&c);
}

static void a_waiter_stops_when_told(void **state)
{
    tnd_basecache *c = tnd_basecache_new(8, 60000);
    tnd_basecache_hit hit;
    char key[TND_SHA256_HEX + 1];
    waiter w;
    pthread_t t;

    (void)state;
    key_of(key, TREE);
    assert_int_equal(take(&hit, c, key, "s1"), TND_BASECACHE_RUN);
    start_waiter(&w, &t, c, key, FAR);
    atomic_store(&w.stop, 15);
    pthread_join(t, NULL);
    assert_int_equal(w.rc, TND_ECANCELLED);
    /* the runner goes on */
    tnd_basecache_done(c, key, "a", 1);
    assert_int_equal(take(&hit, c, key, "s3"), TND_BASECACHE_HIT);
    tnd_basecache_hit_clear(&hit);
    tnd_basecache_destroy(&c);
}

static void a_waiter_keeps_its_deadline(void **state)
{
    tnd_basecache *c = tnd_basecache_new(8, 60000);
    tnd_basecache_hit hit;
    char key[TND_SHA256_HEX + 1];
    waiter w;
    pthread_t t;

    (void)state;
    key_of(key, TREE);
    assert_int_equal(take(&hit, c, key, "s1"), TND_BASECACHE_RUN);
    start_waiter(&w, &t, c, key, tnd_now_ms() + 50);
    pthread_join(t, NULL);
    assert_int_equal(w.rc, TND_ETIMEOUT);
    tnd_basecache_done(c, key, NULL, 0);
    tnd_basecache_destroy(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_kept_baseline_is_a_hit),
        cmocka_unit_test(another_key_is_a_miss),
        cmocka_unit_test(the_key_follows_the_config),
        cmocka_unit_test(the_key_follows_the_directories),
        cmocka_unit_test(an_old_baseline_is_not_reused),
        cmocka_unit_test(the_oldest_goes_when_full),
        cmocka_unit_test(one_runs_and_the_other_waits_for_it),
        cmocka_unit_test(a_failed_run_is_not_kept),
        cmocka_unit_test(a_waiter_stops_when_told),
        cmocka_unit_test(a_waiter_keeps_its_deadline),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
