/* Unit tests for orchestrator/report: report.json and the summary line. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "orchestrator/report.h"
#include "proto/audit.h"
#include "proto/client.h"
#include "proto/json.h"

#define S(lit) ((char[]){lit})

static tnd_usage usage(long calls, long prompt, long completion)
{
    tnd_usage u;

    memset(&u, 0, sizeof(u));
    u.calls = calls;
    u.prompt_tokens = prompt;
    u.completion_tokens = completion;
    return u;
}

static void summary_reads_like_a_sentence(void **state)
{
    tnd_report *r = tnd_report_new("S", "fix it", "/repo", NULL, 0);
    tnd_usage c = usage(2, 2240, 172), v = usage(2, 1090, 335);
    char *line;

    (void)state;
    tnd_report_usage(r, TND_ROLE_CODER, &c);
    tnd_report_usage(r, TND_ROLE_REVIEWER, &v);
    tnd_report_outcome(r, "approved", "ok", 2, "f.diff", "a2.diff", 412);
    line = tnd_report_summary(r);
    assert_string_equal(line, "approved after 2 iterations · 4 LLM calls · "
                              "3,837 tokens (3,330 prompt + 507 completion) "
                              "· 0.4s");
    free(line);

    /* one of each, estimated */
    c = usage(1, 10, 5);
    c.estimated = true;
    tnd_report_destroy(&r);
    r = tnd_report_new("S", "t", "/repo", NULL, 0);
    tnd_report_usage(r, TND_ROLE_CODER, &c);
    tnd_report_outcome(r, "failed", "boom", 1, NULL, NULL, 1500);
    line = tnd_report_summary(r);
    assert_string_equal(line, "failed after 1 iteration · 1 LLM call · 15 "
                              "tokens (10 prompt + 5 completion, estimated) "
                              "· 1.5s");
    free(line);
    tnd_report_destroy(&r);
    tnd_report_destroy(&r);
}

static void json_has_the_promised_fields(void **state)
{
    tnd_report *r = tnd_report_new("20261122-x", "make it pass", "/repo",
                                   "/repo/agents.yaml", 0);
    tnd_usage c = usage(1, 100, 10);
    tnd_gate_input in;
    tnd_gate_decision d;
    json_object *o = NULL, *tokens, *attempts, *a0, *coder;
    char *text;

    (void)state;
    memset(&in, 0, sizeof(in));
    memset(&d, 0, sizeof(d));
    in.attempt = 1;
    in.apply_error = "edit 1: not found";
    d.action = TND_GATE_REVISE;
    strcpy(d.reason, "the proposal could not be applied");
    tnd_report_usage(r, TND_ROLE_CODER, &c);
    tnd_report_attempt(r, 1, NULL, &in, &d, ".tandem/sessions/x/attempt-1.diff",
                       0xabcULL);
    tnd_report_outcome(r, "escalated", "max iterations", 1, NULL,
                       ".tandem/sessions/x/attempt-1.diff", 10);
    text = tnd_report_json(r);
    assert_int_equal(tnd_json_parse(&o, text, strlen(text)), 0);
    assert_string_equal(
        json_object_get_string(json_object_object_get(o, "session")),
        "20261122-x");
    assert_string_equal(
        json_object_get_string(json_object_object_get(o, "status")),
        "escalated");
    assert_int_equal(
        json_object_get_int(json_object_object_get(o, "iterations")), 1);
    assert_int_equal(
        json_object_get_int(json_object_object_get(o, "llm_calls")), 1);
    tokens = json_object_object_get(o, "tokens");
    assert_int_equal(
        json_object_get_int(json_object_object_get(tokens, "prompt")), 100);
    assert_int_equal(
        json_object_get_int(json_object_object_get(tokens, "completion")), 10);
    /* by_role keeps report.json's names (README), not the protocol's */
    coder =
        json_object_object_get(json_object_object_get(o, "by_role"), "coder");
    assert_int_equal(
        json_object_get_int(json_object_object_get(coder, "llm_calls")), 1);
    assert_int_equal(
        json_object_get_int(json_object_object_get(coder, "prompt")), 100);
    assert_int_equal(
        json_object_get_int(json_object_object_get(coder, "completion")), 10);
    assert_non_null(json_object_object_get(coder, "estimated"));
    assert_non_null(json_object_object_get(coder, "latency_ms"));
    assert_non_null(json_object_object_get(coder, "retries"));
    assert_null(json_object_object_get(coder, "prompt_tokens"));
    assert_true(json_object_is_type(json_object_object_get(o, "final_diff"),
                                    json_type_null));
    attempts = json_object_object_get(o, "attempts");
    assert_int_equal(json_object_array_length(attempts), 1);
    a0 = json_object_array_get_idx(attempts, 0);
    assert_string_equal(
        json_object_get_string(json_object_object_get(a0, "decision")),
        "revise");
    assert_string_equal(
        json_object_get_string(json_object_object_get(a0, "failure_signature")),
        "0000000000000abc");
    json_object_put(o);
    free(text);
    tnd_report_destroy(&r);
}

/* With a baseline, each skill says how it did before and whether its
 * failure is a regression; the report keeps the baseline and what the
 * workspace held. */
static void baseline_and_workspace_are_reported(void **state)
{
    tnd_report *r = tnd_report_new("s", "t", "/repo", NULL, 0);
    tnd_skill_result before[2] = {
        {.name = (char *)"build", .status = TND_SKILL_PASS},
        {.name = (char *)"test", .status = TND_SKILL_FAIL, .exit_code = 2}};
    tnd_skill_result now[2] = {
        {.name = (char *)"build", .status = TND_SKILL_FAIL, .exit_code = 2},
        {.name = (char *)"test", .status = TND_SKILL_FAIL, .exit_code = 2}};
    tnd_audit_reply base = {.skills = before, .nskills = 2};
    tnd_audit_reply audit = {.skills = now, .nskills = 2};
    tnd_gate_input in = {.attempt = 1, .audit = &audit, .baseline = &base};
    tnd_gate_decision d = {.action = TND_GATE_REVISE};
    json_object *o = NULL, *w, *skills, *s0, *s1, *b;
    char *text;

    (void)state;
    w = json_object_new_object();
    json_object_object_add(w, "incremental", json_object_new_boolean(true));
    tnd_report_workspace(r, w);
    tnd_report_baseline(r, &base, "20260101-000000-abcd");
    tnd_report_attempt(r, 1, NULL, &in, &d, NULL, 0);
    text = tnd_report_json(r);
    assert_int_equal(tnd_json_parse(&o, text, strlen(text)), 0);
    assert_true(json_object_get_boolean(json_object_object_get(
        json_object_object_get(o, "workspace"), "incremental")));
    /* whose baseline it is, when another session of a server ran it */
    assert_string_equal(
        json_object_get_string(json_object_object_get(
            json_object_object_get(o, "baseline"), "reused_from")),
        "20260101-000000-abcd");
    b = json_object_object_get(json_object_object_get(o, "baseline"), "skills");
    assert_int_equal(json_object_array_length(b), 2);
    assert_string_equal(json_object_get_string(json_object_object_get(
                            json_object_array_get_idx(b, 1), "status")),
                        "fail");
    skills = json_object_object_get(
        json_object_array_get_idx(json_object_object_get(o, "attempts"), 0),
        "skills");
    s0 = json_object_array_get_idx(skills, 0);
    s1 = json_object_array_get_idx(skills, 1);
    assert_null(json_object_object_get(s0, "output")); /* the journal's */
    assert_string_equal(
        json_object_get_string(json_object_object_get(s0, "before")), "pass");
    assert_true(
        json_object_get_boolean(json_object_object_get(s0, "regression")));
    assert_string_equal(
        json_object_get_string(json_object_object_get(s1, "before")), "fail");
    assert_false(
        json_object_get_boolean(json_object_object_get(s1, "regression")));
    json_object_put(o);
    free(text);
    tnd_report_destroy(&r);
}

/* Skills that ran with sandbox: none, in the baseline or any attempt,
 * are named once each in report.json and on a second summary line; with
 * none of them, the list is empty and the summary one line. */
static void unsandboxed_skills_are_reported(void **state)
{
    tnd_report *r = tnd_report_new("s", "t", "/repo", NULL, 0);
    tnd_skill_result before[2] = {{.name = (char *)"build",
                                   .status = TND_SKILL_PASS,
                                   .sandbox = TND_ISOLATION_BWRAP},
                                  {.name = (char *)"lint",
                                   .status = TND_SKILL_PASS,
                                   .sandbox = TND_ISOLATION_NONE}};
    tnd_skill_result now[3] = {
        {.name = (char *)"build",
         .status = TND_SKILL_FAIL,
         .sandbox = TND_ISOLATION_BWRAP,
         .ended = (char *)"killed: over the 512-process limit"},
        {.name = (char *)"lint",
         .status = TND_SKILL_PASS,
         .sandbox = TND_ISOLATION_NONE},
        {.name = (char *)"deploy",
         .status = TND_SKILL_PASS,
         .sandbox = TND_ISOLATION_NONE}};
    tnd_audit_reply base = {.skills = before, .nskills = 2};
    tnd_audit_reply audit = {.skills = now, .nskills = 3};
    tnd_gate_input in = {.attempt = 1, .audit = &audit, .baseline = &base};
    tnd_gate_decision d = {.action = TND_GATE_REVISE};
    json_object *o = NULL, *list, *s0;
    char *text, *line;

    (void)state;
    text = tnd_report_json(r);
    assert_int_equal(tnd_json_parse(&o, text, strlen(text)), 0);
    assert_int_equal(json_object_array_length(
                         json_object_object_get(o, "unsandboxed_skills")),
                     0);
    json_object_put(o);
    free(text);

    tnd_report_baseline(r, &base, NULL);
    tnd_report_attempt(r, 1, NULL, &in, &d, NULL, 0);
    tnd_report_attempt(r, 2, NULL, &in, &d, NULL, 0);
    tnd_report_outcome(r, "approved", "ok", 2, NULL, NULL, 100);
    text = tnd_report_json(r);
    assert_int_equal(tnd_json_parse(&o, text, strlen(text)), 0);
    list = json_object_object_get(o, "unsandboxed_skills");
    assert_int_equal(json_object_array_length(list), 2);
    assert_string_equal(
        json_object_get_string(json_object_array_get_idx(list, 0)), "lint");
    assert_string_equal(
        json_object_get_string(json_object_array_get_idx(list, 1)), "deploy");
    s0 = json_object_array_get_idx(
        json_object_object_get(
            json_object_array_get_idx(json_object_object_get(o, "attempts"), 0),
            "skills"),
        0);
    assert_string_equal(
        json_object_get_string(json_object_object_get(s0, "sandbox")), "bwrap");
    assert_string_equal(
        json_object_get_string(json_object_object_get(s0, "ended")),
        "killed: over the 512-process limit");
    json_object_put(o);
    free(text);
    line = tnd_report_summary(r);
    assert_string_equal(line,
                        "approved after 2 iterations · 0 LLM calls · 0 tokens "
                        "(0 prompt + 0 completion) · 0.1s\n"
                        "unsandboxed: skills lint, deploy ran with sandbox: "
                        "none, with the host's files, processes and network");
    free(line);
    tnd_report_destroy(&r);
}

/* Calls paid for with no reply to say what they cost (a request out when
 * tandem died, one lost with its agent): in llm_calls, overall and for
 * their role, and counted apart, with no tokens made up for them. */
static void unanswered_calls_are_counted_without_tokens(void **state)
{
    tnd_report *r = tnd_report_new("S", "fix it", "/repo", NULL, 0);
    tnd_usage c = usage(2, 2240, 172), v = usage(2, 1090, 335);
    json_object *o = NULL, *role;
    char *text, *line;

    (void)state;
    tnd_report_usage(r, TND_ROLE_CODER, &c);
    tnd_report_usage(r, TND_ROLE_REVIEWER, &v);
    text = tnd_report_json(r);
    assert_int_equal(tnd_json_parse(&o, text, strlen(text)), 0);
    assert_int_equal(tnd_json_int_or(o, "calls_unanswered", -1), 0);
    json_object_put(o);
    free(text);

    tnd_report_unanswered(r, TND_ROLE_REVIEWER, 1);
    tnd_report_unanswered(r, TND_ROLE_REVIEWER, 0);
    assert_int_equal(tnd_report_total(r).calls, 5);
    assert_int_equal(tnd_report_role(r, TND_ROLE_REVIEWER)->calls, 3);
    assert_int_equal(tnd_report_role(r, TND_ROLE_REVIEWER)->prompt_tokens,
                     1090);
    tnd_report_outcome(r, "approved", "ok", 2, "f.diff", "a2.diff", 412);
    text = tnd_report_json(r);
    assert_int_equal(tnd_json_parse(&o, text, strlen(text)), 0);
    assert_int_equal(tnd_json_int_or(o, "llm_calls", 0), 5);
    assert_int_equal(tnd_json_int_or(o, "calls_unanswered", 0), 1);
    assert_int_equal(tnd_json_int_or(tnd_json_field(o, "tokens"), "prompt", 0),
                     3330);
    role = tnd_json_field(tnd_json_field(o, "by_role"), "reviewer");
    assert_int_equal(tnd_json_int_or(role, "llm_calls", 0), 3);
    json_object_put(o);
    free(text);
    line = tnd_report_summary(r);
    assert_string_equal(line, "approved after 2 iterations · 5 LLM calls (1 "
                              "unanswered) · 3,837 tokens (3,330 prompt + 507 "
                              "completion) · 0.4s");
    free(line);
    tnd_report_destroy(&r);
}

static void secrets_are_redacted(void **state)
{
    tnd_report *r;
    char *text;

    (void)state;
    tnd_log_secret("sk-report-secret-123456");
    r = tnd_report_new("S", "use key sk-report-secret-123456 please", "/r",
                       NULL, 0);
    tnd_report_outcome(r, "failed", "401 with sk-report-secret-123456", 1, NULL,
                       NULL, 0);
    text = tnd_report_json(r);
    assert_null(strstr(text, "sk-report-secret-123456"));
    assert_non_null(strstr(text, "[redacted]"));
    free(text);
    tnd_report_destroy(&r);
}

/* A server tells a session's clients how it ended with the report its
 * run kept (tnd_report_json_kept), not read back from report.json: the
 * reply is the same bytes as one made from the file's text, with text
 * JSON escapes, bytes that are not UTF-8 and numbers with fractions. A
 * report a secret was redacted from is not kept (the object still holds
 * the secret). */
static void the_kept_report_makes_the_reply_the_file_makes(void **state)
{
    tnd_report *r =
        tnd_report_new("S", "fix caf\xc3\xa9 \x1b[31m\t\"q\" a/b \xff\xfe",
                       "/repo/a b", "/repo/agents.yaml", 0);
    tnd_issue issue = {TND_ISSUE_INCORRECT, TND_SEVERITY_MAJOR, S("s\xc3.c"), 3,
                       S("d\\iv"),          S("x / y"),         S("cast")};
    tnd_critique crit = {.verdict = TND_VERDICT_REVISE,
                         .confidence = 0.1 + 0.2,
                         .issues = &issue,
                         .nissues = 1,
                         .summary = S("\xe2\x9c\x93 one \x01 bug")};
    tnd_audit_reply audit = {.critique = &crit};
    tnd_usage c = usage(1, 100, 10);
    tnd_gate_input in;
    tnd_gate_decision d;
    json_object *kept = NULL, *file = NULL;
    char *text, *a, *b;
    size_t la, lb;

    (void)state;
    memset(&in, 0, sizeof(in));
    memset(&d, 0, sizeof(d));
    in.attempt = 1;
    in.audit = &audit;
    d.action = TND_GATE_REVISE;
    strcpy(d.reason, "the critique says revise (0.30)");
    tnd_report_usage(r, TND_ROLE_CODER, &c);
    tnd_report_attempt(r, 1, NULL, &in, &d, ".tandem/x/attempt-1.diff", 7);
    tnd_report_approved(
        r, "--- a/s.c\n+++ b/s.c\n+\tx = 1.5e-7; /* \xc3\xa9 */\n");
    tnd_report_outcome(r, "approved", "ok", 1, "f.diff", NULL, 1234);
    text = tnd_report_json_kept(r, &kept);
    assert_non_null(kept);
    assert_int_equal(tnd_json_parse(&file, text, strlen(text)), 0);
    a = tnd_client_done("S", 0, "approved", file, &la);
    b = tnd_client_done("S", 0, "approved", kept, &lb);
    assert_int_equal(la, lb);
    assert_memory_equal(a, b, la);
    free(a);
    free(b);
    free(text);
    json_object_put(file);
    json_object_put(kept);
    tnd_report_destroy(&r);

    tnd_log_secret("sk-kept-secret-4321");
    r = tnd_report_new("S", "use sk-kept-secret-4321", "/r", NULL, 0);
    text = tnd_report_json_kept(r, &kept);
    assert_null(kept);
    assert_null(strstr(text, "sk-kept-secret-4321"));
    free(text);
    tnd_report_destroy(&r);
}

/* The report's text, parsed (caller puts it). */
static json_object *parsed(const tnd_report *r)
{
    char *text = tnd_report_json(r);
    json_object *o = NULL;

    assert_int_equal(tnd_json_parse(&o, text, strlen(text)), 0);
    free(text);
    return o;
}

/* An approved change is in the report itself (final_diff_text), so
 * `--json` readers need no file; without one it is null. */
static void approved_diff_is_in_the_report(void **state)
{
    tnd_report *r = tnd_report_new("S", "t", "/repo", NULL, 0);
    const char *diff = "--- a/x.c\n+++ b/x.c\n@@ -1 +1 @@\n-a\n+b\n";
    json_object *o;

    (void)state;
    o = parsed(r);
    assert_true(json_object_object_get_ex(o, "final_diff_text", NULL));
    assert_null(json_object_object_get(o, "final_diff_text"));
    json_object_put(o);

    tnd_report_approved(r, diff);
    tnd_report_outcome(r, "approved", "ok", 1, "f.diff", "a1.diff", 1);
    o = parsed(r);
    assert_string_equal(
        json_object_get_string(json_object_object_get(o, "final_diff_text")),
        diff);
    json_object_put(o);
    tnd_report_destroy(&r);
}

/* What a review printed is in its report (findings_text), so a client
 * that attaches after the end prints it; null when it printed nothing. */
static void review_findings_are_in_the_report(void **state)
{
    tnd_report *r = tnd_report_new("S", "t", "/repo", NULL, 0);
    json_object *o;

    (void)state;
    tnd_report_review(r);
    o = parsed(r);
    assert_true(json_object_object_get_ex(o, "findings_text", NULL));
    assert_null(json_object_object_get(o, "findings_text"));
    json_object_put(o);

    tnd_report_findings(r, "### test (`make test`): fail, exit 2\n");
    o = parsed(r);
    assert_string_equal(
        json_object_get_string(json_object_object_get(o, "findings_text")),
        "### test (`make test`): fail, exit 2\n");
    json_object_put(o);
    tnd_report_destroy(&r);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(summary_reads_like_a_sentence),
        cmocka_unit_test(unsandboxed_skills_are_reported),
        cmocka_unit_test(json_has_the_promised_fields),
        cmocka_unit_test(baseline_and_workspace_are_reported),
        cmocka_unit_test(unanswered_calls_are_counted_without_tokens),
        cmocka_unit_test(secrets_are_redacted),
        cmocka_unit_test(the_kept_report_makes_the_reply_the_file_makes),
        cmocka_unit_test(approved_diff_is_in_the_report),
        cmocka_unit_test(review_findings_are_in_the_report),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
