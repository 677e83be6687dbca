/* Unit tests for proto/critique_schema: the critique object's schema
 * check (each bad field named), its limits, its JSON form and names. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "proto/audit.h"
#include "proto/body.h"
#include "proto/critique_schema.h"
#include "proto/json.h"

/* A modifiable copy of a literal, for the structs' char * fields. */
#define S(lit) ((char[]){lit})

#define ISSUE \
    "{\"type\":\"missing\",\"severity\":\"minor\",\"description\":\"d\"}"

static json_object *parse(const char *text)
{
    json_object *obj = NULL;

    if (tnd_json_parse(&obj, text, strlen(text)) < 0)
        fail_msg("cannot parse %s: %s", text, tnd_error_last());
    return obj;
}

/* The critique in text must be refused with exactly want. */
static void critique_fails(const char *text, const char *want)
{
    json_object *obj = parse(text);
    tnd_critique *c = (tnd_critique *)1;

    assert_int_equal(tnd_critique_from_json(&c, obj), -1);
    assert_null(c);
    if (strcmp(tnd_error_last(), want) != 0)
        fail_msg("%s: error \"%s\", expected \"%s\"", text, tnd_error_last(),
                 want);
    json_object_put(obj);
}

static void critique_schema_names_each_bad_field(void **state)
{
    (void)state;
    critique_fails("{\"confidence\":1,\"issues\":[]}",
                   "field 'verdict' is missing");
    critique_fails("{\"verdict\":\"maybe\",\"confidence\":1,\"issues\":[]}",
                   "field 'verdict' must be one of approve, revise, got "
                   "\"maybe\"");
    critique_fails("{\"verdict\":\"?\",\"confidence\":1,\"issues\":[]}",
                   "field 'verdict' must be one of approve, revise, got "
                   "\"?\"");
    critique_fails("{\"verdict\":\"approve\",\"confidence\":1.5,"
                   "\"issues\":[]}",
                   "field 'confidence' must be a number 0..1, got 1.5");
    critique_fails("{\"verdict\":\"approve\",\"confidence\":\"high\","
                   "\"issues\":[]}",
                   "field 'confidence' must be a number 0..1");
    critique_fails("{\"verdict\":\"approve\",\"confidence\":1}",
                   "field 'issues' is missing");
    critique_fails("{\"verdict\":\"approve\",\"confidence\":1,\"issues\":[],"
                   "\"summary\":1}",
                   "field 'summary' must be a string");
    critique_fails("{\"verdict\":\"revise\",\"confidence\":1,\"issues\":["
                   "{\"type\":\"bug\",\"severity\":\"minor\","
                   "\"description\":\"d\"}]}",
                   "issues[0]: field 'type' must be one of missing, "
                   "unsupported, incorrect, superfluous, safety, style, got "
                   "\"bug\"");
    critique_fails("{\"verdict\":\"revise\",\"confidence\":1,\"issues\":[" ISSUE
                   ",{\"type\":\"safety\",\"severity\":\"huge\","
                   "\"description\":\"d\"}]}",
                   "issues[1]: field 'severity' must be one of minor, major, "
                   "critical, got \"huge\"");
    critique_fails("{\"verdict\":\"revise\",\"confidence\":1,\"issues\":["
                   "{\"type\":\"safety\",\"severity\":\"major\"}]}",
                   "issues[0]: field 'description' is missing");
    critique_fails("{\"verdict\":\"revise\",\"confidence\":1,\"issues\":[" ISSUE
                   "," ISSUE ",{\"type\":\"style\",\"severity\":\"minor\","
                   "\"description\":\"d\",\"line\":-3}]}",
                   "issues[2]: field 'line' must be an integer 0..100000000, "
                   "got -3");
    critique_fails("{\"verdict\":\"revise\",\"confidence\":1,\"issues\":["
                   "\"just text\"]}",
                   "issues[0]: must be an object");
    critique_fails("[]", "the critique must be a JSON object");
}

static void critique_limits(void **state)
{
    json_object *obj = parse("{\"verdict\":\"revise\",\"confidence\":0,"
                             "\"issues\":[]}");
    json_object *issues = json_object_new_array();
    char *text = malloc(TND_BODY_MAX_NOTE + 2);
    tnd_critique *c = NULL;

    (void)state;
    for (int i = 0; i <= TND_BODY_MAX_ISSUES; i++)
        json_object_array_add(issues, parse(ISSUE));
    json_object_object_add(obj, "issues", issues);
    assert_int_equal(tnd_critique_from_json(&c, obj), -1);
    assert_string_equal(tnd_error_last(), "field 'issues' has 201 items, more "
                                          "than the limit of 200");
    json_object_array_del_idx(issues, 0, 1);
    assert_int_equal(tnd_critique_from_json(&c, obj), 0);
    assert_int_equal(c->nissues, TND_BODY_MAX_ISSUES);
    assert_string_equal(c->summary, ""); /* optional */
    tnd_critique_destroy(&c);
    assert_null(c);

    memset(text, 'd', TND_BODY_MAX_NOTE + 1);
    text[TND_BODY_MAX_NOTE + 1] = '\0';
    json_object_object_add(json_object_array_get_idx(issues, 199),
                           "description", json_object_new_string(text));
    assert_int_equal(tnd_critique_from_json(&c, obj), -1);
    assert_string_equal(tnd_error_last(),
                        "issues[199]: field 'description' is 16385 bytes, "
                        "more than the limit of 16384");
    free(text);
    json_object_put(obj);
}

static void critique_to_json_and_back(void **state)
{
    tnd_issue issue = {TND_ISSUE_SAFETY,
                       TND_SEVERITY_CRITICAL,
                       S("a.c"),
                       3,
                       S("writes outside"),
                       NULL,
                       S("check the path")};
    tnd_critique c = {.verdict = TND_VERDICT_APPROVE,
                      .confidence = 0.1 + 0.2, /* 0.30000000000000004 */
                      .issues = &issue,
                      .nissues = 1,
                      .summary = NULL};
    json_object *j = tnd_critique_to_json(&c);
    char *text = tnd_json_dump(j, NULL);
    tnd_critique *back = NULL;

    (void)state;
    assert_string_equal(text, "{\"verdict\":\"approve\",\"confidence\":0.3,"
                              "\"issues\":[{\"type\":\"safety\",\"severity\":"
                              "\"critical\",\"file\":\"a.c\",\"line\":3,"
                              "\"description\":\"writes outside\","
                              "\"suggested_fix\":\"check the path\"}],"
                              "\"summary\":\"\"}");
    assert_int_equal(tnd_critique_from_json(&back, j), 0);
    assert_int_equal(back->verdict, TND_VERDICT_APPROVE);
    assert_int_equal(back->issues[0].type, TND_ISSUE_SAFETY);
    assert_int_equal(back->issues[0].severity, TND_SEVERITY_CRITICAL);
    assert_null(back->issues[0].evidence);
    tnd_critique_destroy(&back);
    tnd_critique_destroy(&back); /* NULL: fine */
    tnd_critique_destroy(NULL);
    free(text);
    json_object_put(j);
}

/* A score of -0 (0 <= -0.0, so the schema takes it) was written "-0",
 * which reads back as the integer 0 and is then written "0": the same
 * critique in two texts, and "-0" in report.json. Found by
 * tests/fuzz/fuzz_body with this reply. */
static void negative_zero_is_written_as_zero(void **state)
{
    static const char fuzzed[] =
        "{\"tandem\":1,\"type\":\"audit_reply\",\"task_id\":\"\",\"attempt\":1,"
        "\"skills\":[],\"critique\":{\"verdict\":\"revise\",\"confidence\":-0.,"
        "\"issues\":[],\"criteria\":{\"safety\":{\"score\":-0.0}}}}";
    tnd_audit_reply r;
    char *body;

    (void)state;
    assert_int_equal(tnd_audit_reply_decode(&r, fuzzed, strlen(fuzzed)), 0);
    body = tnd_audit_reply_encode(&r, NULL);
    assert_non_null(strstr(body, "\"confidence\":0,"));
    assert_non_null(strstr(body, "\"safety\":{\"score\":0}"));
    assert_null(strstr(body, "-0"));
    free(body);
    tnd_audit_reply_clear(&r);
}

static void critique_names_for_people_and_json(void **state)
{
    (void)state;
    assert_string_equal(tnd_verdict_name(TND_VERDICT_REVISE), "revise");
    assert_string_equal(tnd_verdict_name((tnd_verdict)0), "?");
    assert_string_equal(tnd_severity_name(TND_SEVERITY_MAJOR), "major");
    assert_string_equal(tnd_severity_name((tnd_severity)4), "?");
    assert_string_equal(tnd_issue_type_name(TND_ISSUE_MISSING), "missing");
    assert_string_equal(tnd_issue_type_name(TND_ISSUE_STYLE), "style");
    assert_string_equal(tnd_issue_type_name((tnd_issue_type)7), "?");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(critique_schema_names_each_bad_field),
        cmocka_unit_test(critique_limits),
        cmocka_unit_test(critique_to_json_and_back),
        cmocka_unit_test(negative_zero_is_written_as_zero),
        cmocka_unit_test(critique_names_for_people_and_json),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
