/* Unit tests for skills/env: a child's environment without secrets or a
 * calling make's own variables, and a child given it sees exactly that. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/str.h"
#include "skills/env.h"
#include "skills/proc.h"

#define ARGV(...) ((const char *const[]){__VA_ARGS__, NULL})

static int env_has(char **env, const char *entry)
{
    for (; *env; env++)
        if (!strcmp(*env, entry))
            return 1;
    return 0;
}

static void scrubbed_environment_drops_secrets(void **state)
{
    const char *extra[] = {"tnd_test_extra", NULL};
    char path[4096], home[4096];
    tnd_proc_result res;
    tnd_proc_spec spec = {.argv = ARGV("env")};
    char **env;

    (void)state;
    setenv("HOME", "/nonexistent-home", 0);
    snprintf(path, sizeof(path), "PATH=%s", getenv("PATH"));
    snprintf(home, sizeof(home), "HOME=%s", getenv("HOME"));
    setenv("OPENAI_API_KEY", "sk-test", 1);
    setenv("MY_TOKEN", "t0k3n", 1);
    setenv("db_password", "hunter2", 1);
    setenv("TND_TEST_EXTRA", "extra", 1);
    setenv("MONKEY", "banana", 1); /* ends in KEY, not _KEY */
    /* a make that started tandem: its level and jobserver stay with it */
    setenv("MAKELEVEL", "1", 1);
    setenv("MAKEFLAGS", "w -j2 --jobserver-auth=3,4", 1);
    setenv("MAKEFILES_DIR", "kept", 1); /* only make's own names go */

    env = tnd_env_scrubbed(extra);
    assert_false(env_has(env, "MAKELEVEL=1"));
    assert_false(env_has(env, "MAKEFLAGS=w -j2 --jobserver-auth=3,4"));
    assert_true(env_has(env, "MAKEFILES_DIR=kept"));
    assert_false(env_has(env, "OPENAI_API_KEY=sk-test"));
    assert_false(env_has(env, "MY_TOKEN=t0k3n"));
    assert_false(env_has(env, "db_password=hunter2"));
    assert_false(env_has(env, "TND_TEST_EXTRA=extra"));
    assert_true(env_has(env, "MONKEY=banana"));
    assert_true(env_has(env, path));
    assert_true(env_has(env, home));

    /* The child sees exactly that environment. */
    spec.envp = (const char *const *)env;
    assert_int_equal(tnd_proc_run(&res, &spec), 0);
    assert_non_null(strstr(res.output, "MONKEY=banana"));
    assert_null(strstr(res.output, "sk-test"));
    assert_null(strstr(res.output, "hunter2"));
    tnd_proc_result_free(&res);
    tnd_str_list_free(&env);
    assert_null(env);
    tnd_str_list_free(&env); /* a NULL list is fine */

    unsetenv("OPENAI_API_KEY");
    unsetenv("MY_TOKEN");
    unsetenv("db_password");
    unsetenv("TND_TEST_EXTRA");
    unsetenv("MONKEY");
    unsetenv("MAKELEVEL");
    unsetenv("MAKEFLAGS");
    unsetenv("MAKEFILES_DIR");
}

/* A pre-commit hook's GIT_INDEX_FILE and GIT_DIR reached the skills,
 * whose own git wrote into the commit being made. */
static void gits_repository_variables_are_dropped(void **state)
{
    char *list[] = {strdup("GIT_DIR=/r/.git/worktrees/w"),
                    strdup("PATH=/bin"),
                    strdup("GIT_INDEX_FILE=/r/.git/index.lock"),
                    strdup("GIT_CONFIG_COUNT=1"),
                    strdup("GIT_CONFIG_KEY_0=core.autocrlf"),
                    strdup("GIT_CONFIG_VALUE_0=true"),
                    strdup("GIT_EDITOR=vi"),
                    strdup("GIT_DIRECTORY_OF_MINE=kept"),
                    strdup("GIT_WORK_TREE=/r"),
                    NULL};

    (void)state;
    tnd_env_drop_git(list);
    assert_string_equal(list[0], "PATH=/bin");
    assert_string_equal(list[1], "GIT_EDITOR=vi");
    assert_string_equal(list[2], "GIT_DIRECTORY_OF_MINE=kept");
    assert_null(list[3]);
    for (size_t i = 0; list[i]; i++)
        free(list[i]);
    tnd_env_drop_git(NULL);
}

static void a_variable_is_read_from_a_block_or_from_this_process(void **state)
{
    char a[] = "PATHS=/nope", b[] = "PATH=/usr/bin",
         c[] = "EMPTY=", d[] = "PATH=/late";
    char *block[] = {a, b, c, d, NULL};

    (void)state;
    /* the whole name, not a prefix; the first of two */
    assert_string_equal(tnd_env_get(block, "PATH"), "/usr/bin");
    assert_string_equal(tnd_env_get(block, "EMPTY"), "");
    assert_null(tnd_env_get(block, "PAT"));
    assert_null(tnd_env_get(block, "HOME"));
    setenv("TND_TEST_ENV_GET", "here", 1);
    assert_string_equal(tnd_env_get(NULL, "TND_TEST_ENV_GET"), "here");
    unsetenv("TND_TEST_ENV_GET");
    assert_null(tnd_env_get(NULL, "TND_TEST_ENV_GET"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(scrubbed_environment_drops_secrets),
        cmocka_unit_test(gits_repository_variables_are_dropped),
        cmocka_unit_test(a_variable_is_read_from_a_block_or_from_this_process),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
