/* Fuzz common/config and common/yamlwalk: tnd_config_parse on the text
 * of an agents.yaml (tnd_config_load reads the file, then this).
 *
 * A config that loads answers every question the programs ask of it
 * (the quorum, each member's model, skills by name, their order, the
 * URLs of the models); one that does not is TND_ECONFIG (exit 2), never
 * another failure, with a report of one "agents.yaml:LINE:COL: ..." per
 * line. */
#include "tests/fuzz/fuzz.h"

#include "agents/llm.h"
#include "common/config.h"
#include "common/error.h"

static void ask(const tnd_config *cfg)
{
    int quorum = tnd_config_quorum(cfg);
    char **names = cfg->reviewer.skills;
    size_t n = 0;

    FUZZ_CHECK(quorum >= 1);
    for (int m = 1; m <= quorum; m++) {
        const tnd_llm_config *llm = tnd_config_member_llm(cfg, m);
        char *url = tnd_llm_url(llm, "/chat/completions");
        FUZZ_CHECK(tnd_provider_name(llm->provider) && llm->model);
        (void)tnd_llm_key_env(llm);
        (void)tnd_llm_header_set(llm->headers, "authorization");
        free(url);
    }
    for (size_t i = 0; i < cfg->nskills; i++)
        FUZZ_CHECK(tnd_config_skill(cfg, cfg->skills[i].name) != NULL);
    while (names && names[n])
        n++;
    for (size_t i = 0; i < n; i++) {
        FUZZ_CHECK(tnd_config_skill(cfg, names[i]) != NULL);
        for (size_t j = 0; j < n; j++)
            (void)tnd_config_skill_waits(cfg, i, j);
    }
}

/* The report people read: one problem per line, each line starting with
 * the file's name ("agents.yaml:14:5: ..."), so no value or key quoted
 * in a message may bring a line break of its own. */
static void report(const char *text)
{
    const char *line = text;

    FUZZ_CHECK(*text);
    for (;;) {
        const char *nl = strchr(line, '\n');
        FUZZ_CHECK(strncmp(line, "agents.yaml:", 12) == 0);
        if (!nl)
            break;
        line = nl + 1;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tnd_config *cfg = NULL;
    int error;

    error = tnd_config_parse(&cfg, (const char *)data, size, "agents.yaml",
                             "/nonexistent/fuzz");
    if (error == 0) {
        ask(cfg);
        tnd_config_destroy(&cfg);
    } else {
        FUZZ_CHECK(error == TND_ECONFIG && cfg == NULL);
        report(tnd_error_last());
    }
    return 0;
}
