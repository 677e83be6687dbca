/* Unit tests for orchestrator/search: where a SEARCH block goes in a
 * file. (The workspace's tests apply edits through it, every rule with
 * its message; these ask it directly.) */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "orchestrator/search.h"

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_one_place_is_found),
        cmocka_unit_test(places_by_how_well_they_fit),
        cmocka_unit_test(trailing_blanks_are_loose),
        cmocka_unit_test(a_hunk_is_anchored),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
