/* Unit tests for orchestrator/resume: an answer checked against the
 * session's journal before anything goes on (tnd_run_answer_check), and
 * the question a person's command read against the one that waits
 * (tnd_run_same_question). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/fs.h"
#include "common/log.h"
#include "common/rmtree.h"
#include "common/xalloc.h"
#include "orchestrator/run.h"

#define ID "20261122-014455-3fa2c91b"

static char repo[] = "/tmp/tnd-test-resume-XXXXXX";

/* The session ID's journal: a task record, then the records of rest
 * (one JSON object per line, each without its seq, time and brace). */
static void journal(const char *task_extra, const char *rest)
{
    char path[PATH_MAX], *text;

    snprintf(path, sizeof(path), "%s/.tandem/sessions/" ID, repo);
    assert_int_equal(tnd_fs_mkdirs(path, 0755), 0);
    strcat(path, "/journal.jsonl");
    text = tnd_xasprintf(
        "{\"seq\":1,\"time\":\"2026-11-22T01:44:55.000Z\",\"type\":\"task\","
        "\"task\":\"x\"%s}\n%s",
        task_extra, rest);
    assert_int_equal(tnd_fs_write(path, text, strlen(text)), 0);
    free(text);
}

/* An attempt decided with diff attempt-1.diff (holding text, or none),
 * escalated: the session waits on seq 3. */
static void waiting(const char *task_extra, const char *diff)
{
    char path[PATH_MAX];

    journal(task_extra,
            "{\"seq\":2,\"time\":\"2026-11-22T01:45:00.000Z\","
            "\"type\":\"decision\",\"attempt\":1,\"action\":\"escalate\","
            "\"diff\":\".tandem/sessions/" ID "/attempt-1.diff\"}\n"
            "{\"seq\":3,\"time\":\"2026-11-22T01:45:00.000Z\","
            "\"type\":\"escalation\",\"attempt\":1,\"at\":\"decision\","
            "\"reason\":\"r\",\"mode\":\"queue\"}\n");
    snprintf(path, sizeof(path), "%s/.tandem/sessions/" ID "/attempt-1.diff",
             repo);
    remove(path);
    if (diff)
        assert_int_equal(tnd_fs_write(path, diff, strlen(diff)), 0);
}

/* The check of an answer to ID; its error, or "" when it is taken. */
static const char *check(tnd_answer_kind kind, const char *text,
                         long escalation, int iterations)
{
    tnd_continue_options o;
    int rc;

    memset(&o, 0, sizeof(o));
    o.session = "3fa2c91b";
    o.answer = kind;
    o.text = text;
    o.escalation = escalation;
    o.iterations = iterations;
    tnd_error_clear();
    rc = tnd_run_answer_check(repo, &o, NULL);
    if (rc == 0)
        return "";
    assert_int_equal(rc, TND_ECONFIG);
    return tnd_error_last();
}

static void an_answer_that_is_not_whole_is_refused(void **state)
{
    (void)state;
    waiting("", "--- a/x\n+++ b/x\n");
    assert_string_equal(check(TND_ANSWER_GUIDE, "divide as doubles", 3, 0), "");
    assert_non_null(strstr(check(TND_ANSWER_GUIDE, NULL, 3, 0),
                           "guide: say it with -m TEXT (tandem guide " ID
                           " -m TEXT)"));
    assert_non_null(
        strstr(check(TND_ANSWER_GUIDE, " \n", 3, 0), "say it with -m TEXT"));
    assert_non_null(
        strstr(check(TND_ANSWER_REJECT, "", 3, 0), "reject: say it with"));
    assert_non_null(
        strstr(check(TND_ANSWER_BUDGET, NULL, 3, 0), "give --iterations N"));
    assert_string_equal(check(TND_ANSWER_BUDGET, NULL, 3, 1), "");
    assert_string_equal(check(TND_ANSWER_APPROVE, NULL, 3, 0), "");
    /* no proposal to approve: attempt 1 made no change */
    waiting("", NULL);
    assert_non_null(strstr(check(TND_ANSWER_APPROVE, NULL, 3, 0),
                           "has no proposal to approve"));
    /* a review has no coder to guide */
    waiting(",\"review\":{\"staged\":true}", "--- a/x\n+++ b/x\n");
    assert_non_null(strstr(check(TND_ANSWER_GUIDE, "x", 3, 0),
                           "is a review: there is no coder to guide"));
    assert_string_equal(check(TND_ANSWER_REJECT, "no", 3, 0), "");
}

static void the_answer_is_for_the_question_the_person_saw(void **state)
{
    (void)state;
    waiting("", "--- a/x\n+++ b/x\n");
    /* it waited on seq 3 when the command read it */
    assert_string_equal(check(TND_ANSWER_REJECT, "no", 3, 0), "");
    /* not known (a server's older accepted list): whichever waits */
    assert_string_equal(check(TND_ANSWER_REJECT, "no", 0, 0), "");
    /* an earlier question */
    assert_non_null(strstr(check(TND_ANSWER_REJECT, "no", 2, 0),
                           "asked a person again since this answer"));
    /* it did not wait when the command read it: the question asked since
     * (its holder let go in between) was shown to nobody */
    assert_non_null(strstr(check(TND_ANSWER_REJECT, "no", -1, 0),
                           "asked a person just after your command read it"));
    /* and the rule itself: -1 refuses only a session that waits now */
    assert_int_equal(tnd_run_same_question(ID, -1, 0), 0);
    assert_int_equal(tnd_run_same_question(ID, -1, 7), TND_ECONFIG);
    assert_int_equal(tnd_run_same_question(ID, 0, 7), 0);
    assert_int_equal(tnd_run_same_question(ID, 7, 7), 0);
    assert_int_equal(tnd_run_same_question(ID, 6, 7), TND_ECONFIG);
    tnd_error_clear();
}

static int setup(void **state)
{
    (void)state;
    tnd_log_init("test", TND_LOG_ERROR);
    return mkdtemp(repo) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    return tnd_fs_rmtree(repo);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(an_answer_that_is_not_whole_is_refused),
        cmocka_unit_test(the_answer_is_for_the_question_the_person_saw),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
