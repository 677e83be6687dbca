/* Unit tests for common/yamlwalk: a YAML document checked against field
 * tables.
 *
 * One small schema, `sample`, uses every field type; the cases walk
 * documents against it and compare the whole report, so every
 * "NAME:LINE:COL: message" is checked down to the column. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/str.h"
#include "common/xalloc.h"
#include "common/yamlwalk.h"

typedef struct inner {
    int depth;
} inner;

typedef struct sample {
    int count;
    long big;
    double ratio;
    bool on;
    char *mode;
    char *file;
    size_t cache_bytes;
    size_t disk_bytes;
    char **tags;
    char **headers;
    inner inner;
    int letters; /* custom: the length of a string */
} sample;

#define OFF(member) offsetof(sample, member)

/* letters: a string, stored as its length. */
static void set_letters(tnd_yw *w, const tnd_yw_field *f, const char *path,
                        const yaml_node_t *v, char *base)
{
    if (v->type != YAML_SCALAR_NODE) {
        tnd_yw_report(w, v, "%s must be a word, got %s", path, tnd_yw_kind(v));
        return;
    }
    *(int *)(base + f->offset) = (int)strlen(tnd_yw_scalar(v));
}

static const tnd_yw_field inner_fields[] = {
    {"depth", TND_YW_INT, offsetof(inner, depth), 1, 9, NULL, NULL, NULL},
    {NULL, 0, 0, 0, 0, NULL, NULL, NULL},
};

static const tnd_yw_field sample_fields[] = {
    {"count", TND_YW_INT, OFF(count), 0, 10, NULL, NULL, NULL},
    {"big", TND_YW_LONG, OFF(big), 0, 1e12, NULL, NULL, NULL},
    {"ratio", TND_YW_DOUBLE, OFF(ratio), 0, 1, NULL, NULL, NULL},
    {"on", TND_YW_BOOL, OFF(on), 0, 0, NULL, NULL, NULL},
    {"mode", TND_YW_STRING, OFF(mode), 0, 0, "fast|slow", NULL, NULL},
    {"file", TND_YW_PATH, OFF(file), 0, 0, NULL, NULL, NULL},
    {"cache_kb", TND_YW_KB, OFF(cache_bytes), 1, 64, NULL, NULL, NULL},
    {"disk_mb", TND_YW_MB, OFF(disk_bytes), 1, 64, NULL, NULL, NULL},
    {"tags", TND_YW_NAMES, OFF(tags), 0, 0, NULL, NULL, NULL},
    {"headers", TND_YW_HEADERS, OFF(headers), 0, 0, NULL, NULL, NULL},
    {"inner", TND_YW_SECTION, OFF(inner), 0, 0, NULL, inner_fields, NULL},
    {"letters", TND_YW_CUSTOM, OFF(letters), 0, 0, NULL, NULL, set_letters},
    {NULL, 0, 0, 0, 0, NULL, NULL, NULL},
};

static const char *const sample_extra[] = {"version", NULL};

static void sample_init(sample *s)
{
    memset(s, 0, sizeof(*s));
    s->mode = tnd_xstrdup("fast");
    s->file = tnd_xstrdup("");
    s->tags = tnd_xcalloc(1, sizeof(char *));
    s->headers = tnd_xcalloc(1, sizeof(char *));
}

static void sample_free(sample *s)
{
    free(s->mode);
    free(s->file);
    tnd_str_list_free(&s->tags);
    tnd_str_list_free(&s->headers);
}

static tnd_yw *parse_named(const char *text, const char *name)
{
    tnd_yw *w = NULL;

    assert_int_equal(tnd_yw_parse(&w, text, strlen(text), name, "/base"), 0);
    assert_non_null(w);
    return w;
}

static tnd_yw *parse(const char *text)
{
    return parse_named(text, "s.yaml");
}

/* text walked against sample_fields; tnd_yw_finish's result. */
static int walk(sample *s, const char *text)
{
    tnd_yw *w = parse(text);
    int rc;

    sample_init(s);
    tnd_yw_walk(w, "", tnd_yw_root(w), sample_fields, sample_extra, (char *)s);
    rc = tnd_yw_finish(w);
    tnd_yw_destroy(&w);
    assert_null(w);
    return rc;
}

static void every_type_is_stored(void **state)
{
    sample s;

    (void)state;
    assert_int_equal(walk(&s, "version: anything\n"
                              "count: 7\n"
                              "big: 1000000000000\n"
                              "ratio: 0.25\n"
                              "on: yes\n"
                              "mode: slow\n"
                              "file: data/x.txt\n"
                              "cache_kb: 2\n"
                              "disk_mb: 3\n"
                              "tags: [a, b]\n"
                              "headers: {X-One: 1, X-Two: two words}\n"
                              "inner: {depth: 4}\n"
                              "letters: hello\n"),
                     0);
    assert_int_equal(s.count, 7);
    assert_int_equal(s.big, 1000000000000L);
    assert_true(s.ratio == 0.25);
    assert_true(s.on);
    assert_string_equal(s.mode, "slow");
    assert_string_equal(s.file, "/base/data/x.txt");
    assert_int_equal(s.cache_bytes, 2 * 1024);
    assert_int_equal(s.disk_bytes, 3 * 1024 * 1024);
    assert_string_equal(s.tags[0], "a");
    assert_string_equal(s.tags[1], "b");
    assert_null(s.tags[2]);
    assert_string_equal(s.headers[0], "X-One: 1");
    assert_string_equal(s.headers[1], "X-Two: two words");
    assert_null(s.headers[2]);
    assert_int_equal(s.inner.depth, 4);
    assert_int_equal(s.letters, 5);
    sample_free(&s);
}

static void null_values_mean_nothing(void **state)
{
    sample s;

    (void)state;
    assert_int_equal(walk(&s, "mode:\nfile: /abs\ntags: ~\ninner: null\n"),
                     TND_ECONFIG);
    assert_string_equal(tnd_error_last(),
                        "s.yaml:1:6: mode must be one of fast, slow; got "
                        "\"\"");
    sample_free(&s);
    assert_int_equal(walk(&s, "file: /abs\ntags: ~\ninner: null\n"), 0);
    assert_string_equal(s.file, "/abs");
    assert_null(s.tags[0]);
    assert_int_equal(s.inner.depth, 0);
    sample_free(&s);
    assert_int_equal(walk(&s, "~\n"), 0);
    assert_string_equal(s.mode, "fast");
    sample_free(&s);
}

static void bad_values_are_reported_with_their_place(void **state)
{
    sample s;

    (void)state;
    assert_int_equal(walk(&s, "count: 11\n"
                              "big: [1]\n"
                              "ratio: lots\n"
                              "on: maybe\n"
                              "mode: medium\n"
                              "cache_kb:\n"
                              "tags: [a, [b]]\n"
                              "headers: {\"bad name\": x, X-Ok: {a: b}}\n"
                              "inner: {depth: 0}\n"
                              "letters: [x]\n"),
                     TND_ECONFIG);
    assert_string_equal(
        tnd_error_last(),
        "s.yaml:1:8: count must be an integer 0..10, got \"11\"\n"
        "s.yaml:2:6: big must be an integer 0..1000000000000, got a list\n"
        "s.yaml:3:8: ratio must be a number 0..1, got \"lots\"\n"
        "s.yaml:4:5: on must be true or false, got \"maybe\"\n"
        "s.yaml:5:7: mode must be one of fast, slow; got \"medium\"\n"
        "s.yaml:6:10: cache_kb must be an integer 1..64, got nothing\n"
        "s.yaml:7:11: tags[1] must be a string\n"
        "s.yaml:8:11: headers: 'bad name' is not a valid HTTP header name\n"
        "s.yaml:8:32: headers.X-Ok must be a one-line string\n"
        "s.yaml:9:16: inner.depth must be an integer 1..9, got \"0\"\n"
        "s.yaml:10:10: letters must be a word, got a list");
    sample_free(&s);
}

static void unknown_keys_get_a_suggestion_or_the_list(void **state)
{
    sample s;

    (void)state;
    assert_int_equal(walk(&s, "cuont: 1\nverison: 1\nzzz: 1\ncount: 1\n"
                              "count: 2\n[k]: 1\ninner: [1]\n"),
                     TND_ECONFIG);
    assert_string_equal(
        tnd_error_last(),
        "s.yaml:1:1: unknown key 'cuont' in the top level (did you mean "
        "'count'?)\n"
        "s.yaml:2:1: unknown key 'verison' in the top level (did you mean "
        "'version'?)\n"
        "s.yaml:3:1: unknown key 'zzz' in the top level (known keys: count, "
        "big, ratio, on, mode, file, cache_kb, disk_mb, tags, headers, "
        "inner, letters, version)\n"
        "s.yaml:5:1: duplicate key 'count' in the top level\n"
        "s.yaml:6:1: keys in the top level must be plain names\n"
        "s.yaml:7:8: inner must be a mapping of keys, got a list");
    sample_free(&s);
}

static void the_report_stops_at_the_cap(void **state)
{
    char text[1024] = "";
    tnd_yw *w;
    sample s;
    const char *last;

    (void)state;
    for (int i = 0; i < 30; i++)
        snprintf(text + strlen(text), sizeof(text) - strlen(text), "k%02d: 1\n",
                 i);
    w = parse(text);
    sample_init(&s);
    tnd_yw_walk(w, "", tnd_yw_root(w), sample_fields, NULL, (char *)&s);
    assert_true(tnd_yw_stopped(w));
    tnd_yw_report(w, NULL, "dropped");
    assert_int_equal(tnd_yw_finish(w), TND_ECONFIG);
    last = strrchr(tnd_error_last(), '\n') + 1;
    assert_string_equal(last, "s.yaml: too many errors; stopping here");
    assert_null(strstr(tnd_error_last(), "k20"));
    assert_null(strstr(tnd_error_last(), "dropped"));
    tnd_yw_destroy(&w);
    sample_free(&s);
}

/* One problem, one line: whatever a message quotes, its control
 * characters (a line break in a key or value) come out as '?'. */
static void a_report_line_holds_no_line_break(void **state)
{
    tnd_yw *w = parse("\"a\\nb\": 1\n");

    (void)state;
    tnd_yw_report(w, tnd_yw_root(w), "key '%s', then \r\x1b[1m\tend", "a\nb");
    tnd_yw_report(w, NULL, "no place:\n%d", 42);
    assert_int_equal(tnd_yw_finish(w), TND_ECONFIG);
    assert_string_equal(tnd_error_last(),
                        "s.yaml:1:1: key 'a?b', then ??[1m\tend\n"
                        "s.yaml: no place:?42");
    tnd_yw_destroy(&w);
}

static void parse_errors_and_empty_documents(void **state)
{
    tnd_yw *w = (tnd_yw *)1;

    (void)state;
    assert_int_equal(tnd_yw_parse(&w, "a: [1\n", 6, "s.yaml", "/"),
                     TND_ECONFIG);
    assert_null(w);
    assert_string_equal(tnd_error_last(),
                        "s.yaml:2:1: not valid YAML: did not find expected "
                        "',' or ']' while parsing a flow sequence");
    w = parse("");
    assert_null(tnd_yw_root(w));
    assert_int_equal(tnd_yw_finish(w), 0);
    tnd_yw_report(w, NULL, "no place: %d", 42);
    assert_int_equal(tnd_yw_finish(w), TND_ECONFIG);
    assert_string_equal(tnd_error_last(), "s.yaml: no place: 42");
    tnd_yw_destroy(&w);
    tnd_yw_destroy(&w);
    tnd_yw_destroy(NULL);
    /* a second document is named, not silently skipped */
    w = (tnd_yw *)1;
    assert_int_equal(
        tnd_yw_parse(&w, "count: 1\n---\ncount: 99\n", 23, "s.yaml", "/"),
        TND_ECONFIG);
    assert_null(w);
    assert_string_equal(tnd_error_last(),
                        "s.yaml:3:1: a second YAML document; tandem reads "
                        "one, so put every key in it");
    /* a lone "---" or a document end is still one document */
    w = parse("---\ncount: 1\n...\n");
    assert_non_null(tnd_yw_root(w));
    tnd_yw_destroy(&w);
}

/* text must be refused with exactly expect. */
static void assert_parse_refused(const char *text, size_t len,
                                 const char *expect)
{
    tnd_yw *w = (tnd_yw *)1;

    assert_int_equal(tnd_yw_parse(&w, text, len, "s.yaml", "/"), TND_ECONFIG);
    assert_null(w);
    assert_string_equal(tnd_error_last(), expect);
}

/* unit repeated n times, then tail; caller frees. */
static char *repeat(const char *unit, size_t n, const char *tail)
{
    size_t u = strlen(unit), t = strlen(tail);
    char *s = tnd_xmalloc(u * n + t + 1);

    for (size_t i = 0; i < n; i++)
        memcpy(s + i * u, unit, u);
    memcpy(s + u * n, tail, t + 1);
    return s;
}

#define DEEP_REFUSED(line, col)                                          \
    "s.yaml:" #line ":" #col ": lists and mappings nested more than 64 " \
    "levels deep; tandem reads nothing that deep, so flatten it"

/* Nesting is limited to TND_YW_DEPTH_MAX (64) levels: the 64th is fine,
 * the 65th refused at its place, in flow and in block style alike. */
static void nesting_is_limited_to_64_levels(void **state)
{
    char *closing = repeat("]", 64, "\n");
    char *text;
    tnd_yw *w;

    (void)state;
    assert_int_equal(TND_YW_DEPTH_MAX, 64);
    text = repeat("[", 64, closing);
    w = parse(text);
    tnd_yw_destroy(&w);
    free(text);
    free(closing);
    text = repeat("[", 65, "]");
    assert_parse_refused(text, strlen(text), DEEP_REFUSED(1, 65));
    free(text);
    /* mappings: "{a: " is four columns a level */
    text = repeat("{a: ", 65, "1");
    assert_parse_refused(text, strlen(text), DEEP_REFUSED(1, 257));
    free(text);
    /* block style: "- - - x" nests a list a level */
    text = repeat("- ", 64, "x\n");
    w = parse(text);
    tnd_yw_destroy(&w);
    free(text);
    text = repeat("- ", 65, "x\n");
    assert_parse_refused(text, strlen(text), DEEP_REFUSED(1, 129));
    free(text);
}

/* Brackets in quoted strings, block scalars and comments are text, not
 * nesting. */
static void brackets_in_strings_and_comments_do_not_count(void **state)
{
    char *brackets = repeat("[{", 200, "");
    char *text = tnd_xasprintf("# %s\n"
                               "a: \"%s\"\n"
                               "b: '%s'\n"
                               "c: |\n  %s\n"
                               "d: x%s # %s\n",
                               brackets, brackets, brackets, brackets, brackets,
                               brackets);
    tnd_yw *w;

    (void)state;
    w = parse(text);
    assert_non_null(tnd_yw_root(w));
    tnd_yw_destroy(&w);
    free(text);
    free(brackets);
}

/* A megabyte of "[" or "{a: " took libyaml minutes (its work per token
 * grows with the open levels); refused at level 65 it returns at once.
 * No clock here: the old code would not return within the test run. */
static void a_megabyte_of_nesting_is_refused(void **state)
{
    char *text;

    (void)state;
    text = repeat("[", 1 << 20, "");
    assert_parse_refused(text, 1 << 20, DEEP_REFUSED(1, 65));
    free(text);
    text = repeat("{a: ", 1 << 18, "");
    assert_parse_refused(text, 1 << 20, DEEP_REFUSED(1, 257));
    free(text);
    /* deep on a later line, under the top mapping (itself a level) */
    text = repeat("[", 1 << 20, "");
    memcpy(text, "ok: 1\nx: ", 9);
    assert_parse_refused(text, 1 << 20, DEEP_REFUSED(2, 67));
    free(text);
}

static void nulls_and_list_places(void **state)
{
    sample s;

    (void)state;
    /* a null string is empty, not "a NUL byte" */
    assert_int_equal(walk(&s, "file: ~\n"), 0);
    assert_string_equal(s.file, "");
    sample_free(&s);
    /* each bad item by its own place in the list */
    assert_int_equal(walk(&s, "tags: [a, [b], [c], ~]\n"), TND_ECONFIG);
    assert_string_equal(tnd_error_last(),
                        "s.yaml:1:11: tags[1] must be a string\n"
                        "s.yaml:1:16: tags[2] must be a string\n"
                        "s.yaml:1:21: tags[3] must be a string");
    sample_free(&s);
    /* a header needs a value */
    assert_int_equal(walk(&s, "headers: {X-A: ~}\n"), TND_ECONFIG);
    assert_string_equal(tnd_error_last(),
                        "s.yaml:1:16: headers.X-A must be a one-line string");
    sample_free(&s);
}

static void lookups_find_nodes(void **state)
{
    tnd_yw *w = parse("a: {b: [x, y, ~]}\n'q': \"\"\n");
    const yaml_node_t *root = tnd_yw_root(w), *a, *b, *k;
    char **list;
    char *shown;

    (void)state;
    a = tnd_yw_lookup(w, root, "a");
    assert_int_equal(a->type, YAML_MAPPING_NODE);
    assert_string_equal(tnd_yw_kind(a), "a mapping");
    assert_null(tnd_yw_lookup(w, root, "z"));
    assert_null(tnd_yw_lookup(w, NULL, "a"));
    k = tnd_yw_key_node(w, root, "a");
    assert_string_equal(tnd_yw_scalar(k), "a");
    assert_int_equal(k->start_mark.column, 0);
    assert_ptr_equal(tnd_yw_node(w, root->data.mapping.pairs.start[0].key), k);
    assert_false(tnd_yw_is_null(k));
    b = tnd_yw_lookup(w, a, "b");
    assert_string_equal(tnd_yw_kind(b), "a list");
    assert_string_equal(tnd_yw_scalar(tnd_yw_item_at(w, b, 1)), "y");
    assert_null(tnd_yw_item_at(w, b, 3));
    assert_null(tnd_yw_item_at(w, a, 0));
    assert_true(tnd_yw_is_null(tnd_yw_item_at(w, b, 2)));
    assert_ptr_equal(tnd_yw_item_named(w, b, "x"), tnd_yw_item_at(w, b, 0));
    assert_ptr_equal(tnd_yw_item_named(w, b, "w"), b);
    assert_ptr_equal(tnd_yw_item_named(w, a, "x"), a);
    /* a quoted empty string is a value, not null */
    assert_false(tnd_yw_is_null(tnd_yw_lookup(w, root, "q")));
    assert_string_equal(tnd_yw_kind(tnd_yw_lookup(w, root, "q")), "a value");
    assert_true(
        tnd_yw_check_key(w, root, root->data.mapping.pairs.start + 1, "here"));
    shown = tnd_yw_quoted(tnd_yw_item_at(w, b, 0));
    assert_string_equal(shown, "\"x\"");
    free(shown);

    list = tnd_yw_string_list(w, "a.b", b);
    assert_string_equal(list[0], "x");
    assert_string_equal(list[1], "y");
    assert_null(list[2]);
    tnd_str_list_free(&list);
    assert_null(list);
    tnd_str_list_free(&list);
    assert_null(tnd_yw_string_list(w, "a", a));
    assert_int_equal(tnd_yw_finish(w), TND_ECONFIG);
    assert_string_equal(tnd_error_last(),
                        "s.yaml:1:15: a.b[2] must be a string\n"
                        "s.yaml:1:4: a must be a list, got a mapping");
    tnd_yw_destroy(&w);
}

static void choices_match_whole_words(void **state)
{
    (void)state;
    assert_true(tnd_yw_in_choices("fast", "fast|slow"));
    assert_true(tnd_yw_in_choices("slow", "fast|slow"));
    assert_false(tnd_yw_in_choices("fas", "fast|slow"));
    assert_false(tnd_yw_in_choices("fast|slow", "fast|slow"));
    assert_false(tnd_yw_in_choices("", "fast|slow"));
}

/* An enum field: stored as the value its name stands for. */
typedef enum colour { RED, GREEN, BLUE } colour;
static const char *const colour_names[] = {"red", "green", "blue"};
static const tnd_names colours = TND_NAMES("colour", colour_names);

typedef struct paint {
    colour colour;
} paint;

static const tnd_yw_field paint_fields[] = {
    {"colour", TND_YW_ENUM, offsetof(paint, colour), 0, 0, NULL, &colours,
     NULL},
    {NULL, 0, 0, 0, 0, NULL, NULL, NULL},
};

static void an_enum_is_stored_as_its_value(void **state)
{
    static const struct {
        const char *text, *error; /* NULL: no error */
        colour want;
    } rows[] = {
        {"colour: blue\n", NULL, BLUE},
        {"colour: red\n", NULL, RED},
        {"colour: pink\n",
         "p.yaml:1:9: colour must be one of red, green, blue; got \"pink\"",
         GREEN},
        {"colour: Blue\n",
         "p.yaml:1:9: colour must be one of red, green, blue; got \"Blue\"",
         GREEN},
        {"colour:\n",
         "p.yaml:1:8: colour must be one of red, green, blue; "
         "got \"\"",
         GREEN},
        {"colour: [red]\n", "p.yaml:1:9: colour must be a string, got a list",
         GREEN},
        {"colour: \"red\\0\"\n", "p.yaml:1:9: colour contains a NUL byte",
         GREEN},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        tnd_yw *w = parse_named(rows[i].text, "p.yaml");
        paint p = {GREEN};
        int rc;
        tnd_yw_walk(w, "", tnd_yw_root(w), paint_fields, NULL, (char *)&p);
        rc = tnd_yw_finish(w);
        if (rows[i].error) {
            assert_int_equal(rc, TND_ECONFIG);
            assert_string_equal(tnd_error_last(), rows[i].error);
        } else {
            assert_int_equal(rc, 0);
        }
        assert_int_equal(p.colour, rows[i].want);
        tnd_yw_destroy(&w);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(every_type_is_stored),
        cmocka_unit_test(null_values_mean_nothing),
        cmocka_unit_test(bad_values_are_reported_with_their_place),
        cmocka_unit_test(unknown_keys_get_a_suggestion_or_the_list),
        cmocka_unit_test(the_report_stops_at_the_cap),
        cmocka_unit_test(a_report_line_holds_no_line_break),
        cmocka_unit_test(parse_errors_and_empty_documents),
        cmocka_unit_test(nesting_is_limited_to_64_levels),
        cmocka_unit_test(brackets_in_strings_and_comments_do_not_count),
        cmocka_unit_test(a_megabyte_of_nesting_is_refused),
        cmocka_unit_test(nulls_and_list_places),
        cmocka_unit_test(lookups_find_nodes),
        cmocka_unit_test(choices_match_whole_words),
        cmocka_unit_test(an_enum_is_stored_as_its_value),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
