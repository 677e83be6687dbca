/* Unit tests for orchestrator/journal: the append-only session journal. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/fs.h"
#include "common/log.h"
#include "common/rmtree.h"
#include "orchestrator/journal.h"
#include "proto/json.h"

static char dir[] = "/tmp/tnd-test-journal-XXXXXX";
static char path[256];

static int setup(void **state)
{
    (void)state;
    if (!mkdtemp(dir))
        return -1;
    snprintf(path, sizeof(path), "%s/journal.jsonl", dir);
    tnd_log_init("test", TND_LOG_ERROR);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    return tnd_fs_rmtree(dir);
}

static json_object *fields(const char *key, int value)
{
    json_object *o = json_object_new_object();

    json_object_object_add(o, key, json_object_new_int(value));
    return o;
}

static long seq_of(json_object *rec)
{
    return json_object_get_int64(json_object_object_get(rec, "seq"));
}

static void records_survive_a_reopen_and_seq_continues(void **state)
{
    tnd_journal *j;

    (void)state;
    unlink(path);
    j = tnd_journal_open(path);
    assert_non_null(j);
    assert_int_equal(tnd_journal_count(j), 0);
    assert_int_equal(tnd_journal_append(j, "task", fields("a", 1)), 0);
    assert_int_equal(tnd_journal_append(j, "proposal", fields("attempt", 1)),
                     0);
    tnd_journal_close(&j);
    assert_null(j);

    j = tnd_journal_open(path);
    assert_int_equal(tnd_journal_count(j), 2);
    assert_string_equal(tnd_journal_type(tnd_journal_record(j, 0)), "task");
    assert_int_equal(seq_of(tnd_journal_record(j, 1)), 2);
    assert_non_null(json_object_object_get(tnd_journal_record(j, 1), "time"));
    assert_int_equal(tnd_journal_append(j, "decision", NULL), 0);
    assert_int_equal(seq_of(tnd_journal_record(j, 2)), 3);
    assert_false(tnd_journal_was_torn(j));
    tnd_journal_close(&j);
}

/* A note (not fsync'd) is a record like any other: in order, with its
 * seq, read back on open. */
static void a_note_is_a_record_in_order(void **state)
{
    tnd_journal *j;

    (void)state;
    unlink(path);
    j = tnd_journal_open(path);
    assert_int_equal(tnd_journal_append(j, "task", fields("a", 1)), 0);
    assert_int_equal(tnd_journal_note(j, "asked", fields("attempt", 1)), 0);
    assert_int_equal(tnd_journal_append(j, "proposal", fields("attempt", 1)),
                     0);
    assert_int_equal(tnd_journal_count(j), 3);
    tnd_journal_close(&j);

    j = tnd_journal_open(path);
    assert_int_equal(tnd_journal_count(j), 3);
    assert_string_equal(tnd_journal_type(tnd_journal_record(j, 1)), "asked");
    assert_int_equal(seq_of(tnd_journal_record(j, 1)), 2);
    assert_int_equal(seq_of(tnd_journal_record(j, 2)), 3);
    tnd_journal_close(&j);
}

static void a_torn_last_line_is_ignored_and_repaired(void **state)
{
    static const char text[] = "{\"seq\":1,\"time\":\"t\",\"type\":\"task\"}\n"
                               "{\"seq\":2,\"time\":\"t\",\"type\":\"propo";
    json_object *all = NULL;
    tnd_journal *j;
    char *back = NULL;

    (void)state;
    assert_int_equal(tnd_fs_write(path, text, strlen(text)), 0);
    assert_int_equal(tnd_journal_read(&all, path), 0);
    assert_int_equal(json_object_array_length(all), 1);
    json_object_put(all);

    j = tnd_journal_open(path);
    assert_non_null(j);
    assert_true(tnd_journal_was_torn(j));
    assert_int_equal(tnd_journal_count(j), 1);
    assert_int_equal(tnd_journal_append(j, "proposal", fields("attempt", 1)),
                     0);
    tnd_journal_close(&j);
    /* the torn bytes are gone; the file is whole again */
    assert_int_equal(tnd_fs_read(&back, NULL, path, 1 << 20), 0);
    assert_null(strstr(back, "propo\""));
    assert_non_null(strstr(back, "{\"seq\":2,"));
    assert_int_equal(back[strlen(back) - 1], '\n');
    free(back);
}

static void damage_before_the_end_is_an_error(void **state)
{
    static const char text[] = "{\"seq\":1,\"type\":\"task\"}\n"
                               "garbage that is not JSON\n"
                               "{\"seq\":3,\"type\":\"finish\"}\n";
    json_object *all = NULL;

    (void)state;
    assert_int_equal(tnd_fs_write(path, text, strlen(text)), 0);
    assert_null(tnd_journal_open(path));
    assert_non_null(strstr(tnd_error_last(), "journal.jsonl:2: the journal "
                                             "is damaged"));
    assert_int_equal(tnd_journal_read(&all, path), -1);
}

/* A file of millions of records is no journal of tandem's: refused at
 * the cap, not read into gigabytes (10 MB of "{}" took 2.7 GB). */
static void too_many_records_are_refused(void **state)
{
    size_t n = 200001;
    char *text = malloc(n * 3);
    json_object *all = NULL;

    (void)state;
    assert_non_null(text);
    for (size_t i = 0; i < n; i++)
        memcpy(text + 3 * i, "{}\n", 3);
    assert_int_equal(tnd_fs_write(path, text, n * 3), 0);
    assert_int_equal(tnd_journal_read(&all, path), -1);
    assert_non_null(strstr(tnd_error_last(), "more than 200000 records"));
    assert_null(all);
    free(text);
}

/* A listing across sessions reads records in outline: a journal of
 * large records took ~30 times its size (9 GB for a 300 MB journal) to
 * list. Scalars stay (long strings cut), an object field is only said
 * to be there, arrays go. */
static void an_outline_keeps_the_scalars_only(void **state)
{
    tnd_buf b;
    json_object *all = NULL, *rec, *review;

    (void)state;
    tnd_buf_init(&b, TND_BUF_NOCAP);
    tnd_buf_puts(&b, "{\"seq\":1,\"type\":\"task\",\"review\":{\"rev\":\"x\"},"
                     "\"started_ms\":5,\"task\":\"");
    for (int i = 0; i < 3000; i++)
        tnd_buf_puts(&b, "t");
    tnd_buf_puts(&b, "\"}\n{\"seq\":2,\"type\":\"audit\",\"attempt\":1,"
                     "\"reply\":{\"skills\":[1,2,3]},\"a\":[[1],[2]],"
                     "\"passed\":true,\"none\":null}\n");
    assert_int_equal(tnd_fs_write(path, b.data, b.len), 0);
    assert_int_equal(tnd_journal_read_outline(&all, path), 0);
    assert_int_equal(json_object_array_length(all), 2);
    rec = json_object_array_get_idx(all, 0);
    assert_int_equal(
        strlen(json_object_get_string(tnd_json_field(rec, "task"))), 1024);
    assert_int_equal(tnd_json_int_or(rec, "started_ms", 0), 5);
    assert_true(json_object_object_get_ex(rec, "review", &review));
    assert_int_equal(json_object_object_length(review), 0);
    rec = json_object_array_get_idx(all, 1);
    assert_string_equal(tnd_journal_type(rec), "audit");
    assert_int_equal(tnd_json_int_or(rec, "attempt", 0), 1);
    assert_int_equal(json_object_object_length(tnd_json_field(rec, "reply")),
                     0);
    assert_false(json_object_object_get_ex(rec, "a", NULL));
    assert_true(json_object_get_boolean(tnd_json_field(rec, "passed")));
    assert_true(json_object_object_get_ex(rec, "none", NULL));
    json_object_put(all);
    tnd_buf_free(&b);
}

static void a_failed_write_is_reported_and_nothing_is_half_written(void **state)
{
    struct rlimit old, small;
    char *back = NULL;
    size_t len_before;
    tnd_journal *j;
    json_object *big;
    char filler[2048];

    (void)state;
    unlink(path);
    j = tnd_journal_open(path);
    assert_int_equal(tnd_journal_append(j, "task", fields("a", 1)), 0);
    assert_int_equal(tnd_fs_read(&back, &len_before, path, 1 << 20), 0);
    free(back);

    /* the disk "fills up": writes past 1 KiB fail (EFBIG, not a signal) */
    signal(SIGXFSZ, SIG_IGN);
    getrlimit(RLIMIT_FSIZE, &old);
    small = old;
    small.rlim_cur = 1024;
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &small), 0);
    memset(filler, 'x', sizeof(filler) - 1);
    filler[sizeof(filler) - 1] = '\0';
    big = json_object_new_object();
    json_object_object_add(big, "text", json_object_new_string(filler));
    assert_int_equal(tnd_journal_append(j, "proposal", big), -1);
    assert_non_null(strstr(tnd_error_last(), "cannot write the journal"));
    /* later steps are refused rather than recorded without this one */
    assert_int_equal(tnd_journal_append(j, "decision", NULL), -1);
    assert_non_null(strstr(tnd_error_last(), "an earlier write failed"));
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &old), 0);
    signal(SIGXFSZ, SIG_DFL);
    tnd_journal_close(&j);

    /* what was journaled before is intact */
    j = tnd_journal_open(path);
    assert_non_null(j);
    assert_int_equal(tnd_journal_count(j), 1);
    assert_false(tnd_journal_was_torn(j));
    tnd_journal_close(&j);
}

static void secrets_never_reach_the_journal(void **state)
{
    json_object *f = json_object_new_object();
    char *back = NULL;
    tnd_journal *j;

    (void)state;
    unlink(path);
    tnd_log_secret("sk-journal-secret-0123456789");
    json_object_object_add(
        f, "error",
        json_object_new_string("401 for sk-journal-secret-0123456789"));
    j = tnd_journal_open(path);
    assert_int_equal(tnd_journal_append(j, "finish", f), 0);
    tnd_journal_close(&j);
    assert_int_equal(tnd_fs_read(&back, NULL, path, 1 << 20), 0);
    assert_null(strstr(back, "sk-journal-secret"));
    free(back);
}

/* A short secret (a local server's dummy key, "4096") is redacted in
 * text, never in a number: the line stays JSON and the journal reads
 * back whole (a review found "prompt_tokens":**** and a session read as
 * damaged). */
static void a_short_secret_leaves_the_journal_readable(void **state)
{
    json_object *f = json_object_new_object(), *records = NULL, *r;
    tnd_journal *j;

    (void)state;
    unlink(path);
    tnd_log_secret("4096");
    json_object_object_add(f, "prompt_tokens", json_object_new_int(4096));
    json_object_object_add(f, "error", json_object_new_string("key 4096"));
    j = tnd_journal_open(path);
    assert_int_equal(tnd_journal_append(j, "audit", f), 0);
    tnd_journal_close(&j);
    assert_int_equal(tnd_journal_read(&records, path), 0);
    assert_int_equal(json_object_array_length(records), 1);
    r = json_object_array_get_idx(records, 0);
    assert_int_equal(tnd_json_int_or(r, "prompt_tokens", 0), 4096);
    assert_string_equal(tnd_json_str_or(r, "error", ""), "key ****");
    json_object_put(records);
}

/* A reply as deeply nested as a body may be (TND_JSON_MAX_DEPTH) is a
 * level deeper in its record: it reads back, not dropped as a torn line
 * (its call would be paid again; a review found it). */
static void a_deep_reply_reads_back(void **state)
{
    char body[8 * TND_JSON_MAX_DEPTH];
    size_t n = 0;
    json_object *reply = NULL, *f = json_object_new_object(), *records = NULL;
    tnd_journal *j;

    (void)state;
    unlink(path);
    for (int i = 0; i < TND_JSON_MAX_DEPTH - 1; i++)
        n += (size_t)snprintf(body + n, sizeof(body) - n, "{\"a\":");
    body[n++] = '1';
    for (int i = 0; i < TND_JSON_MAX_DEPTH - 1; i++)
        body[n++] = '}';
    assert_int_equal(tnd_json_parse(&reply, body, n), 0);
    json_object_object_add(f, "reply", reply);
    j = tnd_journal_open(path);
    assert_int_equal(tnd_journal_append(j, "audit", f), 0);
    tnd_journal_close(&j);
    assert_int_equal(tnd_journal_read(&records, path), 0);
    assert_int_equal(json_object_array_length(records), 1);
    json_object_put(records);
    j = tnd_journal_open(path);
    assert_non_null(j);
    assert_int_equal(tnd_journal_count(j), 1);
    tnd_journal_close(&j);
}

/* Where a session stands, read from its last steps; a status that is no
 * outcome is an error naming it, the line and the known ones. */
static void the_status_comes_from_the_last_step(void **state)
{
    static const struct {
        const char *records; /* a JSON array */
        int rc;
        tnd_session_status want;
        const char *error;
    } rows[] = {
        {"[]", 0, TND_SESSION_OPEN, NULL},
        {"[{\"type\":\"task\"},{\"type\":\"decision\"}]", 0, TND_SESSION_OPEN,
         NULL},
        {"[{\"type\":\"task\"},{\"type\":\"escalation\"}]", 0,
         TND_SESSION_WAITING, NULL},
        /* a resume that reached the same question again */
        {"[{\"type\":\"escalation\"},{\"type\":\"resume\"}]", 0,
         TND_SESSION_WAITING, NULL},
        {"[{\"type\":\"escalation\"},{\"type\":\"answer\"}]", 0,
         TND_SESSION_OPEN, NULL},
        {"[{\"type\":\"finish\",\"status\":\"approved\"}]", 0,
         TND_SESSION_APPROVED, NULL},
        {"[{\"type\":\"finish\",\"status\":\"rejected\"},{\"type\":"
         "\"resume\"}]",
         0, TND_SESSION_REJECTED, NULL},
        {"[{\"type\":\"finish\",\"status\":\"escalated\"}]", 0,
         TND_SESSION_ESCALATED, NULL},
        {"[{\"type\":\"task\"},{\"type\":\"finish\",\"status\":\"done\"}]", -1,
         TND_SESSION_OPEN,
         "journal.jsonl:2: unknown session status 'done' (known: approved, "
         "rejected, escalated, failed, interrupted)"},
        /* what is read back, never written */
        {"[{\"type\":\"finish\",\"status\":\"running\"}]", -1, TND_SESSION_OPEN,
         "journal.jsonl:1: unknown session status 'running' (known: "
         "approved, rejected, escalated, failed, interrupted)"},
        {"[{\"type\":\"finish\"}]", -1, TND_SESSION_OPEN,
         "journal.jsonl:1: unknown session status '' (known: approved, "
         "rejected, escalated, failed, interrupted)"},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        json_object *records = json_tokener_parse(rows[i].records);
        tnd_session_status got = TND_SESSION_UNREADABLE;
        assert_non_null(records);
        assert_int_equal(tnd_journal_status(&got, records), rows[i].rc);
        if (rows[i].rc == 0)
            assert_int_equal(got, rows[i].want);
        else
            assert_string_equal(tnd_error_last(), rows[i].error);
        json_object_put(records);
    }
    /* the escalation waited on is the last step's, a resume not
     * counting; an answered one is none */
    {
        static const struct {
            const char *records;
            long want;
        } waits[] = {
            {"[{\"type\":\"escalation\",\"seq\":4},{\"type\":\"answer\","
             "\"seq\":5},{\"type\":\"escalation\",\"seq\":9},{\"type\":"
             "\"resume\",\"seq\":10}]",
             9},
            {"[{\"type\":\"escalation\",\"seq\":4},{\"type\":\"answer\","
             "\"seq\":5}]",
             0},
            {"[]", 0},
        };
        for (size_t i = 0; i < sizeof(waits) / sizeof(waits[0]); i++) {
            json_object *records = json_tokener_parse(waits[i].records);
            assert_int_equal(tnd_journal_waiting_on(records), waits[i].want);
            json_object_put(records);
        }
        assert_int_equal(tnd_journal_waiting_on(NULL), 0);
    }
    /* an open journal's records are the same array */
    {
        tnd_journal *j;
        tnd_session_status got = TND_SESSION_OPEN;
        json_object *f = json_object_new_object();
        unlink(path);
        j = tnd_journal_open(path);
        assert_non_null(j);
        json_object_object_add(f, "status", json_object_new_string("approved"));
        assert_int_equal(tnd_journal_append(j, "finish", f), 0);
        assert_int_equal(json_object_array_length(tnd_journal_records(j)), 1);
        assert_int_equal(tnd_journal_status(&got, tnd_journal_records(j)), 0);
        assert_int_equal(got, TND_SESSION_APPROVED);
        assert_string_equal(tnd_session_status_name(got), "approved");
        tnd_journal_close(&j);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(records_survive_a_reopen_and_seq_continues),
        cmocka_unit_test(a_note_is_a_record_in_order),
        cmocka_unit_test(a_torn_last_line_is_ignored_and_repaired),
        cmocka_unit_test(damage_before_the_end_is_an_error),
        cmocka_unit_test(too_many_records_are_refused),
        cmocka_unit_test(an_outline_keeps_the_scalars_only),
        cmocka_unit_test(
            a_failed_write_is_reported_and_nothing_is_half_written),
        cmocka_unit_test(secrets_never_reach_the_journal),
        cmocka_unit_test(a_short_secret_leaves_the_journal_readable),
        cmocka_unit_test(a_deep_reply_reads_back),
        cmocka_unit_test(the_status_comes_from_the_last_step),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
