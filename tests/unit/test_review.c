/* Unit tests for orchestrator/review: when the critique is worth asking
 * for, which paths are risky, and how a quorum's critiques become one.
 *
 * The triggers are one table: each row is what the first phase found
 * (skills, size of the diff, a risky path, the previous critique's
 * confidence, the task's number), the configuration, and whether the
 * critique runs with the whole reason. Then risky paths and changed
 * lines on real diffs, then the merge over members built by hand. */
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
#include "orchestrator/review_merge.h"

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

/* ---- the quorum merge ------------------------------------------------------
 */

/* A member whose critique has this verdict, confidence and summary. */
static void member(tnd_audit_reply *m, tnd_verdict v, double confidence,
                   const char *summary)
{
    memset(m, 0, sizeof(*m));
    m->critique = tnd_xcalloc(1, sizeof(*m->critique));
    m->critique->verdict = v;
    m->critique->confidence = confidence;
    m->critique->summary = tnd_xstrdup(summary);
}

/* A member without a critique; error may be NULL. */
static void no_critique(tnd_audit_reply *m, const char *error)
{
    memset(m, 0, sizeof(*m));
    m->critique_error = error ? tnd_xstrdup(error) : NULL;
}

static void add(tnd_audit_reply *m, tnd_issue_type type, tnd_severity sev,
                const char *file, long line, const char *description,
                const char *evidence)
{
    tnd_critique *c = m->critique;

    c->issues = realloc(c->issues, (c->nissues + 1) * sizeof(*c->issues));
    assert_non_null(c->issues);
    c->issues[c->nissues++] = (tnd_issue){
        .type = type,
        .severity = sev,
        .file = file ? tnd_xstrdup(file) : NULL,
        .line = line,
        .description = tnd_xstrdup(description),
        .evidence = evidence ? tnd_xstrdup(evidence) : NULL,
    };
}

static void score(tnd_audit_reply *m, tnd_criterion_kind k, double s,
                  const char *reason)
{
    m->critique->criteria[k] = (tnd_criterion){
        .present = true, .score = s, .reason = tnd_xstrdup(reason)};
}

static void clear_all(tnd_audit_reply *out, tnd_audit_reply *members, size_t n)
{
    tnd_audit_reply_clear(out);
    for (size_t i = 0; i < n; i++)
        tnd_audit_reply_clear(&members[i]);
}

static void all_one_revise_revises_with_the_lowest_confidence(void **state)
{
    tnd_audit_reply m[3], out = {0};

    (void)state;
    member(&m[0], TND_VERDICT_APPROVE, 0.9, "fine");
    member(&m[1], TND_VERDICT_REVISE, 0.95, "a bug");
    member(&m[2], TND_VERDICT_APPROVE, 0.85, "ok");
    tnd_review_merge(&out, m, 3, false);
    assert_non_null(out.critique);
    assert_null(out.critique_error);
    assert_int_equal(out.critique->verdict, TND_VERDICT_REVISE);
    assert_true(out.critique->confidence == 0.85);
    assert_string_equal(out.critique->summary,
                        "2 of 3 reviewers approve (quorum: all): reviewer 1: "
                        "approve 0.90: fine; reviewer 2: revise 0.95: a bug; "
                        "reviewer 3: approve 0.85: ok");
    assert_int_equal(out.critique->nissues, 0);
    clear_all(&out, m, 3);
}

static void all_approve_approves_with_the_lowest_confidence(void **state)
{
    tnd_audit_reply m[3], out = {0};

    (void)state;
    member(&m[0], TND_VERDICT_APPROVE, 0.9, "a");
    member(&m[1], TND_VERDICT_APPROVE, 0.82, "b");
    member(&m[2], TND_VERDICT_APPROVE, 0.97, "c");
    tnd_review_merge(&out, m, 3, false);
    assert_int_equal(out.critique->verdict, TND_VERDICT_APPROVE);
    assert_true(out.critique->confidence == 0.82);
    assert_true(strncmp(out.critique->summary,
                        "3 of 3 reviewers approve (quorum: all): ", 40) == 0);
    clear_all(&out, m, 3);
}

static void majority_approves_with_the_median(void **state)
{
    tnd_audit_reply m[3], out = {0};

    (void)state;
    member(&m[0], TND_VERDICT_APPROVE, 0.6, "a");
    member(&m[1], TND_VERDICT_REVISE, 0.9, "b");
    member(&m[2], TND_VERDICT_APPROVE, 0.8, "c");
    tnd_review_merge(&out, m, 3, true);
    assert_int_equal(out.critique->verdict, TND_VERDICT_APPROVE);
    assert_true(out.critique->confidence == 0.8);
    assert_string_equal(out.critique->summary,
                        "2 of 3 reviewers approve (quorum: majority): "
                        "reviewer 1: approve 0.60: a; reviewer 2: revise "
                        "0.90: b; reviewer 3: approve 0.80: c");
    clear_all(&out, m, 3);
}

static void majority_needs_more_than_half(void **state)
{
    tnd_audit_reply m[4], out = {0};

    (void)state;
    /* 1 of 2: half is not a majority; the median of two is the lower */
    member(&m[0], TND_VERDICT_APPROVE, 0.9, "a");
    member(&m[1], TND_VERDICT_REVISE, 0.7, "b");
    tnd_review_merge(&out, m, 2, true);
    assert_int_equal(out.critique->verdict, TND_VERDICT_REVISE);
    assert_true(out.critique->confidence == 0.7);
    assert_true(strncmp(out.critique->summary,
                        "1 of 2 reviewers approve (quorum: majority)",
                        43) == 0);
    clear_all(&out, m, 2);

    /* 2 of 4 neither */
    member(&m[0], TND_VERDICT_APPROVE, 0.9, "a");
    member(&m[1], TND_VERDICT_REVISE, 0.7, "b");
    member(&m[2], TND_VERDICT_APPROVE, 0.95, "c");
    member(&m[3], TND_VERDICT_REVISE, 0.6, "d");
    tnd_review_merge(&out, m, 4, true);
    assert_int_equal(out.critique->verdict, TND_VERDICT_REVISE);
    assert_true(out.critique->confidence == 0.7);
    clear_all(&out, m, 4);

    /* 3 of 4 is */
    member(&m[0], TND_VERDICT_APPROVE, 0.9, "a");
    member(&m[1], TND_VERDICT_APPROVE, 0.7, "b");
    member(&m[2], TND_VERDICT_APPROVE, 0.95, "c");
    member(&m[3], TND_VERDICT_REVISE, 0.6, "d");
    tnd_review_merge(&out, m, 4, true);
    assert_int_equal(out.critique->verdict, TND_VERDICT_APPROVE);
    assert_true(out.critique->confidence == 0.7);
    clear_all(&out, m, 4);
}

static void a_member_without_a_critique_does_not_approve(void **state)
{
    tnd_audit_reply m[3], out = {0};

    (void)state;
    /* all: one missing critique blocks; the others' lowest confidence */
    member(&m[0], TND_VERDICT_APPROVE, 0.9, "a");
    no_critique(&m[1], "the model gave no JSON");
    member(&m[2], TND_VERDICT_APPROVE, 0.85, "c");
    tnd_review_merge(&out, m, 3, false);
    assert_non_null(out.critique);
    assert_null(out.critique_error);
    assert_int_equal(out.critique->verdict, TND_VERDICT_REVISE);
    assert_true(out.critique->confidence == 0.85);
    assert_string_equal(out.critique->summary,
                        "2 of 3 reviewers approve (quorum: all): reviewer 1: "
                        "approve 0.90: a; reviewer 2: no valid critique (the "
                        "model gave no JSON); reviewer 3: approve 0.85: c");
    clear_all(&out, m, 3);

    /* majority: 2 of 3 still carry it; the median of the valid two */
    member(&m[0], TND_VERDICT_APPROVE, 0.9, "a");
    no_critique(&m[1], NULL);
    member(&m[2], TND_VERDICT_APPROVE, 0.85, "c");
    tnd_review_merge(&out, m, 3, true);
    assert_int_equal(out.critique->verdict, TND_VERDICT_APPROVE);
    assert_true(out.critique->confidence == 0.85);
    assert_non_null(
        strstr(out.critique->summary,
               "; reviewer 2: no valid critique (none was given);"));
    clear_all(&out, m, 3);

    /* majority: 1 approving of 2 with one silent is not more than half */
    member(&m[0], TND_VERDICT_APPROVE, 0.9, "a");
    no_critique(&m[1], "timeout");
    tnd_review_merge(&out, m, 2, true);
    assert_int_equal(out.critique->verdict, TND_VERDICT_REVISE);
    assert_true(out.critique->confidence == 0.9);
    clear_all(&out, m, 2);

    /* the first member silent: no separator before it */
    no_critique(&m[0], "timeout");
    member(&m[1], TND_VERDICT_APPROVE, 0.9, "b");
    tnd_review_merge(&out, m, 2, false);
    assert_string_equal(out.critique->summary,
                        "1 of 2 reviewers approve (quorum: all): reviewer 1: "
                        "no valid critique (timeout); reviewer 2: approve "
                        "0.90: b");
    clear_all(&out, m, 2);
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

/* A member's long summary is cut, not dropped: every member is named. */
static void long_member_summaries_are_cut_not_dropped(void **state)
{
    tnd_audit_reply m[2], out = {0};
    char *longer = tnd_xmalloc(5001);

    (void)state;
    memset(longer, 'y', 5000);
    longer[5000] = '\0';
    member(&m[0], TND_VERDICT_APPROVE, 0.9, longer);
    member(&m[1], TND_VERDICT_APPROVE, 0.9, "short");
    tnd_review_merge(&out, m, 2, false);
    assert_non_null(strstr(out.critique->summary, "reviewer 1: approve 0.90"));
    assert_non_null(
        strstr(out.critique->summary, "; reviewer 2: approve 0.90: short"));
    assert_true(strlen(out.critique->summary) < 2000);
    clear_all(&out, m, 2);
    free(longer);
}

static void no_member_with_a_critique_gives_none(void **state)
{
    tnd_audit_reply m[2], out = {0};

    (void)state;
    no_critique(&m[0], "timeout");
    no_critique(&m[1], NULL);
    m[0].usage.calls = 2;
    tnd_review_merge(&out, m, 2, true);
    assert_null(out.critique);
    assert_string_equal(out.critique_error,
                        "no reviewer gave a valid critique: reviewer 1: no "
                        "valid critique (timeout); reviewer 2: no valid "
                        "critique (none was given)");
    assert_int_equal(out.usage.calls, 2);
    clear_all(&out, m, 2);
}

static void issues_are_deduplicated_keeping_the_gravest(void **state)
{
    tnd_audit_reply m[3], out = {0};
    const tnd_issue *is;

    (void)state;
    member(&m[0], TND_VERDICT_APPROVE, 0.9, "a");
    add(&m[0], TND_ISSUE_INCORRECT, TND_SEVERITY_MINOR, "src/a.c", 10,
        "looks odd", NULL);
    add(&m[0], TND_ISSUE_SAFETY, TND_SEVERITY_CRITICAL, "src/b.c", 3,
        "writes past the end", "buf[n] = 0");
    member(&m[1], TND_VERDICT_REVISE, 0.8, "b");
    add(&m[1], TND_ISSUE_INCORRECT, TND_SEVERITY_MAJOR, "src/a.c", 10,
        "off by one", "i <= n");
    add(&m[1], TND_ISSUE_SAFETY, TND_SEVERITY_MINOR, "src/b.c", 3, "a nit",
        "x");
    member(&m[2], TND_VERDICT_REVISE, 0.7, "c");
    add(&m[2], TND_ISSUE_INCORRECT, TND_SEVERITY_MAJOR, "src/a.c", 10,
        "the same, in other words", NULL);
    tnd_review_merge(&out, m, 3, false);
    assert_int_equal(out.critique->nissues, 2);

    /* a graver reading replaces the milder one, with its own words */
    is = &out.critique->issues[0];
    assert_int_equal(is->type, TND_ISSUE_INCORRECT);
    assert_int_equal(is->severity, TND_SEVERITY_MAJOR);
    assert_string_equal(is->file, "src/a.c");
    assert_int_equal(is->line, 10);
    assert_string_equal(is->description, "off by one");
    assert_string_equal(is->evidence, "i <= n");
    assert_null(is->suggested_fix);

    /* a milder one later does not */
    is = &out.critique->issues[1];
    assert_int_equal(is->severity, TND_SEVERITY_CRITICAL);
    assert_string_equal(is->description, "writes past the end");
    assert_string_equal(is->evidence, "buf[n] = 0");

    /* the members are left alone */
    assert_int_equal(m[0].critique->issues[0].severity, TND_SEVERITY_MINOR);
    assert_string_equal(m[0].critique->issues[0].description, "looks odd");
    assert_int_equal(m[1].critique->nissues, 2);
    clear_all(&out, m, 3);
}

static void issues_at_other_places_or_of_other_types_stay_apart(void **state)
{
    tnd_audit_reply m[2], out = {0};
    const tnd_issue *is;

    (void)state;
    member(&m[0], TND_VERDICT_REVISE, 0.9, "a");
    add(&m[0], TND_ISSUE_INCORRECT, TND_SEVERITY_MAJOR, "a.c", 10, "one", NULL);
    add(&m[0], TND_ISSUE_MISSING, TND_SEVERITY_MINOR, NULL, 0, "no test", NULL);
    member(&m[1], TND_VERDICT_REVISE, 0.9, "b");
    add(&m[1], TND_ISSUE_STYLE, TND_SEVERITY_MINOR, "a.c", 10, "type", NULL);
    add(&m[1], TND_ISSUE_INCORRECT, TND_SEVERITY_MINOR, "a.c", 11, "line",
        NULL);
    add(&m[1], TND_ISSUE_INCORRECT, TND_SEVERITY_MINOR, "b.c", 10, "file",
        NULL);
    /* no file at both: the same place */
    add(&m[1], TND_ISSUE_MISSING, TND_SEVERITY_MAJOR, NULL, 0, "no test at all",
        NULL);
    /* no file against a file: not the same place */
    add(&m[1], TND_ISSUE_MISSING, TND_SEVERITY_MINOR, "a.c", 0, "in a.c", NULL);
    tnd_review_merge(&out, m, 2, false);
    assert_int_equal(out.critique->nissues, 6);
    is = out.critique->issues;
    assert_string_equal(is[0].description, "one");
    assert_null(is[1].file);
    assert_int_equal(is[1].severity, TND_SEVERITY_MAJOR);
    assert_string_equal(is[1].description, "no test at all");
    assert_string_equal(is[2].description, "type");
    assert_string_equal(is[3].description, "line");
    assert_string_equal(is[4].description, "file");
    assert_string_equal(is[5].description, "in a.c");
    assert_string_equal(is[5].file, "a.c");
    clear_all(&out, m, 2);
}

/* Under majority, an issue raised by no more than half of the members
 * is outvoted: kept as evidence, but minor, and saying so. */
static void majority_outvotes_a_minority_issue(void **state)
{
    tnd_audit_reply m[4], out = {0};
    const tnd_issue *is;

    (void)state;
    /* one dissent's major issue does not block what two approve */
    member(&m[0], TND_VERDICT_APPROVE, 0.9, "a");
    member(&m[1], TND_VERDICT_APPROVE, 0.85, "b");
    member(&m[2], TND_VERDICT_REVISE, 0.9, "c");
    add(&m[2], TND_ISSUE_INCORRECT, TND_SEVERITY_MAJOR, "src/a.c", 7,
        "off by one", "i <= n");
    add(&m[2], TND_ISSUE_STYLE, TND_SEVERITY_MINOR, "src/a.c", 9, "naming",
        NULL);
    tnd_review_merge(&out, m, 3, true);
    assert_int_equal(out.critique->verdict, TND_VERDICT_APPROVE);
    assert_int_equal(out.critique->nissues, 2);
    is = &out.critique->issues[0];
    assert_int_equal(is->severity, TND_SEVERITY_MINOR);
    assert_string_equal(is->description,
                        "off by one (major, raised by 1 of 3 reviewers: "
                        "outvoted)");
    assert_string_equal(is->evidence, "i <= n");
    /* a minor issue stays as it was */
    assert_string_equal(out.critique->issues[1].description, "naming");
    /* the member's own issue is untouched */
    assert_int_equal(m[2].critique->issues[0].severity, TND_SEVERITY_MAJOR);
    assert_string_equal(m[2].critique->issues[0].description, "off by one");
    clear_all(&out, m, 3);

    /* raised by two of three: the majority's, it stays major (the
     * gravest reading); a member naming it twice counts once */
    member(&m[0], TND_VERDICT_APPROVE, 0.9, "a");
    add(&m[0], TND_ISSUE_SAFETY, TND_SEVERITY_MINOR, "b.c", 3, "unchecked",
        NULL);
    member(&m[1], TND_VERDICT_REVISE, 0.8, "b");
    add(&m[1], TND_ISSUE_SAFETY, TND_SEVERITY_CRITICAL, "b.c", 3, "overflow",
        NULL);
    member(&m[2], TND_VERDICT_APPROVE, 0.85, "c");
    add(&m[2], TND_ISSUE_INCORRECT, TND_SEVERITY_MAJOR, "c.c", 1, "twice",
        NULL);
    add(&m[2], TND_ISSUE_INCORRECT, TND_SEVERITY_MAJOR, "c.c", 1, "again",
        NULL);
    tnd_review_merge(&out, m, 3, true);
    assert_int_equal(out.critique->nissues, 2);
    assert_int_equal(out.critique->issues[0].severity, TND_SEVERITY_CRITICAL);
    assert_string_equal(out.critique->issues[0].description, "overflow");
    assert_int_equal(out.critique->issues[1].severity, TND_SEVERITY_MINOR);
    assert_string_equal(out.critique->issues[1].description,
                        "twice (major, raised by 1 of 3 reviewers: "
                        "outvoted)");
    clear_all(&out, m, 3);

    /* half is not more than half; a silent member counts among n */
    member(&m[0], TND_VERDICT_REVISE, 0.9, "a");
    add(&m[0], TND_ISSUE_MISSING, TND_SEVERITY_MAJOR, NULL, 0, "no test", NULL);
    member(&m[1], TND_VERDICT_REVISE, 0.9, "b");
    add(&m[1], TND_ISSUE_MISSING, TND_SEVERITY_MAJOR, NULL, 0, "no test", NULL);
    member(&m[2], TND_VERDICT_APPROVE, 0.9, "c");
    no_critique(&m[3], "timeout");
    tnd_review_merge(&out, m, 4, true);
    assert_int_equal(out.critique->nissues, 1);
    assert_int_equal(out.critique->issues[0].severity, TND_SEVERITY_MINOR);
    assert_string_equal(out.critique->issues[0].description,
                        "no test (major, raised by 2 of 4 reviewers: "
                        "outvoted)");
    clear_all(&out, m, 4);

    /* quorum all outvotes nothing */
    member(&m[0], TND_VERDICT_APPROVE, 0.9, "a");
    member(&m[1], TND_VERDICT_APPROVE, 0.9, "b");
    member(&m[2], TND_VERDICT_REVISE, 0.9, "c");
    add(&m[2], TND_ISSUE_INCORRECT, TND_SEVERITY_MAJOR, "a.c", 7, "bug", NULL);
    tnd_review_merge(&out, m, 3, false);
    assert_int_equal(out.critique->issues[0].severity, TND_SEVERITY_MAJOR);
    assert_string_equal(out.critique->issues[0].description, "bug");
    clear_all(&out, m, 3);
}

static void usage_is_summed(void **state)
{
    tnd_audit_reply m[3], out = {0};

    (void)state;
    member(&m[0], TND_VERDICT_APPROVE, 0.9, "a");
    m[0].usage = (tnd_usage){.calls = 1,
                             .prompt_tokens = 1000,
                             .completion_tokens = 200,
                             .latency_ms = 1500,
                             .retries = 1};
    member(&m[1], TND_VERDICT_APPROVE, 0.9, "b");
    m[1].usage = (tnd_usage){.calls = 2,
                             .prompt_tokens = 1100,
                             .completion_tokens = 300,
                             .estimated = true,
                             .latency_ms = 900};
    no_critique(&m[2], "unparseable");
    m[2].usage = (tnd_usage){.calls = 2, .prompt_tokens = 50};
    /* out's own usage is replaced, not added to */
    out.usage = (tnd_usage){.calls = 99, .prompt_tokens = 99};
    tnd_review_merge(&out, m, 3, true);
    assert_int_equal(out.usage.calls, 5);
    assert_int_equal(out.usage.prompt_tokens, 2150);
    assert_int_equal(out.usage.completion_tokens, 500);
    assert_true(out.usage.estimated);
    assert_int_equal(out.usage.latency_ms, 2400);
    assert_int_equal(out.usage.retries, 1);
    clear_all(&out, m, 3);
}

static void criteria_take_the_lowest_score(void **state)
{
    tnd_audit_reply m[3], out = {0};
    const tnd_criterion *cr;

    (void)state;
    member(&m[0], TND_VERDICT_APPROVE, 0.9, "a");
    score(&m[0], TND_CRITERION_CORRECTNESS, 0.9, "looks right");
    score(&m[0], TND_CRITERION_SAFETY, 0.3, "unchecked index");
    member(&m[1], TND_VERDICT_APPROVE, 0.9, "b");
    score(&m[1], TND_CRITERION_CORRECTNESS, 0.4, "misses n = 0");
    score(&m[1], TND_CRITERION_SAFETY, 0.8, "fine");
    member(&m[2], TND_VERDICT_APPROVE, 0.9, "c");
    score(&m[2], TND_CRITERION_CORRECTNESS, 0.6, "mostly");
    score(&m[2], TND_CRITERION_QUALITY, 0.7, "readable");
    tnd_review_merge(&out, m, 3, false);
    cr = out.critique->criteria;
    assert_true(cr[TND_CRITERION_CORRECTNESS].present);
    assert_true(cr[TND_CRITERION_CORRECTNESS].score == 0.4);
    assert_string_equal(cr[TND_CRITERION_CORRECTNESS].reason, "misses n = 0");
    assert_true(cr[TND_CRITERION_SAFETY].score == 0.3);
    assert_string_equal(cr[TND_CRITERION_SAFETY].reason, "unchecked index");
    /* scored by one member only: that member's */
    assert_true(cr[TND_CRITERION_QUALITY].present);
    assert_true(cr[TND_CRITERION_QUALITY].score == 0.7);
    /* by none: absent */
    assert_false(cr[TND_CRITERION_COMPLETENESS].present);
    assert_null(cr[TND_CRITERION_COMPLETENESS].reason);
    clear_all(&out, m, 3);
}

/* out's earlier critique and error are replaced (freed: ASan and
 * valgrind see a leak otherwise); its skills are the caller's. */
static void merge_replaces_only_the_critique_part_of_out(void **state)
{
    tnd_audit_reply m[2], out = {0};

    (void)state;
    out.task_id = tnd_xstrdup("t-1");
    out.skills = tnd_xcalloc(1, sizeof(*out.skills));
    out.skills[0].name = tnd_xstrdup("build");
    out.nskills = 1;
    out.critique_error = tnd_xstrdup("not asked for yet");
    member(&m[0], TND_VERDICT_APPROVE, 0.9, "a");
    member(&m[1], TND_VERDICT_APPROVE, 0.8, "b");
    tnd_review_merge(&out, m, 2, false);
    assert_null(out.critique_error);
    assert_non_null(out.critique);
    assert_string_equal(out.task_id, "t-1");
    assert_int_equal(out.nskills, 1);
    assert_string_equal(out.skills[0].name, "build");

    /* merging again replaces the merged critique */
    tnd_critique_destroy(&m[1].critique);
    m[1].critique_error = tnd_xstrdup("gone");
    tnd_review_merge(&out, m, 2, false);
    assert_int_equal(out.critique->verdict, TND_VERDICT_REVISE);
    assert_true(out.critique->confidence == 0.9);
    clear_all(&out, m, 2);
}

/* The merged audit is journaled and read back (a resume, an answer to
 * an escalation) under the protocol's limits, so it must fit them: the
 * members' issues add up past TND_BODY_MAX_ISSUES, and an outvoted
 * description at the limit grows by its note. Before, both were
 * journaled as they were, and `tandem approve` failed with "bad audit
 * reply: ... more than the limit". */
static void merged_audit_fits_the_protocol(void **state)
{
    tnd_audit_reply m[3], out = {0}, back;
    char *big = tnd_xmalloc(TND_BODY_MAX_NOTE + 1), *body;
    size_t len, majors = 0;

    (void)state;
    /* two members with as many distinct issues as a critique may hold,
     * a major one among the last */
    member(&m[0], TND_VERDICT_APPROVE, 0.9, "a");
    member(&m[1], TND_VERDICT_REVISE, 0.9, "b");
    for (long i = 0; i < TND_BODY_MAX_ISSUES; i++) {
        add(&m[0], TND_ISSUE_STYLE, TND_SEVERITY_MINOR, "a.c", i + 1, "nit",
            NULL);
        add(&m[1], TND_ISSUE_STYLE,
            i == TND_BODY_MAX_ISSUES - 1 ? TND_SEVERITY_MAJOR
                                         : TND_SEVERITY_MINOR,
            "b.c", i + 1, "nit", NULL);
    }
    out.task_id = tnd_xstrdup("t1");
    out.attempt = 1;
    tnd_review_merge(&out, m, 2, false);
    assert_int_equal(out.critique->nissues, TND_BODY_MAX_ISSUES);
    for (size_t i = 0; i < out.critique->nissues; i++)
        majors += out.critique->issues[i].severity == TND_SEVERITY_MAJOR;
    assert_int_equal(majors, 1); /* what blocks the change stays */
    assert_non_null(strstr(out.critique->summary, "200 issues left out"));
    body = tnd_audit_reply_encode(&out, &len);
    assert_int_equal(tnd_audit_reply_decode(&back, body, len), 0);
    tnd_audit_reply_clear(&back);
    free(body);
    clear_all(&out, m, 2);

    /* an outvoted description at the limit */
    memset(big, 'x', TND_BODY_MAX_NOTE);
    big[TND_BODY_MAX_NOTE] = '\0';
    member(&m[0], TND_VERDICT_APPROVE, 0.9, "a");
    member(&m[1], TND_VERDICT_APPROVE, 0.9, "b");
    member(&m[2], TND_VERDICT_APPROVE, 0.9, "c");
    add(&m[2], TND_ISSUE_INCORRECT, TND_SEVERITY_MAJOR, NULL, 0, big, "e");
    out.task_id = tnd_xstrdup("t1");
    out.attempt = 1;
    tnd_review_merge(&out, m, 3, true);
    assert_int_equal(out.critique->issues[0].severity, TND_SEVERITY_MINOR);
    assert_true(strlen(out.critique->issues[0].description) <=
                TND_BODY_MAX_NOTE);
    assert_non_null(strstr(out.critique->issues[0].description,
                           "(major, raised by 1 of 3 reviewers: outvoted)"));
    body = tnd_audit_reply_encode(&out, &len);
    assert_int_equal(tnd_audit_reply_decode(&back, body, len), 0);
    tnd_audit_reply_clear(&back);
    free(body);
    clear_all(&out, m, 3);
    free(big);
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
        cmocka_unit_test(all_one_revise_revises_with_the_lowest_confidence),
        cmocka_unit_test(all_approve_approves_with_the_lowest_confidence),
        cmocka_unit_test(majority_approves_with_the_median),
        cmocka_unit_test(majority_needs_more_than_half),
        cmocka_unit_test(a_member_without_a_critique_does_not_approve),
        cmocka_unit_test(a_short_buffer_cuts_the_reason_not_the_decision),
        cmocka_unit_test(long_member_summaries_are_cut_not_dropped),
        cmocka_unit_test(no_member_with_a_critique_gives_none),
        cmocka_unit_test(issues_are_deduplicated_keeping_the_gravest),
        cmocka_unit_test(issues_at_other_places_or_of_other_types_stay_apart),
        cmocka_unit_test(majority_outvotes_a_minority_issue),
        cmocka_unit_test(usage_is_summed),
        cmocka_unit_test(criteria_take_the_lowest_score),
        cmocka_unit_test(merge_replaces_only_the_critique_part_of_out),
        cmocka_unit_test(merged_audit_fits_the_protocol),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
