/* Unit tests for skills/skill: one configured skill, run or skipped. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/config.h"
#include "common/fs.h"
#include "common/rmtree.h"
#include "common/xalloc.h"
#include "skills/skill.h"

static char tmpdir[] = "/tmp/tnd-test-skill-XXXXXX";
static tnd_config *cfg;

static const char config_text[] =
    "agents: {reviewer: {skills: []}}\n"
    "skills:\n"
    "  ok: {command: \"echo hello\"}\n"
    "  bad: {command: \"echo broken >&2; exit 3\", required: false}\n"
    "  big:\n"
    "    command: [head, -c, \"3000000\", /dev/zero]\n"
    "    limits: {file_mb: 1}\n"
    "    output_max_kb: 1\n"
    "  write:\n"
    "    command: \"head -c 3000000 /dev/zero > big.bin\"\n"
    "    limits: {file_mb: 1}\n"
    "  docs-only: {command: \"true\", paths: [\"docs/**\", \"*.md\"]}\n"
    "  secrets: {builtin: git}\n"
    "  nothing: {command: [/no/such/program]}\n"
    "  unknown: {command: tandem-no-such-program}\n"
    "  spin:\n"
    "    command: \"while :; do :; done\"\n"
    "    limits: {cpu_s: 1}\n"
    "  flood:\n"
    "    command: \"for i in 1 2 3 4 5 6 7 8 9 10 11 12; do sleep 30 & done; "
    "wait\"\n"
    "    limits: {processes: 8}\n"
    "  flood-none:\n"
    "    command: \"for i in 1 2 3 4 5 6 7 8 9 10 11 12; do sleep 30 & done; "
    "wait\"\n"
    "    limits: {processes: 8}\n"
    "    sandbox: none\n"
    "  where: {command: \"pwd; ls /proc | grep -c '^[0-9]'\"}\n"
    "  plain: {command: \"echo hello\", sandbox: none}\n"
    "  exits152: {command: [perl, -e, \"exit 152\"], sandbox: none}\n"
    "  latin1: {command: \"printf 'Ren\\\\351\\\\000!'\"}\n";

static void run(tnd_skill_result *r, const char *name, const char *diff)
{
    tnd_skill_ctx ctx = {.dir = tmpdir, .diff = diff};

    tnd_skill_run(r, tnd_config_skill(cfg, name), &ctx);
}

static void commands_pass_fail_and_error(void **state)
{
    tnd_skill_result r;

    (void)state;
    run(&r, "ok", "");
    assert_int_equal(r.status, TND_SKILL_PASS);
    assert_string_equal(r.output, "hello\n");
    assert_string_equal(r.command, "echo hello");
    /* the summary's figure is the run's time: a loaded machine under
     * valgrind took 0.1 s for an echo; the format, of a set time */
    assert_in_range(r.duration_ms, 0, 60000);
    r.duration_ms = 1300;
    assert_string_equal(tnd_skill_summary(&r), "ok: pass (1.3s)");
    tnd_skill_result_clear(&r);

    run(&r, "bad", "");
    assert_int_equal(r.status, TND_SKILL_FAIL);
    assert_int_equal(r.exit_code, 3);
    assert_false(r.required);
    assert_string_equal(r.output, "broken\n[tandem: bad exit 3]\n");
    tnd_skill_result_clear(&r);

    run(&r, "nothing", "");
    assert_int_equal(r.status, TND_SKILL_ERROR);
    assert_string_equal(r.output,
                        "cannot run '/no/such/program': No such file or "
                        "directory\n");
    tnd_skill_result_clear(&r);

    run(&r, "unknown", "");
    assert_int_equal(r.status, TND_SKILL_ERROR);
    assert_non_null(strstr(r.output,
                           "cannot run 'tandem-no-such-program': not found on "
                           "PATH"));
    tnd_skill_result_clear(&r);
}

/* By default a command runs in the sandbox: in the workspace, seeing no
 * process but its own; sandbox: none runs it directly. The result says
 * which. */
static void commands_run_sandboxed_unless_the_config_says_none(void **state)
{
    tnd_skill_result r;
    char *expect;

    (void)state;
    run(&r, "where", "");
    assert_int_equal(r.status, TND_SKILL_PASS);
    assert_int_equal(r.sandbox, TND_ISOLATION_BWRAP);
    /* the namespace's init, the shell, ls and grep at most */
    expect = tnd_xasprintf("%s\n", tmpdir);
    assert_true(strncmp(r.output, expect, strlen(expect)) == 0);
    assert_true(atoi(r.output + strlen(expect)) <= 4);
    free(expect);
    tnd_skill_result_clear(&r);

    run(&r, "plain", "");
    assert_int_equal(r.status, TND_SKILL_PASS);
    assert_int_equal(r.sandbox, TND_ISOLATION_NONE);
    assert_null(r.ended);
    tnd_skill_result_clear(&r);
}

/* Issue 12: a test that printed a Latin-1 name made the reply, the
 * journal and the prompts invalid UTF-8, and a NUL byte cut the output
 * short. Both are replaced, and the output says so. */
static void output_is_valid_utf8_and_says_what_was_replaced(void **state)
{
    tnd_skill_result r;

    (void)state;
    run(&r, "latin1", "");
    assert_int_equal(r.status, TND_SKILL_PASS);
    assert_string_equal(r.output, "Ren\xEF\xBF\xBD\xEF\xBF\xBD!\n"
                                  "[tandem: 2 bytes of this output that were "
                                  "not valid UTF-8 are shown as U+FFFD]\n");
    tnd_skill_result_clear(&r);
}

/* limits.file_mb: writing a file past it stops the writer; the note at
 * the end of the output names the limit. */
static void limits_apply_to_the_command(void **state)
{
    tnd_skill_result r;

    (void)state;
    run(&r, "write", "");
    assert_int_equal(r.status, TND_SKILL_FAIL);
    assert_string_equal(r.ended, "killed: a file grew past the 1 MiB limit "
                                 "(limits.file_mb)");
    assert_non_null(strstr(r.output, "[tandem: write killed: a file grew "
                                     "past the 1 MiB limit (limits.file_mb)]"));
    tnd_skill_result_clear(&r);
    {
        char *path = tnd_fs_join(tmpdir, "big.bin");
        struct stat st;
        assert_int_equal(stat(path, &st), 0);
        assert_true(st.st_size <= 1 << 20);
        unlink(path);
        free(path);
    }
    /* a pipe is not a file: the limit does not stop output */
    run(&r, "big", "");
    assert_int_equal(r.status, TND_SKILL_PASS);
    assert_true(strlen(r.output) <= 1024 + 256);
    tnd_skill_result_clear(&r);
}

/* Each limit that ends a skill says so in words: CPU time, and the
 * process limit (kept by a pids cgroup where the host has one, else by
 * counting), sandboxed or not. */
static void a_skill_killed_by_a_limit_says_which(void **state)
{
    static const char *const floods[] = {"flood", "flood-none"};
    tnd_skill_result r;

    (void)state;
    run(&r, "spin", "");
    assert_int_equal(r.status, TND_SKILL_FAIL);
    assert_string_equal(r.ended,
                        "killed: CPU time limit of 1 s (limits.cpu_s)");
    tnd_skill_result_clear(&r);

    for (int i = 0; i < 2; i++) {
        run(&r, floods[i], "");
        assert_int_equal(r.status, TND_SKILL_FAIL);
        assert_int_equal(r.exit_code, -1);
        assert_string_equal(r.ended, "killed: over the 8-process limit "
                                     "(limits.processes)");
        assert_true(r.duration_ms < 20000);
        tnd_skill_result_clear(&r);
    }
}

/* A command that ran as itself (no sandbox, no shell) and exited 152
 * exited so: no shell or sandbox reports a SIGXCPU death that way for
 * it (a review found it called the CPU limit). */
static void an_exit_of_its_own_is_no_limit(void **state)
{
    tnd_skill_result r;

    (void)state;
    run(&r, "exits152", "");
    assert_int_equal(r.status, TND_SKILL_FAIL);
    assert_int_equal(r.exit_code, 152);
    assert_null(r.ended);
    tnd_skill_result_clear(&r);
}

static void paths_decide_whether_a_skill_applies(void **state)
{
    const tnd_skill_config *docs = tnd_config_skill(cfg, "docs-only");
    const char *readme[] = {"src/a.c", "README.md", NULL};
    const char *code[] = {"src/a.c", "src/doc.md", NULL};
    const char *none[] = {NULL};
    tnd_skill_result r;

    (void)state;
    assert_true(tnd_skill_applies(docs, readme));
    assert_false(tnd_skill_applies(docs, code));
    assert_false(tnd_skill_applies(docs, none));
    assert_true(tnd_skill_applies(tnd_config_skill(cfg, "ok"), none));

    tnd_skill_skip(&r, docs, "skipped: no docs\n");
    assert_int_equal(r.status, TND_SKILL_SKIPPED);
    assert_int_equal(r.exit_code, -1);
    assert_true(r.required);
    assert_string_equal(r.command, "true");
    assert_string_equal(r.output, "skipped: no docs\n");
    assert_string_equal(tnd_skill_summary(&r), "docs-only: skipped (0.0s)");
    tnd_skill_result_clear(&r);
    tnd_skill_skip(&r, tnd_config_skill(cfg, "secrets"), "x");
    assert_string_equal(r.command, "builtin: git");
    tnd_skill_result_clear(&r);
}

static void builtins_run_on_the_diff(void **state)
{
    tnd_skill_result r;

    (void)state;
    run(&r, "secrets",
        "diff --git a/k b/k\n--- a/k\n+++ b/k\n@@ -1 +1 @@\n-x\n"
        "+key = AKIATANDEMTESTFAKE00\n");
    assert_int_equal(r.status, TND_SKILL_FAIL);
    assert_string_equal(r.command, "builtin: git");
    assert_non_null(strstr(r.output, "k:1: adds what looks like an AWS"));
    tnd_skill_result_clear(&r);
}

static int setup(void **state)
{
    (void)state;
    if (!mkdtemp(tmpdir))
        return -1;
    return tnd_config_parse(&cfg, config_text, strlen(config_text),
                            "agents.yaml", "/base");
}

static int teardown(void **state)
{
    (void)state;
    tnd_config_destroy(&cfg);
    return tnd_fs_rmtree(tmpdir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(commands_pass_fail_and_error),
        cmocka_unit_test(output_is_valid_utf8_and_says_what_was_replaced),
        cmocka_unit_test(commands_run_sandboxed_unless_the_config_says_none),
        cmocka_unit_test(limits_apply_to_the_command),
        cmocka_unit_test(a_skill_killed_by_a_limit_says_which),
        cmocka_unit_test(an_exit_of_its_own_is_no_limit),
        cmocka_unit_test(paths_decide_whether_a_skill_applies),
        cmocka_unit_test(builtins_run_on_the_diff),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
