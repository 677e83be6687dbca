/* agents.yaml loading and checking (see config.h).
 *
 * libyaml builds the document tree; a small schema (tables of fields with
 * a type, a range and an offset into the struct they fill) walks it. The
 * walk only follows the schema, never the document generically, so alias
 * bombs cannot make it expensive, and every problem is reported with the
 * line and column libyaml recorded for the node. */
#include "common/config.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "common/buf.h"
#include "common/fs.h"
#include "common/str.h"
#include "common/xalloc.h"
#include "skills/glob.h"

#define CONFIG_MAX_BYTES (1024 * 1024)
#define ERRORS_MAX       20
/* The report ends up in tnd_error_last(), which keeps 2 KiB: stop while
 * the lines so far and the "too many errors" line still fit whole. */
#define ERRORS_TEXT_MAX 2000

typedef enum ftype {
    F_INT,
    F_LONG,
    F_DOUBLE,
    F_BOOL,
    F_STRING,
    F_PATH,    /* string; relative paths resolved against the file's dir */
    F_KB,      /* integer KiB stored as size_t bytes */
    F_MB,      /* integer MiB stored as size_t bytes */
    F_NAMES,   /* sequence of strings, stored NULL-terminated */
    F_COMMAND, /* string (shell) or sequence (argv) */
    F_MODELS,  /* sequence of llm sections (reviewer quorum members) */
    F_HEADERS, /* mapping of HTTP header names to values, stored as
                  NULL-terminated "Name: value" strings */
    F_SECTION, /* nested mapping described by sub */
} ftype;

typedef struct field {
    const char *key;
    ftype type;
    size_t offset;
    double min, max;         /* F_INT, F_DOUBLE, F_KB, F_MB */
    const char *choices;     /* F_STRING: "a|b|c" */
    const struct field *sub; /* F_SECTION: NULL-key-terminated */
} field;

typedef struct loader {
    const char *name;
    const char *dir;
    yaml_document_t *doc;
    tnd_buf errors;
    int nerrors;
} loader;

#define OFF(type, member) offsetof(type, member)

static const field llm_fields[] = {
    {"provider", F_STRING, OFF(tnd_llm_config, provider), 0, 0,
     "replay|openai|anthropic|ollama|command", NULL},
    {"model", F_STRING, OFF(tnd_llm_config, model), 0, 0, NULL, NULL},
    {"base_url", F_STRING, OFF(tnd_llm_config, base_url), 0, 0, NULL, NULL},
    {"api_key_env", F_STRING, OFF(tnd_llm_config, api_key_env), 0, 0, NULL,
     NULL},
    {"cassette", F_PATH, OFF(tnd_llm_config, cassette), 0, 0, NULL, NULL},
    {"command", F_COMMAND, OFF(tnd_llm_config, command), 0, 0, NULL, NULL},
    {"headers", F_HEADERS, OFF(tnd_llm_config, headers), 0, 0, NULL, NULL},
    {"stream", F_BOOL, OFF(tnd_llm_config, stream), 0, 0, NULL, NULL},
    {"temperature", F_DOUBLE, OFF(tnd_llm_config, temperature), 0, 2, NULL,
     NULL},
    {"max_tokens", F_INT, OFF(tnd_llm_config, max_tokens), 1, 1000000, NULL,
     NULL},
    {"timeout_s", F_INT, OFF(tnd_llm_config, timeout_s), 1, 86400, NULL, NULL},
    {"max_retries", F_INT, OFF(tnd_llm_config, max_retries), 0, 20, NULL, NULL},
    {NULL, 0, 0, 0, 0, NULL, NULL},
};

static const field agent_fields[] = {
    {"count", F_INT, OFF(tnd_agent_config, count), 0, 16, NULL, NULL},
    {"command", F_COMMAND, OFF(tnd_agent_config, program), 0, 0, NULL, NULL},
    {"llm", F_SECTION, OFF(tnd_agent_config, llm), 0, 0, NULL, llm_fields},
    {"skills", F_NAMES, OFF(tnd_agent_config, skills), 0, 0, NULL, NULL},
    {"context_max_kb", F_KB, OFF(tnd_agent_config, context_max_bytes), 1, 16384,
     NULL, NULL},
    {"context_include", F_NAMES, OFF(tnd_agent_config, context_include), 0, 0,
     NULL, NULL},
    {"quorum", F_STRING, OFF(tnd_agent_config, quorum), 0, 0, "all|majority",
     NULL},
    {"models", F_MODELS, OFF(tnd_agent_config, models), 0, 0, NULL, NULL},
    {NULL, 0, 0, 0, 0, NULL, NULL},
};

static const field agents_fields[] = {
    {"coder", F_SECTION, OFF(tnd_config, coder), 0, 0, NULL, agent_fields},
    {"reviewer", F_SECTION, OFF(tnd_config, reviewer), 0, 0, NULL,
     agent_fields},
    {NULL, 0, 0, 0, 0, NULL, NULL},
};

static const field gate_fields[] = {
    {"max_iterations", F_INT, OFF(tnd_gate_config, max_iterations), 1, 50, NULL,
     NULL},
    {"confidence_threshold", F_DOUBLE,
     OFF(tnd_gate_config, confidence_threshold), 0, 1, NULL, NULL},
    {"human_review_below", F_DOUBLE, OFF(tnd_gate_config, human_review_below),
     0, 1, NULL, NULL},
    {"persistent_failure_threshold", F_INT,
     OFF(tnd_gate_config, persistent_failure_threshold), 1, 50, NULL, NULL},
    {"max_tokens", F_LONG, OFF(tnd_gate_config, max_tokens), 0, 1e12, NULL,
     NULL},
    {"max_llm_calls", F_INT, OFF(tnd_gate_config, max_llm_calls), 0, 100000,
     NULL, NULL},
    {"max_wall_s", F_INT, OFF(tnd_gate_config, max_wall_s), 0, 604800, NULL,
     NULL},
    {"escalate", F_STRING, OFF(tnd_gate_config, escalate), 0, 0,
     "auto|tty|queue|never", NULL},
    {"risk_paths", F_NAMES, OFF(tnd_gate_config, risk_paths), 0, 0, NULL, NULL},
    {"critique", F_STRING, OFF(tnd_gate_config, critique), 0, 0,
     "always|on_trigger", NULL},
    {"critique_diff_lines", F_INT, OFF(tnd_gate_config, critique_diff_lines), 0,
     1000000, NULL, NULL},
    {"critique_every", F_INT, OFF(tnd_gate_config, critique_every), 0, 100000,
     NULL, NULL},
    {NULL, 0, 0, 0, 0, NULL, NULL},
};

static const field orchestrator_fields[] = {
    {"endpoint", F_STRING, OFF(tnd_orchestrator_config, endpoint), 0, 0, NULL,
     NULL},
    {"heartbeat_ms", F_INT, OFF(tnd_orchestrator_config, heartbeat_ms), 50,
     60000, NULL, NULL},
    {"liveness", F_INT, OFF(tnd_orchestrator_config, liveness), 2, 100, NULL,
     NULL},
    {"request_timeout_s", F_INT,
     OFF(tnd_orchestrator_config, request_timeout_s), 1, 604800, NULL, NULL},
    {"workspace_max_mb", F_MB,
     OFF(tnd_orchestrator_config, workspace_max_bytes), 1, 1048576, NULL, NULL},
    {NULL, 0, 0, 0, 0, NULL, NULL},
};

static const field limits_fields[] = {
    {"cpu_s", F_LONG, OFF(tnd_skill_limits, cpu_s), 0, 604800, NULL, NULL},
    {"memory_mb", F_MB, OFF(tnd_skill_limits, memory_bytes), 0, 1048576, NULL,
     NULL},
    {"file_mb", F_MB, OFF(tnd_skill_limits, file_bytes), 0, 1048576, NULL,
     NULL},
    {"processes", F_LONG, OFF(tnd_skill_limits, processes), 0, 1000000, NULL,
     NULL},
    {NULL, 0, 0, 0, 0, NULL, NULL},
};

static const field skill_fields[] = {
    {"command", F_COMMAND, OFF(tnd_skill_config, command), 0, 0, NULL, NULL},
    {"required", F_BOOL, OFF(tnd_skill_config, required), 0, 0, NULL, NULL},
    {"timeout_s", F_INT, OFF(tnd_skill_config, timeout_s), 1, 86400, NULL,
     NULL},
    {"output_max_kb", F_KB, OFF(tnd_skill_config, output_cap), 1, 1024, NULL,
     NULL},
    {"builtin", F_STRING, OFF(tnd_skill_config, builtin), 0, 0, "git|docs",
     NULL},
    {"paths", F_NAMES, OFF(tnd_skill_config, paths), 0, 0, NULL, NULL},
    {"after", F_NAMES, OFF(tnd_skill_config, after), 0, 0, NULL, NULL},
    {"limits", F_SECTION, OFF(tnd_skill_config, limits), 0, 0, NULL,
     limits_fields},
    {"forbid", F_NAMES, OFF(tnd_skill_config, forbid), 0, 0, NULL, NULL},
    {"max_changed_lines", F_INT, OFF(tnd_skill_config, max_changed_lines), 0,
     100000000, NULL, NULL},
    {"max_file_kb", F_KB, OFF(tnd_skill_config, max_file_bytes), 0, 1048576,
     NULL, NULL},
    {"public", F_NAMES, OFF(tnd_skill_config, public_paths), 0, 0, NULL, NULL},
    {"docs", F_NAMES, OFF(tnd_skill_config, docs_paths), 0, 0, NULL, NULL},
    {NULL, 0, 0, 0, 0, NULL, NULL},
};

/* Top level; "skills" and "version" are handled by hand. */
static const field top_fields[] = {
    {"gate", F_SECTION, OFF(tnd_config, gate), 0, 0, NULL, gate_fields},
    {"orchestrator", F_SECTION, OFF(tnd_config, orchestrator), 0, 0, NULL,
     orchestrator_fields},
    {"agents", F_SECTION, 0, 0, 0, NULL, agents_fields},
    {NULL, 0, 0, 0, 0, NULL, NULL},
};

static const char *const top_extra[] = {"version", "skills", NULL};

/* ---- defaults ---------------------------------------------------------- */

static void command_set_shell(tnd_command *c, const char *line)
{
    c->argv = tnd_xcalloc(4, sizeof(char *));
    c->argv[0] = tnd_xstrdup("/bin/sh");
    c->argv[1] = tnd_xstrdup("-c");
    c->argv[2] = tnd_xstrdup(line);
    c->display = tnd_xstrdup(line);
}

static void command_free(tnd_command *c)
{
    if (c->argv)
        for (char **p = c->argv; *p; p++)
            free(*p);
    free(c->argv);
    free(c->display);
    c->argv = NULL;
    c->display = NULL;
}

static void names_free(char ***names)
{
    if (*names)
        for (char **p = *names; *p; p++)
            free(*p);
    free(*names);
    *names = NULL;
}

static void llm_defaults(tnd_llm_config *llm)
{
    llm->provider = tnd_xstrdup("openai");
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
    free(llm->provider);
    free(llm->model);
    free(llm->base_url);
    free(llm->api_key_env);
    free(llm->cassette);
    command_free(&llm->command);
    names_free(&llm->headers);
    memset(llm, 0, sizeof(*llm));
}

const char *tnd_llm_base_url(const tnd_llm_config *llm)
{
    if (*llm->base_url)
        return llm->base_url;
    if (strcmp(llm->provider, "openai") == 0)
        return "https://api.openai.com/v1";
    if (strcmp(llm->provider, "anthropic") == 0)
        return "https://api.anthropic.com";
    if (strcmp(llm->provider, "ollama") == 0)
        return "http://localhost:11434";
    return "";
}

const char *tnd_llm_key_env(const tnd_llm_config *llm)
{
    if (*llm->api_key_env)
        return llm->api_key_env;
    if (strcmp(llm->provider, "openai") == 0)
        return "OPENAI_API_KEY";
    if (strcmp(llm->provider, "anthropic") == 0)
        return "ANTHROPIC_API_KEY";
    return "";
}

static void skill_defaults(tnd_skill_config *s, const char *name,
                           const char *line)
{
    memset(s, 0, sizeof(*s));
    s->name = tnd_xstrdup(name);
    if (line)
        command_set_shell(&s->command, line);
    s->required = true;
    s->timeout_s = 600;
    s->output_cap = 64 * 1024;
    s->builtin = tnd_xstrdup("");
    s->paths = tnd_xcalloc(1, sizeof(char *));
    s->forbid = tnd_xcalloc(1, sizeof(char *));
    s->max_file_bytes = 1024 * 1024;
    s->public_paths = tnd_xcalloc(1, sizeof(char *));
    s->docs_paths = tnd_xcalloc(1, sizeof(char *));
}

static void skill_free(tnd_skill_config *s)
{
    free(s->name);
    free(s->builtin);
    command_free(&s->command);
    names_free(&s->paths);
    names_free(&s->after);
    names_free(&s->forbid);
    names_free(&s->public_paths);
    names_free(&s->docs_paths);
}

static void skills_free(tnd_config *cfg)
{
    for (size_t i = 0; i < cfg->nskills; i++)
        skill_free(&cfg->skills[i]);
    free(cfg->skills);
    cfg->skills = NULL;
    cfg->nskills = 0;
}

tnd_config *tnd_config_defaults(void)
{
    tnd_config *cfg = tnd_xcalloc(1, sizeof(*cfg));

    cfg->dir = tnd_xstrdup(".");
    cfg->gate.max_iterations = 3;
    cfg->gate.confidence_threshold = 0.8;
    cfg->gate.human_review_below = 0.7;
    cfg->gate.persistent_failure_threshold = 2;
    cfg->gate.escalate = tnd_xstrdup("auto");
    cfg->gate.risk_paths = tnd_xcalloc(1, sizeof(char *));
    cfg->gate.critique = tnd_xstrdup("always");
    cfg->gate.critique_diff_lines = 200;
    cfg->orchestrator.endpoint = tnd_xstrdup("");
    cfg->orchestrator.heartbeat_ms = 1000;
    cfg->orchestrator.liveness = 5;
    cfg->orchestrator.request_timeout_s = 1800;
    cfg->orchestrator.workspace_max_bytes = (size_t)1024 * 1024 * 1024;
    cfg->coder.count = 1;
    llm_defaults(&cfg->coder.llm);
    cfg->coder.skills = tnd_xcalloc(1, sizeof(char *));
    cfg->coder.context_max_bytes = 64 * 1024;
    cfg->coder.context_include = tnd_xcalloc(1, sizeof(char *));
    cfg->coder.quorum = tnd_xstrdup("all");
    cfg->reviewer.count = 1;
    llm_defaults(&cfg->reviewer.llm);
    cfg->reviewer.skills = tnd_xcalloc(3, sizeof(char *));
    cfg->reviewer.skills[0] = tnd_xstrdup("build");
    cfg->reviewer.skills[1] = tnd_xstrdup("test");
    cfg->reviewer.context_max_bytes = 64 * 1024;
    cfg->reviewer.context_include = tnd_xcalloc(1, sizeof(char *));
    cfg->reviewer.quorum = tnd_xstrdup("all");
    cfg->nskills = 2;
    cfg->skills = tnd_xcalloc(2, sizeof(*cfg->skills));
    skill_defaults(&cfg->skills[0], "build", "make");
    skill_defaults(&cfg->skills[1], "test", "make test");
    return cfg;
}

static void agent_free(tnd_agent_config *a)
{
    command_free(&a->program);
    llm_free(&a->llm);
    names_free(&a->skills);
    names_free(&a->context_include);
    free(a->quorum);
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
    free(cfg->gate.escalate);
    free(cfg->gate.critique);
    names_free(&cfg->gate.risk_paths);
    agent_free(&cfg->coder);
    agent_free(&cfg->reviewer);
    skills_free(cfg);
    free(cfg);
    *self_p = NULL;
}

const tnd_skill_config *tnd_config_skill(const tnd_config *self,
                                         const char *name)
{
    for (size_t i = 0; i < self->nskills; i++)
        if (strcmp(self->skills[i].name, name) == 0)
            return &self->skills[i];
    return NULL;
}

/* ---- reporting ---------------------------------------------------------- */

static void report(loader *L, const yaml_node_t *node, const char *fmt, ...)
    TND_PRINTF(3, 4);

static void report(loader *L, const yaml_node_t *node, const char *fmt, ...)
{
    char msg[1024];
    size_t before = L->errors.len;
    va_list ap;

    if (L->nerrors > ERRORS_MAX)
        return;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (node)
        tnd_buf_printf(&L->errors, "%s:%lu:%lu: %s\n", L->name,
                       (unsigned long)node->start_mark.line + 1,
                       (unsigned long)node->start_mark.column + 1, msg);
    else
        tnd_buf_printf(&L->errors, "%s: %s\n", L->name, msg);
    if (++L->nerrors > ERRORS_MAX ||
        L->errors.len + strlen(L->name) + 40 > ERRORS_TEXT_MAX) {
        /* this one is over the limit: say so instead */
        L->errors.len = before;
        L->errors.data[before] = '\0';
        tnd_buf_printf(&L->errors, "%s: too many errors; stopping here\n",
                       L->name);
        L->nerrors = ERRORS_MAX + 1;
    }
}

static const char *node_kind(const yaml_node_t *node)
{
    switch (node->type) {
    case YAML_MAPPING_NODE:
        return "a mapping";
    case YAML_SEQUENCE_NODE:
        return "a list";
    default:
        return "a value";
    }
}

static const char *scalar(const yaml_node_t *node)
{
    return (const char *)node->data.scalar.value;
}

static bool is_null(const yaml_node_t *node)
{
    const char *s;

    if (node->type != YAML_SCALAR_NODE ||
        node->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
        return false;
    s = scalar(node);
    return !*s || strcmp(s, "~") == 0 || strcmp(s, "null") == 0;
}

/* Levenshtein distance, for "did you mean". */
static size_t distance(const char *a, const char *b)
{
    size_t n = strlen(a), m = strlen(b), prev[64], cur[64];

    if (n >= 63 || m >= 63)
        return 99;
    for (size_t j = 0; j <= m; j++)
        prev[j] = j;
    for (size_t i = 1; i <= n; i++) {
        cur[0] = i;
        for (size_t j = 1; j <= m; j++) {
            size_t sub = prev[j - 1] + (a[i - 1] != b[j - 1]);
            size_t del = prev[j] + 1, ins = cur[j - 1] + 1;
            cur[j] =
                sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
        }
        memcpy(prev, cur, (m + 1) * sizeof(size_t));
    }
    return prev[m];
}

static void unknown_key(loader *L, const yaml_node_t *key, const char *where,
                        const field *fields, const char *const *extra)
{
    const char *k = scalar(key), *best = NULL;
    size_t best_d = 3;
    tnd_buf known;

    tnd_buf_init(&known, 4096);
    for (const field *f = fields; f && f->key; f++) {
        size_t d = distance(k, f->key);
        if (d < best_d) {
            best_d = d;
            best = f->key;
        }
        tnd_buf_printf(&known, "%s%s", known.len ? ", " : "", f->key);
    }
    for (const char *const *e = extra; e && *e; e++) {
        size_t d = distance(k, *e);
        if (d < best_d) {
            best_d = d;
            best = *e;
        }
        tnd_buf_printf(&known, "%s%s", known.len ? ", " : "", *e);
    }
    if (best)
        report(L, key, "unknown key '%s' in %s (did you mean '%s'?)", k, where,
               best);
    else
        report(L, key, "unknown key '%s' in %s (known keys: %s)", k, where,
               tnd_buf_str(&known));
    tnd_buf_free(&known);
}

/* ---- values ------------------------------------------------------------- */

static bool parse_long(const char *s, long *out)
{
    char *end;

    errno = 0;
    *out = strtol(s, &end, 10);
    return *s && !*end && errno == 0;
}

static bool parse_double(const char *s, double *out)
{
    char *end;

    errno = 0;
    *out = strtod(s, &end);
    return *s && !*end && errno == 0 && isfinite(*out);
}

static char *quoted(const yaml_node_t *node)
{
    char *p = tnd_str_printable(scalar(node), 60);
    char *q = tnd_xasprintf("\"%s\"", p);
    free(p);
    return q;
}

static void set_number(loader *L, const field *f, const char *path,
                       const yaml_node_t *v, char *base)
{
    char *shown;

    if (v->type != YAML_SCALAR_NODE || is_null(v)) {
        report(L, v, "%s must be %s %.15g..%.15g, got %s", path,
               f->type == F_DOUBLE ? "a number" : "an integer", f->min, f->max,
               v->type == YAML_SCALAR_NODE ? "nothing" : node_kind(v));
        return;
    }
    shown = quoted(v);
    if (f->type == F_DOUBLE) {
        double d;
        if (!parse_double(scalar(v), &d) || d < f->min || d > f->max)
            report(L, v, "%s must be a number %g..%g, got %s", path, f->min,
                   f->max, shown);
        else
            *(double *)(base + f->offset) = d;
    } else {
        long n;
        if (!parse_long(scalar(v), &n) || n < (long)f->min || n > (long)f->max)
            report(L, v, "%s must be an integer %.15g..%.15g, got %s", path,
                   f->min, f->max, shown);
        else if (f->type == F_KB)
            *(size_t *)(base + f->offset) = (size_t)n * 1024;
        else if (f->type == F_MB)
            *(size_t *)(base + f->offset) = (size_t)n * 1024 * 1024;
        else if (f->type == F_LONG)
            *(long *)(base + f->offset) = n;
        else
            *(int *)(base + f->offset) = (int)n;
    }
    free(shown);
}

static void set_bool(loader *L, const char *path, const yaml_node_t *v,
                     bool *out)
{
    static const char *const yes[] = {"true", "yes", "on", NULL};
    static const char *const no[] = {"false", "no", "off", NULL};

    if (v->type == YAML_SCALAR_NODE) {
        for (int i = 0; yes[i]; i++) {
            if (strcmp(scalar(v), yes[i]) == 0) {
                *out = true;
                return;
            }
            if (strcmp(scalar(v), no[i]) == 0) {
                *out = false;
                return;
            }
        }
    }
    if (v->type == YAML_SCALAR_NODE) {
        char *shown = quoted(v);
        report(L, v, "%s must be true or false, got %s", path, shown);
        free(shown);
    } else {
        report(L, v, "%s must be true or false, got %s", path, node_kind(v));
    }
}

static bool in_choices(const char *s, const char *choices)
{
    size_t n = strlen(s);

    for (const char *p = choices; *p;) {
        const char *bar = strchr(p, '|');
        size_t len = bar ? (size_t)(bar - p) : strlen(p);
        if (len == n && strncmp(p, s, n) == 0)
            return true;
        p += len + (bar ? 1 : 0);
    }
    return false;
}

static void set_string(loader *L, const field *f, const char *path,
                       const yaml_node_t *v, char *base)
{
    char **slot = (char **)(base + f->offset);
    const char *s;

    if (v->type != YAML_SCALAR_NODE) {
        report(L, v, "%s must be a string, got %s", path, node_kind(v));
        return;
    }
    s = is_null(v) ? "" : scalar(v);
    if (strlen(s) != v->data.scalar.length) {
        report(L, v, "%s contains a NUL byte", path);
        return;
    }
    if (f->choices && !in_choices(s, f->choices)) {
        char *shown = quoted(v);
        tnd_buf list;
        tnd_buf_init(&list, 1024);
        for (const char *p = f->choices; *p; p++) {
            if (*p == '|')
                tnd_buf_puts(&list, ", ");
            else
                tnd_buf_append(&list, p, 1);
        }
        report(L, v, "%s must be one of %s; got %s", path, tnd_buf_str(&list),
               shown);
        tnd_buf_free(&list);
        free(shown);
        return;
    }
    free(*slot);
    if (f->type == F_PATH && *s && s[0] != '/')
        *slot = tnd_fs_join(L->dir, s);
    else
        *slot = tnd_xstrdup(s);
}

/* Strings of a sequence, or NULL (after reporting) when v is not one. */
static char **string_list(loader *L, const char *path, const yaml_node_t *v)
{
    yaml_node_item_t *it;
    size_t n = 0, i = 0;
    char **out;

    if (is_null(v))
        return tnd_xcalloc(1, sizeof(char *));
    if (v->type != YAML_SEQUENCE_NODE) {
        report(L, v, "%s must be a list, got %s", path, node_kind(v));
        return NULL;
    }
    for (it = v->data.sequence.items.start; it < v->data.sequence.items.top;
         it++)
        n++;
    out = tnd_xcalloc(n + 1, sizeof(char *));
    for (it = v->data.sequence.items.start; it < v->data.sequence.items.top;
         it++) {
        yaml_node_t *item = yaml_document_get_node(L->doc, *it);
        if (!item || item->type != YAML_SCALAR_NODE || is_null(item)) {
            report(L, item ? item : v, "%s[%zu] must be a string", path, i);
            continue;
        }
        out[i++] = tnd_xstrdup(scalar(item));
    }
    return out;
}

static void set_command(loader *L, const char *path, const yaml_node_t *v,
                        tnd_command *out)
{
    if (v->type == YAML_SCALAR_NODE && !is_null(v) && *scalar(v)) {
        command_free(out);
        command_set_shell(out, scalar(v));
        return;
    }
    if (v->type == YAML_SEQUENCE_NODE) {
        char **argv = string_list(L, path, v);
        tnd_buf shown;
        if (!argv)
            return;
        if (!argv[0]) {
            report(L, v, "%s must not be an empty list", path);
            free(argv);
            return;
        }
        command_free(out);
        out->argv = argv;
        tnd_buf_init(&shown, TND_BUF_NOCAP);
        for (char **p = argv; *p; p++)
            tnd_buf_printf(&shown, "%s%s", p == argv ? "" : " ", *p);
        out->display = tnd_buf_detach(&shown, NULL);
        return;
    }
    report(L, v,
           "%s must be a command: a string run by /bin/sh, or a list "
           "[program, arg, ...]",
           path);
}

/* ---- sections ----------------------------------------------------------- */

static void walk_section(loader *L, const char *path, const yaml_node_t *map,
                         const field *fields, const char *const *extra,
                         char *base);

static const yaml_node_t *pair_key(loader *L, const yaml_node_pair_t *p)
{
    return yaml_document_get_node(L->doc, p->key);
}

static const yaml_node_t *pair_value(loader *L, const yaml_node_pair_t *p)
{
    return yaml_document_get_node(L->doc, p->value);
}

/* The value that goes with key node k of map. */
static const yaml_node_t *pair_value_of(loader *L, const yaml_node_t *map,
                                        const yaml_node_t *k)
{
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start;
         p < map->data.mapping.pairs.top; p++)
        if (pair_key(L, p) == k)
            return pair_value(L, p);
    return k;
}

/* Checks that keys are unique scalars; reports and returns false if not.
 * Quadratic, so the walks stop at the error cap: a mapping has only a
 * few valid keys, and every other key is an error. */
static bool check_key(loader *L, const yaml_node_t *map,
                      const yaml_node_pair_t *pair, const char *where)
{
    const yaml_node_t *k = pair_key(L, pair);

    if (!k || k->type != YAML_SCALAR_NODE) {
        report(L, k ? k : map, "keys in %s must be plain names", where);
        return false;
    }
    for (const yaml_node_pair_t *q = map->data.mapping.pairs.start; q < pair;
         q++) {
        const yaml_node_t *qk = pair_key(L, q);
        if (qk && qk->type == YAML_SCALAR_NODE &&
            strcmp(scalar(qk), scalar(k)) == 0) {
            report(L, k, "duplicate key '%s' in %s", scalar(k), where);
            return false;
        }
    }
    return true;
}

static bool header_name_ok(const char *s)
{
    static const char extra[] = "!#$%&'*+-.^_`|~";

    if (!*s || strlen(s) > 100)
        return false;
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && !strchr(extra, *s))
            return false;
    return true;
}

/* headers: {Name: value, ...}: names are HTTP tokens, values one line,
 * so nothing in the config can smuggle in a second header. */
static void set_headers(loader *L, const char *path, const yaml_node_t *map,
                        char ***out)
{
    size_t n = 0;
    char **list;

    if (is_null(map)) {
        names_free(out);
        *out = tnd_xcalloc(1, sizeof(char *));
        return;
    }
    if (map->type != YAML_MAPPING_NODE) {
        report(L, map, "%s must be a mapping of header names to values, got %s",
               path, node_kind(map));
        return;
    }
    list = tnd_xcalloc(33, sizeof(char *));
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start;
         p < map->data.mapping.pairs.top; p++) {
        const yaml_node_t *k, *v;
        if (!check_key(L, map, p, path))
            continue;
        k = pair_key(L, p);
        v = pair_value(L, p);
        if (n == 32) {
            report(L, k, "%s: at most 32 headers", path);
            break;
        }
        if (!header_name_ok(scalar(k))) {
            report(L, k, "%s: '%s' is not a valid HTTP header name", path,
                   scalar(k));
            continue;
        }
        if (v->type != YAML_SCALAR_NODE || strpbrk(scalar(v), "\r\n") != NULL ||
            strlen(scalar(v)) != v->data.scalar.length) {
            report(L, v, "%s.%s must be a one-line string", path, scalar(k));
            continue;
        }
        list[n++] = tnd_xasprintf("%s: %s", scalar(k), scalar(v));
    }
    names_free(out);
    *out = list;
}

/* models: [ {provider, model, ...}, ... ]: one llm section per reviewer
 * quorum member, each starting from the built-in defaults. */
static void set_models(loader *L, const char *path, const yaml_node_t *seq,
                       tnd_agent_config *agent)
{
    size_t n = 0;

    if (is_null(seq))
        return;
    if (seq->type != YAML_SEQUENCE_NODE) {
        report(L, seq, "%s must be a list of llm sections, got %s", path,
               node_kind(seq));
        return;
    }
    for (yaml_node_item_t *it = seq->data.sequence.items.start;
         it < seq->data.sequence.items.top; it++)
        n++;
    if (n > 16) {
        report(L, seq, "%s has %zu entries; a quorum has at most 16", path, n);
        return;
    }
    for (size_t i = 0; i < agent->nmodels; i++)
        llm_free(&agent->models[i]);
    free(agent->models);
    agent->models = tnd_xcalloc(n + 1, sizeof(tnd_llm_config));
    agent->nmodels = 0;
    for (yaml_node_item_t *it = seq->data.sequence.items.start;
         it < seq->data.sequence.items.top; it++) {
        yaml_node_t *item = yaml_document_get_node(L->doc, *it);
        char *sub = tnd_xasprintf("%s[%zu]", path, agent->nmodels);
        tnd_llm_config *m = &agent->models[agent->nmodels++];
        llm_defaults(m);
        walk_section(L, sub, item, llm_fields, NULL, (char *)m);
        free(sub);
    }
}

static void set_field(loader *L, const field *f, const char *path,
                      const yaml_node_t *v, char *base)
{
    switch (f->type) {
    case F_INT:
    case F_LONG:
    case F_DOUBLE:
    case F_KB:
    case F_MB:
        set_number(L, f, path, v, base);
        break;
    case F_HEADERS:
        set_headers(L, path, v, (char ***)(base + f->offset));
        break;
    case F_MODELS:
        set_models(L, path, v, (tnd_agent_config *)base);
        break;
    case F_BOOL:
        set_bool(L, path, v, (bool *)(base + f->offset));
        break;
    case F_STRING:
    case F_PATH:
        set_string(L, f, path, v, base);
        break;
    case F_NAMES: {
        char **names = string_list(L, path, v);
        if (names) {
            names_free((char ***)(base + f->offset));
            *(char ***)(base + f->offset) = names;
        }
        break;
    }
    case F_COMMAND:
        set_command(L, path, v, (tnd_command *)(base + f->offset));
        break;
    case F_SECTION:
        walk_section(L, path, v, f->sub, NULL, base + f->offset);
        break;
    }
}

static void walk_section(loader *L, const char *path, const yaml_node_t *map,
                         const field *fields, const char *const *extra,
                         char *base)
{
    const char *where = path[0] ? path : "the top level";

    if (is_null(map))
        return;
    if (map->type != YAML_MAPPING_NODE) {
        report(L, map, "%s must be a mapping of keys, got %s", where,
               node_kind(map));
        return;
    }
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start;
         p < map->data.mapping.pairs.top && L->nerrors <= ERRORS_MAX; p++) {
        const yaml_node_t *k, *v;
        const field *f;
        bool is_extra = false;
        if (!check_key(L, map, p, where))
            continue;
        k = pair_key(L, p);
        v = pair_value(L, p);
        for (const char *const *e = extra; e && *e; e++)
            if (strcmp(scalar(k), *e) == 0)
                is_extra = true;
        if (is_extra)
            continue;
        for (f = fields; f->key; f++)
            if (strcmp(f->key, scalar(k)) == 0)
                break;
        if (!f->key) {
            unknown_key(L, k, where, fields, extra);
            continue;
        }
        char *sub = path[0] ? tnd_xasprintf("%s.%s", path, f->key)
                            : tnd_xstrdup(f->key);
        set_field(L, f, sub, v, base);
        free(sub);
    }
}

static bool valid_skill_name(const char *s)
{
    if (!*s || strlen(s) > 40)
        return false;
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && *s != '-' && *s != '_')
            return false;
    return true;
}

/* The key node of map[key], or NULL. */
static const yaml_node_t *key_node(loader *L, const yaml_node_t *map,
                                   const char *key)
{
    if (!map || map->type != YAML_MAPPING_NODE)
        return NULL;
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start;
         p < map->data.mapping.pairs.top; p++) {
        const yaml_node_t *k = pair_key(L, p);
        if (k && k->type == YAML_SCALAR_NODE && strcmp(scalar(k), key) == 0)
            return k;
    }
    return NULL;
}

/* Every item of the list under map[key] must be a well-formed glob. */
static void check_globs(loader *L, const char *path, const yaml_node_t *map,
                        const char *key)
{
    const yaml_node_t *k = key_node(L, map, key), *list;
    size_t i = 0;

    if (!k || (list = pair_value_of(L, map, k))->type != YAML_SEQUENCE_NODE)
        return;
    for (yaml_node_item_t *it = list->data.sequence.items.start;
         it < list->data.sequence.items.top; it++, i++) {
        const yaml_node_t *item = yaml_document_get_node(L->doc, *it);
        if (item && item->type == YAML_SCALAR_NODE &&
            tnd_glob_check(scalar(item)) < 0) {
            char *shown = quoted(item);
            report(L, item, "%s.%s[%zu] is not a valid pattern %s: %s", path,
                   key, i, shown, tnd_error_last());
            free(shown);
        }
    }
}

/* What one skill's keys must agree on: a command or a builtin, options
 * only for their builtin, patterns that parse. */
static void check_skill(loader *L, const tnd_skill_config *s, const char *path,
                        const yaml_node_t *map)
{
    static const char *const git_keys[] = {"forbid", "max_changed_lines",
                                           "max_file_kb", NULL};
    static const char *const docs_keys[] = {"public", "docs", NULL};
    static const char *const globs[] = {"paths", "forbid", "public", "docs",
                                        NULL};
    const yaml_node_t *k;

    if (is_null(map) || map->type != YAML_MAPPING_NODE) {
        if (!s->command.argv)
            report(L, map,
                   "%s needs a command (for example: command: make test)",
                   path);
        return;
    }
    if (!*s->builtin && !s->command.argv && !key_node(L, map, "builtin"))
        report(L, map, "%s needs a command (for example: command: make test)",
               path);
    if (*s->builtin && (k = key_node(L, map, "command")))
        report(L, k,
               "%s: builtin: %s runs inside the reviewer and takes no "
               "command (keep one of the two)",
               path, s->builtin);
    if (*s->builtin && (k = key_node(L, map, "limits")))
        report(L, k,
               "%s.limits applies to commands; builtin: %s runs inside the "
               "reviewer",
               path, s->builtin);
    for (int i = 0; git_keys[i]; i++)
        if (strcmp(s->builtin, "git") && (k = key_node(L, map, git_keys[i])))
            report(L, k, "%s.%s applies only to builtin: git", path,
                   git_keys[i]);
    for (int i = 0; docs_keys[i]; i++)
        if (strcmp(s->builtin, "docs") && (k = key_node(L, map, docs_keys[i])))
            report(L, k, "%s.%s applies only to builtin: docs", path,
                   docs_keys[i]);
    if (!strcmp(s->builtin, "docs") &&
        (!s->public_paths[0] || !s->docs_paths[0]))
        report(L, key_node(L, map, "builtin"),
               "%s: builtin: docs needs public: [globs] (the interface) and "
               "docs: [globs] (its documentation)",
               path);
    for (int i = 0; globs[i]; i++)
        check_globs(L, path, map, globs[i]);
}

/* skills: { NAME: { command, required, timeout_s }, ... } replaces the
 * default skill set entirely. */
static void walk_skills(loader *L, tnd_config *cfg, const yaml_node_t *map)
{
    size_t n = 0;

    if (is_null(map)) {
        skills_free(cfg);
        return;
    }
    if (map->type != YAML_MAPPING_NODE) {
        report(L, map, "skills must be a mapping of skill names, got %s",
               node_kind(map));
        return;
    }
    skills_free(cfg);
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start;
         p < map->data.mapping.pairs.top; p++)
        n++;
    cfg->skills = tnd_xcalloc(n ? n : 1, sizeof(*cfg->skills));
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start;
         p < map->data.mapping.pairs.top && L->nerrors <= ERRORS_MAX; p++) {
        const yaml_node_t *k, *v;
        tnd_skill_config *s;
        char *path;
        if (!check_key(L, map, p, "skills"))
            continue;
        k = pair_key(L, p);
        v = pair_value(L, p);
        if (!valid_skill_name(scalar(k))) {
            report(L, k,
                   "skill name '%s' must be 1..40 letters, digits, '-' or "
                   "'_'",
                   scalar(k));
            continue;
        }
        s = &cfg->skills[cfg->nskills++];
        skill_defaults(s, scalar(k), NULL);
        path = tnd_xasprintf("skills.%s", scalar(k));
        walk_section(L, path, v, skill_fields, NULL, (char *)s);
        check_skill(L, s, path, v);
        free(path);
    }
}

static const yaml_node_t *lookup(loader *L, const yaml_node_t *map,
                                 const char *key)
{
    if (!map || map->type != YAML_MAPPING_NODE)
        return NULL;
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start;
         p < map->data.mapping.pairs.top; p++) {
        const yaml_node_t *k = pair_key(L, p);
        if (k && k->type == YAML_SCALAR_NODE && strcmp(scalar(k), key) == 0)
            return pair_value(L, p);
    }
    return NULL;
}

/* The item of a list that is name, else the list itself. */
static const yaml_node_t *item_named(loader *L, const yaml_node_t *list,
                                     const char *name)
{
    if (list->type != YAML_SEQUENCE_NODE)
        return list;
    for (yaml_node_item_t *it = list->data.sequence.items.start;
         it < list->data.sequence.items.top; it++) {
        const yaml_node_t *item = yaml_document_get_node(L->doc, *it);
        if (item && item->type == YAML_SCALAR_NODE &&
            strcmp(scalar(item), name) == 0)
            return item;
    }
    return list;
}

bool tnd_config_skill_waits(const tnd_config *self, size_t i, size_t j)
{
    const tnd_skill_config *s =
        tnd_config_skill(self, self->reviewer.skills[i]);

    if (!s || !s->after)
        return j < i;
    for (char **a = s->after; *a; a++)
        if (strcmp(*a, self->reviewer.skills[j]) == 0)
            return true;
    return false;
}

/* Depth-first search for a cycle through entry i of reviewer.skills;
 * state: 0 new, 1 on the path, 2 done. On a cycle, path[0..*len) holds
 * it, from the entry that closes it. */
static bool find_cycle(const tnd_config *cfg, size_t n, size_t i, int *state,
                       size_t *stack, size_t depth, size_t *path, size_t *len)
{
    state[i] = 1;
    stack[depth] = i;
    for (size_t j = 0; j < n; j++) {
        if (!tnd_config_skill_waits(cfg, i, j))
            continue;
        if (state[j] == 1) {
            size_t from = depth;
            while (stack[from] != j)
                from--;
            *len = 0;
            for (size_t k = from; k <= depth; k++)
                path[(*len)++] = stack[k];
            return true;
        }
        if (state[j] == 0 &&
            find_cycle(cfg, n, j, state, stack, depth + 1, path, len))
            return true;
    }
    state[i] = 2;
    return false;
}

/* skills.*.after: known names, and no skill waiting for itself through
 * others (reported once, at an `after` that closes the cycle). */
static void check_after(loader *L, tnd_config *cfg, const yaml_node_t *root)
{
    const yaml_node_t *skills = lookup(L, root, "skills");
    size_t n = 0;
    int *state;
    size_t *stack, *path, len = 0;

    for (size_t i = 0; i < cfg->nskills; i++) {
        const tnd_skill_config *s = &cfg->skills[i];
        const yaml_node_t *after =
            lookup(L, lookup(L, skills, s->name), "after");
        for (char **a = s->after; a && *a; a++) {
            tnd_buf known;
            if (tnd_config_skill(cfg, *a))
                continue;
            tnd_buf_init(&known, 4096);
            for (size_t j = 0; j < cfg->nskills; j++)
                tnd_buf_printf(&known, "%s%s", j ? ", " : "",
                               cfg->skills[j].name);
            report(L, after ? item_named(L, after, *a) : skills,
                   "skills.%s.after names '%s', which is not defined under "
                   "skills (defined: %s)",
                   s->name, *a, tnd_buf_str(&known));
            tnd_buf_free(&known);
        }
    }
    for (char **p = cfg->reviewer.skills; p && *p; p++) {
        if (!tnd_config_skill(cfg, *p))
            return; /* reported already */
        n++;
    }
    state = tnd_xcalloc(n + 1, sizeof(*state));
    stack = tnd_xcalloc(n + 1, sizeof(*stack));
    path = tnd_xcalloc(n + 1, sizeof(*path));
    for (size_t i = 0; i < n; i++) {
        if (state[i] || !find_cycle(cfg, n, i, state, stack, 0, path, &len))
            continue;
        {
            const char *names = NULL;
            tnd_buf text;
            const yaml_node_t *at = skills;
            /* blame an explicit `after`: defaults alone never loop */
            for (size_t k = 0; k < len && !names; k++) {
                const tnd_skill_config *s =
                    tnd_config_skill(cfg, cfg->reviewer.skills[path[k]]);
                if (s->after) {
                    names = s->name;
                    at = lookup(L, lookup(L, skills, s->name), "after");
                }
            }
            tnd_buf_init(&text, 4096);
            for (size_t k = 0; k < len; k++)
                tnd_buf_printf(&text, "%s%s waits for %s", k ? ", " : "",
                               cfg->reviewer.skills[path[k]],
                               cfg->reviewer.skills[path[(k + 1) % len]]);
            report(L, at ? at : root,
                   "skills.%s.after makes a cycle: %s (a skill without "
                   "after waits for every skill listed before it in "
                   "agents.reviewer.skills)",
                   names ? names : cfg->reviewer.skills[path[0]],
                   tnd_buf_str(&text));
            tnd_buf_free(&text);
        }
        break;
    }
    free(state);
    free(stack);
    free(path);
}

/* Checks that need the whole file: skill references, provider needs.
 * Each points at the value to change: the list item, the base_url, the
 * threshold; else at the section (reviewer.skills at its default names
 * the skills section, which lacks them). */
/* The checks one llm section needs beyond its keys' types. */
static void check_llm(loader *L, const tnd_llm_config *llm, const char *label,
                      const yaml_node_t *where, const yaml_node_t *root)
{
    const yaml_node_t *url = lookup(L, where, "base_url");

    if (!where)
        where = root;
    if (!url)
        url = where;
    if (strcmp(llm->provider, "replay") == 0 && !*llm->cassette)
        report(L, where,
               "%s: provider replay needs a cassette (the file of recorded "
               "answers)",
               label);
    if (*llm->base_url && !tnd_str_starts_with(llm->base_url, "http://") &&
        !tnd_str_starts_with(llm->base_url, "https://"))
        report(L, url,
               "%s.base_url must start with http:// or https://, got "
               "\"%s\"",
               label, llm->base_url);
    if (strcmp(llm->provider, "command") == 0 && !llm->command.argv)
        report(L, where,
               "%s: provider command needs a command (the program that reads "
               "the prompt on stdin and writes the answer on stdout)",
               label);
}

/* The n-th item of a sequence node, or NULL. */
static const yaml_node_t *item_at(loader *L, const yaml_node_t *seq, size_t n)
{
    if (!seq || seq->type != YAML_SEQUENCE_NODE ||
        (size_t)(seq->data.sequence.items.top -
                 seq->data.sequence.items.start) <= n)
        return NULL;
    return yaml_document_get_node(L->doc, seq->data.sequence.items.start[n]);
}

static void cross_check(loader *L, tnd_config *cfg, const yaml_node_t *root)
{
    const yaml_node_t *agents = lookup(L, root, "agents");
    const yaml_node_t *rev = lookup(L, agents, "reviewer");
    const yaml_node_t *names = lookup(L, rev, "skills");
    const yaml_node_t *gate = lookup(L, root, "gate"), *at;
    const char *roles[] = {"coder", "reviewer"};
    tnd_agent_config *agent[] = {&cfg->coder, &cfg->reviewer};

    for (size_t i = 0; cfg->reviewer.skills && cfg->reviewer.skills[i]; i++) {
        const char *name = cfg->reviewer.skills[i];
        if (!tnd_config_skill(cfg, name)) {
            tnd_buf known;
            tnd_buf_init(&known, 4096);
            for (size_t j = 0; j < cfg->nskills; j++)
                tnd_buf_printf(&known, "%s%s", j ? ", " : "",
                               cfg->skills[j].name);
            report(L,
                   names ? item_named(L, names, name)
                         : lookup(L, root, "skills"),
                   "agents.reviewer.skills names '%s', which is not defined "
                   "under skills (defined: %s)",
                   name, known.len ? tnd_buf_str(&known) : "none");
            tnd_buf_free(&known);
        }
    }
    check_after(L, cfg, root);
    for (int i = 0; i < 2; i++) {
        const yaml_node_t *a = lookup(L, agents, roles[i]);
        const yaml_node_t *models = lookup(L, a, "models");
        char label[64];
        snprintf(label, sizeof(label), "agents.%s.llm", roles[i]);
        check_llm(L, &agent[i]->llm, label, lookup(L, a, "llm"), root);
        if (i == 0 && agent[i]->nmodels)
            report(L, models,
                   "agents.coder.models: only the reviewer has quorum "
                   "members; give the coder's model under agents.coder.llm");
        if (i == 0 && key_node(L, a, "quorum"))
            report(L, key_node(L, a, "quorum"),
                   "agents.coder.quorum: only the reviewer has a quorum");
        if (i == 1 && key_node(L, a, "context_include"))
            report(L, key_node(L, a, "context_include"),
                   "agents.reviewer.context_include: only the coder is sent "
                   "repository files; set agents.coder.context_include");
        if (i == 1 && agent[i]->nmodels && agent[i]->count == 1)
            report(L, models,
                   "agents.reviewer.models lists the models of a quorum, but "
                   "agents.reviewer.count is 1 (one reviewer, using "
                   "agents.reviewer.llm); raise count to %zu, or set count 0 "
                   "for remote members",
                   agent[i]->nmodels > 1 ? agent[i]->nmodels : (size_t)2);
        check_globs(L, i ? "agents.reviewer" : "agents.coder", a,
                    "context_include");
        for (size_t m = 0; i == 1 && m < agent[i]->nmodels; m++) {
            snprintf(label, sizeof(label), "agents.reviewer.models[%zu]", m);
            check_llm(L, &agent[i]->models[m], label, item_at(L, models, m),
                      root);
        }
    }
    check_globs(L, "gate", gate, "risk_paths");
    if (!(at = lookup(L, gate, "human_review_below")))
        at = lookup(L, gate, "confidence_threshold");
    if (cfg->gate.human_review_below > cfg->gate.confidence_threshold)
        report(L, at ? at : gate,
               "gate.human_review_below (%g) must not be above "
               "gate.confidence_threshold (%g)",
               cfg->gate.human_review_below, cfg->gate.confidence_threshold);
}

int tnd_config_parse(tnd_config **out, const char *text, size_t len,
                     const char *name, const char *dir)
{
    yaml_parser_t parser;
    yaml_document_t doc;
    loader L = {name, dir, &doc, {0}, 0};
    tnd_config *cfg = tnd_config_defaults();
    const yaml_node_t *root, *v;
    int error = 0;

    *out = NULL;
    tnd_buf_init(&L.errors, 64 * 1024);
    free(cfg->dir);
    cfg->dir = tnd_xstrdup(dir);
    if (!yaml_parser_initialize(&parser)) {
        tnd_config_destroy(&cfg);
        return tnd_error_set("%s: cannot start the YAML parser", name);
    }
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    if (!yaml_parser_load(&parser, &doc)) {
        tnd_error_set("%s:%lu:%lu: not valid YAML: %s%s%s", name,
                      (unsigned long)parser.problem_mark.line + 1,
                      (unsigned long)parser.problem_mark.column + 1,
                      parser.problem ? parser.problem : "syntax error",
                      parser.context ? " " : "",
                      parser.context ? parser.context : "");
        yaml_parser_delete(&parser);
        tnd_config_destroy(&cfg);
        tnd_buf_free(&L.errors);
        return TND_ECONFIG;
    }
    root = yaml_document_get_root_node(&doc);
    if (root && !is_null(root)) {
        walk_section(&L, "", root, top_fields, top_extra, (char *)cfg);
        if ((v = lookup(&L, root, "version")) != NULL &&
            (v->type != YAML_SCALAR_NODE || strcmp(scalar(v), "1") != 0))
            report(&L, v,
                   "version must be 1 (this tandem reads version 1 files)");
        if ((v = lookup(&L, root, "skills")) != NULL)
            walk_skills(&L, cfg, v);
        if (L.nerrors <= ERRORS_MAX)
            cross_check(&L, cfg, root);
    }
    if (L.nerrors) {
        /* drop the final newline so the message prints as one block */
        if (L.errors.len && L.errors.data[L.errors.len - 1] == '\n')
            L.errors.data[--L.errors.len] = '\0';
        tnd_error_set("%s", tnd_buf_str(&L.errors));
        tnd_config_destroy(&cfg);
        error = TND_ECONFIG;
    } else {
        *out = cfg;
    }
    yaml_document_delete(&doc);
    yaml_parser_delete(&parser);
    tnd_buf_free(&L.errors);
    return error;
}

int tnd_config_load(tnd_config **out, const char *path)
{
    char *text = NULL, *dir = NULL, *abs = NULL;
    size_t len;
    int error;

    *out = NULL;
    error = tnd_fs_read(&text, &len, path, CONFIG_MAX_BYTES);
    if (error < 0) {
        if (error == TND_ENOTFOUND)
            tnd_error_set("config file %s does not exist (give --config "
                          "FILE, or create agents.yaml)",
                          path);
        return error == TND_ENOTFOUND ? TND_ECONFIG : error;
    }
    abs = tnd_fs_realpath(path);
    dir = tnd_fs_dirname(abs ? abs : path);
    error = tnd_config_parse(out, text, len, path, dir);
    if (error == 0) {
        (*out)->path = abs;
        abs = NULL;
    }
    free(abs);
    free(dir);
    free(text);
    return error;
}

int tnd_config_override_llm(tnd_config *self, const char *spec,
                            const char *base_url)
{
    const char *colon = spec ? strchr(spec, ':') : NULL;
    char *provider = NULL;
    const char *model = NULL;
    tnd_llm_config *llms[] = {&self->coder.llm, &self->reviewer.llm};

    if (spec) {
        provider = colon ? tnd_xstrndup(spec, (size_t)(colon - spec))
                         : tnd_xstrdup(spec);
        model = colon ? colon + 1 : NULL;
        if (!in_choices(provider, "replay|openai|anthropic|ollama|command")) {
            tnd_error_set("--llm %s: unknown provider '%s' (known: %s)", spec,
                          provider, TND_PROVIDERS);
            free(provider);
            return TND_ECONFIG;
        }
        if (model && !*model) {
            free(provider);
            return tnd_error_config("--llm %s: the model after ':' is empty",
                                    spec);
        }
    }
    if (base_url && !tnd_str_starts_with(base_url, "http://") &&
        !tnd_str_starts_with(base_url, "https://")) {
        free(provider);
        tnd_error_set("--base-url %s must start with http:// or https://",
                      base_url);
        return TND_ECONFIG;
    }
    for (size_t i = 0; i < 2 + self->reviewer.nmodels; i++) {
        tnd_llm_config *llm = i < 2 ? llms[i] : &self->reviewer.models[i - 2];
        if (provider && strcmp(provider, llm->provider) != 0) {
            /* another provider: the config's URL and key variable were
             * for the old one, so fall back to the new one's own */
            free(llm->provider);
            llm->provider = tnd_xstrdup(provider);
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
    free(provider);
    return 0;
}
