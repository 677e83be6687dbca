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

/* Code a critique quotes may hold many empty objects ("const o = {};"):
 * none can be or hold a critique, so none spends one of the 16
 * candidates. Before, 17 of them left the critique beside them unread:
 * refused as "too many JSON candidates", or, before them, "field
 * 'verdict' is missing". */
static void empty_objects_in_quoted_code_are_passed_over(void **state)
{
    tnd_buf code, answer;

    (void)state;
    tnd_buf_init(&code, TND_BUF_NOCAP);
    for (int i = 0; i < 70; i++)
        tnd_buf_printf(&code, "  const opts%d = {};\n  f({ });\n", i);
    for (int where = 0; where < 3; where++) {
        tnd_critique *c = NULL;
        tnd_buf_init(&answer, TND_BUF_NOCAP);
        if (where == 0)
            tnd_buf_printf(&answer, "The code:\n%s\nMy critique: %s",
                           tnd_buf_str(&code), CRITIQUE);
        else if (where == 1)
            tnd_buf_printf(&answer, "%s\nThe code:\n%s", CRITIQUE,
                           tnd_buf_str(&code));
        else
            tnd_buf_printf(&answer, "```json\n%s\n```\n```js\n%s```\n",
                           CRITIQUE, tnd_buf_str(&code));
        if (tnd_critique_parse(&c, tnd_buf_str(&answer)) != 0)
            fail_msg("answer %d: %s", where, tnd_error_last());
        assert_is_the_critique(c);
        tnd_critique_destroy(&c);
        tnd_buf_free(&answer);
    }
    tnd_buf_free(&code);
}

/* When the candidates run out before any critique is found, the error
 * says so, not the schema error of the last object read. */
static void candidates_run_out_before_the_critique(void **state)
{
    tnd_critique *c = NULL;
    tnd_buf b;

    (void)state;
    tnd_buf_init(&b, TND_BUF_NOCAP);
    for (int i = 0; i < 40; i++)
        tnd_buf_puts(&b, "{\"x\": 1} ");
    tnd_buf_puts(&b, CRITIQUE);
    assert_int_equal(tnd_critique_parse(&c, tnd_buf_str(&b)), -1);
    assert_null(c);
    assert_string_equal(tnd_error_last(),
                        "the answer holds too many JSON candidates to find "
                        "its critique among them; answer with exactly one "
                        "JSON object");
    tnd_buf_free(&b);
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
    {"{verdict: approve}",
     "the critique is not valid JSON: not valid JSON at byte 1: quoted "
     "object property name expected"},
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
    /* truncated mid-way: the complete inner issue is not a critique, and
     * the cut one says it ends early */
    {"{\"verdict\": \"approve\", \"confidence\": 0.9, \"issues\": [" ISSUE
     ", {\"type\": \"sty",
     "the critique is not valid JSON: JSON text ends early (after 143 "
     "bytes)"},
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

/* ---- one answer, one critique ---------------------------------------------
 *
 * A model that drafts "approve" and then settles on "revise" has given two
 * answers; so has a critique whose "verdict" key appears twice (json-c
 * would keep the last one without a word). Neither is a critique: the
 * reviewer re-asks with the error, and the gate never sees a guess. */

#define APPROVE                                                        \
    "{\"verdict\": \"approve\", \"confidence\": 0.9, \"issues\": [], " \
    "\"summary\": \"Looks right.\"}"
#define MAJOR_ISSUE                                                      \
    "{\"type\": \"incorrect\", \"severity\": \"major\", \"file\": "      \
    "\"stats.c\", \"line\": 11, \"description\": \"divides by n - 1\", " \
    "\"evidence\": \"return sum / (n - 1);\"}"
#define REVISE                                                                 \
    "{\"verdict\": \"revise\", \"confidence\": 0.8, \"issues\": [" MAJOR_ISSUE \
    "], \"summary\": \"Off by one.\"}"
#define ONE_OBJECT "; answer with exactly one JSON object"
#define DISAGREE(n, what) \
    "the answer holds " n " critiques that disagree: " what ONE_OBJECT
#define NOT_VALID(n, k, what)                          \
    "the answer holds " n " critiques and critique " k \
    " is not valid: " what ONE_OBJECT
#define AMBIGUOUS "the critique is ambiguous: "
#define CUT_SHORT                                                    \
    "the answer holds too many JSON candidates to tell whether its " \
    "critique is the only one" ONE_OBJECT

static const bad_case several_cases[] = {
    /* the torture run: a draft approval, then the real answer */
    {"Draft:\n" APPROVE
     "\n\nOn reflection the division is wrong. Final:\n" REVISE,
     DISAGREE("2", "'approve' then 'revise'")},
    {"```json\n" APPROVE "\n```\nWait, no:\n```json\n" REVISE "\n```\n",
     DISAGREE("2", "'approve' then 'revise'")},
    /* in the order of the text, though fences are read before prose */
    {"My first thought: " APPROVE "\nBut:\n```json\n" REVISE "\n```\n",
     DISAGREE("2", "'approve' then 'revise'")},
    {REVISE "\n" APPROVE, DISAGREE("2", "'revise' then 'approve'")},
    {"[" APPROVE ", " REVISE "]", DISAGREE("2", "'approve' then 'revise'")},
    /* a wrapper whose duplicate key hides the first critique from json-c */
    {"{\"critique\": " APPROVE ", \"critique\": " REVISE "}",
     DISAGREE("2", "'approve' then 'revise'")},
    {APPROVE " " APPROVE " " REVISE, DISAGREE("3", "'approve' then 'revise'")},
    /* the same verdict, but not the same critique */
    {APPROVE "\n{\"verdict\": \"approve\", \"confidence\": 0.6, \"issues\": "
             "[], \"summary\": \"Looks right.\"}",
     DISAGREE("2", "confidence 0.9 then 0.6")},
    {APPROVE "\n{\"verdict\": \"approve\", \"confidence\": 0.9, \"issues\": "
             "[" MAJOR_ISSUE "], \"summary\": \"Looks right.\"}",
     DISAGREE("2", "0 issues then 1 issue")},
    {REVISE "\n{\"verdict\": \"revise\", \"confidence\": 0.8, \"issues\": "
            "[{\"type\": \"incorrect\", \"severity\": \"minor\", \"file\": "
            "\"stats.c\", \"line\": 11, \"description\": \"divides by n - "
            "1\", \"evidence\": \"return sum / (n - 1);\"}], \"summary\": "
            "\"Off by one.\"}",
     DISAGREE("2", "issues[0].severity 'major' then 'minor'")},
    {REVISE "\n{\"verdict\": \"revise\", \"confidence\": 0.8, \"issues\": "
            "[{\"type\": \"incorrect\", \"severity\": \"major\", \"file\": "
            "\"stats.c\", \"line\": 12, \"description\": \"divides by n - "
            "1\", \"evidence\": \"return sum / (n - 1);\"}], \"summary\": "
            "\"Off by one.\"}",
     DISAGREE("2", "issues[0].line 11 then 12")},
    {REVISE "\n{\"verdict\": \"revise\", \"confidence\": 0.8, \"issues\": "
            "[{\"type\": \"incorrect\", \"severity\": \"major\", \"file\": "
            "\"stats.c\", \"line\": 11, \"description\": \"off by one\", "
            "\"evidence\": \"return sum / (n - 1);\"}], \"summary\": "
            "\"Off by one.\"}",
     DISAGREE("2", "issues[0].description differs")},
    {APPROVE "\n{\"verdict\": \"approve\", \"confidence\": 0.9, \"issues\": "
             "[], \"summary\": \"Fine.\"}",
     DISAGREE("2", "the summary differs")},
    {APPROVE "\n{\"verdict\": \"approve\", \"confidence\": 0.9, \"issues\": "
             "[], \"summary\": \"Looks right.\", \"criteria\": {\"safety\": "
             "{\"score\": 1}}}",
     DISAGREE("2", "criteria.safety differs")},
    /* a valid critique beside one that is not: which did the model mean? */
    {APPROVE "\nThen:\n{\"verdict\": \"revise\", \"confidence\": \"high\", "
             "\"issues\": []}",
     NOT_VALID("2", "2", "field 'confidence' must be a number 0..1")},
    {"{\"verdict\": \"revise\", \"confidence\": \"high\", \"issues\": []}\n"
     "Fixed:\n" APPROVE,
     NOT_VALID("2", "1", "field 'confidence' must be a number 0..1")},
    {APPROVE "\n{\"verdict\": \"revise\", \"confidence\": 0.8, \"issues\": "
             "[], \"verdict\": \"revise\"}",
     NOT_VALID("2", "2", "key 'verdict' appears twice")},
    {APPROVE "\n{\"verdict\": \"revise\", \"confidence\": 0.8, \"issues\": "
             "[{\"type\": \"incorrect\", \"severity\": \"major\", "
             "\"description\": \"feels wrong\"}]}",
     NOT_VALID("2", "2",
               "issues[0] cites no evidence: give 'evidence' (a tool excerpt "
               "or the code) or 'file' and 'line'")},
};

static const bad_case duplicate_key_cases[] = {
    /* json-c keeps the last value: this would read as approve */
    {"{\"verdict\": \"revise\", \"confidence\": 0.8, \"issues\": [" MAJOR_ISSUE
     "], \"verdict\": \"approve\"}",
     AMBIGUOUS "key 'verdict' appears twice"},
    {"```json\n{\"verdict\": \"approve\", \"confidence\": 0.9, \"confidence\": "
     "0.2, \"confidence\": 1, \"issues\": []}\n```",
     AMBIGUOUS "key 'confidence' appears 3 times"},
    /* compared as json-c reads keys: after unescaping */
    {"{\"verdict\": \"revise\", \"confidence\": 0.8, \"issues\": [], "
     "\"verd\\u0069ct\": \"approve\"}",
     AMBIGUOUS "key 'verdict' appears twice"},
    /* inside an issue, and inside the second of two issues */
    {"{\"verdict\": \"approve\", \"confidence\": 0.9, \"issues\": [{\"type\": "
     "\"style\", \"severity\": \"major\", \"severity\": \"minor\", "
     "\"description\": \"d\", \"evidence\": \"e\"}]}",
     AMBIGUOUS "issues[0]: key 'severity' appears twice"},
    {"Review: {\"verdict\": \"approve\", \"confidence\": 0.9, \"issues\": [" ISSUE
     ", {\"type\": \"style\", \"severity\": \"minor\", \"description\": "
     "\"d\", \"evidence\": \"e\", \"description\": \"d2\"}]}",
     AMBIGUOUS "issues[1]: key 'description' appears twice"},
    {"{\"verdict\": \"approve\", \"confidence\": 0.9, \"issues\": [], "
     "\"criteria\": {\"safety\": {\"score\": 0.2, \"score\": 1}}}",
     AMBIGUOUS "criteria.safety: key 'score' appears twice"},
    /* a key the schema does not read is still part of the critique */
    {"{\"verdict\": \"approve\", \"confidence\": 0.9, \"issues\": [], "
     "\"note\": 1, \"note\": 2}",
     AMBIGUOUS "key 'note' appears twice"},
};

static void check_bad_cases(const bad_case *cases, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        tnd_critique *c = (tnd_critique *)1;
        if (tnd_critique_parse(&c, cases[i].answer) != -1) {
            fail_msg("case %zu parsed as '%s': %s", i,
                     tnd_verdict_name(c->verdict), cases[i].answer);
        }
        assert_null(c);
        if (strcmp(tnd_error_last(), cases[i].error) != 0)
            fail_msg("case %zu: %s\nexpected: %s\ngot:      %s", i,
                     cases[i].answer, cases[i].error, tnd_error_last());
    }
}

/* A draft that parses and a final answer that does not: the broken one
 * may be what the model meant, so there is no critique (a "revise" with
 * one unescaped quote, a comment or single quotes, or never closed, left
 * the draft "approve" standing, and the gate approved). */
static void a_broken_claim_beside_a_valid_one_is_no_critique(void **state)
{
    static const char *const finals[] = {
        "```json\n{\"verdict\": \"revise\", \"summary\": \"do not \"merge\"\"}\n```",
        "```json\n{\"verdict\": \"revise\", // final\n \"issues\": []}\n```",
        "{'verdict': 'revise', 'issues': []}",
        "{verdict: \"revise\", issues: []}",
        "Final: {\"verdict\": \"revise\", \"issues\": [",
    };

    (void)state;
    for (size_t i = 0; i < sizeof(finals) / sizeof(*finals); i++) {
        tnd_critique *c = (tnd_critique *)1;
        char *answer = tnd_xasprintf("Draft:\n```json\n%s\n```\nOn second "
                                     "thought:\n%s\n",
                                     APPROVE, finals[i]);
        if (tnd_critique_parse(&c, answer) != -1)
            fail_msg("final %zu left the draft standing: %s", i, answer);
        assert_null(c);
        assert_non_null(strstr(tnd_error_last(), "is not valid"));
        free(answer);
    }
}

/* A brace left open earlier in the prose spans all that follows: what it
 * names outside the valid claim in it is its own (a broken final revise
 * after it was dropped, and the draft approve taken); and prose that
 * says "my verdict: approve" beside the one critique is no claim. */
static void an_open_brace_does_not_hide_a_broken_claim(void **state)
{
    static const char *const broken[] = {
        "The old code wrote {'a': 1 as a dict.\nDraft:\n```json\n" APPROVE
        "\n```\nFinal: {\"verdict\": \"revise\", \"summary\": \"5\" is "
        "wrong\", \"issues\": []}",
        "The old code wrote {'a': 1 as a dict.\nDraft:\n```json\n" APPROVE
        "\n```\nFinal: {\"verdict\": \"revise\", \"issues\": [\n",
        "First: {\"verdict\": \"revise\", \"summary\": \"5\" is wrong\", "
        "\"issues\": []}\nThen:\n```json\n" APPROVE "\n```\n",
    };
    static const char *const fine[] = {
        APPROVE "\n\nMy verdict: approve, as the JSON says.",
        "Looking at {the code} first.\n```json\n" APPROVE "\n```\n",
    };

    (void)state;
    for (size_t i = 0; i < sizeof(broken) / sizeof(*broken); i++) {
        tnd_critique *c = (tnd_critique *)1;
        if (tnd_critique_parse(&c, broken[i]) != -1)
            fail_msg("broken %zu read as a critique: %s", i, broken[i]);
        assert_null(c);
    }
    for (size_t i = 0; i < sizeof(fine) / sizeof(*fine); i++) {
        tnd_critique *c = NULL;
        if (tnd_critique_parse(&c, fine[i]) != 0)
            fail_msg("fine %zu refused: %s", i, tnd_error_last());
        assert_int_equal(c->verdict, TND_VERDICT_APPROVE);
        tnd_critique_destroy(&c);
    }
}

static void several_critiques_that_differ_are_no_critique(void **state)
{
    (void)state;
    check_bad_cases(several_cases,
                    sizeof(several_cases) / sizeof(*several_cases));
}

static void a_key_given_twice_is_no_critique(void **state)
{
    (void)state;
    check_bad_cases(duplicate_key_cases,
                    sizeof(duplicate_key_cases) / sizeof(*duplicate_key_cases));
}

/* A model that quotes its answer again has still given one answer: the
 * copies are the same critique once parsed (spacing, key order, trailing
 * commas and 0.85 vs 0.850 aside), so nothing is guessed in taking it. */
static void identical_copies_are_one_critique(void **state)
{
    static const char *const answers[] = {
        CRITIQUE "\n\nTo repeat:\n" CRITIQUE,
        "```json\n" CRITIQUE "\n```\nThat is: " CRITIQUE "\n",
        "```json\n" CRITIQUE "\n```\n```json\n" CRITIQUE "\n```\n",
        CRITIQUE "\n"
                 "{\"summary\": \"Mean is off by one.\", \"issues\": ["
                 "{\"severity\": \"major\", \"type\": \"incorrect\", "
                 "\"line\": 42, \"file\": \"src/stats.c\", \"description\": "
                 "\"divides by n - 1\", \"suggested_fix\": \"return sum / "
                 "n;\", \"evidence\": \"return sum / (n - 1);\"},"
                 "{\"type\": \"style\", \"severity\": \"minor\", "
                 "\"description\": \"name the constant\", \"evidence\": "
                 "\"x * 86400\",},], \"confidence\": 0.850, \"verdict\": "
                 "\"revise\"}",
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

/* Keys repeat across objects, and "verdict" may be text: neither is a
 * duplicate. */
static void the_same_key_elsewhere_is_no_duplicate(void **state)
{
    tnd_critique *c = NULL;

    (void)state;
    /* two issues, each with its own type, severity, description ... */
    assert_int_equal(tnd_critique_parse(&c, CRITIQUE), 0);
    assert_int_equal(c->nissues, 2);
    tnd_critique_destroy(&c);

    assert_int_equal(
        tnd_critique_parse(
            &c, "{\"verdict\": \"revise\", \"confidence\": 0.7, \"issues\": "
                "[{\"type\": \"incorrect\", \"severity\": \"major\", "
                "\"description\": \"the \\\"verdict\\\" key is read twice: "
                "\\\"verdict\\\": \\\"approve\\\"\", \"evidence\": "
                "\"{\\\"verdict\\\": 1, \\\"verdict\\\": 2}\"}], "
                "\"summary\": \"verdict, verdict\", "
                "\"meta\": {\"verdict\": \"draft\", \"issues\": 3}}"),
        0);
    assert_int_equal(c->verdict, TND_VERDICT_REVISE);
    assert_string_equal(c->issues[0].description,
                        "the \"verdict\" key is read twice: \"verdict\": "
                        "\"approve\"");
    tnd_critique_destroy(&c);
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

/* A hostile answer is refused, and soon: the bound is a hang guard
 * (backtracking that is exponential takes minutes), wide enough for a
 * loaded machine under valgrind; speed is bench/'s to measure. */
static void assert_error_within(const char *answer)
{
    int64_t start = tnd_now_ms();
    tnd_critique *c = (tnd_critique *)1;

    assert_int_equal(tnd_critique_parse(&c, answer), -1);
    assert_null(c);
    assert_in_range(tnd_now_ms() - start, 0, 30000);
}

static void hostile_answers_fail_promptly(void **state)
{
    size_t big = 4 << 20;
    char *s;
    tnd_buf b;

    (void)state;
    /* 100k opening braces */
    s = repeat('{', 100000);
    assert_error_within(s);
    free(s);

    /* deeply nested arrays, bare and inside a critique */
    s = repeat('[', 200000);
    memset(s + 100000, ']', 100000);
    assert_error_within(s);
    free(s);
    tnd_buf_init(&b, TND_BUF_NOCAP);
    tnd_buf_puts(&b, "{\"verdict\": \"approve\", \"confidence\": 1, "
                     "\"issues\": ");
    for (int i = 0; i < 50000; i++)
        tnd_buf_puts(&b, "[");
    for (int i = 0; i < 50000; i++)
        tnd_buf_puts(&b, "]");
    tnd_buf_puts(&b, "}");
    assert_error_within(tnd_buf_str(&b));
    tnd_buf_free(&b);

    /* nested objects just over the depth limit */
    tnd_buf_init(&b, TND_BUF_NOCAP);
    for (int i = 0; i < 40; i++)
        tnd_buf_puts(&b, "{\"a\": ");
    tnd_buf_puts(&b, "1");
    for (int i = 0; i < 40; i++)
        tnd_buf_puts(&b, "}");
    assert_error_within(tnd_buf_str(&b));
    tnd_buf_free(&b);

    /* 4 MB: a critique whose summary is far over its limit */
    tnd_buf_init(&b, TND_BUF_NOCAP);
    tnd_buf_puts(&b, "{\"verdict\": \"approve\", \"confidence\": 1, "
                     "\"issues\": [], \"summary\": \"");
    while (b.len < big)
        tnd_buf_puts(&b, "all good, {really} ");
    tnd_buf_puts(&b, "\"}");
    assert_error_within(tnd_buf_str(&b));
    assert_non_null(strstr(tnd_error_last(), "field 'summary' is "));
    tnd_buf_free(&b);

    /* 4 MB of braces that open and never close, between prose */
    s = repeat('x', big);
    for (size_t i = 0; i < big; i += 4096)
        memcpy(s + i, "{ \"", 3);
    assert_error_within(s);

    /* 4 MB of NUL-free binary junk */
    uint32_t x = 12345;
    for (size_t i = 0; i < big; i++) {
        x = x * 1103515245 + 12345;
        s[i] = (char)(1 + (x >> 16) % 255);
    }
    assert_error_within(s);
    free(s);
}

static void hostile_answers_with_many_critiques_fail_promptly(void **state)
{
    tnd_buf b;

    (void)state;
    /* 10k copies of one critique: more than the reviewer reads, so it
     * cannot vouch that none of the rest differs */
    tnd_buf_init(&b, TND_BUF_NOCAP);
    for (int i = 0; i < 10000; i++)
        tnd_buf_puts(&b, APPROVE "\n");
    assert_error_within(tnd_buf_str(&b));
    assert_string_equal(tnd_error_last(), CUT_SHORT);
    tnd_buf_free(&b);

    /* 10k alternating verdicts */
    tnd_buf_init(&b, TND_BUF_NOCAP);
    for (int i = 0; i < 5000; i++)
        tnd_buf_puts(&b, APPROVE " " REVISE " ");
    assert_error_within(tnd_buf_str(&b));
    assert_true(strncmp(tnd_error_last(), "the answer holds at least ", 26) ==
                0);
    assert_non_null(strstr(tnd_error_last(), " critiques that disagree: "
                                             "'approve' then 'revise'"));
    tnd_buf_free(&b);

    /* the disagreeing critique hidden behind more objects than are read */
    tnd_buf_init(&b, TND_BUF_NOCAP);
    tnd_buf_puts(&b, APPROVE "\n");
    for (int i = 0; i < 200; i++)
        tnd_buf_puts(&b, "{\"x\": 1} ");
    tnd_buf_puts(&b, REVISE);
    assert_error_within(tnd_buf_str(&b));
    assert_string_equal(tnd_error_last(), CUT_SHORT);
    tnd_buf_free(&b);

    /* a critique, then 10k critiques cut off inside a string */
    tnd_buf_init(&b, TND_BUF_NOCAP);
    tnd_buf_puts(&b, APPROVE "\n");
    for (int i = 0; i < 10000; i++)
        tnd_buf_puts(&b, "{\"verdict\": \"approve, ");
    assert_error_within(tnd_buf_str(&b));
    tnd_buf_free(&b);

    /* a critique, then 10k braces nested past the depth limit */
    tnd_buf_init(&b, TND_BUF_NOCAP);
    tnd_buf_puts(&b, APPROVE "\n");
    for (int i = 0; i < 10000; i++)
        tnd_buf_puts(&b, "{\"a\": ");
    assert_error_within(tnd_buf_str(&b));
    tnd_buf_free(&b);

    /* 10k duplicate keys, and duplicates at the deepest level allowed */
    tnd_buf_init(&b, TND_BUF_NOCAP);
    tnd_buf_puts(&b, "{\"verdict\": \"approve\", \"confidence\": 1, "
                     "\"issues\": []");
    for (int i = 0; i < 10000; i++)
        tnd_buf_puts(&b, ", \"k\": 1");
    tnd_buf_puts(&b, "}");
    assert_error_within(tnd_buf_str(&b));
    assert_string_equal(tnd_error_last(),
                        AMBIGUOUS "key 'k' appears 10000 times");
    tnd_buf_free(&b);
    tnd_buf_init(&b, TND_BUF_NOCAP);
    tnd_buf_puts(&b, "{\"verdict\": \"approve\", \"confidence\": 1, "
                     "\"issues\": [], \"m\": ");
    for (int i = 0; i < 29; i++) /* 31 levels: the parser's deepest */
        tnd_buf_puts(&b, "{\"m\": ");
    tnd_buf_puts(&b, "{\"k\": 1, \"k\": 2}");
    for (int i = 0; i < 30; i++)
        tnd_buf_puts(&b, "}");
    assert_error_within(tnd_buf_str(&b));
    assert_non_null(strstr(tnd_error_last(), ".m.m: key 'k' appears twice"));
    tnd_buf_free(&b);
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
        cmocka_unit_test(empty_objects_in_quoted_code_are_passed_over),
        cmocka_unit_test(candidates_run_out_before_the_critique),
        cmocka_unit_test(quotes_and_braces_inside_strings_do_not_confuse),
        cmocka_unit_test(bad_critiques_are_errors_naming_the_field),
        cmocka_unit_test(truncated_answers_are_never_a_critique),
        cmocka_unit_test(a_broken_claim_beside_a_valid_one_is_no_critique),
        cmocka_unit_test(an_open_brace_does_not_hide_a_broken_claim),
        cmocka_unit_test(several_critiques_that_differ_are_no_critique),
        cmocka_unit_test(a_key_given_twice_is_no_critique),
        cmocka_unit_test(identical_copies_are_one_critique),
        cmocka_unit_test(the_same_key_elsewhere_is_no_duplicate),
        cmocka_unit_test(hostile_answers_fail_promptly),
        cmocka_unit_test(hostile_answers_with_many_critiques_fail_promptly),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
