/* Unit tests for proto/audit: the reviewer's request and reply bodies
 * and skill results (the critique they carry: test_critique_schema.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/buf.h"
#include "common/xalloc.h"
#include "proto/audit.h"
#include "proto/json.h"

/* A modifiable copy of a literal, for the structs' char * fields. */
#define S(lit) ((char[]){lit})

/* ---- request ---------------------------------------------------------- */

#define SKILL_JSON "{\"name\":\"build\",\"status\":\"pass\",\"required\":true}"

static void request_round_trips(void **state)
{
    tnd_audit_request r = {
        .task_id = S("20261122-014455-3fa2c91b"),
        .attempt = 2,
        .task = S("make the failing test pass"),
        .workspace = S("/tmp/tandem-1000/x/workspace"),
        .diff = S("diff --git a/stats.c b/stats.c\n--- a/stats.c\n"),
    };
    tnd_audit_request back;
    size_t len = 0;
    char *body = tnd_audit_request_encode(&r, &len);

    (void)state;
    assert_int_equal(len, strlen(body));
    assert_int_equal(tnd_audit_request_decode(&back, body, len), 0);
    assert_string_equal(back.task_id, r.task_id);
    assert_int_equal(back.attempt, 2);
    assert_string_equal(back.task, r.task);
    assert_string_equal(back.workspace, r.workspace);
    assert_string_equal(back.diff, r.diff);
    tnd_audit_request_clear(&back);
    tnd_audit_request_clear(&back);
    free(body);
}

static void request_workspace_must_be_absolute(void **state)
{
    tnd_audit_request r = {.task_id = S("t"),
                           .attempt = 1,
                           .task = S("x"),
                           .workspace = S("workspace"),
                           .diff = S("")};
    tnd_audit_request back;
    char *body = tnd_audit_request_encode(&r, NULL);

    (void)state;
    assert_int_equal(tnd_audit_request_decode(&back, body, strlen(body)), -1);
    assert_string_equal(tnd_error_last(),
                        "bad audit request: field 'workspace' must be an "
                        "absolute path");
    tnd_audit_request_clear(&back);
    free(body);
}

static void request_decode_names_the_bad_field(void **state)
{
    const char *no_diff = "{\"tandem\":1,\"type\":\"audit\",\"task_id\":\"t\","
                          "\"attempt\":1,\"task\":\"x\",\"workspace\":\"/w\"}";
    const char *code = "{\"tandem\":1,\"type\":\"code\",\"task_id\":\"t\","
                       "\"attempt\":1}";
    tnd_audit_request back;

    (void)state;
    assert_int_equal(tnd_audit_request_decode(&back, no_diff, strlen(no_diff)),
                     -1);
    assert_string_equal(tnd_error_last(),
                        "bad audit request: field 'diff' is missing");
    tnd_audit_request_clear(&back);
    assert_int_equal(tnd_audit_request_decode(&back, code, strlen(code)), -1);
    assert_string_equal(tnd_error_last(),
                        "expected a audit body, got type \"code\"");
    tnd_audit_request_clear(&back);
}

/* A request made in two phases: no critique asked for, or a critique
 * of skill results already run (which the reviewer then does not run). */
static void request_carries_critique_and_skills(void **state)
{
    tnd_location locs[] = {{S("src/a.c"), 12, 5}, {S("src/b.c"), 3, 0}};
    char *changed[] = {S("src/gen.h")};
    tnd_skill_result skills[] = {
        {.name = S("build"),
         .status = TND_SKILL_PASS,
         .required = true,
         .duration_ms = 310,
         .command = S("make"),
         .output = S("cc -O2\n")},
        {.name = S("lint"),
         .status = TND_SKILL_FAIL,
         .exit_code = 1,
         .command = S("lint"),
         .output = S("src/a.c:12:5: x\n"),
         .locations = locs,
         .nlocations = 2,
         .changed = changed,
         .nchanged = 1},
        {.name = S("docs"),
         .status = TND_SKILL_SKIPPED,
         .required = true,
         .exit_code = -1,
         .command = S("builtin: docs"),
         .output = S("")},
    };
    tnd_audit_request r = {.task_id = S("t"),
                           .attempt = 3,
                           .task = S("x"),
                           .workspace = S("/w"),
                           .diff = S(""),
                           .critique = false};
    tnd_audit_request back;
    size_t len;
    char *body;

    (void)state;
    /* the skills phase: no critique, no skills given */
    body = tnd_audit_request_encode(&r, &len);
    assert_non_null(strstr(body, "\"critique\":false"));
    assert_null(strstr(body, "\"skills\""));
    assert_int_equal(tnd_audit_request_decode(&back, body, len), 0);
    assert_false(back.critique);
    assert_null(back.skills);
    assert_int_equal(back.nskills, 0);
    tnd_audit_request_clear(&back);
    free(body);

    /* the critique phase: the skills' results go along */
    r.critique = true;
    r.skills = skills;
    r.nskills = 3;
    body = tnd_audit_request_encode(&r, &len);
    assert_non_null(strstr(body, "\"critique\":true"));
    assert_int_equal(tnd_audit_request_decode(&back, body, len), 0);
    assert_true(back.critique);
    assert_int_equal(back.attempt, 3);
    assert_int_equal(back.nskills, 3);
    for (size_t i = 0; i < 3; i++) {
        assert_string_equal(back.skills[i].name, skills[i].name);
        assert_int_equal(back.skills[i].status, skills[i].status);
        assert_int_equal(back.skills[i].required, skills[i].required);
        assert_int_equal(back.skills[i].exit_code, skills[i].exit_code);
        assert_int_equal(back.skills[i].duration_ms, skills[i].duration_ms);
        assert_string_equal(back.skills[i].command, skills[i].command);
        assert_string_equal(back.skills[i].output, skills[i].output);
    }
    assert_int_equal(back.skills[1].nlocations, 2);
    assert_string_equal(back.skills[1].locations[0].file, "src/a.c");
    assert_int_equal(back.skills[1].locations[0].line, 12);
    assert_int_equal(back.skills[1].locations[0].col, 5);
    assert_string_equal(back.skills[1].locations[1].file, "src/b.c");
    assert_int_equal(back.skills[1].locations[1].line, 3);
    assert_int_equal(back.skills[1].locations[1].col, 0);
    assert_int_equal(back.skills[1].nchanged, 1);
    assert_string_equal(back.skills[1].changed[0], "src/gen.h");
    assert_int_equal(back.skills[0].nlocations, 0);
    assert_null(back.skills[0].locations);
    /* clearing frees the skills with their locations and changed files
     * (ASan and valgrind report a leak otherwise), and zeroes */
    tnd_audit_request_clear(&back);
    assert_null(back.skills);
    assert_int_equal(back.nskills, 0);
    assert_null(back.task_id);
    tnd_audit_request_clear(&back);
    free(body);

    /* an empty list is "already run, nothing to show": not NULL */
    r.nskills = 0;
    body = tnd_audit_request_encode(&r, &len);
    assert_non_null(strstr(body, "\"skills\":[]"));
    assert_int_equal(tnd_audit_request_decode(&back, body, len), 0);
    assert_non_null(back.skills);
    assert_int_equal(back.nskills, 0);
    tnd_audit_request_clear(&back);
    free(body);
}

/* An audit request whose fields after the diff are rest: refused with
 * exactly want, or (want NULL) accepted with critique as expected. */
static void request_with(const char *rest, const char *want, bool critique)
{
    char body[1024];
    tnd_audit_request out;
    int rc;

    snprintf(body, sizeof(body),
             "{\"tandem\":1,\"type\":\"audit\",\"task_id\":\"t\","
             "\"attempt\":1,\"task\":\"x\",\"workspace\":\"/w\","
             "\"diff\":\"\"%s}",
             rest);
    rc = tnd_audit_request_decode(&out, body, strlen(body));
    if (!want) {
        if (rc != 0)
            fail_msg("%s: %s", rest, tnd_error_last());
        assert_int_equal(out.critique, critique);
    } else {
        assert_int_equal(rc, -1);
        if (strcmp(tnd_error_last(), want) != 0)
            fail_msg("%s: error \"%s\", expected \"%s\"", rest,
                     tnd_error_last(), want);
    }
    tnd_audit_request_clear(&out);
}

static void request_critique_defaults_to_true(void **state)
{
    (void)state;
    request_with("", NULL, true);
    request_with(",\"critique\":true", NULL, true);
    request_with(",\"critique\":false", NULL, false);
    request_with(",\"critique\":null", NULL, true);
    request_with(",\"critique\":\"no\"",
                 "bad audit request: field 'critique' must be true or false",
                 false);
}

/* The baseline flag: absent means false; it travels both ways. */
static void request_baseline_round_trips(void **state)
{
    tnd_audit_request r = {.task_id = (char *)"t",
                           .attempt = 1,
                           .task = (char *)"x",
                           .workspace = (char *)"/w",
                           .diff = (char *)"",
                           .baseline = true};
    tnd_audit_request back;
    size_t len;
    char *body = tnd_audit_request_encode(&r, &len);

    (void)state;
    assert_non_null(strstr(body, "\"baseline\":true"));
    assert_int_equal(tnd_audit_request_decode(&back, body, len), 0);
    assert_true(back.baseline);
    tnd_audit_request_clear(&back);
    free(body);
    r.baseline = false;
    body = tnd_audit_request_encode(&r, &len);
    assert_null(strstr(body, "baseline"));
    assert_int_equal(tnd_audit_request_decode(&back, body, len), 0);
    assert_false(back.baseline);
    tnd_audit_request_clear(&back);
    free(body);
    request_with(",\"baseline\":1",
                 "bad audit request: field 'baseline' must be true or false",
                 true);
}

static void request_skills_are_checked(void **state)
{
    (void)state;
    request_with(",\"skills\":[{\"name\":\"build\",\"required\":true}]",
                 "bad audit request: skills[0]: field 'status' is missing",
                 false);
    request_with(",\"skills\":[" SKILL_JSON ",{\"name\":\"x\","
                 "\"status\":\"ok\",\"required\":true}]",
                 "bad audit request: skills[1]: field 'status' must be one "
                 "of pass, fail, timeout, error, skipped, got \"ok\"",
                 false);
    request_with(",\"skills\":[{\"name\":\"x\",\"status\":\"fail\","
                 "\"required\":true,\"locations\":[{\"file\":\"a\"}]}]",
                 "bad audit request: skills[0]: locations[0]: field 'line' is "
                 "missing",
                 false);
    request_with(",\"skills\":{}",
                 "bad audit request: field 'skills' must be a list", false);
    /* an item that is not an object is refused and named (the wording,
     * "field 'name' is missing", is the object reader's) */
    {
        const char *body =
            "{\"tandem\":1,\"type\":\"audit\",\"task_id\":"
            "\"t\",\"attempt\":1,\"task\":\"x\",\"workspace\":"
            "\"/w\",\"diff\":\"\",\"skills\":[" SKILL_JSON ",7]}";
        tnd_audit_request out;
        assert_int_equal(tnd_audit_request_decode(&out, body, strlen(body)),
                         -1);
        assert_non_null(
            strstr(tnd_error_last(), "bad audit request: skills[1]"));
        tnd_audit_request_clear(&out);
    }
}

/* ---- reply ------------------------------------------------------------ */

static void reply_round_trips(void **state)
{
    tnd_skill_result skills[] = {
        {S("build"), TND_SKILL_PASS, true, 0, 310, S("make"), S("cc -O2"), NULL,
         0, NULL, 0, TND_ISOLATION_UNSAID, NULL},
        {S("test"), TND_SKILL_FAIL, true, 2, 120, S("make test"),
         S("FAIL stats_mean\n"), NULL, 0, NULL, 0, TND_ISOLATION_UNSAID, NULL},
        {S("lint"), TND_SKILL_TIMEOUT, false, -1, 30000, S("lint"), S(""), NULL,
         0, NULL, 0, TND_ISOLATION_UNSAID, NULL},
        {S("fmt"), TND_SKILL_ERROR, false, -1, 0, S("fmt"), S("cannot run"),
         NULL, 0, NULL, 0, TND_ISOLATION_UNSAID, NULL},
    };
    tnd_issue issues[] = {
        {TND_ISSUE_INCORRECT, TND_SEVERITY_MAJOR, S("stats.c"), 11,
         S("integer division"), S("sum / count"), S("cast first")},
        {TND_ISSUE_STYLE, TND_SEVERITY_MINOR, NULL, 0, S("naming"), NULL, NULL},
    };
    tnd_critique crit = {.verdict = TND_VERDICT_REVISE,
                         .confidence = 0.95,
                         .issues = issues,
                         .nissues = 2,
                         .summary = S("one real bug")};
    tnd_audit_reply r = {.task_id = S("t-9"),
                         .attempt = 4,
                         .skills = skills,
                         .nskills = 4,
                         .critique = &crit,
                         .usage = {.calls = 1, .prompt_tokens = 562}};
    tnd_audit_reply back;
    size_t len;
    char *body = tnd_audit_reply_encode(&r, &len);

    (void)state;
    assert_non_null(strstr(body, "\"confidence\":0.95,"));
    assert_int_equal(tnd_audit_reply_decode(&back, body, len), 0);
    assert_string_equal(back.task_id, "t-9");
    assert_int_equal(back.attempt, 4);
    assert_int_equal(back.nskills, 4);
    for (size_t i = 0; i < 4; i++) {
        assert_string_equal(back.skills[i].name, skills[i].name);
        assert_int_equal(back.skills[i].status, skills[i].status);
        assert_int_equal(back.skills[i].required, skills[i].required);
        assert_int_equal(back.skills[i].exit_code, skills[i].exit_code);
        assert_int_equal(back.skills[i].duration_ms, skills[i].duration_ms);
        assert_string_equal(back.skills[i].command, skills[i].command);
        assert_string_equal(back.skills[i].output, skills[i].output);
    }
    assert_non_null(back.critique);
    assert_null(back.critique_error);
    assert_int_equal(back.critique->verdict, TND_VERDICT_REVISE);
    assert_true(back.critique->confidence == 0.95);
    assert_string_equal(back.critique->summary, "one real bug");
    assert_int_equal(back.critique->nissues, 2);
    assert_int_equal(back.critique->issues[0].type, TND_ISSUE_INCORRECT);
    assert_int_equal(back.critique->issues[0].severity, TND_SEVERITY_MAJOR);
    assert_string_equal(back.critique->issues[0].file, "stats.c");
    assert_int_equal(back.critique->issues[0].line, 11);
    assert_string_equal(back.critique->issues[0].description,
                        "integer division");
    assert_string_equal(back.critique->issues[0].evidence, "sum / count");
    assert_string_equal(back.critique->issues[0].suggested_fix, "cast first");
    /* optional parts stay absent */
    assert_null(back.critique->issues[1].file);
    assert_int_equal(back.critique->issues[1].line, 0);
    assert_null(back.critique->issues[1].evidence);
    assert_null(back.critique->issues[1].suggested_fix);
    assert_int_equal(back.usage.calls, 1);
    assert_int_equal(back.usage.prompt_tokens, 562);
    tnd_audit_reply_clear(&back);
    tnd_audit_reply_clear(&back);
    free(body);
}

static void null_critique_comes_with_a_reason(void **state)
{
    tnd_skill_result skill = {
        S("build"), TND_SKILL_PASS, true, 0,    1, S("make"),
        S(""),      NULL,           0,    NULL, 0, TND_ISOLATION_UNSAID,
        NULL};
    tnd_audit_reply r = {.task_id = S("t"),
                         .attempt = 1,
                         .skills = &skill,
                         .nskills = 1,
                         .critique_error = S("the model gave no JSON")};
    tnd_audit_reply back;
    char *body = tnd_audit_reply_encode(&r, NULL);
    const char *bare = "{\"tandem\":1,\"type\":\"audit_reply\","
                       "\"task_id\":\"t\",\"attempt\":1,\"skills\":[],"
                       "\"critique\":null}";

    (void)state;
    assert_non_null(strstr(body, "\"critique\":null"));
    assert_int_equal(tnd_audit_reply_decode(&back, body, strlen(body)), 0);
    assert_null(back.critique);
    assert_string_equal(back.critique_error, "the model gave no JSON");
    tnd_audit_reply_clear(&back);
    free(body);

    /* without a reason, one is filled in */
    assert_int_equal(tnd_audit_reply_decode(&back, bare, strlen(bare)), 0);
    assert_null(back.critique);
    assert_string_equal(back.critique_error, "the reviewer sent no critique");
    assert_int_equal(back.nskills, 0);
    tnd_audit_reply_clear(&back);
}

/* An audit_reply whose fields after the ids are rest. */
static void reply_fails(const char *rest, const char *want)
{
    char body[1024];
    tnd_audit_reply out;

    snprintf(body, sizeof(body),
             "{\"tandem\":1,\"type\":\"audit_reply\",\"task_id\":\"t\","
             "\"attempt\":1%s}",
             rest);
    assert_int_equal(tnd_audit_reply_decode(&out, body, strlen(body)), -1);
    if (strcmp(tnd_error_last(), want) != 0)
        fail_msg("%s: error \"%s\", expected \"%s\"", rest, tnd_error_last(),
                 want);
    tnd_audit_reply_clear(&out);
}

#define SKILL "{\"name\":\"build\",\"status\":\"pass\",\"required\":true}"
#define ISSUE \
    "{\"type\":\"missing\",\"severity\":\"minor\",\"description\":\"d\"}"

static void reply_decode_names_the_bad_field(void **state)
{
    (void)state;
    reply_fails("", "bad audit reply: field 'skills' is missing");
    reply_fails(",\"skills\":[" SKILL ",{\"name\":\"x\",\"status\":\"ok\","
                "\"required\":true}]",
                "bad audit reply: skills[1]: field 'status' must be one of "
                "pass, fail, timeout, error, skipped, got \"ok\"");
    reply_fails(",\"skills\":[{\"name\":\"x\",\"status\":\"pass\"}]",
                "bad audit reply: skills[0]: field 'required' is missing");
    reply_fails(",\"skills\":[{\"name\":\"x\",\"status\":\"pass\","
                "\"required\":true,\"exit_code\":5000}]",
                "bad audit reply: skills[0]: field 'exit_code' must be an "
                "integer -1000..1000, got 5000");
    reply_fails(",\"skills\":[],\"critique\":[]",
                "bad audit reply: field 'critique' must be an object");
    reply_fails(",\"skills\":[],\"critique\":{\"verdict\":\"approve\","
                "\"confidence\":1,\"issues\":[" ISSUE ",{\"type\":\"missing\","
                "\"severity\":\"huge\",\"description\":\"d\"}]}",
                "bad audit reply: critique: issues[1]: field 'severity' must "
                "be one of minor, major, critical, got \"huge\"");
    reply_fails(",\"skills\":[],\"critique_error\":7",
                "bad audit reply: field 'critique_error' must be a string");
}

/* A session decodes a reply as its journal holds it: parsed, and its
 * model's exchanges (which an agent adds) taken out for the llm/ files.
 * That decodes as the text the agent sent does. */
static void reply_decodes_the_same_as_the_journal_holds_it(void **state)
{
    tnd_skill_result skills[] = {
        {S("test"), TND_SKILL_FAIL, true, 2, 120, S("make test"),
         S("FAIL stats_mean\n"), NULL, 0, NULL, 0, TND_ISOLATION_UNSAID, NULL},
    };
    tnd_critique crit = {.verdict = TND_VERDICT_APPROVE,
                         .confidence = 0.93,
                         .summary = S("fine")};
    tnd_audit_reply r = {.task_id = S("t-9"),
                         .attempt = 2,
                         .skills = skills,
                         .nskills = 1,
                         .critique = &crit,
                         .usage = {.calls = 1, .prompt_tokens = 562}};
    tnd_audit_reply from_text, from_journal;
    json_object *obj = NULL, *ex = json_object_new_array();
    size_t len;
    char *body = tnd_audit_reply_encode(&r, &len), *sent, *a, *b;

    (void)state;
    assert_int_equal(tnd_json_parse(&obj, body, len), 0);
    json_object_array_add(ex, json_object_new_string("a model's exchange"));
    json_object_object_add(obj, "exchanges", ex);
    sent = tnd_json_dump(obj, &len);
    assert_int_equal(tnd_audit_reply_decode(&from_text, sent, len), 0);
    json_object_object_del(obj, "exchanges");
    assert_int_equal(tnd_audit_reply_from_json(&from_journal, obj), 0);
    a = tnd_audit_reply_encode(&from_text, NULL);
    b = tnd_audit_reply_encode(&from_journal, NULL);
    assert_string_equal(a, b);
    free(a);
    free(b);
    tnd_audit_reply_clear(&from_text);
    tnd_audit_reply_clear(&from_journal);
    json_object_put(obj);
    free(sent);
    free(body);
}

/* A skill's locations and changed files, and the status "skipped". */
static void reply_carries_locations_changed_and_skipped(void **state)
{
    tnd_location locs[] = {{S("src/a.c"), 12, 5}, {S("b.py"), 3, 0}};
    char *changed[] = {S("src/a.c")};
    tnd_skill_result skills[] = {
        {.name = S("lint"),
         .status = TND_SKILL_FAIL,
         .exit_code = 1,
         .command = S("lint"),
         .output = S("src/a.c:12:5: x\n"),
         .locations = locs,
         .nlocations = 2,
         .changed = changed,
         .nchanged = 1},
        {.name = S("docs"),
         .status = TND_SKILL_SKIPPED,
         .required = true,
         .exit_code = -1,
         .command = S("builtin: docs"),
         .output = S("skipped")},
    };
    tnd_audit_reply r = {.task_id = S("t"),
                         .attempt = 1,
                         .skills = skills,
                         .nskills = 2,
                         .critique_error = S("none")};
    tnd_audit_reply back;
    size_t len;
    char *body = tnd_audit_reply_encode(&r, &len);

    (void)state;
    assert_non_null(strstr(body, "\"locations\":[{\"file\":\"src/a.c\","
                                 "\"line\":12,\"col\":5},{\"file\":\"b.py\","
                                 "\"line\":3}],\"changed\":[\"src/a.c\"]"));
    assert_non_null(strstr(body, "\"status\":\"skipped\""));
    assert_int_equal(tnd_audit_reply_decode(&back, body, len), 0);
    assert_int_equal(back.skills[0].nlocations, 2);
    assert_string_equal(back.skills[0].locations[0].file, "src/a.c");
    assert_int_equal(back.skills[0].locations[0].line, 12);
    assert_int_equal(back.skills[0].locations[0].col, 5);
    assert_int_equal(back.skills[0].locations[1].col, 0);
    assert_int_equal(back.skills[0].nchanged, 1);
    assert_string_equal(back.skills[0].changed[0], "src/a.c");
    /* optional: a skill without them has none */
    assert_int_equal(back.skills[1].status, TND_SKILL_SKIPPED);
    assert_int_equal(back.skills[1].nlocations, 0);
    assert_null(back.skills[1].locations);
    assert_int_equal(back.skills[1].nchanged, 0);
    assert_string_equal(tnd_skill_status_name(TND_SKILL_SKIPPED), "skipped");
    tnd_audit_reply_clear(&back);
    free(body);
}

/* Where each skill ran and how a killed one ended travel with it; a
 * reply that says neither (a built-in, another reviewer) reads as
 * unsaid. */
static void reply_carries_sandbox_and_ended(void **state)
{
    tnd_skill_result skills[] = {
        {.name = S("bomb"),
         .status = TND_SKILL_FAIL,
         .exit_code = -1,
         .command = S("sh bomb.sh"),
         .output = S("sh: Cannot fork\n"),
         .sandbox = TND_ISOLATION_BWRAP,
         .ended = S("killed: over the 32-process limit (limits.processes)")},
        {.name = S("lint"),
         .status = TND_SKILL_PASS,
         .command = S("lint"),
         .output = S(""),
         .sandbox = TND_ISOLATION_NONE},
        {.name = S("test"),
         .status = TND_SKILL_ERROR,
         .exit_code = -1,
         .command = S("make test"),
         .output = S("no bwrap\n"),
         .sandbox = TND_ISOLATION_UNAVAILABLE},
        {.name = S("git"),
         .status = TND_SKILL_PASS,
         .command = S("builtin: git"),
         .output = S("")},
    };
    tnd_audit_reply r = {.task_id = S("t"),
                         .attempt = 1,
                         .skills = skills,
                         .nskills = 4,
                         .critique_error = S("none")};
    tnd_audit_reply back;
    size_t len;
    char *body = tnd_audit_reply_encode(&r, &len);

    (void)state;
    assert_non_null(strstr(body, "\"sandbox\":\"bwrap\",\"ended\":\"killed: "
                                 "over the 32-process limit "
                                 "(limits.processes)\""));
    assert_non_null(strstr(body, "\"sandbox\":\"none\""));
    assert_non_null(strstr(body, "\"sandbox\":\"unavailable\""));
    assert_int_equal(tnd_audit_reply_decode(&back, body, len), 0);
    assert_int_equal(back.skills[0].sandbox, TND_ISOLATION_BWRAP);
    assert_string_equal(back.skills[0].ended,
                        "killed: over the 32-process limit (limits.processes)");
    assert_int_equal(back.skills[1].sandbox, TND_ISOLATION_NONE);
    assert_null(back.skills[1].ended);
    assert_int_equal(back.skills[2].sandbox, TND_ISOLATION_UNAVAILABLE);
    assert_int_equal(back.skills[3].sandbox, TND_ISOLATION_UNSAID);
    assert_string_equal(tnd_isolation_name(TND_ISOLATION_NONE), "none");
    assert_string_equal(tnd_isolation_name(TND_ISOLATION_UNSAID), "");
    assert_string_equal(tnd_isolation_name((tnd_isolation)9), "?");
    tnd_audit_reply_clear(&back);
    free(body);

    reply_fails(",\"skills\":[{\"name\":\"x\",\"status\":\"fail\","
                "\"required\":true,\"sandbox\":\"docker\"}]",
                "bad audit reply: skills[0]: field 'sandbox' must be one of "
                "bwrap, none, unavailable, got \"docker\"");
    reply_fails(",\"skills\":[{\"name\":\"x\",\"status\":\"fail\","
                "\"required\":true,\"ended\":7}]",
                "bad audit reply: skills[0]: field 'ended' must be a string");
}

static void reply_locations_and_changed_are_checked(void **state)
{
    tnd_buf many;

    (void)state;
    reply_fails(",\"skills\":[{\"name\":\"x\",\"status\":\"fail\","
                "\"required\":true,\"locations\":[{\"file\":\"a\"}]}]",
                "bad audit reply: skills[0]: locations[0]: field 'line' is "
                "missing");
    reply_fails(",\"skills\":[{\"name\":\"x\",\"status\":\"fail\","
                "\"required\":true,\"locations\":[{\"file\":\"a\","
                "\"line\":0}]}]",
                "bad audit reply: skills[0]: locations[0]: field 'line' must "
                "be an integer 1..100000000, got 0");
    reply_fails(",\"skills\":[{\"name\":\"x\",\"status\":\"fail\","
                "\"required\":true,\"locations\":[7]}]",
                "bad audit reply: skills[0]: locations[0] must be an object");
    reply_fails(",\"skills\":[{\"name\":\"x\",\"status\":\"fail\","
                "\"required\":true,\"changed\":[\"\"]}]",
                "bad audit reply: skills[0]: changed[0] must be a path of "
                "1..1024 bytes");
    reply_fails(",\"skills\":[{\"name\":\"x\",\"status\":\"fail\","
                "\"required\":true,\"changed\":{}}]",
                "bad audit reply: skills[0]: field 'changed' must be a "
                "list");
    /* at most 50 locations */
    tnd_buf_init(&many, TND_BUF_NOCAP);
    tnd_buf_puts(&many, ",\"skills\":[{\"name\":\"x\",\"status\":\"fail\","
                        "\"required\":true,\"locations\":[");
    for (int i = 0; i < 51; i++)
        tnd_buf_printf(&many, "%s{\"file\":\"a\",\"line\":1}", i ? "," : "");
    tnd_buf_puts(&many, "]}]");
    {
        char *body = tnd_xasprintf("{\"tandem\":1,\"type\":\"audit_reply\","
                                   "\"task_id\":\"t\",\"attempt\":1%s}",
                                   tnd_buf_str(&many));
        tnd_audit_reply out;
        assert_int_equal(tnd_audit_reply_decode(&out, body, strlen(body)), -1);
        if (!strstr(tnd_error_last(), "locations") ||
            !strstr(tnd_error_last(), "50"))
            fail_msg("%s", tnd_error_last());
        tnd_audit_reply_clear(&out);
        free(body);
    }
    tnd_buf_free(&many);
}

static void reply_limits(void **state)
{
    char name[100], *body;
    tnd_skill_result *skills = calloc(TND_BODY_MAX_SKILLS + 1, sizeof(*skills));
    tnd_audit_reply r = {.task_id = S("t"), .attempt = 1, .skills = skills};
    tnd_audit_reply out;

    (void)state;
    memset(name, 'n', sizeof(name));
    name[64] = '\0';
    for (size_t i = 0; i <= TND_BODY_MAX_SKILLS; i++)
        skills[i] = (tnd_skill_result){.name = name, .required = true};
    r.nskills = TND_BODY_MAX_SKILLS;
    body = tnd_audit_reply_encode(&r, NULL);
    assert_int_equal(tnd_audit_reply_decode(&out, body, strlen(body)), 0);
    assert_int_equal(out.nskills, TND_BODY_MAX_SKILLS);
    assert_string_equal(out.skills[0].command, ""); /* NULL went out as "" */
    tnd_audit_reply_clear(&out);
    free(body);

    r.nskills = TND_BODY_MAX_SKILLS + 1;
    body = tnd_audit_reply_encode(&r, NULL);
    assert_int_equal(tnd_audit_reply_decode(&out, body, strlen(body)), -1);
    assert_string_equal(tnd_error_last(),
                        "bad audit reply: field 'skills' has 33 items, more "
                        "than the limit of 32");
    tnd_audit_reply_clear(&out);
    free(body);

    r.nskills = 1;
    name[64] = 'n';
    name[65] = '\0';
    body = tnd_audit_reply_encode(&r, NULL);
    assert_int_equal(tnd_audit_reply_decode(&out, body, strlen(body)), -1);
    assert_string_equal(tnd_error_last(),
                        "bad audit reply: skills[0]: field 'name' is 65 "
                        "bytes, more than the limit of 64");
    tnd_audit_reply_clear(&out);
    free(body);
    free(skills);
}

static void names_for_people_and_json(void **state)
{
    (void)state;
    assert_string_equal(tnd_skill_status_name(TND_SKILL_PASS), "pass");
    assert_string_equal(tnd_skill_status_name(TND_SKILL_ERROR), "error");
    assert_string_equal(tnd_skill_status_name((tnd_skill_status)9), "?");
}

/* One writer of a skill result: the audit_reply takes it whole,
 * report.json the summary (its output would swell the report; the
 * journal keeps it). */
static void skill_result_json_forms(void **state)
{
    tnd_location locs[] = {{S("src/a.c"), 12, 5}};
    char *changed[] = {S("src/gen.h")};
    tnd_skill_result s = {.name = S("lint"),
                          .status = TND_SKILL_FAIL,
                          .required = true,
                          .exit_code = 1,
                          .duration_ms = 250,
                          .command = S("lint ."),
                          .output = S("src/a.c:12:5: x\n"),
                          .locations = locs,
                          .nlocations = 1,
                          .changed = changed,
                          .nchanged = 1};
    static const char *const summary[] = {"name", "status", "required",
                                          "exit_code", "duration_ms"};
    json_object *j = tnd_skill_result_to_json(&s, TND_SKILL_JSON_SUMMARY);
    size_t i = 0;

    (void)state;
    assert_int_equal(json_object_object_length(j), 5);
    json_object_object_foreach(j, key, val)
    {
        (void)val;
        assert_string_equal(key, summary[i++]);
    }
    assert_string_equal(
        json_object_get_string(json_object_object_get(j, "status")), "fail");
    assert_true(json_object_get_boolean(json_object_object_get(j, "required")));
    assert_int_equal(
        json_object_get_int(json_object_object_get(j, "exit_code")), 1);
    assert_int_equal(
        json_object_get_int(json_object_object_get(j, "duration_ms")), 250);
    json_object_put(j);

    j = tnd_skill_result_to_json(&s, TND_SKILL_JSON_FULL);
    assert_int_equal(json_object_object_length(j), 9);
    assert_string_equal(
        json_object_get_string(json_object_object_get(j, "command")), "lint .");
    assert_string_equal(
        json_object_get_string(json_object_object_get(j, "output")),
        "src/a.c:12:5: x\n");
    assert_int_equal(
        json_object_array_length(json_object_object_get(j, "locations")), 1);
    assert_int_equal(
        json_object_array_length(json_object_object_get(j, "changed")), 1);
    json_object_put(j);
}

static void skill_result_clear_frees_and_zeroes(void **state)
{
    tnd_skill_result s = {.name = malloc(4),
                          .command = malloc(4),
                          .output = NULL,
                          .exit_code = 3};

    (void)state;
    tnd_skill_result_clear(&s);
    assert_null(s.name);
    assert_int_equal(s.exit_code, 0);
    tnd_skill_result_clear(&s);
}

/* A skill status read back (the views read the journal's replies). */
static void skill_statuses_parse_by_name(void **state)
{
    tnd_skill_status st = TND_SKILL_PASS;

    (void)state;
    for (int s = TND_SKILL_PASS; s <= TND_SKILL_SKIPPED; s++) {
        assert_int_equal(tnd_skill_status_parse(&st, tnd_skill_status_name(s)),
                         0);
        assert_int_equal(st, s);
    }
    assert_int_equal(tnd_skill_status_parse(&st, "failed"), -1);
    assert_string_equal(tnd_error_last(),
                        "unknown skill status 'failed' (known: pass, fail, "
                        "timeout, error, skipped)");
    assert_int_equal(st, TND_SKILL_SKIPPED);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(request_round_trips),
        cmocka_unit_test(request_workspace_must_be_absolute),
        cmocka_unit_test(request_decode_names_the_bad_field),
        cmocka_unit_test(request_carries_critique_and_skills),
        cmocka_unit_test(request_critique_defaults_to_true),
        cmocka_unit_test(request_baseline_round_trips),
        cmocka_unit_test(request_skills_are_checked),
        cmocka_unit_test(reply_round_trips),
        cmocka_unit_test(reply_decodes_the_same_as_the_journal_holds_it),
        cmocka_unit_test(reply_carries_locations_changed_and_skipped),
        cmocka_unit_test(reply_carries_sandbox_and_ended),
        cmocka_unit_test(reply_locations_and_changed_are_checked),
        cmocka_unit_test(null_critique_comes_with_a_reason),
        cmocka_unit_test(reply_decode_names_the_bad_field),
        cmocka_unit_test(reply_limits),
        cmocka_unit_test(names_for_people_and_json),
        cmocka_unit_test(skill_statuses_parse_by_name),
        cmocka_unit_test(skill_result_json_forms),
        cmocka_unit_test(skill_result_clear_frees_and_zeroes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
