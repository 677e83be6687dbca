/* Unit tests for skills/toolline: what one line of a tool's output says.
 * The shapes of compiler diagnostics come from real gcc and clang output
 * (tests/fixtures/locations/); the failure lines from the test runners,
 * build tools and crashes that print them. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <string.h>

#include "skills/toolline.h"

/* The failing test of the build in test_excerpt.c. */
static const char fail_line[] =
    "[FAIL] test_vec.c:26 vec_find(fib, 5) = -1, expected 0";

/* ---- compiler diagnostics and what goes with them ----------------------- */

/* Each row is read by every reader of a line's shape. */
static void diagnostics_and_their_lines_are_told_apart(void **state)
{
    enum { H = 1, X = 2, C = 4 }; /* header, excerpt, caret */
    static const struct {
        const char *line;
        tnd_toolline_severity sev;
        int shape;
    } rows[] = {
        /* diagnostics, with and without a place */
        {"src/broken.c:13:12: error: 'x' undeclared", TND_TOOLLINE_ERROR, 0},
        {"src/broken.c:13: error: expected ';'", TND_TOOLLINE_ERROR, 0},
        {"x.c:1:10: fatal error: nope.h: No such file or directory",
         TND_TOOLLINE_ERROR, 0},
        {"collect2: error: ld returned 1 exit status", TND_TOOLLINE_ERROR, 0},
        {"src/util.h:4:9: warning: unused variable 'unused' "
         "[-Wunused-variable]",
         TND_TOOLLINE_WARNING, 0},
        {"cc1: warning: command-line option '-Wx' is valid for C++",
         TND_TOOLLINE_WARNING, 0},
        {"src/broken.c:13:12: note: each undeclared identifier is reported",
         TND_TOOLLINE_NOTE, 0},
        {"f.cc:12:3:   required from here", TND_TOOLLINE_PLACE, 0},
        {"f.cc:   required from here", TND_TOOLLINE_NONE, 0},
        {"a sentence: warning: it has a blank before its colon",
         TND_TOOLLINE_NONE, 0},
        {"src/a.c:3:5:warning: no blank after the place", TND_TOOLLINE_NONE, 0},
        {"3 warnings and 1 error generated.", TND_TOOLLINE_NONE, 0},
        /* the lines before a diagnostic */
        {"In file included from src/broken.c:2:", TND_TOOLLINE_NONE, H},
        {"In file included from src/a.h:3,", TND_TOOLLINE_NONE, H},
        {"                 from src/broken.c:1:", TND_TOOLLINE_NONE, H},
        {"src/broken.c: In function 'main':", TND_TOOLLINE_NONE, H},
        {"src/broken.c: At top level:", TND_TOOLLINE_NONE, H},
        {"src/broken.c: In function 'main'", TND_TOOLLINE_NONE, 0},
        {"In the end: all good:", TND_TOOLLINE_NONE, 0},
        /* gcc's excerpt, clang's source line and caret */
        {"    4 |     int unused;", TND_TOOLLINE_NONE, X},
        {"      |         ^~~~~~", TND_TOOLLINE_NONE, X},
        {"  +++ |+#include <stdio.h>", TND_TOOLLINE_NONE, X},
        {"a | b", TND_TOOLLINE_NONE, 0},
        {"    int count = \"three\";", TND_TOOLLINE_NONE, 0},
        {"           ^", TND_TOOLLINE_NONE, C},
        {"        ^       ~~~~~~~", TND_TOOLLINE_NONE, C},
        {"\t~~~~~~   ^", TND_TOOLLINE_NONE, C},
        {"   ", TND_TOOLLINE_NONE, 0},
        {"", TND_TOOLLINE_NONE, 0},
        /* the readers are independent: the caller says which one counts */
        {"12|a.c:3: warning: x", TND_TOOLLINE_WARNING, X},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(rows) / sizeof(*rows); i++) {
        const char *s = rows[i].line;
        size_t n = strlen(s);
        int shape = (tnd_toolline_is_header(s, n) ? H : 0) |
                    (tnd_toolline_is_excerpt(s, n) ? X : 0) |
                    (tnd_toolline_is_caret(s, n) ? C : 0);

        if (tnd_toolline_diagnostic(s, n) != rows[i].sev)
            fail_msg("row %zu: \"%s\" read as severity %d, not %d", i, s,
                     (int)tnd_toolline_diagnostic(s, n), (int)rows[i].sev);
        if (shape != rows[i].shape)
            fail_msg("row %zu: \"%s\" read as shape %d, not %d", i, s, shape,
                     rows[i].shape);
    }
    /* len bounds the line; a '\r' is read as it is */
    assert_int_equal(tnd_toolline_diagnostic("a.c:1: error: x", 5),
                     TND_TOOLLINE_NONE);
    assert_int_equal(tnd_toolline_diagnostic("a.c:1: error: x", 13),
                     TND_TOOLLINE_ERROR);
    assert_false(tnd_toolline_is_header("a.c: In function 'f':\r", 22));
    assert_true(tnd_toolline_is_header("a.c: In function 'f':\r", 21));
    assert_false(tnd_toolline_is_caret("   ^\r", 5));
    assert_true(tnd_toolline_is_caret("   ^\r", 4));
}

/* ---- which lines name a failure ----------------------------------------- */

static void failure_lines_are_told_from_the_rest(void **state)
{
    static const struct {
        const char *line;
        bool failure;
    } rows[] = {
        /* compilers and linkers */
        {"src/broken.c:13:12: error: 'x' undeclared", true},
        {"src/broken.c:13: error: expected ';'", true},
        {"x.c:1:10: fatal error: nope.h: No such file or directory", true},
        {"collect2: error: ld returned 1 exit status", true},
        {"gcc: error: missing.c: No such file or directory", true},
        {"/usr/bin/ld: vec.o: in function `main': undefined reference to "
         "`f'",
         true},
        {"cc1: all warnings being treated as errors", true},
        {"1 error generated.", true},
        {"3 warnings and 1 error generated.", true},
        {"src/a.c:3:5: warning: unused variable 'failed' [-Wunused-variable]",
         false},
        {"src/a.c:3:5: note: 'error' declared here", false},
        {"src/error.c:10:5: warning: unused parameter 'x'", false},
        {"3 warnings generated.", false},
        {"cc -Wall -Werror -Wno-error=unused -c error.c", false},
        /* test frameworks */
        {fail_line, true},
        {"FAIL: test_mean", true},
        {"--- FAIL: TestVec (0.00s)", true},
        {"FAIL\tgithub.com/x/vec\t0.01s", true},
        {"FAILED tests/test_vec.py::test_find - assert -1 == 0", true},
        {"FAILED (failures=1)", true},
        {"test vec::find ... FAILED", true},
        {"test result: FAILED. 2 passed; 1 failed; 0 ignored", true},
        {"test result: ok. 3 passed; 0 failed; 0 ignored", false},
        {"[  FAILED  ] 1 test(s), listed below:", true},
        {"[  ERROR   ] --- 0x5 != 0x6", true},
        {"[  PASSED  ] 3 test(s).", false},
        {"[==========] 4 test(s) run.", false},
        {"[ ok ] test_vec.c:90 vec_fail_path", false},
        {"not ok 3 - find returns the index", true},
        {"not ok 4 - later # TODO not written yet", false},
        {"ok 1 - handles failed reads", false},
        {"1..4", false},
        {"102 tests conducted, 0 failed.", false},
        {"102 tests conducted, 2 failed.", true},
        {"Failed: 0", false},
        {"Failed: 3", true},
        {"# FAIL:  0", false},
        {"# XFAIL: 0", false},
        {"# ERROR: 0", false},
        {"# FAIL:  1", true},
        {"FAIL: 0 != 1 in test_mean", true},
        {"=== 1 failed, 2 passed in 0.12s ===", true},
        {"=== 3 passed in 0.12s ===", false},
        {"Tests:       1 failed, 3 passed, 4 total", true},
        {"  2 failing", true},
        {"3 examples, 0 failures", false},
        {"3 examples, 1 failure", true},
        {"100%: Checks: 3, Failures: 0, Errors: 0", false},
        {"67%: Checks: 3, Failures: 1, Errors: 0", true},
        {"100% tests passed, 0 tests failed out of 3", false},
        {"67% tests passed, 1 tests failed out of 3", true},
        {"The following tests FAILED:", true},
        {"Errors while running CTest", true},
        {"3/3 Test #3: vec ..............***Failed    0.01 sec", true},
        {"localhost : ok=3 changed=0 unreachable=0 failed=0 skipped=0", false},
        {"==12== ERROR SUMMARY: 0 errors from 0 contexts (suppressed: 0)",
         false},
        {"==12== ERROR SUMMARY: 2 errors from 2 contexts (suppressed: 0)",
         true},
        {"==12==ERROR: AddressSanitizer: heap-use-after-free", true},
        {"vec.c:9:5: runtime error: signed integer overflow", true},
        /* crashes, assertions, exits */
        {"test_vec: test_vec.c:85: main: Assertion `n == 3' failed.", true},
        {"assertion failed: `(left == right)`", true},
        {"Segmentation fault (core dumped)", true},
        {"Aborted (core dumped)", true},
        {"Traceback (most recent call last):", true},
        {"ValueError: mean of an empty list", true},
        {"AssertionError", true},
        {"Exception in thread \"main\" java.lang.NullPointerException", true},
        {"thread 'main' panicked at 'boom', src/main.rs:2:5", true},
        {"panic: runtime error: index out of range [3] with length 3", true},
        {"make: *** [Makefile:12: test] Error 1", true},
        {"make[2]: *** [src/Makefile:40: vec.o] Error 2", true},
        {"make: *** No rule to make target 'tests'.  Stop.", true},
        {"make[1]: Leaving directory '/src'", false},
        {"make: Nothing to be done for 'all'.", false},
        {"Process finished with exit code 0", false},
        {"Process finished with exit code 1", true},
        {"child exited with status 0", false},
        {"child exited with status 3", true},
        {"the server exited normally", false},
        {"Command exited with non-zero status 2", true},
        {"[tandem: test exit 2]", true},
        /* plain lines with scary words in them */
        {"Error: Cannot find module 'vec'", true},
        {"error handling tests: ok", false},
        {"test_error_path ... ok", false},
        {"retry on failure of the first read", false},
        {"All 12 tests passed", false},
        {"", false},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(rows) / sizeof(*rows); i++)
        if (tnd_toolline_is_failure(rows[i].line, strlen(rows[i].line)) !=
            rows[i].failure)
            fail_msg("row %zu: \"%s\" should%s be a failure", i, rows[i].line,
                     rows[i].failure ? "" : " not");
    /* a CRLF line is read without its '\r'; len bounds the line */
    assert_false(tnd_toolline_is_failure("FAIL: 0\r", 8));
    assert_true(tnd_toolline_is_failure("[FAIL] a\r", 9));
    assert_false(tnd_toolline_is_failure("[FAIL] a", 3));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(diagnostics_and_their_lines_are_told_apart),
        cmocka_unit_test(failure_lines_are_told_from_the_rest),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
