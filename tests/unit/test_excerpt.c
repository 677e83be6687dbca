/* Unit tests for skills/excerpt: the part of a tool's output worth
 * reading. The case that started it: a build printed 20 KB of compiler
 * warnings before the one failing test, and a cut by position lost the
 * failure. Real gcc and clang output comes from tests/fixtures/locations/
 * (captured from the compilers; see capture.sh there). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/buf.h"
#include "common/fs.h"
#include "skills/excerpt.h"

#define FIXTURES "tests/fixtures/locations"

static const char fail_line[] =
    "[FAIL] test_vec.c:26 vec_find(fib, 5) = -1, expected 0";

static void assert_has(const char *text, const char *part)
{
    if (!strstr(text, part))
        fail_msg("excerpt lacks \"%s\":\n%s", part, text);
}

static void assert_lacks(const char *text, const char *part)
{
    if (strstr(text, part))
        fail_msg("excerpt holds \"%s\":\n%s", part, text);
}

/* True when s is well-formed UTF-8. */
static bool valid_utf8(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;

    while (*p) {
        int n = *p < 0x80             ? 0
                : (*p & 0xE0) == 0xC0 ? 1
                : (*p & 0xF0) == 0xE0 ? 2
                : (*p & 0xF8) == 0xF0 ? 3
                                      : -1;
        if (n < 0)
            return false;
        p++;
        for (int i = 0; i < n; i++, p++)
            if ((*p & 0xC0) != 0x80)
                return false;
    }
    return true;
}

static size_t count(const char *text, const char *part)
{
    size_t n = 0;

    for (const char *p = strstr(text, part); p; p = strstr(p + 1, part))
        n++;
    return n;
}

/* gcc 12's report of an unused parameter in function number i, its
 * line numbers moved by shift (as an edit above it would). */
static void add_warning(tnd_buf *b, int i, int shift)
{
    int line = 10 + 7 * i + shift;

    tnd_buf_printf(
        b, "src/vec.c: In function \xe2\x80\x98vec_op%d\xe2\x80\x99:\n", i);
    tnd_buf_printf(b,
                   "src/vec.c:%d:36: warning: unused parameter "
                   "\xe2\x80\x98"
                   "ctx\xe2\x80\x99 [-Wunused-parameter]\n",
                   line);
    tnd_buf_printf(b, "%5d | int vec_op%d(struct vec *v, void *ctx)\n", line,
                   i);
    tnd_buf_puts(b, "      |                              ~~~~~~^~~\n");
}

/* The build of issue 12: cc, 20+ KB of warnings (shifted by shift), the
 * test program's 5 KB of "[ ok ]" lines with one failure among them, the
 * summary and make's complaint. failed: whether the failure is there.
 * Caller frees. */
static char *build_output(int warnings, int shift, bool failed)
{
    tnd_buf b;

    tnd_buf_init(&b, TND_BUF_NOCAP);
    tnd_buf_puts(&b, "cc -Wall -Wextra -O2 -c -o src/vec.o src/vec.c\n");
    for (int i = 0; i < warnings; i++)
        add_warning(&b, i, shift);
    tnd_buf_puts(&b, "cc -o test_vec test_vec.c src/vec.o\n./test_vec\n");
    for (int i = 0; i < 100; i++) {
        if (i == 60 && failed)
            tnd_buf_printf(&b, "%s\n", fail_line);
        tnd_buf_printf(&b, "[ ok ] test_vec.c:%d vec_push keeps order %d\n",
                       100 + i, i);
    }
    tnd_buf_printf(&b, "101 tests conducted, %d failed.\n", failed ? 1 : 0);
    if (failed)
        tnd_buf_puts(&b, "make: *** [Makefile:12: test] Error 1\n");
    return tnd_buf_detach(&b, NULL);
}

/* ---- what fits is kept as it is ----------------------------------------- */

static void output_that_fits_is_kept_as_it_is(void **state)
{
    const char *const texts[] = {"", "ok\n", "a\nb\n[FAIL] x", "a\r\nb\r\n",
                                 "\n\n\n"};
    tnd_excerpt_stats st;
    char *e;

    (void)state;
    for (size_t i = 0; i < sizeof(texts) / sizeof(*texts); i++) {
        e = tnd_excerpt(texts[i], NULL, 100, &st);
        assert_string_equal(e, texts[i]);
        assert_int_equal(st.lines_left_out, 0);
        assert_int_equal(st.warnings_folded, 0);
        free(e);
        /* a baseline without warnings changes nothing */
        e = tnd_excerpt(texts[i], "ok\n", 100, NULL);
        assert_string_equal(e, texts[i]);
        free(e);
    }
}

/* ---- issue 12 ----------------------------------------------------------- */

/* The failing line after 20 KB of warnings reaches the coder, with the
 * summary and make's complaint; what is left out is said. */
static void a_failure_after_20_kb_of_warnings_is_kept(void **state)
{
    char *out = build_output(110, 0, true), *e;
    tnd_excerpt_stats st;

    (void)state;
    assert_true(strlen(out) > 25000);
    assert_true(strstr(out, fail_line) - out > 20000);
    e = tnd_excerpt(out, NULL, 3000, &st);
    assert_true(strlen(e) <= 3000);
    assert_has(e, fail_line);
    /* two lines of context on each side */
    assert_has(e, "[ ok ] test_vec.c:158 vec_push keeps order 58\n"
                  "[ ok ] test_vec.c:159 vec_push keeps order 59\n");
    assert_has(e, "[FAIL] test_vec.c:26 vec_find(fib, 5) = -1, expected 0\n"
                  "[ ok ] test_vec.c:160 vec_push keeps order 60\n"
                  "[ ok ] test_vec.c:161 vec_push keeps order 61\n");
    assert_has(e, "101 tests conducted, 1 failed.\n"
                  "make: *** [Makefile:12: test] Error 1\n");
    /* no baseline: the warnings are new, and some had room */
    assert_has(e, "warning: unused parameter");
    assert_int_equal(st.warnings_folded, 0);
    assert_true(st.lines_left_out > 400);
    assert_has(e, " lines left out ...]\n");
    assert_lacks(e, "compiler warning");
    assert_true(valid_utf8(e));
    free(e);
    free(out);
}

/* The same warnings before the change (on lines moved by an edit) are
 * folded into a count, even the ones the budget had room for. */
static void warnings_the_baseline_had_are_folded(void **state)
{
    char *out = build_output(110, 3, true), *base = build_output(110, 0, false);
    const char *notice = "[... 110 compiler warnings left out: they were "
                         "there before the change too ...]\n";
    tnd_excerpt_stats st;
    char *e;

    (void)state;
    e = tnd_excerpt(out, base, 3000, &st);
    assert_true(strlen(e) <= 3000);
    assert_int_equal(st.warnings_folded, 110);
    assert_memory_equal(e, notice, strlen(notice));
    assert_lacks(e, "warning:");
    assert_lacks(e, "In function");
    assert_lacks(e, "~~~");
    assert_has(e, fail_line);
    assert_has(e, "101 tests conducted, 1 failed.\n");
    assert_has(e, "make: *** [Makefile:12: test] Error 1\n");
    /* freed of the warnings, the head has room again */
    assert_has(e, "cc -Wall -Wextra -O2 -c -o src/vec.o src/vec.c\n");
    free(e);

    /* folded even when the rest fits: the line after the warnings comes
     * right after the notice */
    e = tnd_excerpt(out, base, 1 << 20, &st);
    assert_int_equal(st.warnings_folded, 110);
    assert_int_equal(st.lines_left_out, 0);
    assert_has(e, "there before the change too ...]\n"
                  "cc -Wall -Wextra -O2 -c -o src/vec.o src/vec.c\n"
                  "cc -o test_vec test_vec.c src/vec.o\n");
    assert_lacks(e, "warning:");
    free(e);
    free(out);
    free(base);
}

/* A warning the change brought stays, whole, among the old ones. */
static void new_warnings_are_kept_when_there_is_room(void **state)
{
    char *base = build_output(110, 0, false), *out, *e;
    const char *new_warning =
        "src/vec.c: In function \xe2\x80\x98vec_find\xe2\x80\x99:\n"
        "src/vec.c:77:9: warning: unused variable \xe2\x80\x98tmp\xe2\x80\x99 "
        "[-Wunused-variable]\n"
        "   77 |     int tmp;\n"
        "      |         ^~~\n";
    tnd_buf b;
    tnd_excerpt_stats st;

    (void)state;
    tnd_buf_init(&b, TND_BUF_NOCAP);
    for (int i = 0; i < 110; i++) {
        add_warning(&b, i, 0);
        if (i == 50)
            tnd_buf_puts(&b, new_warning);
    }
    tnd_buf_puts(&b, "./test_vec\n");
    for (int i = 0; i < 100; i++)
        tnd_buf_printf(&b, "[ ok ] test_vec.c:%d vec_push keeps order %d\n",
                       100 + i, i);
    tnd_buf_printf(&b, "%s\n101 tests conducted, 1 failed.\n", fail_line);
    out = tnd_buf_detach(&b, NULL);

    e = tnd_excerpt(out, base, 3000, &st);
    assert_true(strlen(e) <= 3000);
    assert_int_equal(st.warnings_folded, 110);
    assert_has(e, new_warning);
    assert_has(e, fail_line);
    assert_has(e, "101 tests conducted, 1 failed.\n");
    free(e);

    /* without a baseline the same warning is one of 111 */
    e = tnd_excerpt(out, NULL, 3000, &st);
    assert_int_equal(st.warnings_folded, 0);
    assert_has(e, fail_line);
    free(e);
    free(out);
    free(base);
}

/* ---- real compiler output ----------------------------------------------- */

static char *fixture(const char *name)
{
    char path[256], *text = NULL;
    size_t len;

    snprintf(path, sizeof(path), "%s/%s", FIXTURES, name);
    if (tnd_fs_read(&text, &len, path, 1 << 20) < 0)
        fail_msg("cannot read %s", path);
    return text;
}

/* gcc's blocks: the "In file included from" and "In function" lines, the
 * diagnostic, its excerpt and notes go together; folding a build's
 * warnings against themselves leaves the error block whole. */
static void gcc_and_clang_diagnostics_are_read_as_blocks(void **state)
{
    char *gcc = fixture("gcc.txt"), *clang = fixture("clang.txt");
    char *make = fixture("make.txt"), *e;
    tnd_excerpt_stats st;

    (void)state;
    e = tnd_excerpt(gcc, gcc, 3000, &st);
    assert_int_equal(st.warnings_folded, 4);
    assert_string_equal(
        e,
        "[... 4 compiler warnings left out: they were there before the "
        "change too ...]\n"
        "src/broken.c:13:12: error: \xe2\x80\x98undeclared_value\xe2\x80\x99 "
        "undeclared (first use in this function)\n"
        "   13 |     return undeclared_value + helper(count);\n"
        "      |            ^~~~~~~~~~~~~~~~\n"
        "src/broken.c:13:12: note: each undeclared identifier is reported "
        "only once for each function it appears in\n");
    free(e);

    e = tnd_excerpt(clang, clang, 3000, &st);
    assert_int_equal(st.warnings_folded, 3);
    assert_string_equal(
        e, "[... 3 compiler warnings left out: they were there before the "
           "change too ...]\n"
           "src/broken.c:13:12: error: use of undeclared identifier "
           "'undeclared_value'\n"
           "    return undeclared_value + helper(count);\n"
           "           ^\n"
           "3 warnings and 1 error generated.\n");
    free(e);

    /* make's command line before, its complaint after: one warning new */
    e = tnd_excerpt(make,
                    gcc + strlen("In file included from src/broken.c:2:\n"
                                 "src/util.h: In function "
                                 "\xe2\x80\x98helper\xe2\x80\x99:\n"
                                 "src/util.h:4:9: warning: unused "
                                 "variable \xe2\x80\x98unused\xe2\x80\x99 "
                                 "[-Wunused-variable]\n"),
                    3000, &st);
    assert_int_equal(st.warnings_folded, 3);
    assert_has(e, "cc -Wall -Wextra   -c -o src/broken.o src/broken.c\n"
                  "In file included from src/broken.c:2:\n"
                  "src/util.h: In function \xe2\x80\x98helper\xe2\x80\x99:\n"
                  "src/util.h:4:9: warning: unused variable");
    assert_has(e, "      |         ^~~~~~\nsrc/broken.c:13:12: error:");
    assert_has(e, "make: *** [<builtin>: src/broken.o] Error 1\n");
    free(e);
    free(gcc);
    free(clang);
    free(make);
}

/* clang's source line over the caret, and a fix-it under it, belong to
 * the warning; a code line that says "failed" does not break the block. */
static void clang_fixits_and_code_stay_with_their_warning(void **state)
{
    const char *warning =
        "f.c:2:21: warning: variable 'failed' is uninitialized [-Wuninit]\n"
        "int y(void) { int failed; return failed; }\n"
        "                                 ^~~~~~\n"
        "f.c:2:21: note: initialize the variable 'failed' to silence this\n"
        "int y(void) { int failed; return failed; }\n"
        "                        ^\n"
        "                         = 0\n";
    char *out, *e;
    tnd_excerpt_stats st;

    (void)state;
    out = malloc(strlen(warning) + 64);
    sprintf(out, "%sok\n", warning);
    e = tnd_excerpt(out, warning, 3000, &st);
    assert_int_equal(st.warnings_folded, 1);
    assert_string_equal(e, "[... 1 compiler warning left out: it was there "
                           "before the change too ...]\nok\n");
    free(e);
    free(out);
}

/* ---- bounds ------------------------------------------------------------- */

/* Everything at once: CRLF, an error block, warnings, a 20 KB line of
 * accents, a long failure line, many failures, no newline at the end. */
static char *nasty_output(void)
{
    tnd_buf b;

    tnd_buf_init(&b, TND_BUF_NOCAP);
    tnd_buf_puts(&b, "make -C build\r\n");
    for (int i = 0; i < 40; i++)
        add_warning(&b, i, 0);
    tnd_buf_puts(&b,
                 "src/vec.c: In function \xe2\x80\x98vec_find\xe2\x80\x99:\n"
                 "src/vec.c:80:12: error: \xe2\x80\x98n\xe2\x80\x99 "
                 "undeclared (first use in this function)\n"
                 "   80 |     return n;\n"
                 "      |            ^\n");
    tnd_buf_puts(&b, "x");
    for (int i = 0; i < 10000; i++)
        tnd_buf_puts(&b, "\xc3\xa9");
    tnd_buf_puts(&b, "\n");
    for (int i = 0; i < 300; i++) {
        tnd_buf_printf(&b, "[ ok ] step %d \xe2\x82\xac\r\n", i);
        if (i % 50 == 49)
            tnd_buf_printf(&b, "[FAIL] step %d \xe2\x82\xac\r\n", i);
    }
    tnd_buf_puts(&b, "[FAIL] a long one: ");
    for (int i = 0; i < 1000; i++)
        tnd_buf_puts(&b, "\xf0\x9f\x98\x80");
    tnd_buf_puts(&b, "\nSegmentation fault (core dumped)\n");
    tnd_buf_puts(&b, "make: *** [all] Error 2");
    return tnd_buf_detach(&b, NULL);
}

static size_t lines_in(const char *s)
{
    size_t n = 0;

    for (; *s; s++)
        n += *s == '\n';
    return n + (s[-1] != '\n');
}

/* The result is within max, valid UTF-8, and every line of the input is
 * either shown or counted by a marker. */
static void the_size_bound_holds_for_every_max(void **state)
{
    char *out = nasty_output();
    size_t input_lines = lines_in(out);

    (void)state;
    for (size_t max = 0; max <= 4000; max++) {
        tnd_excerpt_stats st;
        char *e = tnd_excerpt(out, NULL, max, &st);
        size_t shown = 0;

        if (strlen(e) > max)
            fail_msg("max %zu: %zu bytes", max, strlen(e));
        if (!valid_utf8(e))
            fail_msg("max %zu: not UTF-8:\n%s", max, e);
        if (max >= TND_EXCERPT_MIN) {
            for (const char *p = e; *p;) {
                const char *nl = strchr(p, '\n');
                size_t n;

                if (!nl)
                    nl = p + strlen(p);
                if (sscanf(p, "[... %zu line", &n) != 1)
                    shown++;
                p = *nl ? nl + 1 : nl;
            }
            if (shown + st.lines_left_out != input_lines)
                fail_msg("max %zu: %zu shown + %zu left out != %zu", max, shown,
                         st.lines_left_out, input_lines);
        }
        if (max >= 400)
            assert_has(e, "src/vec.c:80:12: error:");
        if (max >= 1000) {
            assert_has(e, "[FAIL] step 49 \xe2\x82\xac\r\n");
            assert_has(e, "make: *** [all] Error 2");
        }
        free(e);
    }
    free(out);
}

static void a_long_line_is_cut_with_a_marker(void **state)
{
    tnd_buf b;
    char *out, *e;

    (void)state;
    tnd_buf_init(&b, TND_BUF_NOCAP);
    tnd_buf_puts(&b, "[FAIL] ");
    for (int i = 0; i < 20000; i++)
        tnd_buf_puts(&b, "\xc3\xa9"); /* 500 falls inside one */
    tnd_buf_puts(&b, "\nsummary\n");
    out = tnd_buf_detach(&b, NULL);
    e = tnd_excerpt(out, NULL, 3000, NULL);
    assert_true(strlen(e) <= 3000);
    assert_true(valid_utf8(e));
    assert_memory_equal(e, "[FAIL] \xc3\xa9", 9);
    /* 7 + 246 * 2 = 499 bytes shown */
    assert_memory_equal(e + 499,
                        " [... 39508 more bytes of this line left "
                        "out ...]\nsummary\n",
                        58);
    free(e);
    free(out);
}

/* Bytes that are not UTF-8 pass through as they are, and a cut among them
 * goes no further back than the limit. */
static void invalid_utf8_passes_through(void **state)
{
    tnd_buf b;
    char *out, *e;
    const char *bad = "[FAIL] bad bytes \xff\xfe\x80 and \xc3 alone\n";

    (void)state;
    tnd_buf_init(&b, TND_BUF_NOCAP);
    for (int i = 0; i < 200; i++)
        tnd_buf_printf(&b, "[ ok ] step %d\n", i);
    tnd_buf_puts(&b, bad);
    tnd_buf_puts(&b, "[FAIL] ");
    for (int i = 0; i < 2000; i++)
        tnd_buf_puts(&b, "\x80");
    tnd_buf_puts(&b, "\n");
    out = tnd_buf_detach(&b, NULL);
    e = tnd_excerpt(out, NULL, 2000, NULL);
    assert_true(strlen(e) <= 2000);
    assert_has(e, bad);
    assert_has(e, "\x80\x80 [... 1507 more bytes of this line left out ...]\n");
    assert_int_equal(strstr(e, " [... 1507 more") - strstr(e, "[FAIL] \x80"),
                     500);
    free(e);
    free(out);
}

static void crlf_lines_keep_their_ends(void **state)
{
    tnd_buf b;
    char *out, *e;

    (void)state;
    tnd_buf_init(&b, TND_BUF_NOCAP);
    for (int i = 0; i < 300; i++) {
        tnd_buf_printf(&b, "[ ok ] step %d\r\n", i);
        if (i == 150)
            tnd_buf_puts(&b, "[FAIL] step 150\r\n");
    }
    tnd_buf_puts(&b, "Failed: 0\r\n"); /* a count, not a failure */
    out = tnd_buf_detach(&b, NULL);
    e = tnd_excerpt(out, NULL, 500, NULL);
    assert_true(strlen(e) <= 500);
    assert_has(e, "[ ok ] step 150\r\n[FAIL] step 150\r\n[ ok ] step 151\r\n");
    assert_has(e, "Failed: 0\r\n");
    free(e);
    free(out);
}

/* The last line without a newline stays so; a marker after a line that
 * had none starts on a line of its own. */
static void a_last_line_without_newline(void **state)
{
    tnd_buf b;
    char *out, *e;

    (void)state;
    tnd_buf_init(&b, TND_BUF_NOCAP);
    for (int i = 0; i < 300; i++)
        tnd_buf_printf(&b, "[ ok ] step %d\n", i);
    tnd_buf_puts(&b, "[FAIL] the end");
    out = tnd_buf_detach(&b, NULL);
    e = tnd_excerpt(out, NULL, 400, NULL);
    assert_true(strlen(e) <= 400);
    assert_string_equal(e + strlen(e) - 30, "[ ok ] step 299\n[FAIL] the end");
    free(e);
    free(out);
}

/* Below TND_EXCERPT_MIN: one line, the first failure, cut to max. */
static void a_tiny_max_gives_the_failure_line_cut(void **state)
{
    char *out = build_output(110, 0, true), *e;

    (void)state;
    e = tnd_excerpt(out, NULL, 20, NULL);
    assert_string_equal(e, "[FAIL] test_vec.c:26");
    free(e);
    e = tnd_excerpt(out, NULL, 0, NULL);
    assert_string_equal(e, "");
    free(e);
    e = tnd_excerpt("", NULL, 0, NULL);
    assert_string_equal(e, "");
    free(e);
    free(out);
}

/* 1 MiB of warnings against a 1 MiB baseline of other warnings: linear,
 * so well under a second (a scan per pair of lines would take minutes). */
static void a_mebibyte_of_warnings_is_quick(void **state)
{
    tnd_buf b, bb;
    char *out, *base, *e;
    struct timespec t0, t1;
    tnd_excerpt_stats st;
    double secs;

    (void)state;
    tnd_buf_init(&b, TND_BUF_NOCAP);
    tnd_buf_init(&bb, TND_BUF_NOCAP);
    for (int i = 0; b.len < (1 << 20); i++) {
        tnd_buf_printf(&b, "a%d.c:1:1: warning: w%c%c [-Wx]\n", i, 'a' + i % 26,
                       'a' + i / 26 % 26);
        tnd_buf_printf(&bb, "b%d.c:1:1: warning: v%c%c [-Wx]\n", i,
                       'a' + i % 26, 'a' + i / 26 % 26);
    }
    tnd_buf_printf(&b, "%s\n", fail_line);
    out = tnd_buf_detach(&b, NULL);
    base = tnd_buf_detach(&bb, NULL);
    clock_gettime(CLOCK_MONOTONIC, &t0);
    e = tnd_excerpt(out, base, 3000, &st);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    secs = (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9;
    assert_has(e, fail_line);
    assert_int_equal(st.warnings_folded, 0);
    assert_true(count(e, "warning:") > 0);
    assert_true(secs < 10.0); /* generous: valgrind runs this too */
    free(e);
    e = tnd_excerpt(out, out, 3000, &st);
    assert_true(st.warnings_folded > 30000);
    assert_string_equal(strstr(e, "...]\n") + 5,
                        "[FAIL] test_vec.c:26 vec_find(fib, 5) = -1, "
                        "expected 0\n");
    free(e);
    free(out);
    free(base);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(output_that_fits_is_kept_as_it_is),
        cmocka_unit_test(a_failure_after_20_kb_of_warnings_is_kept),
        cmocka_unit_test(warnings_the_baseline_had_are_folded),
        cmocka_unit_test(new_warnings_are_kept_when_there_is_room),
        cmocka_unit_test(gcc_and_clang_diagnostics_are_read_as_blocks),
        cmocka_unit_test(clang_fixits_and_code_stay_with_their_warning),
        cmocka_unit_test(the_size_bound_holds_for_every_max),
        cmocka_unit_test(a_long_line_is_cut_with_a_marker),
        cmocka_unit_test(invalid_utf8_passes_through),
        cmocka_unit_test(crlf_lines_keep_their_ends),
        cmocka_unit_test(a_last_line_without_newline),
        cmocka_unit_test(a_tiny_max_gives_the_failure_line_cut),
        cmocka_unit_test(a_mebibyte_of_warnings_is_quick),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
