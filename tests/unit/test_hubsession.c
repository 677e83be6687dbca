/* Unit tests for orchestrator/hubsession: the `done` reply a served
 * session's clients get, with its report, or without it when the two
 * would not fit in one body; the status list within its bytes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/fs.h"
#include "common/log.h"
#include "orchestrator/hubsession.h"
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

static void the_report_comes_with_the_outcome(void **state)
{
    size_t len = 0;
    char *body;

    (void)state;
    write_report(10);
    body = tnd_hubsession_done_body("s1", tmpdir, 0, &len);
    assert_non_null(strstr(body, "\"status\":\"approved\""));
    assert_non_null(strstr(body, "\"pad\":\"aaaaaaaaaa\""));
    free(body);
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
    body = tnd_hubsession_done_body("s1", tmpdir, 0, &len);
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
    list = tnd_hubsession_list(s, 5, SIZE_MAX, &more);
    assert_int_equal(json_object_array_length(list), 5);
    assert_int_equal(more, 0);
    whole =
        strlen(json_object_to_json_string_ext(list, JSON_C_TO_STRING_PLAIN));
    json_object_put(list);
    /* room for two and a half entries: two listed, three more */
    list = tnd_hubsession_list(s, 5, whole / 2, &more);
    assert_int_equal(json_object_array_length(list), 2);
    assert_int_equal(more, 3);
    assert_string_equal(json_object_get_string(json_object_object_get(
                            json_object_array_get_idx(list, 1), "session")),
                        "s1");
    json_object_put(list);
    list = tnd_hubsession_list(s, 5, 10, &more);
    assert_int_equal(json_object_array_length(list), 0);
    assert_int_equal(more, 5);
    json_object_put(list);
    for (int i = 0; i < 5; i++)
        tnd_hubsession_destroy(&s[i]);
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
        cmocka_unit_test(a_report_too_large_for_a_reply_stays_behind),
        cmocka_unit_test(the_status_list_stays_within_its_bytes),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
