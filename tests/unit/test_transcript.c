/* Unit tests for agents/transcript: the LLM exchanges sent back with a
 * reply are complete, redacted and bounded. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "agents/transcript.h"
#include "common/log.h"
#include "common/xalloc.h"
#include "proto/json.h"

#define SECRET "sk-transcript-secret-0123456789abcdef"

static tnd_prompt prompt(const char *system, const char *user, int call)
{
    tnd_prompt p;

    memset(&p, 0, sizeof(p));
    p.system = system;
    p.user = user;
    p.role = "coder";
    p.task_id = "t";
    p.attempt = 2;
    p.call = call;
    return p;
}

/* The reply body after attach, parsed; its "exchanges" in *ex. */
static json_object *attached(tnd_transcript *t, json_object **ex)
{
    size_t len = strlen("{\"tandem\":1,\"type\":\"code_reply\"}");
    char *body = tnd_xstrdup("{\"tandem\":1,\"type\":\"code_reply\"}");
    json_object *o = NULL;

    body = tnd_transcript_attach(t, body, &len);
    assert_int_equal(tnd_json_parse(&o, body, len), 0);
    assert_true(json_object_object_get_ex(o, "exchanges", ex));
    free(body);
    return o;
}

static const char *field(json_object *o, const char *key)
{
    json_object *v;

    return json_object_object_get_ex(o, key, &v) ? json_object_get_string(v)
                                                 : NULL;
}

static void answers_and_errors_are_kept_in_order(void **state)
{
    tnd_transcript t;
    tnd_prompt p1 = prompt("be brief", "fix it", 1);
    tnd_prompt p2 = prompt("be brief", "fix it, again", 2);
    tnd_llm_answer a;
    json_object *o, *ex, *e, *usage;

    (void)state;
    memset(&a, 0, sizeof(a));
    a.text = tnd_xstrdup("done");
    a.usage.calls = 1;
    a.usage.prompt_tokens = 12;
    a.usage.latency_ms = 34;
    tnd_transcript_init(&t);
    tnd_transcript_exchange(&p1, &a, NULL, &t);
    tnd_transcript_exchange(&p2, NULL, "429 from the API: gave up", &t);
    o = attached(&t, &ex);
    assert_int_equal(json_object_array_length(ex), 2);
    e = json_object_array_get_idx(ex, 0);
    assert_string_equal(field(e, "role"), "coder");
    assert_string_equal(field(e, "attempt"), "2");
    assert_string_equal(field(e, "call"), "1");
    assert_string_equal(field(e, "system"), "be brief");
    assert_string_equal(field(e, "user"), "fix it");
    assert_string_equal(field(e, "answer"), "done");
    assert_true(json_object_object_get_ex(e, "usage", &usage));
    assert_string_equal(field(usage, "prompt_tokens"), "12");
    assert_string_equal(field(usage, "latency_ms"), "34");
    e = json_object_array_get_idx(ex, 1);
    assert_string_equal(field(e, "user"), "fix it, again");
    assert_null(field(e, "answer"));
    assert_string_equal(field(e, "error"), "429 from the API: gave up");
    /* attaching empties the transcript: the next reply starts afresh */
    assert_int_equal(json_object_array_length(t.list), 0);
    json_object_put(o);
    tnd_transcript_clear(&t);
    tnd_llm_answer_clear(&a);
}

static void secrets_are_redacted(void **state)
{
    tnd_transcript t;
    tnd_prompt p = prompt("key " SECRET, "user " SECRET, 1);
    tnd_llm_answer a;
    json_object *o, *ex;
    const char *text;

    (void)state;
    tnd_log_secret(SECRET);
    memset(&a, 0, sizeof(a));
    a.text = tnd_xstrdup("answer " SECRET);
    tnd_transcript_init(&t);
    tnd_transcript_exchange(&p, &a, NULL, &t);
    tnd_transcript_exchange(&p, NULL, "error " SECRET, &t);
    o = attached(&t, &ex);
    text = json_object_to_json_string(ex);
    assert_null(strstr(text, SECRET));
    assert_non_null(strstr(text, "answer "));
    json_object_put(o);
    tnd_transcript_clear(&t);
    tnd_llm_answer_clear(&a);
}

/* A key across the cut is redacted whole, not cut first and then missed
 * by the redaction, which would leave its head in the session. */
static void a_secret_across_the_cut_leaves_nothing(void **state)
{
    size_t head = TND_TRANSCRIPT_MAX_TEXT - 10, len = strlen(SECRET);
    char *text = tnd_xmalloc(head + len + 100), *start;
    tnd_transcript t;
    tnd_prompt p;
    json_object *o, *ex;
    const char *user;

    (void)state;
    tnd_log_secret(SECRET);
    memset(text, 'x', head);
    strcpy(text + head, SECRET);
    memset(text + head + len, 'y', 99);
    text[head + len + 99] = '\0';
    p = prompt("s", text, 1);
    tnd_transcript_init(&t);
    tnd_transcript_exchange(&p, NULL, "failed", &t);
    o = attached(&t, &ex);
    user = field(json_object_array_get_idx(ex, 0), "user");
    start = tnd_xstrndup(SECRET, 8);
    assert_null(strstr(user, start));
    assert_non_null(strstr(user, "x[redacted]\n[... cut by tandem"));
    free(start);
    json_object_put(o);
    tnd_transcript_clear(&t);
    free(text);
}

static void long_texts_are_cut_and_the_total_is_bounded(void **state)
{
    size_t big = TND_TRANSCRIPT_MAX_TEXT + 1000;
    char *huge = tnd_xmalloc(big + 1);
    tnd_transcript t;
    tnd_prompt p;
    json_object *o, *ex, *e;
    size_t n;

    (void)state;
    memset(huge, 'x', big);
    huge[big] = '\0';
    p = prompt("s", huge, 1);
    tnd_transcript_init(&t);
    /* each call keeps at most MAX_TEXT of its user text; enough calls
     * reach the total bound, after which texts are dropped */
    for (int i = 0; i < 12; i++)
        tnd_transcript_exchange(&p, NULL, "failed", &t);
    assert_true(t.bytes <= TND_TRANSCRIPT_MAX);
    o = attached(&t, &ex);
    n = json_object_array_length(ex);
    assert_int_equal(n, 12);
    e = json_object_array_get_idx(ex, 0);
    assert_non_null(strstr(field(e, "user"), "[... cut by tandem"));
    assert_true(strlen(field(e, "user")) < big);
    e = json_object_array_get_idx(ex, 11);
    assert_null(field(e, "user"));
    assert_string_equal(field(e, "texts_dropped"), "true");
    assert_string_equal(field(e, "error"), "failed");
    json_object_put(o);
    tnd_transcript_clear(&t);
    free(huge);
}

static void nothing_to_attach_leaves_the_body_alone(void **state)
{
    tnd_transcript t;
    tnd_prompt p = prompt("s", "u", 1);
    char *body = tnd_xstrdup("{\"tandem\":1}");
    char *same;
    size_t len = strlen(body);

    (void)state;
    tnd_transcript_init(&t);
    same = tnd_transcript_attach(&t, body, &len);
    assert_ptr_equal(same, body);
    /* a body that is not JSON is passed on untouched */
    tnd_transcript_exchange(&p, NULL, "e", &t);
    free(body);
    body = tnd_xstrdup("not json");
    len = strlen(body);
    same = tnd_transcript_attach(&t, body, &len);
    assert_ptr_equal(same, body);
    assert_string_equal(same, "not json");
    free(body);
    tnd_transcript_clear(&t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(answers_and_errors_are_kept_in_order),
        cmocka_unit_test(secrets_are_redacted),
        cmocka_unit_test(a_secret_across_the_cut_leaves_nothing),
        cmocka_unit_test(long_texts_are_cut_and_the_total_is_bounded),
        cmocka_unit_test(nothing_to_attach_leaves_the_body_alone),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
