/* Unit tests for common/duration: spans of time as people write them,
 * a table of good and bad ones, and the format ages are shown in. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "common/duration.h"
#include "common/error.h"

#define S 1000LL
#define M (60 * S)
#define H (60 * M)
#define D (24 * H)

static void good_durations_parse(void **state)
{
    static const struct {
        const char *text;
        int64_t ms;
    } rows[] = {
        {"30d", 30 * D},
        {"12h", 12 * H},
        {"30m", 30 * M},
        {"45s", 45 * S},
        {"2w", 14 * D},
        {"0s", 0},
        {"0d", 0},
        {"1d12h", D + 12 * H},
        {"1h30m", H + 30 * M},
        {"007d", 7 * D},
        {"36525d", TND_DURATION_MAX_MS},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        int64_t ms = -1;
        if (tnd_duration_parse(&ms, rows[i].text) != 0)
            fail_msg("%s: %s", rows[i].text, tnd_error_last());
        assert_int_equal(ms, rows[i].ms);
    }
}

static void bad_durations_say_what_is_wrong(void **state)
{
    static const struct {
        const char *text;
        const char *error;
    } rows[] = {
        {"", "an empty duration"},
        {"7", "\"7\" has no unit; say which (s, m, h, d or w), e.g. 7d"},
        {"7x", "\"7x\": unknown unit 'x' (use s, m, h, d or w)"},
        {"7D", "unknown unit 'D'"},
        {"d", "'d' where a whole number should be"},
        {"-1d", "'-' where a whole number should be"},
        {"1.5d", "whole numbers only (say 36h for 1.5d)"},
        {"7 d", "unknown unit ' '"},
        {"7dd", "'d' where a whole number should be"},
        {"36526d", "longer than 100 years"},
        {"36525d1s", "longer than 100 years"},
        {"99999999999999999999999999d", "longer than 100 years"},
        {"5300w", "longer than 100 years"},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        int64_t ms = 42;
        tnd_error_clear();
        assert_int_equal(tnd_duration_parse(&ms, rows[i].text), -1);
        assert_int_equal(ms, 0);
        if (!strstr(tnd_error_last(), rows[i].error))
            fail_msg("%s: got \"%s\", want \"%s\"", rows[i].text,
                     tnd_error_last(), rows[i].error);
    }
}

static void ages_show_in_their_largest_whole_unit(void **state)
{
    static const struct {
        int64_t ms;
        const char *text;
    } rows[] = {
        {0, "0s"},          {999, "0s"},         {59 * S, "59s"},
        {M, "1m"},          {H - 1, "59m"},      {H, "1h"},
        {D + 23 * H, "1d"}, {41 * D + H, "41d"}, {400 * D, "400d"},
        {-5 * S, "0s"},
    };
    char out[32];

    (void)state;
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        tnd_duration_format(out, sizeof(out), rows[i].ms);
        assert_string_equal(out, rows[i].text);
    }
    /* a small buffer is cut, never overrun */
    tnd_duration_format(out, 3, 400 * D);
    assert_string_equal(out, "40");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(good_durations_parse),
        cmocka_unit_test(bad_durations_say_what_is_wrong),
        cmocka_unit_test(ages_show_in_their_largest_whole_unit),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
