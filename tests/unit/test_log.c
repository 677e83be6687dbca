/* Unit tests for common/log: a registered secret is redacted in every
 * form it takes in JSON, and streamed text is never cut inside one. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/xalloc.h"

#define KEY "sk-test/0123456789\"abc\\def"

static char *redacted(const char *text)
{
    return tnd_log_redact(tnd_xstrdup(text));
}

static void every_json_form_is_redacted(void **state)
{
    static const char *const forms[] = {
        "key " KEY " end",
        "{\"k\":\"sk-test\\/0123456789\\\"abc\\\\def\"}", /* '/' escaped */
        "{\"k\":\"sk-test/0123456789\\\"abc\\\\def\"}",   /* '/' as is */
    };
    char *got;

    (void)state;
    tnd_log_secret(KEY);
    for (size_t i = 0; i < 3; i++) {
        got = redacted(forms[i]);
        assert_null(strstr(got, "0123456789"));
        assert_non_null(strstr(got, "[redacted]"));
        free(got);
    }
    got = redacted("nothing secret here");
    assert_string_equal(got, "nothing secret here");
    free(got);
}

static void short_values_are_not_secrets(void **state)
{
    char *got;

    (void)state;
    tnd_log_secret("abc");
    got = redacted("abc abc");
    assert_string_equal(got, "abc abc");
    free(got);
}

/* Whether a text holds a secret, in its plain or JSON form; short
 * values are none. */
static void a_text_holding_a_secret_is_told(void **state)
{
    (void)state;
    tnd_log_secret("hold/me\"now");
    assert_true(tnd_log_holds_secret("x = \"hold/me\"now\";"));
    assert_true(tnd_log_holds_secret("{\"k\": \"hold\\/me\\\"now\"}"));
    assert_false(tnd_log_holds_secret("hold/me now"));
    tnd_log_secret("abc");
    assert_false(tnd_log_holds_secret("abc"));
    assert_false(tnd_log_holds_secret(""));
}

/* The cut keeps back what could be the start of a secret, and never
 * falls inside one. */
static void streamed_text_is_cut_outside_secrets(void **state)
{
    const char *key = "SECRET-VALUE-42";
    size_t n = strlen(key), cut;
    char text[256];

    (void)state;
    tnd_log_secret(key);
    /* no secret in it: all but the longest secret's length - 1 */
    strcpy(text, "plain text that goes out now");
    cut = tnd_log_safe_cut(text, strlen(text));
    assert_true(cut < strlen(text));
    assert_true(strlen(text) - cut < strlen(KEY) + 8);
    /* a text shorter than that waits whole */
    assert_int_equal(tnd_log_safe_cut("tiny", 4), 0);
    /* a secret across the natural cut: the cut moves past its end */
    memset(text, 'x', 40);
    strcpy(text + 40, key);
    memset(text + 40 + n, 'y', 40);
    text[80 + n] = '\0';
    for (size_t len = 41; len <= 80 + n; len++) {
        cut = tnd_log_safe_cut(text, len);
        assert_false(cut > 40 && cut < 40 + n); /* never inside */
        assert_true(cut <= len);
    }
}

/* In JSON text a secret is redacted inside string values only: a short
 * one ("1298", a local server's dummy key) in a number or a literal
 * made a journal line that no longer parsed, and the session read as
 * damaged (a review found it). Keys stay too; a long one shrinks its
 * string, and the text after it moves with it. */
static void json_text_stays_json(void **state)
{
    char *got;

    (void)state;
    tnd_log_secret("1298");
    tnd_log_secret("null");
    tnd_log_secret(KEY);
    got = tnd_log_redact_json(tnd_xstrdup(
        "{\"1298\": 1298, \"n\": null, \"a\": \"x1298y\", "
        "\"b\" : [\"null\", \"k=sk-test\\/0123456789\\\"abc\\\\def!\", 1298], "
        "\"c\": \"esc \\\" 1298\"}"));
    assert_string_equal(got, "{\"1298\": 1298, \"n\": null, \"a\": \"x****y\", "
                             "\"b\" : [\"****\", \"k=[redacted]!\", 1298], "
                             "\"c\": \"esc \\\" ****\"}");
    free(got);
    got = tnd_log_redact_json(tnd_xstrdup("[\"cut short 1298"));
    assert_string_equal(got, "[\"cut short ****");
    free(got);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_json_form_is_redacted),
        cmocka_unit_test(short_values_are_not_secrets),
        cmocka_unit_test(a_text_holding_a_secret_is_told),
        cmocka_unit_test(streamed_text_is_cut_outside_secrets),
        cmocka_unit_test(json_text_stays_json),
    };
    tnd_log_init("test", TND_LOG_ERROR);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
