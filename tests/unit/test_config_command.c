/* Unit tests for common/config_command: a command of agents.yaml as it
 * will run. A string of plain words split as the shell would, its
 * quotes removed, and run without a shell; anything else the shell
 * reads run by bash with pipefail; a model program named by a relative
 * path found beside the file.
 *
 * The cases parse from memory (config_text.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "common/config.h"
#include "tests/unit/config_text.h"

/* A string command of plain words is run directly (no shell started per
 * skill); anything the shell would read otherwise stays with /bin/sh. */
static void plain_commands_skip_the_shell(void **state)
{
    static const char *const shelled[] = {
        "sleep 0.3; make", "FOO=1 make",    "cd sub && make", "echo $HOME",
        "make >log",       "ls *.c",        "exec make",      "make # comment",
        "~/bin/check",     "a | b",         ". ./env",        "export X=1",
        "echo \"$HOME\"",  "echo \"a\\b\"", "echo \"a`b`\"",  "echo 'open",
        "echo \"open",     "'make' all",    "FOO='a b' make", NULL};
    /* quotes the shell would only remove */
    static const struct {
        const char *line;
        const char *argv[5];
    } quoted[] = {
        {"grep -q 'value = 3' app.txt", {"grep", "-q", "value = 3", "app.txt"}},
        {"pytest -k \"a and not b\"", {"pytest", "-k", "a and not b"}},
        {"echo '' x", {"echo", "", "x"}},
        {"x a'b c'd \"e'f\"", {"x", "ab cd", "e'f"}},
        {"make 'a b'", {"make", "a b"}},
    };
    char text[256];
    tnd_config *cfg;

    (void)state;
    cfg = parse_ok("skills:\n"
                   "  build: {command: \"  make  -j2\tCFLAGS=-O2 all \"}\n"
                   "  test: {command: ./run-tests --fast, required: false}\n");
    assert_argv(cfg->skills[0].command.argv,
                ARGV("make", "-j2", "CFLAGS=-O2", "all"));
    assert_string_equal(cfg->skills[0].command.display,
                        "  make  -j2\tCFLAGS=-O2 all ");
    assert_argv(cfg->skills[1].command.argv, ARGV("./run-tests", "--fast"));
    tnd_config_destroy(&cfg);
    for (int i = 0; shelled[i]; i++) {
        snprintf(text, sizeof(text),
                 "skills:\n  build:\n    command: |-\n      %s\n"
                 "  test: {command: t}\n",
                 shelled[i]);
        cfg = parse_ok(text);
        /* a pipeline fails when any command in it does */
        assert_argv(cfg->skills[0].command.argv,
                    ARGV("/bin/bash", "-o", "pipefail", "-c", shelled[i]));
        tnd_config_destroy(&cfg);
    }
    for (size_t i = 0; i < sizeof(quoted) / sizeof(quoted[0]); i++) {
        const tnd_command *c;
        size_t k = 0;
        snprintf(text, sizeof(text),
                 "skills:\n  build:\n    command: |-\n      %s\n"
                 "  test: {command: t}\n",
                 quoted[i].line);
        cfg = parse_ok(text);
        c = &cfg->skills[0].command;
        for (; quoted[i].argv[k]; k++) {
            if (!c->argv[k])
                fail_msg("%s: no word %zu", quoted[i].line, k);
            assert_string_equal(c->argv[k], quoted[i].argv[k]);
        }
        assert_null(c->argv[k]);
        assert_string_equal(c->display, quoted[i].line);
        tnd_config_destroy(&cfg);
    }
}

/* A model program named by a relative path is beside the file, as the
 * file's header says (it ran from the config's directory and failed
 * from any other); a bare name is looked up on PATH, a skill's command
 * is the workspace's. */
static void relative_model_programs_are_resolved_against_the_file(void **state)
{
    static const struct {
        const char *command, *expected;
    } cases[] = {
        {"[./answer.sh, x]", "/base/./answer.sh"},
        {"bin/model --fast", "/base/bin/model"},
        {"[cat, x]", "cat"},
        {"[/abs/model]", "/abs/model"},
    };
    char text[256];

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
        tnd_config *cfg;
        snprintf(text, sizeof(text),
                 "agents:\n  coder:\n    llm: {provider: command, "
                 "command: %s}\n",
                 cases[i].command);
        cfg = parse_ok(text);
        assert_string_equal(cfg->coder.llm.command.argv[0], cases[i].expected);
        tnd_config_destroy(&cfg);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(plain_commands_skip_the_shell),
        cmocka_unit_test(relative_model_programs_are_resolved_against_the_file),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
