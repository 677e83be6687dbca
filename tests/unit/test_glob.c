/* Unit tests for common/glob: path patterns for skills.*.paths, forbid,
 * public and docs, and for .gitignore. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/clock.h"
#include "common/error.h"
#include "common/glob.h"

typedef struct match_case {
    const char *pattern, *path;
    bool match;
} match_case;

static const match_case cases[] = {
    /* literal */
    {"Makefile", "Makefile", true},
    {"Makefile", "src/Makefile", false},
    {"src/a.c", "src/a.c", true},
    {"src/a.c", "src/a.cc", false},
    /* '*' stays within one component */
    {"*.h", "stats.h", true},
    {"*.h", "include/stats.h", false},
    {"src/*.c", "src/a.c", true},
    {"src/*.c", "src/sub/a.c", false},
    {"src/*", "src/a.c", true},
    {"*", "README", true},
    {"*", "docs/a.md", false},
    {"a*b*c", "aXXbYYc", true},
    {"a*b*c", "aXXbYY", false},
    {"*.md", ".md", true},
    /* '**' crosses directories, zero included */
    {"**", "a", true},
    {"**", "a/b/c", true},
    {"docs/**", "docs/a.md", true},
    {"docs/**", "docs/x/y/z.md", true},
    {"docs/**", "documentation/a.md", false},
    {"**/*.h", "stats.h", true},
    {"**/*.h", "include/deep/stats.h", true},
    {"**/*.h", "include/stats.c", false},
    {"src/**/test_*.c", "src/test_a.c", true},
    {"src/**/test_*.c", "src/x/y/test_a.c", true},
    {"src/**/test_*.c", "lib/x/test_a.c", false},
    {"**/build/**", "a/build/b/c.o", true},
    {"**/build/**", "a/builds/c.o", false},
    /* '?' and classes */
    {"v?.c", "v1.c", true},
    {"v?.c", "v10.c", false},
    {"?", "/", false},
    {"[abc].c", "b.c", true},
    {"[abc].c", "d.c", false},
    {"[a-c]x", "bx", true},
    {"[!a-c]x", "bx", false},
    {"[^a-c]x", "dx", true},
    {"[]]", "]", true},
    {"[!]]", "a", true},
    /* escapes */
    {"\\*.c", "*.c", true},
    {"\\*.c", "a.c", false},
    {"a\\?", "a?", true},
    /* empty paths match nothing */
    {"*", "", false},
};

static void patterns_match_whole_paths(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++)
        if (tnd_glob_match(cases[i].pattern, cases[i].path) != cases[i].match)
            fail_msg("case %zu: '%s' against '%s' should %smatch", i,
                     cases[i].pattern, cases[i].path,
                     cases[i].match ? "" : "not ");
}

static void bad_patterns_are_named(void **state)
{
    static const struct {
        const char *pattern, *error;
    } bad[] = {
        {"", "a pattern must not be empty"},
        {"/etc/passwd",
         "a pattern is relative to the repository root and must not start "
         "with '/'"},
        {"docs/", "a pattern must not end with '/' (write \"dir/**\" for "
                  "everything under dir)"},
        {"src/[ab", "'[' has no closing ']' in the same path component"},
        {"src/[a/b]", "'[' has no closing ']' in the same path component"},
        {"a**", "'**' must be a whole path component (like src/**/x.c or "
                "docs/**)"},
        {"**b/c", "'**' must be a whole path component (like src/**/x.c or "
                  "docs/**)"},
        {"a/***/b", "'**' must be a whole path component (like src/**/x.c "
                    "or docs/**)"},
        {"a//b", "a pattern must not hold an empty path component ('//')"},
        {"../secrets", "a pattern must not hold '.' or '..' components"},
        {"a/./b", "a pattern must not hold '.' or '..' components"},
        {"a\\", "a pattern must not end with '\\'"},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++) {
        assert_int_equal(tnd_glob_check(bad[i].pattern), -1);
        assert_string_equal(tnd_error_last(), bad[i].error);
        /* a malformed pattern matches nothing */
        assert_false(tnd_glob_match(bad[i].pattern, "docs/a"));
    }
    assert_int_equal(tnd_glob_check("src/**/x.c"), 0);
    assert_int_equal(tnd_glob_check("\\**"), 0);
    assert_int_equal(tnd_glob_check(".github/**"), 0);
}

static void lists_and_names(void **state)
{
    char *list[] = {(char *)"docs/**", (char *)"*.md", NULL};
    char *empty[] = {NULL};

    (void)state;
    assert_true(tnd_glob_match_any(list, "README.md"));
    assert_true(tnd_glob_match_any(list, "docs/x/y"));
    assert_false(tnd_glob_match_any(list, "src/a.md"));
    assert_false(tnd_glob_match_any(empty, "a"));
    assert_false(tnd_glob_match_any(NULL, "a"));
    assert_true(tnd_glob_match_name("*.o", "stats.o"));
    assert_false(tnd_glob_match_name("*.o", "build/stats.o"));
}

/* Patterns made to backtrack: still fast. */
static void hostile_inputs_stay_cheap(void **state)
{
    tnd_buf pat, path;
    int64_t start = tnd_now_ms();

    (void)state;
    tnd_buf_init(&pat, TND_BUF_NOCAP);
    tnd_buf_init(&path, TND_BUF_NOCAP);
    for (int i = 0; i < 100; i++)
        tnd_buf_puts(&pat, "**/a*a*a*a*/");
    tnd_buf_puts(&pat, "b");
    for (int i = 0; i < 400; i++)
        tnd_buf_puts(&path, "aaaaaaaaaaaaaaaaaaaaaaaaa/");
    tnd_buf_puts(&path, "c");
    /* 1.2 KB is over the pattern limit: rejected, quickly */
    assert_false(tnd_glob_match(tnd_buf_str(&pat), tnd_buf_str(&path)));
    tnd_buf_reset(&pat);
    for (int i = 0; i < 60; i++)
        tnd_buf_puts(&pat, "**/a*a*a*/");
    tnd_buf_puts(&pat, "b");
    assert_int_equal(tnd_glob_check(tnd_buf_str(&pat)), 0);
    assert_false(tnd_glob_match(tnd_buf_str(&pat), tnd_buf_str(&path)));
    tnd_buf_reset(&pat);
    tnd_buf_puts(&pat, "*a*a*a*a*a*a*a*a*a*a*a*a*a*a*a*b");
    tnd_buf_reset(&path);
    for (int i = 0; i < 4000; i++)
        tnd_buf_puts(&path, "a");
    assert_false(tnd_glob_match(tnd_buf_str(&pat), tnd_buf_str(&path)));
    /* a hang guard (backtracking would take minutes), wide enough for a
     * loaded machine under valgrind */
    assert_in_range(tnd_now_ms() - start, 0, 30000);
    tnd_buf_free(&pat);
    tnd_buf_free(&path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(patterns_match_whole_paths),
        cmocka_unit_test(bad_patterns_are_named),
        cmocka_unit_test(lists_and_names),
        cmocka_unit_test(hostile_inputs_stay_cheap),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
