/* agents.yaml parsed from memory, for the unit tests of common/config
 * and the sources it is split into (test_config.c, test_config_check.c,
 * test_config_skills.c, test_config_command.c): text parsed as
 * "agents.yaml" based in /base, so each error's "FILE:LINE:COL: message"
 * is compared whole; a table of texts and the errors they get; lists
 * and an llm section's defaults compared; and a scratch directory for
 * the cases that write files (config_setup and config_teardown, a
 * group's). Included by the test files that need it; static, so each
 * has its own copy. */
#ifndef TND_TEST_CONFIG_TEXT_H
#define TND_TEST_CONFIG_TEXT_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agents/llm.h"
#include "common/config.h"
#include "common/error.h"

static char tmpdir[] = "/tmp/tnd-test-config-XXXXXX";

/* text parsed as agents.yaml in /base; must succeed. */
static inline tnd_config *parse_ok(const char *text)
{
    tnd_config *cfg = (tnd_config *)1;
    int rc = tnd_config_parse(&cfg, text, strlen(text), "agents.yaml", "/base");

    if (rc != 0)
        fail_msg("unexpected error: %s", tnd_error_last());
    assert_non_null(cfg);
    return cfg;
}

/* text parsed as agents.yaml; must fail. The message, borrowed. */
static inline const char *parse_err(const char *text)
{
    tnd_config *cfg = (tnd_config *)1;

    assert_int_equal(
        tnd_config_parse(&cfg, text, strlen(text), "agents.yaml", "/base"),
        TND_ECONFIG);
    assert_null(cfg);
    return tnd_error_last();
}

static inline void assert_argv(char **argv, const char *const *expected)
{
    size_t i;

    assert_non_null(argv);
    for (i = 0; expected[i]; i++) {
        assert_non_null(argv[i]);
        assert_string_equal(argv[i], expected[i]);
    }
    assert_null(argv[i]);
}

#define ARGV(...) ((const char *const[]){__VA_ARGS__, NULL})

static inline void assert_llm_defaults(const tnd_llm_config *llm)
{
    assert_string_equal(tnd_provider_name(llm->provider), "openai");
    assert_string_equal(llm->model, "gpt-4o-mini");
    /* empty: the provider's own, resolved when used */
    assert_string_equal(llm->base_url, "");
    assert_string_equal(llm->api_key_env, "");
    assert_string_equal(tnd_llm_base_url(llm), "https://api.openai.com/v1");
    assert_string_equal(tnd_llm_key_env(llm), "OPENAI_API_KEY");
    assert_true(llm->stream);
    assert_null(llm->headers[0]);
    assert_null(llm->command.argv);
    assert_string_equal(llm->cassette, "");
    assert_true(llm->temperature == 0.2);
    assert_int_equal(llm->max_tokens, 4096);
    assert_int_equal(llm->timeout_s, 300);
    assert_int_equal(llm->max_retries, 3);
}

/* One case of a table of bad files: a text and the whole error it gets. */
typedef struct bad_case {
    const char *text;
    const char *error; /* the whole of tnd_error_last() */
} bad_case;

/* Each of the n cases gets its error, whole. */
static inline void assert_bad_cases(const bad_case *cases, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const char *got = parse_err(cases[i].text);
        if (strcmp(got, cases[i].error) != 0)
            fail_msg("case %zu:\n%s\nexpected:\n%s\ngot:\n%s", i, cases[i].text,
                     cases[i].error, got);
    }
}

static inline int config_setup(void **state)
{
    (void)state;
    return mkdtemp(tmpdir) ? 0 : -1;
}

static inline int config_teardown(void **state)
{
    (void)state;
    return rmdir(tmpdir);
}

#endif
