/* Unit tests for orchestrator/review: when the critique is worth asking
 * for, which paths are risky, and which skills cannot run at the
 * baseline (the quorum merge is test_review_merge.c's).
 *
 * The triggers are one table: each row is what the first phase found
 * (skills, size of the diff, a risky path, the previous critique's
 * confidence, the task's number), the configuration, and whether the
 * critique runs with the whole reason. Then risky paths and changed
 * lines on real diffs, then a table of baselines. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/config.h"
#include "common/config_skills.h"
#include "common/str.h"
#include "common/xalloc.h"
#include "orchestrator/review.h"

/* ---- triggers ------------------------------------------------------------ */

typedef struct skill_spec {
    const char *name; /* NULL ends the list */
    tnd_skill_status status;
    bool required; /* the reviewer's own marking */
} skill_spec;

#define MAX_SKILLS 4

typedef struct trigger_row {
    const char *rule;     /* what the row shows; printed when it fails */
    const char *critique; /* gate.critique; NULL: "on_trigger" */
    int diff_lines;       /* gate.critique_diff_lines; 0: the default, 200 */
    int every;            /* gate.critique_every */
    bool no_reply;        /* in.skills = NULL */
    skill_spec skills[MAX_SKILLS + 1];
    const char *required[3]; /* the configuration's required skills */
    size_t changed_lines;
    const char *risky;
    bool has_last; /* false: last_confidence -1 (no previous critique) */
    double last;
    long ordinal;
    bool fired;
    const char *why; /* the whole text */
} trigger_row;

/* clang-format off */
#define PASS(n)      {.name = n, .status = TND_SKILL_PASS}
#define STATUS(n, s) {.name = n, .status = s}
#define BOTH_PASS    PASS("build"), PASS("test")
#define REQUIRED_BT  .required = {"build", "test"}
#define LAST(c)      .has_last = true, .last = c
#define NONE_FIRED   "no trigger fired (gate.critique: on_trigger)"
/* clang-format on */

static const trigger_row trigger_rows[] = {
    /* gate.critique always: no trigger is consulted */
    {"always: fires with nothing to fire on", .critique = "always",
     .skills = {BOTH_PASS}, REQUIRED_BT, .ordinal = 1, .fired = true,
     .why = "gate.critique is always"},
    {"always: fires, and names no trigger though one would fire",
     .critique = "always",
     .skills = {PASS("build"), STATUS("test", TND_SKILL_FAIL)}, REQUIRED_BT,
     .changed_lines = 5000, .fired = true, .why = "gate.critique is always"},

    /* nothing to fire on */
    {"on_trigger, all passes, small change: no critique", .skills = {BOTH_PASS},
     REQUIRED_BT, .changed_lines = 12, .ordinal = 7, .fired = false,
     .why = NONE_FIRED},
    {"no skills reported and none required: no critique", .no_reply = true,
     .fired = false, .why = NONE_FIRED},

    /* required skills */
    {"a required skill failed",
     .skills = {PASS("build"), STATUS("test", TND_SKILL_FAIL)}, REQUIRED_BT,
     .fired = true, .why = "required skill test did not pass"},
    {"a required skill timed out",
     .skills = {STATUS("build", TND_SKILL_TIMEOUT), PASS("test")}, REQUIRED_BT,
     .fired = true, .why = "required skill build did not pass"},
    {"a required skill could not run",
     .skills = {PASS("build"), STATUS("test", TND_SKILL_ERROR)}, REQUIRED_BT,
     .fired = true, .why = "required skill test did not pass"},
    {"a required skill missing from the reply", .skills = {PASS("build")},
     REQUIRED_BT, .fired = true, .why = "required skill test did not pass"},
    {"no reply at all and a skill required", .no_reply = true,
     .required = {"build"}, .fired = true,
     .why = "required skill build did not pass"},
    {"a required skill skipped (the change misses its paths) does not fire",
     .skills = {BOTH_PASS, STATUS("docs", TND_SKILL_SKIPPED)},
     .required = {"test", "docs"}, .fired = false, .why = NONE_FIRED},
    {"a skill the reviewer marks required and skips does not fire",
     .skills = {BOTH_PASS,
                {.name = "docs",
                 .status = TND_SKILL_SKIPPED,
                 .required = true}},
     REQUIRED_BT, .fired = false, .why = NONE_FIRED},
    {"an optional skill failing does not fire",
     .skills = {BOTH_PASS, STATUS("lint", TND_SKILL_FAIL)}, REQUIRED_BT,
     .fired = false, .why = NONE_FIRED},
    {"a skill the reviewer marks required fails: fires",
     .skills = {BOTH_PASS,
                {.name = "lint", .status = TND_SKILL_FAIL, .required = true}},
     REQUIRED_BT, .fired = true, .why = "required skill lint did not pass"},

    /* risky paths */
    {"the change touches a risky path", .skills = {BOTH_PASS}, REQUIRED_BT,
     .risky = "src/auth/login.c", .fired = true,
     .why = "the change touches src/auth/login.c (gate.risk_paths)"},

    /* the size of the change */
    {"changed lines above critique_diff_lines", .skills = {BOTH_PASS},
     REQUIRED_BT, .changed_lines = 201, .fired = true,
     .why = "the change has 201 changed lines (gate.critique_diff_lines is "
            "200)"},
    {"changed lines at critique_diff_lines: no critique", .skills = {BOTH_PASS},
     REQUIRED_BT, .changed_lines = 200, .fired = false, .why = NONE_FIRED},
    {"a smaller critique_diff_lines", .diff_lines = 10, .skills = {BOTH_PASS},
     REQUIRED_BT, .changed_lines = 11, .fired = true,
     .why = "the change has 11 changed lines (gate.critique_diff_lines is "
            "10)"},

    /* the previous critique's confidence (threshold 0.8) */
    {"previous confidence below the threshold", .skills = {BOTH_PASS},
     REQUIRED_BT, LAST(0.79), .fired = true,
     .why = "the previous critique's confidence 0.79 was below "
            "gate.confidence_threshold 0.80"},
    {"previous confidence 0 is a confidence, not none", .skills = {BOTH_PASS},
     REQUIRED_BT, LAST(0.0), .fired = true,
     .why = "the previous critique's confidence 0.00 was below "
            "gate.confidence_threshold 0.80"},
    {"previous confidence at the threshold: no critique", .skills = {BOTH_PASS},
     REQUIRED_BT, LAST(0.8), .fired = false, .why = NONE_FIRED},
    {"previous confidence above the threshold: no critique",
     .skills = {BOTH_PASS}, REQUIRED_BT, LAST(0.95), .fired = false,
     .why = NONE_FIRED},
    {"negative previous confidence means there was none", .skills = {BOTH_PASS},
     REQUIRED_BT, LAST(-0.5), .fired = false, .why = NONE_FIRED},

    /* every Nth task */
    {"the ordinal is a multiple of critique_every", .every = 5,
     .skills = {BOTH_PASS}, REQUIRED_BT, .ordinal = 10, .fired = true,
     .why = "task 10 is a periodic check (gate.critique_every is 5)"},
    {"the ordinal equals critique_every", .every = 5, .skills = {BOTH_PASS},
     REQUIRED_BT, .ordinal = 5, .fired = true,
     .why = "task 5 is a periodic check (gate.critique_every is 5)"},
    {"critique_every 1: every task", .every = 1, .skills = {BOTH_PASS},
     REQUIRED_BT, .ordinal = 1, .fired = true,
     .why = "task 1 is a periodic check (gate.critique_every is 1)"},
    {"the ordinal is not a multiple: no critique", .every = 5,
     .skills = {BOTH_PASS}, REQUIRED_BT, .ordinal = 11, .fired = false,
     .why = NONE_FIRED},
    {"critique_every 0 never fires", .every = 0, .skills = {BOTH_PASS},
     REQUIRED_BT, .ordinal = 10, .fired = false, .why = NONE_FIRED},
    {"ordinal 0 (unknown) is no periodic check", .every = 5,
     .skills = {BOTH_PASS}, REQUIRED_BT, .ordinal = 0, .fired = false,
     .why = NONE_FIRED},

    /* several at once: every reason, in order, "; "-joined */
    {"two triggers", .skills = {PASS("build"), STATUS("test", TND_SKILL_FAIL)},
     REQUIRED_BT, .risky = "keys/deploy.pem", .fired = true,
     .why = "required skill test did not pass; the change touches "
            "keys/deploy.pem (gate.risk_paths)"},
    {"every trigger", .every = 3, .skills = {PASS("build")}, REQUIRED_BT,
     .changed_lines = 450, .risky = "db/schema.sql", LAST(0.5), .ordinal = 9,
     .fired = true,
     .why = "required skill test did not pass; the change touches "
            "db/schema.sql (gate.risk_paths); the change has 450 changed "
            "lines (gate.critique_diff_lines is 200); the previous "
            "critique's confidence 0.50 was below gate.confidence_threshold "
            "0.80; task 9 is a periodic check (gate.critique_every is 3)"},
};

/* A required skill that failed on the unmodified tree and passes now is
 * a trigger: deleting the failing assertions does that too (approved on
 * the skills alone, it was). One that passed before, or is not
 * required, is not. */
static void a_skill_the_change_made_pass_is_a_trigger(void **state)
{
    tnd_config *cfg = tnd_config_defaults();
    tnd_skill_result now[2] = {
        {.name = (char *)"build", .status = TND_SKILL_PASS},
        {.name = (char *)"test", .status = TND_SKILL_PASS},
    };
    tnd_skill_result before[2] = {
        {.name = (char *)"build", .status = TND_SKILL_PASS},
        {.name = (char *)"test", .status = TND_SKILL_FAIL},
    };
    tnd_audit_reply reply = {.skills = now, .nskills = 2};
    tnd_audit_reply baseline = {.skills = before, .nskills = 2};
    const char *required[] = {"build", "test", NULL};
    const char *build_only[] = {"build", NULL};
    tnd_trigger_input in = {.skills = &reply,
                            .required = required,
                            .baseline = &baseline,
                            .last_confidence = -1};
    char why[600];

    (void)state;
    cfg->gate.critique = TND_CRITIQUE_ON_TRIGGER;
    assert_true(tnd_review_triggers(why, sizeof(why), &cfg->gate, &in));
    assert_string_equal(why, "required skill test failed on the unmodified "
                             "tree and passes now");
    in.required = build_only; /* not required: the gate does not rely on it */
    assert_false(tnd_review_triggers(why, sizeof(why), &cfg->gate, &in));
    in.required = required;
    before[1].status = TND_SKILL_PASS; /* it passed before too */
    assert_false(tnd_review_triggers(why, sizeof(why), &cfg->gate, &in));
    before[1].status = TND_SKILL_FAIL;
    in.baseline = NULL; /* no baseline: nothing to compare */
    assert_false(tnd_review_triggers(why, sizeof(why), &cfg->gate, &in));
    tnd_config_destroy(&cfg);
}

/* The gate configuration of a row: the defaults with its changes. */
static void set_gate(tnd_gate_config *g, const trigger_row *r)
{
    g->critique = r->critique && strcmp(r->critique, "always") == 0
                      ? TND_CRITIQUE_ALWAYS
                      : TND_CRITIQUE_ON_TRIGGER;
    g->critique_diff_lines = r->diff_lines ? r->diff_lines : 200;
    g->critique_every = r->every;
}

static void every_trigger_fires_as_documented(void **state)
{
    tnd_config *cfg = tnd_config_defaults();
    int wrong = 0;

    (void)state;
    assert_true(cfg->gate.confidence_threshold == 0.8);
    for (size_t i = 0; i < sizeof(trigger_rows) / sizeof(*trigger_rows); i++) {
        const trigger_row *r = &trigger_rows[i];
        tnd_skill_result skills[MAX_SKILLS];
        tnd_audit_reply reply = {.skills = skills};
        tnd_trigger_input in = {
            .skills = r->no_reply ? NULL : &reply,
            .required = r->required,
            .changed_lines = r->changed_lines,
            .risky = r->risky,
            .last_confidence = r->has_last ? r->last : -1,
            .ordinal = r->ordinal,
        };
        char why[600];
        bool fired;

        memset(skills, 0, sizeof(skills));
        for (size_t k = 0; k < MAX_SKILLS && r->skills[k].name; k++) {
            skills[k] = (tnd_skill_result){
                .name = (char *)r->skills[k].name,
                .status = r->skills[k].status,
                .required = r->skills[k].required,
                .exit_code = r->skills[k].status == TND_SKILL_FAIL ? 1 : -1,
                .command = (char *)"make",
                .output = (char *)"",
            };
            reply.nskills++;
        }
        set_gate(&cfg->gate, r);
        memset(why, 'x', sizeof(why));
        fired = tnd_review_triggers(why, sizeof(why), &cfg->gate, &in);
        if (fired != r->fired || strcmp(why, r->why) != 0) {
            print_error("row %zu \"%s\":\n  got      %d: %s\n"
                        "  expected %d: %s\n",
                        i, r->rule, fired, why, r->fired, r->why);
            wrong++;
        }
    }
    assert_int_equal(wrong, 0);
    tnd_config_destroy(&cfg);
}

/* ---- risky paths -----------------------------------------------------------
 */

static const char two_files[] =
    "diff --git a/src/util.c b/src/util.c\n"
    "index 1111111..2222222 100644\n"
    "--- a/src/util.c\n"
    "+++ b/src/util.c\n"
    "@@ -1,3 +1,3 @@\n"
    " int a;\n"
    "-int b;\n"
    "+long b;\n"
    " int c;\n"
    "diff --git a/src/auth/login.c b/src/auth/login.c\n"
    "index 3333333..4444444 100644\n"
    "--- a/src/auth/login.c\n"
    "+++ b/src/auth/login.c\n"
    "@@ -10,2 +10,3 @@\n"
    " check(user);\n"
    "+log(user);\n"
    " return ok;\n";

static const char renamed[] =
    "diff --git a/secrets/deploy.pem b/docs/deploy.txt\n"
    "similarity index 100%\n"
    "rename from secrets/deploy.pem\n"
    "rename to docs/deploy.txt\n";

static const char deleted[] = "diff --git a/db/schema.sql b/db/schema.sql\n"
                              "deleted file mode 100644\n"
                              "--- a/db/schema.sql\n"
                              "+++ /dev/null\n"
                              "@@ -1,2 +0,0 @@\n"
                              "-create table t (a int);\n"
                              "-create index i on t (a);\n";

static const char migration[] = "diff --git a/db/migrations/2026/001_init.sql "
                                "b/db/migrations/2026/001_init.sql\n"
                                "new file mode 100644\n"
                                "--- /dev/null\n"
                                "+++ b/db/migrations/2026/001_init.sql\n"
                                "@@ -0,0 +1 @@\n"
                                "+create table users (id int);\n";

/* tnd_review_risky reads the globs only: the cast is safe. */
#define GLOBS(...) ((char *const *)(const char *const[]){__VA_ARGS__, NULL})

/* The risky path of diff under globs, or NULL. */
static const char *risky(char *const *globs, const char *diff)
{
    static char buf[256];
    const char *got;

    memset(buf, 0, sizeof(buf));
    got = tnd_review_risky(buf, sizeof(buf), globs, diff);
    if (got)
        assert_ptr_equal(got, buf);
    return got;
}

static void risky_paths_match_the_globs(void **state)
{
    (void)state;
    assert_string_equal(risky(GLOBS("src/auth/**"), two_files),
                        "src/auth/login.c");
    assert_string_equal(risky(GLOBS("*.pem", "src/auth/*.c"), two_files),
                        "src/auth/login.c");
    /* the first path in the diff, not the first glob */
    assert_string_equal(risky(GLOBS("src/auth/**", "src/*.c"), two_files),
                        "src/util.c");
    assert_null(risky(GLOBS("*.pem", "secrets/**"), two_files));
    /* "*" stays within one component */
    assert_null(risky(GLOBS("src/*"), migration));
    assert_null(risky(GLOBS("*.c"), two_files));
    /* a deleted file is touched too */
    assert_string_equal(risky(GLOBS("db/*.sql"), deleted), "db/schema.sql");
}

/* One file changed, as a diff. Caller frees. */
static char *one_file(const char *path)
{
    return tnd_xasprintf("diff --git a/%s b/%s\n--- a/%s\n+++ b/%s\n"
                         "@@ -1 +1 @@\n-a\n+b\n",
                         path, path, path, path);
}

/* A file that defines the checks: a build or test file by its usual
 * name (gate.check_paths), or one a skill's command names */
static void the_checks_own_files_are_found(void **state)
{
    tnd_config *cfg = tnd_config_defaults();
    char buf[256], *diff;

    (void)state;
    tnd_config_skills_free(cfg);
    cfg->skills = tnd_xcalloc(1, sizeof(*cfg->skills));
    cfg->nskills = 1;
    cfg->skills[0].name = tnd_xstrdup("smoke");
    tnd_config_command_shell(&cfg->skills[0].command,
                             "make && ./scripts/smoke.sh --fast 2>&1");
    diff = one_file("Makefile");
    assert_string_equal(tnd_review_checks(buf, sizeof(buf), cfg, diff),
                        "Makefile, which defines checks (gate.check_paths)");
    free(diff);
    diff = one_file("tests/conftest.py");
    assert_non_null(tnd_review_checks(buf, sizeof(buf), cfg, diff));
    free(diff);
    diff = one_file("scripts/smoke.sh");
    assert_string_equal(tnd_review_checks(buf, sizeof(buf), cfg, diff),
                        "scripts/smoke.sh, which skill smoke's command runs");
    free(diff);
    /* a file the checks do not name, or a name inside another word */
    diff = one_file("src/smoke.sh");
    assert_null(tnd_review_checks(buf, sizeof(buf), cfg, diff));
    free(diff);
    diff = one_file("scripts/smoke");
    assert_null(tnd_review_checks(buf, sizeof(buf), cfg, diff));
    free(diff);
    /* check_paths: [] leaves the commands' own */
    tnd_str_list_free(&cfg->gate.check_paths);
    cfg->gate.check_paths = tnd_xcalloc(1, sizeof(char *));
    diff = one_file("Makefile");
    assert_null(tnd_review_checks(buf, sizeof(buf), cfg, diff));
    free(diff);
    tnd_config_destroy(&cfg);
}

static void risky_with_no_globs_or_no_diff_is_none(void **state)
{
    (void)state;
    assert_null(risky(NULL, two_files));
    assert_null(risky(GLOBS(NULL), two_files));
    assert_null(risky(GLOBS("**"), NULL));
    assert_null(risky(GLOBS("**"), ""));
    assert_null(risky(GLOBS("**"), "not a diff at all\n"));
}

static void risky_sees_both_names_of_a_rename(void **state)
{
    (void)state;
    /* moving a secret out of secrets/ touches secrets/ */
    assert_string_equal(risky(GLOBS("secrets/**"), renamed),
                        "secrets/deploy.pem");
    assert_string_equal(risky(GLOBS("**/*.pem"), renamed),
                        "secrets/deploy.pem");
    /* the new name too; when both match, the new one is named */
    assert_string_equal(risky(GLOBS("docs/*.txt"), renamed), "docs/deploy.txt");
    assert_string_equal(risky(GLOBS("**"), renamed), "docs/deploy.txt");
    assert_null(risky(GLOBS("*.pem", "src/**"), renamed));
}

static void risky_double_star_patterns(void **state)
{
    (void)state;
    /* any depth, zero components included */
    assert_string_equal(risky(GLOBS("**/*.sql"), migration),
                        "db/migrations/2026/001_init.sql");
    assert_string_equal(risky(GLOBS("**/*.sql"), deleted), "db/schema.sql");
    assert_string_equal(risky(GLOBS("db/**/*.sql"), deleted), "db/schema.sql");
    assert_string_equal(risky(GLOBS("db/**"), migration),
                        "db/migrations/2026/001_init.sql");
    assert_string_equal(risky(GLOBS("**"), two_files), "src/util.c");
    assert_string_equal(risky(GLOBS("**/login.c"), two_files),
                        "src/auth/login.c");
    assert_null(risky(GLOBS("**/*.sql"), two_files));
    assert_null(risky(GLOBS("lib/**"), migration));
}

static void risky_path_is_cut_to_the_buffer(void **state)
{
    char buf[8];

    (void)state;
    assert_ptr_equal(
        tnd_review_risky(buf, sizeof(buf), GLOBS("src/auth/**"), two_files),
        buf);
    assert_string_equal(buf, "src/aut");
}

/* ---- changed lines ---------------------------------------------------------
 */

static void changed_lines_count_added_and_removed(void **state)
{
    (void)state;
    /* util.c: -1 +1; login.c: +1. Headers and context do not count. */
    assert_int_equal(tnd_review_changed_lines(two_files), 3);
    assert_int_equal(tnd_review_changed_lines(deleted), 2);
    assert_int_equal(tnd_review_changed_lines(migration), 1);
    /* a pure rename changes no line */
    assert_int_equal(tnd_review_changed_lines(renamed), 0);
    assert_int_equal(tnd_review_changed_lines(""), 0);
    assert_int_equal(tnd_review_changed_lines(NULL), 0);
}

/* The decision does not depend on how much of the reason fits. */
static void a_short_buffer_cuts_the_reason_not_the_decision(void **state)
{
    tnd_config *cfg = tnd_config_defaults();
    tnd_skill_result skill = {.name = (char *)"test",
                              .status = TND_SKILL_FAIL,
                              .required = true,
                              .exit_code = 1,
                              .command = (char *)"make test",
                              .output = (char *)""};
    tnd_audit_reply reply = {.skills = &skill, .nskills = 1};
    tnd_trigger_input in = {.skills = &reply, .last_confidence = -1};
    char why[24];

    (void)state;
    cfg->gate.critique = TND_CRITIQUE_ON_TRIGGER;
    assert_true(tnd_review_triggers(why, sizeof(why), &cfg->gate, &in));
    assert_string_equal(why, "required skill test did");
    tnd_config_destroy(&cfg);
}

/* ---- skills that cannot run at the baseline ----------------------------- */

typedef struct cannot_row {
    tnd_skill_status status;
    int exit_code;
    const char *output;
    const char *why; /* expected: a part of the reason, NULL: it ran */
} cannot_row;

static void cannot_run_reads_the_baseline_as_documented(void **state)
{
    static const cannot_row rows[] = {
        {TND_SKILL_PASS, 0, "ok\n", NULL},
        {TND_SKILL_SKIPPED, -1, "skipped\n", NULL},
        {TND_SKILL_TIMEOUT, -1, "killed\n", NULL},
        {TND_SKILL_ERROR, -1, "cannot run 'mkae'", "could not start"},
        {TND_SKILL_FAIL, 127, "sh: 1: mkae: not found\n", "not found"},
        {TND_SKILL_FAIL, 126, "sh: 1: ./run: Permission denied\n",
         "cannot be executed"},
        {TND_SKILL_FAIL, 2,
         "make: *** No rule to make target 'check'.  Stop.\n",
         "no rule for the target"},
        {TND_SKILL_FAIL, 2,
         "make: *** No rule to make target `check'.  Stop.\n",
         "no rule for the target"},
        /* a bare make in a tree without a Makefile: the model was paid
         * to fix a build that could not start */
        {TND_SKILL_FAIL, 2,
         "make: *** No targets specified and no makefile found.  Stop.\n",
         "no Makefile"},
        /* the project's own breakage: a file a rule needs is missing */
        {TND_SKILL_FAIL, 2,
         "make: *** No rule to make target 'foo.c', needed by 'foo.o'.  "
         "Stop.\n",
         NULL},
        /* a failing test is what a task is for, not a broken config */
        {TND_SKILL_FAIL, 2,
         "FAIL test_x\nmake: *** [Makefile:3: test] "
         "Error 127\n",
         NULL},
        {TND_SKILL_FAIL, 1, "", NULL},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        tnd_skill_result s = {.name = (char *)"test",
                              .status = rows[i].status,
                              .exit_code = rows[i].exit_code,
                              .output = (char *)rows[i].output};
        const char *why = tnd_review_cannot_run(&s);
        if (!rows[i].why && why)
            fail_msg("row %zu: \"%s\" said it cannot run: %s", i,
                     rows[i].output, why);
        if (rows[i].why && (!why || !strstr(why, rows[i].why)))
            fail_msg("row %zu: expected \"%s\", got \"%s\"", i, rows[i].why,
                     why ? why : "(runs)");
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_trigger_fires_as_documented),
        cmocka_unit_test(a_skill_the_change_made_pass_is_a_trigger),
        cmocka_unit_test(cannot_run_reads_the_baseline_as_documented),
        cmocka_unit_test(risky_paths_match_the_globs),
        cmocka_unit_test(the_checks_own_files_are_found),
        cmocka_unit_test(risky_with_no_globs_or_no_diff_is_none),
        cmocka_unit_test(risky_sees_both_names_of_a_rename),
        cmocka_unit_test(risky_double_star_patterns),
        cmocka_unit_test(risky_path_is_cut_to_the_buffer),
        cmocka_unit_test(changed_lines_count_added_and_removed),
        cmocka_unit_test(a_short_buffer_cuts_the_reason_not_the_decision),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
