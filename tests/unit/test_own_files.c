/* Unit tests for orchestrator/own_files: the files of a repository that
 * tandem's configuration runs with, found from the config's paths and
 * the words of its commands. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/config.h"
#include "common/config_command.h"
#include "common/fs.h"
#include "common/rmtree.h"
#include "common/str.h"
#include "common/xalloc.h"
#include "orchestrator/own_files.h"

static char tmp[256], repo[PATH_MAX], cwd[PATH_MAX];

static void put(const char *rel, const char *text)
{
    char *path = tnd_fs_join(repo, rel), *parent = tnd_fs_dirname(path);

    assert_int_equal(tnd_fs_mkdirs(parent, 0755), 0);
    assert_int_equal(tnd_fs_write(path, text, strlen(text)), 0);
    free(parent);
    free(path);
}

static void list_command(tnd_command *c, const char *const *words)
{
    size_t n = 0;

    while (words[n])
        n++;
    c->argv = tnd_xcalloc(n + 1, sizeof(char *));
    for (size_t i = 0; i < n; i++)
        c->argv[i] = tnd_xstrdup(words[i]);
    c->display = tnd_xstrdup(words[0]);
}

static void found_in_the_config_and_the_commands(void **state)
{
    tnd_config *cfg = tnd_config_defaults();
    char *out[16] = {0}, *outside = tnd_fs_join(tmp, "elsewhere.sh");
    const char *model[] = {"python3", "./model.py", "--fast", NULL};
    size_t n;

    (void)state;
    put("agents.yaml", "version: 1\n");
    put("tests/answers.json", "{}\n");
    put("model.py", "print()\n");
    put("tools/judge.sh", "true\n");
    put("tools/agent", "true\n");
    assert_int_equal(tnd_fs_write(outside, "true\n", 5), 0);
    free(cfg->path);
    free(cfg->coder.llm.cassette);
    free(cfg->reviewer.llm.cassette);
    cfg->path = tnd_fs_join(repo, "agents.yaml");
    cfg->coder.llm.cassette = tnd_fs_join(repo, "tests/answers.json");
    cfg->reviewer.llm.cassette = tnd_fs_join(repo, "tests/answers.json");
    list_command(&cfg->coder.llm.command, model);
    /* a shell line: its words, quotes dropped; a program on PATH and a
     * file outside the repository are no file of it */
    tnd_config_command_shell(&cfg->reviewer.llm.command,
                             "sh 'tools/judge.sh' --x=1 && cat README");
    tnd_config_command_shell(&cfg->reviewer.program, "./tools/agent");
    tnd_config_command_shell(&cfg->coder.program, outside);
    n = tnd_own_files(out, 16, cfg, repo);
    assert_int_equal(n, 5);
    assert_string_equal(out[0], "agents.yaml");
    assert_string_equal(out[1], "tests/answers.json"); /* once */
    assert_string_equal(out[2], "model.py");
    assert_string_equal(out[3], "tools/judge.sh");
    assert_string_equal(out[4], "tools/agent");
    for (size_t i = 0; i < n; i++)
        free(out[i]);
    /* no more than asked for */
    assert_int_equal(tnd_own_files(out, 2, cfg, repo), 2);
    free(out[0]);
    free(out[1]);
    tnd_config_destroy(&cfg);
    free(outside);
}

static int setup(void **state)
{
    const char *t = getenv("TMPDIR");
    char *real;

    (void)state;
    snprintf(tmp, sizeof(tmp), "%s/tnd-own-XXXXXX",
             t && t[0] == '/' ? t : "/tmp");
    assert_non_null(mkdtemp(tmp));
    real = realpath(tmp, NULL);
    snprintf(repo, sizeof(repo), "%s/repo", real);
    free(real);
    assert_int_equal(tnd_fs_mkdirs(repo, 0755), 0);
    /* commands' words resolve from the current directory */
    assert_non_null(getcwd(cwd, sizeof(cwd)));
    assert_int_equal(chdir(repo), 0);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    assert_int_equal(chdir(cwd), 0);
    return tnd_fs_rmtree(tmp);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(found_in_the_config_and_the_commands),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
