/* A run's preparation (see loop.h, tnd_loop_prepare): the configuration
 * resolved and checked, the keys, the runtime directory, --record's
 * target, tandem's own files hidden from the coder, and for a review the
 * change read as edits. Every mistake here is exit 2, said before a
 * session is made, an agent started or a model paid. */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agents/llm.h"
#include "common/config.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/xalloc.h"
#include "orchestrator/apply.h"
#include "orchestrator/change.h"
#include "orchestrator/crew.h"
#include "orchestrator/loop.h"
#include "orchestrator/own_files.h"
#include "orchestrator/rundir.h"
#include "orchestrator/session.h"
#include "orchestrator/unidiff.h"
#include "proto/body.h"

/* A model on its provider's own API without its key would fail at its
 * first call, after the session and the agents started: said now, as a
 * configuration error. coder: whether the coder's model is used. An
 * agent this tandem does not start (count: 0, connecting from outside)
 * brings its own model and key. */
static int check_keys(const tnd_config *cfg, bool coder)
{
    const tnd_llm_config *llm = NULL;
    const char *var = NULL, *who = NULL;
    char *model;
    int error;

    if (coder && cfg->coder.count > 0 &&
        (var = tnd_llm_key_missing(&cfg->coder.llm))) {
        llm = &cfg->coder.llm;
        who = "the coder's";
    } else if (cfg->reviewer.count > 0 &&
               (var = tnd_llm_key_missing(&cfg->reviewer.llm))) {
        llm = &cfg->reviewer.llm;
        who = "the reviewer's";
    }
    for (size_t i = 0;
         !var && cfg->reviewer.count > 0 && i < cfg->reviewer.nmodels; i++)
        if ((var = tnd_llm_key_missing(&cfg->reviewer.models[i]))) {
            llm = &cfg->reviewer.models[i];
            who = "a reviewer quorum member's";
        }
    if (!var)
        return 0;
    model = tnd_llm_config_describe(llm);
    error = tnd_error_config(
        "%s model (%s) needs an API key, and %s is not set: export it, or "
        "use another model with --llm PROVIDER:MODEL (and --base-url URL "
        "for a server of your own)",
        who, model, var);
    free(model);
    return error;
}

/* A replay cassette that is there but no valid cassette (not JSON, cut
 * short, an exchange it cannot read) stopped the agent that opened it,
 * after the session began: a run failed (exit 1) and a review could not
 * be done (exit 4) for what is a configuration mistake. Read each one as
 * the replay will, once per file; the coder's only when it is used. */
static int check_cassettes(const tnd_config *cfg, bool coder)
{
    const tnd_llm_config *llm;
    char label[64];

    for (size_t i = 0; i < cfg->reviewer.nmodels + 2; i++) {
        bool seen = false;
        tnd_llm *l;

        if (i == 0) {
            llm = &cfg->coder.llm;
            snprintf(label, sizeof(label), "agents.coder.llm");
        } else if (i == 1) {
            llm = &cfg->reviewer.llm;
            snprintf(label, sizeof(label), "agents.reviewer.llm");
        } else {
            llm = &cfg->reviewer.models[i - 2];
            snprintf(label, sizeof(label), "agents.reviewer.models[%zu]",
                     i - 2);
        }
        if (llm->provider != TND_PROVIDER_REPLAY || (i == 0 && !coder))
            continue;
        for (size_t k = coder ? 0 : 1; k < i && !seen; k++) {
            const tnd_llm_config *o = k == 0   ? &cfg->coder.llm
                                      : k == 1 ? &cfg->reviewer.llm
                                               : &cfg->reviewer.models[k - 2];
            seen = o->provider == TND_PROVIDER_REPLAY &&
                   strcmp(o->cassette, llm->cassette) == 0;
        }
        if (seen)
            continue;
        if (!(l = tnd_llm_new(llm)))
            return tnd_error_config("%s.cassette: %s; record it again "
                                    "(tandem run --record FILE with a live "
                                    "model) or name another",
                                    label, tnd_error_last());
        tnd_llm_destroy(&l);
    }
    return 0;
}

/* The server's config for a session of it that reads path: the file
 * it loaded, holding the bytes it read then, and this run changing
 * nothing in it (--llm, --insecure). Parsing the file again would give
 * the same config; NULL: load it. */
static const tnd_config *server_config(const run *r, const char *path)
{
    const tnd_config *c = r->host ? r->host->config : NULL;
    const tnd_run_options *o = &r->opts;

    if (!c || !c->path || strcmp(path, c->path) != 0 || o->llm || o->base_url ||
        o->insecure || !tnd_config_unchanged(path, c->digest))
        return NULL;
    return c;
}

/* Resolve the configuration: exit 2 on any mistake, before anything is
 * created. r->repo is set. */
static int load_config(run *r)
{
    const tnd_run_options *o = &r->opts;
    char *implicit = tnd_fs_join(r->repo, "agents.yaml");
    const char *path = o->config;
    int error = 0;

    if (!path && !r->host && tnd_fs_exists(implicit))
        path = implicit;
    if (!path && !r->host && tnd_config_check_name(r->repo) < 0) {
        free(implicit);
        return TND_ECONFIG;
    }
    if (!path || !(r->cfg = server_config(r, path))) {
        if (path)
            error = tnd_config_load(&r->own_cfg, path);
        else
            r->own_cfg = tnd_config_defaults();
        r->cfg = r->own_cfg;
    }
    r->builtin_config = !path;
    if (!path && !r->host && !o->quiet)
        fprintf(r->err,
                "tandem: no %s and no --config: using the built-in defaults "
                "(`tandem init` writes an agents.yaml for this "
                "repository)\n",
                implicit);
    free(implicit);
    if (error < 0)
        return error == TND_ECONFIG ? TND_ECONFIG : -1;
    if (path && r->host && r->host->config &&
        strcmp(r->cfg->digest, r->host->config->digest) != 0)
        /* the server's agents run with what it held then: a session with
         * other gate rules, skills or models than theirs judged evidence
         * it did not ask for */
        return tnd_error_config("%s changed since tandem serve started, "
                                "and the server's agents run with what it "
                                "held then; restart tandem serve to use it "
                                "(tandem serve stops with SIGTERM; queued "
                                "sessions go on at the next start)",
                                path);
    if ((o->llm || o->base_url) &&
        tnd_config_override_llm(r->own_cfg, o->llm, o->base_url) < 0) {
        if (o->from_env) /* no --llm was given: say where it came from */
            tnd_error_prefix("%s (read as an option)", o->from_env);
        return TND_ECONFIG;
    }
    if (o->insecure)
        r->own_cfg->orchestrator.insecure = true;
    /* a model may echo a key into what this process writes */
    tnd_llm_secrets_register(r->cfg);
    /* what the loader cannot know: whether the files named exist now, and
     * what --llm made of the models */
    if (tnd_config_check_llms(r->cfg, true) < 0 ||
        /* a server's sessions use its agents, checked when it started */
        (!r->host && tnd_crew_check(r->cfg, !r->opts.review) < 0) ||
        (!r->host && check_cassettes(r->cfg, !r->opts.review) < 0))
        return TND_ECONFIG;
    if (!r->no_model && check_keys(r->cfg, !r->opts.review) < 0) {
        r->no_key = true;
        return TND_ECONFIG;
    }
    if (o->record && r->cfg->coder.llm.provider == TND_PROVIDER_REPLAY &&
        r->cfg->reviewer.llm.provider == TND_PROVIDER_REPLAY)
        return tnd_error_config("--record records a live model's answers, "
                                "but both agents replay a cassette; add "
                                "--llm PROVIDER:MODEL");
    r->gate = r->cfg->gate;
    if (r->host) /* no terminal: a person answers with a command */
        r->mode = r->gate.escalate == TND_ESCALATE_NEVER ? TND_ESCALATE_NEVER
                                                         : TND_ESCALATE_QUEUE;
    else if (r->gate.escalate == TND_ESCALATE_AUTO)
        /* a terminal this run is in the foreground of: one started with
         * & has none to ask on (person.c asks again at the question) */
        r->mode = isatty(STDIN_FILENO) && tcgetpgrp(STDIN_FILENO) == getpgrp()
                      ? TND_ESCALATE_TTY
                      : TND_ESCALATE_QUEUE;
    else
        r->mode = r->gate.escalate;
    return 0;
}

/* tandem's own files inside the repository are not the coder's business,
 * nor a change's (own_files.h): the config, cassettes and command files
 * this run uses, then agents.yaml, which a run without --config takes.
 * r->in_use counts the first. */
static void hide_own_files(run *r)
{
    /* room for agents.yaml and the NULL after */
    size_t n = tnd_own_files(
        r->hidden, sizeof(r->hidden) / sizeof(*r->hidden) - 2, r->cfg, r->repo);
    bool listed = false;

    r->in_use = n;
    for (size_t k = 0; k < n; k++)
        listed = listed || strcmp(r->hidden[k], "agents.yaml") == 0;
    if (!listed)
        r->hidden[n++] = tnd_xstrdup("agents.yaml");
    tnd_error_clear();
}

static void collect_required(run *r)
{
    size_t n = 0;

    for (char **p = r->cfg->reviewer.skills; p && *p; p++)
        n++;
    r->required = tnd_xcalloc(n + 1, sizeof(char *));
    n = 0;
    for (char **p = r->cfg->reviewer.skills; p && *p; p++) {
        const tnd_skill_config *s = tnd_config_skill(r->cfg, *p);
        if (s && s->required)
            r->required[n++] = tnd_xstrdup(*p);
    }
}

/* The error said names the change it is about. */
static void change_prefix(const run *r)
{
    if (r->opts.diff && r->opts.diff_label)
        tnd_error_prefix("%s", r->opts.diff_label);
    else if (r->opts.diff && strcmp(r->opts.diff, "-") != 0)
        tnd_error_prefix("--diff %s", r->opts.diff);
    else
        tnd_error_prefix(r->opts.diff ? "the diff on stdin"
                                      : "the git changes");
}

/* The error for path, size bytes (when: "" or " once edited"), over
 * what a change may edit. -1. */
static int too_large_file(const char *path, long long size, const char *when)
{
    return tnd_error_set("%s is too large to review%s (%lld KiB; a file a "
                         "change edits may be at most %d KiB): review the "
                         "rest with --diff FILE, or commit it with git "
                         "commit --no-verify",
                         path, when, (size + 1023) / 1024,
                         TND_BODY_MAX_FILE / 1024);
}

/* A hunk of a file larger than a file of a change may be, or hunks
 * that take one past it: the workspace cannot hold it, and the review
 * rejected the change (exit 1, "the proposal could not be applied:
 * big.txt is larger than 4194304 bytes", or "edit 1 makes big.txt
 * larger than 4194304 bytes") though nothing was judged. Said now, as
 * the file created or deleted whole is. A diff's hunks of a file come
 * one after another, each changing the size by what it adds less what
 * it takes away. -1 naming it. */
static int too_large(const run *r)
{
    long long size = -1; /* of the file the hunks before left; -1: none */

    if (!r->change.base)
        return 0; /* a session only made: the run that goes on checks */
    for (size_t i = 0; i < r->nedits; i++) {
        const tnd_edit *e = &r->edits[i];
        char *full;
        struct stat st;

        if (e->kind != TND_EDIT_REPLACE) {
            size = -1;
            continue;
        }
        if (i == 0 || r->edits[i - 1].kind != TND_EDIT_REPLACE ||
            strcmp(r->edits[i - 1].path, e->path) != 0) {
            full = tnd_fs_join(r->change.base, e->path);
            size = lstat(full, &st) == 0 && S_ISREG(st.st_mode)
                       ? (long long)st.st_size
                       : -1;
            free(full);
            if (size > TND_BODY_MAX_FILE)
                return too_large_file(e->path, size, "");
        }
        if (size < 0)
            continue;
        size += (long long)strlen(e->replace) - (long long)strlen(e->search);
        if (size > TND_BODY_MAX_FILE)
            return too_large_file(e->path, size, " once edited");
    }
    return 0;
}

/* The change to review, as edits, and its base tree; one attempt. A
 * resumed review takes its diff from the session, where the first run
 * kept it. */
static int prepare_review(run *r)
{
    /* a session only made (a server's hub thread) exports no tree: the
     * run that goes on exports it again, and a large tree's checkout
     * stalled the server's broker past its agents' heartbeats */
    char *base = r->create_only ? NULL : tnd_rundir_base();
    char *kept =
        r->session ? tnd_session_path(r->session, "change.diff") : NULL;
    const char *secret;
    int rc = -1;

    if (base || r->create_only)
        rc = tnd_change_load(&r->change, r->repo, kept ? kept : r->opts.diff,
                             kept ? NULL : r->opts.diff_label, r->opts.staged,
                             r->review_rev, base);
    free(kept);
    free(base);
    if (rc < 0)
        return rc;
    /* a key in the change: every file tandem writes masks it, so the
     * change kept (change.diff) would not be the one reviewed; and a
     * commit must not take it */
    if ((secret = tnd_llm_secret_in(r->cfg, r->change.diff)))
        return tnd_error_config("the change holds the value of %s, a "
                                "secret: a key must never be committed, "
                                "and tandem keeps it out of every file it "
                                "writes; take it out of the change",
                                secret);
    if (tnd_unidiff_change(&r->edits, &r->nedits, &r->modes, &r->nmodes,
                           r->change.diff, strlen(r->change.diff)) < 0) {
        change_prefix(r);
        return TND_ECONFIG;
    }
    /* a file git converts on checkout: reviewed as the commit's checkout */
    if (tnd_converted_edits(&r->edits, &r->nedits, r->change.converted,
                            r->change.nconverted) < 0)
        return TND_ECONFIG;
    if (too_large(r) < 0) {
        change_prefix(r);
        return TND_ECONFIG;
    }
    /* a patch of one, against the work tree: git's own, which no tree
     * here holds (it was rejected as "not made against this tree") */
    if (r->opts.diff && !r->review_rev && !r->create_only) {
        char *named = r->opts.diff_label ? tnd_xstrdup(r->opts.diff_label)
                      : strcmp(r->opts.diff, "-") == 0
                          ? tnd_xstrdup("the diff on stdin")
                          : tnd_xasprintf("--diff %s", r->opts.diff);
        rc = tnd_converted_check_patch(r->repo, r->edits, r->nedits, named);
        free(named);
        if (rc < 0)
            return rc;
    }
    /* a change may not configure its own review (a pull request whose
     * agents.yaml made the reviewer a program saying "approve" was
     * approved by it, and its agents and skills ran as it said) */
    for (size_t i = 0; i < r->nedits; i++)
        for (size_t k = 0; k < r->in_use; k++) {
            const char *f = r->hidden[k];
            if (strcmp(r->edits[i].path, f) != 0)
                continue;
            /* a file the change creates has no version to review with
             * (tandem init, then the hook: the first commit of
             * agents.yaml was told to `git show HEAD:agents.yaml`) */
            if (r->edits[i].kind == TND_EDIT_WRITE)
                return tnd_error_config(
                    "the change adds %s, which this review would run with: "
                    "a change may not configure its own review. Read it, "
                    "then commit it on its own with git commit --no-verify "
                    "(later changes are reviewed with it), or review the "
                    "rest without it (--diff FILE)",
                    f);
            return tnd_error_config(
                "the change modifies %s, which this review runs with: a "
                "change may not configure its own review. Review it with "
                "the configuration it comes to: --config FILE outside the "
                "repository (for example, git show HEAD:%s > FILE); or "
                "read the change to %s, then commit it on its own with git "
                "commit --no-verify",
                f, f, f);
        }
    r->gate.max_iterations = 1;
    return 0;
}

/* --record FILE: a file that is there already is replaced only when it is
 * a cassette (recording the same task again); --record stats.c replaced
 * a source file, and --record agents.yaml the config. 0, or TND_ECONFIG
 * with the error naming the file. */
static int record_target(const char *path)
{
    char head[4096];
    struct stat st;
    size_t n = 0;
    FILE *f;

    if (lstat(path, &st) < 0)
        return 0; /* a new file */
    if (S_ISREG(st.st_mode) && (f = fopen(path, "r"))) {
        n = fread(head, 1, sizeof(head) - 1, f);
        fclose(f);
    }
    head[n] = '\0';
    if (!S_ISREG(st.st_mode) || !strstr(head, "\"tandem_cassette\""))
        return tnd_error_config("--record %s: the file is there and is no "
                                "tandem cassette, and a recording would "
                                "replace it; name a new file (or remove "
                                "this one first)",
                                path);
    return 0;
}

/* The recording FILE.partial, opened and locked for this run's length:
 * two runs recording to the same FILE at once cleared and removed each
 * other's, and the cassette written last held none of their answers.
 * 0, or TND_ECONFIG with the error naming the file. */
static int lock_recording(run *r, const char *partial)
{
    int fd = open(partial, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    struct stat st;

    if (fd < 0)
        return tnd_error_config("--record %s: cannot open %s: %s",
                                r->opts.record, partial, strerror(errno));
    if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
        int e = errno;
        close(fd);
        if (e == EWOULDBLOCK)
            return tnd_error_config("--record %s: another tandem run is "
                                    "recording to it now (it holds %s); "
                                    "wait for that run to end, or name "
                                    "another file",
                                    r->opts.record, partial);
        return tnd_error_config("--record %s: cannot lock %s: %s",
                                r->opts.record, partial, strerror(e));
    }
    if (!r->session && fstat(fd, &st) == 0 && st.st_size > 0) {
        /* a new run emptied it: the answers of a session that waits for a
         * person (or failed), whose resume writes FILE, were lost */
        close(fd);
        return tnd_error_config(
            "--record %s: %s holds the answers of a session that has not "
            "ended (waiting for a person, stopped, or failed); tandem resume "
            "(or approve, guide, budget) of that session goes on recording "
            "and writes %s; remove %s to record a new run",
            r->opts.record, partial, r->opts.record, partial);
    }
    r->record_lock = fd;
    r->record_partial = tnd_xstrdup(partial);
    return 0;
}

int tnd_loop_prepare(run *r)
{
    int error;

    if ((error = load_config(r)) < 0)
        return error;
    if (!r->host) {
        /* the agents, workspace and events live there (a server's
         * sessions, in the server's): said before a session is made */
        char *base = tnd_rundir_base();
        if (!base)
            return TND_ECONFIG;
        free(base);
    }
    /* said now, not after the run is paid for */
    if (r->opts.apply == TND_APPLY_COMMIT &&
        (tnd_apply_can_commit(r->repo) < 0 || tnd_change_at_top(r->repo) < 0))
        return TND_ECONFIG;
    if (r->opts.record) {
        char *dir = tnd_fs_dirname(r->opts.record);
        bool ok = tnd_fs_is_dir(dir);
        free(dir);
        if (!ok)
            return tnd_error_config("--record %s: its directory does not "
                                    "exist",
                                    r->opts.record);
        char *partial;
        if (record_target(r->opts.record) < 0)
            return TND_ECONFIG;
        partial = tnd_xasprintf("%s.partial", r->opts.record);
        error = lock_recording(r, partial);
        free(partial);
        if (error < 0)
            return TND_ECONFIG;
    }
    collect_required(r);
    hide_own_files(r);
    return r->opts.review ? prepare_review(r) : 0;
}
