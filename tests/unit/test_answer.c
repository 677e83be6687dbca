/* Unit tests for proto/answer: whether a reply answers its request. Each
 * row pairs a request with a reply an agent might send, well or badly. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "proto/answer.h"
#include "proto/audit.h"
#include "proto/body.h"
#include "proto/code.h"
#include "proto/json.h"

#define S(x) ((char *)(x))

static char *code_request(void)
{
    tnd_code_request r = {.task_id = S("t-1"),
                          .attempt = 2,
                          .task = S("fix it"),
                          .repo_map = S(""),
                          .feedback = S("")};

    return tnd_code_request_encode(&r, NULL);
}

static char *audit_request(void)
{
    tnd_audit_request r = {.task_id = S("t-1"),
                           .attempt = 2,
                           .task = S("fix it"),
                           .workspace = S("/tmp/ws"),
                           .diff = S(""),
                           .critique = true};

    return tnd_audit_request_encode(&r, NULL);
}

static char *code_reply(const char *task_id, int attempt)
{
    tnd_code_reply r = {.task_id = (char *)task_id,
                        .attempt = attempt,
                        .rationale = S("because")};

    return tnd_code_reply_encode(&r, NULL);
}

static char *audit_reply(const char *task_id, int attempt)
{
    tnd_audit_reply r = {.task_id = (char *)task_id, .attempt = attempt};

    return tnd_audit_reply_encode(&r, NULL);
}

/* check(request, reply) and, when it fails, the error holds want. */
static void expect(const char *request, const char *reply, const char *want)
{
    int rc = tnd_answer_check(request, strlen(request), reply, strlen(reply),
                              NULL, 0, NULL);

    if (!want) {
        if (rc != 0)
            fail_msg("refused: %s\n  reply: %s", tnd_error_last(), reply);
        return;
    }
    if (rc == 0)
        fail_msg("accepted: %s", reply);
    if (!strstr(tnd_error_last(), want))
        fail_msg("error \"%s\" lacks \"%s\"", tnd_error_last(), want);
}

static void good_replies_and_errors_answer(void **state)
{
    char *code = code_request(), *audit = audit_request();
    char *cr = code_reply("t-1", 2), *ar = audit_reply("t-1", 2);
    char *err = tnd_error_reply_encode("t-1", 2, "the model said 401", NULL);

    (void)state;
    expect(code, cr, NULL);
    expect(audit, ar, NULL);
    /* an agent that could not do it has answered all the same */
    expect(code, err, NULL);
    expect(audit, err, NULL);
    free(code);
    free(audit);
    free(cr);
    free(ar);
    free(err);
}

/* A usable reply's type is handed back, so the crew's callers need not
 * parse the reply again to know whether it is an error. */
static void the_reply_type_is_handed_back(void **state)
{
    char *code = code_request(), *audit = audit_request();
    char *cr = code_reply("t-1", 2), *ar = audit_reply("t-1", 2);
    char *err = tnd_error_reply_encode("t-1", 2, "the model said 401", NULL);
    char type[32];

    (void)state;
    assert_int_equal(tnd_answer_check(code, strlen(code), cr, strlen(cr), type,
                                      sizeof(type), NULL),
                     0);
    assert_string_equal(type, "code_reply");
    assert_int_equal(tnd_answer_check(audit, strlen(audit), ar, strlen(ar),
                                      type, sizeof(type), NULL),
                     0);
    assert_string_equal(type, "audit_reply");
    assert_int_equal(tnd_answer_check(code, strlen(code), err, strlen(err),
                                      type, sizeof(type), NULL),
                     0);
    assert_string_equal(type, "error");
    /* refused: no type */
    assert_int_equal(tnd_answer_check(code, strlen(code), ar, strlen(ar), type,
                                      sizeof(type), NULL),
                     -1);
    assert_string_equal(type, "");
    free(code);
    free(audit);
    free(cr);
    free(ar);
    free(err);
}

/* A usable reply is handed back parsed, as its text parses, so the
 * crew's callers need not parse it again to journal it; a refused one is
 * not. */
static void the_parsed_reply_is_handed_back(void **state)
{
    char *code = code_request(), *cr = code_reply("t-1", 2);
    char *audit = audit_request();
    json_object *parsed = (json_object *)1, *again = NULL;

    (void)state;
    assert_int_equal(
        tnd_answer_check(code, strlen(code), cr, strlen(cr), NULL, 0, &parsed),
        0);
    assert_non_null(parsed);
    assert_int_equal(tnd_json_parse(&again, cr, strlen(cr)), 0);
    assert_true(json_object_equal(parsed, again));
    json_object_put(parsed);
    json_object_put(again);
    assert_int_equal(tnd_answer_check(audit, strlen(audit), cr, strlen(cr),
                                      NULL, 0, &parsed),
                     -1);
    assert_null(parsed);
    free(code);
    free(audit);
    free(cr);
}

static void unusable_replies_say_why(void **state)
{
    char *code = code_request(), *audit = audit_request();
    char *cr = code_reply("t-1", 2), *ar = audit_reply("t-1", 2);
    char *other_task = code_reply("t-2", 2),
         *other_attempt = code_reply("t-1", 1);
    char *err = tnd_error_reply_encode("t-9", 2, "not mine", NULL);

    (void)state;
    expect(code, "{not json", "not valid JSON");
    expect(code, "", "not");
    expect(code, "[]", "not a tandem body");
    expect(code, "{\"tandem\": 2, \"type\": \"code_reply\"}", "");
    expect(code, ar,
           "a code request was answered with a body of type audit_reply");
    expect(audit, cr, "answered with a body of type code_reply");
    expect(code, other_task,
           "the reply is for task t-2 attempt 2, not task "
           "t-1 attempt 2");
    expect(code, other_attempt, "attempt 1, not task t-1 attempt 2");
    expect(code, err, "for task t-9");
    /* a field of the wrong type: the whole body is refused */
    expect(code,
           "{\"tandem\":1,\"type\":\"code_reply\",\"task_id\":\"t-1\","
           "\"attempt\":2,\"rationale\":\"r\",\"edits\":\"all of them\"}",
           "edits");
    expect(code,
           "{\"tandem\":1,\"type\":\"code_reply\",\"task_id\":\"t-1\","
           "\"attempt\":\"2\",\"rationale\":\"r\"}",
           "attempt");
    /* an error whose message cannot be shown is no answer: it failed
     * the task as "agent error (without a message)" */
    {
        char big[(16 << 10) + 200];
        memset(big, 'e', sizeof(big) - 1);
        big[sizeof(big) - 1] = '\0';
        memcpy(big,
               "{\"tandem\":1,\"type\":\"error\",\"task_id\":\"t-1\","
               "\"attempt\":2,\"error\":\"",
               strlen("{\"tandem\":1,\"type\":\"error\",\"task_id\":"
                      "\"t-1\",\"attempt\":2,\"error\":\""));
        memcpy(big + sizeof(big) - 3, "\"}", 3);
        expect(code, big, "field 'error' is");
    }
    expect(code,
           "{\"tandem\":1,\"type\":\"error\",\"task_id\":\"t-1\","
           "\"attempt\":2}",
           "error");
    expect(code,
           "{\"tandem\":1,\"type\":\"error\",\"task_id\":\"t-1\","
           "\"attempt\":2,\"error\":\"quota\",\"usage\":{\"calls\":-1}}",
           "usage");
    /* a request that is not one cannot be answered */
    expect("{}", cr, "the request itself");
    free(code);
    free(audit);
    free(cr);
    free(ar);
    free(other_task);
    free(other_attempt);
    free(err);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(good_replies_and_errors_answer),
        cmocka_unit_test(the_reply_type_is_handed_back),
        cmocka_unit_test(the_parsed_reply_is_handed_back),
        cmocka_unit_test(unusable_replies_say_why),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
