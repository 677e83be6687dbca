/* Unit tests for orchestrator/prior: a change a person approved before is
 * found only when the diff, the base commit and a person's approve all
 * match; a gate's approval, another base, another diff, or a session
 * that went on after its approval are none. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fs.h"
#include "common/log.h"
#include "common/rmtree.h"
#include "orchestrator/prior.h"

static char tmpdir[] = "/tmp/tnd-test-prior-XXXXXX";

#define DIFF "diff --git a/x b/x\n--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n"
#define TASK \
    "{\"seq\":1,\"type\":\"task\",\"review\":{\"rev\":\"%s\",\"staged\":true}}"
#define BY_PERSON                                                          \
    "{\"seq\":2,\"type\":\"escalation\"}\n{\"seq\":3,\"type\":\"answer\"," \
    "\"kind\":\"approve\"}\n{\"seq\":4,\"type\":\"finish\",\"status\":"    \
    "\"approved\"}\n"
#define BY_GATE "{\"seq\":2,\"type\":\"finish\",\"status\":\"approved\"}\n"

/* A session id in tmpdir with change.diff diff and the journal of a review
 * of rev whose later records are tail. */
static void session(const char *id, const char *diff, const char *rev,
                    const char *tail)
{
    char dir[PATH_MAX], path[PATH_MAX], text[1024];

    snprintf(dir, sizeof(dir), "%s/.tandem/sessions/%s", tmpdir, id);
    assert_int_equal(tnd_fs_mkdirs(dir, 0755), 0);
    snprintf(path, sizeof(path), "%s/change.diff", dir);
    assert_int_equal(tnd_fs_write(path, diff, strlen(diff)), 0);
    snprintf(path, sizeof(path), "%s/journal.jsonl", dir);
    snprintf(text, sizeof(text), TASK "\n%s", rev, tail);
    assert_int_equal(tnd_fs_write(path, text, strlen(text)), 0);
}

static void found(const char *want)
{
    char *id = tnd_prior_approval(tmpdir, "REV1", DIFF);

    if (want) {
        assert_non_null(id);
        assert_string_equal(id, want);
    } else {
        assert_null(id);
    }
    free(id);
}

static void only_a_persons_approval_of_the_same_change_counts(void **state)
{
    (void)state;
    found(NULL); /* no sessions at all */
    session("20260101-000001-aaaaaaaa", DIFF, "REV1", BY_GATE);
    found(NULL);
    session("20260101-000002-aaaaaaaa", DIFF, "REV2", BY_PERSON);
    found(NULL);
    session("20260101-000003-aaaaaaaa", DIFF "+c\n", "REV1", BY_PERSON);
    found(NULL);
    session("20260101-000004-aaaaaaaa", DIFF, "REV1",
            BY_PERSON "{\"seq\":5,\"type\":\"proposal\"}\n");
    found(NULL);
    session("20260101-000045-aaaaaaaa", DIFF, "REV1",
            BY_PERSON "{\"seq\":5,\"type\":\"answer\",\"kind\":\"approve\"}\n");
    found(NULL);
    session("20260101-000005-aaaaaaaa", DIFF, "REV1",
            "{\"seq\":2,\"type\":\"answer\",\"kind\":\"reject\"}\n"
            "{\"seq\":3,\"type\":\"finish\",\"status\":\"approved\"}\n");
    found(NULL);
    session("20260101-000006-aaaaaaaa", DIFF, "REV1", "not json\n" BY_PERSON);
    found("20260101-000006-aaaaaaaa");
    assert_null(tnd_prior_approval(tmpdir, NULL, DIFF));
    assert_null(tnd_prior_approval(tmpdir, "REV1", ""));
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
        cmocka_unit_test(only_a_persons_approval_of_the_same_change_counts),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
