/* Unit tests for common/base64: RFC 4648's test vectors, every byte
 * value, and strict decoding. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "common/base64.h"

static void test_base64(void **state)
{
    static const char *const plain[] = {"",     "f",     "fo",    "foo",
                                        "foob", "fooba", "foobar"};
    static const char *const coded[] = {
        "", "Zg==", "Zm8=", "Zm9v", "Zm9vYg==", "Zm9vYmE=", "Zm9vYmFy"};
    char *out;
    size_t n;

    (void)state;
    for (size_t i = 0; i < 7; i++) {
        char *e = tnd_base64_encode(plain[i], strlen(plain[i]));
        assert_string_equal(e, coded[i]);
        assert_int_equal(tnd_base64_len(strlen(plain[i])), strlen(e));
        assert_int_equal(tnd_base64_decode(&out, &n, e, strlen(e)), 0);
        assert_int_equal(n, strlen(plain[i]));
        assert_memory_equal(out, plain[i], n);
        free(out);
        free(e);
    }
    /* bytes with every value survive */
    {
        unsigned char all[256];
        char *e;
        for (int i = 0; i < 256; i++)
            all[i] = (unsigned char)i;
        e = tnd_base64_encode(all, sizeof(all));
        assert_int_equal(tnd_base64_decode(&out, &n, e, strlen(e)), 0);
        assert_int_equal(n, 256);
        assert_memory_equal(out, all, 256);
        free(out);
        free(e);
    }
    assert_int_equal(tnd_base64_decode(&out, &n, "Zm9", 3), -1);
    assert_int_equal(tnd_base64_decode(&out, &n, "Zm9*", 4), -1);
    assert_int_equal(tnd_base64_decode(&out, &n, "Z===", 4), -1);
    assert_int_equal(tnd_base64_decode(&out, &n, "Zg==Zg==", 8), -1);
    assert_null(out);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_base64),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
