/* Unit tests for agents/prompt: the reviewer's user prompt, with the code
 * around each place a skill reports and the files a skill changed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agents/prompt.h"
#include "common/buf.h"
#include "common/fs.h"
#include "common/rmtree.h"

static char tmpdir[] = "/tmp/tnd-test-prompt-XXXXXX";

#define S(x) ((char *)(x))

static void write_numbered(const char *name, int lines, int width)
{
    char path[PATH_MAX];
    tnd_buf b;

    snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
    tnd_buf_init(&b, TND_BUF_NOCAP);
    for (int i = 1; i <= lines; i++) {
        tnd_buf_printf(&b, "line %d", i);
        for (int k = 0; k < width; k++)
            tnd_buf_puts(&b, "=");
        tnd_buf_puts(&b, "\n");
    }
    assert_int_equal(tnd_fs_write(path, b.data, b.len), 0);
    tnd_buf_free(&b);
}

static char *prompt_for(tnd_skill_result *skills, size_t n)
{
    tnd_audit_request req = {.task_id = S("t"),
                             .attempt = 1,
                             .task = S("fix it"),
                             .workspace = tmpdir,
                             .diff = S("diff --git a/a.c b/a.c\n")};

    return tnd_prompt_reviewer_user(&req, skills, n);
}

static void code_around_each_place(void **state)
{
    tnd_location locs[] = {
        {S("a.c"), 5, 3},    /* lines 2..8 */
        {S("a.c"), 7, 1},    /* inside the window above: not repeated */
        {S("a.c"), 1, 0},    /* lines 1..4 */
        {S("a.c"), 12, 0},   /* the last line: 9..12 */
        {S("a.c"), 40, 0},   /* past the end: left out */
        {S("gone.c"), 3, 0}, /* deleted since: left out */
        {S("pipe.c"), 1, 0}, /* a FIFO a build left: never opened to block */
    };
    tnd_skill_result r = {.name = S("build"),
                          .status = TND_SKILL_FAIL,
                          .required = true,
                          .exit_code = 2,
                          .command = S("make"),
                          .output = S("a.c:5:3: error: no\n"),
                          .locations = locs,
                          .nlocations = 7};
    char fifo[PATH_MAX];
    char *p;

    (void)state;
    write_numbered("a.c", 12, 0);
    snprintf(fifo, sizeof(fifo), "%s/pipe.c", tmpdir);
    assert_int_equal(mkfifo(fifo, 0600), 0);
    p = prompt_for(&r, 1);
    assert_non_null(strstr(p, "### build (`make`): fail, exit 2, required\n"));
    assert_non_null(strstr(p, "Code at the places it reports:\n\n"
                              "a.c:5:3\n"
                              "```\n"
                              "     2 | line 2\n"
                              "     3 | line 3\n"
                              "     4 | line 4\n"
                              ">    5 | line 5\n"
                              "     6 | line 6\n"
                              "     7 | line 7\n"
                              "     8 | line 8\n"
                              "```\n"
                              "a.c:1\n"
                              "```\n"
                              ">    1 | line 1\n"
                              "     2 | line 2\n"
                              "     3 | line 3\n"
                              "     4 | line 4\n"
                              "```\n"
                              "a.c:12\n"
                              "```\n"
                              "     9 | line 9\n"
                              "    10 | line 10\n"
                              "    11 | line 11\n"
                              ">   12 | line 12\n"
                              "```\n\n"
                              "Answer with the JSON object only.\n"));
    assert_null(strstr(p, "a.c:7"));
    assert_null(strstr(p, "a.c:40"));
    assert_null(strstr(p, "gone.c"));
    assert_null(strstr(p, "pipe.c:1"));
    assert_int_equal(unlink(fifo), 0);
    free(p);
}

/* Long lines are cut, and the code shown per skill is capped. */
static void capped(void **state)
{
    tnd_location locs[40];
    tnd_skill_result r = {.name = S("lint"),
                          .status = TND_SKILL_FAIL,
                          .exit_code = 1,
                          .command = S("lint"),
                          .output = S("many\n"),
                          .locations = locs,
                          .nlocations = 40};
    char *p;
    const char *code;

    (void)state;
    write_numbered("wide.c", 400, 1000);
    for (int i = 0; i < 40; i++)
        locs[i] = (tnd_location){S("wide.c"), 10 * i + 5, 0};
    p = prompt_for(&r, 1);
    code = strstr(p, "Code at the places");
    assert_non_null(code);
    assert_true(strlen(code) < 8 * 1024 + 2048);
    assert_non_null(strstr(code, " [...]\n"));
    assert_non_null(strstr(code, "more places not shown)\n"));
    free(p);
}

/* Places deep in a large file: what is read to reach them is bounded
 * per skill (each read up to 16 MiB, 50 of them 800 MiB), and the rest
 * are counted as not shown. */
static void reads_to_reach_places_are_bounded(void **state)
{
    tnd_location locs[50];
    tnd_skill_result r = {.name = S("lint"),
                          .status = TND_SKILL_FAIL,
                          .exit_code = 1,
                          .command = S("lint"),
                          .output = S("many\n"),
                          .locations = locs,
                          .nlocations = 50};
    char *p, *code, want[64];
    int shown = 0;

    (void)state;
    /* 7 MiB: 100,000 lines of 72 bytes; each place near the end */
    write_numbered("deep.c", 100000, 64);
    for (int i = 0; i < 50; i++)
        locs[i] = (tnd_location){S("deep.c"), 99000 + 10 * i, 0};
    p = prompt_for(&r, 1);
    code = strstr(p, "Code at the places");
    assert_non_null(code);
    for (int i = 0; i < 50; i++) {
        snprintf(want, sizeof(want), "deep.c:%d\n", 99000 + 10 * i);
        shown += strstr(code, want) != NULL;
    }
    /* 16 MiB reach two places 7 MiB deep, not fifty */
    assert_int_equal(shown, 2);
    assert_non_null(strstr(code, "(48 more places not shown)\n"));
    free(p);
}

/* A megabyte-long build log does not go to the model whole: the failing
 * line and the end do, within a bound. */
static void long_output_keeps_what_failed(void **state)
{
    tnd_skill_result r = {.name = S("test"),
                          .status = TND_SKILL_FAIL,
                          .exit_code = 2,
                          .command = S("make test")};
    tnd_buf out;
    char *p;

    (void)state;
    tnd_buf_init(&out, TND_BUF_NOCAP);
    for (int i = 0; i < 20000; i++)
        tnd_buf_printf(&out, "[ ok ] case %d passes\n", i);
    tnd_buf_puts(&out, "[FAIL] test_vec.c:85 vec_find(v, 7) = -1\n");
    for (int i = 0; i < 20000; i++)
        tnd_buf_printf(&out, "[ ok ] case %d passes\n", i);
    tnd_buf_puts(&out, "54 Passed 1 Failed\n");
    r.output = out.data;
    p = prompt_for(&r, 1);
    assert_non_null(strstr(p, "[FAIL] test_vec.c:85 vec_find(v, 7) = -1\n"));
    assert_non_null(strstr(p, "54 Passed 1 Failed\n"));
    assert_true(strlen(p) < 20 * 1024);
    free(p);
    tnd_buf_free(&out);
}

static void changed_files_and_skipped_skills(void **state)
{
    char *changed[] = {S("src/a.c"), S("src/b.c")};
    tnd_skill_result r[] = {
        {.name = S("fmt"),
         .status = TND_SKILL_PASS,
         .command = S("clang-format -i src/*.c"),
         .output = S(""),
         .changed = changed,
         .nchanged = 2},
        {.name = S("docs"),
         .status = TND_SKILL_SKIPPED,
         .required = true,
         .exit_code = -1,
         .command = S("builtin: docs"),
         .output = S("skipped: the change touches no path matching docs/**\n")},
    };
    char *p;

    (void)state;
    p = prompt_for(r, 2);
    assert_non_null(strstr(p, "The fmt skill changed files under review: "
                              "src/a.c, src/b.c. A tool that rewrites the "
                              "code it checks"));
    assert_non_null(strstr(p, "raise a style issue naming these files."));
    assert_non_null(
        strstr(p, "### docs (`builtin: docs`): skipped, required\n\n```\n"
                  "skipped: the change touches no path matching docs/**\n"));
    free(p);
}

/* A place is read when the prompt is built, beneath the workspace and
 * through no symlink: a skill that ran after the one reporting it can
 * have swapped the file for a link to one of the user's secrets, which
 * would otherwise go to the model (a review found it). */
static void a_place_swapped_for_a_link_is_not_read(void **state)
{
    tnd_location locs[] = {
        {S("stats.c"), 2, 0},  /* now a link to a file outside */
        {S("sub/in.c"), 1, 0}, /* through a linked directory */
        {S("ok.c"), 1, 0},     /* a plain file: shown */
    };
    tnd_skill_result r = {.name = S("build"),
                          .status = TND_SKILL_FAIL,
                          .exit_code = 1,
                          .command = S("make"),
                          .output = S("stats.c:2: error: x\n"),
                          .locations = locs,
                          .nlocations = 3};
    char ws[PATH_MAX], secret[PATH_MAX], path[PATH_MAX], outside[PATH_MAX];
    tnd_audit_request req = {.task_id = S("t"),
                             .attempt = 1,
                             .task = S("fix it"),
                             .workspace = ws,
                             .diff = S("diff --git a/a.c b/a.c\n")};
    char *p;

    (void)state;
    snprintf(ws, sizeof(ws), "%s/ws", tmpdir);
    snprintf(outside, sizeof(outside), "%s/outside", tmpdir);
    snprintf(secret, sizeof(secret), "%s/secret.txt", outside);
    assert_int_equal(mkdir(ws, 0700), 0);
    assert_int_equal(mkdir(outside, 0700), 0);
    assert_int_equal(tnd_fs_write(secret, "one\nTOPSECRET\n", 14), 0);
    snprintf(path, sizeof(path), "%s/in.c", outside);
    assert_int_equal(tnd_fs_write(path, "TOPSECRET too\n", 14), 0);
    snprintf(path, sizeof(path), "%s/stats.c", ws);
    assert_int_equal(symlink(secret, path), 0);
    snprintf(path, sizeof(path), "%s/sub", ws);
    assert_int_equal(symlink(outside, path), 0);
    snprintf(path, sizeof(path), "%s/ok.c", ws);
    assert_int_equal(tnd_fs_write(path, "fine\n", 5), 0);
    p = tnd_prompt_reviewer_user(&req, &r, 1);
    assert_null(strstr(p, "TOPSECRET"));
    assert_null(strstr(p, "stats.c:2\n"));
    assert_non_null(strstr(p, "ok.c:1\n```\n>    1 | fine\n```\n"));
    free(p);
}

static int setup(void **state)
{
    (void)state;
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
        cmocka_unit_test(code_around_each_place),
        cmocka_unit_test(capped),
        cmocka_unit_test(reads_to_reach_places_are_bounded),
        cmocka_unit_test(long_output_keeps_what_failed),
        cmocka_unit_test(changed_files_and_skipped_skills),
        cmocka_unit_test(a_place_swapped_for_a_link_is_not_read),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
