/* Unit tests for orchestrator/hubsession: the `done` reply a served
 * session's clients get, with its report, or without it when the two
 * would not fit in one body or the report is a link; the status list
 * within its bytes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/fs.h"
#include "common/log.h"
#include "common/rmtree.h"
#include "orchestrator/hubsession.h"
#include "proto/json.h"
#include "proto/mdp.h"

static char tmpdir[] = "/tmp/tnd-test-hubsession-XXXXXX";

/* report.json in tmpdir: status approved and a field of pad bytes. */
static void write_report(size_t pad)
{
    char path[PATH_MAX];
    tnd_buf b;

    snprintf(path, sizeof(path), "%s/report.json", tmpdir);
    tnd_buf_init(&b, TND_BUF_NOCAP);
    tnd_buf_puts(&b, "{\"status\": \"approved\", \"pad\": \"");
    for (size_t i = 0; i < pad; i++)
        tnd_buf_append(&b, "a", 1);
    tnd_buf_puts(&b, "\"}");
    assert_int_equal(tnd_fs_write(path, b.data, b.len), 0);
    tnd_buf_free(&b);
}

/* The done reply of session s1, whose directory is tmpdir. */
static char *done_body(int code, size_t *len)
{
    int dir = open(tmpdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    char *body;

    assert_true(dir >= 0);
    body = tnd_hubsession_done_body("s1", dir, code, NULL, len);
    close(dir);
    return body;
}

/* A report.json that is a link (to another session's, say) is not
 * followed: the outcome goes without it. */
static void a_report_that_is_a_link_stays_behind(void **state)
{
    char path[PATH_MAX], other[PATH_MAX];
    size_t len = 0;
    char *body;

    (void)state;
    write_report(10);
    snprintf(path, sizeof(path), "%s/report.json", tmpdir);
    snprintf(other, sizeof(other), "%s/other.json", tmpdir);
    assert_int_equal(rename(path, other), 0);
    assert_int_equal(symlink(other, path), 0);
    body = done_body(0, &len);
    assert_non_null(strstr(body, "\"type\":\"done\""));
    assert_null(strstr(body, "aaaa"));
    free(body);
    unlink(path);
    unlink(other);
}

static void the_report_comes_with_the_outcome(void **state)
{
    size_t len = 0;
    char *body;

    (void)state;
    write_report(10);
    body = done_body(0, &len);
    assert_non_null(strstr(body, "\"status\":\"approved\""));
    assert_non_null(strstr(body, "\"pad\":\"aaaaaaaaaa\""));
    free(body);
}

/* The report the session's run wrote, as it kept it, is the one told:
 * report.json is not read back (here it holds another). */
static void the_report_the_run_kept_is_told(void **state)
{
    static const char kept_text[] = "{\"status\": \"approved\", "
                                    "\"pad\": \"kept\"}";
    json_object *kept = NULL;
    size_t len = 0;
    char *body;

    (void)state;
    write_report(10);
    assert_int_equal(tnd_json_parse(&kept, kept_text, strlen(kept_text)), 0);
    body = tnd_hubsession_done_body("s1", -1, 0, kept, &len);
    assert_non_null(strstr(body, "\"status\":\"approved\""));
    assert_non_null(strstr(body, "\"pad\":\"kept\""));
    assert_null(strstr(body, "aaaa"));
    free(body);
    json_object_put(kept); /* borrowed: still the caller's */
}

/* A report that fills a body leaves no room for the reply around it:
 * such a reply was never sent, and the client waited until it gave up
 * (a review found it). The outcome goes without it. */
static void a_report_too_large_for_a_reply_stays_behind(void **state)
{
    size_t len = 0;
    char *body;

    (void)state;
    write_report(TND_MDP_MAX_BODY - 100);
    body = done_body(0, &len);
    assert_true(len <= TND_MDP_MAX_BODY);
    assert_non_null(strstr(body, "\"status\":\"approved\""));
    assert_null(strstr(body, "aaaa"));
    free(body);
}

/* A long queue of long paths: the list stops at its bytes, and says how
 * many it left out (the reply went over a frame, and no status came). */
static void the_status_list_stays_within_its_bytes(void **state)
{
    tnd_hubsession *s[5];
    char repo[1001], id[32];
    json_object *list;
    size_t more = 99, whole;

    (void)state;
    memset(repo, 'r', sizeof(repo) - 1);
    repo[0] = '/';
    repo[sizeof(repo) - 1] = '\0';
    for (int i = 0; i < 5; i++) {
        snprintf(id, sizeof(id), "s%d", i);
        s[i] = tnd_hubsession_new(id, repo, id, tmpdir);
    }
    list = tnd_hubsession_list(s, 5, NULL, SIZE_MAX, &more);
    assert_int_equal(json_object_array_length(list), 5);
    assert_int_equal(more, 0);
    whole =
        strlen(json_object_to_json_string_ext(list, JSON_C_TO_STRING_PLAIN));
    json_object_put(list);
    /* room for two and a half entries: two listed, three more */
    list = tnd_hubsession_list(s, 5, NULL, whole / 2, &more);
    assert_int_equal(json_object_array_length(list), 2);
    assert_int_equal(more, 3);
    assert_string_equal(json_object_get_string(json_object_object_get(
                            json_object_array_get_idx(list, 1), "session")),
                        "s1");
    json_object_put(list);
    list = tnd_hubsession_list(s, 5, NULL, 10, &more);
    assert_int_equal(json_object_array_length(list), 0);
    assert_int_equal(more, 5);
    json_object_put(list);
    for (int i = 0; i < 5; i++)
        tnd_hubsession_destroy(&s[i]);
}

/* A key's status lists its own sessions only, and counts only those it
 * left out. */
static void a_status_list_for_one_owner(void **state)
{
    tnd_hubsession *s[4];
    json_object *list;
    size_t more = 99;

    (void)state;
    for (int i = 0; i < 4; i++) {
        char id[8];
        snprintf(id, sizeof(id), "s%d", i);
        s[i] = tnd_hubsession_new(id, "/r", id, tmpdir);
        tnd_hubsession_set_owner(s[i], i % 2 ? "KEY-B" : "KEY-A");
    }
    tnd_hubsession_set_owner(s[2], NULL);
    assert_null(tnd_hubsession_owner(s[2]));
    list = tnd_hubsession_list(s, 4, "KEY-B", SIZE_MAX, &more);
    assert_int_equal(json_object_array_length(list), 2);
    assert_int_equal(more, 0);
    assert_string_equal(json_object_get_string(json_object_object_get(
                            json_object_array_get_idx(list, 1), "session")),
                        "s3");
    json_object_put(list);
    list = tnd_hubsession_list(s, 4, "KEY-A", SIZE_MAX, &more);
    assert_int_equal(json_object_array_length(list), 1); /* s2 has none */
    json_object_put(list);
    list = tnd_hubsession_list(s, 4, "KEY-B", 10, &more);
    assert_int_equal(json_object_array_length(list), 0);
    assert_int_equal(more, 2);
    json_object_put(list);
    for (int i = 0; i < 4; i++)
        tnd_hubsession_destroy(&s[i]);
}

/* A client that attaches again and again is one follower: it used to
 * take every place, and nobody else could follow the session. */
static void a_client_attaching_again_is_one_follower(void **state)
{
    tnd_hubsession *s = tnd_hubsession_new("s1", "/r", "S1", tmpdir);
    unsigned char client[5] = {0, 'a', 'b', 'c', 0};
    json_object *o;

    (void)state;
    for (int i = 0; i < 3 * TND_HUBSESSION_MAX_FOLLOWERS; i++)
        assert_int_equal(
            tnd_hubsession_follow(s, client, sizeof(client), "tandem.attach"),
            0);
    o = tnd_hubsession_json(s);
    assert_int_equal(
        json_object_get_int(json_object_object_get(o, "followers")), 1);
    json_object_put(o);
    for (int i = 1; i < TND_HUBSESSION_MAX_FOLLOWERS; i++) {
        client[4] = (unsigned char)i;
        assert_int_equal(
            tnd_hubsession_follow(s, client, sizeof(client), "tandem.attach"),
            0);
    }
    client[4] = 0xff;
    assert_int_equal(
        tnd_hubsession_follow(s, client, sizeof(client), "tandem.attach"), -1);
    assert_non_null(strstr(tnd_error_last(), "the most it takes"));
    tnd_hubsession_destroy(&s);
}

static int setup(void **state)
{
    (void)state;
    tnd_log_init("test", TND_LOG_ERROR);
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    return tnd_fs_rmtree(tmpdir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_report_comes_with_the_outcome),
        cmocka_unit_test(the_report_the_run_kept_is_told),
        cmocka_unit_test(a_report_too_large_for_a_reply_stays_behind),
        cmocka_unit_test(a_report_that_is_a_link_stays_behind),
        cmocka_unit_test(the_status_list_stays_within_its_bytes),
        cmocka_unit_test(a_status_list_for_one_owner),
        cmocka_unit_test(a_client_attaching_again_is_one_follower),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
