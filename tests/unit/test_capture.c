/* Unit tests for skills/capture: what is kept of a program's output. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "skills/capture.h"

static char *capture(size_t cap, const char *const *parts, size_t *total)
{
    tnd_capture c;
    char *out;

    tnd_capture_init(&c, cap);
    for (; *parts; parts++)
        tnd_capture_add(&c, *parts, strlen(*parts));
    out = tnd_capture_finish(&c, NULL);
    if (total)
        *total = c.total;
    tnd_capture_free(&c);
    return out;
}

static void what_fits_is_kept_whole(void **state)
{
    const char *parts[] = {"make: ", "Nothing to be done\n", NULL};
    size_t total;
    char *out = capture(1024, parts, &total);

    (void)state;
    assert_string_equal(out, "make: Nothing to be done\n");
    assert_int_equal(total, 25);
    free(out);
}

static void the_middle_is_omitted_and_said(void **state)
{
    char line[64];
    const char *parts[402];
    char *lines[400], *out;
    size_t total;

    (void)state;
    for (int i = 0; i < 400; i++) {
        snprintf(line, sizeof(line), "line %03d\n", i);
        lines[i] = strdup(line);
        parts[i] = lines[i];
    }
    parts[400] = NULL;
    out = capture(200, parts, &total);
    assert_int_equal(total, 400 * 9);
    assert_true(strncmp(out, "line 000\n", 9) == 0);       /* the head */
    assert_non_null(strstr(out, " bytes omitted ...]\n")); /* the marker */
    assert_non_null(strstr(out, "line 399\n"));            /* the tail */
    assert_null(strstr(out, "line 200\n"));
    assert_true(strlen(out) < 200 + 64);
    free(out);
    for (int i = 0; i < 400; i++)
        free(lines[i]);
}

static void a_failure_in_the_middle_is_kept(void **state)
{
    char *filler = malloc(20001), *out;
    const char *parts[] = {NULL, "FAIL test_mean: want 2.5, got 2\n", NULL,
                           NULL};

    (void)state;
    for (int i = 0; i < 20000; i++)
        filler[i] = i % 50 == 49 ? '\n' : 'w';
    filler[20000] = '\0';
    parts[0] = filler;
    parts[2] = filler;
    out = capture(1000, parts, NULL);
    assert_non_null(strstr(out, "this line among them names a failure"));
    assert_non_null(strstr(out, "FAIL test_mean: want 2.5, got 2\n"));
    assert_true(strlen(out) < 1000 + 256);
    free(out);
    free(filler);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(what_fits_is_kept_whole),
        cmocka_unit_test(the_middle_is_omitted_and_said),
        cmocka_unit_test(a_failure_in_the_middle_is_kept),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
