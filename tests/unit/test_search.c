/* Unit tests for orchestrator/search: where a SEARCH block goes in a
 * file. The first tests ask it directly; the others apply edits in a
 * workspace of ws_repo.h's repository, every rule with the message a
 * coder is told (the closest line, the place that is not one, a long
 * miss in linear work). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/error.h"
#include "orchestrator/search.h"
#include "orchestrator/workspace.h"
#include "ws_repo.h"

static tnd_search_result find(const char *text, const char *search,
                              size_t *start, size_t *end, char **hint)
{
    return tnd_search_find(text, strlen(text), search, start, end, hint);
}

static void the_one_place_is_found(void **state)
{
    const char text[] = "a\n  b\nc\n";
    size_t start = 99, end = 99;
    char *hint = (char *)1;

    (void)state;
    assert_int_equal(find(text, "  b\n", &start, &end, &hint),
                     TND_SEARCH_FOUND);
    assert_int_equal(start, 2);
    assert_int_equal(end, 6);
    assert_null(hint);
    /* the indentation left out: found where the line's text begins */
    assert_int_equal(find(text, "b\n", &start, &end, &hint), TND_SEARCH_FOUND);
    assert_int_equal(start, 4);
}

/* inside a word is no place; at a line's start beats out of a word */
static void places_by_how_well_they_fit(void **state)
{
    size_t start, end;
    char *hint = NULL;

    (void)state;
    assert_int_equal(
        find("connect_timeout = 30\n", "timeout = 30\n", &start, &end, &hint),
        TND_SEARCH_NONE);
    assert_non_null(hint);
    free(hint);
    assert_int_equal(
        find("f(int n);\nint n);\n", "int n);\n", &start, &end, &hint),
        TND_SEARCH_FOUND);
    assert_int_equal(start, 10);
    assert_int_equal(find("x\nx\n", "x\n", &start, &end, &hint),
                     TND_SEARCH_MANY);
}

/* trailing blanks are ignored when nothing matches exactly */
static void trailing_blanks_are_loose(void **state)
{
    size_t start, end;
    char *hint = NULL;

    (void)state;
    assert_int_equal(find("a  \nb\n", "a\nb\n", &start, &end, &hint),
                     TND_SEARCH_FOUND);
    assert_int_equal(start, 0);
    assert_int_equal(end, 6);
}

/* a hunk is anchored: there, byte for byte, a CRLF line end for LF */
static void a_hunk_is_anchored(void **state)
{
    const char text[] = "a\r\nb\r\n";
    size_t end = 0;

    (void)state;
    assert_true(tnd_search_at(text, strlen(text), 3, "b\n", &end));
    assert_int_equal(end, 6);
    assert_false(tnd_search_at(text, strlen(text), 0, "b\n", &end));
}

/* ---- through a workspace: what a coder is told ------------------------- */

static void replace_tolerates_trailing_whitespace(void **state)
{
    tnd_workspace *ws = open_ws();
    const char *root = tnd_workspace_path(ws);

    (void)state;
    assert_int_equal(
        APPLY(ws, REPLACE("src/legacy.c", "int a = 1;\nint b = 2;\n",
                          "int a = 10;\nint b = 20;\n")),
        0);
    assert_file(root, "src/legacy.c", "int a = 10;\nint b = 20;\nint c = 3;\n");
    assert_int_equal(tnd_workspace_reset(ws), 0);
    assert_file(root, "src/legacy.c", legacy_c);

    /* A SEARCH without a final newline replaces up to the end of its
     * last line, and the line break after it stays. */
    assert_int_equal(APPLY(ws, REPLACE("src/legacy.c", "int a = 1;\nint b = 2;",
                                       "int a = 10;\nint b = 20;")),
                     0);
    assert_file(root, "src/legacy.c",
                "int a = 10;\nint b = 20;\t\nint c = 3;\n");
    tnd_workspace_destroy(&ws, 1);
}

static void search_not_found_names_the_closest_line(void **state)
{
    tnd_workspace *ws = open_ws();
    const char *root = tnd_workspace_path(ws);

    (void)state;
    assert_int_equal(
        APPLY(ws, REPLACE("src/stats.c", "    return sum / count;\n",
                          "    return 0;\n")),
        -1);
    assert_error_has("edit 1: the SEARCH text was not found in src/stats.c");
    assert_error_has("the closest line is 8: `    return sum / n;`");
    assert_null(tnd_workspace_touched(ws)[0]);

    assert_int_equal(APPLY(ws, REPLACE("src/stats.c", "zzzz qqqq\n", "x\n")),
                     -1);
    assert_error_has("no line of the file resembles its first line");

    /* a SEARCH right but for one line is told which (it was told of
     * its first line only, which was right) */
    assert_int_equal(APPLY(ws, REPLACE("src/stats.c",
                                       "{\n    double sum = 0;\n"
                                       "    for (int i = 0; i <= n; i++)\n",
                                       "x\n")),
                     -1);
    assert_error_has("its first 2 lines are the file's from line 4, but its "
                     "line 3 `    for (int i = 0; i <= n; i++)` is not the "
                     "file's line 6 `    for (int i = 0; i < n; i++)`");

    /* tabs where the file has spaces */
    assert_int_equal(APPLY(ws, REPLACE("src/stats.c",
                                       "\tdouble sum = 0;\n"
                                       "\tfor (int i = 0; i < n; i++)\n",
                                       "x\n")),
                     -1);
    assert_error_has("it is there with other indentation from line 5 on");
    assert_file(root, "src/stats.c", stats_c);
    tnd_workspace_destroy(&ws, 1);
}

static void ambiguous_search_is_refused(void **state)
{
    tnd_workspace *ws = open_ws();

    (void)state;
    assert_int_equal(
        APPLY(ws, REPLACE("src/stats.c", "(const double *v, int n)\n{\n",
                          "(const double *v, size_t n)\n{\n")),
        -1);
    assert_error_has(
        "edit 1: the SEARCH text matches more than one place in src/stats.c");
    assert_error_has("include more surrounding lines");
    /* loosely (trailing blanks ignored) ambiguous too */
    assert_int_equal(APPLY(ws, REPLACE("src/legacy.c", "int a = 1;\n", "x\n"),
                           REPLACE("src/dup.txt", "same  \n", "other\n")),
                     -1);
    assert_error_has(
        "edit 2: the SEARCH text matches more than one place in src/dup.txt");
    tnd_workspace_destroy(&ws, 1);
}

/* Places that overlap count: "A B A" is in "A B A B A" twice (counted
 * once, the edit went to the first without a word). */
static void overlapping_places_are_ambiguous_too(void **state)
{
    tnd_workspace *ws = open_ws();

    (void)state;
    assert_int_equal(APPLY(ws, REPLACE("src/rep.txt", "A\nB\nA\n", "X\n")), -1);
    assert_error_has("matches more than one place in src/rep.txt");
    tnd_workspace_destroy(&ws, 1);
}

/* Loose matching (trailing blanks ignored) finds a place that starts
 * inside a near miss, and counts places that overlap. */
static void loose_places_after_a_near_miss_and_overlapping(void **state)
{
    tnd_workspace *ws = open_ws();
    const char *root = tnd_workspace_path(ws);

    (void)state;
    /* "A" matches at line 1, "B" does not at line 2: the place is the
     * one that starts at line 2 */
    assert_int_equal(APPLY(ws, WRITE("near.txt", "A \nA \nB\t\nC\n"),
                           REPLACE("near.txt", "A\nB\n", "X\n")),
                     0);
    assert_file(root, "near.txt", "A \nX\nC\n");
    assert_int_equal(tnd_workspace_reset(ws), 0);
    assert_int_equal(APPLY(ws, WRITE("over.txt", "A \nB\nA\nB \nA\n"),
                           REPLACE("over.txt", "A\nB\nA\n", "X\n")),
                     -1);
    assert_error_has("edit 2: the SEARCH text matches more than one place");
    tnd_workspace_destroy(&ws, 1);
}

/* A SEARCH of many repeated lines that is not in a file of more of them
 * (one model answer can hold both): comparing the whole search from
 * every line of the file took 34 s of the run loop's thread for 40,000
 * lines in 100,000. Matching is linear: the line comparisons stay within
 * twice the lines of the two. */
static void a_long_loose_miss_takes_linear_work(void **state)
{
    size_t lines = 100000, want = 40000, steps;
    tnd_workspace *ws = open_ws();
    tnd_buf file, search;

    (void)state;
    tnd_buf_init(&file, TND_BUF_NOCAP);
    tnd_buf_init(&search, TND_BUF_NOCAP);
    for (size_t i = 0; i < lines; i++)
        tnd_buf_puts(&file, "a\n");
    for (size_t i = 0; i < want; i++)
        tnd_buf_puts(&search, "a\n");
    tnd_buf_puts(&search, "b\n");
    steps = tnd_search_loose_steps();
    assert_int_equal(APPLY(ws, WRITE("big.txt", tnd_buf_str(&file)),
                           REPLACE("big.txt", tnd_buf_str(&search), "c\n")),
                     -1);
    steps = tnd_search_loose_steps() - steps;
    assert_error_has("edit 2: the SEARCH text was not found in big.txt");
    assert_error_has("its first 40000 lines are the file's from line 1, but "
                     "its line 40001 `b` is not the file's line 40001 `a`");
    /* two passes: the match, then the hint's (indentation aside) */
    assert_true(steps <= 4 * (lines + want + 1));
    tnd_buf_free(&file);
    tnd_buf_free(&search);
    tnd_workspace_destroy(&ws, 1);
}

/* A SEARCH matches where a line's text begins, else outside a word, never
 * inside one: "timeout = 30" went into "connect_timeout = 30", and the
 * edit changed another setting; beside a line of its own it was "more
 * than one place". */
static void a_search_does_not_match_inside_a_word(void **state)
{
    tnd_workspace *ws = open_ws();
    const char *root = tnd_workspace_path(ws);

    (void)state;
    assert_int_equal(
        APPLY(ws, WRITE("cfg.ini", "connect_timeout = 30\n"),
              REPLACE("cfg.ini", "timeout = 30\n", "timeout = 60\n")),
        -1);
    assert_error_has("edit 2: the SEARCH text was not found in cfg.ini");
    assert_int_equal(
        APPLY(ws,
              WRITE("cfg.ini", "connect_timeout = 30\n"
                               "timeout = 30\n"),
              REPLACE("cfg.ini", "timeout = 30\n", "timeout = 60\n")),
        0);
    assert_file(root, "cfg.ini", "connect_timeout = 30\ntimeout = 60\n");
    tnd_workspace_destroy(&ws, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_one_place_is_found),
        cmocka_unit_test(places_by_how_well_they_fit),
        cmocka_unit_test(trailing_blanks_are_loose),
        cmocka_unit_test(a_hunk_is_anchored),
    };
    const struct CMUnitTest through_a_workspace[] = {
        cmocka_unit_test(replace_tolerates_trailing_whitespace),
        cmocka_unit_test(search_not_found_names_the_closest_line),
        cmocka_unit_test(ambiguous_search_is_refused),
        cmocka_unit_test(overlapping_places_are_ambiguous_too),
        cmocka_unit_test(loose_places_after_a_near_miss_and_overlapping),
        cmocka_unit_test(a_long_loose_miss_takes_linear_work),
        cmocka_unit_test(a_search_does_not_match_inside_a_word),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);

    return failed + cmocka_run_group_tests(through_a_workspace, ws_repo_setup,
                                           ws_repo_teardown);
}
