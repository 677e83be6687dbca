/* Unit tests for proto/code: the coder's request and reply bodies, and
 * the rules an edit's path must follow. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "proto/code.h"

/* A modifiable copy of a literal, for the structs' char * fields. */
#define S(lit) ((char[]){lit})

/* ---- request ---------------------------------------------------------- */

static void request_round_trips(void **state)
{
    tnd_file files[] = {
        {S("stats.c"), S("int mean(void);\n")},
        {S("docs/a \"quoted\" name.md"), S("line\n\ttab \\ and \xc3\xa9\n")},
    };
    tnd_code_request r = {
        .task_id = S("20261122-014455-3fa2c91b"),
        .attempt = 2,
        .task = S("make the failing test pass"),
        .files = files,
        .nfiles = 2,
        .repo_map = S("Makefile 312\n"),
        .feedback = S("Attempt 1 was not accepted: test failed\n"),
    };
    tnd_code_request back;
    size_t len = 0;
    char *body = tnd_code_request_encode(&r, &len);

    (void)state;
    assert_int_equal(len, strlen(body));
    assert_int_equal(tnd_code_request_decode(&back, body, len), 0);
    assert_string_equal(back.task_id, r.task_id);
    assert_int_equal(back.attempt, 2);
    assert_string_equal(back.task, r.task);
    assert_int_equal(back.nfiles, 2);
    for (size_t i = 0; i < 2; i++) {
        assert_string_equal(back.files[i].path, files[i].path);
        assert_string_equal(back.files[i].content, files[i].content);
    }
    assert_string_equal(back.repo_map, r.repo_map);
    assert_string_equal(back.feedback, r.feedback);
    tnd_code_request_clear(&back);
    assert_null(back.task_id);
    tnd_code_request_clear(&back); /* twice is fine */
    free(body);
}

static void request_optional_parts_default_to_empty(void **state)
{
    tnd_code_request r = {.task_id = S("t"), .attempt = 1, .task = S("x")};
    tnd_code_request back;
    char *body = tnd_code_request_encode(&r, NULL);
    const char *bare = "{\"tandem\":1,\"type\":\"code\",\"task_id\":\"t\","
                       "\"attempt\":1,\"task\":\"x\"}";

    (void)state;
    assert_int_equal(tnd_code_request_decode(&back, body, strlen(body)), 0);
    assert_int_equal(back.nfiles, 0);
    assert_string_equal(back.repo_map, "");
    assert_string_equal(back.feedback, "");
    tnd_code_request_clear(&back);
    free(body);

    /* files, repo_map and feedback may be left out entirely */
    assert_int_equal(tnd_code_request_decode(&back, bare, strlen(bare)), 0);
    assert_int_equal(back.nfiles, 0);
    assert_null(back.files);
    assert_string_equal(back.feedback, "");
    tnd_code_request_clear(&back);
}

/* A code request body whose fields after the envelope are rest. */
static void request_fails(const char *rest, const char *want)
{
    char body[512];
    tnd_code_request out;

    snprintf(body, sizeof(body),
             "{\"tandem\":1,\"type\":\"code\",\"task_id\":\"t\",%s}", rest);
    assert_int_equal(tnd_code_request_decode(&out, body, strlen(body)), -1);
    if (strcmp(tnd_error_last(), want) != 0)
        fail_msg("%s: error \"%s\", expected \"%s\"", rest, tnd_error_last(),
                 want);
    tnd_code_request_clear(&out); /* also after a failure */
}

static void request_decode_names_the_bad_field(void **state)
{
    (void)state;
    request_fails("\"attempt\":1", "bad code request: field 'task' is missing");
    request_fails("\"attempt\":0,\"task\":\"x\"",
                  "bad code request: field 'attempt' must be an integer "
                  "1..1000, got 0");
    request_fails("\"attempt\":1,\"task\":\"x\",\"files\":{}",
                  "bad code request: field 'files' must be a list");
    request_fails("\"attempt\":1,\"task\":\"x\",\"files\":[{\"path\":\"a\","
                  "\"content\":\"\"},{\"path\":\"b\"}]",
                  "bad code request: files[1]: field 'content' is missing");
    request_fails("\"attempt\":1,\"task\":\"x\",\"files\":[{\"path\":7,"
                  "\"content\":\"\"}]",
                  "bad code request: files[0]: field 'path' must be a "
                  "string");
    request_fails("\"attempt\":1,\"task\":\"x\",\"feedback\":[]",
                  "bad code request: field 'feedback' must be a string");
    request_fails("\"attempt\":1,\"task\":\"x\",\"repo_map\":\"a\\u0000\"",
                  "bad code request: field 'repo_map' contains a NUL byte");
}

static void request_of_another_type_is_refused(void **state)
{
    const char *audit = "{\"tandem\":1,\"type\":\"audit\",\"task_id\":\"t\","
                        "\"attempt\":1}";
    tnd_code_request out;

    (void)state;
    assert_int_equal(tnd_code_request_decode(&out, audit, strlen(audit)), -1);
    assert_string_equal(tnd_error_last(),
                        "expected a code body, got type \"audit\"");
    tnd_code_request_clear(&out);
}

static void request_task_limit(void **state)
{
    size_t n = TND_BODY_MAX_TASK + 1;
    char *task = malloc(n + 1), *body;
    tnd_code_request r = {.task_id = S("t"), .attempt = 1, .task = task};
    tnd_code_request out;

    (void)state;
    memset(task, 'x', n);
    task[n] = '\0';
    body = tnd_code_request_encode(&r, NULL);
    assert_int_equal(tnd_code_request_decode(&out, body, strlen(body)), -1);
    assert_string_equal(tnd_error_last(),
                        "bad code request: field 'task' is 65537 bytes, "
                        "more than the limit of 65536");
    tnd_code_request_clear(&out);
    free(body);

    task[n - 1] = '\0'; /* exactly the limit is fine */
    body = tnd_code_request_encode(&r, NULL);
    assert_int_equal(tnd_code_request_decode(&out, body, strlen(body)), 0);
    assert_int_equal(strlen(out.task), TND_BODY_MAX_TASK);
    tnd_code_request_clear(&out);
    free(body);
    free(task);
}

/* ---- reply ------------------------------------------------------------ */

static void reply_round_trips_every_edit_kind(void **state)
{
    tnd_edit edits[] = {
        {TND_EDIT_REPLACE, S("stats.c"), S("return sum / count;\n"),
         S("return (double)sum / count;\n"), 0},
        {TND_EDIT_REPLACE, S("stats.c"), S(""), S("/* top */\n"), 1},
        {TND_EDIT_WRITE, S("docs/NOTES.md"), S(""), S("whole file\n"), 0},
        {TND_EDIT_DELETE, S("old.c"), S(""), S(""), 0},
    };
    tnd_code_reply r = {
        .task_id = S("t-1"),
        .attempt = 3,
        .rationale = S("The cast came after the division."),
        .edits = edits,
        .nedits = 4,
        .usage = {.calls = 1,
                  .prompt_tokens = 1298,
                  .completion_tokens = 84,
                  .latency_ms = 2310},
    };
    tnd_code_reply back;
    size_t len;
    char *body = tnd_code_reply_encode(&r, &len);

    (void)state;
    assert_int_equal(tnd_code_reply_decode(&back, body, len), 0);
    assert_string_equal(back.task_id, "t-1");
    assert_int_equal(back.attempt, 3);
    assert_string_equal(back.rationale, r.rationale);
    assert_null(back.format_error);
    assert_int_equal(back.nedits, 4);
    for (size_t i = 0; i < 4; i++) {
        assert_int_equal(back.edits[i].kind, edits[i].kind);
        assert_string_equal(back.edits[i].path, edits[i].path);
        assert_string_equal(back.edits[i].search, edits[i].search);
        assert_string_equal(back.edits[i].replace, edits[i].replace);
        assert_int_equal(back.edits[i].line, edits[i].line);
    }
    assert_int_equal(back.usage.calls, 1);
    assert_int_equal(back.usage.prompt_tokens, 1298);
    assert_int_equal(back.usage.completion_tokens, 84);
    assert_int_equal(back.usage.latency_ms, 2310);
    assert_false(back.usage.estimated);
    /* only the fields a kind uses go on the wire: search for the two
     * replaces, line for the one anchored */
    {
        size_t searches = 0, lines = 0;
        for (const char *p = body; (p = strstr(p, "\"search\":")); p++)
            searches++;
        for (const char *p = body; (p = strstr(p, "\"line\":")); p++)
            lines++;
        assert_int_equal(searches, 2);
        assert_int_equal(lines, 1);
    }
    tnd_code_reply_clear(&back);
    tnd_code_reply_clear(&back);
    free(body);
}

static void reply_with_a_format_error_and_no_edits(void **state)
{
    tnd_code_reply r = {.task_id = S("t"),
                        .attempt = 1,
                        .format_error = S("no FILE blocks in the answer")};
    tnd_code_reply back;
    char *body = tnd_code_reply_encode(&r, NULL);

    (void)state;
    assert_int_equal(tnd_code_reply_decode(&back, body, strlen(body)), 0);
    assert_string_equal(back.format_error, "no FILE blocks in the answer");
    assert_int_equal(back.nedits, 0);
    assert_string_equal(back.rationale, "");
    tnd_code_reply_clear(&back);
    free(body);
}

/* A code_reply body whose fields after the ids are rest. */
static void reply_fails(const char *rest, const char *want)
{
    char body[1024];
    tnd_code_reply out;

    snprintf(body, sizeof(body),
             "{\"tandem\":1,\"type\":\"code_reply\",\"task_id\":\"t\","
             "\"attempt\":1%s}",
             rest);
    assert_int_equal(tnd_code_reply_decode(&out, body, strlen(body)), -1);
    if (strcmp(tnd_error_last(), want) != 0)
        fail_msg("%s: error \"%s\", expected \"%s\"", rest, tnd_error_last(),
                 want);
    tnd_code_reply_clear(&out);
}

static void reply_decode_names_the_bad_field(void **state)
{
    (void)state;
    reply_fails("", "bad code reply: field 'edits' is missing");
    reply_fails(",\"edits\":[{\"kind\":\"write\",\"path\":\"a.c\","
                "\"replace\":\"\"},{\"kind\":\"replace\",\"path\":\"a/../b\","
                "\"search\":\"x\",\"replace\":\"y\"}]",
                "bad code reply: edits[1]: field 'path': 'a/../b' contains "
                "'..'; edits must stay inside the repository");
    reply_fails(",\"edits\":[{\"kind\":\"move\",\"path\":\"a.c\"}]",
                "bad code reply: edits[0]: field 'kind' must be one of "
                "replace, write, delete, got \"move\"");
    reply_fails(",\"edits\":[{\"path\":\"a.c\"}]",
                "bad code reply: edits[0]: field 'kind' is missing");
    reply_fails(",\"edits\":[{\"kind\":\"replace\",\"path\":\"a.c\","
                "\"replace\":\"y\"}]",
                "bad code reply: edits[0]: field 'search' is missing");
    reply_fails(",\"edits\":[{\"kind\":\"write\",\"path\":\"a.c\"}]",
                "bad code reply: edits[0]: field 'replace' is missing");
    reply_fails(",\"edits\":[{\"kind\":\"delete\",\"path\":\"/etc/passwd\"}]",
                "bad code reply: edits[0]: field 'path': '/etc/passwd' is "
                "an absolute path; paths must be relative to the repository "
                "root");
    reply_fails(",\"edits\":[\"a.c\"]",
                "bad code reply: edits[0]: field 'kind' is missing");
    reply_fails(",\"edits\":[],\"usage\":{\"calls\":\"one\"}",
                "bad code reply: usage: field 'calls' must be an integer "
                "0..1000000000");
    reply_fails(",\"edits\":[],\"usage\":[]",
                "bad code reply: field 'usage' must be an object");
    reply_fails(",\"edits\":[],\"format_error\":false",
                "bad code reply: field 'format_error' must be a string");
}

static void reply_edit_count_is_limited(void **state)
{
    tnd_edit *edits = calloc(TND_BODY_MAX_EDITS + 1, sizeof(*edits));
    tnd_code_reply r = {.task_id = S("t"), .attempt = 1, .edits = edits};
    tnd_code_reply out;
    char path[] = "a.c", empty[] = "", *body;

    (void)state;
    for (size_t i = 0; i <= TND_BODY_MAX_EDITS; i++)
        edits[i] = (tnd_edit){TND_EDIT_DELETE, path, empty, empty, 0};
    r.nedits = TND_BODY_MAX_EDITS;
    body = tnd_code_reply_encode(&r, NULL);
    assert_int_equal(tnd_code_reply_decode(&out, body, strlen(body)), 0);
    assert_int_equal(out.nedits, TND_BODY_MAX_EDITS);
    tnd_code_reply_clear(&out);
    free(body);

    r.nedits = TND_BODY_MAX_EDITS + 1;
    body = tnd_code_reply_encode(&r, NULL);
    assert_int_equal(tnd_code_reply_decode(&out, body, strlen(body)), -1);
    assert_string_equal(tnd_error_last(),
                        "bad code reply: field 'edits' has 501 items, more "
                        "than the limit of 500");
    tnd_code_reply_clear(&out);
    free(body);
    free(edits);
}

static void error_reply_is_the_agent_error(void **state)
{
    char *body = tnd_error_reply_encode("t", 1, "model unreachable", NULL);
    tnd_code_reply out;

    (void)state;
    assert_int_equal(tnd_code_reply_decode(&out, body, strlen(body)), -1);
    assert_string_equal(tnd_error_last(), "agent error: model unreachable");
    tnd_code_reply_clear(&out);
    free(body);
}

/* ---- paths ------------------------------------------------------------ */

static void edit_paths_are_checked(void **state)
{
    static const struct {
        const char *path;
        const char *error; /* NULL: accepted */
    } table[] = {
        {"src/a.c", NULL},
        {"a", NULL},
        {"Makefile", NULL},
        {".github/x.yml", NULL},
        {".github/workflows/ci.yml", NULL},
        {"dir/.gitignore", NULL},
        {".gitignore", NULL},
        {".tandemrc", NULL},
        {"dir/.tandem/x", NULL}, /* only the top .tandem is ours */
        {"a..b/c", NULL},
        {"...", NULL},
        {"caf\xc3\xa9.txt", NULL},
        {"", "empty path"},
        {"/etc/passwd", "'/etc/passwd' is an absolute path; paths must be "
                        "relative to the repository root"},
        {"..", "'..' contains '..'; edits must stay inside the repository"},
        {"../x", "'../x' contains '..'"},
        {"a/../b", "'a/../b' contains '..'"},
        {"a/..", "'a/..' contains '..'"},
        {"./x", "'./x' has an empty or '.' component"},
        {"a/./b", "'a/./b' has an empty or '.' component"},
        {"a//b", "'a//b' has an empty or '.' component"},
        {"dir/", "'dir/' names a directory, not a file"},
        {".git", "'.git' is inside .git, which edits may not touch"},
        {".git/config", "'.git/config' is inside .git, which edits may not "
                        "touch"},
        {".git/hooks/pre-commit", "inside .git"},
        {"sub/.git/config", "'sub/.git/config' is inside .git, which edits "
                            "may not touch"},
        {".tandem/x", "'.tandem/x' is inside .tandem, which edits may not "
                      "touch"},
        {"a\tb", "path contains a control character or a backslash"},
        {"a\nb", "control character"},
        {"a\x7f", "control character"},
        {"a\\b", "path contains a control character or a backslash"},
        {"C:\\x", "backslash"},
    };
    char long_path[TND_BODY_MAX_PATH + 2];

    (void)state;
    for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
        int rc = tnd_edit_path_check(table[i].path);
        if (!table[i].error && rc != 0)
            fail_msg("'%s' refused: %s", table[i].path, tnd_error_last());
        if (table[i].error && rc != -1)
            fail_msg("'%s' accepted", table[i].path);
        if (table[i].error && !strstr(tnd_error_last(), table[i].error))
            fail_msg("'%s': error \"%s\" does not say \"%s\"", table[i].path,
                     tnd_error_last(), table[i].error);
    }

    memset(long_path, 'a', sizeof(long_path));
    long_path[TND_BODY_MAX_PATH] = '\0';
    assert_int_equal(tnd_edit_path_check(long_path), 0);
    long_path[TND_BODY_MAX_PATH] = 'a';
    long_path[TND_BODY_MAX_PATH + 1] = '\0';
    assert_int_equal(tnd_edit_path_check(long_path), -1);
    assert_string_equal(tnd_error_last(), "path longer than 1024 bytes");
}

static void edit_kind_names(void **state)
{
    (void)state;
    assert_string_equal(tnd_edit_kind_name(TND_EDIT_REPLACE), "replace");
    assert_string_equal(tnd_edit_kind_name(TND_EDIT_WRITE), "write");
    assert_string_equal(tnd_edit_kind_name(TND_EDIT_DELETE), "delete");
    assert_string_equal(tnd_edit_kind_name((tnd_edit_kind)0), "?");
    assert_string_equal(tnd_edit_kind_name((tnd_edit_kind)9), "?");
}

/* The one destructor of a tnd_edit: whatever made the edits (a decoded
 * reply, the coder's parser, a unified diff) frees them here. */
static void edits_are_cleared_and_freed(void **state)
{
    tnd_edit e = {TND_EDIT_REPLACE, strdup("a.c"), strdup("x"), strdup("y"), 0};
    tnd_edit *list = calloc(2, sizeof(*list));

    (void)state;
    tnd_edit_clear(&e);
    assert_int_equal(e.kind, 0);
    assert_null(e.path);
    assert_null(e.search);
    assert_null(e.replace);
    tnd_edit_clear(&e); /* twice is harmless */

    list[0] = (tnd_edit){TND_EDIT_WRITE, strdup("b.c"), strdup(""),
                         strdup("int b;\n"), 0};
    list[1] = (tnd_edit){TND_EDIT_DELETE, strdup("c.c"), NULL, NULL, 0};
    tnd_edit_list_free(list, 2); /* leak-checked under make memcheck */
    tnd_edit_list_free(NULL, 0);
    tnd_edit_list_free(NULL, 3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(request_round_trips),
        cmocka_unit_test(request_optional_parts_default_to_empty),
        cmocka_unit_test(request_decode_names_the_bad_field),
        cmocka_unit_test(request_of_another_type_is_refused),
        cmocka_unit_test(request_task_limit),
        cmocka_unit_test(reply_round_trips_every_edit_kind),
        cmocka_unit_test(reply_with_a_format_error_and_no_edits),
        cmocka_unit_test(reply_decode_names_the_bad_field),
        cmocka_unit_test(reply_edit_count_is_limited),
        cmocka_unit_test(error_reply_is_the_agent_error),
        cmocka_unit_test(edit_paths_are_checked),
        cmocka_unit_test(edit_kind_names),
        cmocka_unit_test(edits_are_cleared_and_freed),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
