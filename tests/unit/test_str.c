/* Unit tests for common/str: small string helpers. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/str.h"
#include "common/utf8.h"

static char *long_text(const char *head, char filler, const char *tail,
                       size_t n)
{
    char *s = malloc(n + 1);
    size_t hl = strlen(head), tl = strlen(tail);

    assert_true(n >= hl + tl);
    memcpy(s, head, hl);
    memset(s + hl, filler, n - hl - tl);
    memcpy(s + n - tl, tail, tl + 1);
    return s;
}

static void small_helpers(void **state)
{
    char text[] = "  padded\t\n";

    (void)state;
    assert_true(tnd_str_starts_with("prefix-rest", "prefix"));
    assert_false(tnd_str_starts_with("pre", "prefix"));
    assert_true(tnd_str_ends_with("file.c", ".c"));
    assert_false(tnd_str_ends_with("c", "file.c"));
    assert_true(tnd_str_eq(NULL, NULL));
    assert_false(tnd_str_eq("a", NULL));
    assert_string_equal(tnd_str_trim(text), "padded");
    assert_int_equal(tnd_str_count_lines("a\nb", 3), 2);
    assert_int_equal(tnd_str_count_lines("a\nb\n", 4), 2);
    assert_int_equal(tnd_str_count_lines("", 0), 0);
}

/* ---- cut_middle
 * --------------------------------------------------------------- */

static void split_words_splits_at_blanks(void **state)
{
    static const char *const want[] = {"make", "-j2", "CFLAGS=-O2", NULL};
    char **w = tnd_str_split_words("  make\t-j2  CFLAGS=-O2 ");

    (void)state;
    for (size_t i = 0; i < 4; i++)
        if (want[i])
            assert_string_equal(w[i], want[i]);
        else
            assert_null(w[i]);
    tnd_str_list_free(&w);
    w = tnd_str_split_words(" \t ");
    assert_null(w[0]);
    tnd_str_list_free(&w);
    w = tnd_str_split_words("a b c d e"); /* as many words as can fit */
    assert_string_equal(w[4], "e");
    assert_null(w[5]);
    tnd_str_list_free(&w);
}

static void cut_middle_keeps_short_text_as_is(void **state)
{
    char *t;

    (void)state;
    t = tnd_str_cut_middle("", 10);
    assert_string_equal(t, "");
    free(t);
    t = tnd_str_cut_middle("0123456789", 10);
    assert_string_equal(t, "0123456789");
    free(t);
}

static void cut_middle_keeps_head_and_more_tail_within_max(void **state)
{
    char *text = long_text("HEAD", '.', "TAIL", 10000);
    char *t = tnd_str_cut_middle(text, 1000);
    const char *marker = strstr(t, "\n[... ");
    size_t left_out = 0, len = strlen(t);
    const char *after;

    (void)state;
    assert_true(len <= 1000);
    assert_memory_equal(t, "HEAD", 4);
    assert_string_equal(t + len - 4, "TAIL");
    assert_non_null(marker);
    assert_int_equal(
        sscanf(marker, "\n[... %zu bytes left out ...]\n", &left_out), 1);
    after = strstr(marker, "...]\n") + 5;
    /* what is shown plus what is said to be left out is the whole */
    assert_int_equal((size_t)(marker - t) + strlen(after) + left_out, 10000);
    /* failures are reported at the end: the tail gets more room */
    assert_true(strlen(after) > (size_t)(marker - t));
    free(t);
    free(text);
}

static void cut_middle_keeps_utf8_sequences_whole(void **state)
{
    const char *chars[] = {"\xc3\xa9", "\xe2\x82\xac", "\xf0\x9f\x98\x80"};
    tnd_buf b;
    char *text;

    (void)state;
    tnd_buf_init(&b, TND_BUF_NOCAP);
    for (int i = 0; i < 300; i++)
        tnd_buf_puts(&b, chars[i % 3]);
    text = tnd_buf_detach(&b, NULL);
    for (size_t max = 60; max < 200; max++) {
        char *t = tnd_str_cut_middle(text, max);
        if (!tnd_utf8_valid(t, strlen(t)))
            fail_msg("a cut to %zu splits a character: %s", max, t);
        assert_true(strlen(t) <= max);
        free(t);
    }
    free(text);
}

/* The one way a NULL-terminated list of strings is freed. */
static void lists_are_freed_and_forgotten(void **state)
{
    char **list = calloc(3, sizeof(char *)), **none = NULL;

    (void)state;
    list[0] = strdup("a");
    list[1] = strdup("b");
    tnd_str_list_free(&list); /* leak-checked under make memcheck */
    assert_null(list);
    tnd_str_list_free(&list);
    tnd_str_list_free(&none);
    assert_null(none);
}

static void secrets_are_freed(void **state)
{
    char *key = strdup("Authorization: Bearer sk-1234"), *none = NULL;

    (void)state;
    tnd_str_free_secret(&key); /* leak-checked under make memcheck */
    assert_null(key);
    tnd_str_free_secret(&none);
}

static void lists_are_searched(void **state)
{
    static const char *const list[] = {"run", "review", NULL};

    (void)state;
    assert_true(tnd_str_list_has(list, "run"));
    assert_true(tnd_str_list_has(list, "review"));
    assert_false(tnd_str_list_has(list, "re"));
    assert_false(tnd_str_list_has(NULL, "run"));
}

/* Outside text inside a message: printable, cut; on one line too. */
static void printable_and_one_line_copies(void **state)
{
    char *s;

    (void)state;
    s = tnd_str_printable("a\tb\nc\033d\x7f", 100);
    assert_string_equal(s, "a\tb\nc?d?");
    free(s);
    s = tnd_str_one_line("a\tb\nc\033d\x7f", 100);
    assert_string_equal(s, "a?b?c?d?");
    free(s);
    s = tnd_str_one_line("line one\nline two", 6);
    assert_string_equal(s, "line o...");
    free(s);
    /* C1 controls (U+009B is CSI to xterm) and stray bytes (0x9B is CSI
     * in an 8-bit locale) are no escapes either; other letters stay */
    s = tnd_str_printable("a\xc2\x9b"
                          "31mb\x9b"
                          "1mc \xc3\xbc\xc2\xa0",
                          100);
    assert_string_equal(s, "a??31mb\xef\xbf\xbd"
                           "1mc \xc3\xbc\xc2\xa0");
    free(s);
    /* all of a text with stray bytes, asked for whole, is all there */
    {
        const char *latin1 = "caf\xe9 na\xefve\n+system(\"x\");\n";
        s = tnd_str_printable(latin1, strlen(latin1) + 1);
        assert_string_equal(s, "caf\xef\xbf\xbd na\xef\xbf\xbdve\n"
                               "+system(\"x\");\n");
        free(s);
    }
}

/* git's C quoting of names undone; what is not git's left alone. */
static void git_names_are_unquoted(void **state)
{
    static const struct {
        const char *in, *out;
    } cases[] = {
        {"plain.c", "plain.c"},
        {"\"a/\\303\\274.txt\"", "a/\xc3\xbc.txt"},
        {"\"say \\\"hi\\\"\"", "say \"hi\""},
        {"\"back\\\\slash\\ttab\"", "back\\slash\ttab"},
        {"\"nul\\000x\"", "\"nul\\000x\""}, /* no NUL made */
        {"\"bad\\q\"", "\"bad\\q\""},
        {"\"", "\""},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
        char *got = tnd_str_git_unquote(cases[i].in, strlen(cases[i].in));
        assert_string_equal(got, cases[i].out);
        free(got);
    }
}

/* A path in a command a person copies is one word for the shell:
 * "tandem resume --repo /my project ID" ran with two. */
static void a_shell_word_is_one_word(void **state)
{
    static const char *const cases[][2] = {
        {"/tmp/demo", "/tmp/demo"}, {"/tmp/my project", "'/tmp/my project'"},
        {"it's", "'it'\\''s'"},     {"", "''"},
        {"$HOME;rm", "'$HOME;rm'"},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
        char *w = tnd_str_shell_word(cases[i][0]);
        assert_string_equal(w, cases[i][1]);
        free(w);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(small_helpers),
        cmocka_unit_test(split_words_splits_at_blanks),
        cmocka_unit_test(cut_middle_keeps_short_text_as_is),
        cmocka_unit_test(cut_middle_keeps_head_and_more_tail_within_max),
        cmocka_unit_test(cut_middle_keeps_utf8_sequences_whole),
        cmocka_unit_test(lists_are_freed_and_forgotten),
        cmocka_unit_test(lists_are_searched),
        cmocka_unit_test(secrets_are_freed),
        cmocka_unit_test(printable_and_one_line_copies),
        cmocka_unit_test(git_names_are_unquoted),
        cmocka_unit_test(a_shell_word_is_one_word),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
