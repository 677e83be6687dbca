/* Unit tests for orchestrator/paid: the model calls a session paid for
 * that no journaled reply accounts for. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/fs.h"
#include "common/log.h"
#include "common/rmtree.h"
#include "orchestrator/journal.h"
#include "orchestrator/paid.h"
#include "proto/json.h"

static char dir[] = "/tmp/tnd-test-paid-XXXXXX";
static char path[256];
static tnd_journal *j;

static int setup(void **state)
{
    (void)state;
    if (!mkdtemp(dir))
        return -1;
    snprintf(path, sizeof(path), "%s/journal.jsonl", dir);
    tnd_log_init("test", TND_LOG_ERROR);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    return tnd_fs_rmtree(dir);
}

/* Each test starts a journal of its own. */
static int fresh(void **state)
{
    (void)state;
    unlink(path);
    j = tnd_journal_open(path);
    return j ? 0 : -1;
}

static int done(void **state)
{
    (void)state;
    tnd_journal_close(&j);
    return 0;
}

static void asked(int attempt, const char *step, const char *service)
{
    assert_int_equal(
        tnd_journal_note(j, "asked",
                         tnd_paid_asked_json(attempt, step, service)),
        0);
}

/* The step's journaled reply: what closes an `asked` for good. */
static void answered(int attempt, const char *step)
{
    json_object *f = json_object_new_object();

    json_object_object_add(f, "attempt", json_object_new_int(attempt));
    json_object_object_add(f, "reply", json_object_new_object());
    assert_int_equal(tnd_journal_append(j, step, f), 0);
}

static void unanswered(int attempt, const char *step, const char *service,
                       long calls, const tnd_usage *known)
{
    assert_int_equal(
        tnd_journal_append(
            j, "unanswered",
            tnd_paid_unanswered_json(attempt, step, service, calls, known)),
        0);
}

static tnd_paid count(int attempt, tnd_role role)
{
    tnd_paid p;

    tnd_paid_count(&p, j, attempt, role);
    return p;
}

static void an_answered_request_counts_nothing(void **state)
{
    tnd_paid p;

    (void)state;
    p = count(1, TND_ROLE_CODER);
    assert_int_equal(p.unanswered, 0);
    asked(1, "proposal", "coder");
    answered(1, "proposal");
    asked(1, "audit", "reviewer");
    answered(1, "audit");
    p = count(1, TND_ROLE_CODER);
    assert_int_equal(p.unanswered, 0);
    assert_int_equal(p.known.calls, 0);
    assert_int_equal(count(1, TND_ROLE_REVIEWER).unanswered, 0);
}

/* tandem was killed while the request was out, and the resume asked
 * again: the first one counts, once, whatever came after. */
static void a_request_out_at_a_kill_counts_one_call(void **state)
{
    (void)state;
    asked(1, "proposal", "coder");
    /* the journal as the kill left it */
    assert_int_equal(count(1, TND_ROLE_CODER).unanswered, 1);
    /* the resume asks again, and is answered */
    asked(1, "proposal", "coder");
    answered(1, "proposal");
    assert_int_equal(count(1, TND_ROLE_CODER).unanswered, 1);
    /* the reviewer's side paid nothing, nor did attempt 2 */
    assert_int_equal(count(1, TND_ROLE_REVIEWER).unanswered, 0);
    assert_int_equal(count(2, TND_ROLE_CODER).unanswered, 0);
    /* killed twice before the answer: two */
    asked(2, "audit", "reviewer");
    asked(2, "audit", "reviewer");
    asked(2, "audit", "reviewer");
    answered(2, "audit");
    assert_int_equal(count(2, TND_ROLE_REVIEWER).unanswered, 2);
}

/* The answer of another attempt, or another step, closes nothing. */
static void only_the_same_step_and_attempt_answers(void **state)
{
    (void)state;
    asked(1, "proposal", "coder");
    answered(2, "proposal");
    answered(1, "audit");
    assert_int_equal(count(1, TND_ROLE_CODER).unanswered, 1);
}

/* A quorum's members are asked at once; one answered before the kill,
 * the other's request was out. */
static void each_member_of_a_quorum_counts_apart(void **state)
{
    tnd_paid p;

    (void)state;
    asked(1, "critique.1", "reviewer.1");
    asked(1, "critique.2", "reviewer.2");
    answered(1, "critique.1");
    p = count(1, TND_ROLE_REVIEWER);
    assert_int_equal(p.unanswered, 1);
    asked(1, "critique.2", "reviewer.2");
    answered(1, "critique.2");
    answered(1, "audit");
    assert_int_equal(count(1, TND_ROLE_REVIEWER).unanswered, 1);
    assert_int_equal(count(1, TND_ROLE_CODER).unanswered, 0);
}

/* What the crew knew: agents lost with the request (one call each), and
 * an error reply's own account of its calls. */
static void unanswered_records_count_their_calls_and_usage(void **state)
{
    tnd_usage err;
    tnd_paid p;

    (void)state;
    memset(&err, 0, sizeof(err));
    err.calls = 1;
    err.prompt_tokens = 100;
    err.completion_tokens = 10;
    /* one agent died with it, the next answered */
    asked(1, "proposal", "coder");
    unanswered(1, "proposal", "coder", 1, NULL);
    answered(1, "proposal");
    p = count(1, TND_ROLE_CODER);
    assert_int_equal(p.unanswered, 1);
    assert_int_equal(p.known.calls, 0);
    /* attempt 2: an error reply said what it cost, then a resume */
    asked(2, "proposal", "coder");
    unanswered(2, "proposal", "coder", 0, &err);
    asked(2, "proposal", "coder");
    answered(2, "proposal");
    p = count(2, TND_ROLE_CODER);
    assert_int_equal(p.unanswered, 0);
    assert_int_equal(p.known.calls, 1);
    assert_int_equal(p.known.prompt_tokens, 100);
    assert_int_equal(p.known.completion_tokens, 10);
    /* a request given up at its deadline before any agent had it */
    asked(3, "audit", "reviewer");
    unanswered(3, "audit", "reviewer", 0, NULL);
    assert_int_equal(count(3, TND_ROLE_REVIEWER).unanswered, 0);
}

/* A hand-edited journal cannot make the count absurd. */
static void claims_are_bounded(void **state)
{
    (void)state;
    unanswered(1, "proposal", "coder", -5, NULL);
    assert_int_equal(count(1, TND_ROLE_CODER).unanswered, 0);
    unanswered(2, "proposal", "coder", 1L << 40, NULL);
    assert_int_equal(count(2, TND_ROLE_CODER).unanswered, 1000);
}

static void records_say_what_and_where(void **state)
{
    tnd_usage u;
    json_object *f;

    (void)state;
    f = tnd_paid_asked_json(2, "critique.1", "reviewer.1");
    assert_int_equal(tnd_json_int_or(f, "attempt", 0), 2);
    assert_string_equal(tnd_json_str_or(f, "step", ""), "critique.1");
    assert_string_equal(tnd_json_str_or(f, "service", ""), "reviewer.1");
    json_object_put(f);

    f = tnd_paid_unanswered_json(1, "proposal", "coder", 2, NULL);
    assert_int_equal(tnd_json_int_or(f, "calls", 0), 2);
    assert_null(tnd_json_field(f, "usage")); /* nothing known: left out */
    json_object_put(f);

    memset(&u, 0, sizeof(u));
    u.calls = 1;
    u.prompt_tokens = 7;
    f = tnd_paid_unanswered_json(1, "proposal", "coder", 0, &u);
    assert_int_equal(tnd_json_int_or(tnd_json_field(f, "usage"), "calls", 0),
                     1);
    assert_int_equal(
        tnd_json_int_or(tnd_json_field(f, "usage"), "prompt_tokens", 0), 7);
    json_object_put(f);

    assert_int_equal(tnd_paid_role("coder"), TND_ROLE_CODER);
    assert_int_equal(tnd_paid_role("reviewer"), TND_ROLE_REVIEWER);
    assert_int_equal(tnd_paid_role("reviewer.2"), TND_ROLE_REVIEWER);
}

static bool error_usage(tnd_usage *u, const char *body)
{
    return tnd_paid_error_usage(u, body, strlen(body));
}

/* An error reply counts the calls its agent says it made: tandem's
 * agents send their exchanges (a failed one has no usage); another may
 * send a usage of its own. */
static void an_error_reply_says_what_it_cost(void **state)
{
    tnd_usage u;

    (void)state;
    assert_true(error_usage(
        &u, "{\"tandem\":1,\"type\":\"error\",\"task_id\":\"t\",\"attempt\":1,"
            "\"error\":\"401\",\"exchanges\":["
            "{\"role\":\"coder\",\"call\":1,\"answer\":\"no edits\","
            "\"usage\":{\"calls\":1,\"prompt_tokens\":100,"
            "\"completion_tokens\":10}},"
            "{\"role\":\"coder\",\"call\":2,\"error\":\"401 from ...\"}]}"));
    assert_int_equal(u.calls, 1);
    assert_int_equal(u.prompt_tokens, 100);
    assert_int_equal(u.completion_tokens, 10);

    assert_true(error_usage(
        &u, "{\"type\":\"error\",\"error\":\"x\",\"usage\":{\"calls\":2,"
            "\"prompt_tokens\":5},\"exchanges\":[{\"usage\":{\"calls\":9}}]}"));
    assert_int_equal(u.calls, 2); /* its own word first */
    assert_int_equal(u.prompt_tokens, 5);

    /* an error that made no call, and one whose usage is not a usage */
    assert_true(error_usage(&u, "{\"type\":\"error\",\"error\":\"bad\"}"));
    assert_int_equal(u.calls, 0);
    assert_true(error_usage(
        &u, "{\"type\":\"error\",\"error\":\"x\",\"usage\":{\"calls\":-1}}"));
    assert_int_equal(u.calls, 0);

    /* anything else is not an error reply */
    assert_false(
        error_usage(&u, "{\"type\":\"code_reply\",\"usage\":{\"calls\":1}}"));
    assert_int_equal(u.calls, 0);
    assert_false(error_usage(&u, "not json"));
    assert_false(error_usage(&u, "[1]"));
    assert_false(tnd_paid_error_usage(&u, NULL, 0));
}

#define TEST(f) cmocka_unit_test_setup_teardown(f, fresh, done)

int main(void)
{
    const struct CMUnitTest tests[] = {
        TEST(an_answered_request_counts_nothing),
        TEST(a_request_out_at_a_kill_counts_one_call),
        TEST(only_the_same_step_and_attempt_answers),
        TEST(each_member_of_a_quorum_counts_apart),
        TEST(unanswered_records_count_their_calls_and_usage),
        TEST(claims_are_bounded),
        TEST(records_say_what_and_where),
        TEST(an_error_reply_says_what_it_cost),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}
