/* `tandem run` and `tandem review` end to end (see run.h): the
 * configuration checked before anything starts, the session and its task
 * record, the agents and the workspace, then the gate loop, and the end
 * (finish.c: the report, the finish record, the summary and the exit
 * code).
 *
 * Everything one run owns hangs off struct run and is released in
 * tnd_loop_close(), whatever path the run took. The checks before
 * anything starts are in prepare.c. The agents and their
 * plumbing live in the crew (crew.c), the report in report.c, the
 * journal in journal.c; the attempts themselves in attempt.c, the
 * journal and agent helpers in steps.c, continuing a session in
 * resume.c.
 *
 * Replay: every agent reply is journaled before it is used. A resumed
 * run goes through the same loop from attempt 1, taking each reply from
 * the journal when it is there and from the agents when it is not, so
 * its state (feedback, failure streaks, usage) is exactly what the
 * interrupted run had, and no model is asked twice for the same thing. */
#include "orchestrator/run.h"

#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <string.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/config.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/log.h"
#include "common/str.h"
#include "common/xalloc.h"
#include "orchestrator/apply.h"
#include "orchestrator/change.h"
#include "orchestrator/crew.h"
#include "orchestrator/events.h"
#include "orchestrator/git.h"
#include "orchestrator/journal.h"
#include "orchestrator/lessons.h"
#include "orchestrator/loop.h"
#include "orchestrator/pool.h"
#include "orchestrator/report.h"
#include "orchestrator/prior.h"
#include "orchestrator/rundir.h"
#include "orchestrator/session.h"
#include "orchestrator/snapshot.h"
#include "orchestrator/unidiff.h"
#include "orchestrator/workspace.h"
#include "proto/body.h"
#include "proto/code.h"
#include "proto/json.h"

static atomic_int interrupted; /* lock-free: a handler may store to it */

static void on_signal(int sig)
{
    atomic_store(&interrupted, sig);
}

void tnd_loop_close(run *r)
{
    tnd_edit_list_free(r->edits, r->nedits);
    tnd_unidiff_exec_free(r->modes, r->nmodes);
    tnd_change_clear(&r->change);
    tnd_audit_reply_clear(&r->baseline);
    tnd_events_destroy(&r->events);
    tnd_findings_destroy(&r->findings);
    /* the trash's thread may be removing in the runtime directory,
     * which the crew removes */
    tnd_workspace_stop_removals(r->ws);
    tnd_crew_destroy(&r->crew, r->opts.keep_workspace);
    tnd_workspace_destroy(&r->ws, !r->opts.keep_workspace);
    tnd_content_destroy(&r->content);
    tnd_snapshot_destroy(&r->base, !r->opts.keep_workspace);
    tnd_report_destroy(&r->report);
    tnd_journal_close(&r->journal);
    tnd_views_state_clear(&r->views);
    tnd_session_destroy(&r->session);
    tnd_config_destroy(&r->own_cfg);
    r->cfg = NULL;
    tnd_str_list_free(&r->history);
    free(r->hashes);
    tnd_str_list_free(&r->required);
    for (size_t i = 0; i < sizeof(r->hidden) / sizeof(*r->hidden); i++)
        free(r->hidden[i]);
    for (int i = 0; i < 6; i++)
        free(r->owned[i]);
    if (r->record_partial) {
        /* no answer recorded (the run stopped before one): no file left */
        struct stat own, now;
        if (fstat(r->record_lock, &own) == 0 && own.st_size == 0 &&
            stat(r->record_partial, &now) == 0 && now.st_ino == own.st_ino &&
            now.st_dev == own.st_dev)
            unlink(r->record_partial);
        close(r->record_lock);
    }
    free(r->record_partial);
    free(r->reason);
    free(r->final_rel);
    free(r->last_rel);
    free(r->out_lost);
    free(r->findings_text);
    free(r->last_diff);
    free(r->last_rationale);
    free(r->head);
    free(r->guidance);
    json_object_put(r->pending);
    tnd_lessons_close(&r->bank);
    tnd_str_list_free(&r->lessons);
    tnd_str_list_free(&r->lesson_ids);
    free(r->repo);
}

/* Open the event stream in the runtime directory and tell watchers where
 * it is; a run without one still works. */
static void publish_events(run *r)
{
    char *ep = tnd_xasprintf("ipc://%s/events.sock", tnd_crew_runtime(r->crew));

    if (!(r->events = tnd_events_new(r->host ? r->host->zmq_ctx : NULL, ep)))
        tnd_log_warn("%s", tnd_error_last());
    /* a view: the address is this process's, gone with it */
    else if (tnd_session_write_view(r->session, "events", ep, strlen(ep)) < 0)
        tnd_log_warn("cannot tell watchers about %s: %s", ep, tnd_error_last());
    free(ep);
}

static void close_events(run *r)
{
    char *path;

    if (!r->events)
        return;
    path = tnd_session_path(r->session, "events");
    unlink(path);
    free(path);
    tnd_events_destroy(&r->events);
}

/* --commit: the base is the commit the change will be committed onto,
 * HEAD's tree exported, never the work tree's files. An uncommitted fix
 * of the user's elsewhere (a Makefile mended, a header added) made the
 * audit pass, and the commit, without it, did not build. The commit is
 * journaled with the workspace, so a resume audits the same one. */
/* Whether checks of the tree are journaled: results a resume uses as
 * they are. */
static bool evidence_journaled(const run *r)
{
    for (size_t i = 0; i < tnd_journal_count(r->journal); i++) {
        const char *t = tnd_journal_type(tnd_journal_record(r->journal, i));
        if (strcmp(t, "baseline") == 0 || strcmp(t, "skills") == 0 ||
            strcmp(t, "audit") == 0 || strncmp(t, "critique.", 9) == 0)
            return true;
    }
    return false;
}

/* The base's files, tandem's own left out (a config or cassette edited
 * between a crash and a resume is no change of the tree the checks saw),
 * as the workspace record keeps them. 0, or -1 with the error set. */
static int tree_key(run *r, char out[TND_SHA256_HEX + 1])
{
    return tnd_content_key(out, tnd_loop_content(r),
                           (const char *const *)r->hidden);
}

/* A resume takes a new snapshot, and the journal's checks are used as
 * they are: when the files differ from the first run's, the person is
 * told that those checks ran on the tree as it was (a header edited
 * between a kill and the resume, and the resumed session's approved
 * change no longer built, the journal saying build: pass). Not an error:
 * a change approved while its author edits the tree is no different,
 * and a served session must not be lost to a restart. --commit's base is
 * a commit, the same on every resume. */
static int warn_tree_changed(run *r, json_object *first)
{
    const char *was = tnd_json_str_or(first, "tree", NULL);
    char now[TND_SHA256_HEX + 1];

    if (!was || !evidence_journaled(r))
        return 0;
    if (tree_key(r, now) < 0)
        return -1;
    if (strcmp(was, now) != 0)
        fprintf(r->err,
                "tandem: warning: %s changed since this session started; "
                "the checks the journal holds ran on its files as they were "
                "then, so the change may not build or pass on them now "
                "(start a new run to check it on them)\n",
                r->repo);
    return 0;
}

static bool on_head(const run *r)
{
    return (r->opts.on_head || r->opts.apply == TND_APPLY_COMMIT) &&
           !r->opts.review;
}

static int commit_base(run *r)
{
    long i = tnd_loop_find(r, "workspace", 0, 0);
    const char *kept =
        i >= 0 ? tnd_json_str_or(tnd_journal_record(r->journal, (size_t)i),
                                 "commit", NULL)
               : NULL;
    char *runtime = tnd_rundir_base();
    int rc = -1;

    if (!r->head)
        r->head = kept ? tnd_xstrdup(kept) : tnd_apply_head(r->repo);
    if (runtime)
        rc = tnd_change_export(&r->change, r->repo, r->head, runtime);
    free(runtime);
    return rc;
}

/* The task's base and the workspace, in the run's private runtime
 * directory. A review of git changes, and a run that commits, have
 * their base exported from the commit; the rest take the repository's
 * tracked files. */
static int make_workspace(run *r)
{
    const char *runtime = tnd_crew_runtime(r->crew);
    char *base_dir = tnd_fs_join(runtime, "base");
    char *ws_dir = tnd_fs_join(runtime, "workspace");
    bool incremental = r->cfg->workspace.incremental;
    bool commit = on_head(r);
    tnd_snapshot_options so = {
        .include_untracked = r->cfg->workspace.include_untracked,
        .max_bytes = r->cfg->orchestrator.workspace_max_bytes,
    };
    const tnd_lfs_left *left;
    json_object *step;
    char key[TND_SHA256_HEX + 1], *what;
    long first;
    int rc = -1;

    if (commit && commit_base(r) < 0)
        goto out;
    /* an exported commit, made for this snapshot: moved, not copied */
    so.whole = so.adopt = r->change.tmp != NULL;
    r->base = tnd_snapshot_new(
        r->opts.review || commit ? r->change.base : r->repo, base_dir, &so);
    if (!r->base || !(r->ws = tnd_workspace_new(r->base, ws_dir, incremental)))
        goto out;
    step = tnd_snapshot_json(r->base, incremental);
    if (commit) /* for a client that commits it (submit --commit) */
        json_object_object_add(step, "commit", json_object_new_string(r->head));
    /* the skills saw these as pointers: an export's, or the files
     * outside a sparse checkout */
    left = r->change.lfs.n ? &r->change.lfs : &tnd_snapshot_about(r->base)->lfs;
    if (left->n) {
        json_object *lfs = json_object_new_object(),
                    *named = json_object_new_array();

        for (size_t i = 0; left->named[i]; i++)
            json_object_array_add(named,
                                  json_object_new_string(left->named[i]));
        json_object_object_add(lfs, "files",
                               json_object_new_int64((int64_t)left->n));
        json_object_object_add(lfs, "named", named);
        json_object_object_add(step, "lfs_pointers", lfs);
    }
    tnd_report_workspace(r->report, step);
    /* once per session: what the first run's tree held */
    if ((first = tnd_loop_find(r, "workspace", 0, 0)) < 0) {
        if (tree_key(r, key) < 0)
            goto out;
        step = tnd_snapshot_json(r->base, incremental);
        json_object_object_add(step, "tree", json_object_new_string(key));
        if (commit)
            json_object_object_add(step, "commit",
                                   json_object_new_string(r->head));
        if (tnd_loop_step(r, "workspace", step) < 0)
            goto out;
    } else if (warn_tree_changed(
                   r, tnd_journal_record(r->journal, (size_t)first)) < 0) {
        goto out;
    }
    /* the base by content now, before the agents start: hashed later,
     * on the thread that answers them, it outlasted their heartbeats */
    if (tnd_content_tree(&(const char *){NULL}, tnd_loop_content(r)) < 0)
        goto out;
    what = tnd_snapshot_describe(r->base);
    tnd_loop_say(r, "workspace: %s%s%s%.*s%s", what,
                 incremental ? "; build outputs stay between attempts "
                               "(workspace.incremental)"
                             : "",
                 commit ? "; the tree of the commit --commit builds on, "
                          "without your uncommitted changes ("
                        : "",
                 /* a commit's id cut to 12; "no commit yet" whole (it
                    was "no commit ye") */
                 (int)(commit && *r->head ? 12 : strlen("no commit yet")),
                 commit ? (*r->head ? r->head : "no commit yet") : "",
                 commit ? ")" : "");
    if (r->change.note)
        tnd_loop_say(r, "workspace: %s", r->change.note);
    free(what);
    /* an export's are in its note */
    if (left != &r->change.lfs && (what = tnd_lfs_note(left))) {
        tnd_loop_say(r, "workspace: %s", what);
        free(what);
    }
    rc = 0;
out:
    free(base_dir);
    free(ws_dir);
    return rc;
}

/* Start the agents and the workspace, run the loop, finish. */
int tnd_loop_go(run *r, int64_t started_wall)
{
    struct sigaction sa, old_int, old_term, old_hup;
    tnd_crew_options co;
    char *logs = tnd_session_path(r->session, "logs");
    int error = -1, code;

    r->report = tnd_report_new(tnd_session_id(r->session), r->opts.task,
                               r->repo, r->cfg->path, started_wall);
    if (r->opts.review)
        tnd_report_review(r->report);
    /* a server's sessions use the hub's agents, and its endpoint */
    tnd_report_insecure(r->report, r->host
                                       ? r->host->insecure
                                       : tnd_pool_insecure_endpoint(r->cfg));
    if (!r->host) {
        /* in a server, signals are the main thread's (serve.c) */
        memset(&sa, 0, sizeof(sa));
        sa.sa_handler = on_signal;
        sigemptyset(&sa.sa_mask);
        atomic_store(&interrupted, 0);
        sigaction(SIGINT, &sa, &old_int);
        sigaction(SIGTERM, &sa, &old_term);
        sigaction(SIGHUP, &sa, &old_hup);
        signal(SIGPIPE, SIG_IGN);
        signal(SIGXFSZ, SIG_IGN); /* a file size limit is a write error */
    }

    memset(&co, 0, sizeof(co));
    co.config = r->cfg;
    co.session_id = tnd_session_id(r->session);
    co.session_dir = tnd_session_dir(r->session);
    co.logs_dir = logs;
    co.llm = r->opts.llm;
    co.base_url = r->opts.base_url;
    co.record = r->record_partial;
    co.verbose = r->opts.verbose;
    co.no_coder = r->opts.review;
    co.interrupted = r->stop;
    co.link = r->host ? r->host->link : NULL;
    co.agents_later = true; /* after the workspace: see tnd_crew_start */
    tnd_loop_recall(r);
    if ((r->crew = tnd_crew_new(&co)) != NULL) {
        publish_events(r);
        if (make_workspace(r) == 0 && (error = tnd_crew_start(r->crew)) == 0 &&
            (error = tnd_loop_baseline(r)) == 0)
            error = tnd_loop_attempts(r);
        r->config_error = error == TND_ECONFIG;
        if (error == 1)
            error = 0; /* stopped before attempt 1; r->status says why */
    }
    if (error < 0 && atomic_load(r->stop)) {
        /* not a failure: the person stopped it, and it can go on */
        int sig = atomic_load(r->stop);
        char *why =
            tnd_xasprintf("interrupted by signal %d (%s)", sig, strsignal(sig));
        tnd_loop_stop(r, TND_SESSION_INTERRUPTED, why);
        free(why);
    } else if (error < 0) {
        tnd_loop_stop(r, TND_SESSION_FAILED, tnd_error_last());
    }
    /* the trash's thread may be removing in the runtime directory,
     * which the crew removes */
    tnd_workspace_stop_removals(r->ws);
    tnd_crew_destroy(&r->crew, r->opts.keep_workspace);
    code = tnd_loop_finish(r);
    close_events(r);
    free(logs);
    if (!r->host) {
        sigaction(SIGINT, &old_int, NULL);
        sigaction(SIGTERM, &old_term, NULL);
        sigaction(SIGHUP, &old_hup, NULL);
    }
    return code;
}

static json_object *task_record(const run *r, int64_t started_wall)
{
    json_object *f = json_object_new_object();

    json_object_object_add(f, "session",
                           json_object_new_string(tnd_session_id(r->session)));
    json_object_object_add(f, "task", json_object_new_string(r->opts.task));
    json_object_object_add(f, "repo", json_object_new_string(r->repo));
    json_object_object_add(f, "config", tnd_json_str_or_null(r->cfg->path));
    json_object_object_add(f, "llm", tnd_json_str_or_null(r->opts.llm));
    json_object_object_add(f, "base_url",
                           tnd_json_str_or_null(r->opts.base_url));
    json_object_object_add(f, "record", tnd_json_str_or_null(r->opts.record));
    json_object_object_add(f, "keep_workspace",
                           json_object_new_boolean(r->opts.keep_workspace));
    json_object_object_add(f, "started_ms",
                           json_object_new_int64(started_wall));
    json_object_object_add(f, "ordinal", json_object_new_int64(r->ordinal));
    if (r->opts.insecure)
        json_object_object_add(f, "insecure", json_object_new_boolean(true));
    if (on_head(r))
        json_object_object_add(f, "on_head", json_object_new_boolean(true));
    if (r->host) /* answers go to a server, when one runs */
        json_object_object_add(f, "served", json_object_new_boolean(true));
    if (r->opts.by && r->opts.by->via != TND_CLIENT_VIA_NONE) {
        json_object *by = json_object_new_object();
        tnd_client_who_add(by, r->opts.by);
        json_object_object_add(f, "by", by);
    }
    if (r->opts.review) {
        json_object *rv = json_object_new_object();
        json_object_object_add(rv, "rev", tnd_json_str_or_null(r->change.rev));
        json_object_object_add(rv, "staged",
                               json_object_new_boolean(r->opts.staged));
        json_object_object_add(f, "review", rv);
    }
    return f;
}

void tnd_loop_init(run *r, const tnd_run_host *host)
{
    memset(r, 0, sizeof(*r));
    r->started = tnd_now_ms();
    r->wall_from = r->started;
    r->last_confidence = -1;
    r->host = host;
    r->out = host ? host->out : stdout;
    r->err = host ? host->err : stderr;
    r->stop = host ? host->stop : &interrupted;
}

/* open_new's answer for a review with nothing in it under --allow-empty,
 * for a change a person approved before, or for one that could not be
 * reviewed under --on-error pass: no session, exit 0. */
#define NOTHING_TO_REVIEW (-1)

/* not_reviewed before a session exists, as open_new answers: its exit 0
 * (--on-error pass) is no session too (it was taken for an open one, and
 * the run crashed on the session it did not have). */
static int not_reviewed_early(run *r, const char *raw)
{
    int code = tnd_loop_not_reviewed(r, raw);

    if (r->opts.format && !r->opts.json) {
        /* the findings a CI job reads say so too (it got an empty file,
         * and its SARIF upload failed) */
        if (!r->findings)
            r->findings = tnd_findings_new();
        r->status = TND_SESSION_FAILED;
        free(r->reason);
        r->reason = tnd_xstrdup(raw ? raw : "the review could not be done");
        tnd_loop_emit(r, NULL);
        if (r->out_lost) {
            fprintf(r->err, "tandem: %s; the output was lost%s\n", r->out_lost,
                    code == TND_EXIT_OK ? ", exit 1" : "");
            if (code == TND_EXIT_OK)
                code = TND_EXIT_FAILED;
        }
    }
    return code == TND_EXIT_OK ? NOTHING_TO_REVIEW : code;
}

/* A new session for r->opts: the config checked, the session made and
 * locked, its task record journaled (fsync'd). 0, NOTHING_TO_REVIEW, or a
 * TND_EXIT_* code after saying why on r->err. A review that fails for
 * another reason than its input (git, the disk) could not be done. */
static int open_new(run *r, int64_t started_wall)
{
    int error;

    if (!(r->repo = tnd_fs_realpath(r->opts.repo ? r->opts.repo : "."))) {
        fprintf(r->err, "tandem: --repo: %s\n", tnd_error_last());
        return TND_EXIT_USAGE;
    }
    if (!tnd_fs_is_dir(r->repo)) {
        fprintf(r->err, "tandem: --repo: %s is not a directory\n", r->repo);
        return TND_EXIT_USAGE;
    }
    /* a bare repository: its config and hooks went to the model, and an
     * edit of them was applied there */
    if (tnd_git_dir_above(r->repo)) {
        fprintf(r->err, "tandem: " TND_GIT_DIR_WORDS "\n", r->repo);
        return TND_EXIT_USAGE;
    }
    /* .tandem a file or a link: the user's to remove, so exit 2, not a
     * review that could not be done (exit 4, which --on-error pass lets
     * through) */
    if (tnd_session_check_home(r->repo) < 0) {
        fprintf(r->err, "tandem: %s\n", tnd_error_last());
        return TND_EXIT_USAGE;
    }
    if ((error = tnd_loop_prepare(r)) < 0) {
        if (r->change.empty && r->opts.allow_empty) {
            /* a commit that changes no file: --amend of the message,
             * --allow-empty; git itself let it through */
            if (!r->opts.quiet)
                fprintf(r->err, "tandem: %s; --allow-empty passes it\n",
                        tnd_error_last());
            return NOTHING_TO_REVIEW;
        }
        /* no key: the review could not be done, as with a key the
         * model refuses (a fork's pull request, run without the
         * secrets, is let through by --on-error pass) */
        if ((error != TND_ECONFIG || r->no_key) && r->opts.review)
            return not_reviewed_early(r, tnd_error_last());
        fprintf(r->err, "tandem: %s\n", tnd_error_last());
        return error == TND_ECONFIG ? TND_EXIT_USAGE : TND_EXIT_FAILED;
    }
    if (r->opts.review && !r->opts.json && !r->opts.format && !r->host) {
        /* the hook's commit after `tandem approve`: a person approved
         * this very change on this base already */
        char *id = tnd_prior_approval(r->repo, r->change.rev, r->change.diff);
        if (id) {
            if (!r->opts.quiet)
                fprintf(r->err,
                        "tandem: a person approved this change on this "
                        "commit in session %s: it passes\n",
                        id);
            free(id);
            return NOTHING_TO_REVIEW;
        }
    }
    /* a new session's recording starts empty (a session that can go on
     * appends to its own) */
    if (r->record_partial && ftruncate(r->record_lock, 0) < 0)
        tnd_log_warn("cannot empty the recording %s: %s", r->record_partial,
                     strerror(errno));
    if (r->opts.review && r->opts.format)
        r->findings = tnd_findings_new();
    if (!(r->session = r->opts.session_id
                           ? tnd_session_new_as(r->repo, r->opts.session_id)
                           : tnd_session_new(r->repo)) ||
        tnd_session_lock(r->session) < 0) {
        if (r->opts.review)
            return not_reviewed_early(r, tnd_error_last());
        fprintf(r->err, "tandem: %s\n", tnd_error_last());
        return TND_EXIT_FAILED;
    }
    {
        char *path = tnd_session_path(r->session, "journal.jsonl");
        char **ids = tnd_session_list(r->repo);
        r->journal = tnd_journal_open(path);
        free(path);
        for (char **p = ids; *p; p++)
            r->ordinal++; /* this session included */
        tnd_str_list_free(&ids);
    }
    if (!r->journal ||
        (r->host && r->host->made &&
         r->host->made(r->host->made_arg, r->repo, tnd_session_id(r->session)) <
             0) ||
        (r->opts.review &&
         tnd_session_write(r->session, "change.diff", r->change.diff,
                           strlen(r->change.diff)) < 0) ||
        tnd_loop_step(r, "task", task_record(r, started_wall)) < 0) {
        if (r->opts.review)
            return not_reviewed_early(r, tnd_error_last());
        fprintf(r->err, "tandem: %s\n", tnd_error_last());
        return TND_EXIT_FAILED;
    }
    return 0;
}

int tnd_run(const tnd_run_options *opts)
{
    run r;
    int64_t started_wall = tnd_wall_ms();
    int code;

    tnd_loop_init(&r, NULL);
    r.opts = *opts;
    r.review_rev = opts->rev;
    tnd_log_init("tandem", opts->verbose ? TND_LOG_DEBUG : TND_LOG_WARN);
    if ((code = open_new(&r, started_wall)) == 0) {
        tnd_loop_say(&r, "session %s: %s", tnd_session_id(r.session),
                     opts->task);
        code = tnd_loop_go(&r, started_wall);
        if (r.go_on)
            return tnd_loop_go_on(&r);
    } else if (code == NOTHING_TO_REVIEW) {
        code = TND_EXIT_OK;
    }
    tnd_loop_close(&r);
    return code;
}

int tnd_run_create(char **id, char **dir, const tnd_run_options *opts,
                   const tnd_run_host *host, int *lock)
{
    run r;
    int code;

    *id = *dir = NULL;
    if (lock)
        *lock = -1;
    tnd_loop_init(&r, host);
    r.create_only = true;
    r.opts = *opts;
    r.review_rev = opts->rev;
    r.opts.allow_empty = false; /* an empty change makes no session */
    r.opts.format = 0;          /* the findings are the caller's to print */
    if ((code = open_new(&r, tnd_wall_ms())) == 0) {
        *id = tnd_xstrdup(tnd_session_id(r.session));
        *dir = tnd_xstrdup(tnd_session_dir(r.session));
        if (lock)
            *lock = tnd_session_take_lock(r.session);
    }
    tnd_loop_close(&r);
    return code;
}
