/* Unit tests for agents/probe: the checks tandem doctor runs that need no
 * network. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "agents/probe.h"
#include "common/config.h"
#include "common/str.h"
#include "common/xalloc.h"

static tnd_config *config_for(const char *provider, const char *base_url)
{
    tnd_config *cfg = tnd_config_defaults();

    assert_int_equal(tnd_config_override_llm(cfg, provider, base_url), 0);
    return cfg;
}

static void key_present_missing_or_not_needed(void **state)
{
    tnd_config *cfg;
    char detail[256];

    (void)state;
    unsetenv("OPENAI_API_KEY");
    cfg = config_for("openai:gpt-x", NULL);
    assert_false(tnd_probe_key(detail, sizeof(detail), &cfg->coder.llm));
    assert_string_equal(detail, "$OPENAI_API_KEY is not set: export it, or "
                                "name another variable in llm.api_key_env");
    setenv("OPENAI_API_KEY", "sk-probe-secret-value-1234", 1);
    assert_true(tnd_probe_key(detail, sizeof(detail), &cfg->coder.llm));
    assert_string_equal(detail, "$OPENAI_API_KEY is set");
    assert_null(strstr(detail, "sk-probe"));
    unsetenv("OPENAI_API_KEY");
    tnd_config_destroy(&cfg);

    /* a local server needs no key */
    cfg = config_for("openai:local", "http://127.0.0.1:8080/v1");
    assert_true(tnd_probe_key(detail, sizeof(detail), &cfg->coder.llm));
    assert_non_null(strstr(detail, "fine for a local server"));
    tnd_config_destroy(&cfg);

    /* a header of the config's carries the credential: run goes ahead,
     * and doctor said FAIL */
    cfg = config_for("openai:gpt-x", NULL);
    tnd_str_list_free(&cfg->coder.llm.headers);
    cfg->coder.llm.headers = tnd_xcalloc(2, sizeof(char *));
    cfg->coder.llm.headers[0] = tnd_xstrdup("Authorization: Bearer gw-token");
    assert_true(tnd_probe_key(detail, sizeof(detail), &cfg->coder.llm));
    assert_non_null(strstr(detail, "the config's headers carry the "
                                   "credential"));
    tnd_config_destroy(&cfg);

    /* anthropic's variable; ollama has none */
    unsetenv("ANTHROPIC_API_KEY");
    cfg = config_for("anthropic:claude-x", NULL);
    assert_false(tnd_probe_key(detail, sizeof(detail), &cfg->coder.llm));
    assert_non_null(strstr(detail, "$ANTHROPIC_API_KEY is not set"));
    tnd_config_destroy(&cfg);
    cfg = config_for("ollama:qwen", NULL);
    assert_true(tnd_probe_key(detail, sizeof(detail), &cfg->coder.llm));
    assert_string_equal(detail, "no key needed for ollama");
    tnd_config_destroy(&cfg);
}

static void programs_are_found_on_path(void **state)
{
    char found[512];

    (void)state;
    assert_true(tnd_probe_program(found, sizeof(found), "sh"));
    assert_non_null(strstr(found, "/sh"));
    assert_true(tnd_probe_program(found, sizeof(found), "/bin/sh"));
    assert_false(tnd_probe_program(NULL, 0, "no-such-program-for-tandem"));
    assert_false(tnd_probe_program(NULL, 0, "/no/such/program"));
}

static void a_missing_cassette_fails_the_endpoint(void **state)
{
    tnd_config *cfg = config_for("replay", NULL);
    char detail[512];

    (void)state;
    free(cfg->coder.llm.cassette);
    cfg->coder.llm.cassette = strdup("/no/such/cassette.json");
    assert_int_equal(
        tnd_probe_endpoint(detail, sizeof(detail), &cfg->coder.llm, 1000), -1);
    assert_non_null(strstr(detail, "/no/such/cassette.json"));
    tnd_config_destroy(&cfg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(key_present_missing_or_not_needed),
        cmocka_unit_test(programs_are_found_on_path),
        cmocka_unit_test(a_missing_cassette_fails_the_endpoint),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
