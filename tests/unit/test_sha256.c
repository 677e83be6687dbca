/* Unit tests for common/sha256: the FIPS 180-4 / NIST example vectors. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/sha256.h"

static void hex_is(const char *data, size_t len, const char *want)
{
    char hex[TND_SHA256_HEX + 1];

    tnd_sha256_hex(hex, data, len);
    assert_string_equal(hex, want);
}

static void test_vectors(void **state)
{
    (void)state;
    hex_is("", 0,
           "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    hex_is("abc", 3,
           "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    hex_is("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", 56,
           "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

/* A million 'a', fed in uneven pieces so the block buffer is crossed
 * at every offset. */
static void test_million(void **state)
{
    char chunk[997];
    char hex[TND_SHA256_HEX + 1];
    tnd_sha256 s;
    size_t left = 1000000;

    (void)state;
    memset(chunk, 'a', sizeof(chunk));
    tnd_sha256_init(&s);
    for (size_t step = 1; left > 0; step = step % 900 + 13) {
        size_t n = step < left ? step : left;
        tnd_sha256_update(&s, chunk, n);
        left -= n;
    }
    tnd_sha256_final_hex(hex, &s);
    assert_string_equal(
        hex,
        "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
    /* the same all at once */
    {
        char *a = malloc(1000000);
        memset(a, 'a', 1000000);
        hex_is(a, 1000000,
               "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112"
               "cd0");
        free(a);
    }
}

static void test_is_hex(void **state)
{
    (void)state;
    assert_true(tnd_sha256_is_hex(
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"));
    assert_false(tnd_sha256_is_hex(
        "E3B0C44298FC1C149AFBF4C8996FB92427AE41E4649B934CA495991B7852B855"));
    assert_false(tnd_sha256_is_hex("e3b0"));
    assert_false(tnd_sha256_is_hex("../etc/passwd"));
    assert_false(tnd_sha256_is_hex(""));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_vectors),
        cmocka_unit_test(test_million),
        cmocka_unit_test(test_is_hex),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
