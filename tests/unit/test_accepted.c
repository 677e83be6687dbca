/* Unit tests for orchestrator/accepted: the sessions tandem serve
 * accepted and has not ended, as the next server finds them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/error.h"
#include "common/fs.h"
#include "common/rmtree.h"
#include "orchestrator/accepted.h"

static char tmpdir[] = "/tmp/tnd-test-accepted-XXXXXX";

/* Every fdatasync of the list, counted: this executable's definition is
 * the one the journal calls. */
static long syncs;

int fdatasync(int fd)
{
    syncs++;
    return (int)syscall(SYS_fdatasync, fd);
}
static char path[PATH_MAX];

static size_t lines(void)
{
    char *text = NULL;
    size_t len = 0, n = 0;

    assert_int_equal(tnd_fs_read(&text, &len, path, 1 << 24), 0);
    for (size_t i = 0; i < len; i++)
        n += text[i] == '\n';
    free(text);
    return n;
}

static void what_is_not_ended_survives_a_restart(void **state)
{
    tnd_accepted *a;

    (void)state;
    assert_non_null(a = tnd_accepted_open(path));
    assert_int_equal(tnd_accepted_pending(a), 0);
    assert_int_equal(tnd_accepted_add(a, "/r/a", "S1", NULL, NULL), 0);
    assert_int_equal(tnd_accepted_add(a, "/r/b", "S2", NULL, NULL), 0);
    assert_int_equal(tnd_accepted_add(a, "/r/a", "S3", NULL, NULL), 0);
    assert_int_equal(tnd_accepted_end(a, "S2", 0, NULL), 0);
    assert_int_equal(tnd_accepted_end(a, "nobody", 0, NULL), 0);
    assert_int_equal(tnd_accepted_pending(a), 2);
    tnd_accepted_close(&a);
    assert_null(a);

    /* the next server: S1 and S3, oldest first, and only they on disk */
    assert_non_null(a = tnd_accepted_open(path));
    assert_int_equal(tnd_accepted_pending(a), 2);
    assert_string_equal(tnd_accepted_repo(a, 0), "/r/a");
    assert_string_equal(tnd_accepted_id(a, 0), "S1");
    assert_string_equal(tnd_accepted_id(a, 1), "S3");
    assert_int_equal(lines(), 3); /* and S2's outcome */
    tnd_accepted_close(&a);
    tnd_accepted_close(&a);
}

static void a_long_life_keeps_the_file_small(void **state)
{
    tnd_accepted *a;
    char id[32];

    (void)state;
    unlink(path);
    assert_non_null(a = tnd_accepted_open(path));
    assert_int_equal(tnd_accepted_add(a, "/r/a", "KEEP", NULL, NULL), 0);
    for (int i = 0; i < 2000; i++) {
        snprintf(id, sizeof(id), "S%d", i);
        assert_int_equal(tnd_accepted_add(a, "/r/b", id, NULL, NULL), 0);
        assert_int_equal(tnd_accepted_end(a, id, 0, NULL), 0);
    }
    assert_int_equal(tnd_accepted_pending(a), 1);
    /* the pending one and the newest outcomes, and at most twice that
     * and the slack before it is written afresh */
    assert_true(lines() <= 3 * (1 + TND_ACCEPTED_ENDED_MAX) + 1024);
    tnd_accepted_close(&a);
    assert_non_null(a = tnd_accepted_open(path));
    assert_int_equal(tnd_accepted_pending(a), 1);
    assert_string_equal(tnd_accepted_id(a, 0), "KEEP");
    tnd_accepted_close(&a);
}

/* However many sessions it keeps, the file is rewritten before it holds
 * more records than a journal reader takes: with --queue-max 100000 it
 * was rewritten only at twice what it kept, past 200,000, and the next
 * server could not read it. Here the most is lowered to 100, and the same
 * 50 sessions answered again and again (each answer a record). */
static void the_file_stays_under_its_most_records(void **state)
{
    tnd_accepted *a;
    char id[32];

    (void)state;
    unlink(path);
    assert_non_null(a = tnd_accepted_open(path));
    tnd_accepted_set_records_max(a, 100);
    for (int round = 0; round < 4; round++)
        for (int i = 0; i < 50; i++) {
            snprintf(id, sizeof(id), "S%d", i);
            assert_int_equal(tnd_accepted_add(a, "/r/a", id, NULL, NULL), 0);
            assert_true(lines() <= 100);
        }
    assert_int_equal(tnd_accepted_pending(a), 50);
    tnd_accepted_close(&a);
    assert_non_null(a = tnd_accepted_open(path));
    assert_int_equal(tnd_accepted_pending(a), 50);
    assert_int_equal(lines(), 50);
    tnd_accepted_close(&a);
}

/* An answer to a waiting session is accepted like a task, with the
 * answer: a server killed before the session went on finds it there. */
static void an_answer_survives_a_restart(void **state)
{
    tnd_accepted *a;
    json_object *ans = json_tokener_parse(
        "{\"answer\": \"guide\", \"text\": \"use a double\"}");

    (void)state;
    unlink(path);
    assert_non_null(a = tnd_accepted_open(path));
    assert_int_equal(tnd_accepted_add(a, "/r/a", "S1", NULL, NULL), 0);
    assert_int_equal(tnd_accepted_add(a, "/r/a", "S2", NULL, NULL), 0);
    assert_int_equal(tnd_accepted_end(a, "S1", 3, NULL), 0); /* it escalated */
    assert_int_equal(tnd_accepted_add(a, "/r/a", "S1", ans, NULL), 0);
    json_object_put(ans);
    assert_int_equal(tnd_accepted_pending(a), 2);
    assert_null(tnd_accepted_answer(a, 0)); /* S2 */
    assert_non_null(tnd_accepted_answer(a, 1));
    tnd_accepted_close(&a);

    assert_non_null(a = tnd_accepted_open(path));
    assert_int_equal(tnd_accepted_pending(a), 2);
    assert_string_equal(tnd_accepted_id(a, 0), "S2");
    assert_null(tnd_accepted_answer(a, 0));
    assert_string_equal(tnd_accepted_id(a, 1), "S1");
    assert_string_equal(json_object_get_string(json_object_object_get(
                            tnd_accepted_answer(a, 1), "text")),
                        "use a double");
    /* answered again without ending (a second client): one entry */
    assert_int_equal(tnd_accepted_add(a, "/r/a", "S1", NULL, NULL), 0);
    assert_int_equal(tnd_accepted_pending(a), 2);
    tnd_accepted_close(&a);
    assert_non_null(a = tnd_accepted_open(path));
    assert_int_equal(tnd_accepted_pending(a), 2);
    tnd_accepted_close(&a);
}

/* An answer is kept with who gave it, as the hub said (the client its
 * request came from), and the caller's object is left as it was. */
static void an_answer_keeps_who_gave_it(void **state)
{
    tnd_client_who who = {.via = TND_CLIENT_VIA_CURVE,
                          .user = "build-host",
                          .key = "rq:rM>}U?@Ln",
                          .address = "10.0.0.2"},
                   got;
    tnd_accepted *a;
    json_object *ans = json_tokener_parse("{\"answer\": \"approve\"}");

    (void)state;
    unlink(path);
    assert_non_null(a = tnd_accepted_open(path));
    assert_int_equal(tnd_accepted_add(a, "/r/a", "S1", ans, &who), 0);
    assert_int_equal(tnd_accepted_add(a, "/r/a", "S2", ans, NULL), 0);
    assert_null(json_object_object_get(ans, "user"));
    json_object_put(ans);
    tnd_accepted_close(&a);

    assert_non_null(a = tnd_accepted_open(path));
    assert_int_equal(tnd_accepted_pending(a), 2);
    tnd_client_who_read(&got, tnd_accepted_answer(a, 0));
    assert_int_equal(got.via, TND_CLIENT_VIA_CURVE);
    assert_string_equal(got.user, "build-host");
    assert_string_equal(got.key, "rq:rM>}U?@Ln");
    assert_string_equal(got.address, "10.0.0.2");
    tnd_client_who_read(&got, tnd_accepted_answer(a, 1));
    assert_int_equal(got.via, TND_CLIENT_VIA_NONE);
    assert_string_equal(got.user, "");
    tnd_accepted_close(&a);
}

/* A write that failed (a full disk) is told, naming the list's file,
 * and once there is room the list takes records again: a server whose
 * disk filled once refused every later task until it was restarted. */
static void a_full_disk_once_does_not_stop_the_list(void **state)
{
    struct rlimit old, small;
    tnd_accepted *a;
    char repo[2048];

    (void)state;
    unlink(path);
    assert_non_null(a = tnd_accepted_open(path));
    assert_int_equal(tnd_accepted_add(a, "/r/a", "S1", NULL, NULL), 0);
    /* the disk "fills up": writes past 1 KiB fail (EFBIG, not a signal) */
    memset(repo, 'r', sizeof(repo) - 1);
    repo[0] = '/';
    repo[sizeof(repo) - 1] = '\0';
    signal(SIGXFSZ, SIG_IGN);
    getrlimit(RLIMIT_FSIZE, &old);
    small = old;
    small.rlim_cur = 1024;
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &small), 0);
    assert_int_equal(tnd_accepted_add(a, repo, "S2", NULL, NULL), -1);
    assert_non_null(strstr(tnd_error_last(), path));
    assert_null(strstr(tnd_error_last(), ".new"));
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
    signal(SIGXFSZ, SIG_DFL);
    /* room again */
    assert_int_equal(tnd_accepted_add(a, "/r/b", "S3", NULL, NULL), 0);
    assert_int_equal(tnd_accepted_add(a, "/r/b", "S4", NULL, NULL), 0);
    assert_int_equal(tnd_accepted_end(a, "S3", 0, NULL), 0);
    assert_int_equal(tnd_accepted_pending(a), 2);
    tnd_accepted_close(&a);

    assert_non_null(a = tnd_accepted_open(path));
    assert_int_equal(tnd_accepted_pending(a), 2);
    assert_string_equal(tnd_accepted_id(a, 0), "S1");
    assert_string_equal(tnd_accepted_id(a, 1), "S4");
    tnd_accepted_close(&a);
}

/* How a session ended is kept, the newest end of each, with who
 * submitted it, for a client that comes back to the next server: the
 * next server said it knew no such session, and a client whose `done`
 * was lost exited 1 for an approved change. */
static void outcomes_survive_a_restart(void **state)
{
    tnd_accepted_outcome o;
    tnd_accepted *a;
    json_object *ans = json_tokener_parse("{\"answer\": \"approve\"}");

    (void)state;
    unlink(path);
    assert_non_null(a = tnd_accepted_open(path));
    assert_int_equal(tnd_accepted_add(a, "/r/a", "S1", NULL, NULL), 0);
    assert_int_equal(tnd_accepted_add(a, "/r/b", "S2", NULL, NULL), 0);
    assert_int_equal(tnd_accepted_add(a, "/r/b", "S3", NULL, NULL), 0);
    assert_int_equal(tnd_accepted_add(a, "/r/b", "S4", NULL, NULL), 0);
    assert_int_equal(tnd_accepted_end(a, "S1", 0, "key-of-s1"), 0);
    assert_int_equal(tnd_accepted_end(a, "S2", 3, NULL), 0);
    /* a journal that could not be read: ended, no outcome */
    assert_int_equal(tnd_accepted_end(a, "S3", -1, NULL), 0);
    assert_false(tnd_accepted_outcome_of(a, "S3", &o));
    assert_false(tnd_accepted_outcome_of(a, "S4", &o)); /* pending */
    assert_true(tnd_accepted_outcome_of(a, "S2", &o));
    assert_int_equal(o.code, 3);
    /* S2 answered: pending again, its outcome let go */
    assert_int_equal(tnd_accepted_add(a, "/r/b", "S2", ans, NULL), 0);
    assert_false(tnd_accepted_outcome_of(a, "S2", &o));
    tnd_accepted_close(&a);

    assert_non_null(a = tnd_accepted_open(path));
    assert_int_equal(tnd_accepted_pending(a), 2); /* S4, S2 */
    assert_true(tnd_accepted_outcome_of(a, "S1", &o));
    assert_string_equal(o.repo, "/r/a");
    assert_string_equal(o.id, "S1");
    assert_string_equal(o.owner, "key-of-s1");
    assert_int_equal(o.code, 0);
    assert_false(tnd_accepted_outcome_of(a, "S2", &o));
    assert_false(tnd_accepted_outcome_of(a, "S3", &o));
    /* S2 ends again, approved: the newest end counts, here and next */
    assert_int_equal(tnd_accepted_end(a, "S2", 0, NULL), 0);
    assert_true(tnd_accepted_outcome_of(a, "S2", &o));
    assert_int_equal(o.code, 0);
    assert_null(o.owner);
    tnd_accepted_close(&a);
    assert_non_null(a = tnd_accepted_open(path));
    assert_true(tnd_accepted_outcome_of(a, "S2", &o));
    assert_int_equal(o.code, 0);
    assert_string_equal(o.repo, "/r/b");
    assert_int_equal(tnd_accepted_pending(a), 1);
    tnd_accepted_close(&a);
    json_object_put(ans);
}

/* Only the newest outcomes are kept, across a restart too; an "end"
 * written before outcomes were kept ends its session all the same. */
static void the_oldest_outcomes_go(void **state)
{
    tnd_accepted_outcome o;
    tnd_accepted *a;
    char id[32];
    FILE *f;

    (void)state;
    unlink(path);
    assert_non_null(a = tnd_accepted_open(path));
    for (int i = 0; i < TND_ACCEPTED_ENDED_MAX + 10; i++) {
        snprintf(id, sizeof(id), "S%d", i);
        assert_int_equal(tnd_accepted_add(a, "/r/a", id, NULL, NULL), 0);
        assert_int_equal(tnd_accepted_end(a, id, i % 2, NULL), 0);
    }
    assert_false(tnd_accepted_outcome_of(a, "S9", &o));
    assert_true(tnd_accepted_outcome_of(a, "S10", &o));
    assert_int_equal(o.code, 0);
    tnd_accepted_close(&a);

    assert_non_null(f = fopen(path, "a"));
    fputs("{\"seq\":99990,\"time\":\"2026-11-24T00:00:00Z\",\"type\":"
          "\"accept\",\"repo\":\"/r/c\",\"session\":\"OLD\"}\n"
          "{\"seq\":99991,\"time\":\"2026-11-24T00:00:00Z\",\"type\":"
          "\"end\",\"session\":\"OLD\"}\n",
          f);
    fclose(f);
    assert_non_null(a = tnd_accepted_open(path));
    assert_int_equal(tnd_accepted_pending(a), 0);
    assert_false(tnd_accepted_outcome_of(a, "OLD", &o));
    assert_false(tnd_accepted_outcome_of(a, "S9", &o));
    assert_true(tnd_accepted_outcome_of(a, "S11", &o));
    assert_int_equal(o.code, 1);
    assert_true(tnd_accepted_outcome_of(a, "S1033", &o));
    assert_int_equal(lines(), TND_ACCEPTED_ENDED_MAX);
    tnd_accepted_close(&a);
}

/* Writing the list afresh syncs once, not once a record: with 1,024
 * outcomes kept, a sync each stalled the server for a thousand device
 * flushes every thousand tasks. Each add and end syncs its own record. */
static void a_rewrite_syncs_once(void **state)
{
    tnd_accepted *a;
    char id[32];
    long before;
    int tasks = 3 * TND_ACCEPTED_ENDED_MAX;

    (void)state;
    unlink(path);
    assert_non_null(a = tnd_accepted_open(path));
    before = syncs;
    for (int i = 0; i < tasks; i++) {
        snprintf(id, sizeof(id), "S%d", i);
        assert_int_equal(tnd_accepted_add(a, "/r/a", id, NULL, NULL), 0);
        assert_int_equal(tnd_accepted_end(a, id, 0, NULL), 0);
    }
    /* two a task, and a few rewrites of one sync each */
    assert_true(syncs - before >= 2L * tasks);
    assert_true(syncs - before <= 2L * tasks + 10);
    tnd_accepted_close(&a);
}

static void a_damaged_list_is_an_error(void **state)
{
    FILE *f;

    (void)state;
    unlink(path);
    assert_non_null(f = fopen(path, "w"));
    fputs("not json\n{\"seq\":2}\n", f);
    fclose(f);
    assert_null(tnd_accepted_open(path));
}

static int setup(void **state)
{
    (void)state;
    if (!mkdtemp(tmpdir))
        return -1;
    snprintf(path, sizeof(path), "%s/accepted.jsonl", tmpdir);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    return tnd_fs_rmtree(tmpdir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(what_is_not_ended_survives_a_restart),
        cmocka_unit_test(a_long_life_keeps_the_file_small),
        cmocka_unit_test(the_file_stays_under_its_most_records),
        cmocka_unit_test(an_answer_survives_a_restart),
        cmocka_unit_test(an_answer_keeps_who_gave_it),
        cmocka_unit_test(a_full_disk_once_does_not_stop_the_list),
        cmocka_unit_test(outcomes_survive_a_restart),
        cmocka_unit_test(the_oldest_outcomes_go),
        cmocka_unit_test(a_rewrite_syncs_once),
        cmocka_unit_test(a_damaged_list_is_an_error),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}
