/* Unit tests for orchestrator/escalate: an answer's kind by name, as the
 * journal and the commands write it, and the choice asked on a terminal. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "orchestrator/escalate.h"

static void answer_kinds_both_ways(void **state)
{
    static const struct {
        tnd_answer_kind kind;
        const char *name;
    } rows[] = {
        {TND_ANSWER_APPROVE, "approve"}, {TND_ANSWER_REJECT, "reject"},
        {TND_ANSWER_GUIDE, "guide"},     {TND_ANSWER_BUDGET, "budget"},
        {TND_ANSWER_SKIP, "skip"},       {TND_ANSWER_STOP, "stop"},
    };
    tnd_answer_kind got = 0;

    (void)state;
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        assert_string_equal(tnd_answer_name(rows[i].kind), rows[i].name);
        assert_int_equal(tnd_answer_kind_parse(&got, rows[i].name), 0);
        assert_int_equal(got, rows[i].kind);
    }
    assert_string_equal(tnd_answer_name(0), "?");
    assert_int_equal(tnd_answer_kind_parse(&got, "maybe"), -1);
    assert_string_equal(tnd_error_last(),
                        "unknown answer 'maybe' (known: approve, reject, "
                        "guide, budget, skip, stop)");
    assert_int_equal(tnd_answer_kind_parse(&got, "?"), -1);
    assert_int_equal(got, TND_ANSWER_STOP); /* left as it was */
}

/* The choice typed on a terminal, with the text it asks for. */
static void a_choice_is_read_from_the_terminal(void **state)
{
    static const struct {
        const char *typed;
        tnd_answer_kind kind;
        const char *text;
        int iterations;
    } rows[] = {
        {"a\n", TND_ANSWER_APPROVE, NULL, 0},
        {"r\nnot this way\n", TND_ANSWER_REJECT, "not this way", 0},
        {"g\nuse the cache\n", TND_ANSWER_GUIDE, "use the cache", 0},
        {"b\n3\n", TND_ANSWER_BUDGET, NULL, 3},
        /* out of range or not a number: asked again, range named */
        {"b\n99\n2\n", TND_ANSWER_BUDGET, NULL, 2},
        {"b\n0\n99999\nthree\n\n4\n", TND_ANSWER_BUDGET, NULL, 4},
        {"b\n0\n", TND_ANSWER_STOP, NULL, 0}, /* then end of input */
        {"x\ns\n", TND_ANSWER_SKIP, NULL, 0},
        {"q\n", TND_ANSWER_STOP, NULL, 0},
        {"r\n", TND_ANSWER_STOP, NULL, 0}, /* no reason: end of input */
        {"", TND_ANSWER_STOP, NULL, 0},
        /* a word is its letter only when it is the choice's own word:
         * "abort" approved, "sure" skipped */
        {"approve\n", TND_ANSWER_APPROVE, NULL, 0},
        {"abort\nsure\nstop\n", TND_ANSWER_STOP, NULL, 0},
        {"again\nskip\n", TND_ANSWER_SKIP, NULL, 0},
        {"retry\nreject\nno\n", TND_ANSWER_REJECT, "no", 0},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        FILE *in = fmemopen((void *)rows[i].typed, strlen(rows[i].typed), "r");
        FILE *out = fopen("/dev/null", "w");
        tnd_answer ans;
        assert_non_null(out);
        if (!in) /* fmemopen refuses an empty buffer on some libcs */
            in = fopen("/dev/null", "r");
        assert_int_equal(
            tnd_escalate_ask(&ans, in, out, false, NULL, NULL, NULL), 0);
        if (ans.kind != rows[i].kind)
            fail_msg("row %zu: %s, not %s", i, tnd_answer_name(ans.kind),
                     tnd_answer_name(rows[i].kind));
        if (rows[i].text)
            assert_string_equal(ans.text, rows[i].text);
        else
            assert_null(ans.text);
        assert_int_equal(ans.iterations, rows[i].iterations);
        tnd_answer_clear(&ans);
        fclose(in);
        fclose(out);
    }
}

/* A review has no coder: guide, budget and skip are not offered, and
 * are asked again rather than taken for a reject. */
static void a_review_is_offered_approve_reject_stop(void **state)
{
    const char *typed = "s\ng\nb\nr\nlooks wrong\n";
    FILE *in = fmemopen((void *)typed, strlen(typed), "r");
    FILE *out = tmpfile();
    char said[2048] = "";
    size_t n;
    tnd_answer ans;

    (void)state;
    assert_non_null(in);
    assert_non_null(out);
    assert_int_equal(tnd_escalate_ask(&ans, in, out, true, NULL, NULL, NULL),
                     0);
    assert_int_equal(ans.kind, TND_ANSWER_REJECT);
    assert_string_equal(ans.text, "looks wrong");
    rewind(out);
    n = fread(said, 1, sizeof(said) - 1, out);
    said[n] = '\0';
    assert_non_null(strstr(said, "choice [a/r/q]> "));
    assert_null(strstr(said, "guidance"));
    assert_non_null(strstr(said, "a, r or q (or the word), please"));
    tnd_answer_clear(&ans);
    fclose(in);
    fclose(out);
}

/* A number out of range is asked again, naming the range each time;
 * it is neither taken nor the end of the question. */
static void an_out_of_range_budget_is_asked_again(void **state)
{
    const char *typed = "b\n0\n99999\n7\n";
    FILE *in = fmemopen((void *)typed, strlen(typed), "r");
    FILE *out = tmpfile();
    char said[2048] = "", *p;
    size_t n, asked = 0;
    tnd_answer ans;

    (void)state;
    assert_non_null(in);
    assert_non_null(out);
    assert_int_equal(tnd_escalate_ask(&ans, in, out, false, NULL, NULL, NULL),
                     0);
    assert_int_equal(ans.kind, TND_ANSWER_BUDGET);
    assert_int_equal(ans.iterations, 7);
    rewind(out);
    n = fread(said, 1, sizeof(said) - 1, out);
    said[n] = '\0';
    for (p = said; (p = strstr(p, "more attempts (1..50)> ")); p++)
        asked++;
    assert_int_equal(asked, 3);
    assert_non_null(strstr(said, "a number from 1 to 50"));
    /* the choice itself was asked once: the number is asked again, not
     * the whole question */
    p = strstr(said, "choice [");
    assert_non_null(p);
    assert_null(strstr(p + 1, "choice ["));
    tnd_answer_clear(&ans);
    fclose(in);
    fclose(out);
}

/* What the person typed, and what they were told, for one question. */
static tnd_answer_kind ask(const char *typed, size_t typed_len, bool review,
                           const char *diff, char **said, char **text)
{
    FILE *in = fmemopen((void *)typed, typed_len, "r");
    FILE *out = tmpfile();
    tnd_answer ans;
    tnd_answer_kind kind;
    long n;

    assert_non_null(in);
    assert_non_null(out);
    assert_int_equal(tnd_escalate_ask(&ans, in, out, review, diff, NULL, NULL),
                     0);
    n = ftell(out);
    *said = calloc(1, (size_t)n + 1);
    rewind(out);
    assert_int_equal(fread(*said, 1, (size_t)n, out), (size_t)n);
    *text = ans.text ? strdup(ans.text) : NULL;
    kind = ans.kind;
    tnd_answer_clear(&ans);
    fclose(in);
    fclose(out);
    return kind;
}

/* A diff the escalation cut in the middle is offered whole ("d"), its
 * escapes made harmless, and the question is asked again after it. */
static void the_whole_diff_is_shown_on_request(void **state)
{
    const char *diff = "diff --git a/x b/x\n+\x1b]0;owned\x07line\n";
    char *said, *text;

    (void)state;
    assert_int_equal(ask("d\na\n", 4, false, diff, &said, &text),
                     TND_ANSWER_APPROVE);
    assert_non_null(strstr(said, "  d  show the whole diff\n"));
    assert_non_null(strstr(said, "choice [a/r/g/b/s/q/d]> diff --git a/x b/x\n"
                                 "+?]0;owned?line\nchoice ["));
    assert_null(strchr(said, '\x1b'));
    free(said);
    /* a review too; and no "d" when the person saw all of it */
    assert_int_equal(ask("diff\nq\n", 7, true, diff, &said, &text),
                     TND_ANSWER_STOP);
    assert_non_null(strstr(said, "choice [a/r/q/d]> diff --git"));
    free(said);
    assert_int_equal(ask("d\nq\n", 4, false, NULL, &said, &text),
                     TND_ANSWER_STOP);
    assert_null(strstr(said, "whole diff"));
    assert_non_null(strstr(said, "a, r, g, b, s or q (or the word), please"));
    free(said);
}

/* Guidance longer than an answer holds is said to be cut, and kept only
 * when the person says so (it reached the coder cut without a word). */
static void guidance_too_long_is_said_and_asked(void **state)
{
    size_t big = (64 << 10) + 100, n = 0;
    char *typed = malloc(big + 64), *said, *text;

    (void)state;
    n += (size_t)sprintf(typed, "g\n");
    memset(typed + n, 'x', big);
    n += big;
    n += (size_t)sprintf(typed + n, "\nmaybe\nn\nshort\n");
    assert_int_equal(ask(typed, n, false, NULL, &said, &text),
                     TND_ANSWER_GUIDE);
    assert_non_null(strstr(said, "longer than 64 KiB"));
    assert_non_null(strstr(said, "use it cut as it is? [y/n]> use it cut"));
    assert_string_equal(text, "short");
    free(said);
    free(text);
    /* yes: the first 64 KiB of it */
    n = (size_t)sprintf(typed, "g\n");
    memset(typed + n, 'x', big);
    n += big;
    n += (size_t)sprintf(typed + n, "\ny\n");
    assert_int_equal(ask(typed, n, false, NULL, &said, &text),
                     TND_ANSWER_GUIDE);
    assert_int_equal(strlen(text), 64 << 10);
    free(said);
    free(text);
    free(typed);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(answer_kinds_both_ways),
        cmocka_unit_test(the_whole_diff_is_shown_on_request),
        cmocka_unit_test(guidance_too_long_is_said_and_asked),
        cmocka_unit_test(a_choice_is_read_from_the_terminal),
        cmocka_unit_test(an_out_of_range_budget_is_asked_again),
        cmocka_unit_test(a_review_is_offered_approve_reject_stop),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
