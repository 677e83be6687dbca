/* Unit tests for orchestrator/feedback: what the coder hears after a
 * failed attempt. The gate decides, then feedback explains: the reason,
 * the failing checks' output, the reviewer's issues, the history and the
 * last diff, all bounded however much the agents produced. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/log.h"
#include "common/utf8.h"
#include "orchestrator/feedback.h"

static const tnd_gate_config cfg = {
    .max_iterations = 10,
    .confidence_threshold = 0.8,
    .human_review_below = 0.7,
    .persistent_failure_threshold = 3,
};

static const char *const required[] = {"build", "test", NULL};

static const char diff_text[] = "diff --git a/src/stats.c b/src/stats.c\n"
                                "--- a/src/stats.c\n"
                                "+++ b/src/stats.c\n"
                                "@@ -8 +8 @@\n"
                                "-    return sum / n;\n"
                                "+    return sum / (n - 1);\n";

/* A reply where build passes, test fails with output, and the reviewer
 * raises a major and a minor issue. The strings are borrowed. */
typedef struct reply_store {
    tnd_skill_result skills[2];
    tnd_issue issues[2];
    tnd_critique critique;
    tnd_audit_reply reply;
} reply_store;

static tnd_audit_reply *failing_reply(reply_store *st, const char *output)
{
    memset(st, 0, sizeof(*st));
    st->skills[0] = (tnd_skill_result){
        .name = (char *)"build",
        .status = TND_SKILL_PASS,
        .command = (char *)"make",
        .output = (char *)"cc -c stats.c\n",
    };
    st->skills[1] = (tnd_skill_result){
        .name = (char *)"test",
        .status = TND_SKILL_FAIL,
        .exit_code = 1,
        .command = (char *)"make test",
        .output = (char *)output,
    };
    st->issues[0] = (tnd_issue){
        .type = TND_ISSUE_INCORRECT,
        .severity = TND_SEVERITY_MAJOR,
        .file = (char *)"src/stats.c",
        .line = 8,
        .description = (char *)"the mean divides by n - 1",
        .evidence = (char *)"test_mean: want 2, got 3",
        .suggested_fix = (char *)"divide by n",
    };
    st->issues[1] = (tnd_issue){
        .type = TND_ISSUE_STYLE,
        .severity = TND_SEVERITY_MINOR,
        .file = (char *)"src/stats.c",
        .description = (char *)"stray blank line",
    };
    st->critique = (tnd_critique){
        .verdict = TND_VERDICT_REVISE,
        .confidence = 0.9,
        .issues = st->issues,
        .nissues = 2,
        .summary = (char *)"the formula is wrong",
    };
    st->reply.skills = st->skills;
    st->reply.nskills = 2;
    st->reply.critique = &st->critique;
    return &st->reply;
}

/* Feedback for attempt, as the orchestrator builds it: gate first. */
static char *feedback_for(const tnd_gate_input *in, const char *const *history,
                          const char *diff)
{
    tnd_gate_decision d;

    tnd_gate_decide(&d, &cfg, in);
    assert_int_not_equal(d.action, TND_GATE_APPROVE);
    return tnd_feedback_build(in, &d, history, diff);
}

static void assert_has(const char *text, const char *part)
{
    if (!strstr(text, part))
        fail_msg("feedback lacks \"%s\":\n%s", part, text);
}

/* n bytes: head, then filler, then tail. Caller frees. */
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

/* ---- what feedback says ------------------------------------------------- */

static void feedback_explains_the_failure(void **state)
{
    const char *const history[] = {"attempt 1: the proposal changes nothing",
                                   NULL};
    reply_store st;
    tnd_gate_input in = {.attempt = 2,
                         .audit = failing_reply(&st, "test_mean: want 2, "
                                                     "got 3\nFAIL\n"),
                         .required = required,
                         .streak = 1};
    char *fb = feedback_for(&in, history, diff_text);

    (void)state;
    assert_has(fb, "Attempt 2 was not accepted: required skill test failed "
                   "(exit 1)\n");
    assert_has(fb, "\nChecks that failed:\n\n### test (`make test`): fail, "
                   "exit 1\n```\ntest_mean: want 2, got 3\nFAIL\n```\n");
    assert_null(strstr(fb, "### build")); /* it passed */
    assert_has(fb, "\nThe reviewer's issues:\n"
                   "- [major, incorrect] src/stats.c:8: the mean divides by "
                   "n - 1\n"
                   "  Evidence: test_mean: want 2, got 3\n"
                   "  Suggested fix: divide by n\n"
                   "- [minor, style] src/stats.c: stray blank line\n");
    assert_has(fb, "\nThe reviewer's summary: the formula is wrong\n");
    assert_has(fb, "\nEarlier attempts:\n- attempt 1: the proposal changes "
                   "nothing\n");
    assert_has(fb, "\nThe change of attempt 2 (the files are back as they "
                   "were; propose the whole change again):\n```diff\n");
    assert_has(fb, "+    return sum / (n - 1);\n```\n");
    assert_null(strstr(fb, "different approach"));
    free(fb);
}

/* With a baseline, a failing check says whether the change broke it or
 * it was broken before. */
static void failing_checks_say_what_they_were_before(void **state)
{
    reply_store st, base;
    tnd_audit_reply *before = failing_reply(&base, "FAIL before\n");
    tnd_gate_input in = {.attempt = 1,
                         .audit = failing_reply(&st, "FAIL now\n"),
                         .required = required,
                         .baseline = before};
    char *fb;

    (void)state;
    fb = feedback_for(&in, NULL, diff_text);
    assert_has(fb, "### test (`make test`): fail, exit 1: not fixed, it "
                   "failed before the change too\n```\nFAIL now\n```\n");
    free(fb);

    base.skills[1].status = TND_SKILL_PASS;
    fb = feedback_for(&in, NULL, diff_text);
    assert_has(fb, "Attempt 1 was not accepted: required skill test failed "
                   "(exit 1): a regression, it passed before the change\n");
    assert_has(fb, "### test (`make test`): fail, exit 1: a regression, it "
                   "passed before the change\n");
    free(fb);
}

/* Before attempt 1: what already fails, or nothing when all passes. */
static void the_baseline_tells_the_coder_what_fails_already(void **state)
{
    reply_store base;
    tnd_audit_reply *before = failing_reply(&base, "FAIL test_mean\n");
    char *fb = tnd_feedback_baseline(before);

    (void)state;
    assert_has(fb, "Before any change, these checks already fail on the "
                   "repository as it is:\n\n### test (`make test`): fail, "
                   "exit 1\n```\nFAIL test_mean\n```\n");
    assert_null(strstr(fb, "### build"));
    assert_null(strstr(fb, "regression"));
    free(fb);

    base.skills[1].status = TND_SKILL_PASS;
    fb = tnd_feedback_baseline(before);
    assert_string_equal(fb, "");
    free(fb);
}

static void repeated_failure_asks_for_a_different_approach(void **state)
{
    reply_store st;
    tnd_gate_input in = {.attempt = 3,
                         .audit = failing_reply(&st, "FAIL\n"),
                         .required = required,
                         .streak = 2};
    char *fb = feedback_for(&in, NULL, NULL);

    (void)state;
    assert_has(fb, "The same failure has now happened 2 times in a row. Do "
                   "not repeat the same fix: find the real cause and try a "
                   "different approach.\n");
    assert_null(strstr(fb, "Earlier attempts"));
    assert_null(strstr(fb, "```diff"));
    free(fb);

    in.streak = 1;
    fb = feedback_for(&in, NULL, NULL);
    assert_null(strstr(fb, "different approach"));
    free(fb);
}

static void long_output_keeps_its_head_and_tail(void **state)
{
    char *output = long_text("make: entering\n", 'x',
                             "\ntests/t.c:41: mean: want 2, got 3\n", 200000);
    reply_store st;
    tnd_gate_input in = {.attempt = 1,
                         .audit = failing_reply(&st, output),
                         .required = required,
                         .streak = 1};
    char *fb = feedback_for(&in, NULL, NULL);
    const char *block = strstr(fb, "```\n"), *end;

    (void)state;
    assert_non_null(block);
    end = strstr(block + 4, "```\n");
    assert_non_null(end);
    assert_true(end - block <= TND_FEEDBACK_MAX_OUTPUT + 10);
    assert_has(fb, "```\nmake: entering\nxxx");
    /* a 200 KB line is cut, so the line after it still has room */
    assert_has(fb, "xxx [... 199450 more bytes of this line left out ...]\n"
                   "tests/t.c:41: mean: want 2, got 3\n```\n");
    free(fb);
    free(output);
}

/* A build's warnings, then the tests: 20 KB of gcc's unused-parameter
 * reports (line numbers moved by shift), the failing test (when failed)
 * after 30 passing ones and before 70 more, and the summary. Caller
 * frees. */
static char *warnings_then_tests(int shift, bool failed)
{
    tnd_buf b;

    tnd_buf_init(&b, TND_BUF_NOCAP);
    tnd_buf_puts(&b, "cc -Wall -Wextra -c -o src/vec.o src/vec.c\n");
    for (int i = 0; i < 110; i++) {
        int line = 10 + 7 * i + shift;

        tnd_buf_printf(&b, "src/vec.c: In function 'vec_op%d':\n", i);
        tnd_buf_printf(&b,
                       "src/vec.c:%d:36: warning: unused parameter 'ctx' "
                       "[-Wunused-parameter]\n",
                       line);
        tnd_buf_printf(&b, "%5d | int vec_op%d(struct vec *v, void *ctx)\n",
                       line, i);
        tnd_buf_puts(&b, "      |                              ~~~~~~^~~\n");
    }
    tnd_buf_puts(&b, "./test_vec\n");
    for (int i = 0; i < 100; i++) {
        if (i == 30 && failed)
            tnd_buf_puts(&b, "[FAIL] test_vec.c:85 vec_find(fib, 5) = -1, "
                             "expected 0\n");
        tnd_buf_printf(&b, "[ ok ] test_vec.c:%d vec_push keeps order %d\n",
                       100 + i, i);
    }
    tnd_buf_printf(&b, "101 tests conducted, %d failed.\n", failed ? 1 : 0);
    return tnd_buf_detach(&b, NULL);
}

/* Issue 12: the only failing line came after 21 KB of warnings and fell
 * into the part left out; the coder never saw what failed. */
static void
a_failing_line_after_20_kb_of_warnings_reaches_the_coder(void **state)
{
    char *output = warnings_then_tests(0, true);
    reply_store st;
    tnd_gate_input in = {.attempt = 1,
                         .audit = failing_reply(&st, output),
                         .required = required,
                         .streak = 1};
    char *fb = feedback_for(&in, NULL, NULL);
    const char *block = strstr(fb, "```\n"), *end;

    (void)state;
    assert_true(strlen(output) > 24000);
    assert_non_null(block);
    end = strstr(block + 4, "```\n");
    assert_non_null(end);
    assert_true(end - block <= TND_FEEDBACK_MAX_OUTPUT + 10);
    assert_has(fb, "[FAIL] test_vec.c:85 vec_find(fib, 5) = -1, expected 0\n");
    assert_has(fb, "101 tests conducted, 1 failed.\n```\n");
    free(fb);

    /* and so does it when the tree already failed before the change */
    fb = tnd_feedback_baseline(in.audit);
    assert_has(fb, "[FAIL] test_vec.c:85 vec_find(fib, 5) = -1, expected 0\n");
    free(fb);

    free(output);
}

/* The warnings the tree printed before the change too (on lines an edit
 * moved) are counted, not shown: the room goes to what the change did. */
static void warnings_from_before_the_change_are_counted(void **state)
{
    char *output = warnings_then_tests(0, true);
    char *base_output = warnings_then_tests(3, false);
    reply_store st, base;
    tnd_gate_input in = {.attempt = 1,
                         .audit = failing_reply(&st, output),
                         .required = required,
                         .baseline = failing_reply(&base, base_output),
                         .streak = 1};
    char *fb;

    (void)state;
    base.skills[1].status = TND_SKILL_PASS;
    fb = feedback_for(&in, NULL, NULL);
    assert_has(fb, "### test (`make test`): fail, exit 1: a regression, it "
                   "passed before the change\n```\n"
                   "[... 110 compiler warnings left out: they were there "
                   "before the change too ...]\n"
                   "cc -Wall -Wextra -c -o src/vec.o src/vec.c\n"
                   "./test_vec\n");
    assert_null(strstr(fb, "warning: unused parameter"));
    assert_has(fb, "[FAIL] test_vec.c:85 vec_find(fib, 5) = -1, expected 0\n");
    assert_has(fb, "101 tests conducted, 1 failed.\n```\n");
    free(fb);
    free(output);
    free(base_output);
}

static void checks_that_did_not_run_say_why(void **state)
{
    reply_store st;
    tnd_gate_input in = {.attempt = 1, .required = required, .streak = 1};
    char *fb;

    (void)state;
    in.audit = failing_reply(&st, "");
    st.skills[1].status = TND_SKILL_TIMEOUT;
    st.skills[1].exit_code = -1;
    fb = feedback_for(&in, NULL, NULL);
    assert_has(fb, "### test (`make test`): timeout\n```\n```\n");
    free(fb);
}

static void no_audit_no_critique(void **state)
{
    reply_store st;
    tnd_gate_input in = {.attempt = 1,
                         .apply_error =
                             "edit 1: the SEARCH text was not found in a.c",
                         .required = required,
                         .streak = 1};
    char *fb = feedback_for(&in, NULL, NULL);

    (void)state;
    assert_string_equal(fb, "Attempt 1 was not accepted: the proposal could "
                            "not be applied: edit 1: the SEARCH text was not "
                            "found in a.c\n");
    free(fb);

    /* audited, but the reviewer's critique was unusable */
    in.apply_error = NULL;
    in.audit = failing_reply(&st, "FAIL\n");
    st.skills[1].status = TND_SKILL_PASS;
    st.reply.critique = NULL;
    st.reply.critique_error = (char *)"the answer was not JSON";
    fb = feedback_for(&in, NULL, NULL);
    assert_has(fb, "no valid critique: the answer was not JSON\n");
    assert_null(strstr(fb, "Checks that failed"));
    assert_null(strstr(fb, "The reviewer's issues"));
    free(fb);
}

/* ---- bounds ------------------------------------------------------------- */

static void size_stays_bounded_whatever_the_agents_say(void **state)
{
    char *huge = long_text("\xe2\x82\xac", 'y', "\xe2\x82\xac", 1 << 20);
    char *note = long_text("n", 'z', "\xc3\xa9", 16 << 10);
    char *big_diff = long_text("diff --git a/x b/x\n", '+', "\n", 8 << 20);
    tnd_skill_result skills[32];
    tnd_issue issues[200];
    tnd_critique crit = {.verdict = TND_VERDICT_REVISE,
                         .confidence = 0.5,
                         .issues = issues,
                         .nissues = 200,
                         .summary = note};
    tnd_audit_reply reply = {
        .skills = skills, .nskills = 32, .critique = &crit};
    const char *history[51];
    tnd_gate_input in = {
        .attempt = 50, .audit = &reply, .required = required, .streak = 7};
    char *fb;

    (void)state;
    for (int i = 0; i < 32; i++)
        skills[i] = (tnd_skill_result){.name = (char *)"test",
                                       .status = TND_SKILL_FAIL,
                                       .exit_code = 1,
                                       .command = note,
                                       .output = huge};
    for (int i = 0; i < 200; i++)
        issues[i] = (tnd_issue){.type = TND_ISSUE_INCORRECT,
                                .severity = TND_SEVERITY_CRITICAL,
                                .file = (char *)"a.c",
                                .description = note,
                                .evidence = note,
                                .suggested_fix = note};
    for (int i = 0; i < 50; i++)
        history[i] = note;
    history[50] = NULL;
    fb = feedback_for(&in, history, big_diff);
    assert_true(strlen(fb) <= TND_FEEDBACK_MAX_TOTAL);
    assert_has(fb, "Attempt 50 was not accepted");
    assert_has(fb, "different approach");
    assert_true(tnd_utf8_valid(fb, strlen(fb)));
    free(fb);
    free(huge);
    free(note);
    free(big_diff);
}

/* Parts cut to their caps never split a character: the text goes into
 * JSON for an LLM API, which may refuse malformed UTF-8. */
static void cut_parts_stay_valid_utf8(void **state)
{
    tnd_buf accents;
    const char *history[2];
    reply_store st;
    tnd_gate_input in = {.attempt = 2, .required = required, .streak = 1};
    char *text, *fb;

    (void)state;
    tnd_buf_init(&accents, TND_BUF_NOCAP);
    tnd_buf_puts(&accents, "x"); /* odd offset: byte 300, 600, 1000 split */
    for (int i = 0; i < 1000; i++)
        tnd_buf_puts(&accents, "\xc3\xa9");
    text = tnd_buf_detach(&accents, NULL);
    in.audit = failing_reply(&st, text);
    st.issues[0].evidence = text;
    st.issues[0].suggested_fix = text;
    st.critique.summary = text;
    history[0] = text;
    history[1] = NULL;
    fb = feedback_for(&in, history, text);
    assert_true(tnd_utf8_valid(fb, strlen(fb)));
    assert_has(fb, "Evidence: x\xc3\xa9");
    free(fb);
    free(text);
}

/* A key a model echoed, where a part is cut (evidence and fix at 600
 * bytes, the summary at 1000, a history line at 300): redacted before
 * the cut, so no head of it goes into the coder's prompt, which its
 * transcript keeps. Before, "sk-fb-0123" was left of the key. */
static void a_key_across_a_cut_leaves_no_head(void **state)
{
    static const char key[] = "sk-fb-0123456789abcdefghijklmnopqrstu";
    const char *history[2];
    reply_store st;
    tnd_gate_input in = {.attempt = 2, .required = required, .streak = 1};
    char *e = long_text("", 'e', key, 590 + sizeof(key) - 1);
    char *m = long_text("", 'm', key, 990 + sizeof(key) - 1);
    char *h = long_text("", 'h', key, 290 + sizeof(key) - 1);
    char *fb;

    (void)state;
    tnd_log_secret(key);
    in.audit = failing_reply(&st, "FAIL\n");
    st.issues[0].evidence = e;
    st.issues[0].suggested_fix = e;
    st.critique.summary = m;
    history[0] = h;
    history[1] = NULL;
    fb = feedback_for(&in, history, diff_text);
    assert_has(fb, "  Evidence: eee");
    assert_has(fb, "The reviewer's summary: mmm");
    assert_has(fb, "- hhh");
    if (strstr(fb, "sk-fb"))
        fail_msg("a head of the key is in the feedback:\n%s", fb);
    free(fb);
    free(e);
    free(m);
    free(h);
}

/* The feedback lists 20 issues, the gravest first: a quorum's merged
 * list put one member's 25 nits before another's critical issue, and the
 * coder was never shown it. */
static void the_gravest_issues_come_first(void **state)
{
    tnd_issue issues[26];
    tnd_critique crit = {.verdict = TND_VERDICT_REVISE,
                         .confidence = 0.9,
                         .issues = issues,
                         .nissues = 26,
                         .summary = (char *)"s"};
    tnd_audit_reply reply = {.critique = &crit};
    tnd_gate_input in = {.attempt = 1, .audit = &reply, .streak = 1};
    char *fb;

    (void)state;
    for (int i = 0; i < 25; i++)
        issues[i] = (tnd_issue){.type = TND_ISSUE_STYLE,
                                .severity = TND_SEVERITY_MINOR,
                                .file = (char *)"a.c",
                                .line = i + 1,
                                .description = (char *)"a nit"};
    issues[25] = (tnd_issue){.type = TND_ISSUE_SAFETY,
                             .severity = TND_SEVERITY_CRITICAL,
                             .file = (char *)"b.c",
                             .line = 7,
                             .description = (char *)"frees twice",
                             .evidence = (char *)"free(p); free(p);"};
    fb = feedback_for(&in, NULL, NULL);
    assert_has(fb, "The reviewer's issues:\n- [critical, safety] b.c:7: "
                   "frees twice\n  Evidence: free(p); free(p);\n"
                   "- [minor, style] a.c:1: a nit\n");
    assert_has(fb, "- [minor, style] a.c:19: a nit\n(6 more issues not "
                   "shown)\n");
    free(fb);
}

/* Attempt 5 shows attempt 4 in full and attempts 1-4 in a line each: it
 * is no bigger than attempt 2's but for three more history lines. */
static void growth_over_attempts_is_bounded(void **state)
{
    char *output = long_text("start\n", 'o', "\nFAIL: test_mean\n", 50000);
    char *reason =
        long_text("attempt N: required skill test failed ", 'r', ".", 2000);
    const char *history[5];
    reply_store st;
    tnd_gate_input in = {.attempt = 2,
                         .audit = failing_reply(&st, output),
                         .required = required,
                         .streak = 2};
    char *fb2, *fb5;
    size_t len2, len5;

    (void)state;
    for (int i = 0; i < 4; i++)
        history[i] = reason;
    history[4] = NULL;
    history[1] = NULL;
    fb2 = feedback_for(&in, history, diff_text);
    history[1] = reason;
    in.attempt = 5;
    fb5 = feedback_for(&in, history, diff_text);
    len2 = strlen(fb2);
    len5 = strlen(fb5);
    assert_true(len5 >= len2);
    assert_true(len5 - len2 <= 3 * (300 + 3) + 4);
    assert_true(len5 < TND_FEEDBACK_MAX_TOTAL);
    free(fb2);
    free(fb5);
    free(output);
    free(reason);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(feedback_explains_the_failure),
        cmocka_unit_test(failing_checks_say_what_they_were_before),
        cmocka_unit_test(the_baseline_tells_the_coder_what_fails_already),
        cmocka_unit_test(repeated_failure_asks_for_a_different_approach),
        cmocka_unit_test(long_output_keeps_its_head_and_tail),
        cmocka_unit_test(
            a_failing_line_after_20_kb_of_warnings_reaches_the_coder),
        cmocka_unit_test(warnings_from_before_the_change_are_counted),
        cmocka_unit_test(checks_that_did_not_run_say_why),
        cmocka_unit_test(no_audit_no_critique),
        cmocka_unit_test(size_stays_bounded_whatever_the_agents_say),
        cmocka_unit_test(cut_parts_stay_valid_utf8),
        cmocka_unit_test(growth_over_attempts_is_bounded),
        cmocka_unit_test(a_key_across_a_cut_leaves_no_head),
        cmocka_unit_test(the_gravest_issues_come_first),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
