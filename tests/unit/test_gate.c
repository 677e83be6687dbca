/* Unit tests for orchestrator/gate: the decision, made in code.
 *
 * One table holds the rules: each row is an attempt (what the coder
 * proposed, what the reviewer's skills and critique said, what the
 * configuration requires) and the action the gate must take, with a
 * piece of the reason it must give. Then the failure signature, which
 * tells "the same failure again" from a new one. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "orchestrator/gate.h"

/* ---- building inputs ---------------------------------------------------- */

typedef struct skill_spec {
    const char *name; /* NULL ends the list */
    tnd_skill_status status;
    int exit_code;
    bool required; /* the reviewer's own marking */
    const char *output;
    const char *ended; /* how a killed one ended, in words */
} skill_spec;

typedef struct issue_spec {
    tnd_severity severity; /* 0 ends the list */
    tnd_issue_type type;
    const char *file;
    long line;
    const char *description;
} issue_spec;

#define MAX_SKILLS 4
#define MAX_ISSUES 3

/* An audit reply and everything it points to, on the stack. */
typedef struct audit_store {
    tnd_skill_result skills[MAX_SKILLS];
    tnd_issue issues[MAX_ISSUES];
    tnd_critique critique;
    tnd_audit_reply reply;
} audit_store;

/* The reviewer's answer: skills, and a critique unless critique_error is
 * set or no_critique is true. */
typedef struct review_spec {
    skill_spec skills[MAX_SKILLS + 1];
    bool no_critique;
    const char *critique_error; /* set: no critique, for this reason */
    tnd_verdict verdict;
    double confidence;
    issue_spec issues[MAX_ISSUES + 1];
    const char *summary;
} review_spec;

static const tnd_audit_reply *build_audit(audit_store *st, const review_spec *r)
{
    memset(st, 0, sizeof(*st));
    for (size_t i = 0; i < MAX_SKILLS && r->skills[i].name; i++) {
        const skill_spec *s = &r->skills[i];
        st->skills[i] = (tnd_skill_result){
            .name = (char *)s->name,
            .status = s->status,
            .required = s->required,
            .exit_code = s->exit_code,
            .command = (char *)"make",
            .output = (char *)(s->output ? s->output : ""),
            .ended = (char *)s->ended,
        };
        st->reply.nskills++;
    }
    st->reply.skills = st->skills;
    if (r->no_critique || r->critique_error) {
        st->reply.critique_error = (char *)r->critique_error;
        return &st->reply;
    }
    for (size_t i = 0; i < MAX_ISSUES && r->issues[i].severity; i++) {
        const issue_spec *is = &r->issues[i];
        st->issues[i] = (tnd_issue){
            .type = is->type ? is->type : TND_ISSUE_INCORRECT,
            .severity = is->severity,
            .file = (char *)is->file,
            .line = is->line,
            .description = (char *)is->description,
        };
        st->critique.nissues++;
    }
    st->critique.issues = st->issues;
    st->critique.verdict = r->verdict;
    st->critique.confidence = r->confidence;
    st->critique.summary = (char *)(r->summary ? r->summary : "");
    st->reply.critique = &st->critique;
    return &st->reply;
}

/* ---- the rules, one row each -------------------------------------------- */

typedef struct row {
    const char *rule; /* what the row shows; printed when it fails */
    int attempt;
    const char *apply_error;
    const char *format_error;
    bool empty;
    int repeats;
    bool not_audited; /* in.audit = NULL */
    review_spec review;
    const char *required[3]; /* the configuration's required skills */
    int streak;
    bool critique_skipped;             /* on_trigger and no trigger fired */
    const char *risky;                 /* a changed path in gate.risk_paths */
    skill_spec before[MAX_SKILLS + 1]; /* the baseline's skills; none:
                                          no baseline */
    tnd_gate_config cfg;               /* all zero: DEFAULT_CFG */
    tnd_gate_action expect;
    bool passed;
    const char *reason; /* a substring of the decision's reason */
} row;

/* clang-format off */
#define DEFAULT_CFG {.max_iterations = 5, .confidence_threshold = 0.8,        \
                     .human_review_below = 0.7,                              \
                     .persistent_failure_threshold = 3}
#define PASS(n)        {.name = n, .status = TND_SKILL_PASS, .output = "ok\n"}
#define FAIL(n, code)  {.name = n, .status = TND_SKILL_FAIL, .exit_code = code}
#define STATUS(n, st)  {.name = n, .status = st, .exit_code = -1}
#define BOTH_PASS      PASS("build"), PASS("test")
#define REQUIRED_BT    .required = {"build", "test"}
#define APPROVES(conf) .verdict = TND_VERDICT_APPROVE, .confidence = conf
#define MINOR(desc)    {TND_SEVERITY_MINOR, TND_ISSUE_STYLE, "src/a.c", 3, desc}
#define GOOD_REVIEW    {.skills = {BOTH_PASS}, APPROVES(0.9)}
#define BROKEN_TEST    {.skills = {PASS("build"), FAIL("test", 1)},            \
                        APPROVES(0.9)}
#define NOT_ASKED      .critique_error =                                       \
                           "no trigger fired (gate.critique: on_trigger)"
#define SKIPPED_REVIEW {.skills = {BOTH_PASS}, NOT_ASKED}
#define RISKY          .risky = "src/auth/login.c"
/* clang-format on */

static const row rows[] = {
    /* approval */
    {"everything passes: approve", 1, .review = GOOD_REVIEW, REQUIRED_BT,
     .expect = TND_GATE_APPROVE, .passed = true,
     .reason = "every required skill passed and the reviewer approves "
               "(confidence 0.90)"},
    {"no skill at all (skills: []): the reason says nothing checked it", 1,
     .review = {APPROVES(0.9)}, .expect = TND_GATE_APPROVE, .passed = true,
     .reason = "no skill checked the change (agents.reviewer.skills lists "
               "none) and the reviewer approves"},
    {"minor issues only, approve, confidence over the threshold", 1,
     .review = {.skills = {BOTH_PASS},
                APPROVES(0.85),
                .issues = {MINOR("naming"), MINOR("a comment is stale")}},
     REQUIRED_BT, .expect = TND_GATE_APPROVE, .passed = true,
     .reason = "reviewer approves"},
    {"confidence exactly at the threshold: approve", 1,
     .review = {.skills = {BOTH_PASS}, APPROVES(0.8)}, REQUIRED_BT,
     .expect = TND_GATE_APPROVE, .passed = true, .reason = "(confidence 0.80)"},
    {"the last iteration may still approve", 5, .review = GOOD_REVIEW,
     REQUIRED_BT, .streak = 0, .expect = TND_GATE_APPROVE, .passed = true,
     .reason = "reviewer approves"},

    /* required skills: evidence beats opinion */
    {"required skill failed, critique approves with confidence 1.0", 1,
     .review = {.skills = {PASS("build"), FAIL("test", 2)}, APPROVES(1.0)},
     REQUIRED_BT, .streak = 1, .expect = TND_GATE_REVISE,
     .reason = "required skill test failed (exit 2)"},
    {"a failing skill that passed before the change is a regression", 1,
     .review = BROKEN_TEST, REQUIRED_BT, .before = {BOTH_PASS},
     .expect = TND_GATE_REVISE,
     .reason = "required skill test failed (exit 1): a regression, it passed "
               "before the change"},
    {"a failing skill that failed before too is not fixed", 1,
     .review = BROKEN_TEST, REQUIRED_BT,
     .before = {PASS("build"), FAIL("test", 2)}, .expect = TND_GATE_REVISE,
     .reason = "required skill test failed (exit 1): not fixed, it failed "
               "before the change too"},
    {"a timed-out skill that passed before is a regression", 1,
     .review = {.skills = {PASS("build"), STATUS("test", TND_SKILL_TIMEOUT)},
                APPROVES(1.0)},
     REQUIRED_BT, .before = {BOTH_PASS}, .expect = TND_GATE_REVISE,
     .reason = "required skill test: timeout: a regression"},
    {"a baseline that failed does not stop a passing change", 1,
     .review = GOOD_REVIEW, REQUIRED_BT,
     .before = {PASS("build"), FAIL("test", 2)}, .expect = TND_GATE_APPROVE,
     .passed = true, .reason = "every required skill passed"},
    {"required skill missing from the audit", 1,
     .review = {.skills = {PASS("build")}, APPROVES(1.0)}, REQUIRED_BT,
     .expect = TND_GATE_REVISE,
     .reason = "required skill test did not run (the reviewer did not "
               "report it)"},
    {"no skills reported at all", 1, .review = {APPROVES(1.0)},
     .required = {"build"}, .expect = TND_GATE_REVISE,
     .reason = "required skill build did not run"},
    {"a skill a limit killed says which in the reason", 1,
     .review = {.skills = {PASS("build"),
                           {.name = "test",
                            .status = TND_SKILL_FAIL,
                            .exit_code = -1,
                            .ended = "killed: over the 512-process limit "
                                     "(limits.processes)"}},
                APPROVES(1.0)},
     REQUIRED_BT, .expect = TND_GATE_REVISE,
     .reason = "required skill test: fail, killed: over the 512-process "
               "limit (limits.processes)"},
    {"required skill timed out", 1,
     .review = {.skills = {PASS("build"), STATUS("test", TND_SKILL_TIMEOUT)},
                APPROVES(1.0)},
     REQUIRED_BT, .streak = 1, .expect = TND_GATE_REVISE,
     .reason = "required skill test: timeout"},
    {"required skill could not run", 1,
     .review = {.skills = {STATUS("build", TND_SKILL_ERROR), PASS("test")},
                APPROVES(1.0)},
     REQUIRED_BT, .streak = 1, .expect = TND_GATE_REVISE,
     .reason = "required skill build: error"},
    {"a required skill skipped (the change misses its paths) does not block", 1,
     .review = {.skills = {BOTH_PASS, STATUS("docs", TND_SKILL_SKIPPED)},
                APPROVES(0.9)},
     .required = {"test", "docs"}, .expect = TND_GATE_APPROVE, .passed = true,
     .reason = "every required skill passed"},
    {"a skill the reviewer marks required and skips does not block", 1,
     .review = {.skills = {BOTH_PASS,
                           {.name = "docs",
                            .status = TND_SKILL_SKIPPED,
                            .exit_code = -1,
                            .required = true}},
                APPROVES(0.9)},
     REQUIRED_BT, .expect = TND_GATE_APPROVE, .passed = true,
     .reason = "approves"},
    {"skipped does not hide a failure after it", 1,
     .review = {.skills = {STATUS("docs", TND_SKILL_SKIPPED), PASS("build"),
                           FAIL("test", 2)},
                APPROVES(0.9)},
     .required = {"docs", "test"}, .streak = 1, .expect = TND_GATE_REVISE,
     .reason = "required skill test failed (exit 2)"},
    {"an optional skill failing does not block", 1,
     .review = {.skills = {BOTH_PASS, FAIL("lint", 1)}, APPROVES(0.9)},
     REQUIRED_BT, .expect = TND_GATE_APPROVE, .passed = true,
     .reason = "every required skill passed"},
    {"the reviewer marks a skill required the config does not: it blocks", 1,
     .review = {.skills = {BOTH_PASS,
                           {.name = "lint",
                            .status = TND_SKILL_FAIL,
                            .exit_code = 1,
                            .required = true}},
                APPROVES(0.9)},
     REQUIRED_BT, .streak = 1, .expect = TND_GATE_REVISE,
     .reason = "required skill lint failed (exit 1)"},
    {"a required skill that passes without the config requiring any", 1,
     .review = {.skills = {{.name = "test",
                            .status = TND_SKILL_PASS,
                            .required = true}},
                APPROVES(0.9)},
     .expect = TND_GATE_APPROVE, .passed = true, .reason = "approves"},

    /* the critique */
    {"no critique: never approve", 1,
     .review = {.skills = {BOTH_PASS},
                .critique_error = "the reviewer's answer was not JSON"},
     REQUIRED_BT, .streak = 1, .expect = TND_GATE_REVISE,
     .reason = "no valid critique: the reviewer's answer was not JSON"},
    {"no critique and no reason given", 1,
     .review = {.skills = {BOTH_PASS}, .no_critique = true}, REQUIRED_BT,
     .expect = TND_GATE_REVISE, .reason = "no valid critique: none was given"},
    {"major issue with verdict approve: revise", 1,
     .review = {.skills = {BOTH_PASS},
                APPROVES(0.95),
                .issues = {MINOR("naming"),
                           {TND_SEVERITY_MAJOR, TND_ISSUE_INCORRECT,
                            "src/stats.c", 12, "divides by zero"}}},
     REQUIRED_BT, .streak = 1, .expect = TND_GATE_REVISE,
     .reason = "the reviewer found a major issue at src/stats.c:12: "
               "divides by zero"},
    {"critical issue: revise", 1,
     .review = {.skills = {BOTH_PASS},
                APPROVES(0.95),
                .issues = {{TND_SEVERITY_CRITICAL, TND_ISSUE_SAFETY, "src/io.c",
                            0, "writes outside the buffer"}}},
     REQUIRED_BT, .streak = 1, .expect = TND_GATE_REVISE,
     .reason = "critical issue in src/io.c: writes outside the buffer"},
    {"major issue without a file", 1,
     .review = {.skills = {BOTH_PASS},
                APPROVES(0.95),
                .issues = {{TND_SEVERITY_MAJOR, TND_ISSUE_MISSING, NULL, 0,
                            "the task also asked for a test"}}},
     REQUIRED_BT, .streak = 1, .expect = TND_GATE_REVISE,
     .reason = "major issue: the task also asked for a test"},
    {"verdict revise with no issues: revise", 1,
     .review = {.skills = {BOTH_PASS},
                .verdict = TND_VERDICT_REVISE,
                .confidence = 0.9,
                .summary = "the mean of an empty list is undefined"},
     REQUIRED_BT, .expect = TND_GATE_REVISE,
     .reason = "asks for a revision: the mean of an empty list is "
               "undefined"},
    {"verdict revise without a summary", 1,
     .review = {.skills = {BOTH_PASS},
                .verdict = TND_VERDICT_REVISE,
                .confidence = 0.9},
     REQUIRED_BT, .expect = TND_GATE_REVISE, .reason = "(no summary)"},

    /* confidence */
    {"confidence below the threshold: revise", 1,
     .review = {.skills = {BOTH_PASS}, APPROVES(0.75)}, REQUIRED_BT,
     .expect = TND_GATE_REVISE,
     .reason = "confidence 0.75 is below gate.confidence_threshold 0.80"},
    {"approvable, confidence below human_review_below: escalate", 1,
     .review = {.skills = {BOTH_PASS}, APPROVES(0.5)}, REQUIRED_BT,
     .expect = TND_GATE_ESCALATE, .passed = true,
     .reason = "below gate.human_review_below 0.70: a human should look"},
    {"human review above the threshold (a stricter config)", 1,
     .review = {.skills = {BOTH_PASS}, APPROVES(0.85)}, REQUIRED_BT,
     .cfg = {.max_iterations = 5,
             .confidence_threshold = 0.6,
             .human_review_below = 0.9,
             .persistent_failure_threshold = 3},
     .expect = TND_GATE_ESCALATE, .passed = true,
     .reason = "gate.human_review_below 0.90"},
    {"low confidence never reaches a human when something failed", 1,
     .review = {.skills = {PASS("build"), FAIL("test", 1)}, APPROVES(0.1)},
     REQUIRED_BT, .streak = 1, .expect = TND_GATE_REVISE,
     .reason = "required skill test failed"},

    /* the critique not asked for (gate.critique on_trigger, no trigger
     * fired): the skills decide */
    {"critique skipped, every required skill passes: approve", 1,
     .review = SKIPPED_REVIEW, REQUIRED_BT, .critique_skipped = true,
     .expect = TND_GATE_APPROVE, .passed = true,
     .reason = "every required skill passed; no critique trigger fired "
               "(gate.critique: on_trigger)"},
    {"critique skipped, no reason recorded: approve all the same", 1,
     .review = {.skills = {BOTH_PASS}, .no_critique = true}, REQUIRED_BT,
     .critique_skipped = true, .expect = TND_GATE_APPROVE, .passed = true,
     .reason = "no critique trigger fired"},
    {"critique skipped, required skill skipped (misses its paths): approve", 1,
     .review = {.skills = {BOTH_PASS, STATUS("docs", TND_SKILL_SKIPPED)},
                NOT_ASKED},
     .required = {"test", "docs"}, .critique_skipped = true,
     .expect = TND_GATE_APPROVE, .passed = true,
     .reason = "every required skill passed"},
    {"the same audit without critique_skipped: no critique, revise", 1,
     .review = SKIPPED_REVIEW, REQUIRED_BT, .expect = TND_GATE_REVISE,
     .reason = "no valid critique: no trigger fired (gate.critique: "
               "on_trigger)"},
    {"critique skipped but a required skill failed: revise", 1,
     .review = {.skills = {PASS("build"), FAIL("test", 1)}, NOT_ASKED},
     REQUIRED_BT, .streak = 1, .critique_skipped = true,
     .expect = TND_GATE_REVISE,
     .reason = "required skill test failed (exit 1)"},
    {"critique skipped but a required skill missing: revise", 1,
     .review = {.skills = {PASS("build")}, NOT_ASKED}, REQUIRED_BT,
     .critique_skipped = true, .expect = TND_GATE_REVISE,
     .reason = "required skill test did not run"},
    {"critique skipped, a required skill failed at the last iteration", 5,
     .review = {.skills = {PASS("build"), FAIL("test", 1)}, NOT_ASKED},
     REQUIRED_BT, .streak = 1, .critique_skipped = true,
     .expect = TND_GATE_ESCALATE,
     .reason = "gate.max_iterations (5) reached; last failure: required "
               "skill test failed"},

    /* risky paths (gate.risk_paths): a passing change goes to a human */
    {"passes but touches a risky path: escalate", 1, .review = GOOD_REVIEW,
     REQUIRED_BT, RISKY, .expect = TND_GATE_ESCALATE, .passed = true,
     .reason = "the change passes (every required skill passed and the "
               "reviewer approves (confidence 0.90)), but it touches "
               "src/auth/login.c (gate.risk_paths): a human must approve it"},
    {"risky and a required skill fails: revise as usual", 1,
     .review = BROKEN_TEST, REQUIRED_BT, RISKY, .streak = 1,
     .expect = TND_GATE_REVISE,
     .reason = "required skill test failed (exit 1)"},
    {"risky and a major issue: revise as usual", 1,
     .review = {.skills = {BOTH_PASS},
                APPROVES(0.95),
                .issues = {{TND_SEVERITY_MAJOR, TND_ISSUE_SAFETY,
                            "src/auth/login.c", 4, "logs the password"}}},
     REQUIRED_BT, RISKY, .streak = 1, .expect = TND_GATE_REVISE,
     .reason = "major issue at src/auth/login.c:4: logs the password"},
    {"risky and confidence below the threshold: revise as usual", 1,
     .review = {.skills = {BOTH_PASS}, APPROVES(0.75)}, REQUIRED_BT, RISKY,
     .expect = TND_GATE_REVISE,
     .reason = "confidence 0.75 is below gate.confidence_threshold 0.80"},
    {"risky and failing at the last iteration: escalate, not passed", 5,
     .review = BROKEN_TEST, REQUIRED_BT, RISKY, .streak = 1,
     .expect = TND_GATE_ESCALATE, .reason = "gate.max_iterations (5) reached"},
    {"risky and critique skipped: escalate", 1, .review = SKIPPED_REVIEW,
     REQUIRED_BT, RISKY, .critique_skipped = true, .expect = TND_GATE_ESCALATE,
     .passed = true,
     .reason = "the change passes (every required skill passed; no critique "
               "trigger fired (gate.critique: on_trigger)), but it touches "
               "src/auth/login.c (gate.risk_paths): a human must approve it"},
    {"risky and stuck: stuck wins", 2, .repeats = 1, .review = GOOD_REVIEW,
     REQUIRED_BT, RISKY, .expect = TND_GATE_ESCALATE,
     .reason = "stuck: attempt 2 proposes exactly the change of attempt 1"},

    /* stuck, out of iterations, the same failure again */
    {"repeats an earlier proposal: escalate though all passes", 3, .repeats = 1,
     .review = GOOD_REVIEW, REQUIRED_BT, .expect = TND_GATE_ESCALATE,
     .reason = "stuck: attempt 3 proposes exactly the change of attempt 1"},
    {"attempt == max_iterations with a failure: escalate", 5,
     .review = BROKEN_TEST, REQUIRED_BT, .streak = 1,
     .expect = TND_GATE_ESCALATE,
     .reason = "gate.max_iterations (5) reached; last failure: required "
               "skill test failed"},
    {"confidence too low at the last iteration: escalate", 5,
     .review = {.skills = {BOTH_PASS}, APPROVES(0.75)}, REQUIRED_BT,
     .expect = TND_GATE_ESCALATE, .reason = "max_iterations"},
    {"streak at persistent_failure_threshold: escalate", 3,
     .review = BROKEN_TEST, REQUIRED_BT, .streak = 3,
     .expect = TND_GATE_ESCALATE,
     .reason = "the same failure 3 times in a row: required skill test "
               "failed"},
    {"streak past the threshold: escalate", 4, .review = BROKEN_TEST,
     REQUIRED_BT, .streak = 4, .expect = TND_GATE_ESCALATE,
     .reason = "the same failure 4 times in a row"},
    {"threshold 1: the first failure goes to a human", 1, .review = BROKEN_TEST,
     REQUIRED_BT, .streak = 1,
     .cfg = {.max_iterations = 5,
             .confidence_threshold = 0.8,
             .human_review_below = 0.7,
             .persistent_failure_threshold = 1},
     .expect = TND_GATE_ESCALATE,
     .reason = "gate.persistent_failure_threshold is 1, so any failure goes "
               "to a human: required skill test failed"},
    {"streak below the threshold: revise", 2, .review = BROKEN_TEST,
     REQUIRED_BT, .streak = 2, .expect = TND_GATE_REVISE,
     .reason = "required skill test failed (exit 1)"},

    /* proposals that never reached the reviewer */
    {"apply error: revise", 1,
     .apply_error = "edit 2: the SEARCH text was "
                    "not found in src/a.c",
     .not_audited = true, REQUIRED_BT, .streak = 1, .expect = TND_GATE_REVISE,
     .reason = "the proposal could not be applied: edit 2: the SEARCH"},
    {"format error: revise", 1, .format_error = "no edit blocks",
     .not_audited = true, REQUIRED_BT, .streak = 1, .expect = TND_GATE_REVISE,
     .reason = "the coder's answer held no usable edits: no edit blocks"},
    {"empty proposal: revise", 1, .empty = true, .not_audited = true,
     REQUIRED_BT, .streak = 1, .expect = TND_GATE_REVISE,
     .reason = "the proposal changes nothing"},
    {"apply error at the last iteration: escalate", 5,
     .apply_error = "edit 1: x.c: no such file", .not_audited = true,
     REQUIRED_BT, .streak = 1, .expect = TND_GATE_ESCALATE,
     .reason = "gate.max_iterations (5) reached; last failure: the proposal "
               "could not be applied"},
    {"format error at the last iteration: escalate", 5,
     .format_error = "unterminated block", .not_audited = true, REQUIRED_BT,
     .streak = 1, .expect = TND_GATE_ESCALATE, .reason = "max_iterations"},
    {"empty proposal at the last iteration: escalate", 5, .empty = true,
     .not_audited = true, REQUIRED_BT, .streak = 1, .expect = TND_GATE_ESCALATE,
     .reason = "the proposal changes nothing"},
    {"apply error wins over a passing audit", 1, .apply_error = "edit 1: boom",
     .review = GOOD_REVIEW, REQUIRED_BT, .streak = 1, .expect = TND_GATE_REVISE,
     .reason = "could not be applied"},
    {"not audited: never approve", 1, .not_audited = true, REQUIRED_BT,
     .expect = TND_GATE_REVISE, .reason = "the change was not audited"},
};

static void every_rule_decides_as_documented(void **state)
{
    int wrong = 0;

    (void)state;
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        const row *r = &rows[i];
        tnd_gate_config cfg = DEFAULT_CFG;
        tnd_gate_decision d;
        audit_store store, before;
        review_spec base = {.no_critique = true};
        tnd_gate_input in = {
            .attempt = r->attempt,
            .apply_error = r->apply_error,
            .format_error = r->format_error,
            .empty = r->empty,
            .repeats = r->repeats,
            .audit = r->not_audited ? NULL : build_audit(&store, &r->review),
            .required = r->required,
            .streak = r->streak,
            .critique_skipped = r->critique_skipped,
            .risky = r->risky,
        };

        memcpy(base.skills, r->before, sizeof(base.skills));
        if (r->before[0].name)
            in.baseline = build_audit(&before, &base);
        if (r->cfg.max_iterations)
            cfg = r->cfg;
        tnd_gate_decide(&d, &cfg, &in);
        if (d.action != r->expect || d.passed != r->passed ||
            !strstr(d.reason, r->reason) || strchr(d.reason, '\n')) {
            print_error("row %zu \"%s\":\n  got      %s (passed=%d): %s\n"
                        "  expected %s (passed=%d): ...%s...\n",
                        i, r->rule, tnd_gate_action_name(d.action), d.passed,
                        d.reason, tnd_gate_action_name(r->expect), r->passed,
                        r->reason);
            wrong++;
        }
    }
    assert_int_equal(wrong, 0);
}

static void a_long_reason_is_cut_to_fit(void **state)
{
    char long_error[2000];
    tnd_gate_config cfg = DEFAULT_CFG;
    tnd_gate_input in = {.attempt = 5, .apply_error = long_error};
    tnd_gate_decision d;

    (void)state;
    memset(long_error, 'x', sizeof(long_error) - 1);
    long_error[sizeof(long_error) - 1] = '\0';
    tnd_gate_decide(&d, &cfg, &in);
    assert_int_equal(d.action, TND_GATE_ESCALATE);
    assert_true(strlen(d.reason) < sizeof(d.reason));
    assert_non_null(strstr(d.reason, "gate.max_iterations (5) reached"));
}

/* How a skill did before the change: skipped or absent there is unknown. */
static void before_finds_the_baseline_result(void **state)
{
    audit_store st;
    review_spec base = {
        .skills = {PASS("build"), STATUS("docs", TND_SKILL_SKIPPED)},
        .no_critique = true};
    const tnd_audit_reply *b = build_audit(&st, &base);

    (void)state;
    assert_int_equal(tnd_gate_before(b, "build")->status, TND_SKILL_PASS);
    assert_null(tnd_gate_before(b, "docs"));
    assert_null(tnd_gate_before(b, "test"));
    assert_null(tnd_gate_before(NULL, "build"));
}

static void action_names(void **state)
{
    (void)state;
    assert_string_equal(tnd_gate_action_name(TND_GATE_APPROVE), "approve");
    assert_string_equal(tnd_gate_action_name(TND_GATE_REVISE), "revise");
    assert_string_equal(tnd_gate_action_name(TND_GATE_ESCALATE), "escalate");
    assert_string_equal(tnd_gate_action_name((tnd_gate_action)0), "?");
    assert_string_equal(tnd_gate_action_name((tnd_gate_action)99), "?");
}

/* ---- the failure signature ---------------------------------------------- */

static const char *const required_bt[] = {"build", "test", NULL};

/* The signature of an attempt whose reviewer reported these skills and
 * approved with confidence 0.9. */
static uint64_t sig_of(const skill_spec *skills)
{
    review_spec r = {APPROVES(0.9)};
    audit_store store;
    tnd_gate_input in = {.attempt = 1, .required = required_bt};

    for (size_t i = 0; i < MAX_SKILLS && skills[i].name; i++)
        r.skills[i] = skills[i];
    in.audit = build_audit(&store, &r);
    return tnd_gate_signature(&in);
}

static uint64_t sig_of_test_output(const char *output)
{
    skill_spec s[] = {PASS("build"),
                      {.name = "test",
                       .status = TND_SKILL_FAIL,
                       .exit_code = 1,
                       .output = output},
                      {0}};

    return sig_of(s);
}

static void signature_ignores_numbers_addresses_and_tmp_paths(void **state)
{
    uint64_t a, b;

    (void)state;
    a = sig_of_test_output(
        "/tmp/tnd-ws-a81f/tests/t.c:41: mean(3 values) = 2.5, want 3\n"
        "  at 0x7ffd5a3b10c0 in stats_mean\n"
        "FAIL: 1 of 12 tests, 0.031s\n");
    b = sig_of_test_output(
        "/tmp/tnd-ws-0c93e7/tests/t.c:44: mean(4 values) = 12.25, want 13\n"
        "  at 0x55d1c2aa in stats_mean\n"
        "FAIL: 1 of 12 tests, 1.200s\n");
    assert_int_not_equal(a, 0);
    assert_int_equal(a, b);

    /* Whitespace runs count as one space. */
    assert_int_equal(sig_of_test_output("error:  x\n\n"),
                     sig_of_test_output("error: x\n"));
}

/* Outputs longer than the part the signature looks at: the same failure
 * with numbers of another length earlier on must still match. */
static void signature_of_long_output_ignores_numbers(void **state)
{
    char *a = malloc(10000), *b = malloc(10000);
    size_t la = 0, lb = 0;

    (void)state;
    for (int i = 0; i < 200; i++) {
        la += (size_t)sprintf(a + la, "ok %d - case %d took %dms\n", i, i, i);
        lb += (size_t)sprintf(b + lb, "ok %d - case %d took %dms\n", i, i,
                              i * 10 + 7);
    }
    strcpy(a + la, "not ok 200 - mean of empty list\n");
    strcpy(b + lb, "not ok 200 - mean of empty list\n");
    assert_true(la > 4096 && la != lb);
    assert_int_equal(sig_of_test_output(a), sig_of_test_output(b));
    free(a);
    free(b);
}

static void signature_tells_different_failures_apart(void **state)
{
    skill_spec build_fails[] = {FAIL("build", 2), PASS("test"), {0}};
    skill_spec test_fails[] = {PASS("build"), FAIL("test", 2), {0}};
    skill_spec lint_required[] = {
        BOTH_PASS,
        {.name = "lint", .status = TND_SKILL_FAIL, .required = true},
        {0}};

    (void)state;
    assert_int_not_equal(sig_of(build_fails), sig_of(test_fails));
    assert_int_not_equal(sig_of(build_fails), 0);
    assert_int_not_equal(sig_of(lint_required), 0);
    assert_int_not_equal(sig_of_test_output("t.c:4: want 3, got 2\n"),
                         sig_of_test_output("t.c:9: segmentation fault\n"));
}

static void signature_is_zero_when_nothing_failed(void **state)
{
    skill_spec all_pass[] = {BOTH_PASS, {0}};
    skill_spec optional_fails[] = {BOTH_PASS, FAIL("lint", 1), {0}};
    tnd_gate_input not_audited = {.attempt = 1, .required = required_bt};

    (void)state;
    assert_int_equal(sig_of(all_pass), 0);
    assert_int_equal(tnd_gate_signature(&not_audited), 0);
    /* An optional skill's failure is not a failure of the change: were it
     * counted, a lint that always fails would make every later failure
     * look like "the same failure again". */
    assert_int_equal(sig_of(optional_fails), 0);
    /* nor is a required skill the change did not concern */
    {
        skill_spec skipped[] = {BOTH_PASS,
                                {.name = "test",
                                 .status = TND_SKILL_SKIPPED,
                                 .exit_code = -1,
                                 .required = true},
                                {0}};
        assert_int_equal(sig_of(skipped), 0);
    }
}

static void signature_counts_a_missing_required_skill(void **state)
{
    skill_spec only_build[] = {PASS("build"), {0}};
    skill_spec only_test[] = {PASS("test"), {0}};

    (void)state;
    assert_int_not_equal(sig_of(only_build), 0);
    assert_int_equal(sig_of(only_build), sig_of(only_build));
    assert_int_not_equal(sig_of(only_build), sig_of(only_test));
}

static void signature_of_critique_problems(void **state)
{
    review_spec major = {.skills = {BOTH_PASS},
                         APPROVES(0.9),
                         .issues = {{TND_SEVERITY_MAJOR, TND_ISSUE_INCORRECT,
                                     "src/a.c", 12, "off by one"}}};
    review_spec major_elsewhere = major;
    review_spec no_critique = {.skills = {BOTH_PASS},
                               .critique_error = "not JSON at offset 17"};
    review_spec no_critique_2 = {.skills = {BOTH_PASS},
                                 .critique_error = "not JSON at offset 230"};
    audit_store s1, s2;
    tnd_gate_input a = {.attempt = 1, .required = required_bt};
    tnd_gate_input b = a;

    (void)state;
    major_elsewhere.issues[0].file = "src/b.c";
    a.audit = build_audit(&s1, &major);
    b.audit = build_audit(&s2, &major_elsewhere);
    assert_int_not_equal(tnd_gate_signature(&a), 0);
    assert_int_not_equal(tnd_gate_signature(&a), tnd_gate_signature(&b));

    a.audit = build_audit(&s1, &no_critique);
    b.audit = build_audit(&s2, &no_critique_2);
    assert_int_not_equal(tnd_gate_signature(&a), 0);
    assert_int_equal(tnd_gate_signature(&a), tnd_gate_signature(&b));
}

static void signature_of_proposals_that_were_not_audited(void **state)
{
    tnd_gate_input apply1 = {.attempt = 1,
                             .apply_error = "edit 2: not found in a.c"};
    tnd_gate_input apply2 = {.attempt = 2,
                             .apply_error = "edit 3: not found in a.c"};
    tnd_gate_input other = {.attempt = 2,
                            .apply_error = "edit 1: b.c is a binary file"};
    tnd_gate_input format = {.attempt = 1,
                             .format_error = "edit 2: not found in a.c"};
    tnd_gate_input empty = {.attempt = 1, .empty = true};

    (void)state;
    assert_int_not_equal(tnd_gate_signature(&apply1), 0);
    assert_int_equal(tnd_gate_signature(&apply1), tnd_gate_signature(&apply2));
    assert_int_not_equal(tnd_gate_signature(&apply1),
                         tnd_gate_signature(&other));
    assert_int_not_equal(tnd_gate_signature(&apply1),
                         tnd_gate_signature(&format));
    assert_int_not_equal(tnd_gate_signature(&empty), 0);
    assert_int_not_equal(tnd_gate_signature(&empty),
                         tnd_gate_signature(&apply1));
}

static void apply_errors_hash_differently_from_skill_failures(void **state)
{
    const char *text = "edit 1: the SEARCH text was not found in t.c\n";
    tnd_gate_input apply = {.attempt = 1, .apply_error = text};

    (void)state;
    assert_int_not_equal(tnd_gate_signature(&apply), sig_of_test_output(text));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_rule_decides_as_documented),
        cmocka_unit_test(a_long_reason_is_cut_to_fit),
        cmocka_unit_test(before_finds_the_baseline_result),
        cmocka_unit_test(action_names),
        cmocka_unit_test(signature_ignores_numbers_addresses_and_tmp_paths),
        cmocka_unit_test(signature_of_long_output_ignores_numbers),
        cmocka_unit_test(signature_tells_different_failures_apart),
        cmocka_unit_test(signature_is_zero_when_nothing_failed),
        cmocka_unit_test(signature_counts_a_missing_required_skill),
        cmocka_unit_test(signature_of_critique_problems),
        cmocka_unit_test(signature_of_proposals_that_were_not_audited),
        cmocka_unit_test(apply_errors_hash_differently_from_skill_failures),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
