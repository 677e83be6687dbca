/* Unit tests for agents/endpoint: what the HTTP backends share. The
 * headers in order (the backend's own unless the config sets them, the
 * key, the config's), credentials kept out of logs, a request's fields,
 * the error for a failed status, an answer handed over, and the body
 * every request starts from. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents/endpoint.h"
#include "agents/llm.h"
#include "common/config.h"
#include "common/error.h"
#include "common/log.h"
#include "common/str.h"
#include "common/xalloc.h"

static const char *const own[] = {"Content-Type: application/json",
                                  "Accept: text/event-stream", NULL};

/* The default config's coder llm, with the key in $var and headers. */
static tnd_config *config(const char *var, const char *const *headers)
{
    tnd_config *cfg = tnd_config_defaults();
    size_t n = 0;

    free(cfg->coder.llm.api_key_env);
    cfg->coder.llm.api_key_env = tnd_xstrdup(var);
    free(cfg->coder.llm.model);
    cfg->coder.llm.model = tnd_xstrdup("m-1");
    while (headers && headers[n])
        n++;
    tnd_str_list_free(&cfg->coder.llm.headers);
    cfg->coder.llm.headers = tnd_xcalloc(n + 1, sizeof(char *));
    for (size_t i = 0; i < n; i++)
        cfg->coder.llm.headers[i] = tnd_xstrdup(headers[i]);
    return cfg;
}

static void headers_come_in_order(void **state)
{
    tnd_config *cfg = config("TND_TEST_KEY", NULL);
    tnd_endpoint *e;

    (void)state;
    setenv("TND_TEST_KEY", "sk-endpoint-0123456789", 1);
    assert_non_null(e = tnd_endpoint_new(&cfg->coder.llm, "/chat", own,
                                         "Authorization: Bearer ", "check it"));
    assert_string_equal(e->url, "https://api.openai.com/v1/chat");
    assert_string_equal(e->model, "m-1");
    assert_string_equal(e->key_env, "TND_TEST_KEY");
    assert_true(e->keyed);
    assert_string_equal(e->headers[0], "Content-Type: application/json");
    assert_string_equal(e->headers[1], "Accept: text/event-stream");
    assert_string_equal(e->headers[2],
                        "Authorization: Bearer sk-endpoint-0123456789");
    assert_null(e->headers[3]);
    tnd_endpoint_free(e);
    tnd_endpoint_free(NULL); /* safe */
    tnd_config_destroy(&cfg);

    /* no key: no key header, and not keyed */
    unsetenv("TND_TEST_KEY");
    cfg = config("TND_TEST_KEY", NULL);
    assert_non_null(e = tnd_endpoint_new(&cfg->coder.llm, "/chat", own,
                                         "x-api-key: ", "check it"));
    assert_false(e->keyed);
    assert_null(e->headers[2]);
    tnd_endpoint_free(e);
    tnd_config_destroy(&cfg);
}

static void the_config_sets_its_own_headers(void **state)
{
    static const char *const headers[] = {"content-type: text/plain",
                                          "X-Api-Key: configured-secret-42",
                                          "X-Trace: on", NULL};
    tnd_config *cfg = config("TND_TEST_KEY", headers);
    tnd_endpoint *e;
    char line[128];

    (void)state;
    setenv("TND_TEST_KEY", "sk-endpoint-abcdef", 1);
    assert_non_null(e = tnd_endpoint_new(&cfg->coder.llm, "/v1/messages", own,
                                         "x-api-key: ", "check it"));
    /* the config's content type and key header stand instead of ours */
    assert_string_equal(e->headers[0], "Accept: text/event-stream");
    assert_string_equal(e->headers[1], "content-type: text/plain");
    assert_string_equal(e->headers[2], "X-Api-Key: configured-secret-42");
    assert_string_equal(e->headers[3], "X-Trace: on");
    assert_null(e->headers[4]);
    assert_true(e->keyed);
    /* the key and a credential-like header never reach a log line */
    snprintf(line, sizeof(line), "sk-endpoint-abcdef configured-secret-42 on");
    assert_string_equal(tnd_log_redact(line), "[redacted] [redacted] on");
    tnd_endpoint_free(e);
    tnd_config_destroy(&cfg);
}

static int on_chunk(const char *data, size_t len, void *payload)
{
    (void)data;
    (void)len;
    (void)payload;
    return 0;
}

static void requests_and_status_errors(void **state)
{
    tnd_config *cfg = config("", NULL);
    tnd_endpoint *e;
    tnd_http_request req;
    tnd_llm_call call = {0};
    tnd_http_response res = {404, (char *)"{}", 2, 3000};
    long wait = -1;

    (void)state;
    assert_non_null(e = tnd_endpoint_new(&cfg->coder.llm, "/api/chat", own,
                                         "Authorization: Bearer ",
                                         "pull the model"));
    call.timeout_ms = 1234;
    tnd_endpoint_request(&req, e, "{\"a\":1}", 7, &call, 99, on_chunk, &call);
    assert_string_equal(req.url, e->url);
    assert_int_equal(req.body_len, 7);
    assert_ptr_equal(req.headers, (const char *const *)e->headers);
    assert_int_equal(req.timeout_ms, 1234);
    assert_int_equal(req.max_response, 99);
    assert_true(e->stream); /* the default config streams */
    assert_ptr_equal(req.on_chunk, on_chunk);
    assert_ptr_equal(req.payload, &call);
    assert_int_equal(req.chunks_only, 1);
    e->stream = false;
    tnd_endpoint_request(&req, e, "{}", 2, &call, 99, on_chunk, &call);
    assert_null(req.on_chunk);
    assert_int_equal(tnd_endpoint_status_error(e, &res, &wait), -1);
    assert_int_equal(wait, 3000);
    assert_non_null(strstr(tnd_error_last(), "404 from "));
    assert_non_null(strstr(tnd_error_last(), "pull the model"));
    res.status = 503;
    assert_int_equal(tnd_endpoint_status_error(e, &res, &wait), TND_ERETRY);
    {
        tnd_llm_answer a = {0};
        tnd_buf text;
        tnd_buf_init(&text, 64);
        tnd_buf_puts(&text, "the answer");
        tnd_endpoint_answer(e, &a, &text, 12, 34, true);
        assert_string_equal(a.text, "the answer");
        assert_int_equal(a.usage.prompt_tokens, 12);
        assert_int_equal(a.usage.completion_tokens, 34);
        assert_true(a.truncated); /* cut at max_tokens: not a whole answer */
        assert_int_equal(text.len, 0); /* taken */
        tnd_llm_answer_clear(&a);
        tnd_buf_puts(&text, "whole");
        tnd_endpoint_answer(e, &a, &text, 12, 34, false);
        assert_false(a.truncated);
        tnd_llm_answer_clear(&a);
        /* a stream's "\u0000": the text goes on past it (it ended there,
         * and the edits after it were lost) */
        tnd_buf_append(&text, "before\0after", 12);
        tnd_endpoint_answer(e, &a, &text, 12, 34, false);
        assert_string_equal(a.text, "before\xEF\xBF\xBD"
                                    "after");
        tnd_llm_answer_clear(&a);
    }
    tnd_endpoint_free(e);
    tnd_config_destroy(&cfg);
}

/* The server's message in an error is cut at 300 bytes: a key it
 * echoes across the cut is redacted whole first, so no head of it is
 * left for the log and the journal to miss. */
static void a_quoted_message_never_holds_part_of_a_key(void **state)
{
    tnd_config *cfg = config("", NULL);
    tnd_endpoint *e;
    char body[600];
    tnd_http_response res = {401, body, 0, -1};
    long wait = -1;

    (void)state;
    tnd_log_secret("sk-endpoint-Zq8vN3xT5bL1mR7wK2pH9cF4yD6");
    snprintf(body, sizeof(body),
             "{\"error\": {\"message\": \"%0280d: "
             "sk-endpoint-Zq8vN3xT5bL1mR7wK2pH9cF4yD6 is not valid\"}}",
             0);
    res.len = strlen(body);
    assert_non_null(e = tnd_endpoint_new(&cfg->coder.llm, "/v1/x", own,
                                         "Authorization: Bearer ", "x"));
    assert_int_equal(tnd_endpoint_status_error(e, &res, &wait), -1);
    assert_non_null(strstr(tnd_error_last(), "0000: [redacted]"));
    assert_null(strstr(tnd_error_last(), "sk-endpoint"));
    tnd_endpoint_free(e);
    tnd_config_destroy(&cfg);
}

/* The body every backend starts from. */
static void a_body_holds_the_model_messages_and_stream(void **state)
{
    tnd_config *cfg = config("", NULL);
    tnd_prompt p = {0};
    tnd_endpoint *e;
    json_object *b;

    (void)state;
    assert_non_null(e = tnd_endpoint_new(&cfg->coder.llm, "/chat", own,
                                         "x-api-key: ", "check it"));
    p.system = "be brief";
    p.user = "fix it";
    b = tnd_endpoint_body(e, &p, true);
    assert_string_equal(
        json_object_to_json_string_ext(b, JSON_C_TO_STRING_PLAIN),
        "{\"model\":\"m-1\",\"messages\":[{\"role\":"
        "\"system\",\"content\":\"be brief\"},{\"role\":"
        "\"user\",\"content\":\"fix it\"}],\"stream\":true}");
    json_object_put(b);
    /* a system prompt the API takes apart is left to the backend */
    b = tnd_endpoint_body(e, &p, false);
    assert_int_equal(
        json_object_array_length(json_object_object_get(b, "messages")), 1);
    json_object_put(b);
    tnd_endpoint_free(e);
    tnd_config_destroy(&cfg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(headers_come_in_order),
        cmocka_unit_test(the_config_sets_its_own_headers),
        cmocka_unit_test(requests_and_status_errors),
        cmocka_unit_test(a_body_holds_the_model_messages_and_stream),
        cmocka_unit_test(a_quoted_message_never_holds_part_of_a_key),
    };

    tnd_log_init("test", TND_LOG_ERROR);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
