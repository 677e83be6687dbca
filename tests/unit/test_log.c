/* Unit tests for common/log: a registered secret is redacted in every
 * form it takes in JSON, and text that is cut (streamed, quoted, a long
 * log line) is never cut inside one. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* A key with blanks after it (a file's newline, a shell's space) is
 * known without them too: a model echoes the key alone */
static void a_key_is_known_without_its_trailing_blanks(void **state)
{
    char *got;

    (void)state;
    tnd_log_secret("sk-TRAILINGSECRET-42 \n");
    got = redacted("say sk-TRAILINGSECRET-42.");
    assert_null(strstr(got, "TRAILINGSECRET"));
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

/* A local server's placeholder key ("EMPTY", vLLM's) hides nothing and
 * is a word of code: hidden, every file masked "EMPTY" and every change
 * holding it was refused. A real key, or a word like it with more, is
 * still one. */
static void placeholder_keys_are_not_secrets(void **state)
{
    char *got;

    (void)state;
    assert_false(tnd_log_secret_worth("EMPTY"));
    assert_false(tnd_log_secret_worth("none"));
    assert_false(tnd_log_secret_worth("Dummy"));
    assert_false(tnd_log_secret_worth("lm-studio"));
    assert_false(tnd_log_secret_worth("sk-no-key-required"));
    assert_false(tnd_log_secret_worth("abc"));
    assert_false(tnd_log_secret_worth(NULL));
    assert_true(tnd_log_secret_worth("EMPTY1"));
    assert_true(tnd_log_secret_worth("sk-proj-abcdef0123456789"));
    tnd_log_secret("EMPTY");
    assert_false(tnd_log_holds_secret("case EMPTY: return 0;"));
    got = redacted("state == EMPTY");
    assert_string_equal(got, "state == EMPTY");
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
    tnd_log_secret("true");
    tnd_log_secret(KEY);
    got = tnd_log_redact_json(tnd_xstrdup(
        "{\"1298\": 1298, \"n\": true, \"a\": \"x1298y\", "
        "\"b\" : [\"true\", \"k=sk-test\\/0123456789\\\"abc\\\\def!\", 1298], "
        "\"c\": \"esc \\\" 1298\"}"));
    assert_string_equal(got, "{\"1298\": 1298, \"n\": true, \"a\": \"x****y\", "
                             "\"b\" : [\"****\", \"k=[redacted]!\", 1298], "
                             "\"c\": \"esc \\\" ****\"}");
    free(got);
    got = tnd_log_redact_json(tnd_xstrdup("[\"cut short 1298"));
    assert_string_equal(got, "[\"cut short ****");
    free(got);
}

#define LONG_KEY "sk-long-Zq8vN3xT5bL1mR7wK2pH9cF4yD6gJ0sA"

/* A cut that falls inside a secret: redacted first, so no head of it is
 * left for a later redaction to miss (a coder's rationale, cut at 2000
 * bytes, kept the first 20 bytes of a key in the journal). */
static void a_printable_cut_never_leaves_part_of_a_secret(void **state)
{
    char text[300];
    char *got;

    (void)state;
    tnd_log_secret(LONG_KEY);
    memset(text, 'x', 90);
    snprintf(text + 90, sizeof(text) - 90, "%s and more", LONG_KEY);
    got = tnd_log_printable(text, 100);
    assert_null(strstr(got, "sk-long"));
    assert_non_null(strstr(got, "x[redacted]..."));
    free(got);
    got = tnd_log_printable("a\001b", 10); /* printable as before */
    assert_string_equal(got, "a?b");
    free(got);
}

/* A log line longer than 8 KiB is redacted whole before it is cut: a
 * secret across the cut leaves nothing on stderr. */
static void a_long_log_line_is_redacted_before_the_cut(void **state)
{
    char path[] = "/tmp/tnd-test-log-XXXXXX";
    size_t pad = 8192 - 40;
    char *msg = tnd_xmalloc(pad + sizeof(LONG_KEY) + 100), *out;
    int fd = mkstemp(path), saved = dup(STDERR_FILENO);
    FILE *f;
    long n;

    (void)state;
    assert_true(fd >= 0 && saved >= 0);
    tnd_log_secret(LONG_KEY);
    memset(msg, 'x', pad);
    snprintf(msg + pad, sizeof(LONG_KEY) + 100, "%s %0100d", LONG_KEY, 0);
    assert_int_equal(dup2(fd, STDERR_FILENO), STDERR_FILENO);
    tnd_log_error("%s", msg);
    tnd_log_error("short %s", LONG_KEY);
    assert_int_equal(dup2(saved, STDERR_FILENO), STDERR_FILENO);
    close(saved);
    f = fdopen(fd, "r");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    n = ftell(f);
    rewind(f);
    out = tnd_xmalloc((size_t)n + 1);
    assert_int_equal(fread(out, 1, (size_t)n, f), (size_t)n);
    out[n] = '\0';
    fclose(f);
    unlink(path);
    assert_null(strstr(out, "sk-long"));
    assert_non_null(strstr(out, "x[redacted] 000"));
    assert_non_null(strstr(out, "short [redacted]\n"));
    assert_true(strchr(out, '\n') - out < 8192); /* still cut at 8 KiB */
    free(out);
    free(msg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_json_form_is_redacted),
        cmocka_unit_test(short_values_are_not_secrets),
        cmocka_unit_test(a_key_is_known_without_its_trailing_blanks),
        cmocka_unit_test(placeholder_keys_are_not_secrets),
        cmocka_unit_test(a_text_holding_a_secret_is_told),
        cmocka_unit_test(streamed_text_is_cut_outside_secrets),
        cmocka_unit_test(json_text_stays_json),
        cmocka_unit_test(a_printable_cut_never_leaves_part_of_a_secret),
        cmocka_unit_test(a_long_log_line_is_redacted_before_the_cut),
    };
    tnd_log_init("test", TND_LOG_ERROR);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
