/* Running configured skills (see skill.h). */
#include "skills/skill.h"

#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/error.h"
#include "common/fs.h"
#include "common/glob.h"
#include "common/log.h"
#include "common/str.h"
#include "common/utf8.h"
#include "common/xalloc.h"
#include "proto/body.h"
#include "skills/builtin.h"
#include "skills/bwrap.h"
#include "skills/env.h"
#include "skills/cgroup.h"
#include "skills/diskuse.h"
#include "skills/proc.h"
#include "skills/ptree.h"
#include "skills/sandbox.h"

/* Processes (and threads) the sandbox itself adds to a skill's: bwrap,
 * or the enter program (skills/holder.h), and the init of the skill's
 * pid namespace. */
#define SANDBOX_TASKS 2
/* Room above the count RLIMIT_NPROC is set to when no cgroup counts
 * (see limit_processes): the user's other processes come and go. */
#define NPROC_SLACK 16

/* Whether the command ran as itself: no sandbox and no shell between,
 * to report a signal's death as an exit with 128 + N. A shell is any
 * program named like one, or env starting one ([env, bash, -c, ...]). */
static bool runs_plain(const tnd_skill_config *skill)
{
    static const char *const shells[] = {"sh",  "bash", "dash", "zsh",
                                         "ksh", "mksh", "ash",  "env"};
    char **argv = skill->command.argv;
    const char *base, *slash;

    if (skill->sandbox != TND_SANDBOX_NONE || !argv || !argv[0])
        return false;
    base = (slash = strrchr(argv[0], '/')) ? slash + 1 : argv[0];
    for (size_t i = 0; i < sizeof(shells) / sizeof(*shells); i++)
        if (strcmp(base, shells[i]) == 0)
            return false;
    return true;
}

/* The words for a run a limit ended: a signal (which a shell, and bwrap,
 * report as an exit with 128 + N) that the limit sends. NULL for none.
 * A command that ran as itself is only ever ended by a real signal: an
 * exit of 152 is its own (a review found it called a CPU limit). */
static char *limit_words(const tnd_skill_config *skill,
                         const tnd_proc_result *res)
{
    int sig = res->status == TND_PROC_SIGNALED ? res->signal
              : res->status == TND_PROC_EXITED && res->exit_code > 128 &&
                      !runs_plain(skill)
                  ? res->exit_code - 128
                  : 0;

    if (sig == SIGXFSZ && skill->limits.file_bytes)
        return tnd_xasprintf("killed: a file grew past the %zu MiB limit "
                             "(limits.file_mb)",
                             skill->limits.file_bytes >> 20);
    if (sig == SIGXCPU && skill->limits.cpu_s)
        return tnd_xasprintf("killed: CPU time limit of %ld s "
                             "(limits.cpu_s)",
                             skill->limits.cpu_s);
    return NULL;
}

/* How a run ended when it did not end by exiting itself, in words; NULL
 * for an exit of its own. disk: it was stopped for what it wrote in the
 * workspace (limits.disk_mb). */
static char *ended_words(const tnd_skill_config *skill,
                         const tnd_proc_result *res, bool disk)
{
    char *words = limit_words(skill, res);

    if (words)
        return words;
    if (disk)
        return tnd_xasprintf("killed: wrote more than %zu MiB in the "
                             "workspace (limits.disk_mb)",
                             skill->limits.disk_bytes >> 20);
    switch (res->status) {
    case TND_PROC_STOPPED:
        return tnd_xasprintf("killed: over the %ld-process limit "
                             "(limits.processes)",
                             skill->limits.processes);
    case TND_PROC_TIMEOUT:
        return tnd_xasprintf("timed out after %d s (timeout_s)",
                             skill->timeout_s);
    case TND_PROC_SIGNALED:
    case TND_PROC_CANCELLED:
        return tnd_xstrdup(tnd_proc_describe(res));
    case TND_PROC_EXITED:
        break;
    }
    return NULL;
}

bool tnd_skill_applies(const tnd_skill_config *skill,
                       const char *const *touched)
{
    if (!skill->paths || !skill->paths[0])
        return true;
    for (const char *const *t = touched; t && *t; t++)
        if (tnd_glob_match_any(skill->paths, *t))
            return true;
    return false;
}

void tnd_skill_skip(tnd_skill_result *out, const tnd_skill_config *skill,
                    const char *why)
{
    memset(out, 0, sizeof(*out));
    out->name = tnd_xstrdup(skill->name);
    out->required = skill->required;
    if (*skill->builtin)
        out->command = tnd_xasprintf("builtin: %s", skill->builtin);
    else
        out->command =
            tnd_xstrdup(skill->command.display ? skill->command.display : "");
    out->status = TND_SKILL_SKIPPED;
    out->exit_code = -1;
    out->output = tnd_xstrdup(why);
}

/* The captured output as valid UTF-8: a test that prints a Latin-1 name
 * or a binary record must not make the reply, the journal or a prompt
 * invalid. NUL bytes would cut the text short; they are replaced too.
 * A replacement takes three bytes, so the text is cut to cap again. What
 * was replaced is said at the end. Caller frees. */
static char *clean_output(const tnd_proc_result *res, size_t cap)
{
    size_t replaced = 0;
    char *text = tnd_utf8_clean(res->output ? res->output : "",
                                res->output ? res->output_len : 0, &replaced);
    char *with;

    if (!replaced)
        return text;
    if (strlen(text) > cap) {
        with = tnd_str_cut_middle(text, cap);
        free(text);
        text = with;
    }
    with =
        tnd_xasprintf("%s%s[tandem: %zu byte%s of this output that were "
                      "not valid UTF-8 are shown as U+FFFD]\n",
                      text, *text && text[strlen(text) - 1] != '\n' ? "\n" : "",
                      replaced, replaced == 1 ? "" : "s");
    free(text);
    return with;
}

/* How a sandboxed skill is started. */
typedef struct start_how {
    const char *bwrap;      /* the program, for a sandbox of its own */
    tnd_holder *holder;     /* the reviewer's; NULL: none */
    bool own;               /* start bwrap even with a holder */
    bool entered;           /* after sandbox_argv: it enters the holder */
    tnd_holder_entry entry; /* then: which holder, the nonce */
} start_how;

/* The command line that runs skill's command in a sandbox made from
 * the holder (holder.h), or else in a bwrap of its own (sandbox.h), its
 * program found as the sandbox sees it. -1 with the reason. */
static int sandbox_argv(char ***out, const tnd_skill_config *skill,
                        const tnd_skill_ctx *ctx, start_how *how)
{
    char *const *envp = ctx->envp;
    const char **argv;
    char *prog = NULL, *dir = NULL;
    tnd_sandbox_spec sb;
    size_t n = 0;

    *out = NULL;
    if (ctx->dir[0] != '/' && !(dir = tnd_fs_realpath(ctx->dir)))
        return -1;
    if (tnd_sandbox_resolve(&prog, skill->command.argv[0],
                            tnd_env_get(envp, "PATH"), dir ? dir : ctx->dir,
                            NULL) < 0) {
        free(dir);
        return -1;
    }
    while (skill->command.argv[n])
        n++;
    argv = tnd_xcalloc(n + 1, sizeof(*argv));
    argv[0] = prog;
    for (size_t i = 1; i < n; i++)
        argv[i] = skill->command.argv[i];
    memset(&sb, 0, sizeof(sb));
    sb.bwrap = how->bwrap;
    sb.workspace = dir ? dir : ctx->dir;
    sb.argv = argv;
    sb.home = tnd_env_get(envp, "HOME");
    sb.tmpdir = tnd_env_get(envp, "TMPDIR");
    sb.network = skill->network;
    /* a tmpfs's pages count against no rlimit: each is bounded by the
     * skill's memory limit instead (or TND_SANDBOX_TMPFS_MB) */
    sb.memory_bytes = skill->limits.memory_bytes;
    if (!how->own)
        *out = tnd_holder_argv(how->holder, &sb, &how->entry);
    how->entered = *out != NULL;
    if (!*out)
        *out = tnd_sandbox_argv(&sb);
    free(argv);
    free(prog);
    free(dir);
    return 0;
}

/* How the process limit is kept while a skill runs (see
 * limit_processes). */
typedef struct watcher {
    tnd_cgroup *cg;   /* the skill's pids cgroup, or NULL */
    long max;         /* the skill's processes, at most */
    long adjust;      /* the skill's processes minus those below the one
                         tandem started: -1 sandboxed (the init of its
                         pid namespace is below bwrap or the enter
                         program), 1 run directly */
    bool refused;     /* after the run: the cgroup refused a fork */
    tnd_diskuse disk; /* what it wrote in the workspace */
} watcher;

/* Has the skill gone over its process limit? With a cgroup, the kernel
 * refused it a fork; else its tree, counted below the process tandem
 * started (bwrap or the enter program: its namespace's init, then the
 * command and what it started; a command run directly: what it
 * started), is too big. */
static int over_limit(int pid, void *payload)
{
    watcher *w = payload;
    long n;

    if (tnd_diskuse_over(&w->disk))
        return 1;
    if (!w->max)
        return 0;
    if (w->cg)
        return tnd_cgroup_refused(w->cg);
    n = tnd_ptree_count_below(pid, w->max + 2) + w->adjust;
    return n > w->max;
}

/* The process limit: a pids cgroup of the skill's own when the host
 * gives one (exact, and it binds root too); else RLIMIT_NPROC set that
 * many processes above what the user runs now (the kernel counts all of
 * a user's processes, in every namespace; and never root's), and the
 * skill's tree counted. Either way a skill over it is killed. */
static void limit_processes(tnd_proc_spec *spec, watcher *w,
                            const tnd_skill_config *skill, bool sandboxed)
{
    static atomic_flag warned = ATOMIC_FLAG_INIT;
    long extra = sandboxed ? SANDBOX_TASKS : 0;

    if (skill->limits.processes <= 0)
        return;
    w->max = skill->limits.processes;
    w->adjust = sandboxed ? -1 : 1;
    spec->watch = over_limit;
    spec->watch_payload = w;
    if ((w->cg = tnd_cgroup_new(w->max + extra))) {
        spec->cgroup_join_fd = tnd_cgroup_join_fd(w->cg);
        return;
    }
    if (!atomic_flag_test_and_set(&warned))
        tnd_log_warn("skills' process limits: %s; %s", tnd_error_last(),
                     getuid() == 0
                         ? "as root, RLIMIT_NPROC does not bind either, so "
                           "a skill's processes are only counted, every "
                           "50 ms, and it is killed when over"
                         : "RLIMIT_NPROC is set above the user's own "
                           "processes instead");
    spec->rlimit_nproc =
        tnd_ptree_count_user(getuid()) + w->max + extra + NPROC_SLACK;
}

static void fail_result(tnd_skill_result *out, tnd_isolation sandbox,
                        const char *why)
{
    out->status = TND_SKILL_ERROR;
    out->exit_code = -1;
    out->sandbox = sandbox;
    out->output = tnd_xasprintf("%s\n", why);
}

/* Run skill's command once (sandboxed as how says). 0 with *res, and
 * *disk whether it wrote more than limits.disk_mb in the workspace (it
 * is stopped then, or failed if it ended first); -1 with the reason when
 * it could not start. */
static int run_once(tnd_proc_result *res, bool *disk,
                    const tnd_skill_config *skill, const tnd_skill_ctx *ctx,
                    start_how *how, size_t cap)
{
    bool sandboxed = skill->sandbox == TND_SANDBOX_BWRAP;
    tnd_proc_spec spec;
    char **argv = NULL, **envp = NULL;
    watcher w;
    int rc;

    memset(res, 0, sizeof(*res));
    if (sandboxed && sandbox_argv(&argv, skill, ctx, how) < 0)
        return -1;
    if (how->entered)
        envp = tnd_holder_envp(&how->entry, ctx->envp);
    memset(&spec, 0, sizeof(spec));
    spec.argv = (const char *const *)(argv ? argv : skill->command.argv);
    spec.cwd = ctx->dir;
    spec.envp = (const char *const *)(envp ? envp : ctx->envp);
    spec.timeout_ms = (long)skill->timeout_s * 1000;
    spec.output_cap = cap;
    spec.merge_stderr = 1;
    spec.cancel = ctx->cancel;
    spec.rlimit_cpu_s = skill->limits.cpu_s;
    spec.rlimit_as_bytes = skill->limits.memory_bytes;
    spec.rlimit_fsize_bytes = skill->limits.file_bytes;
    /* the reviewer's session keyring, and the user's keys it links, stay
     * out of the sandbox */
    spec.new_keyring = sandboxed;
    memset(&w, 0, sizeof(w));
    /* what it writes in the workspace, asked at each tick and at the
     * end (a skill may write it all within one) */
    tnd_diskuse_start(&w.disk, ctx->dir, skill->limits.disk_bytes);
    if (skill->limits.disk_bytes) {
        spec.watch = over_limit;
        spec.watch_payload = &w;
    }
    limit_processes(&spec, &w, skill, sandboxed);

    rc = tnd_proc_run(res, &spec);
    *disk = rc == 0 && tnd_diskuse_over(&w.disk);
    if (*disk)
        res->status = TND_PROC_STOPPED;
    w.refused = w.cg && tnd_cgroup_refused(w.cg);
    tnd_cgroup_destroy(&w.cg); /* and whatever is left in it */
    tnd_str_list_free(&argv);
    tnd_str_list_free(&envp);
    /* the kernel refused it a fork at the limit, and it gave up: a
     * shell does at once, before a look could see it over */
    if (rc == 0 && w.refused && res->status == TND_PROC_EXITED &&
        res->exit_code != 0)
        res->status = TND_PROC_STOPPED;
    return rc;
}

void tnd_skill_run(tnd_skill_result *out, const tnd_skill_config *skill,
                   const tnd_skill_ctx *ctx)
{
    tnd_proc_result res;
    size_t cap = skill->output_cap;
    bool sandboxed = skill->sandbox == TND_SANDBOX_BWRAP;
    start_how how;
    bool enter_failed, disk = false;
    int rc;

    if (*skill->builtin) {
        tnd_builtin_run(out, skill, ctx->dir, ctx->diff);
        return;
    }
    memset(out, 0, sizeof(*out));
    memset(&res, 0, sizeof(res));
    out->name = tnd_xstrdup(skill->name);
    out->required = skill->required;
    out->command = tnd_xstrdup(skill->command.display);
    out->sandbox = sandboxed ? TND_ISOLATION_BWRAP : TND_ISOLATION_NONE;
    memset(&how, 0, sizeof(how));
    how.holder = ctx->holder;
    if (sandboxed && tnd_bwrap_check(&how.bwrap) < 0) {
        char *why =
            tnd_xasprintf("%s\nfix: %s", tnd_error_last(), TND_BWRAP_FIX);
        fail_result(out, TND_ISOLATION_UNAVAILABLE, why);
        free(why);
        return;
    }
    /* room in the reply for the failure lines proc keeps from an omitted
     * middle, the markers and the "[tandem: ...]" line */
    if (cap == 0 || cap > TND_BODY_MAX_OUTPUT - 4096 - TND_PROC_MIDDLE_MAX)
        cap = TND_BODY_MAX_OUTPUT - 4096 - TND_PROC_MIDDLE_MAX;

    rc = run_once(&res, &disk, skill, ctx, &how, cap);
    enter_failed = rc == 0 && how.entered && res.status == TND_PROC_EXITED &&
                   tnd_holder_failed(&how.entry, res.output, &res.output_len,
                                     res.exit_code);
    if (enter_failed && res.exit_code == TND_HOLDER_NOT_ENTERED) {
        /* its sandbox could not be made from the reviewer's (it ended?):
         * the command never started, so it runs in a sandbox of its own */
        char *why = tnd_xstrndup(res.output, strcspn(res.output, "\n"));
        tnd_log_warn("skill %s: %s; it runs in a sandbox of its own",
                     skill->name, why);
        tnd_holder_refused(how.holder, &how.entry, why);
        free(why);
        tnd_proc_result_free(&res);
        how.own = true;
        enter_failed = false;
        rc = run_once(&res, &disk, skill, ctx, &how, cap);
    } else if (rc == 0 && how.entered) {
        tnd_holder_entered(how.holder, &how.entry);
    }
    if (rc < 0) {
        fail_result(out, out->sandbox, tnd_error_last());
        tnd_proc_result_free(&res);
        return;
    }
    out->duration_ms = res.duration_ms;
    out->output = clean_output(&res, cap);
    switch (res.status) {
    case TND_PROC_EXITED:
        out->exit_code = res.exit_code;
        out->status = res.exit_code == 0 ? TND_SKILL_PASS : TND_SKILL_FAIL;
        /* bwrap could not set the sandbox up or start the command: it
         * says why, first, and exits 1. Only a skill in a bwrap of its
         * own has one; entered, those words are the command's. */
        if (sandboxed && !how.entered && res.exit_code == 1 &&
            strncmp(out->output, "bwrap: ", 7) == 0)
            out->status = TND_SKILL_ERROR;
        /* nor could the enter program (holder.h) */
        if (enter_failed)
            out->status = TND_SKILL_ERROR;
        break;
    case TND_PROC_TIMEOUT:
        out->exit_code = -1;
        out->status = TND_SKILL_TIMEOUT;
        break;
    case TND_PROC_SIGNALED:
    case TND_PROC_STOPPED:
        out->exit_code = -1;
        out->status = TND_SKILL_FAIL;
        break;
    case TND_PROC_CANCELLED:
        out->exit_code = -1;
        out->status = TND_SKILL_ERROR;
        break;
    }
    if (res.status == TND_PROC_STOPPED) {
        out->exit_code = -1;
        out->status = TND_SKILL_FAIL;
    }
    out->ended = ended_words(skill, &res, disk);
    if (res.status != TND_PROC_EXITED || res.exit_code != 0) {
        /* say how it ended at the end of the output, where people look */
        char *with = tnd_xasprintf(
            "%s%s[tandem: %s %s]\n", out->output,
            *out->output && out->output[strlen(out->output) - 1] != '\n' ? "\n"
                                                                         : "",
            skill->name, out->ended ? out->ended : tnd_proc_describe(&res));
        free(out->output);
        out->output = with;
    }
    tnd_proc_result_free(&res);
}

const char *tnd_skill_summary(const tnd_skill_result *r)
{
    static _Thread_local char line[256];

    if (r->status == TND_SKILL_FAIL && r->exit_code >= 0)
        snprintf(line, sizeof(line), "%s: fail (exit %d, %.1fs)", r->name,
                 r->exit_code, r->duration_ms / 1000.0);
    else
        snprintf(line, sizeof(line), "%s: %s (%.1fs)", r->name,
                 tnd_skill_status_name(r->status), r->duration_ms / 1000.0);
    return line;
}
