/* Unit tests for proto/client: the bodies a client and tandem serve
 * exchange, each request and reply encoded and decoded again, and each
 * way a client's request can be refused. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/xalloc.h"
#include "proto/client.h"
#include "proto/json.h"

#define S(x) ((char *)(x))

static void requests_round_trip(void **state)
{
    tnd_client_request in = {.kind = TND_CLIENT_KIND_SUBMIT,
                             .repo = S("/src/app"),
                             .task = S("make the test pass"),
                             .config = S("/src/app/agents.yaml"),
                             .detach = true,
                             .on_head = true},
                       out;
    size_t len;
    char *body;

    (void)state;
    body = tnd_client_request_encode(&in, &len);
    assert_int_equal(
        tnd_client_request_decode(&out, TND_CLIENT_SUBMIT, body, len), 0);
    assert_int_equal(out.kind, TND_CLIENT_KIND_SUBMIT);
    assert_string_equal(out.repo, "/src/app");
    assert_string_equal(out.task, "make the test pass");
    assert_string_equal(out.config, "/src/app/agents.yaml");
    assert_true(out.detach);
    assert_true(out.on_head);
    assert_false(out.review);
    tnd_client_request_clear(&out);
    free(body);

    in.review = true;
    in.on_head = false; /* a review's base is its own */
    in.diff = S("--- a/x\n+++ b/x\n");
    body = tnd_client_request_encode(&in, &len);
    assert_int_equal(
        tnd_client_request_decode(&out, TND_CLIENT_SUBMIT, body, len), 0);
    assert_true(out.review);
    assert_false(out.staged);
    assert_string_equal(out.diff, "--- a/x\n+++ b/x\n");
    assert_null(out.rev);
    tnd_client_request_clear(&out);
    free(body);

    /* git's changes the client took itself: the diff on its commit */
    in.rev = S("0123456789abcdef0123456789abcdef01234567");
    body = tnd_client_request_encode(&in, &len);
    assert_int_equal(
        tnd_client_request_decode(&out, TND_CLIENT_SUBMIT, body, len), 0);
    assert_string_equal(out.rev, "0123456789abcdef0123456789abcdef01234567");
    tnd_client_request_clear(&out);
    free(body);
    in.rev = NULL;

    in = (tnd_client_request){.kind = TND_CLIENT_KIND_ATTACH,
                              .session = S("20261122-014455-3fa2")};
    body = tnd_client_request_encode(&in, &len);
    assert_string_equal(tnd_client_service(in.kind), TND_CLIENT_ATTACH);
    assert_int_equal(
        tnd_client_request_decode(&out, TND_CLIENT_ATTACH, body, len), 0);
    assert_string_equal(out.session, "20261122-014455-3fa2");
    assert_null(out.repo);
    tnd_client_request_clear(&out);
    free(body);
    /* the repository, where a session that ended long ago is found */
    in.repo = S("/src/app");
    body = tnd_client_request_encode(&in, &len);
    assert_int_equal(
        tnd_client_request_decode(&out, TND_CLIENT_ATTACH, body, len), 0);
    assert_string_equal(out.repo, "/src/app");
    tnd_client_request_clear(&out);
    free(body);
    in.repo = NULL;

    body = tnd_xstrdup("{\"tandem\":1,\"type\":\"status\"}");
    assert_int_equal(
        tnd_client_request_decode(&out, TND_CLIENT_STATUS, body, strlen(body)),
        0);
    free(body);
    assert_int_equal(out.kind, TND_CLIENT_KIND_STATUS);
    tnd_client_request_clear(&out);

    in = (tnd_client_request){.kind = TND_CLIENT_KIND_ANSWER,
                              .session = S("20261122-014455-3fa2c91b"),
                              .repo = S("/src/app"),
                              .answer = S("budget"),
                              .iterations = 2,
                              .tokens = 5000,
                              .escalation = 17};
    body = tnd_client_request_encode(&in, &len);
    assert_string_equal(tnd_client_service(in.kind), TND_CLIENT_ANSWER);
    assert_int_equal(
        tnd_client_request_decode(&out, TND_CLIENT_ANSWER, body, len), 0);
    assert_int_equal(out.kind, TND_CLIENT_KIND_ANSWER);
    assert_string_equal(out.session, "20261122-014455-3fa2c91b");
    assert_string_equal(out.repo, "/src/app");
    assert_string_equal(out.answer, "budget");
    assert_null(out.text);
    assert_int_equal(out.iterations, 2);
    assert_int_equal(out.tokens, 5000);
    assert_int_equal(out.escalation, 17); /* the question it answers */
    tnd_client_request_clear(&out);
    free(body);
}

/* body, sent to service, is refused with an error containing want. */
static void refused(const char *service, const char *body, const char *want)
{
    tnd_client_request out;

    assert_int_equal(
        tnd_client_request_decode(&out, service, body, strlen(body)), -1);
    if (!strstr(tnd_error_last(), want))
        fail_msg("'%s' does not say '%s'", tnd_error_last(), want);
    assert_null(out.repo);
    assert_null(out.task);
}

static void bad_requests_are_refused_with_the_field_named(void **state)
{
    char *big;

    (void)state;
    refused("coder", "{}", "no service 'coder' for clients");
    refused(TND_CLIENT_SUBMIT, "not json", "bad submit body");
    refused(TND_CLIENT_SUBMIT, "{\"tandem\":2,\"type\":\"submit\"}",
            "version 2");
    refused(TND_CLIENT_SUBMIT, "{\"tandem\":1,\"type\":\"attach\"}",
            "expected a submit body");
    refused(TND_CLIENT_SUBMIT,
            "{\"tandem\":1,\"type\":\"submit\",\"task\":\"x\"}",
            "field 'repo'");
    refused(
        TND_CLIENT_SUBMIT,
        "{\"tandem\":1,\"type\":\"submit\",\"repo\":\"app\",\"task\":\"x\"}",
        "must be an absolute path");
    refused(TND_CLIENT_SUBMIT,
            "{\"tandem\":1,\"type\":\"submit\",\"repo\":\"/a\",\"task\":\" \"}",
            "'task' is empty");
    refused(TND_CLIENT_SUBMIT,
            "{\"tandem\":1,\"type\":\"submit\",\"repo\":\"/a\",\"task\":\"x\","
            "\"config\":\"a.yaml\"}",
            "field 'config' must be an absolute path");
    refused(TND_CLIENT_SUBMIT,
            "{\"tandem\":1,\"type\":\"submit\",\"repo\":\"/a\",\"task\":\"x\","
            "\"detach\":\"yes\"}",
            "detach");
    refused(TND_CLIENT_ATTACH, "{\"tandem\":1,\"type\":\"attach\"}",
            "field 'session'");
    /* no id at all is said so (it was "no session  runs") */
    refused(TND_CLIENT_ATTACH,
            "{\"tandem\":1,\"type\":\"attach\",\"session\":\"\"}",
            "field 'session' is empty");
    refused(TND_CLIENT_ATTACH,
            "{\"tandem\":1,\"type\":\"attach\",\"session\":\"x\","
            "\"repo\":\"app\"}",
            "field 'repo' must be an absolute path");
    refused(TND_CLIENT_ANSWER,
            "{\"tandem\":1,\"type\":\"answer\",\"session\":\" \","
            "\"repo\":\"/a\",\"answer\":\"approve\"}",
            "field 'session' is empty");
    refused(TND_CLIENT_SUBMIT,
            "{\"tandem\":1,\"type\":\"submit\",\"repo\":\"/a\",\"task\":\"x\","
            "\"review\":{\"staged\":true,\"diff\":\"d\"}}",
            "do not go together");
    /* a rev git would take as an option, or with no diff to go on */
    refused(TND_CLIENT_SUBMIT,
            "{\"tandem\":1,\"type\":\"submit\",\"repo\":\"/a\",\"task\":\"x\","
            "\"review\":{\"diff\":\"d\",\"rev\":\"--output=/tmp/x\"}}",
            "'rev' must be a commit id");
    refused(
        TND_CLIENT_SUBMIT,
        "{\"tandem\":1,\"type\":\"submit\",\"repo\":\"/a\",\"task\":\"x\","
        "\"review\":{\"rev\":\"0123456789abcdef0123456789abcdef01234567\"}}",
        "and go with 'diff'");
    refused(TND_CLIENT_SUBMIT,
            "{\"tandem\":1,\"type\":\"submit\",\"repo\":\"/a\",\"task\":\"x\","
            "\"review\":true}",
            "field 'review' must be an object");
    refused(TND_CLIENT_SUBMIT,
            "{\"tandem\":1,\"type\":\"submit\",\"repo\":\"/a\",\"task\":\"x\","
            "\"on_head\":true,\"review\":{}}",
            "field 'on_head' is for a task");
    refused(TND_CLIENT_ANSWER,
            "{\"tandem\":1,\"type\":\"answer\",\"session\":\"s\","
            "\"answer\":\"approve\"}",
            "field 'repo'");
    refused(TND_CLIENT_ANSWER,
            "{\"tandem\":1,\"type\":\"answer\",\"session\":\"s\","
            "\"repo\":\"/a\",\"answer\":\"budget\",\"iterations\":51}",
            "iterations");
    big = malloc(TND_CLIENT_MAX_BODY + 2);
    memset(big, ' ', TND_CLIENT_MAX_BODY + 1);
    big[TND_CLIENT_MAX_BODY + 1] = '\0';
    refused(TND_CLIENT_STATUS, big, "more than the limit");
    free(big);
}

static void replies_round_trip(void **state)
{
    tnd_client_reply r;
    json_object *report = NULL;
    size_t len;
    char *body;

    (void)state;
    body = tnd_client_accepted("S1", "/a/.tandem/sessions/S1", 3, &len);
    assert_int_equal(tnd_client_reply_decode(&r, body, len), 0);
    assert_int_equal(r.type, TND_CLIENT_ACCEPTED);
    assert_string_equal(r.session, "S1");
    assert_string_equal(r.dir, "/a/.tandem/sessions/S1");
    assert_int_equal(r.queued, 3);
    tnd_client_reply_clear(&r);
    free(body);

    body = tnd_client_output(false, "a\0b\n", 4, &len);
    assert_int_equal(tnd_client_reply_decode(&r, body, len), 0);
    assert_int_equal(r.type, TND_CLIENT_OUTPUT);
    assert_false(r.err);
    assert_int_equal(r.text_len, 4);
    assert_memory_equal(r.text, "a\0b\n", 4);
    tnd_client_reply_clear(&r);
    free(body);

    body = tnd_client_alive(&len);
    assert_int_equal(tnd_client_reply_decode(&r, body, len), 0);
    assert_int_equal(r.type, TND_CLIENT_ALIVE);
    tnd_client_reply_clear(&r);
    free(body);

    assert_int_equal(tnd_json_parse(&report, "{\"status\":\"approved\"}", 21),
                     0);
    body = tnd_client_done("S1", 0, "approved", report, &len);
    json_object_put(report);
    assert_int_equal(tnd_client_reply_decode(&r, body, len), 0);
    assert_int_equal(r.type, TND_CLIENT_DONE);
    assert_int_equal(r.exit_code, 0);
    assert_string_equal(r.status, "approved");
    assert_string_equal(tnd_json_str_or(r.report, "status", ""), "approved");
    tnd_client_reply_clear(&r);
    free(body);

    body = tnd_client_busy(4, 256, &len);
    assert_int_equal(tnd_client_reply_decode(&r, body, len), 0);
    assert_int_equal(r.type, TND_CLIENT_ERROR);
    assert_string_equal(r.kind, "busy");
    assert_non_null(strstr(r.error, "--max-sessions 4"));
    assert_non_null(strstr(r.error, "--queue-max 256"));
    tnd_client_reply_clear(&r);
    free(body);

    body = tnd_client_error("not_found", "no session X here", &len);
    assert_int_equal(tnd_client_reply_decode(&r, body, len), 0);
    assert_string_equal(r.kind, "not_found");
    assert_string_equal(r.error, "no session X here");
    tnd_client_reply_clear(&r);
    free(body);

    body = tnd_xstrdup("{\"tandem\":1,\"type\":\"what\"}");
    assert_int_equal(tnd_client_reply_decode(&r, body, strlen(body)), -1);
    free(body);
    assert_non_null(strstr(tnd_error_last(), "unknown type 'what'"));
    assert_int_equal(tnd_client_reply_decode(&r, "[1]", 3), -1);
}

/* Who asked, as an answer record keeps it, and back; a record from
 * before (no "via") or with odd fields reads as not known. */
static void who_asked_round_trips_through_a_record(void **state)
{
    tnd_client_who who = {.via = TND_CLIENT_VIA_CURVE,
                          .user = "build-host",
                          .key = "rq:rM>}U?@Ln",
                          .address = "10.0.0.2"},
                   tcp = {.via = TND_CLIENT_VIA_TCP, .address = "127.0.0.1"},
                   got;
    json_object *o = json_object_new_object();

    (void)state;
    tnd_client_who_add(o, &who);
    assert_string_equal(json_object_to_json_string(o),
                        "{ \"via\": \"curve\", \"user\": \"build-host\", "
                        "\"key\": \"rq:rM>}U?@Ln\", \"address\": "
                        "\"10.0.0.2\" }");
    tnd_client_who_read(&got, o);
    assert_memory_equal(&got, &who, sizeof(got));
    json_object_put(o);

    o = json_object_new_object(); /* no CURVE: no one is named */
    tnd_client_who_add(o, &tcp);
    assert_string_equal(json_object_to_json_string(o),
                        "{ \"via\": \"tcp\", \"user\": null, \"address\": "
                        "\"127.0.0.1\" }");
    json_object_put(o);

    o = json_object_new_object(); /* a local answer adds nothing */
    tnd_client_who_add(o, &(tnd_client_who){0});
    tnd_client_who_add(o, NULL);
    assert_int_equal(json_object_object_length(o), 0);
    json_object_put(o);

    o = json_tokener_parse("{\"via\": \"carrier-pigeon\", \"user\": \"x\"}");
    tnd_client_who_read(&got, o);
    assert_int_equal(got.via, TND_CLIENT_VIA_NONE);
    assert_string_equal(got.user, "");
    json_object_put(o);
    tnd_client_who_read(&got, NULL);
    assert_int_equal(got.via, TND_CLIENT_VIA_NONE);
    assert_string_equal(tnd_client_via_name(TND_CLIENT_VIA_IPC), "ipc");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(requests_round_trip),
        cmocka_unit_test(bad_requests_are_refused_with_the_field_named),
        cmocka_unit_test(replies_round_trip),
        cmocka_unit_test(who_asked_round_trips_through_a_record),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
