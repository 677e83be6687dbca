/* Unit tests for orchestrator/git: running git for a question.
 *
 * A failure names what git was asked to do, past git's own options, so
 * a person reading "'git status' failed" knows which step it was. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "orchestrator/git.h"

/* argv's failure is said as "'git WANT' failed". */
static void assert_named(const char *const *argv, const char *want)
{
    char *out = NULL, expect[256];

    assert_int_equal(tnd_git_run(&out, NULL, "/", argv, 4096), -1);
    free(out);
    snprintf(expect, sizeof(expect), "'git %s' failed", want);
    if (!strstr(tnd_error_last(), expect))
        fail_msg("%s: not in \"%s\"", expect, tnd_error_last());
}

static void a_failure_names_the_command_past_gits_options(void **state)
{
    const char *config[] = {"git", "-c", "core.quotePath=false",
                            "no-such-command", NULL};
    /* it said "'git --literal-pathspecs' failed" */
    const char *literal[] = {"git", "--literal-pathspecs", "no-such-command",
                             NULL};
    const char *both[] = {"git",
                          "-C",
                          "/",
                          "--literal-pathspecs",
                          "-c",
                          "a.b=c",
                          "no-such-command",
                          NULL};

    (void)state;
    assert_named(config, "no-such-command");
    assert_named(literal, "no-such-command");
    assert_named(both, "no-such-command");
}

/* git-lfs, a smudge filter of an export, fetched the objects this
 * machine lacks: every git gets a Git LFS server that cannot be reached
 * without a connection, and its local agent, over the caller's own
 * `git -c` settings (a hook's), which stay. */
static void git_lfs_has_no_server_to_fetch_from(void **state)
{
    const char *url[] = {"git", "config", "--get", "lfs.url", NULL};
    const char *agent[] = {"git", "config", "--get",
                           "lfs.standalonetransferagent", NULL};
    const char *theirs[] = {"git", "config", "--get", "user.name", NULL};
    char *out = NULL;

    (void)state;
    setenv("GIT_CONFIG_PARAMETERS",
           "'user.name=hook' 'lfs.url=https://example.com/lfs'", 1);
    assert_int_equal(tnd_git_run(&out, NULL, "/", url, 4096), 0);
    assert_string_equal(out, "file:///dev/null/tandem-never-fetches\n");
    free(out);
    assert_int_equal(tnd_git_run(&out, NULL, "/", agent, 4096), 0);
    assert_string_equal(out, "lfs-standalone-file\n");
    free(out);
    assert_int_equal(tnd_git_run(&out, NULL, "/", theirs, 4096), 0);
    assert_string_equal(out, "hook\n");
    free(out);
    unsetenv("GIT_CONFIG_PARAMETERS");
    assert_int_equal(tnd_git_run(&out, NULL, "/", url, 4096), 0);
    assert_string_equal(out, "file:///dev/null/tandem-never-fetches\n");
    free(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_failure_names_the_command_past_gits_options),
        cmocka_unit_test(git_lfs_has_no_server_to_fetch_from),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
