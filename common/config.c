/* agents.yaml loading and checking (see config.h).
 *
 * The schema is a set of field tables (common/yamlwalk.h) that the
 * document is walked against; this file holds them, the built-in
 * defaults and the public API (the checks between keys that one field
 * cannot make are config_check.c's). Every problem is reported with the line
 * and column libyaml recorded for the node. */
#include "common/config.h"
#include "common/config_skills.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/fs.h"
#include "common/names.h"
#include "common/sha256.h"
#include "common/str.h"
#include "common/xalloc.h"
#include "common/yamlwalk.h"

#define CONFIG_MAX_BYTES (1024 * 1024)

#define OFF(type, member) offsetof(type, member)

/* The names of the choices, in their enums' order (config.h). The
 * providers' are TND_PROVIDERS too, which messages show; what each
 * provider means (its API, base URL, key variable) is the agents'
 * business: agents/llm.c and its backends. */
static const char *const provider_names[] = {"replay", "openai", "anthropic",
                                             "ollama", "command"};
static const char *const escalate_names[] = {"auto", "tty", "queue", "never"};
static const char *const critique_names[] = {"always", "on_trigger"};
static const char *const quorum_names[] = {"all", "majority"};
static const tnd_names providers = TND_NAMES("provider", provider_names);
static const tnd_names escalate_modes =
    TND_NAMES("escalate mode", escalate_names);
static const tnd_names critique_modes =
    TND_NAMES("critique mode", critique_names);
static const tnd_names quorum_rules = TND_NAMES("quorum rule", quorum_names);
const char *tnd_provider_name(tnd_provider p)
{
    return tnd_names_name(&providers, (int)p);
}

int tnd_provider_parse(tnd_provider *out, const char *name)
{
    return tnd_names_parse((int *)out, &providers, name);
}

const char *tnd_escalate_mode_name(tnd_escalate_mode m)
{
    return tnd_names_name(&escalate_modes, (int)m);
}

const char *tnd_critique_mode_name(tnd_critique_mode m)
{
    return tnd_names_name(&critique_modes, (int)m);
}

const char *tnd_quorum_rule_name(tnd_quorum_rule q)
{
    return tnd_names_name(&quorum_rules, (int)q);
}

/* The fields whose values are tandem's own types (see below). */
static tnd_yw_set_fn set_models;

static const tnd_yw_field llm_fields[] = {
    {"provider", TND_YW_ENUM, OFF(tnd_llm_config, provider), 0, 0, NULL,
     &providers, NULL},
    {"model", TND_YW_STRING, OFF(tnd_llm_config, model), 0, 0, NULL, NULL,
     NULL},
    {"base_url", TND_YW_STRING, OFF(tnd_llm_config, base_url), 0, 0, NULL, NULL,
     NULL},
    {"api_key_env", TND_YW_STRING, OFF(tnd_llm_config, api_key_env), 0, 0, NULL,
     NULL, NULL},
    {"cassette", TND_YW_PATH, OFF(tnd_llm_config, cassette), 0, 0, NULL, NULL,
     NULL},
    {"command", TND_YW_CUSTOM, OFF(tnd_llm_config, command), 0, 0, NULL, NULL,
     tnd_config_set_program},
    {"headers", TND_YW_HEADERS, OFF(tnd_llm_config, headers), 0, 0, NULL, NULL,
     NULL},
    {"stream", TND_YW_BOOL, OFF(tnd_llm_config, stream), 0, 0, NULL, NULL,
     NULL},
    {"temperature", TND_YW_DOUBLE, OFF(tnd_llm_config, temperature), 0, 2, NULL,
     NULL, NULL},
    {"max_tokens", TND_YW_INT, OFF(tnd_llm_config, max_tokens), 1, 1000000,
     NULL, NULL, NULL},
    {"timeout_s", TND_YW_INT, OFF(tnd_llm_config, timeout_s), 1, 86400, NULL,
     NULL, NULL},
    {"max_retries", TND_YW_INT, OFF(tnd_llm_config, max_retries), 0, 20, NULL,
     NULL, NULL},
    {NULL, 0, 0, 0, 0, NULL, NULL, NULL},
};

static const tnd_yw_field agent_fields[] = {
    {"count", TND_YW_INT, OFF(tnd_agent_config, count), 0, 16, NULL, NULL,
     NULL},
    {"threads", TND_YW_INT, OFF(tnd_agent_config, threads), 1, 64, NULL, NULL,
     NULL},
    {"command", TND_YW_CUSTOM, OFF(tnd_agent_config, program), 0, 0, NULL, NULL,
     tnd_config_set_program},
    {"llm", TND_YW_SECTION, OFF(tnd_agent_config, llm), 0, 0, NULL, llm_fields,
     NULL},
    {"skills", TND_YW_NAMES, OFF(tnd_agent_config, skills), 0, 0, NULL, NULL,
     NULL},
    {"context_max_kb", TND_YW_KB, OFF(tnd_agent_config, context_max_bytes), 1,
     16384, NULL, NULL, NULL},
    {"context_include", TND_YW_NAMES, OFF(tnd_agent_config, context_include), 0,
     0, NULL, NULL, NULL},
    {"map_max_tokens", TND_YW_INT, OFF(tnd_agent_config, map_max_tokens), 256,
     65536, NULL, NULL, NULL},
    {"quorum", TND_YW_ENUM, OFF(tnd_agent_config, quorum), 0, 0, NULL,
     &quorum_rules, NULL},
    {"skills_at_once", TND_YW_INT, OFF(tnd_agent_config, skills_at_once), 0,
     1024, NULL, NULL, NULL},
    {"models", TND_YW_CUSTOM, OFF(tnd_agent_config, models), 0, 0, NULL, NULL,
     set_models},
    {NULL, 0, 0, 0, 0, NULL, NULL, NULL},
};

static const tnd_yw_field agents_fields[] = {
    {"coder", TND_YW_SECTION, OFF(tnd_config, coder), 0, 0, NULL, agent_fields,
     NULL},
    {"reviewer", TND_YW_SECTION, OFF(tnd_config, reviewer), 0, 0, NULL,
     agent_fields, NULL},
    {NULL, 0, 0, 0, 0, NULL, NULL, NULL},
};

static const tnd_yw_field gate_fields[] = {
    {"max_iterations", TND_YW_INT, OFF(tnd_gate_config, max_iterations), 1, 50,
     NULL, NULL, NULL},
    {"confidence_threshold", TND_YW_DOUBLE,
     OFF(tnd_gate_config, confidence_threshold), 0, 1, NULL, NULL, NULL},
    {"human_review_below", TND_YW_DOUBLE,
     OFF(tnd_gate_config, human_review_below), 0, 1, NULL, NULL, NULL},
    {"persistent_failure_threshold", TND_YW_INT,
     OFF(tnd_gate_config, persistent_failure_threshold), 1, 50, NULL, NULL,
     NULL},
    {"max_tokens", TND_YW_LONG, OFF(tnd_gate_config, max_tokens), 0, 1e12, NULL,
     NULL, NULL},
    {"max_llm_calls", TND_YW_INT, OFF(tnd_gate_config, max_llm_calls), 0,
     100000, NULL, NULL, NULL},
    {"max_wall_s", TND_YW_INT, OFF(tnd_gate_config, max_wall_s), 0, 604800,
     NULL, NULL, NULL},
    {"escalate", TND_YW_ENUM, OFF(tnd_gate_config, escalate), 0, 0, NULL,
     &escalate_modes, NULL},
    {"risk_paths", TND_YW_NAMES, OFF(tnd_gate_config, risk_paths), 0, 0, NULL,
     NULL, NULL},
    {"check_paths", TND_YW_NAMES, OFF(tnd_gate_config, check_paths), 0, 0, NULL,
     NULL, NULL},
    {"critique", TND_YW_ENUM, OFF(tnd_gate_config, critique), 0, 0, NULL,
     &critique_modes, NULL},
    {"critique_diff_lines", TND_YW_INT,
     OFF(tnd_gate_config, critique_diff_lines), 0, 1000000, NULL, NULL, NULL},
    {"critique_every", TND_YW_INT, OFF(tnd_gate_config, critique_every), 0,
     100000, NULL, NULL, NULL},
    {"baseline", TND_YW_BOOL, OFF(tnd_gate_config, baseline), 0, 0, NULL, NULL,
     NULL},
    {"baseline_reuse_s", TND_YW_INT, OFF(tnd_gate_config, baseline_reuse_s), 0,
     86400, NULL, NULL, NULL},
    {NULL, 0, 0, 0, 0, NULL, NULL, NULL},
};

static const tnd_yw_field workspace_fields[] = {
    {"include_untracked", TND_YW_BOOL,
     OFF(tnd_workspace_config, include_untracked), 0, 0, NULL, NULL, NULL},
    {"incremental", TND_YW_BOOL, OFF(tnd_workspace_config, incremental), 0, 0,
     NULL, NULL, NULL},
    {NULL, 0, 0, 0, 0, NULL, NULL, NULL},
};

static const tnd_yw_field orchestrator_fields[] = {
    {"endpoint", TND_YW_STRING, OFF(tnd_orchestrator_config, endpoint), 0, 0,
     NULL, NULL, NULL},
    {"heartbeat_ms", TND_YW_INT, OFF(tnd_orchestrator_config, heartbeat_ms), 50,
     60000, NULL, NULL, NULL},
    {"liveness", TND_YW_INT, OFF(tnd_orchestrator_config, liveness), 2, 100,
     NULL, NULL, NULL},
    {"request_timeout_s", TND_YW_INT,
     OFF(tnd_orchestrator_config, request_timeout_s), 0, 604800, NULL, NULL,
     NULL},
    {"workspace_max_mb", TND_YW_MB,
     OFF(tnd_orchestrator_config, workspace_max_bytes), 1, 1048576, NULL, NULL,
     NULL},
    {"curve_key", TND_YW_PATH, OFF(tnd_orchestrator_config, curve_key), 0, 0,
     NULL, NULL, NULL},
    {"authorized_keys", TND_YW_PATH,
     OFF(tnd_orchestrator_config, authorized_keys), 0, 0, NULL, NULL, NULL},
    {"insecure", TND_YW_BOOL, OFF(tnd_orchestrator_config, insecure), 0, 0,
     NULL, NULL, NULL},
    {NULL, 0, 0, 0, 0, NULL, NULL, NULL},
};

/* Top level; "skills" and "version" are handled by hand. */
static const tnd_yw_field top_fields[] = {
    {"gate", TND_YW_SECTION, OFF(tnd_config, gate), 0, 0, NULL, gate_fields,
     NULL},
    {"orchestrator", TND_YW_SECTION, OFF(tnd_config, orchestrator), 0, 0, NULL,
     orchestrator_fields, NULL},
    {"workspace", TND_YW_SECTION, OFF(tnd_config, workspace), 0, 0, NULL,
     workspace_fields, NULL},
    {"agents", TND_YW_SECTION, 0, 0, 0, NULL, agents_fields, NULL},
    {NULL, 0, 0, 0, 0, NULL, NULL, NULL},
};

static const char *const top_extra[] = {"version", "skills", NULL};

/* ---- defaults ---------------------------------------------------------- */

static void llm_defaults(tnd_llm_config *llm)
{
    llm->provider = TND_PROVIDER_OPENAI;
    llm->model = tnd_xstrdup("gpt-4o-mini");
    llm->base_url = tnd_xstrdup("");
    llm->api_key_env = tnd_xstrdup("");
    llm->cassette = tnd_xstrdup("");
    llm->headers = tnd_xcalloc(1, sizeof(char *));
    llm->stream = true;
    llm->temperature = 0.2;
    llm->max_tokens = 4096;
    llm->timeout_s = 300;
    llm->max_retries = 3;
}

static void llm_free(tnd_llm_config *llm)
{
    free(llm->model);
    free(llm->base_url);
    free(llm->api_key_env);
    free(llm->cassette);
    tnd_config_command_free(&llm->command);
    tnd_str_list_free(&llm->headers);
    memset(llm, 0, sizeof(*llm));
}
/* The files that define a project's checks, by the usual names: a
 * change to one (a test recipe made to echo success, a test whose
 * assertions were deleted) is critiqued under gate.critique on_trigger,
 * whatever the skills say. */
static char **default_check_paths(void)
{
    static const char *const names[] = {"**/test_*",
                                        "**/*_test.*",
                                        "**/*_tests.*",
                                        "**/*.test.*",
                                        "**/*.spec.*",
                                        "**/test/**",
                                        "**/tests/**",
                                        "**/spec/**",
                                        "**/__tests__/**",
                                        "**/Makefile",
                                        "**/makefile",
                                        "**/GNUmakefile",
                                        "**/*.mk",
                                        "**/CMakeLists.txt",
                                        "**/*.cmake",
                                        "**/meson.build",
                                        "configure",
                                        "configure.ac",
                                        "**/Makefile.am",
                                        "**/package.json",
                                        "**/pyproject.toml",
                                        "**/setup.py",
                                        "**/setup.cfg",
                                        "**/tox.ini",
                                        "**/pytest.ini",
                                        "**/conftest.py",
                                        "**/noxfile.py",
                                        "**/Cargo.toml",
                                        "**/build.rs",
                                        "**/go.mod",
                                        "**/*.gradle",
                                        "**/*.gradle.kts",
                                        "**/pom.xml",
                                        "**/Rakefile",
                                        "**/Gemfile",
                                        "**/justfile",
                                        NULL};
    size_t n = sizeof(names) / sizeof(names[0]);
    char **list = tnd_xcalloc(n, sizeof(char *));

    for (size_t i = 0; names[i]; i++)
        list[i] = tnd_xstrdup(names[i]);
    return list;
}

tnd_config *tnd_config_defaults(void)
{
    tnd_config *cfg = tnd_xcalloc(1, sizeof(*cfg));

    cfg->dir = tnd_xstrdup(".");
    cfg->gate.max_iterations = 3;
    cfg->gate.confidence_threshold = 0.8;
    cfg->gate.human_review_below = 0.7;
    cfg->gate.persistent_failure_threshold = 2;
    cfg->gate.escalate = TND_ESCALATE_AUTO;
    cfg->gate.risk_paths = tnd_xcalloc(1, sizeof(char *));
    cfg->gate.check_paths = default_check_paths();
    cfg->gate.critique = TND_CRITIQUE_ALWAYS;
    cfg->gate.critique_diff_lines = 200;
    cfg->gate.baseline = true;
    cfg->gate.baseline_reuse_s = 600;
    cfg->orchestrator.endpoint = tnd_xstrdup("");
    cfg->orchestrator.curve_key = tnd_xstrdup("");
    cfg->orchestrator.authorized_keys = tnd_xstrdup("");
    cfg->orchestrator.heartbeat_ms = 1000;
    cfg->orchestrator.liveness = 5;
    cfg->orchestrator.request_timeout_s = 0; /* follow the work */
    cfg->orchestrator.workspace_max_bytes = (size_t)1024 * 1024 * 1024;
    cfg->coder.count = 1;
    cfg->coder.threads = 8;
    llm_defaults(&cfg->coder.llm);
    cfg->coder.skills = tnd_xcalloc(1, sizeof(char *));
    cfg->coder.context_max_bytes = 128 * 1024;
    cfg->coder.context_include = tnd_xcalloc(1, sizeof(char *));
    cfg->coder.map_max_tokens = 2048;
    cfg->reviewer.count = 1;
    cfg->reviewer.threads = 8;
    llm_defaults(&cfg->reviewer.llm);
    cfg->reviewer.skills = tnd_xcalloc(3, sizeof(char *));
    cfg->reviewer.skills[0] = tnd_xstrdup("build");
    cfg->reviewer.skills[1] = tnd_xstrdup("test");
    cfg->reviewer.context_max_bytes = 64 * 1024;
    cfg->reviewer.context_include = tnd_xcalloc(1, sizeof(char *));
    cfg->reviewer.map_max_tokens = 2048;
    cfg->nskills = 2;
    cfg->skills = tnd_xcalloc(2, sizeof(*cfg->skills));
    tnd_config_skill_defaults(&cfg->skills[0], "build", "make");
    tnd_config_skill_defaults(&cfg->skills[1], "test", "make test");
    return cfg;
}

static void agent_free(tnd_agent_config *a)
{
    tnd_config_command_free(&a->program);
    llm_free(&a->llm);
    tnd_str_list_free(&a->skills);
    tnd_str_list_free(&a->context_include);
    for (size_t i = 0; i < a->nmodels; i++)
        llm_free(&a->models[i]);
    free(a->models);
}

int tnd_config_quorum(const tnd_config *self)
{
    if (self->reviewer.count > 1)
        return self->reviewer.count;
    if (self->reviewer.count == 0 && self->reviewer.nmodels > 1)
        return (int)self->reviewer.nmodels;
    return 1;
}

const tnd_llm_config *tnd_config_member_llm(const tnd_config *self, int member)
{
    if (member >= 1 && (size_t)member <= self->reviewer.nmodels)
        return &self->reviewer.models[member - 1];
    return &self->reviewer.llm;
}

void tnd_config_destroy(tnd_config **self_p)
{
    tnd_config *cfg = self_p ? *self_p : NULL;

    if (!cfg)
        return;
    free(cfg->path);
    free(cfg->dir);
    free(cfg->orchestrator.endpoint);
    free(cfg->orchestrator.curve_key);
    free(cfg->orchestrator.authorized_keys);
    tnd_str_list_free(&cfg->gate.risk_paths);
    tnd_str_list_free(&cfg->gate.check_paths);
    tnd_str_list_free(&cfg->key_envs);
    agent_free(&cfg->coder);
    agent_free(&cfg->reviewer);
    tnd_config_skills_free(cfg);
    free(cfg);
    *self_p = NULL;
}

/* ---- custom fields ------------------------------------------------------ */

/* models: [ {provider, model, ...}, ... ]: one llm section per reviewer
 * quorum member, each starting from the built-in defaults. It sets
 * nmodels too, so it fills the whole agent, not only f's member. */
static void set_models(tnd_yw *w, const tnd_yw_field *f, const char *path,
                       const yaml_node_t *seq, char *base)
{
    tnd_agent_config *agent = (tnd_agent_config *)base;
    size_t n = 0;

    (void)f;
    if (tnd_yw_is_null(seq))
        return;
    if (seq->type != YAML_SEQUENCE_NODE) {
        tnd_yw_report(w, seq, "%s must be a list of llm sections, got %s", path,
                      tnd_yw_kind(seq));
        return;
    }
    for (yaml_node_item_t *it = seq->data.sequence.items.start;
         it < seq->data.sequence.items.top; it++)
        n++;
    if (n > 16) {
        tnd_yw_report(w, seq, "%s has %zu entries; a quorum has at most 16",
                      path, n);
        return;
    }
    for (size_t i = 0; i < agent->nmodels; i++)
        llm_free(&agent->models[i]);
    free(agent->models);
    agent->models = tnd_xcalloc(n + 1, sizeof(tnd_llm_config));
    agent->nmodels = 0;
    for (yaml_node_item_t *it = seq->data.sequence.items.start;
         it < seq->data.sequence.items.top; it++) {
        const yaml_node_t *item = tnd_yw_node(w, *it);
        char *sub = tnd_xasprintf("%s[%zu]", path, agent->nmodels);
        tnd_llm_config *m = &agent->models[agent->nmodels++];
        llm_defaults(m);
        tnd_yw_walk(w, sub, item, llm_fields, NULL, (char *)m);
        free(sub);
    }
}

/* The key variables the file names, once each (see key_envs). */
static void collect_key_envs(tnd_config *cfg)
{
    const tnd_llm_config *llms[2] = {&cfg->coder.llm, &cfg->reviewer.llm};
    size_t n = 0, max = 2 + cfg->reviewer.nmodels;

    tnd_str_list_free(&cfg->key_envs);
    cfg->key_envs = tnd_xcalloc(max + 1, sizeof(char *));
    for (size_t i = 0; i < max; i++) {
        const tnd_llm_config *llm =
            i < 2 ? llms[i] : &cfg->reviewer.models[i - 2];
        if (llm->api_key_env && *llm->api_key_env &&
            !tnd_str_list_has((const char *const *)cfg->key_envs,
                              llm->api_key_env))
            cfg->key_envs[n++] = tnd_xstrdup(llm->api_key_env);
    }
}

int tnd_config_parse(tnd_config **out, const char *text, size_t len,
                     const char *name, const char *dir)
{
    tnd_yw *w = NULL;
    tnd_config *cfg;
    const yaml_node_t *root, *v;
    int error;

    *out = NULL;
    if ((error = tnd_yw_parse(&w, text, len, name, dir)) < 0)
        return error;
    cfg = tnd_config_defaults();
    free(cfg->dir);
    cfg->dir = tnd_xstrdup(dir);
    root = tnd_yw_root(w);
    if (root && !tnd_yw_is_null(root)) {
        tnd_yw_walk(w, "", root, top_fields, top_extra, (char *)cfg);
        if ((v = tnd_yw_lookup(w, root, "version")) != NULL &&
            (v->type != YAML_SCALAR_NODE || strcmp(tnd_yw_scalar(v), "1") != 0))
            tnd_yw_report(
                w, v, "version must be 1 (this tandem reads version 1 files)");
        if ((v = tnd_yw_lookup(w, root, "skills")) != NULL)
            tnd_config_walk_skills(w, cfg, v);
        if (!tnd_yw_stopped(w))
            tnd_config_cross_check(w, cfg, root);
    }
    collect_key_envs(cfg);
    if ((error = tnd_yw_finish(w)) < 0)
        tnd_config_destroy(&cfg);
    else
        *out = cfg;
    tnd_yw_destroy(&w);
    return error;
}

int tnd_config_load(tnd_config **out, const char *path)
{
    char *text = NULL, *dir = NULL, *abs = NULL;
    size_t len;
    int error;

    *out = NULL;
    error = tnd_fs_read(&text, &len, path, CONFIG_MAX_BYTES);
    if (error == TND_ENOTFOUND)
        return tnd_error_config("config file %s does not exist (give "
                                "--config FILE, or create agents.yaml)",
                                path);
    if (error < 0) /* a FIFO, a directory, a device, too large, unreadable */
        return tnd_error_config("%s; the config must be a regular file of "
                                "at most %d MiB",
                                tnd_error_last(), CONFIG_MAX_BYTES >> 20);
    abs = tnd_fs_realpath(path);
    dir = tnd_fs_dirname(abs ? abs : path);
    error = tnd_config_parse(out, text, len, path, dir);
    if (error == 0) {
        (*out)->path = abs;
        abs = NULL;
        tnd_sha256_hex((*out)->digest, text, len);
    }
    free(abs);
    free(dir);
    free(text);
    return error;
}

bool tnd_config_unchanged(const char *path, const char *digest)
{
    char *text = NULL, hex[TND_SHA256_HEX + 1];
    size_t len;

    if (!*digest || tnd_fs_read(&text, &len, path, CONFIG_MAX_BYTES) < 0)
        return false;
    tnd_sha256_hex(hex, text, len);
    free(text);
    return strcmp(hex, digest) == 0;
}

int tnd_config_override_llm(tnd_config *self, const char *spec,
                            const char *base_url)
{
    const char *colon = spec ? strchr(spec, ':') : NULL;
    tnd_provider provider = TND_PROVIDER_OPENAI;
    const char *model = NULL;
    tnd_llm_config *llms[] = {&self->coder.llm, &self->reviewer.llm};

    if (spec) {
        char *name = colon ? tnd_xstrndup(spec, (size_t)(colon - spec))
                           : tnd_xstrdup(spec);
        int rc = tnd_provider_parse(&provider, name);
        free(name);
        if (rc < 0 && !colon) {
            /* "--llm gpt-4o-mini": a model without its provider */
            char *known = tnd_names_list(&providers);
            tnd_error_config("--llm %s: give PROVIDER:MODEL, e.g. "
                             "openai:%s (providers: %s)",
                             spec, *spec ? spec : "gpt-4o-mini", known);
            free(known);
            return TND_ECONFIG;
        }
        if (rc < 0) {
            tnd_error_prefix("--llm %s", spec);
            return TND_ECONFIG;
        }
        model = colon ? colon + 1 : NULL;
        if (model && !*model)
            return tnd_error_config("--llm %s: the model after ':' is empty",
                                    spec);
    }
    if (base_url && !tnd_str_starts_with(base_url, "http://") &&
        !tnd_str_starts_with(base_url, "https://"))
        return tnd_error_config(
            "--base-url %s must start with http:// or https://", base_url);
    for (size_t i = 0; i < 2 + self->reviewer.nmodels; i++) {
        tnd_llm_config *llm = i < 2 ? llms[i] : &self->reviewer.models[i - 2];
        if (spec && provider != llm->provider) {
            /* another provider: the config's URL and key variable were
             * for the old one, so fall back to the new one's own */
            llm->provider = provider;
            free(llm->base_url);
            llm->base_url = tnd_xstrdup("");
            free(llm->api_key_env);
            llm->api_key_env = tnd_xstrdup("");
        }
        if (model) {
            free(llm->model);
            llm->model = tnd_xstrdup(model);
        }
        if (base_url) {
            free(llm->base_url);
            llm->base_url = tnd_xstrdup(base_url);
        }
    }
    return 0;
}

int tnd_config_check_name(const char *dir)
{
    char *yaml = tnd_fs_join(dir, "agents.yaml");
    char *yml = tnd_fs_join(dir, "agents.yml");
    int rc = 0;

    if (!tnd_fs_exists(yaml) && tnd_fs_exists(yml))
        rc = tnd_error_config("%s is not read: tandem reads agents.yaml. "
                              "Rename it, or give --config %s",
                              yml, yml);
    free(yaml);
    free(yml);
    return rc;
}
