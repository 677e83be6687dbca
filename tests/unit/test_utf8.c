/* Unit tests for common/utf8: valid text from any bytes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "common/utf8.h"
#include "common/xalloc.h"

#define R TND_UTF8_REPLACEMENT

typedef struct row {
    const char *in;
    size_t len; /* 0: strlen(in) */
    const char *out;
    size_t replaced;
} row;

/* Rows from RFC 3629 and Unicode's table 3-8 (maximal subparts). */
static const row rows[] = {
    {"plain ascii", 0, "plain ascii", 0},
    {"", 0, "", 0},
    {"caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80", 0,
     "caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80", 0},
    /* Latin-1: a lone byte above 0x7F */
    {"caf\xE9 ok", 0, "caf" R " ok", 1},
    /* a stray continuation byte */
    {"a\x80"
     "b",
     0, "a" R "b", 1},
    /* overlong forms: C0/C1 leads, E0 80.., F0 80.. */
    {"\xC0\xAF", 0, R R, 2},
    {"\xE0\x80\xAF", 0, R R R, 3},
    {"\xF0\x80\x80\xAF", 0, R R R R, 4},
    /* a surrogate (ED A0 80) and above U+10FFFF (F4 90 80 80) */
    {"\xED\xA0\x80", 0, R R R, 3},
    {"\xF4\x90\x80\x80", 0, R R R R, 4},
    /* F5..FF never start anything */
    {"\xF5\xFF", 0, R R, 2},
    /* a truncated sequence is one replacement (its maximal subpart) */
    {"x\xE2\x82", 0, "x" R, 2},
    {"\xF0\x9F\x98z", 0, R "z", 3},
    {"\xE2\x82\xE2\x82\xAC", 0, R "\xE2\x82\xAC", 2},
    /* a NUL byte inside the text */
    {"a\0b", 3, "a" R "b", 1},
};

static void table(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        const row *r = &rows[i];
        size_t len = r->len ? r->len : strlen(r->in), replaced = 99;
        char *out = tnd_utf8_clean(r->in, len, &replaced);
        if (strcmp(out, r->out) != 0 || replaced != r->replaced)
            fail_msg("row %zu: got \"%s\" (%zu replaced)", i, out, replaced);
        assert_true(tnd_utf8_valid(out, strlen(out)));
        assert_int_equal(tnd_utf8_valid(r->in, len), r->replaced == 0);
        free(out);
    }
}

static void valid_len_stops_at_the_first_bad_byte(void **state)
{
    (void)state;
    assert_int_equal(tnd_utf8_valid_len("abc\xC3\xA9\xFF", 6), 5);
    assert_int_equal(tnd_utf8_valid_len("abc\xC3", 4), 3);
    assert_int_equal(tnd_utf8_valid_len("abc", 3), 3);
    assert_int_equal(tnd_utf8_valid_len("", 0), 0);
}

static void clean_inplace_replaces_only_when_needed(void **state)
{
    char *s = tnd_xstrdup("fine");
    char *keep = s, *none = NULL;

    (void)state;
    assert_int_equal(tnd_utf8_clean_inplace(&s), 0);
    assert_ptr_equal(s, keep);
    free(s);
    s = tnd_xstrdup("Jos\xE9 M\xFCller");
    assert_int_equal(tnd_utf8_clean_inplace(&s), 2);
    assert_string_equal(s, "Jos" R " M" R "ller");
    free(s);
    assert_int_equal(tnd_utf8_clean_inplace(&none), 0);
    assert_int_equal(tnd_utf8_clean_inplace(NULL), 0);
}

/* Every byte string of length 1 and 2, and random longer ones: the result
 * is always valid, and a valid input comes back unchanged. */
static void any_bytes_come_out_valid(void **state)
{
    unsigned char in[64];
    uint32_t seed = 12345;

    (void)state;
    for (int a = 0; a < 256; a++)
        for (int b = 0; b < 256; b++) {
            char two[2] = {(char)a, (char)b};
            char *out = tnd_utf8_clean(two, 2, NULL);
            assert_true(tnd_utf8_valid(out, strlen(out)));
            free(out);
        }
    for (int round = 0; round < 20000; round++) {
        size_t len = (size_t)(round % 64), replaced;
        char *out;
        for (size_t i = 0; i < len; i++) {
            seed = seed * 1103515245u + 12345u;
            /* mostly high bytes, where the rules are */
            in[i] = (unsigned char)(0x70 + (seed >> 16) % 0x90);
        }
        out = tnd_utf8_clean((const char *)in, len, &replaced);
        assert_true(tnd_utf8_valid(out, strlen(out)));
        if (replaced == 0)
            assert_memory_equal(out, in, len);
        assert_true(replaced <= len);
        free(out);
    }
}

static void binary_or_text(void **state)
{
    static const unsigned char elf[] = {0x7F, 'E', 'L', 'F', 2, 1, 1, 0};
    char latin1[400], noise[200];

    (void)state;
    assert_true(tnd_utf8_is_binary((const char *)elf, sizeof(elf)));
    assert_false(tnd_utf8_is_binary("int main(void) { return 0; }\n", 29));
    assert_false(tnd_utf8_is_binary("", 0));
    /* a Latin-1 comment in a source file is still text */
    memset(latin1, 'x', sizeof(latin1));
    memcpy(latin1, "/* \xE9t\xE9 */", 9);
    assert_false(tnd_utf8_is_binary(latin1, sizeof(latin1)));
    /* coloured compiler output is text */
    assert_false(tnd_utf8_is_binary("\x1b[01;31merror:\x1b[m x\r\n\f", 22));
    /* mostly bytes that are not text: binary, NUL or not */
    for (size_t i = 0; i < sizeof(noise); i++)
        noise[i] = (char)(i % 3 ? 0x81 + i % 60 : 'a');
    assert_true(tnd_utf8_is_binary(noise, sizeof(noise)));
    assert_true(tnd_utf8_is_binary("text\0more", 9));
}

/* A cut never ends inside a sequence: it backs up to the sequence's
 * lead byte when the sequence would need bytes past the cut. */
static void cuts_keep_sequences_whole(void **state)
{
    static const char s[] = "a\xC3\xA9"         /* e acute */
                            "\xE2\x82\xAC"      /* euro */
                            "\xF0\x9F\x99\x82"; /* a smile */

    (void)state;
    assert_int_equal(tnd_utf8_whole(s, 0), 0);
    assert_int_equal(tnd_utf8_whole(s, 1), 1);
    assert_int_equal(tnd_utf8_whole(s, 2), 1); /* inside the e */
    assert_int_equal(tnd_utf8_whole(s, 3), 3);
    assert_int_equal(tnd_utf8_whole(s, 4), 3); /* inside the euro */
    assert_int_equal(tnd_utf8_whole(s, 5), 3);
    assert_int_equal(tnd_utf8_whole(s, 6), 6);
    assert_int_equal(tnd_utf8_whole(s, 9), 6); /* inside the smile */
    assert_int_equal(tnd_utf8_whole(s, 10), 10);
    /* a lone lead byte at the end goes too */
    assert_int_equal(tnd_utf8_whole("ab\xC3", 3), 2);
    /* stray continuation bytes do not pull the cut back */
    assert_int_equal(tnd_utf8_whole("\x80\x80\x80\x80", 4), 4);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(table),
        cmocka_unit_test(valid_len_stops_at_the_first_bad_byte),
        cmocka_unit_test(clean_inplace_replaces_only_when_needed),
        cmocka_unit_test(any_bytes_come_out_valid),
        cmocka_unit_test(binary_or_text),
        cmocka_unit_test(cuts_keep_sequences_whole),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
