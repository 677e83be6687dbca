/* Unit tests for proto/body: the envelope every JSON body shares, usage
 * counts, and error replies. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "proto/body.h"
#include "proto/json.h"

/* tnd_body_open on a NUL-terminated text must fail saying want. */
static void open_fails(const char *text, const char *type, const char *want)
{
    json_object *obj = (json_object *)1;

    assert_int_equal(tnd_body_open(&obj, text, strlen(text), type), -1);
    assert_null(obj);
    if (!strstr(tnd_error_last(), want))
        fail_msg("opening %s: error \"%s\" does not say \"%s\"", text,
                 tnd_error_last(), want);
}

static void new_body_opens_again(void **state)
{
    json_object *obj = tnd_body_new("code", "task-1", 2);
    size_t len = 0;
    char *text = tnd_body_finish(obj, &len), *task_id = NULL;
    int attempt = 0;

    (void)state;
    assert_string_equal(text, "{\"tandem\":1,\"type\":\"code\",\"task_id\":"
                              "\"task-1\",\"attempt\":2}");
    assert_int_equal(len, strlen(text));

    assert_int_equal(tnd_body_open(&obj, text, len, "code"), 0);
    assert_int_equal(tnd_body_ids(&task_id, &attempt, obj), 0);
    assert_string_equal(task_id, "task-1");
    assert_int_equal(attempt, 2);
    free(task_id);
    json_object_put(obj);
    free(text);

    text = tnd_body_finish(tnd_body_new("audit", "t", 1), NULL);
    assert_non_null(text);
    free(text);
}

static void envelope_is_checked(void **state)
{
    (void)state;
    open_fails("{\"tandem\":1,\"type\":\"audit\"}", "code",
               "expected a code body, got type \"audit\"");
    open_fails("{\"tandem\":2,\"type\":\"code\"}", "code",
               "bad code body: body version 2 is not supported (this "
               "tandem speaks version 1)");
    open_fails("{\"type\":\"code\"}", "code",
               "bad code body: body has no valid \"tandem\" version field");
    open_fails("{\"tandem\":\"1\",\"type\":\"code\"}", "code",
               "no valid \"tandem\" version field");
    open_fails("{\"tandem\":1}", "code",
               "bad code body: field 'type' is "
               "missing");
    open_fails("{\"tandem\":1,\"type\":7}", "code",
               "field 'type' must be a string");
    open_fails("[1,2]", "audit", "bad audit body: body is not a JSON object");
    open_fails("null", "audit", "body is not a JSON object");
    open_fails("{\"tandem\":1,", "code", "bad code body: JSON text ends early");
    open_fails("MDPW02", "code", "bad code body: not valid JSON at byte 0");
}

static void error_bodies_fail_with_the_agent_message(void **state)
{
    (void)state;
    open_fails("{\"tandem\":1,\"type\":\"error\",\"error\":\"model down\"}",
               "code", "agent error: model down");
    assert_string_equal(tnd_error_last(), "agent error: model down");
    open_fails("{\"tandem\":1,\"type\":\"error\"}", "audit",
               "agent error (without a message)");
}

static void ids_are_checked(void **state)
{
    json_object *obj = tnd_body_new("code", "", 0);
    char *task_id = NULL;
    int attempt = 0;

    (void)state;
    assert_int_equal(tnd_body_ids(&task_id, &attempt, obj), -1);
    assert_string_equal(tnd_error_last(),
                        "field 'attempt' must be an integer 1..1000, got 0");
    free(task_id);
    task_id = NULL;
    json_object_object_add(obj, "attempt",
                           json_object_new_int(TND_BODY_MAX_ATTEMPT));
    json_object_object_del(obj, "task_id");
    assert_int_equal(tnd_body_ids(&task_id, &attempt, obj), -1);
    assert_string_equal(tnd_error_last(), "field 'task_id' is missing");
    json_object_put(obj);
}

static void usage_round_trips_and_adds(void **state)
{
    tnd_usage u = {.calls = 2,
                   .prompt_tokens = 1200,
                   .completion_tokens = 300,
                   .estimated = true,
                   .latency_ms = 4500,
                   .retries = 1};
    tnd_usage back, sum = {0};
    json_object *j = tnd_usage_to_json(&u, TND_USAGE_WIRE);

    (void)state;
    assert_int_equal(tnd_usage_from_json(&back, j), 0);
    assert_int_equal(back.calls, 2);
    assert_int_equal(back.prompt_tokens, 1200);
    assert_int_equal(back.completion_tokens, 300);
    assert_true(back.estimated);
    assert_int_equal(back.latency_ms, 4500);
    assert_int_equal(back.retries, 1);
    json_object_put(j);

    tnd_usage_add(&sum, &u);
    tnd_usage_add(&sum, &u);
    assert_int_equal(sum.calls, 4);
    assert_int_equal(sum.prompt_tokens, 2400);
    assert_int_equal(sum.completion_tokens, 600);
    assert_int_equal(sum.latency_ms, 9000);
    assert_int_equal(sum.retries, 2);
    assert_true(sum.estimated);
}

/* The same usage under its two sets of names: the protocol's and
 * report.json's (by_role), both read by tools outside tandem. */
static void usage_keys_name_the_format(void **state)
{
    static const char *const wire[] = {
        "calls",     "prompt_tokens", "completion_tokens",
        "estimated", "latency_ms",    "retries"};
    static const char *const report[] = {"llm_calls",  "prompt",
                                         "completion", "estimated",
                                         "latency_ms", "retries"};
    tnd_usage u = {3, 40, 5, false, 600, 2};
    json_object *w = tnd_usage_to_json(&u, TND_USAGE_WIRE);
    json_object *r = tnd_usage_to_json(&u, TND_USAGE_REPORT);
    size_t i = 0;

    (void)state;
    assert_int_equal(json_object_object_length(w), 6);
    assert_int_equal(json_object_object_length(r), 6);
    json_object_object_foreach(w, wk, wv)
    {
        (void)wv;
        assert_string_equal(wk, wire[i++]);
    }
    i = 0;
    json_object_object_foreach(r, rk, rv)
    {
        (void)rv;
        assert_string_equal(rk, report[i++]);
    }
    assert_int_equal(
        json_object_get_int(json_object_object_get(r, "llm_calls")), 3);
    assert_int_equal(json_object_get_int(json_object_object_get(r, "prompt")),
                     40);
    assert_int_equal(
        json_object_get_int(json_object_object_get(r, "completion")), 5);
    assert_int_equal(
        json_object_get_int(json_object_object_get(r, "latency_ms")), 600);
    json_object_put(w);
    json_object_put(r);
}

static void usage_missing_fields_are_zero(void **state)
{
    json_object *j;
    tnd_usage u;

    (void)state;
    memset(&u, 0xff, sizeof(u));
    assert_int_equal(tnd_usage_from_json(&u, NULL), 0);
    assert_int_equal(u.calls, 0);
    assert_false(u.estimated);

    assert_int_equal(tnd_json_parse(&j, "{\"calls\":1}", 11), 0);
    memset(&u, 0xff, sizeof(u));
    assert_int_equal(tnd_usage_from_json(&u, j), 0);
    assert_int_equal(u.calls, 1);
    assert_int_equal(u.prompt_tokens, 0);
    assert_int_equal(u.retries, 0);
    json_object_put(j);

    assert_int_equal(tnd_json_parse(&j, "{\"calls\":-1}", 12), 0);
    assert_int_equal(tnd_usage_from_json(&u, j), -1);
    assert_string_equal(tnd_error_last(), "usage: field 'calls' must be an "
                                          "integer 0..1000000000, got -1");
    json_object_put(j);
    assert_int_equal(tnd_json_parse(&j, "{\"estimated\":\"no\"}", 18), 0);
    assert_int_equal(tnd_usage_from_json(&u, j), -1);
    assert_string_equal(tnd_error_last(),
                        "usage: field 'estimated' must be true or false");
    json_object_put(j);
}

static void error_reply_round_trips(void **state)
{
    char type[32];
    size_t len = 0;
    char *text = tnd_error_reply_encode("task-1", 3, "the model is down", &len);
    json_object *obj;
    char *task_id = NULL;
    int attempt = 0;

    (void)state;
    assert_int_equal(len, strlen(text));
    assert_int_equal(tnd_body_type(type, sizeof(type), text, len), 0);
    assert_string_equal(type, "error");
    assert_int_equal(tnd_body_open(&obj, text, len, "code_reply"), -1);
    assert_string_equal(tnd_error_last(), "agent error: the model is down");
    assert_int_equal(tnd_json_parse(&obj, text, len), 0);
    assert_int_equal(tnd_body_ids(&task_id, &attempt, obj), 0);
    assert_string_equal(task_id, "task-1");
    assert_int_equal(attempt, 3);
    free(task_id);
    json_object_put(obj);
    free(text);
}

static void error_reply_without_ids_still_decodes(void **state)
{
    char *text = tnd_error_reply_encode(NULL, 0, "no task", NULL);
    json_object *obj;
    char *task_id = NULL;
    int attempt = 0;

    (void)state;
    assert_int_equal(tnd_json_parse(&obj, text, strlen(text)), 0);
    assert_int_equal(tnd_body_ids(&task_id, &attempt, obj), 0);
    assert_string_equal(task_id, "");
    assert_int_equal(attempt, 1);
    free(task_id);
    json_object_put(obj);
    free(text);
}

static void error_reply_message_is_capped(void **state)
{
    size_t n = TND_BODY_MAX_NOTE + 100;
    char *message = malloc(n + 1), *text, *got = NULL;
    json_object *obj;

    (void)state;
    memset(message, 'm', n);
    message[n] = '\0';
    text = tnd_error_reply_encode("t", 1, message, NULL);
    assert_int_equal(tnd_json_parse(&obj, text, strlen(text)), 0);
    assert_int_equal(tnd_json_get_str(&got, obj, "error", TND_BODY_MAX_NOTE,
                                      TND_JSON_REQUIRED),
                     0);
    assert_int_equal(strlen(got), TND_BODY_MAX_NOTE);
    /* so the receiver reads the message, not "without a message" */
    json_object_put(obj);
    assert_int_equal(tnd_body_open(&obj, text, strlen(text), "code"), -1);
    assert_memory_equal(tnd_error_last(), "agent error: mmm", 16);
    free(got);
    free(text);
    free(message);
}

static void body_type_reads_the_envelope_only(void **state)
{
    char type[32];
    const char *audit = "{\"tandem\":1,\"type\":\"audit_reply\",\"x\":[]}";
    const char *long_type = "{\"tandem\":1,\"type\":"
                            "\"abcdefghijklmnopqrstuvwxyz0123456\"}";

    (void)state;
    assert_int_equal(tnd_body_type(type, sizeof(type), audit, strlen(audit)),
                     0);
    assert_string_equal(type, "audit_reply");
    assert_int_equal(tnd_body_type(type, sizeof(type), "{}", 2), -1);
    assert_int_equal(tnd_body_type(type, sizeof(type),
                                   "{\"tandem\":9,"
                                   "\"type\":\"x\"}",
                                   23),
                     -1);
    assert_non_null(strstr(tnd_error_last(), "version 9 is not supported"));
    assert_int_equal(tnd_body_type(type, sizeof(type), "nope", 4), -1);
    assert_int_equal(
        tnd_body_type(type, sizeof(type), long_type, strlen(long_type)), -1);
    assert_string_equal(tnd_error_last(), "field 'type' is 33 bytes, more "
                                          "than the limit of 31");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(new_body_opens_again),
        cmocka_unit_test(envelope_is_checked),
        cmocka_unit_test(error_bodies_fail_with_the_agent_message),
        cmocka_unit_test(ids_are_checked),
        cmocka_unit_test(usage_round_trips_and_adds),
        cmocka_unit_test(usage_keys_name_the_format),
        cmocka_unit_test(usage_missing_fields_are_zero),
        cmocka_unit_test(error_reply_round_trips),
        cmocka_unit_test(error_reply_without_ids_still_decodes),
        cmocka_unit_test(error_reply_message_is_capped),
        cmocka_unit_test(body_type_reads_the_envelope_only),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
