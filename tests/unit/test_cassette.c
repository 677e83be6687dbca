/* Unit tests for agents/cassette: a recording becomes a cassette that the
 * replay backend reads. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agents/cassette.h"
#include "agents/llm.h"
#include "common/config.h"
#include "common/fs.h"
#include "common/rmtree.h"

static char dir[] = "/tmp/tnd-test-cassette-XXXXXX";
static char partial[256], out[256];

static int setup(void **state)
{
    (void)state;
    if (!mkdtemp(dir))
        return -1;
    snprintf(partial, sizeof(partial), "%s/rec.json.partial", dir);
    snprintf(out, sizeof(out), "%s/rec.json", dir);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    return tnd_fs_rmtree(dir);
}

static void write_partial(const char *text)
{
    assert_int_equal(tnd_fs_write(partial, text, strlen(text)), 0);
}

/* Replay call (role, attempt, call) from out; the answer, or NULL. */
static char *replay(const char *role, int attempt, int call)
{
    tnd_config *cfg = tnd_config_defaults();
    tnd_llm_answer a;
    tnd_prompt p;
    tnd_llm *llm;
    char *text = NULL;

    cfg->coder.llm.provider = TND_PROVIDER_REPLAY;
    free(cfg->coder.llm.cassette);
    cfg->coder.llm.cassette = strdup(out);
    llm = tnd_llm_new(&cfg->coder.llm);
    assert_non_null(llm);
    memset(&p, 0, sizeof(p));
    p.system = "s";
    p.user = "u";
    p.role = role;
    p.attempt = attempt;
    p.call = call;
    if (tnd_llm_complete(&a, llm, &p) == 0) {
        text = strdup(a.text);
        assert_int_equal(a.usage.estimated, false);
        tnd_llm_answer_clear(&a);
    }
    tnd_llm_destroy(&llm);
    tnd_config_destroy(&cfg);
    return text;
}

static void recording_plays_back(void **state)
{
    size_t count, skipped;
    char *text;

    (void)state;
    write_partial(
        "{\"role\":\"reviewer\",\"attempt\":1,\"call\":1,\"answer\":\"r1\","
        "\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":6}}\n"
        "{\"role\":\"coder\",\"attempt\":1,\"call\":1,\"answer\":\"c1\","
        "\"usage\":{\"prompt_tokens\":1,\"completion_tokens\":2}}\n"
        "{\"role\":\"coder\",\"attempt\":2,\"call\":1,\"answer\":\"first\","
        "\"usage\":{\"prompt_tokens\":1,\"completion_tokens\":2}}\n"
        "{\"role\":\"coder\",\"attempt\":2,\"call\":1,\"answer\":\"retried\","
        "\"usage\":{\"prompt_tokens\":3,\"completion_tokens\":4}}\n"
        "{\"role\":\"coder\",\"attempt\":3,\"ca");
    assert_int_equal(tnd_cassette_from_recording(partial, out, "a test", NULL,
                                                 &count, &skipped),
                     0);
    assert_int_equal(count, 3);
    assert_int_equal(skipped, 1); /* the torn last line */

    text = replay("coder", 1, 1);
    assert_string_equal(text, "c1");
    free(text);
    text = replay("reviewer", 1, 1);
    assert_string_equal(text, "r1");
    free(text);
    /* the later line of a retried request wins */
    text = replay("coder", 2, 1);
    assert_string_equal(text, "retried");
    free(text);
    assert_null(replay("coder", 3, 1));
}

/* A recorded line marked as cut at max_tokens makes an exchange that
 * replays as cut; the others carry no mark. */
static void a_cut_answer_stays_cut(void **state)
{
    tnd_config *cfg = tnd_config_defaults();
    tnd_prompt p = {"s", "u", "coder", "t", 1, 1};
    tnd_llm_answer a;
    tnd_llm *llm;
    char *doc = NULL;

    (void)state;
    write_partial(
        "{\"role\":\"coder\",\"attempt\":1,\"call\":1,\"answer\":\"half\","
        "\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":6},"
        "\"estimated\":false,\"truncated\":true}\n"
        "{\"role\":\"coder\",\"attempt\":1,\"call\":2,\"answer\":\"whole\","
        "\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":6},"
        "\"estimated\":false}\n");
    assert_int_equal(
        tnd_cassette_from_recording(partial, out, "", NULL, NULL, NULL), 0);
    assert_int_equal(tnd_fs_read(&doc, NULL, out, 1 << 20), 0);
    assert_non_null(strstr(doc, "\"truncated\": true"));
    assert_null(strstr(strstr(doc, "\"truncated\"") + strlen("\"truncated\""),
                       "truncated")); /* the other answer has none */
    free(doc);
    cfg->coder.llm.provider = TND_PROVIDER_REPLAY;
    free(cfg->coder.llm.cassette);
    cfg->coder.llm.cassette = strdup(out);
    assert_non_null(llm = tnd_llm_new(&cfg->coder.llm));
    assert_int_equal(tnd_llm_complete(&a, llm, &p), 0);
    assert_string_equal(a.text, "half");
    assert_true(a.truncated);
    tnd_llm_answer_clear(&a);
    p.call = 2;
    assert_int_equal(tnd_llm_complete(&a, llm, &p), 0);
    assert_false(a.truncated);
    tnd_llm_answer_clear(&a);
    tnd_llm_destroy(&llm);
    tnd_config_destroy(&cfg);
}

/* Counts tandem estimated (the API reported none) replay as estimated:
 * the cassette dropped the mark, and a replay of a `command` model's run
 * reported as the API's what the live run marked as estimates. */
static void estimated_tokens_stay_estimated(void **state)
{
    tnd_config *cfg = tnd_config_defaults();
    tnd_prompt p = {"s", "u", "coder", "t", 1, 1};
    tnd_llm_answer a;
    tnd_llm *llm;

    (void)state;
    write_partial(
        "{\"role\":\"coder\",\"attempt\":1,\"call\":1,\"answer\":\"guess\","
        "\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":6},"
        "\"estimated\":true}\n"
        "{\"role\":\"coder\",\"attempt\":1,\"call\":2,\"answer\":\"told\","
        "\"usage\":{\"prompt_tokens\":5,\"completion_tokens\":6},"
        "\"estimated\":false}\n");
    assert_int_equal(
        tnd_cassette_from_recording(partial, out, "", NULL, NULL, NULL), 0);
    cfg->coder.llm.provider = TND_PROVIDER_REPLAY;
    free(cfg->coder.llm.cassette);
    cfg->coder.llm.cassette = strdup(out);
    assert_non_null(llm = tnd_llm_new(&cfg->coder.llm));
    assert_int_equal(tnd_llm_complete(&a, llm, &p), 0);
    assert_string_equal(a.text, "guess");
    assert_int_equal(a.usage.prompt_tokens, 5);
    assert_int_equal(a.usage.completion_tokens, 6);
    assert_true(a.usage.estimated);
    tnd_llm_answer_clear(&a);
    p.call = 2;
    assert_int_equal(tnd_llm_complete(&a, llm, &p), 0);
    assert_false(a.usage.estimated);
    tnd_llm_answer_clear(&a);
    tnd_llm_destroy(&llm);
    tnd_config_destroy(&cfg);
}

/* Each role's first exchange expects the run's task: a replay for
 * another task played this one's answers and approved their change. */
static void the_first_prompts_expect_the_task(void **state)
{
    tnd_config *cfg = tnd_config_defaults();
    tnd_prompt p = {"s", "## Task\n\nfix it\n\nmore", "coder", "t", 1, 1};
    tnd_llm_answer a;
    tnd_llm *llm;

    (void)state;
    write_partial(
        "{\"role\":\"coder\",\"attempt\":1,\"call\":1,\"answer\":\"c1\"}\n"
        "{\"role\":\"coder\",\"attempt\":2,\"call\":1,\"answer\":\"c2\"}\n");
    assert_int_equal(
        tnd_cassette_from_recording(partial, out, "", "fix it", NULL, NULL), 0);
    cfg->coder.llm.provider = TND_PROVIDER_REPLAY;
    free(cfg->coder.llm.cassette);
    cfg->coder.llm.cassette = strdup(out);
    assert_non_null(llm = tnd_llm_new(&cfg->coder.llm));
    assert_int_equal(tnd_llm_complete(&a, llm, &p), 0);
    assert_string_equal(a.text, "c1");
    tnd_llm_answer_clear(&a);
    p.user = "## Task\n\nfix it all\n\n";
    assert_int_not_equal(tnd_llm_complete(&a, llm, &p), 0);
    assert_non_null(strstr(tnd_error_last(), "should contain"));
    p.attempt = 2; /* the later ones expect nothing */
    assert_int_equal(tnd_llm_complete(&a, llm, &p), 0);
    assert_string_equal(a.text, "c2");
    tnd_llm_answer_clear(&a);
    tnd_llm_destroy(&llm);
    tnd_config_destroy(&cfg);
}

static void exchanges_are_in_the_order_the_run_asked(void **state)
{
    char *doc = NULL;
    const char *c1, *r1, *c2;

    (void)state;
    write_partial(
        "{\"role\":\"coder\",\"attempt\":2,\"call\":1,\"answer\":\"C2\"}\n"
        "{\"role\":\"reviewer\",\"attempt\":1,\"call\":1,\"answer\":\"R1\"}\n"
        "{\"role\":\"coder\",\"attempt\":1,\"call\":1,\"answer\":\"C1\"}\n");
    assert_int_equal(
        tnd_cassette_from_recording(partial, out, NULL, NULL, NULL, NULL), 0);
    assert_int_equal(tnd_fs_read(&doc, NULL, out, 1 << 20), 0);
    c1 = strstr(doc, "\"C1\"");
    r1 = strstr(doc, "\"R1\"");
    c2 = strstr(doc, "\"C2\"");
    assert_non_null(c1);
    assert_non_null(r1);
    assert_non_null(c2);
    assert_true(c1 < r1 && r1 < c2);
    assert_non_null(strstr(doc, "\"tandem_cassette\": 1"));
    free(doc);
}

static void no_recording_gives_an_empty_cassette(void **state)
{
    size_t count = 99;

    (void)state;
    unlink(partial);
    assert_int_equal(
        tnd_cassette_from_recording(partial, out, "empty", NULL, &count, NULL),
        0);
    assert_int_equal(count, 0);
    assert_null(replay("coder", 1, 1));
}

static void an_unwritable_cassette_is_an_error(void **state)
{
    char bad[300];

    (void)state;
    write_partial("{\"role\":\"coder\",\"attempt\":1,\"call\":1,"
                  "\"answer\":\"x\"}\n");
    snprintf(bad, sizeof(bad), "%s/missing/dir/rec.json", dir);
    assert_int_equal(
        tnd_cassette_from_recording(partial, bad, NULL, NULL, NULL, NULL), -1);
    assert_non_null(strstr(tnd_error_last(), "missing/dir"));
}

/* Found by tests/fuzz/fuzz_recording: a line whose role is not UTF-8
 * (13 bytes 0xC8) was taken, and the cassette written from it held the
 * role as 13 U+FFFD, 39 bytes, past the 32 the replay reads: the whole
 * cassette would not open. tandem writes recordings as UTF-8 JSON, so
 * such a line is damage, skipped like a torn one. */
#define FUZZED_LINE                                                       \
    "{\"role\":\"\xc8\xc8\xc8\xc8\xc8\xc8\xc8\xc8\xc8\xc8\xc8\xc8\xc8\"," \
    "\"attempt\":2,\"call\":1,\"answer\":\"\"}"

static void a_line_that_is_not_utf8_is_skipped(void **state)
{
    size_t count, skipped;
    char *text;

    (void)state;
    write_partial(
        "{\"role\":\"coder\",\"attempt\":1,\"call\":1,"
        "\"answer\":\"c1\",\"usage\":{\"prompt_tokens\":1}}\n"
        "{\"role\":\"reviewer\",\"attempt\":1,\"call\":1,"
        "\"answer\":\"caf\xe9\"}\n" /* Latin-1 */
        "{\"role\":\"coder\",\"attempt\":2,\"call\":1,"
        "\"answer\":\"c2\",\"usage\":{\"prompt_tokens\":1}}\n" FUZZED_LINE
        "\n");
    assert_int_equal(
        tnd_cassette_from_recording(partial, out, NULL, NULL, &count, &skipped),
        0);
    assert_int_equal(count, 2);
    assert_int_equal(skipped, 2);
    text = replay("coder", 1, 1);
    assert_string_equal(text, "c1");
    free(text);
    text = replay("coder", 2, 1);
    assert_string_equal(text, "c2");
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(recording_plays_back),
        cmocka_unit_test(a_cut_answer_stays_cut),
        cmocka_unit_test(estimated_tokens_stay_estimated),
        cmocka_unit_test(the_first_prompts_expect_the_task),
        cmocka_unit_test(exchanges_are_in_the_order_the_run_asked),
        cmocka_unit_test(no_recording_gives_an_empty_cassette),
        cmocka_unit_test(an_unwritable_cassette_is_an_error),
        cmocka_unit_test(a_line_that_is_not_utf8_is_skipped),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
