/* Unit tests for agents/critique: finding and checking the reviewer
 * model's JSON critique in its answer.
 *
 * The same critique is wrapped the ways models wrap it; schema errors
 * must name the field; truncated and hostile answers must give an error,
 * never a critique, and return promptly. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents/critique.h"
#include "common/buf.h"
#include "common/clock.h"
#include "common/error.h"
#include "common/xalloc.h"

#define CRITIQUE                                               \
    "{\n"                                                      \
    "  \"verdict\": \"revise\",\n"                             \
    "  \"confidence\": 0.85,\n"                                \
    "  \"issues\": [\n"                                        \
    "    {\"type\": \"incorrect\", \"severity\": \"major\",\n" \
    "     \"file\": \"src/stats.c\", \"line\": 42,\n"          \
    "     \"description\": \"divides by n - 1\",\n"            \
    "     \"evidence\": \"return sum / (n - 1);\",\n"          \
    "     \"suggested_fix\": \"return sum / n;\"},\n"          \
    "    {\"type\": \"style\", \"severity\": \"minor\",\n"     \
    "     \"description\": \"name the constant\",\n"           \
    "     \"evidence\": \"x * 86400\"}\n"                      \
    "  ],\n"                                                   \
    "  \"summary\": \"Mean is off by one.\"\n"                 \
    "}"

/* The critique above, checked field by field. */
static void assert_is_the_critique(const tnd_critique *c)
{
    assert_non_null(c);
    assert_int_equal(c->verdict, TND_VERDICT_REVISE);
    assert_true(c->confidence == 0.85);
    assert_string_equal(c->summary, "Mean is off by one.");
    assert_int_equal(c->nissues, 2);
    assert_int_equal(c->issues[0].type, TND_ISSUE_INCORRECT);
    assert_int_equal(c->issues[0].severity, TND_SEVERITY_MAJOR);
    assert_string_equal(c->issues[0].file, "src/stats.c");
    assert_int_equal(c->issues[0].line, 42);
    assert_string_equal(c->issues[0].description, "divides by n - 1");
    assert_string_equal(c->issues[0].evidence, "return sum / (n - 1);");
    assert_string_equal(c->issues[0].suggested_fix, "return sum / n;");
    assert_int_equal(c->issues[1].type, TND_ISSUE_STYLE);
    assert_int_equal(c->issues[1].severity, TND_SEVERITY_MINOR);
    assert_null(c->issues[1].file);
    assert_int_equal(c->issues[1].line, 0);
    assert_string_equal(c->issues[1].description, "name the constant");
    assert_string_equal(c->issues[1].evidence, "x * 86400");
    assert_null(c->issues[1].suggested_fix);
}

static void plain_json_is_read_field_by_field(void **state)
{
    tnd_critique *c = NULL;

    (void)state;
    assert_int_equal(tnd_critique_parse(&c, CRITIQUE), 0);
    assert_is_the_critique(c);
    tnd_critique_destroy(&c);
    assert_null(c);
    tnd_critique_destroy(&c);
}

static void minimal_critique_defaults_the_optional_fields(void **state)
{
    tnd_critique *c = NULL;

    (void)state;
    assert_int_equal(
        tnd_critique_parse(
            &c, "{\"verdict\":\"approve\",\"confidence\":1,\"issues\":[]}"),
        0);
    assert_int_equal(c->verdict, TND_VERDICT_APPROVE);
    assert_true(c->confidence == 1.0);
    assert_int_equal(c->nissues, 0);
    assert_string_equal(c->summary, "");
    tnd_critique_destroy(&c);
}

/* ---- where models put it ---------------------------------------------------
 */

static void the_critique_is_found_however_it_is_wrapped(void **state)
{
    static const char *const answers[] = {
        "```json\n" CRITIQUE "\n```\n",
        "```\n" CRITIQUE "\n```",
        "Here is my review.\n\n```json\n" CRITIQUE "\n```\n\nThanks!\n",
        "After reading the diff, my verdict follows. " CRITIQUE
        " Let me know if anything is unclear.",
        "  \n\t" CRITIQUE "\n\n",
        /* the first fence and the first object are not the critique */
        "The tests printed:\n```\nFAIL: 1 of 3 {case: mean}\n```\n"
        "The config was {\"strict\": true}.\n```json\n" CRITIQUE "\n```\n",
        "Input: {\"n\": 3, \"values\": [1, 2, 3]}\nOutput: " CRITIQUE,
        /* a fence left open: the object itself is complete */
        "```json\n" CRITIQUE "\n",
        /* wrapped in another object or a list */
        "{\"critique\": " CRITIQUE "}",
        "[" CRITIQUE "]",
    };

    (void)state;
    for (size_t i = 0; i < sizeof(answers) / sizeof(*answers); i++) {
        tnd_critique *c = NULL;
        if (tnd_critique_parse(&c, answers[i]) != 0)
            fail_msg("answer %zu: %s\n%s", i, tnd_error_last(), answers[i]);
        assert_is_the_critique(c);
        tnd_critique_destroy(&c);
    }
}

static void trailing_commas_are_forgiven(void **state)
{
    tnd_critique *c = NULL;

    (void)state;
    assert_int_equal(
        tnd_critique_parse(&c, "```json\n"
                               "{\"verdict\": \"approve\",\n"
                               " \"confidence\": 0.9,\n"
                               " \"issues\": [\n"
                               "   {\"type\": \"style\", \"severity\": "
                               "\"minor\", \"description\": \"a, b,]\", "
                               "\"evidence\": \"e,\",},\n"
                               " ],\n"
                               " \"summary\": \"ok,}\",\r\n"
                               "}\n"
                               "```\n"),
        0);
    assert_int_equal(c->verdict, TND_VERDICT_APPROVE);
    assert_int_equal(c->nissues, 1);
    /* commas inside strings are left alone */
    assert_string_equal(c->issues[0].description, "a, b,]");
    assert_string_equal(c->summary, "ok,}");
    tnd_critique_destroy(&c);
}

static void quotes_and_braces_inside_strings_do_not_confuse(void **state)
{
    static const char json[] =
        "{\"verdict\": \"revise\", \"confidence\": 0.5, \"issues\": ["
        "{\"type\": \"incorrect\", \"severity\": \"critical\", "
        "\"description\": \"prints \\\"}\\\" then {{ and \\\\\", "
        "\"evidence\": \"printf(\\\"%d}\\\\n\\\", x); /* { */\"}], "
        "\"summary\": \"unbalanced: }}} {\"}";
    tnd_critique *c = NULL;
    char *answer;

    (void)state;
    assert_int_equal(tnd_critique_parse(&c, json), 0);
    assert_string_equal(c->issues[0].description,
                        "prints \"}\" then {{ and \\");
    assert_string_equal(c->issues[0].evidence,
                        "printf(\"%d}\\n\", x); /* { */");
    assert_string_equal(c->summary, "unbalanced: }}} {");
    tnd_critique_destroy(&c);

    /* the same in prose, where only brace matching can find it */
    answer = tnd_xasprintf("Verdict below { as promised:\n%s\nend }", json);
    assert_int_equal(tnd_critique_parse(&c, answer), 0);
    assert_int_equal(c->issues[0].severity, TND_SEVERITY_CRITICAL);
    assert_string_equal(c->summary, "unbalanced: }}} {");
    tnd_critique_destroy(&c);
    free(answer);
}

/* ---- errors ----------------------------------------------------------------
 */

typedef struct bad_case {
    const char *answer;
    const char *error; /* the whole of tnd_error_last() */
} bad_case;

#define SCHEMA "the critique does not match the schema: "
#define NOT_FOUND                                                    \
    "no JSON critique found in the answer (expected an object with " \
    "verdict, confidence, issues, summary)"
#define ISSUE                                                                 \
    "{\"type\": \"style\", \"severity\": \"minor\", \"description\": \"d\", " \
    "\"evidence\": \"e\"}"

static const bad_case bad_cases[] = {
    {"", NOT_FOUND},
    /* an issue must show its proof */
    {"{\"verdict\": \"revise\", \"confidence\": 0.3, \"issues\": [" ISSUE
     ", {\"type\": \"incorrect\", \"severity\": \"major\", "
     "\"description\": \"feels wrong\", \"file\": \"a.c\"}]}",
     SCHEMA "issues[1] cites no evidence: give 'evidence' (a tool excerpt or "
            "the code) or 'file' and 'line'"},
    /* criteria are checked when given */
    {"{\"verdict\": \"approve\", \"confidence\": 0.9, \"issues\": [], "
     "\"criteria\": {\"speed\": {\"score\": 1}}}",
     SCHEMA "criteria: unknown criterion 'speed' (known: completeness, "
            "correctness, safety, quality)"},
    {"{\"verdict\": \"approve\", \"confidence\": 0.9, \"issues\": [], "
     "\"criteria\": {\"safety\": {\"score\": 3}}}",
     SCHEMA "criteria.safety: field 'score' must be a number 0..1, got 3"},
    {"LGTM, ship it.", NOT_FOUND},
    {"```json\n```", NOT_FOUND},
    {"{verdict: approve}", NOT_FOUND},
    {"[1, 2, 3]", "the answer holds JSON but no critique object"},
    {"{\"verdict\": \"maybe\", \"confidence\": 0.5, \"issues\": []}",
     SCHEMA "field 'verdict' must be one of approve, revise, got \"maybe\""},
    {"{\"verdict\": \"approve\", \"confidence\": 1.5, \"issues\": []}",
     SCHEMA "field 'confidence' must be a number 0..1, got 1.5"},
    {"{\"verdict\": \"approve\", \"confidence\": \"high\", \"issues\": []}",
     SCHEMA "field 'confidence' must be a number 0..1"},
    {"{\"verdict\": \"approve\", \"issues\": []}",
     SCHEMA "field 'confidence' is missing"},
    {"{\"verdict\": \"approve\", \"confidence\": 0.9, \"issues\": {}}",
     SCHEMA "field 'issues' must be a list"},
    {"{\"verdict\": \"approve\", \"confidence\": 0.9, \"issues\": \"none\"}",
     SCHEMA "field 'issues' must be a list"},
    {"{\"verdict\": \"revise\", \"confidence\": 0.3, \"issues\": [" ISSUE
     ", {\"type\": \"style\", \"severity\": \"huge\", \"description\": "
     "\"d\"}]}",
     SCHEMA "issues[1]: field 'severity' must be one of minor, major, "
            "critical, got \"huge\""},
    {"{\"verdict\": \"revise\", \"confidence\": 0.3, \"issues\": [" ISSUE
     ", " ISSUE ", {\"type\": \"safety\", \"severity\": \"major\"}]}",
     SCHEMA "issues[2]: field 'description' is missing"},
    {"{\"verdict\": \"revise\", \"confidence\": 0.3, \"issues\": "
     "[{\"type\": \"typo\", \"severity\": \"minor\", \"description\": "
     "\"d\"}]}",
     SCHEMA "issues[0]: field 'type' must be one of missing, unsupported, "
            "incorrect, superfluous, safety, style, got \"typo\""},
    {"{\"verdict\": \"revise\", \"confidence\": 0.3, \"issues\": [" ISSUE
     ", 7]}",
     SCHEMA "issues[1]: must be an object"},
    {"{\"verdict\": \"revise\", \"confidence\": 0.3, \"issues\": "
     "[{\"type\": \"style\", \"severity\": \"minor\", \"description\": "
     "\"d\", \"line\": -4}]}",
     SCHEMA "issues[0]: field 'line' must be an integer 0..100000000, got "
            "-4"},
    /* the schema error of the critique-like object, not of what is
     * around it or inside it */
    {"Here: ```json\n{\"verdict\": \"approve\", \"confidence\": 2, "
     "\"issues\": [" ISSUE "]}\n```",
     SCHEMA "field 'confidence' must be a number 0..1, got 2"},
    /* truncated mid-way: the complete inner issue is not a critique */
    {"{\"verdict\": \"approve\", \"confidence\": 0.9, \"issues\": [" ISSUE
     ", {\"type\": \"sty",
     SCHEMA "field 'verdict' is missing"},
};

static void bad_critiques_are_errors_naming_the_field(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(bad_cases) / sizeof(*bad_cases); i++) {
        tnd_critique *c = (tnd_critique *)1;
        if (tnd_critique_parse(&c, bad_cases[i].answer) != -1)
            fail_msg("case %zu parsed: %s", i, bad_cases[i].answer);
        assert_null(c);
        if (strcmp(tnd_error_last(), bad_cases[i].error) != 0)
            fail_msg("case %zu: %s\nexpected: %s\ngot:      %s", i,
                     bad_cases[i].answer, bad_cases[i].error, tnd_error_last());
    }
}

static void truncated_answers_are_never_a_critique(void **state)
{
    static const char *const wrappers[] = {"%.*s", "```json\n%.*s",
                                           "My review: %.*s"};
    size_t len = strlen(CRITIQUE);

    (void)state;
    /* every cut of the critique, bare, fenced and after prose */
    for (size_t w = 0; w < sizeof(wrappers) / sizeof(*wrappers); w++) {
        for (size_t cut = 0; cut < len - 1; cut++) {
            tnd_critique *c = (tnd_critique *)1;
            char *answer = tnd_xasprintf(wrappers[w], (int)cut, CRITIQUE);
            if (tnd_critique_parse(&c, answer) != -1)
                fail_msg("parsed a critique cut at %zu: %s", cut, answer);
            assert_null(c);
            free(answer);
        }
    }
}

/* ---- hostile answers --------------------------------------------------- */

/* len bytes of c. Caller frees. */
static char *repeat(char c, size_t len)
{
    char *s = tnd_xmalloc(len + 1);

    memset(s, c, len);
    s[len] = '\0';
    return s;
}

static void assert_error_within(const char *answer, int64_t ms)
{
    int64_t start = tnd_now_ms();
    tnd_critique *c = (tnd_critique *)1;

    assert_int_equal(tnd_critique_parse(&c, answer), -1);
    assert_null(c);
    assert_in_range(tnd_now_ms() - start, 0, ms);
}

static void hostile_answers_fail_promptly(void **state)
{
    size_t big = 4 << 20;
    char *s;
    tnd_buf b;

    (void)state;
    /* 100k opening braces */
    s = repeat('{', 100000);
    assert_error_within(s, 1000);
    free(s);

    /* deeply nested arrays, bare and inside a critique */
    s = repeat('[', 200000);
    memset(s + 100000, ']', 100000);
    assert_error_within(s, 1000);
    free(s);
    tnd_buf_init(&b, TND_BUF_NOCAP);
    tnd_buf_puts(&b, "{\"verdict\": \"approve\", \"confidence\": 1, "
                     "\"issues\": ");
    for (int i = 0; i < 50000; i++)
        tnd_buf_puts(&b, "[");
    for (int i = 0; i < 50000; i++)
        tnd_buf_puts(&b, "]");
    tnd_buf_puts(&b, "}");
    assert_error_within(tnd_buf_str(&b), 1000);
    tnd_buf_free(&b);

    /* nested objects just over the depth limit */
    tnd_buf_init(&b, TND_BUF_NOCAP);
    for (int i = 0; i < 40; i++)
        tnd_buf_puts(&b, "{\"a\": ");
    tnd_buf_puts(&b, "1");
    for (int i = 0; i < 40; i++)
        tnd_buf_puts(&b, "}");
    assert_error_within(tnd_buf_str(&b), 1000);
    tnd_buf_free(&b);

    /* 4 MB: a critique whose summary is far over its limit */
    tnd_buf_init(&b, TND_BUF_NOCAP);
    tnd_buf_puts(&b, "{\"verdict\": \"approve\", \"confidence\": 1, "
                     "\"issues\": [], \"summary\": \"");
    while (b.len < big)
        tnd_buf_puts(&b, "all good, {really} ");
    tnd_buf_puts(&b, "\"}");
    assert_error_within(tnd_buf_str(&b), 2000);
    assert_non_null(strstr(tnd_error_last(), "field 'summary' is "));
    tnd_buf_free(&b);

    /* 4 MB of braces that open and never close, between prose */
    s = repeat('x', big);
    for (size_t i = 0; i < big; i += 4096)
        memcpy(s + i, "{ \"", 3);
    assert_error_within(s, 2000);

    /* 4 MB of NUL-free binary junk */
    uint32_t x = 12345;
    for (size_t i = 0; i < big; i++) {
        x = x * 1103515245 + 12345;
        s[i] = (char)(1 + (x >> 16) % 255);
    }
    assert_error_within(s, 2000);
    free(s);
}

static void criteria_scores_are_read_and_written_back(void **state)
{
    tnd_critique *c = NULL;
    json_object *j;
    const char *text;

    (void)state;
    assert_int_equal(
        tnd_critique_parse(
            &c, "{\"verdict\": \"approve\", \"confidence\": 0.9, "
                "\"issues\": [], \"criteria\": {"
                "\"completeness\": {\"score\": 1, \"reason\": \"all of it\"},"
                "\"correctness\": {\"score\": 0.75, \"reason\": \"edge case\"},"
                "\"safety\": {\"score\": 1}}}"),
        0);
    assert_true(c->criteria[TND_CRITERION_COMPLETENESS].present);
    assert_true(c->criteria[TND_CRITERION_CORRECTNESS].score == 0.75);
    assert_string_equal(c->criteria[TND_CRITERION_CORRECTNESS].reason,
                        "edge case");
    assert_true(c->criteria[TND_CRITERION_SAFETY].present);
    assert_null(c->criteria[TND_CRITERION_SAFETY].reason);
    assert_false(c->criteria[TND_CRITERION_QUALITY].present);
    j = tnd_critique_to_json(c);
    text = json_object_to_json_string_ext(j, JSON_C_TO_STRING_PLAIN);
    assert_non_null(strstr(text, "\"correctness\":{\"score\":0.75"));
    assert_null(strstr(text, "quality"));
    json_object_put(j);
    tnd_critique_destroy(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(criteria_scores_are_read_and_written_back),
        cmocka_unit_test(plain_json_is_read_field_by_field),
        cmocka_unit_test(minimal_critique_defaults_the_optional_fields),
        cmocka_unit_test(the_critique_is_found_however_it_is_wrapped),
        cmocka_unit_test(trailing_commas_are_forgiven),
        cmocka_unit_test(quotes_and_braces_inside_strings_do_not_confuse),
        cmocka_unit_test(bad_critiques_are_errors_naming_the_field),
        cmocka_unit_test(truncated_answers_are_never_a_critique),
        cmocka_unit_test(hostile_answers_fail_promptly),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
