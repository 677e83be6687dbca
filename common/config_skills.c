/* The skills section of agents.yaml (see config.h and config_skills.h):
 * each skill's fields, defaults and checks, and the order `after` gives
 * them, with its cycles reported. */
#include "common/config_skills.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/glob.h"
#include "common/names.h"
#include "common/str.h"
#include "common/xalloc.h"

#define OFF(type, member) offsetof(type, member)

static const char *const sandbox_names[] = {"bwrap", "none"};
static const tnd_names sandbox_modes = TND_NAMES("sandbox", sandbox_names);

const char *tnd_sandbox_mode_name(tnd_sandbox_mode s)
{
    return tnd_names_name(&sandbox_modes, (int)s);
}

static const tnd_yw_field limits_fields[] = {
    {"cpu_s", TND_YW_LONG, OFF(tnd_skill_limits, cpu_s), 0, 604800, NULL, NULL,
     NULL},
    {"memory_mb", TND_YW_MB, OFF(tnd_skill_limits, memory_bytes), 0, 1048576,
     NULL, NULL, NULL},
    {"file_mb", TND_YW_MB, OFF(tnd_skill_limits, file_bytes), 0, 1048576, NULL,
     NULL, NULL},
    {"disk_mb", TND_YW_MB, OFF(tnd_skill_limits, disk_bytes), 0, 1048576, NULL,
     NULL, NULL},
    {"processes", TND_YW_LONG, OFF(tnd_skill_limits, processes), 0, 1000000,
     NULL, NULL, NULL},
    {NULL, 0, 0, 0, 0, NULL, NULL, NULL},
};

static const tnd_yw_field skill_fields[] = {
    {"command", TND_YW_CUSTOM, OFF(tnd_skill_config, command), 0, 0, NULL, NULL,
     tnd_config_set_command},
    {"required", TND_YW_BOOL, OFF(tnd_skill_config, required), 0, 0, NULL, NULL,
     NULL},
    {"timeout_s", TND_YW_INT, OFF(tnd_skill_config, timeout_s), 1, 86400, NULL,
     NULL, NULL},
    {"output_max_kb", TND_YW_KB, OFF(tnd_skill_config, output_cap), 1, 1024,
     NULL, NULL, NULL},
    {"builtin", TND_YW_STRING, OFF(tnd_skill_config, builtin), 0, 0, "git|docs",
     NULL, NULL},
    {"paths", TND_YW_NAMES, OFF(tnd_skill_config, paths), 0, 0, NULL, NULL,
     NULL},
    {"after", TND_YW_NAMES, OFF(tnd_skill_config, after), 0, 0, NULL, NULL,
     NULL},
    {"limits", TND_YW_SECTION, OFF(tnd_skill_config, limits), 0, 0, NULL,
     limits_fields, NULL},
    {"sandbox", TND_YW_ENUM, OFF(tnd_skill_config, sandbox), 0, 0, NULL,
     &sandbox_modes, NULL},
    {"network", TND_YW_BOOL, OFF(tnd_skill_config, network), 0, 0, NULL, NULL,
     NULL},
    {"forbid", TND_YW_NAMES, OFF(tnd_skill_config, forbid), 0, 0, NULL, NULL,
     NULL},
    {"max_changed_lines", TND_YW_INT, OFF(tnd_skill_config, max_changed_lines),
     0, 100000000, NULL, NULL, NULL},
    {"max_file_kb", TND_YW_KB, OFF(tnd_skill_config, max_file_bytes), 0,
     1048576, NULL, NULL, NULL},
    {"public", TND_YW_NAMES, OFF(tnd_skill_config, public_paths), 0, 0, NULL,
     NULL, NULL},
    {"docs", TND_YW_NAMES, OFF(tnd_skill_config, docs_paths), 0, 0, NULL, NULL,
     NULL},
    {NULL, 0, 0, 0, 0, NULL, NULL, NULL},
};

void tnd_config_skill_defaults(tnd_skill_config *s, const char *name,
                               const char *line)
{
    memset(s, 0, sizeof(*s));
    s->name = tnd_xstrdup(name);
    if (line)
        tnd_config_command_shell(&s->command, line);
    s->required = true;
    s->timeout_s = 600;
    s->output_cap = 64 * 1024;
    s->builtin = tnd_xstrdup("");
    s->limits.cpu_s = TND_SKILL_LIMIT_CPU_S;
    s->limits.memory_bytes = (size_t)TND_SKILL_LIMIT_MEMORY_MB << 20;
    s->limits.file_bytes = (size_t)TND_SKILL_LIMIT_FILE_MB << 20;
    s->limits.disk_bytes = (size_t)TND_SKILL_LIMIT_DISK_MB << 20;
    s->limits.processes = TND_SKILL_LIMIT_PROCESSES;
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
    tnd_config_command_free(&s->command);
    tnd_str_list_free(&s->paths);
    tnd_str_list_free(&s->after);
    tnd_str_list_free(&s->forbid);
    tnd_str_list_free(&s->public_paths);
    tnd_str_list_free(&s->docs_paths);
}

void tnd_config_skills_free(tnd_config *cfg)
{
    for (size_t i = 0; i < cfg->nskills; i++)
        skill_free(&cfg->skills[i]);
    free(cfg->skills);
    cfg->skills = NULL;
    cfg->nskills = 0;
}

const tnd_skill_config *tnd_config_skill(const tnd_config *self,
                                         const char *name)
{
    for (size_t i = 0; i < self->nskills; i++)
        if (strcmp(self->skills[i].name, name) == 0)
            return &self->skills[i];
    return NULL;
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

/* What one skill's keys must agree on: a command or a builtin, options
 * only for their builtin, patterns that parse. */
static void check_skill(tnd_yw *w, const tnd_skill_config *s, const char *path,
                        const yaml_node_t *map)
{
    static const char *const git_keys[] = {"forbid", "max_changed_lines",
                                           "max_file_kb", NULL};
    static const char *const docs_keys[] = {"public", "docs", NULL};
    static const char *const command_keys[] = {"limits", "sandbox", "network",
                                               NULL};
    static const char *const globs[] = {"paths", "forbid", "public", "docs",
                                        NULL};
    const yaml_node_t *k;

    if (tnd_yw_is_null(map) || map->type != YAML_MAPPING_NODE) {
        if (!s->command.argv)
            tnd_yw_report(
                w, map, "%s needs a command (for example: command: make test)",
                path);
        return;
    }
    if (!*s->builtin && !s->command.argv && !tnd_yw_key_node(w, map, "builtin"))
        tnd_yw_report(w, map,
                      "%s needs a command (for example: command: make test)",
                      path);
    if (*s->builtin && (k = tnd_yw_key_node(w, map, "command")))
        tnd_yw_report(w, k,
                      "%s: builtin: %s runs inside the reviewer and takes no "
                      "command (keep one of the two)",
                      path, s->builtin);
    for (int i = 0; command_keys[i]; i++)
        if (*s->builtin && (k = tnd_yw_key_node(w, map, command_keys[i])))
            tnd_yw_report(w, k,
                          "%s.%s applies to commands; builtin: %s runs "
                          "inside the reviewer",
                          path, command_keys[i], s->builtin);
    for (int i = 0; git_keys[i]; i++)
        if (strcmp(s->builtin, "git") &&
            (k = tnd_yw_key_node(w, map, git_keys[i])))
            tnd_yw_report(w, k, "%s.%s applies only to builtin: git", path,
                          git_keys[i]);
    for (int i = 0; docs_keys[i]; i++)
        if (strcmp(s->builtin, "docs") &&
            (k = tnd_yw_key_node(w, map, docs_keys[i])))
            tnd_yw_report(w, k, "%s.%s applies only to builtin: docs", path,
                          docs_keys[i]);
    if (!strcmp(s->builtin, "docs") &&
        (!s->public_paths[0] || !s->docs_paths[0]))
        tnd_yw_report(
            w, tnd_yw_key_node(w, map, "builtin"),
            "%s: builtin: docs needs public: [globs] (the interface) and "
            "docs: [globs] (its documentation)",
            path);
    for (int i = 0; globs[i]; i++)
        tnd_config_check_globs(w, path, map, globs[i]);
}

/* skills: { NAME: { command, required, timeout_s }, ... } replaces the
 * default skill set entirely. */
void tnd_config_walk_skills(tnd_yw *w, tnd_config *cfg, const yaml_node_t *map)
{
    size_t n = 0;

    if (tnd_yw_is_null(map)) {
        tnd_config_skills_free(cfg);
        return;
    }
    if (map->type != YAML_MAPPING_NODE) {
        tnd_yw_report(w, map, "skills must be a mapping of skill names, got %s",
                      tnd_yw_kind(map));
        return;
    }
    tnd_config_skills_free(cfg);
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start;
         p < map->data.mapping.pairs.top; p++)
        n++;
    cfg->skills = tnd_xcalloc(n ? n : 1, sizeof(*cfg->skills));
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start;
         p < map->data.mapping.pairs.top && !tnd_yw_stopped(w); p++) {
        const yaml_node_t *k, *v;
        tnd_skill_config *s;
        char *path;
        if (!tnd_yw_check_key(w, map, p, "skills"))
            continue;
        k = tnd_yw_node(w, p->key);
        v = tnd_yw_node(w, p->value);
        if (!valid_skill_name(tnd_yw_scalar(k))) {
            tnd_yw_report(
                w, k,
                "skill name '%s' must be 1..40 letters, digits, '-' or "
                "'_'",
                tnd_yw_scalar(k));
            continue;
        }
        s = &cfg->skills[cfg->nskills++];
        tnd_config_skill_defaults(s, tnd_yw_scalar(k), NULL);
        path = tnd_xasprintf("skills.%s", tnd_yw_scalar(k));
        tnd_yw_walk(w, path, v, skill_fields, NULL, (char *)s);
        check_skill(w, s, path, v);
        free(path);
    }
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
void tnd_config_check_after(tnd_yw *w, tnd_config *cfg, const yaml_node_t *root)
{
    const yaml_node_t *skills = tnd_yw_lookup(w, root, "skills");
    size_t n = 0;
    int *state;
    size_t *stack, *path, len = 0;

    /* until the report is full: each unknown name lists every skill */
    for (size_t i = 0; i < cfg->nskills && !tnd_yw_stopped(w); i++) {
        const tnd_skill_config *s = &cfg->skills[i];
        const yaml_node_t *after =
            tnd_yw_lookup(w, tnd_yw_lookup(w, skills, s->name), "after");
        for (char **a = s->after; a && *a && !tnd_yw_stopped(w); a++) {
            tnd_buf known;
            if (tnd_config_skill(cfg, *a))
                continue;
            tnd_buf_init(&known, 4096);
            for (size_t j = 0; j < cfg->nskills; j++)
                tnd_buf_printf(&known, "%s%s", j ? ", " : "",
                               cfg->skills[j].name);
            tnd_yw_report(
                w, after ? tnd_yw_item_named(w, after, *a) : skills,
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
                    at = tnd_yw_lookup(w, tnd_yw_lookup(w, skills, s->name),
                                       "after");
                }
            }
            tnd_buf_init(&text, 4096);
            for (size_t k = 0; k < len; k++)
                tnd_buf_printf(&text, "%s%s waits for %s", k ? ", " : "",
                               cfg->reviewer.skills[path[k]],
                               cfg->reviewer.skills[path[(k + 1) % len]]);
            tnd_yw_report(w, at ? at : root,
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
