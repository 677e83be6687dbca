/* Unit tests for orchestrator/findings: a review's findings in the
 * formats CI reads. Each writer is checked byte for byte on a fixed
 * list (an issue at a file and line, a skill at a file, line and
 * column, a finding with no place), then on escaping, non-ASCII and
 * invalid text; the list built from an attempt is checked rule by rule;
 * fingerprints stay put when lines move. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "orchestrator/findings.h"
#include "proto/json.h"

/* The fixed list: a major issue, a required skill that failed, and the
 * gate's reason with no file. */
static tnd_findings *fixed(void)
{
    tnd_findings *fs = tnd_findings_new();
    tnd_finding issue = {
        .rule = "issue/incorrect",
        .level = TND_FINDING_WARNING,
        .title = "tandem: incorrect (major)",
        .message = "The division truncates.\nSuggested fix: convert first.",
        .file = "./stats.c",
        .line = 11,
    };
    tnd_finding skill = {
        .rule = "skill/test",
        .level = TND_FINDING_ERROR,
        .title = "tandem: test failed",
        .message = "test (`make test`): fail, exit 2\nFAIL mean",
        .file = "test_stats.c",
        .line = 30,
        .col = 5,
    };
    tnd_finding gate = {
        .rule = "gate",
        .level = TND_FINDING_NOTE,
        .title = "tandem: needs a person",
        .message = "it touches stats.c (gate.risk_paths)",
    };

    tnd_findings_add(fs, &issue);
    tnd_findings_add(fs, &skill);
    tnd_findings_add(fs, &gate);
    return fs;
}

/* Compare, printing the whole text when it differs. */
static void expect_text(const char *got, const char *want)
{
    if (strcmp(got, want) != 0)
        fprintf(stderr, "--- got:\n%s--- want:\n%s---\n", got, want);
    assert_string_equal(got, want);
}

static json_object *parse(const char *text)
{
    json_object *o = NULL;

    assert_int_equal(tnd_json_parse(&o, text, strlen(text)), 0);
    return o;
}

/* The results (every field a finding gives) byte for byte, and the
 * document around them: the schema, the version, the tool, the rules
 * with a stable id per issue type, then the skills that failed. */
static void sarif_is_exact(void **state)
{
    tnd_findings *fs = fixed();
    char *text = tnd_findings_render(fs, TND_FINDINGS_SARIF);
    json_object *o = parse(text), *run, *driver, *rules, *results;
    static const char *const ids[] = {"issue/missing",
                                      "issue/unsupported",
                                      "issue/incorrect",
                                      "issue/superfluous",
                                      "issue/safety",
                                      "issue/style",
                                      "gate",
                                      "skill/test"};
    char *got;

    (void)state;
    assert_string_equal(text + strlen(text) - 2, "}\n");
    assert_string_equal(tnd_json_str_or(o, "$schema", ""),
                        "https://docs.oasis-open.org/sarif/sarif/v2.1.0/"
                        "errata01/os/schemas/sarif-schema-2.1.0.json");
    assert_string_equal(tnd_json_str_or(o, "version", ""), "2.1.0");
    assert_int_equal(json_object_array_length(tnd_json_field(o, "runs")), 1);
    run = json_object_array_get_idx(tnd_json_field(o, "runs"), 0);
    driver = tnd_json_field(tnd_json_field(run, "tool"), "driver");
    assert_string_equal(tnd_json_str_or(driver, "name", ""), "tandem");
    assert_string_equal(tnd_json_str_or(driver, "version", ""), TND_VERSION);
    assert_non_null(tnd_json_str_or(driver, "informationUri", NULL));
    rules = tnd_json_field(driver, "rules");
    assert_int_equal(json_object_array_length(rules), 8);
    for (size_t i = 0; i < 8; i++) {
        json_object *r = json_object_array_get_idx(rules, i);
        assert_string_equal(tnd_json_str_or(r, "id", ""), ids[i]);
        assert_non_null(tnd_json_str_or(tnd_json_field(r, "shortDescription"),
                                        "text", NULL));
    }
    got = tnd_json_dump(tnd_json_field(run, "invocations"), NULL);
    expect_text(got, "[{\"executionSuccessful\":true}]");
    free(got);

    results = tnd_json_field(run, "results");
    got = tnd_json_dump(results, NULL);
    expect_text(
        got,
        "[{\"ruleId\":\"issue/incorrect\",\"ruleIndex\":2,\"level\":\"warning\","
        "\"message\":{\"text\":\"The division truncates.\\nSuggested fix: "
        "convert first.\"},\"locations\":[{\"physicalLocation\":{"
        "\"artifactLocation\":{\"uri\":\"stats.c\",\"uriBaseId\":\"%SRCROOT%\"},"
        "\"region\":{\"startLine\":11}}}],\"partialFingerprints\":{"
        "\"tandemFindingHash/v1\":\"dcca8e252049f1c1\"}},"
        "{\"ruleId\":\"skill/test\",\"ruleIndex\":7,\"level\":\"error\","
        "\"message\":{\"text\":\"test (`make test`): fail, exit 2\\nFAIL "
        "mean\"},\"locations\":[{\"physicalLocation\":{\"artifactLocation\":{"
        "\"uri\":\"test_stats.c\",\"uriBaseId\":\"%SRCROOT%\"},\"region\":{"
        "\"startLine\":30,\"startColumn\":5}}}],\"partialFingerprints\":{"
        "\"tandemFindingHash/v1\":\"5e4c3a83b6c466f2\"}},"
        "{\"ruleId\":\"gate\",\"ruleIndex\":6,\"level\":\"note\",\"message\":{"
        "\"text\":\"it touches stats.c (gate.risk_paths)\"},"
        "\"partialFingerprints\":{\"tandemFindingHash/v1\":"
        "\"8673521c94cc943e\"}}]");
    free(got);
    json_object_put(o);
    free(text);
    tnd_findings_destroy(&fs);
}

static void rdjsonl_is_exact(void **state)
{
    tnd_findings *fs = fixed();
    char *text = tnd_findings_render(fs, TND_FINDINGS_RDJSONL);

    (void)state;
    expect_text(
        text,
        "{\"message\":\"The division truncates.\\nSuggested fix: convert "
        "first.\",\"location\":{\"path\":\"stats.c\",\"range\":{\"start\":{"
        "\"line\":11}}},\"severity\":\"WARNING\",\"source\":{\"name\":"
        "\"tandem\"},\"code\":{\"value\":\"issue/incorrect\"}}\n"
        "{\"message\":\"test (`make test`): fail, exit 2\\nFAIL mean\","
        "\"location\":{\"path\":\"test_stats.c\",\"range\":{\"start\":{"
        "\"line\":30,\"column\":5}}},\"severity\":\"ERROR\",\"source\":{"
        "\"name\":\"tandem\"},\"code\":{\"value\":\"skill/test\"}}\n"
        "{\"message\":\"it touches stats.c (gate.risk_paths)\",\"severity\":"
        "\"INFO\",\"source\":{\"name\":\"tandem\"},\"code\":{\"value\":"
        "\"gate\"}}\n");
    free(text);
    tnd_findings_destroy(&fs);
}

static void github_is_exact(void **state)
{
    tnd_findings *fs = fixed();
    char *text = tnd_findings_render(fs, TND_FINDINGS_GITHUB);

    (void)state;
    expect_text(text,
                "::warning file=stats.c,line=11,title=tandem%3A incorrect "
                "(major)::The division truncates.%0ASuggested fix: convert "
                "first.\n"
                "::error file=test_stats.c,line=30,col=5,title=tandem%3A test "
                "failed::test (`make test`): fail, exit 2%0AFAIL mean\n"
                "::notice title=tandem%3A needs a person::it touches stats.c "
                "(gate.risk_paths)\n");
    free(text);
    tnd_findings_destroy(&fs);
}

/* GitHub: '%', CR and LF in a message; also ':' and ',' in properties
 * (the file and the title), as @actions/core escapes them. */
static void github_escapes_what_github_documents(void **state)
{
    tnd_findings *fs = tnd_findings_new();
    tnd_finding f = {
        .rule = "issue/style",
        .level = TND_FINDING_NOTE,
        .title = "a: b, 100%",
        .message = "50% done: a, b\r\nnext::line",
        .file = "dir,x/a:b%.c",
        .line = 3,
    };
    char *text;

    (void)state;
    tnd_findings_add(fs, &f);
    text = tnd_findings_render(fs, TND_FINDINGS_GITHUB);
    expect_text(text, "::notice file=dir%2Cx/a%3Ab%25.c,line=3,title=a%3A "
                      "b%2C 100%25::50%25 done: a, b%0D%0Anext::line\n");
    free(text);
    tnd_findings_destroy(&fs);
}

/* A skill's output in a message carries no escape code to the log that
 * shows it: controls other than the newlines GitHub encodes become '?'
 * (a review found them passed through). */
static void github_drops_control_characters(void **state)
{
    tnd_findings *fs = tnd_findings_new();
    tnd_finding f = {
        .rule = "skill/build",
        .level = TND_FINDING_ERROR,
        .title = "build \033[31mred",
        .message = "bad \033]0;PWNED\007 \033[2J\tend",
    };
    char *text;

    (void)state;
    tnd_findings_add(fs, &f);
    text = tnd_findings_render(fs, TND_FINDINGS_GITHUB);
    expect_text(text,
                "::error title=build ?[31mred::bad ?]0;PWNED? ?[2J\tend\n");
    free(text);
    tnd_findings_destroy(&fs);
}

/* Text that is not ASCII passes through as UTF-8 (a URI gets it
 * percent-encoded); bytes that are not UTF-8 become U+FFFD, so no
 * writer puts out text a reader refuses. */
static void non_ascii_and_invalid_text(void **state)
{
    tnd_findings *fs = tnd_findings_new();
    tnd_finding f = {
        .rule = "issue/missing",
        .level = TND_FINDING_ERROR,
        .title = "tandem: manque (critique) \xe2\x9c\x97",
        .message = "Le cas \xc2\xab vide \xc2\xbb n'est pas g\xc3\xa9r\xc3\xa9 "
                   "\xff.",
        .file = "src/na\xc3\xafve d\xc3\xa9j\xc3\xa0.c",
        .line = 7,
    };
    json_object *o;
    char *text, *got;

    (void)state;
    tnd_findings_add(fs, &f);

    text = tnd_findings_render(fs, TND_FINDINGS_GITHUB);
    expect_text(text, "::error file=src/na\xc3\xafve d\xc3\xa9j\xc3\xa0.c,"
                      "line=7,title=tandem%3A manque (critique) \xe2\x9c\x97"
                      "::Le cas \xc2\xab vide \xc2\xbb n'est pas "
                      "g\xc3\xa9r\xc3\xa9 \xef\xbf\xbd.\n");
    free(text);

    text = tnd_findings_render(fs, TND_FINDINGS_RDJSONL);
    expect_text(text, "{\"message\":\"Le cas \xc2\xab vide \xc2\xbb n'est pas "
                      "g\xc3\xa9r\xc3\xa9 \xef\xbf\xbd.\",\"location\":{"
                      "\"path\":\"src/na\xc3\xafve d\xc3\xa9j\xc3\xa0.c\","
                      "\"range\":{\"start\":{\"line\":7}}},\"severity\":"
                      "\"ERROR\",\"source\":{\"name\":\"tandem\"},\"code\":{"
                      "\"value\":\"issue/missing\"}}\n");
    free(text);

    text = tnd_findings_render(fs, TND_FINDINGS_SARIF);
    o = parse(text);
    got = tnd_json_dump(
        tnd_json_field(json_object_array_get_idx(
                           tnd_json_field(json_object_array_get_idx(
                                              tnd_json_field(o, "runs"), 0),
                                          "results"),
                           0),
                       "locations"),
        NULL);
    expect_text(got, "[{\"physicalLocation\":{\"artifactLocation\":{\"uri\":"
                     "\"src/na%C3%AFve%20d%C3%A9j%C3%A0.c\",\"uriBaseId\":"
                     "\"%SRCROOT%\"},\"region\":{\"startLine\":7}}}]");
    free(got);
    json_object_put(o);
    free(text);
    tnd_findings_destroy(&fs);
}

/* A finding with no file has no place in any format; one with a file
 * and no line has the file alone. */
static void no_file_or_no_line(void **state)
{
    tnd_findings *fs = tnd_findings_new();
    tnd_finding nowhere = {.rule = "gate",
                           .level = TND_FINDING_ERROR,
                           .title = "tandem: not approved",
                           .message = "no valid critique",
                           .line = 12};
    tnd_finding fileonly = {.rule = "issue/superfluous",
                            .level = TND_FINDING_NOTE,
                            .title = "tandem: superfluous (minor)",
                            .message = "README reformatted",
                            .file = "README.md",
                            .col = 4};
    json_object *o;
    char *text, *got;

    (void)state;
    tnd_findings_add(fs, &nowhere);
    tnd_findings_add(fs, &fileonly);
    assert_int_equal(tnd_findings_get(fs, 0)->line, 0);
    assert_null(tnd_findings_get(fs, 0)->file);
    assert_int_equal(tnd_findings_get(fs, 1)->col, 0);

    text = tnd_findings_render(fs, TND_FINDINGS_GITHUB);
    expect_text(text, "::error title=tandem%3A not approved::no valid "
                      "critique\n"
                      "::notice file=README.md,title=tandem%3A superfluous "
                      "(minor)::README reformatted\n");
    free(text);

    text = tnd_findings_render(fs, TND_FINDINGS_RDJSONL);
    expect_text(text, "{\"message\":\"no valid critique\",\"severity\":"
                      "\"ERROR\",\"source\":{\"name\":\"tandem\"},\"code\":{"
                      "\"value\":\"gate\"}}\n"
                      "{\"message\":\"README reformatted\",\"location\":{"
                      "\"path\":\"README.md\"},\"severity\":\"INFO\","
                      "\"source\":{\"name\":\"tandem\"},\"code\":{\"value\":"
                      "\"issue/superfluous\"}}\n");
    free(text);

    text = tnd_findings_render(fs, TND_FINDINGS_SARIF);
    o = parse(text);
    got = tnd_json_dump(
        tnd_json_field(json_object_array_get_idx(tnd_json_field(o, "runs"), 0),
                       "results"),
        NULL);
    expect_text(got, "[{\"ruleId\":\"gate\",\"ruleIndex\":6,\"level\":"
                     "\"error\",\"message\":{\"text\":\"no valid critique\"},"
                     "\"partialFingerprints\":{\"tandemFindingHash/v1\":"
                     "\"cc754abd790660f1\"}},"
                     "{\"ruleId\":\"issue/superfluous\",\"ruleIndex\":3,"
                     "\"level\":\"note\",\"message\":{\"text\":\"README "
                     "reformatted\"},\"locations\":[{\"physicalLocation\":{"
                     "\"artifactLocation\":{\"uri\":\"README.md\","
                     "\"uriBaseId\":\"%SRCROOT%\"}}}],\"partialFingerprints\":"
                     "{\"tandemFindingHash/v1\":\"8c46d4125efbf35c\"}}]");
    free(got);
    json_object_put(o);
    free(text);

    /* with the change's first file as the anchor, the result without a
     * file is placed there: GitHub's code scanning refuses a whole SARIF
     * file in which one result has no location */
    tnd_findings_anchor(fs, "src/stats.c");
    text = tnd_findings_render(fs, TND_FINDINGS_SARIF);
    o = parse(text);
    got = tnd_json_dump(
        tnd_json_field(json_object_array_get_idx(
                           tnd_json_field(json_object_array_get_idx(
                                              tnd_json_field(o, "runs"), 0),
                                          "results"),
                           0),
                       "locations"),
        NULL);
    expect_text(got, "[{\"physicalLocation\":{\"artifactLocation\":{\"uri\":"
                     "\"src/stats.c\",\"uriBaseId\":\"%SRCROOT%\"},"
                     "\"region\":{\"startLine\":1}}}]");
    free(got);
    json_object_put(o);
    free(text);
    tnd_findings_destroy(&fs);
}

/* Nothing found: an empty SARIF run (still a valid log to upload), and
 * nothing at all for the line formats. */
/* A place a model wrote loosely (".//stats.c", "src/./a//b.c": files of
 * the workspace all the same) is written relative to the top: with only
 * "./" taken off, ".//stats.c" became "/stats.c", an absolute path in
 * every format. A place that names no file ("./", ".") has none. */
static void places_are_relative(void **state)
{
    static const struct {
        const char *given, *written;
    } rows[] = {
        {".//stats.c", "stats.c"},
        {"././stats.c", "stats.c"},
        {"src/./a//b.c", "src/a/b.c"},
        {"src/a.c/", "src/a.c"},
        {".hidden/x.c", ".hidden/x.c"},
        {"./", NULL},
        {".", NULL},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(rows) / sizeof(*rows); i++) {
        tnd_findings *fs = tnd_findings_new();
        tnd_finding f = {.rule = "issue/style",
                         .level = TND_FINDING_NOTE,
                         .title = "tandem: style (minor)",
                         .message = "m",
                         .file = rows[i].given,
                         .line = 3};
        const tnd_finding *got;
        char *text;

        tnd_findings_add(fs, &f);
        got = tnd_findings_get(fs, 0);
        if (rows[i].written) {
            assert_non_null(got->file);
            assert_string_equal(got->file, rows[i].written);
            assert_int_equal(got->line, 3);
        } else {
            assert_null(got->file);
            assert_int_equal(got->line, 0);
        }
        text = tnd_findings_render(fs, TND_FINDINGS_GITHUB);
        assert_null(strstr(text, "file=/"));
        free(text);
        text = tnd_findings_render(fs, TND_FINDINGS_SARIF);
        assert_null(strstr(text, "\"uri\": \"/"));
        free(text);
        tnd_findings_destroy(&fs);
    }
}

static void nothing_found(void **state)
{
    tnd_findings *fs = tnd_findings_new();
    char *text;
    json_object *o;

    (void)state;
    text = tnd_findings_render(fs, TND_FINDINGS_RDJSONL);
    expect_text(text, "");
    free(text);
    text = tnd_findings_render(fs, TND_FINDINGS_GITHUB);
    expect_text(text, "");
    free(text);
    text = tnd_findings_render(fs, TND_FINDINGS_SARIF);
    o = parse(text);
    assert_int_equal(
        json_object_array_length(tnd_json_field(
            json_object_array_get_idx(tnd_json_field(o, "runs"), 0),
            "results")),
        0);
    json_object_put(o);
    free(text);
    tnd_findings_destroy(&fs);
}

/* A review that could not be done says so: SARIF's invocation, and an
 * error annotation on GitHub; rdjsonl has nothing for it. */
static void a_review_not_done(void **state)
{
    tnd_findings *fs = tnd_findings_new();
    json_object *o;
    char *text, *got;

    (void)state;
    tnd_findings_not_done(fs, "no reply from the reviewer: 503, twice");
    text = tnd_findings_render(fs, TND_FINDINGS_GITHUB);
    expect_text(text, "::error title=tandem%3A could not review::no reply "
                      "from the reviewer: 503, twice\n");
    free(text);
    text = tnd_findings_render(fs, TND_FINDINGS_RDJSONL);
    expect_text(text, "");
    free(text);
    text = tnd_findings_render(fs, TND_FINDINGS_SARIF);
    o = parse(text);
    got = tnd_json_dump(
        tnd_json_field(json_object_array_get_idx(tnd_json_field(o, "runs"), 0),
                       "invocations"),
        NULL);
    expect_text(got, "[{\"executionSuccessful\":false,"
                     "\"toolExecutionNotifications\":[{\"level\":\"error\","
                     "\"message\":{\"text\":\"no reply from the reviewer: "
                     "503, twice\"}}]}]");
    free(got);
    json_object_put(o);
    free(text);
    tnd_findings_destroy(&fs);
}

/* The fingerprint ignores the line, the column, numbers in the headline
 * and what follows it; the rule, the file and the words count. */
static void fingerprints_are_stable(void **state)
{
    tnd_finding a = {.rule = "issue/incorrect",
                     .message = "off by one in loop 3\nEvidence: x",
                     .file = "a.c",
                     .line = 10};
    tnd_finding b = a;
    uint64_t h = tnd_finding_fingerprint(&a);

    (void)state;
    b.line = 97;
    b.col = 4;
    b.message = "off  by one in loop 12\nEvidence: something else";
    assert_true(tnd_finding_fingerprint(&b) == h);
    b.file = "b.c";
    assert_true(tnd_finding_fingerprint(&b) != h);
    b = a;
    b.rule = "issue/missing";
    assert_true(tnd_finding_fingerprint(&b) != h);
    b = a;
    b.message = "off by two in loop 3";
    assert_true(tnd_finding_fingerprint(&b) != h);
    /* "ab"+"c" is not "a"+"bc" */
    b = a;
    b.rule = "issue/incorrecta";
    b.file = ".c";
    assert_true(tnd_finding_fingerprint(&b) != h);
}

/* What an attempt found, rule by rule: each failing skill (required:
 * error, advisory: warning) at the first place it names, with how it
 * did before the change; each issue at its level; passing and skipped
 * skills nothing. */
static void findings_of_an_attempt(void **state)
{
    tnd_location loc = {.file = (char *)"test_stats.c", .line = 30, .col = 5};
    tnd_skill_result skills[] = {
        {.name = (char *)"build", .status = TND_SKILL_PASS},
        {.name = (char *)"test",
         .status = TND_SKILL_FAIL,
         .exit_code = 2,
         .command = (char *)"make test",
         .output = (char *)"FAIL stats_mean = 2.0, expected 2.5\n",
         .locations = &loc,
         .nlocations = 1},
        {.name = (char *)"lint",
         .status = TND_SKILL_TIMEOUT,
         .exit_code = -1,
         .command = (char *)"cppcheck .",
         .output = (char *)""},
        {.name = (char *)"docs", .status = TND_SKILL_SKIPPED},
    };
    tnd_skill_result before[] = {
        {.name = (char *)"test",
         .status = TND_SKILL_PASS,
         .output = (char *)""},
    };
    tnd_issue issues[] = {
        {.type = TND_ISSUE_INCORRECT,
         .severity = TND_SEVERITY_CRITICAL,
         .file = (char *)"stats.c",
         .line = 11,
         .description = (char *)"Truncates.",
         .evidence = (char *)"FAIL stats_mean",
         .suggested_fix = (char *)"Divide as double."},
        {.type = TND_ISSUE_STYLE,
         .severity = TND_SEVERITY_MINOR,
         .description = (char *)"Long line."},
    };
    tnd_critique critique = {
        .verdict = TND_VERDICT_REVISE, .issues = issues, .nissues = 2};
    tnd_audit_reply audit = {
        .skills = skills, .nskills = 4, .critique = &critique};
    tnd_audit_reply base = {.skills = before, .nskills = 1};
    const char *required[] = {"build", "test", NULL};
    tnd_gate_input in = {
        .attempt = 1, .audit = &audit, .required = required, .baseline = &base};
    tnd_gate_decision d = {.action = TND_GATE_ESCALATE, .passed = false};
    tnd_findings *fs = tnd_findings_new();
    const tnd_finding *f;

    (void)state;
    strcpy(d.reason, "required skill test failed (exit 2)");
    tnd_findings_add_attempt(fs, &in, &d);
    assert_int_equal(tnd_findings_count(fs), 4);

    f = tnd_findings_get(fs, 0);
    assert_string_equal(f->rule, "skill/test");
    assert_int_equal(f->level, TND_FINDING_ERROR);
    assert_string_equal(f->title, "tandem: test failed");
    assert_string_equal(f->message,
                        "test (`make test`): fail, exit 2: a regression, it "
                        "passed before the change\n"
                        "FAIL stats_mean = 2.0, expected 2.5");
    assert_string_equal(f->file, "test_stats.c");
    assert_int_equal(f->line, 30);
    assert_int_equal(f->col, 5);

    f = tnd_findings_get(fs, 1);
    assert_string_equal(f->rule, "skill/lint");
    assert_int_equal(f->level, TND_FINDING_WARNING);
    assert_string_equal(f->title, "tandem: lint timed out");
    assert_string_equal(f->message, "lint (`cppcheck .`): timeout");
    assert_null(f->file);

    f = tnd_findings_get(fs, 2);
    assert_string_equal(f->rule, "issue/incorrect");
    assert_int_equal(f->level, TND_FINDING_ERROR);
    assert_string_equal(f->title, "tandem: incorrect (critical)");
    assert_string_equal(f->message, "Truncates.\nEvidence: FAIL stats_mean\n"
                                    "Suggested fix: Divide as double.");
    assert_string_equal(f->file, "stats.c");
    assert_int_equal(f->line, 11);

    f = tnd_findings_get(fs, 3);
    assert_string_equal(f->rule, "issue/style");
    assert_int_equal(f->level, TND_FINDING_NOTE);
    assert_null(f->file);
    tnd_findings_destroy(&fs);
}

/* The gate speaks when nothing else explains a change that did not
 * pass, and when a change that passed waits for a person; not when a
 * change is approved, nor when an error-level finding says why. */
static void the_gate_when_nothing_else_says_why(void **state)
{
    tnd_issue major = {.type = TND_ISSUE_MISSING,
                       .severity = TND_SEVERITY_MAJOR,
                       .description = (char *)"No test."};
    tnd_critique critique = {
        .verdict = TND_VERDICT_REVISE, .issues = &major, .nissues = 1};
    tnd_audit_reply audit = {.critique = &critique};
    tnd_gate_input in = {.attempt = 1, .audit = &audit};
    tnd_gate_decision d = {.action = TND_GATE_ESCALATE, .passed = false};
    tnd_findings *fs = tnd_findings_new();

    (void)state;
    /* a major issue is a warning: the gate's error says it blocked */
    strcpy(d.reason, "an issue of severity major: No test.");
    tnd_findings_add_attempt(fs, &in, &d);
    assert_int_equal(tnd_findings_count(fs), 2);
    assert_string_equal(tnd_findings_get(fs, 1)->rule, "gate");
    assert_int_equal(tnd_findings_get(fs, 1)->level, TND_FINDING_ERROR);
    assert_string_equal(tnd_findings_get(fs, 1)->title, "tandem: not approved");
    assert_string_equal(tnd_findings_get(fs, 1)->message, d.reason);
    tnd_findings_destroy(&fs);

    /* the patch did not apply: no audit, the gate alone */
    fs = tnd_findings_new();
    memset(&in, 0, sizeof(in));
    in.attempt = 1;
    in.apply_error = "stats.c: the SEARCH text is not there";
    snprintf(d.reason, sizeof(d.reason),
             "the proposal could not be "
             "applied: stats.c: the SEARCH text "
             "is not there");
    tnd_findings_add_attempt(fs, &in, &d);
    assert_int_equal(tnd_findings_count(fs), 1);
    assert_string_equal(tnd_findings_get(fs, 0)->rule, "gate");
    tnd_findings_destroy(&fs);

    /* passed, but a person must look: a warning */
    fs = tnd_findings_new();
    major.severity = TND_SEVERITY_MINOR;
    in.apply_error = NULL;
    in.audit = &audit;
    d.passed = true;
    strcpy(d.reason, "the change passes, but it touches stats.c "
                     "(gate.risk_paths): a human must approve it");
    tnd_findings_add_attempt(fs, &in, &d);
    assert_int_equal(tnd_findings_count(fs), 2);
    assert_int_equal(tnd_findings_get(fs, 0)->level, TND_FINDING_NOTE);
    assert_string_equal(tnd_findings_get(fs, 1)->title,
                        "tandem: needs a person");
    assert_int_equal(tnd_findings_get(fs, 1)->level, TND_FINDING_WARNING);
    tnd_findings_destroy(&fs);

    /* approved with a minor issue: the issue alone */
    fs = tnd_findings_new();
    d.action = TND_GATE_APPROVE;
    tnd_findings_add_attempt(fs, &in, &d);
    assert_int_equal(tnd_findings_count(fs), 1);
    assert_string_equal(tnd_findings_get(fs, 0)->rule, "issue/missing");
    tnd_findings_destroy(&fs);
}

static void format_names(void **state)
{
    tnd_findings_format f = TND_FINDINGS_NONE;

    (void)state;
    assert_int_equal(tnd_findings_format_parse(&f, "sarif"), 0);
    assert_int_equal(f, TND_FINDINGS_SARIF);
    assert_int_equal(tnd_findings_format_parse(&f, "rdjsonl"), 0);
    assert_int_equal(f, TND_FINDINGS_RDJSONL);
    assert_int_equal(tnd_findings_format_parse(&f, "github"), 0);
    assert_int_equal(f, TND_FINDINGS_GITHUB);
    assert_int_equal(tnd_findings_format_parse(&f, "SARIF"), -1);
    assert_string_equal(tnd_error_last(), "--format: unknown format "
                                          "\"SARIF\"; use sarif, rdjsonl or "
                                          "github");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(sarif_is_exact),
        cmocka_unit_test(rdjsonl_is_exact),
        cmocka_unit_test(github_is_exact),
        cmocka_unit_test(github_drops_control_characters),
        cmocka_unit_test(github_escapes_what_github_documents),
        cmocka_unit_test(non_ascii_and_invalid_text),
        cmocka_unit_test(no_file_or_no_line),
        cmocka_unit_test(places_are_relative),
        cmocka_unit_test(nothing_found),
        cmocka_unit_test(a_review_not_done),
        cmocka_unit_test(fingerprints_are_stable),
        cmocka_unit_test(findings_of_an_attempt),
        cmocka_unit_test(the_gate_when_nothing_else_says_why),
        cmocka_unit_test(format_names),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
