/* Unit tests for orchestrator/review_merge: a quorum's critiques as
 * one, over members built by hand: all or a majority, the confidence,
 * issues deduplicated and outvoted, summaries and usage, a merged audit
 * that fits the protocol. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/xalloc.h"
#include "orchestrator/review_merge.h"

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(all_one_revise_revises_with_the_lowest_confidence),
        cmocka_unit_test(all_approve_approves_with_the_lowest_confidence),
        cmocka_unit_test(majority_approves_with_the_median),
        cmocka_unit_test(majority_needs_more_than_half),
        cmocka_unit_test(a_member_without_a_critique_does_not_approve),
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
