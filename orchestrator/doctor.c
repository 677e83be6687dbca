/* `tandem doctor` (see doctor.h). */
#include "orchestrator/doctor.h"

#include <ctype.h>
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agents/llm.h"
#include "agents/probe.h"
#include "common/buf.h"
#include "common/config.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/log.h"
#include "common/str.h"
#include "common/xalloc.h"
#include "orchestrator/crew.h"
#include "orchestrator/git.h"
#include "orchestrator/init.h"
#include "orchestrator/pool.h"
#include "orchestrator/report.h"
#include "orchestrator/run.h"
#include "orchestrator/rundir.h"
#include "skills/bwrap.h"
#include "skills/sandbox.h"
#include "proto/json.h"

/* The checks so far: printed as they come, or kept for the document. */
typedef struct table {
    int failures;
    json_object *rows; /* with --json: the checks; NULL for the table */
    bool headed;       /* the table's header is out */
} table;

static void row(table *t, const char *check, bool ok, const char *detail)
{
    /* a key, or a base URL's password, is never shown */
    char *said = tnd_log_redact(tnd_xstrdup(detail));

    if (t->rows) {
        json_object *r = json_object_new_object();
        json_object_object_add(r, "check", json_object_new_string(check));
        json_object_object_add(r, "ok", json_object_new_boolean(ok));
        json_object_object_add(r, "detail", json_object_new_string(said));
        json_object_array_add(t->rows, r);
    } else {
        /* with the first row: a usage error after the config is read
         * (a bad --llm) prints nothing on stdout */
        if (!t->headed)
            printf("%-22s %-5s %s\n", "CHECK", "", "DETAIL");
        t->headed = true;
        printf("%-22s %-5s %s\n", check, ok ? "ok" : "FAIL", said);
    }
    free(said);
    if (!ok)
        t->failures++;
}

/* The document --json prints: every check, and whether all passed. */
static void emit(table *t)
{
    json_object *o = json_object_new_object();
    char *text;

    json_object_object_add(o, "tandem", json_object_new_int(1));
    json_object_object_add(o, "ok", json_object_new_boolean(!t->failures));
    json_object_object_add(o, "failures", json_object_new_int(t->failures));
    json_object_object_add(o, "checks", json_object_get(t->rows));
    text = tnd_json_pretty(o);
    if (tnd_report_emit(stdout, text) < 0)
        fprintf(stderr, "tandem doctor: %s\n", tnd_error_last());
    free(text);
    json_object_put(o);
}

/* The program a skill runs: argv[0], or for a /bin/sh -c string its first
 * word; NULL when that is a shell word we cannot check (cd, VAR=x, ...).
 * Caller frees. */
static char *skill_program(const tnd_command *cmd)
{
    static const char *const builtins[] = {"cd",   "exec",  "export", "set",
                                           "if",   "for",   "test",   "[",
                                           "true", "false", ":",      NULL};
    const char *s;
    size_t n = 0;

    if (!cmd->argv)
        return NULL;
    if (!cmd->shell)
        return tnd_xstrdup(cmd->argv[0]);
    s = cmd->display;
    while (isspace((unsigned char)*s))
        s++;
    while (s[n] && !isspace((unsigned char)s[n]) && !strchr(";&|()<>", s[n]))
        n++;
    if (n == 0 || memchr(s, '=', n))
        return NULL;
    for (int i = 0; builtins[i]; i++)
        if (strlen(builtins[i]) == n && strncmp(s, builtins[i], n) == 0)
            return NULL;
    return tnd_xstrndup(s, n);
}

/* Whether a skill's program can be run where the skill runs: in the
 * sandbox, as the sandbox sees the host (a program under $HOME or /tmp
 * is not there, and a doctor that looked on the host's PATH said ok
 * before the run refused it); unsandboxed, on the host's PATH. A
 * relative path is the workspace's, a copy of the repository's files.
 * found gets where it is, or why not. */
static bool skill_program_runs(char *found, size_t size,
                               const tnd_skill_config *skill, const char *prog,
                               const char *repo)
{
    char *where = NULL;
    bool ok;

    if (skill->sandbox != TND_SANDBOX_NONE) {
        ok = tnd_sandbox_resolve(&where, prog, getenv("PATH"), repo, NULL) == 0;
        snprintf(found, size, "%s", ok ? where : tnd_error_last());
        free(where);
        return ok;
    }
    if (prog[0] != '/' && strchr(prog, '/')) {
        where = tnd_fs_join(repo, prog);
        ok = access(where, X_OK) == 0;
        snprintf(found, size, ok ? "%s" : "%s is not an executable file",
                 where);
        free(where);
        return ok;
    }
    if (tnd_probe_program(found, size, prog))
        return true;
    snprintf(found, size, "%s is not an executable program on PATH", prog);
    return false;
}

/* The goals of a skill that runs make: the words after `make` (or
 * gmake), when every word is plain (no shell syntax, no -C or -f, which
 * move the Makefile, no VAR=value); NULL when the command is no such
 * make or names no goal. NULL-terminated, caller frees. */
static char **make_goals(const tnd_command *cmd)
{
    const char *s = cmd->display;
    char **w, **goals;
    size_t n = 0;

    if (!s || strpbrk(s, ";&|()<>$`'\"\\*?[~#"))
        return NULL;
    w = tnd_str_split_words(s);
    if (!w[0] || (strcmp(w[0], "make") != 0 && strcmp(w[0], "gmake") != 0)) {
        tnd_str_list_free(&w);
        return NULL;
    }
    for (char **p = w; *p; p++)
        n++;
    goals = tnd_xcalloc(n + 1, sizeof(char *));
    n = 0;
    for (char **p = w + 1; *p; p++) {
        /* an option whose value is the next word (-j 4) hides a goal */
        bool valued = strlen(*p) == 2 && **p == '-' && strchr("jloWI", (*p)[1]);
        if (valued || strchr(*p, '=') || tnd_str_starts_with(*p, "-C") ||
            tnd_str_starts_with(*p, "-f") ||
            tnd_str_starts_with(*p, "--directory") ||
            tnd_str_starts_with(*p, "--file") ||
            tnd_str_starts_with(*p, "--makefile")) {
            tnd_str_list_free(&goals);
            break;
        }
        if (**p != '-')
            goals[n++] = tnd_xstrdup(*p);
    }
    tnd_str_list_free(&w);
    return goals; /* none: make's default goal, still a Makefile's */
}

/* A row for each make target a skill names that the repository's
 * Makefile has no rule for. The rule lines are read, not run: `make -n`
 * would run $(shell ...) and remake the makefiles, which a check must not
 * do. When an include, or a target made of a variable or a pattern,
 * may name more than reading finds, nothing is said (the run's baseline
 * still stops a target that is not there, before any model is paid). */
static void check_make_targets(table *t, const char *check,
                               const tnd_skill_config *skill, const char *repo,
                               const tnd_config *cfg, bool builtin)
{
    char **goals = make_goals(&skill->command), **targets = NULL;
    const char *file = NULL;
    char detail[1024], fix[256];
    bool sure = false;

    if (!goals)
        return;
    if (builtin)
        snprintf(fix, sizeof(fix),
                 "write an agents.yaml whose skills fit this repository "
                 "(tandem init guesses one; skill %s is a built-in default)",
                 skill->name);
    else
        snprintf(fix, sizeof(fix), "fix skills.%s in agents.yaml", skill->name);
    if (tnd_init_make_targets(&targets, &file, &sure, repo) == TND_ENOTFOUND) {
        snprintf(detail, sizeof(detail), "`%s`: %s has no Makefile; %s",
                 skill->command.display, repo, fix);
        row(t, check, false, detail);
    } else if (file && !tnd_init_in_workspace(
                           repo, file, cfg->workspace.include_untracked)) {
        /* a Makefile ./configure wrote, git-ignored: the skills run on
         * the repository's files, where there is none */
        snprintf(detail, sizeof(detail),
                 "`%s`: %s is not one of git's files, and the skills run on "
                 "the repository's files (a copy without it); commit it, or "
                 "make it in the skill's command (e.g. ./configure && make)",
                 skill->command.display, file);
        row(t, check, false, detail);
    } else if (targets && sure) {
        for (char **g = goals; *g; g++)
            if (!tnd_str_list_has((const char *const *)targets, *g)) {
                snprintf(detail, sizeof(detail),
                         "`%s`: %s has no rule for target '%s'; %s",
                         skill->command.display, file, *g, fix);
                row(t, check, false, detail);
            }
    }
    tnd_str_list_free(&targets);
    tnd_str_list_free(&goals);
}

/* An agent's model: what it is (or what it lacks: then its key and
 * endpoint are not tried), its key, its endpoint. label names its section
 * in agents.yaml. */
static void check_agent(table *t, const char *role, const char *label,
                        const tnd_llm_config *llm, long timeout_ms)
{
    char check[64], detail[1536], *what;
    bool ok;

    snprintf(check, sizeof(check), "%s llm", role);
    if (tnd_llm_config_check(llm, label, true) < 0) {
        row(t, check, false, tnd_error_last());
        return;
    }
    what = tnd_llm_config_describe(llm);
    row(t, check, true, what);
    free(what);
    snprintf(check, sizeof(check), "%s key", role);
    ok = tnd_probe_key(detail, sizeof(detail), llm);
    row(t, check, ok, detail);
    snprintf(check, sizeof(check), "%s endpoint", role);
    ok = tnd_probe_endpoint(detail, sizeof(detail), llm, timeout_ms) == 0;
    row(t, check, ok, detail);
}

/* Whether the skills that run sandboxed can: bubblewrap found and able
 * to make a sandbox here (the reviewer's host, for local reviewers); and
 * which skills run without one. */
static void check_sandbox(table *t, const tnd_config *cfg)
{
    tnd_buf in, out, detail;
    const char *bwrap;

    tnd_buf_init(&in, 4096);
    tnd_buf_init(&out, 4096);
    tnd_buf_init(&detail, 8192);
    for (char **s = cfg->reviewer.skills; s && *s; s++) {
        const tnd_skill_config *skill = tnd_config_skill(cfg, *s);
        tnd_buf *list =
            skill && skill->sandbox == TND_SANDBOX_NONE ? &out : &in;
        if (skill && !*skill->builtin)
            tnd_buf_printf(list, "%s%s", list->len ? ", " : "", *s);
    }
    if (in.len && tnd_bwrap_check(&bwrap) < 0) {
        tnd_buf_printf(&detail, "%s; %s", tnd_error_last(), TND_BWRAP_FIX);
        row(t, "sandbox", false, tnd_buf_str(&detail));
    } else if (in.len || out.len) {
        if (in.len)
            tnd_buf_printf(&detail, "%s makes the sandbox of %s", bwrap,
                           tnd_buf_str(&in));
        if (out.len)
            tnd_buf_printf(&detail,
                           "%sunsandboxed (sandbox: none): %s, with the "
                           "host's files, processes and network",
                           in.len ? "; " : "", tnd_buf_str(&out));
        row(t, "sandbox", true, tnd_buf_str(&detail));
    }
    tnd_buf_free(&in);
    tnd_buf_free(&out);
    tnd_buf_free(&detail);
}

int tnd_doctor(const tnd_doctor_options *opts)
{
    table t = {0, opts->json ? json_object_new_array() : NULL, false};
    tnd_config *cfg = NULL;
    char *repo, *implicit, *runtime = NULL, detail[1536];
    const char *path;
    bool usage = false;
    int error;

    if (!(repo = tnd_fs_realpath(opts->repo ? opts->repo : "."))) {
        fprintf(stderr, "tandem doctor: --repo: %s\n", tnd_error_last());
        return TND_EXIT_USAGE;
    }
    implicit = tnd_fs_join(repo, "agents.yaml");
    path = opts->config ? opts->config
                        : (tnd_fs_exists(implicit) ? implicit : NULL);
    if (!path && tnd_config_check_name(repo) < 0) {
        fprintf(stderr, "tandem doctor: %s\n", tnd_error_last());
        json_object_put(t.rows);
        free(implicit);
        free(repo);
        return TND_EXIT_USAGE;
    }
    error = path ? tnd_config_load(&cfg, path) : 0;
    if (!path)
        cfg = tnd_config_defaults();
    if (error < 0 && t.rows) {
        /* the loader's report names the file and each place */
        row(&t, "config", false, tnd_error_last());
        goto out;
    } else if (error < 0) {
        row(&t, "config", false, path);
        printf("%s\n", tnd_error_last());
        goto out;
    }
    if ((opts->llm || opts->base_url) &&
        tnd_config_override_llm(cfg, opts->llm, opts->base_url) < 0) {
        if (opts->from_env)
            tnd_error_prefix("%s (read as an option)", opts->from_env);
        fprintf(stderr, "tandem doctor: %s\n", tnd_error_last());
        usage = true;
        goto out;
    }
    tnd_llm_secrets_register(cfg);
    row(&t, "config", true, path ? path : "built-in defaults (no agents.yaml)");
    if (!*cfg->orchestrator.endpoint &&
        (cfg->coder.count == 0 || cfg->reviewer.count == 0)) {
        /* agents that connect by themselves, with no endpoint: a
         * server's config, whose endpoint is tandem serve --bind (it
         * failed, and its keys went unchecked). Checked as a server's,
         * its keys on a tcp:// endpoint when it has CURVE */
        if (tnd_pool_check(cfg,
                           *cfg->orchestrator.curve_key ? "tcp://0.0.0.0:0"
                                                        : "ipc:///doctor",
                           true, true) < 0)
            row(&t, "agent programs", false, tnd_error_last());
        else
            row(&t, "agent programs", true,
                "found; agents with count 0 connect by themselves, to "
                "tandem serve --bind EP (tandem run needs "
                "orchestrator.endpoint)");
    } else if (tnd_crew_check(cfg, true) < 0) {
        row(&t, "agent programs", false, tnd_error_last());
    } else {
        row(&t, "agent programs", true, "found");
    }
    check_agent(&t, "coder", "agents.coder.llm", &cfg->coder.llm,
                opts->timeout_ms);
    if (tnd_config_quorum(cfg) > 1) {
        for (int m = 1; m <= tnd_config_quorum(cfg); m++) {
            char role[32], label[64];
            snprintf(role, sizeof(role), "reviewer.%d", m);
            if ((size_t)m <= cfg->reviewer.nmodels)
                snprintf(label, sizeof(label), "agents.reviewer.models[%d]",
                         m - 1);
            else
                snprintf(label, sizeof(label), "agents.reviewer.llm");
            check_agent(&t, role, label, tnd_config_member_llm(cfg, m),
                        opts->timeout_ms);
        }
    } else {
        check_agent(&t, "reviewer", "agents.reviewer.llm", &cfg->reviewer.llm,
                    opts->timeout_ms);
    }
    /* where the agents, workspaces and the sandbox probe live: without
     * it, nothing runs, and the sandbox check would blame bubblewrap */
    if ((runtime = tnd_rundir_base())) {
        row(&t, "runtime directory", true, runtime);
        check_sandbox(&t, cfg);
    } else {
        row(&t, "runtime directory", false, tnd_error_last());
    }
    for (char **s = cfg->reviewer.skills; s && *s; s++) {
        const tnd_skill_config *skill = tnd_config_skill(cfg, *s);
        char check[80], found[1024];
        char *prog = skill ? skill_program(&skill->command) : NULL;
        snprintf(check, sizeof(check), "skill %s", *s);
        if (skill && skill->builtin && *skill->builtin) {
            snprintf(detail, sizeof(detail), "built in (%s)", skill->builtin);
            row(&t, check, true, detail);
        } else if (!prog)
            row(&t, check, true,
                skill ? "a shell command; its program is not checked"
                      : "not defined");
        else if (skill_program_runs(found, sizeof(found), skill, prog, repo)) {
            snprintf(detail, sizeof(detail), "%s (%s)", prog, found);
            row(&t, check, true, detail);
            check_make_targets(&t, check, skill, repo, cfg, !path);
        } else {
            row(&t, check, false, found);
        }
        free(prog);
    }
out:
    if (!usage && t.rows)
        emit(&t);
    else if (!usage && t.failures)
        printf("\ndoctor: %d check%s failed\n", t.failures,
               t.failures == 1 ? "" : "s");
    else if (!usage)
        printf("\ndoctor: everything is in place\n");
    json_object_put(t.rows);
    tnd_config_destroy(&cfg);
    free(runtime);
    free(implicit);
    free(repo);
    if (usage)
        return TND_EXIT_USAGE;
    return t.failures ? TND_EXIT_FAILED : TND_EXIT_OK;
}
