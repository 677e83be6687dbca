/* agents.yaml's checks between keys (see config_skills.h): what one
 * field's table cannot check, such as a model that names a key variable
 * and a URL with a host, a rule that needs a quorum, one threshold not
 * above another; and each model's settings against the files it names
 * (tnd_llm_config_check, config.h). */
#include "common/config.h"
#include "common/config_skills.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/glob.h"
#include "common/str.h"
#include "common/yamlwalk.h"

/* Every item of the list under map[key] must be a well-formed glob. */
void tnd_config_check_globs(tnd_yw *w, const char *path, const yaml_node_t *map,
                            const char *key)
{
    const yaml_node_t *list = tnd_yw_lookup(w, map, key);
    size_t i = 0;

    if (!list || list->type != YAML_SEQUENCE_NODE)
        return;
    for (yaml_node_item_t *it = list->data.sequence.items.start;
         it < list->data.sequence.items.top; it++, i++) {
        const yaml_node_t *item = tnd_yw_node(w, *it);
        if (item && item->type == YAML_SCALAR_NODE &&
            tnd_glob_check(tnd_yw_scalar(item)) < 0) {
            char *shown = tnd_yw_quoted(item);
            tnd_yw_report(w, item, "%s.%s[%zu] is not a valid pattern %s: %s",
                          path, key, i, shown, tnd_error_last());
            free(shown);
        }
    }
}

static bool env_name(const char *s)
{
    if (!isalpha((unsigned char)*s) && *s != '_')
        return false;
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && *s != '_')
            return false;
    return true;
}

/* An http:// or https:// URL with something after the scheme before any
 * '/' (the scheme itself is checked where the file is read). */
static bool url_has_host(const char *url)
{
    const char *p = strstr(url, "://");

    return !p || (p[3] && p[3] != '/' && p[3] != '?' && p[3] != '#');
}

int tnd_llm_config_check(const tnd_llm_config *llm, const char *label,
                         bool files)
{
    int rc;

    if (llm->provider == TND_PROVIDER_REPLAY && !*llm->cassette)
        return tnd_error_config("%s: provider replay needs a cassette (set "
                                "%s.cassette to the file of recorded answers)",
                                label, label);
    if (llm->provider == TND_PROVIDER_COMMAND &&
        (!llm->command.argv || !llm->command.argv[0]))
        return tnd_error_config(
            "%s: provider command needs a command (set %s.command to the "
            "program that reads the prompt on stdin and writes the answer on "
            "stdout: a list [program, arg, ...] or a shell string)",
            label, label);
    if ((llm->provider == TND_PROVIDER_OPENAI ||
         llm->provider == TND_PROVIDER_ANTHROPIC ||
         llm->provider == TND_PROVIDER_OLLAMA) &&
        (!llm->model || !*llm->model))
        return tnd_error_config("%s.model is empty: name the model the "
                                "server runs (tandem doctor lists what it "
                                "offers)",
                                label);
    if (llm->api_key_env && *llm->api_key_env && !env_name(llm->api_key_env))
        /* not echoed: what is pasted here is most often the key */
        return tnd_error_config("%s.api_key_env is not the name of an "
                                "environment variable (letters, digits and "
                                "'_', not starting with a digit; its value is "
                                "not shown, as it may be a key itself): put "
                                "the key in a variable, e.g. export "
                                "OPENAI_API_KEY=..., and its name here",
                                label);
    if (llm->base_url && *llm->base_url && !url_has_host(llm->base_url))
        return tnd_error_config("%s.base_url: \"%s\" names no host; give "
                                "one, e.g. http://127.0.0.1:11434",
                                label, llm->base_url);
    /* a FIFO would have the agent wait on it for ever; say so before any
     * agent starts, as a configuration error */
    if (files && llm->provider == TND_PROVIDER_REPLAY &&
        (rc = tnd_fs_check_regular(llm->cassette)) < 0)
        return rc == TND_ENOTFOUND
                   ? tnd_error_config("%s.cassette: %s does not exist", label,
                                      llm->cassette)
                   : tnd_error_config("%s.cassette: %s", label,
                                      tnd_error_last());
    return 0;
}

int tnd_config_check_llms(const tnd_config *self, bool files)
{
    char label[64];

    if (tnd_llm_config_check(&self->coder.llm, "agents.coder.llm", files) < 0 ||
        tnd_llm_config_check(&self->reviewer.llm, "agents.reviewer.llm",
                             files) < 0)
        return TND_ECONFIG;
    for (size_t i = 0; i < self->reviewer.nmodels; i++) {
        snprintf(label, sizeof(label), "agents.reviewer.models[%zu]", i);
        if (tnd_llm_config_check(&self->reviewer.models[i], label, files) < 0)
            return TND_ECONFIG;
    }
    return 0;
}

/* The checks one llm section needs beyond its keys' types. */
static void check_llm(tnd_yw *w, const tnd_llm_config *llm, const char *label,
                      const yaml_node_t *where, const yaml_node_t *root)
{
    const yaml_node_t *url = tnd_yw_lookup(w, where, "base_url");

    if (!where)
        where = root;
    if (!url)
        url = where;
    if (tnd_llm_config_check(llm, label, false) < 0)
        tnd_yw_report(w, where, "%s", tnd_error_last());
    if (*llm->base_url && !tnd_str_starts_with(llm->base_url, "http://") &&
        !tnd_str_starts_with(llm->base_url, "https://"))
        tnd_yw_report(w, url,
                      "%s.base_url must start with http:// or https://, got "
                      "\"%s\"",
                      label, llm->base_url);
}

/* Checks that need the whole file: skill references, provider needs.
 * Each points at the value to change: the list item, the base_url, the
 * threshold; else at the section (reviewer.skills at its default names
 * the skills section, which lacks them). */
void tnd_config_cross_check(tnd_yw *w, tnd_config *cfg, const yaml_node_t *root)
{
    const yaml_node_t *agents = tnd_yw_lookup(w, root, "agents");
    const yaml_node_t *rev = tnd_yw_lookup(w, agents, "reviewer");
    const yaml_node_t *names = tnd_yw_lookup(w, rev, "skills");
    const yaml_node_t *gate = tnd_yw_lookup(w, root, "gate"), *at;
    const char *roles[] = {"coder", "reviewer"};
    tnd_agent_config *agent[] = {&cfg->coder, &cfg->reviewer};
    size_t nnames = 0;

    while (cfg->reviewer.skills && cfg->reviewer.skills[nnames])
        nnames++;
    /* the rest would never run; and the checks below are quadratic */
    if (nnames > TND_CONFIG_MAX_SKILLS)
        tnd_yw_report(w, names ? names : root,
                      "agents.reviewer.skills lists %zu skills; at most %d "
                      "run (list fewer, or combine checks in one command)",
                      nnames, TND_CONFIG_MAX_SKILLS);
    for (size_t i = 0; nnames <= TND_CONFIG_MAX_SKILLS && i < nnames; i++) {
        const char *name = cfg->reviewer.skills[i];
        if (!tnd_config_skill(cfg, name)) {
            tnd_buf known;
            tnd_buf_init(&known, 4096);
            for (size_t j = 0; j < cfg->nskills; j++)
                tnd_buf_printf(&known, "%s%s", j ? ", " : "",
                               cfg->skills[j].name);
            tnd_yw_report(
                w,
                names ? tnd_yw_item_named(w, names, name)
                      : tnd_yw_lookup(w, root, "skills"),
                "agents.reviewer.skills names '%s', which is not defined "
                "under skills (defined: %s)",
                name, known.len ? tnd_buf_str(&known) : "none");
            tnd_buf_free(&known);
        }
    }
    if (nnames <= TND_CONFIG_MAX_SKILLS)
        tnd_config_check_after(w, cfg, root);
    for (int i = 0; i < 2; i++) {
        const yaml_node_t *a = tnd_yw_lookup(w, agents, roles[i]);
        const yaml_node_t *models = tnd_yw_lookup(w, a, "models");
        char label[64];
        snprintf(label, sizeof(label), "agents.%s.llm", roles[i]);
        check_llm(w, &agent[i]->llm, label, tnd_yw_lookup(w, a, "llm"), root);
        if (i == 0 && agent[i]->nmodels)
            tnd_yw_report(
                w, models,
                "agents.coder.models: only the reviewer has quorum "
                "members; give the coder's model under agents.coder.llm");
        if (i == 0 && tnd_yw_key_node(w, a, "quorum"))
            tnd_yw_report(
                w, tnd_yw_key_node(w, a, "quorum"),
                "agents.coder.quorum: only the reviewer has a quorum");
        if (i == 1 && tnd_yw_key_node(w, a, "context_include"))
            tnd_yw_report(
                w, tnd_yw_key_node(w, a, "context_include"),
                "agents.reviewer.context_include: only the coder is sent "
                "repository files; set agents.coder.context_include");
        if (i == 1 && tnd_yw_key_node(w, a, "map_max_tokens"))
            tnd_yw_report(
                w, tnd_yw_key_node(w, a, "map_max_tokens"),
                "agents.reviewer.map_max_tokens: only the coder is sent "
                "a repository map; set agents.coder.map_max_tokens");
        if (i == 1 && agent[i]->nmodels && agent[i]->count == 1)
            tnd_yw_report(
                w, models,
                "agents.reviewer.models lists the models of a quorum, but "
                "agents.reviewer.count is 1 (one reviewer, using "
                "agents.reviewer.llm); raise count to %zu, or set count 0 "
                "for remote members",
                agent[i]->nmodels > 1 ? agent[i]->nmodels : (size_t)2);
        tnd_config_check_globs(w, i ? "agents.reviewer" : "agents.coder", a,
                               "context_include");
        for (size_t m = 0; i == 1 && m < agent[i]->nmodels; m++) {
            snprintf(label, sizeof(label), "agents.reviewer.models[%zu]", m);
            check_llm(w, &agent[i]->models[m], label,
                      tnd_yw_item_at(w, models, m), root);
        }
    }
    tnd_config_check_globs(w, "gate", gate, "risk_paths");
    tnd_config_check_globs(w, "gate", gate, "check_paths");
    if (!(at = tnd_yw_lookup(w, gate, "human_review_below")))
        at = tnd_yw_lookup(w, gate, "confidence_threshold");
    if (cfg->gate.human_review_below > cfg->gate.confidence_threshold)
        tnd_yw_report(w, at ? at : gate,
                      "gate.human_review_below (%g) must not be above "
                      "gate.confidence_threshold (%g)",
                      cfg->gate.human_review_below,
                      cfg->gate.confidence_threshold);
}
