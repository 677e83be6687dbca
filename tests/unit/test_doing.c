/* Unit tests for orchestrator/doing: progress bodies in words, the time
 * counting from when a phase began. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "orchestrator/doing.h"
#include "proto/json.h"

/* Feed body at now_ms; the words at show_ms. */
static const char *step(tnd_doing *d, const char *body, int64_t now_ms,
                        int64_t show_ms)
{
    static char out[160];
    json_object *o = NULL;

    if (body) {
        assert_int_equal(tnd_json_parse(&o, body, strlen(body)), 0);
        tnd_doing_update(d, o, now_ms);
        json_object_put(o);
    }
    tnd_doing_format(out, sizeof(out), d, show_ms);
    return out;
}

static void a_phase_is_said_with_its_time(void **state)
{
    tnd_doing d;

    (void)state;
    tnd_doing_start(&d, "reviewer.2");
    assert_string_equal(step(&d, NULL, 0, 0), ""); /* nothing said yet */
    assert_string_equal(
        step(&d, "{\"chars\":0,\"phase\":\"started\"}", 1000, 1500),
        "reviewer: working (0.5 s)");
    assert_string_equal(
        step(&d, "{\"role\":\"reviewer\",\"chars\":0,\"phase\":\"skill test\"}",
             2000, 8100),
        "reviewer: test running (6.1 s)");
    /* a sign of life changes nothing: the time goes on counting */
    assert_string_equal(step(&d, "{\"chars\":0}", 9000, 9000),
                        "reviewer: test running (7.0 s)");
    assert_string_equal(
        step(&d, "{\"chars\":0,\"phase\":\"critique\"}", 9500, 9500),
        "reviewer: critique (0.0 s)");
}

static void streaming_is_writing_with_its_characters(void **state)
{
    tnd_doing d;

    (void)state;
    tnd_doing_start(&d, "coder");
    step(&d, "{\"chars\":0,\"phase\":\"started\"}", 0, 0);
    assert_string_equal(
        step(&d, "{\"role\":\"coder\",\"chars\":1,\"delta\":\"x\"}", 500, 500),
        "coder: writing (1 character, 0.0 s)");
    /* more text: the same phase, its time counting from the first */
    assert_string_equal(
        step(&d, "{\"role\":\"coder\",\"chars\":1834,\"delta\":\"y\"}", 2000,
             2500),
        "coder: writing (1,834 characters, 2.0 s)");
    assert_string_equal(
        step(&d, "{\"chars\":1234567,\"delta\":\"z\"}", 3000, 3000),
        "coder: writing (1,234,567 characters, 2.5 s)");
}

/* The progress line on a narrow terminal: whole when it fits; else the
 * words are cut and the time stays (at 40 columns it was cut off). */
static void a_narrow_line_keeps_its_time(void **state)
{
    tnd_doing d;
    char out[160];

    (void)state;
    tnd_doing_start(&d, "coder");
    step(&d, "{\"chars\":1834,\"delta\":\"y\"}", 500, 500);
    tnd_doing_fit(out, sizeof(out), &d, 2500, "tandem: [1/3] ", "[1/3] ", 79);
    assert_string_equal(
        out, "tandem: [1/3] coder: writing (1,834 characters, 2.0 s)");
    tnd_doing_fit(out, sizeof(out), &d, 2500, "tandem: [1/3] ", "[1/3] ", 39);
    assert_string_equal(out, "[1/3] coder: writing (1,834 ... (2.0 s)");
    assert_int_equal(strlen(out), 39);
    tnd_doing_fit(out, sizeof(out), &d, 2500, "tandem: [1/3] ", "[1/3] ", 20);
    assert_string_equal(out, "[1/3] cod... (2.0 s)");
    /* too narrow for any words: the time alone, cut at the very least */
    tnd_doing_fit(out, sizeof(out), &d, 2500, "tandem: [1/3] ", "[1/3] ", 12);
    assert_string_equal(out, "(2.0 s)");
    tnd_doing_fit(out, sizeof(out), &d, 2500, "tandem: [1/3] ", "[1/3] ", 5);
    assert_string_equal(out, "(2...");

    step(&d, "{\"chars\":0,\"role\":\"reviewer\",\"phase\":\"skill test\"}",
         3000, 3000);
    tnd_doing_fit(out, sizeof(out), &d, 9100,
                  "tandem: baseline: ", "baseline: ", 32);
    assert_string_equal(out, "baseline: reviewer: t... (6.1 s)");
    /* nothing said yet: nothing */
    tnd_doing_start(&d, "coder");
    tnd_doing_fit(out, sizeof(out), &d, 0, "tandem: ", "", 40);
    assert_string_equal(out, "");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_phase_is_said_with_its_time),
        cmocka_unit_test(streaming_is_writing_with_its_characters),
        cmocka_unit_test(a_narrow_line_keeps_its_time),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
