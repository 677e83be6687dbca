/* Unit tests for proto/json: parsing JSON from outside with limits, and
 * reading fields with checks whose errors name the field. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "proto/json.h"

/* Parse a NUL-terminated text that must be valid. */
static json_object *parse(const char *text)
{
    json_object *obj = NULL;

    if (tnd_json_parse(&obj, text, strlen(text)) < 0)
        fail_msg("cannot parse %s: %s", text, tnd_error_last());
    return obj;
}

/* text must fail to parse with an error containing want. */
static void parse_fails(const char *text, size_t len, const char *want)
{
    json_object *obj = (json_object *)1;

    assert_int_equal(tnd_json_parse(&obj, text, len), -1);
    assert_null(obj);
    if (!strstr(tnd_error_last(), want))
        fail_msg("parsing '%.*s': error \"%s\" does not say \"%s\"", (int)len,
                 text, tnd_error_last(), want);
}

/* ---- parsing ---------------------------------------------------------- */

static void parse_one_value(void **state)
{
    const char text[] = "{\"a\": [1, 2], \"b\": \"x\"}";
    json_object *obj = NULL;

    (void)state;
    /* no NUL needed: only len bytes are read */
    assert_int_equal(tnd_json_parse(&obj, text, sizeof(text) - 1), 0);
    assert_true(json_object_is_type(obj, json_type_object));
    assert_int_equal(json_object_object_length(obj), 2);
    json_object_put(obj);

    obj = parse(" {\"a\":1}\r\n\t ");
    assert_true(json_object_is_type(obj, json_type_object));
    json_object_put(obj);
}

static void parse_scalars_at_the_very_end(void **state)
{
    json_object *obj;

    (void)state;
    /* a number or literal with nothing after it is complete */
    obj = parse("42");
    assert_int_equal(json_object_get_int(obj), 42);
    json_object_put(obj);
    obj = parse("-1.5e3");
    assert_true(json_object_get_double(obj) == -1500.0);
    json_object_put(obj);
    obj = parse("true");
    assert_true(json_object_get_boolean(obj));
    json_object_put(obj);
    obj = parse("\"s\"");
    assert_string_equal(json_object_get_string(obj), "s");
    json_object_put(obj);
    /* JSON null is json-c's NULL */
    obj = (json_object *)1;
    assert_int_equal(tnd_json_parse(&obj, "null", 4), 0);
    assert_null(obj);
    /* ... and only what len covers is read */
    assert_int_equal(tnd_json_parse(&obj, "123", 2), 0);
    assert_int_equal(json_object_get_int(obj), 12);
    json_object_put(obj);
}

static void parse_errors_say_where(void **state)
{
    char deep[80];

    (void)state;
    parse_fails("", 0, "JSON text ends early (after 0 bytes)");
    parse_fails("{\"a\": [1, 2", 11, "JSON text ends early (after 11 bytes)");
    parse_fails("nul", 3, "ends early");
    parse_fails("{\"a\":}", 6, "not valid JSON at byte 5");
    parse_fails("[1,]", 4, "not valid JSON at byte 3");
    parse_fails("{} x", 4, "not valid JSON at byte 3");
    parse_fails("{}\0x", 4, "unexpected text after the JSON value at byte 2");
    parse_fails("1 2", 3, "not valid JSON");
    parse_fails("hello", 5, "not valid JSON at byte 0");

    /* nesting deeper than TND_JSON_MAX_DEPTH */
    memset(deep, '[', TND_JSON_MAX_DEPTH + 1);
    memset(deep + TND_JSON_MAX_DEPTH + 1, ']', TND_JSON_MAX_DEPTH + 1);
    parse_fails(deep, 2 * (TND_JSON_MAX_DEPTH + 1), "nesting too deep");
    memset(deep, '[', TND_JSON_MAX_DEPTH);
    memset(deep + TND_JSON_MAX_DEPTH, ']', TND_JSON_MAX_DEPTH);
    deep[2 * TND_JSON_MAX_DEPTH] = '\0';
    json_object_put(parse(deep));
}

/* ---- fields ----------------------------------------------------------- */

static void strings_are_checked(void **state)
{
    json_object *obj = parse("{\"name\": \"coder\", \"n\": 3, \"nul\": "
                             "\"a\\u0000b\", \"none\": null, \"e\": \"\"}");
    char *s = (char *)1;

    (void)state;
    assert_int_equal(tnd_json_get_str(&s, obj, "name", 5, 0), 0);
    assert_string_equal(s, "coder");
    free(s);
    assert_int_equal(tnd_json_get_str(&s, obj, "e", 0, 0), 0);
    assert_string_equal(s, "");
    free(s);

    assert_int_equal(tnd_json_get_str(&s, obj, "name", 4, 0), -1);
    assert_null(s);
    assert_string_equal(tnd_error_last(), "field 'name' is 5 bytes, more "
                                          "than the limit of 4");
    assert_int_equal(tnd_json_get_str(&s, obj, "n", 10, 0), -1);
    assert_string_equal(tnd_error_last(), "field 'n' must be a string");
    assert_int_equal(tnd_json_get_str(&s, obj, "nul", 10, 0), -1);
    assert_string_equal(tnd_error_last(), "field 'nul' contains a NUL byte");
    /* a model's text: the NUL is read as U+FFFD, the rest kept */
    assert_int_equal(tnd_json_get_str(&s, obj, "nul", 10, TND_JSON_TEXT), 0);
    assert_string_equal(s, "a\xEF\xBF\xBD"
                           "b");
    free(s);

    /* missing and null are the same thing */
    assert_int_equal(tnd_json_get_str(&s, obj, "absent", 10, TND_JSON_REQUIRED),
                     -1);
    assert_string_equal(tnd_error_last(), "field 'absent' is missing");
    assert_int_equal(tnd_json_get_str(&s, obj, "none", 10, 0), -1);
    assert_string_equal(tnd_error_last(), "field 'none' is missing");
    assert_int_equal(tnd_json_get_str(&s, obj, "none", 10, TND_JSON_OPTIONAL),
                     0);
    assert_null(s);
    assert_int_equal(tnd_json_get_str(&s, obj, "absent", 10, TND_JSON_OPTIONAL),
                     0);
    assert_null(s);
    json_object_put(obj);
}

static void integers_are_checked(void **state)
{
    json_object *obj = parse("{\"n\": 7, \"d\": 3.0, \"f\": 3.5, \"s\": \"7\", "
                             "\"big\": 99999999999999999999, \"neg\": -2}");
    long n = -1;

    (void)state;
    assert_int_equal(tnd_json_get_int(&n, obj, "n", 1, 10, 0), 0);
    assert_int_equal(n, 7);
    assert_int_equal(tnd_json_get_int(&n, obj, "d", 1, 10, 0), 0);
    assert_int_equal(n, 3); /* 3.0 is an integer */
    assert_int_equal(tnd_json_get_int(&n, obj, "neg", -5, 5, 0), 0);
    assert_int_equal(n, -2);

    n = -1;
    assert_int_equal(tnd_json_get_int(&n, obj, "n", 1, 5, 0), -1);
    assert_string_equal(tnd_error_last(),
                        "field 'n' must be an integer 1..5, got 7");
    assert_int_equal(tnd_json_get_int(&n, obj, "f", 1, 10, 0), -1);
    assert_string_equal(tnd_error_last(), "field 'f' must be an integer 1..10");
    assert_int_equal(tnd_json_get_int(&n, obj, "d", 4, 10, 0), -1);
    assert_int_equal(tnd_json_get_int(&n, obj, "s", 1, 10, 0), -1);
    assert_string_equal(tnd_error_last(), "field 's' must be an integer 1..10");
    assert_int_equal(tnd_json_get_int(&n, obj, "big", 0, 1000, 0), -1);
    assert_non_null(strstr(tnd_error_last(), "field 'big' must be"));
    assert_int_equal(n, -1); /* untouched by failures */

    assert_int_equal(tnd_json_get_int(&n, obj, "absent", 0, 1, 0), -1);
    assert_string_equal(tnd_error_last(), "field 'absent' is missing");
    assert_int_equal(
        tnd_json_get_int(&n, obj, "absent", 0, 1, TND_JSON_OPTIONAL), 0);
    assert_int_equal(n, -1); /* a missing optional field leaves it */
    json_object_put(obj);
}

static void doubles_are_checked(void **state)
{
    json_object *obj = parse("{\"c\": 0.95, \"one\": 1, \"hi\": 1.5, "
                             "\"s\": \"0.5\"}");
    double d = -1;

    (void)state;
    assert_int_equal(tnd_json_get_double(&d, obj, "c", 0, 1, 0), 0);
    assert_true(d == 0.95);
    assert_int_equal(tnd_json_get_double(&d, obj, "one", 0, 1, 0), 0);
    assert_true(d == 1.0); /* integers are numbers too */

    d = -1;
    assert_int_equal(tnd_json_get_double(&d, obj, "hi", 0, 1, 0), -1);
    assert_string_equal(tnd_error_last(),
                        "field 'hi' must be a number 0..1, got 1.5");
    assert_int_equal(tnd_json_get_double(&d, obj, "s", 0, 1, 0), -1);
    assert_string_equal(tnd_error_last(), "field 's' must be a number 0..1");
    assert_int_equal(
        tnd_json_get_double(&d, obj, "absent", 0, 1, TND_JSON_OPTIONAL), 0);
    assert_true(d == -1);
    assert_int_equal(tnd_json_get_double(&d, obj, "absent", 0, 1, 0), -1);
    json_object_put(obj);
}

static void booleans_are_checked(void **state)
{
    json_object *obj = parse("{\"t\": true, \"f\": false, \"one\": 1}");
    bool b = false;

    (void)state;
    assert_int_equal(tnd_json_get_bool(&b, obj, "t", 0), 0);
    assert_true(b);
    assert_int_equal(tnd_json_get_bool(&b, obj, "f", 0), 0);
    assert_false(b);
    assert_int_equal(tnd_json_get_bool(&b, obj, "one", 0), -1);
    assert_string_equal(tnd_error_last(), "field 'one' must be true or false");
    b = true;
    assert_int_equal(tnd_json_get_bool(&b, obj, "absent", TND_JSON_OPTIONAL),
                     0);
    assert_true(b);
    assert_int_equal(tnd_json_get_bool(&b, obj, "absent", 0), -1);
    json_object_put(obj);
}

static void arrays_and_objects_are_borrowed(void **state)
{
    json_object *obj = parse("{\"list\": [1, 2, 3], \"o\": {\"k\": 1}, "
                             "\"n\": 1}");
    json_object *v = (json_object *)1;

    (void)state;
    assert_int_equal(tnd_json_get_array(&v, obj, "list", 3, 0), 0);
    assert_int_equal(json_object_array_length(v), 3);
    assert_int_equal(tnd_json_get_array(&v, obj, "list", 2, 0), -1);
    assert_null(v);
    assert_string_equal(tnd_error_last(), "field 'list' has 3 items, more "
                                          "than the limit of 2");
    assert_int_equal(tnd_json_get_array(&v, obj, "o", 10, 0), -1);
    assert_string_equal(tnd_error_last(), "field 'o' must be a list");
    assert_int_equal(
        tnd_json_get_array(&v, obj, "absent", 10, TND_JSON_OPTIONAL), 0);
    assert_null(v);

    assert_int_equal(tnd_json_get_object(&v, obj, "o", 0), 0);
    assert_true(json_object_is_type(v, json_type_object));
    assert_int_equal(tnd_json_get_object(&v, obj, "list", 0), -1);
    assert_string_equal(tnd_error_last(), "field 'list' must be an object");
    assert_int_equal(tnd_json_get_object(&v, obj, "absent", 0), -1);
    assert_string_equal(tnd_error_last(), "field 'absent' is missing");
    assert_int_equal(tnd_json_get_object(&v, obj, "absent", TND_JSON_OPTIONAL),
                     0);
    assert_null(v);
    json_object_put(obj);
}

static void fields_of_a_non_object_are_missing(void **state)
{
    json_object *list = parse("[1]");
    char *s;

    (void)state;
    assert_int_equal(tnd_json_get_str(&s, list, "a", 10, 0), -1);
    assert_string_equal(tnd_error_last(), "field 'a' is missing");
    assert_int_equal(tnd_json_get_str(&s, NULL, "a", 10, 0), -1);
    json_object_put(list);
}

/* ---- writing ---------------------------------------------------------- */

static void dump_is_compact_and_keeps_slashes(void **state)
{
    json_object *obj = parse("{ \"path\": \"src/a.c\", \"n\": [1, 2] }");
    size_t len = 0;
    char *s;

    (void)state;
    s = tnd_json_dump(obj, &len);
    assert_string_equal(s, "{\"path\":\"src/a.c\",\"n\":[1,2]}");
    assert_int_equal(len, strlen(s));
    free(s);
    s = tnd_json_dump(obj, NULL);
    assert_non_null(s);
    free(s);

    s = tnd_json_pretty(obj);
    assert_non_null(strstr(s, "\"src/a.c\""));
    assert_non_null(strchr(s, '\n'));
    assert_int_equal(s[strlen(s) - 1], '\n');
    free(s);
    json_object_put(obj);
}

/* JSON is UTF-8: a string's stray bytes (a Latin-1 file name, a test's
 * output) come out as U+FFFD, so no peer or API refuses what we write. */
static void written_json_is_valid_utf8(void **state)
{
    json_object *obj = json_object_new_object();
    size_t len = 0;
    char *s;

    (void)state;
    json_object_object_add(obj, "name",
                           json_object_new_string("Ren\xE9 \xC3\xA9"));
    s = tnd_json_dump(obj, &len);
    assert_string_equal(s, "{\"name\":\"Ren\xEF\xBF\xBD \xC3\xA9\"}");
    assert_int_equal(len, strlen(s));
    free(s);
    s = tnd_json_pretty(obj);
    assert_non_null(strstr(s, "\"Ren\xEF\xBF\xBD \xC3\xA9\""));
    free(s);
    json_object_put(obj);
}

/* Keys that differ only in bytes that are not UTF-8 would both come out
 * as U+FFFD: a repeated key, which a reader resolves without a word and
 * tnd_json_check_unique_keys refuses (agents' progress keys reach the
 * events this way). The last value wins, as json-c reads a repeated key.
 * Found by tests/fuzz/fuzz_json with the first text. */
static void keys_made_valid_stay_unique(void **state)
{
    static const char *const cases[][2] = {
        {"{\"\xef\":1,\"\xbd\":0}", "{\"\xEF\xBF\xBD\":0}"},
        {"[{\"a\":{\"k\xff\":1,\"ok\":\"\xff\",\"k\xfe\":[2]}}]",
         "[{\"a\":{\"k\xEF\xBF\xBD\":[2],\"ok\":\"\xEF\xBF\xBD\"}}]"},
    };
    size_t len;
    char *s;

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        json_object *obj = parse(cases[i][0]);
        s = tnd_json_dump(obj, &len);
        assert_string_equal(s, cases[i][1]);
        assert_int_equal(len, strlen(s));
        assert_int_equal(tnd_json_check_unique_keys(s, len), 0);
        free(s);
        s = tnd_json_pretty(obj);
        assert_int_equal(tnd_json_check_unique_keys(s, strlen(s)), 0);
        free(s);
        json_object_put(obj);
    }
}

static void str_or_null(void **state)
{
    json_object *s = tnd_json_str_or_null("x");

    (void)state;
    assert_string_equal(json_object_get_string(s), "x");
    json_object_put(s);
    assert_null(tnd_json_str_or_null(NULL));
}

/* The lenient readers of journal records and reports: a missing, null or
 * oddly typed field gives the fallback, never an error. */
static void lenient_readers_fall_back(void **state)
{
    json_object *o = parse("{\"s\": \"text\", \"n\": 42, \"big\": "
                           "5000000000, \"d\": 2.9, \"ns\": \"17\", "
                           "\"t\": true, \"z\": null, \"sub\": {\"k\": 1}}");
    json_object *a = parse("[1]");

    (void)state;
    assert_ptr_equal(tnd_json_field(o, "sub"),
                     json_object_object_get(o, "sub"));
    assert_null(tnd_json_field(o, "z"));
    assert_null(tnd_json_field(o, "none"));
    assert_null(tnd_json_field(a, "s"));
    assert_null(tnd_json_field(NULL, "s"));

    assert_string_equal(tnd_json_str_or(o, "s", NULL), "text");
    assert_null(tnd_json_str_or(o, "n", NULL)); /* not a string */
    assert_string_equal(tnd_json_str_or(o, "z", "-"), "-");
    assert_string_equal(tnd_json_str_or(o, "none", ""), "");
    assert_null(tnd_json_str_or(NULL, "s", NULL));

    assert_int_equal(tnd_json_int_or(o, "n", -1), 42);
    assert_int_equal(tnd_json_int_or(o, "big", -1), 5000000000L);
    assert_int_equal(tnd_json_int_or(o, "d", -1), 2);
    assert_int_equal(tnd_json_int_or(o, "ns", -1), 17);
    assert_int_equal(tnd_json_int_or(o, "z", -1), -1);
    assert_int_equal(tnd_json_int_or(o, "none", -1), -1);
    assert_int_equal(tnd_json_int_or(tnd_json_field(o, "sub"), "k", 0), 1);
    assert_int_equal(tnd_json_int_or(NULL, "n", 7), 7);

    assert_true(tnd_json_bool_or(o, "t", false));
    assert_false(tnd_json_bool_or(o, "none", false));
    assert_true(tnd_json_bool_or(o, "z", true));
    assert_true(tnd_json_bool_or(o, "n", false)); /* json-c: nonzero */
    json_object_put(o);
    json_object_put(a);
}

/* ---- repeated keys ------------------------------------------------------ */

typedef struct keys_case {
    const char *text;
    const char *error; /* NULL: every key is unique */
} keys_case;

static const keys_case keys_cases[] = {
    {"{}", NULL},
    {"{\"a\": 1, \"b\": 2}", NULL},
    /* the same name in different objects, or as a value */
    {"[{\"a\": 1}, {\"a\": 2}]", NULL},
    {"{\"a\": {\"a\": {\"a\": 1}}, \"b\": {\"a\": 2}}", NULL},
    {"{\"a\": \"\\\"a\\\": 1, \\\"a\\\": 2\", \"b\": [\"a\", \"a\"]}", NULL},
    {"{\"a\\\"\": 1, \"a\": 2, \"A\": 3}", NULL},
    {"{\"\\u00e9\": 1, \"\\u00c9\": 2}", NULL},
    {"\"a\"", NULL},
    {"42", NULL},
    /* repeated */
    {"{\"a\": 1, \"a\": 2}", "key 'a' appears twice"},
    {"{\"a\": 1, \"b\": 2, \"a\": 3, \"a\": 4}", "key 'a' appears 3 times"},
    {"{\"verdict\": 1, \"verd\\u0069ct\": 2}", "key 'verdict' appears twice"},
    {"{\"\\u00e9\": 1, \"\xc3\xa9\": 2}", "key '\xc3\xa9' appears twice"},
    {"{\"\\/\": 1, \"/\": 2}", "key '/' appears twice"},
    /* json-c keys are C strings: "a\u0000b" is stored as "a" */
    {"{\"a\\u0000b\": 1, \"a\": 2}", "key 'a' appears twice"},
    /* where: the path to the object, as the schema errors give it */
    {"[{\"b\": 1}, {\"b\": 1, \"b\": 2}]", "[1]: key 'b' appears twice"},
    {"{\"issues\": [{\"t\": 1}, {\"t\": 1, \"t\": 2}]}",
     "issues[1]: key 't' appears twice"},
    {"{\"criteria\": {\"safety\": {\"score\": 1, \"score\": 0}}}",
     "criteria.safety: key 'score' appears twice"},
    {"{\"a\": [[1, {\"x\": 0}], [{\"x\": 1, \"x\": 2}]]}",
     "a[1][0]: key 'x' appears twice"},
    /* the key repeated first in the text is named */
    {"{\"a\": 1, \"b\": {\"x\": 1, \"x\": 2}, \"a\": 2}",
     "b: key 'x' appears twice"},
    {"{\"a\": 1, \"a\": 2, \"b\": {\"x\": 1, \"x\": 2}}",
     "key 'a' appears twice"},
    /* a name from outside is shown printable */
    {"{\"a\\rb\": 1, \"a\\rb\": 2}", "key 'a?b' appears twice"},
    /* not JSON: read as far as it looks like JSON, never past the end */
    {"{\"a\": 1, \"a", NULL},
    {"{\"a\": \"never closed", NULL},
    {"{\"a\": 1, \"a\": 2, \"b\": \"never closed", "key 'a' appears twice"},
};

static void repeated_keys_are_found_as_json_c_reads_them(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(keys_cases) / sizeof(*keys_cases); i++) {
        const keys_case *k = &keys_cases[i];
        int rc = tnd_json_check_unique_keys(k->text, strlen(k->text));
        if (!k->error && rc != 0)
            fail_msg("case %zu: %s: %s", i, k->text, tnd_error_last());
        if (k->error && rc != -1)
            fail_msg("case %zu: no repeated key found in %s", i, k->text);
        if (k->error && strcmp(tnd_error_last(), k->error) != 0)
            fail_msg("case %zu: %s\nexpected: %s\ngot:      %s", i, k->text,
                     k->error, tnd_error_last());
    }
}

/* json-c itself agrees: where a key is repeated, the parsed object has
 * fewer members than the text has keys. */
static void json_c_drops_what_is_reported(void **state)
{
    json_object *o = parse("{\"verdict\": \"revise\", \"verd\\u0069ct\": "
                           "\"approve\", \"a\\u0000b\": 1, \"a\": 2}");

    (void)state;
    assert_int_equal(json_object_object_length(o), 2);
    assert_string_equal(
        json_object_get_string(json_object_object_get(o, "verdict")),
        "approve");
    json_object_put(o);
}

static void repeated_keys_within_bounds(void **state)
{
    char deep[64 * 6 + 1] = "", *big;
    size_t n = 200000, len = 0;

    (void)state;
    /* nesting past the parser's limit is refused, not recursed into */
    for (int i = 0; i < 64; i++)
        strcat(deep, "{\"a\":");
    assert_int_equal(tnd_json_check_unique_keys(deep, strlen(deep)), -1);
    assert_string_equal(tnd_error_last(), "JSON nested deeper than 32 levels");

    /* 200k keys of one object, all different but for the last */
    big = malloc(n * 12 + 32);
    assert_non_null(big);
    big[len++] = '{';
    for (size_t i = 0; i < n; i++)
        len += (size_t)sprintf(big + len, "%s\"k%zu\":1", i ? "," : "", i);
    len += (size_t)sprintf(big + len, ",\"k7\":2}");
    assert_int_equal(tnd_json_check_unique_keys(big, len), -1);
    assert_string_equal(tnd_error_last(), "key 'k7' appears twice");
    free(big);
}

/* An enum from a peer: its name, or an error naming the value and the
 * names allowed. */
static void enums_are_read_by_name(void **state)
{
    static const char *const names[] = {NULL, "replace", "write", "delete"};
    static const tnd_names kinds = TND_NAMES("edit kind", names);
    json_object *obj = parse("{\"a\": \"write\", \"b\": \"move\", \"c\": 3, "
                             "\"d\": \"?\", \"e\": \"x\\ny\"}");
    int v = -1;

    (void)state;
    assert_int_equal(tnd_json_get_enum(&v, obj, "a", &kinds), 0);
    assert_int_equal(v, 2);
    assert_int_equal(tnd_json_get_enum(&v, obj, "b", &kinds), -1);
    assert_string_equal(tnd_error_last(), "field 'b' must be one of replace, "
                                          "write, delete, got \"move\"");
    /* "?", the name shown for a value without one, is no name */
    assert_int_equal(tnd_json_get_enum(&v, obj, "d", &kinds), -1);
    assert_int_equal(tnd_json_get_enum(&v, obj, "e", &kinds), -1);
    assert_string_equal(tnd_error_last(), "field 'e' must be one of replace, "
                                          "write, delete, got \"x?y\"");
    assert_int_equal(tnd_json_get_enum(&v, obj, "c", &kinds), -1);
    assert_string_equal(tnd_error_last(), "field 'c' must be a string");
    assert_int_equal(tnd_json_get_enum(&v, obj, "absent", &kinds), -1);
    assert_string_equal(tnd_error_last(), "field 'absent' is missing");
    assert_int_equal(v, 2); /* left as it was */
    json_object_put(obj);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(parse_one_value),
        cmocka_unit_test(parse_scalars_at_the_very_end),
        cmocka_unit_test(parse_errors_say_where),
        cmocka_unit_test(strings_are_checked),
        cmocka_unit_test(enums_are_read_by_name),
        cmocka_unit_test(integers_are_checked),
        cmocka_unit_test(doubles_are_checked),
        cmocka_unit_test(booleans_are_checked),
        cmocka_unit_test(arrays_and_objects_are_borrowed),
        cmocka_unit_test(fields_of_a_non_object_are_missing),
        cmocka_unit_test(dump_is_compact_and_keeps_slashes),
        cmocka_unit_test(written_json_is_valid_utf8),
        cmocka_unit_test(keys_made_valid_stay_unique),
        cmocka_unit_test(str_or_null),
        cmocka_unit_test(lenient_readers_fall_back),
        cmocka_unit_test(repeated_keys_are_found_as_json_c_reads_them),
        cmocka_unit_test(json_c_drops_what_is_reported),
        cmocka_unit_test(repeated_keys_within_bounds),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
