/* Unit tests for common/buf: the capped growable buffer. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "common/buf.h"

static void consume_drops_the_front(void **state)
{
    tnd_buf b;

    (void)state;
    tnd_buf_init(&b, 64);
    assert_int_equal(tnd_buf_puts(&b, "hello world"), 0);
    tnd_buf_consume(&b, 6);
    assert_string_equal(tnd_buf_str(&b), "world");
    assert_int_equal(b.len, 5);
    tnd_buf_consume(&b, 0);
    assert_string_equal(tnd_buf_str(&b), "world");
    tnd_buf_consume(&b, 99);
    assert_string_equal(tnd_buf_str(&b), "");
    assert_int_equal(b.len, 0);
    tnd_buf_free(&b);
}

static void append_and_read_back(void **state)
{
    tnd_buf b;

    (void)state;
    tnd_buf_init(&b, 100);
    assert_string_equal(tnd_buf_str(&b), "");
    assert_int_equal(tnd_buf_puts(&b, "hello"), 0);
    assert_int_equal(tnd_buf_printf(&b, ", %s %d", "world", 42), 0);
    assert_string_equal(tnd_buf_str(&b), "hello, world 42");
    assert_int_equal(b.len, strlen("hello, world 42"));
    tnd_buf_free(&b);
}

static void cap_is_enforced_and_nothing_partial_is_kept(void **state)
{
    tnd_buf b;

    (void)state;
    tnd_buf_init(&b, 8);
    assert_int_equal(tnd_buf_puts(&b, "12345"), 0);
    assert_int_equal(tnd_buf_puts(&b, "6789"), -1);
    assert_non_null(strstr(tnd_error_last(), "limit of 8 bytes"));
    assert_string_equal(tnd_buf_str(&b), "12345");
    assert_int_equal(tnd_buf_printf(&b, "%s", "abcdef"), -1);
    assert_int_equal(b.len, 5);
    assert_int_equal(tnd_buf_puts(&b, "678"), 0);
    assert_string_equal(tnd_buf_str(&b), "12345678");
    tnd_buf_free(&b);
}

static void detach_hands_over_and_empties(void **state)
{
    tnd_buf b;
    size_t len;
    char *s;

    (void)state;
    tnd_buf_init(&b, TND_BUF_NOCAP);
    s = tnd_buf_detach(&b, &len);
    assert_string_equal(s, "");
    assert_int_equal(len, 0);
    free(s);
    assert_int_equal(tnd_buf_append(&b, "a\0b", 3), 0);
    s = tnd_buf_detach(&b, &len);
    assert_int_equal(len, 3);
    assert_memory_equal(s, "a\0b", 3);
    assert_null(b.data);
    free(s);
    tnd_buf_reset(&b);
    tnd_buf_free(&b);
    tnd_buf_free(&b);
}

static void grows_past_initial_allocation(void **state)
{
    tnd_buf b;
    int i;

    (void)state;
    tnd_buf_init(&b, TND_BUF_NOCAP);
    for (i = 0; i < 1000; i++)
        assert_int_equal(tnd_buf_puts(&b, "0123456789"), 0);
    assert_int_equal(b.len, 10000);
    assert_int_equal(b.data[b.len], '\0');
    tnd_buf_reset(&b);
    assert_int_equal(b.len, 0);
    assert_string_equal(tnd_buf_str(&b), "");
    tnd_buf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(append_and_read_back),
        cmocka_unit_test(consume_drops_the_front),
        cmocka_unit_test(cap_is_enforced_and_nothing_partial_is_kept),
        cmocka_unit_test(detach_hands_over_and_empties),
        cmocka_unit_test(grows_past_initial_allocation),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
