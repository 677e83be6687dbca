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
    assert_string_equal(tnd_skill_summary(&r), "ok: pass (0.0s)");
    tnd_skill_result_clear(&r);

    run(&r, "bad", "");
    assert_int_equal(r.status, TND_SKILL_FAIL);
    assert_int_equal(r.exit_code, 3);
    assert_false(r.required);
    assert_string_equal(r.output, "broken\n[tandem: bad exit 3]\n");
    tnd_skill_result_clear(&r);

    run(&r, "nothing", "");
    assert_int_equal(r.status, TND_SKILL_ERROR);
    assert_non_null(strstr(r.output, "/no/such/program"));
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
    assert_non_null(strstr(r.output, "a file grew past limits.file_mb 1"));
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
        cmocka_unit_test(limits_apply_to_the_command),
        cmocka_unit_test(paths_decide_whether_a_skill_applies),
        cmocka_unit_test(builtins_run_on_the_diff),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
