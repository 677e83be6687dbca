/* Continuing a session (see run.h): `tandem resume` after a crash or a
 * stop, and the answers to an escalation (`tandem approve|reject|guide|
 * budget`). The task's options come back from its task record, the
 * answer is checked against the journal and journaled, and the loop runs
 * again as a replay. */
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/log.h"
#include "common/str.h"
#include "common/xalloc.h"
#include "orchestrator/escalate.h"
#include "orchestrator/journal.h"
#include "orchestrator/loop.h"
#include "orchestrator/run.h"
#include "orchestrator/session.h"
#include "proto/json.h"

/* ---- continuing a session ----------------------------------------------- */

static char *own(run *r, int slot, const char *s)
{
    free(r->owned[slot]);
    r->owned[slot] = tnd_xstrdup(s);
    return r->owned[slot];
}

/* What a run going on in the process that asked (tnd_loop_go_on) keeps of
 * the last: what it does at the end, which a resume's task record does
 * not hold. */
static void keep_ending(tnd_run_options *to, const tnd_run_options *from)
{
    to->keep_workspace = from->keep_workspace;
    to->apply = from->apply;
    to->json = from->json;
    to->format = from->format;
    to->on_error = from->on_error;
}

/* Options of the original run, from its task record. */
static int restore_options(run *r, json_object *task,
                           const tnd_continue_options *o, int64_t *started)
{
    json_object *review;

    if (!task || strcmp(tnd_journal_type(task), "task") != 0 ||
        !tnd_json_str_or(task, "task", NULL))
        return tnd_error_set("the journal does not start with a task "
                             "record; this session cannot be continued");
    r->opts.task = own(r, 0, tnd_json_str_or(task, "task", NULL));
    r->opts.config = own(r, 1, tnd_json_str_or(task, "config", NULL));
    /* a resume may name another model (the first one's key ran out, a
     * local server moved); the answers already journaled stand */
    r->opts.llm =
        own(r, 2, o->llm ? o->llm : tnd_json_str_or(task, "llm", NULL));
    r->opts.base_url = own(
        r, 3,
        o->base_url ? o->base_url : tnd_json_str_or(task, "base_url", NULL));
    r->opts.record = own(r, 4, tnd_json_str_or(task, "record", NULL));
    r->opts.keep_workspace = false;
    r->opts.insecure = tnd_json_bool_or(task, "insecure", false);
    /* the first run's base was HEAD's tree: so is the resume's */
    r->opts.on_head = tnd_json_bool_or(task, "on_head", false);
    r->opts.quiet = o->quiet;
    r->opts.verbose = o->verbose;
    if (o->same) /* the run that asked goes on */
        keep_ending(&r->opts, o->same);
    *started = tnd_json_int_or(task, "started_ms", 0);
    r->ordinal = tnd_json_int_or(task, "ordinal", 0);
    if (json_object_object_get_ex(task, "review", &review)) {
        r->opts.review = true;
        r->opts.staged = tnd_json_bool_or(review, "staged", false);
        if (tnd_json_str_or(review, "rev", NULL))
            r->review_rev = own(r, 5, tnd_json_str_or(review, "rev", NULL));
    }
    if (r->opts.review && r->opts.format && !r->findings)
        r->findings = tnd_findings_new(); /* as the first run's */
    return 0;
}

/* Whether the answer o is whole for the session s of repo, whose journal
 * is records (a review when its task record says so), as far as its
 * journal and, when known, its gate (NULL: not known) tell: 0, or
 * TND_ECONFIG with the error set, saying what to give. Whether it waits,
 * and on which question, is not looked at here. */
static int answer_complete(const char *repo, tnd_session *s,
                           json_object *records, const tnd_gate_config *gate,
                           const tnd_continue_options *o)
{
    size_t n = records ? json_object_array_length(records) : 0;
    json_object *task = n ? json_object_array_get_idx(records, 0) : NULL;
    bool review = task && tnd_json_field(task, "review") != NULL;

    if (review &&
        (o->answer == TND_ANSWER_GUIDE || o->answer == TND_ANSWER_BUDGET))
        return tnd_error_config("session %s is a review: there is no coder "
                                "to %s; answer with 'tandem approve' or "
                                "'tandem reject'",
                                tnd_session_id(s),
                                o->answer == TND_ANSWER_GUIDE ? "guide"
                                                              : "give more "
                                                                "attempts");
    if (o->answer == TND_ANSWER_BUDGET && o->iterations <= 0 &&
        o->tokens <= 0 && o->calls <= 0)
        return tnd_error_config(
            "budget: give --iterations N, --tokens N or --calls N");
    if (gate && o->answer == TND_ANSWER_BUDGET && o->tokens > 0 &&
        o->iterations <= 0 && o->calls <= 0 && gate->max_tokens == 0)
        return tnd_error_config("budget: gate.max_tokens is 0 (no token "
                                "budget), so --tokens grants nothing; give "
                                "--iterations N");
    if (gate && o->answer == TND_ANSWER_BUDGET && o->calls > 0 &&
        o->iterations <= 0 && o->tokens <= 0 && gate->max_llm_calls == 0)
        return tnd_error_config("budget: gate.max_llm_calls is 0 (no limit "
                                "on calls), so --calls grants nothing; give "
                                "--iterations N");
    /* blank is nothing said: guidance of spaces spent an attempt on a
     * prompt that said nothing, as the terminal's prompt never allowed */
    if ((o->answer == TND_ANSWER_GUIDE || o->answer == TND_ANSWER_REJECT) &&
        (!o->text || !o->text[strspn(o->text, " \t\r\n")]))
        return tnd_error_config("%s: say it with -m TEXT (tandem %s %s -m "
                                "TEXT)",
                                tnd_answer_name(o->answer),
                                tnd_answer_name(o->answer), tnd_session_id(s));
    if (o->answer != TND_ANSWER_APPROVE)
        return 0;
    /* something to approve: the last attempt with a diff, decided, or
     * escalated at its audit (a budget ran out there, its proposal
     * applied) */
    for (size_t i = n; i-- > 0;) {
        json_object *rec = json_object_array_get_idx(records, i);
        const char *type = tnd_journal_type(rec),
                   *diff = tnd_json_str_or(rec, "diff", NULL);
        char *rel = NULL;
        if (strcmp(type, "decision") == 0 && diff)
            rel = tnd_xstrdup(diff);
        else if (strcmp(type, "escalation") == 0 &&
                 tnd_str_eq(tnd_json_str_or(rec, "at", NULL), "audit")) {
            char name[64];
            snprintf(name, sizeof(name), "attempt-%ld.diff",
                     tnd_json_int_or(rec, "attempt", 0));
            rel = tnd_session_relpath(s, name);
        }
        if (rel) {
            char *path = tnd_fs_join(repo, rel), *text = NULL;
            size_t len = 0;
            bool ok = tnd_fs_read(&text, &len, path, 64 << 20) == 0 && len > 0;
            free(text);
            free(path);
            free(rel);
            if (ok)
                return 0;
        }
    }
    tnd_error_clear();
    return tnd_error_config("session %s has no proposal to approve: no "
                            "attempt produced a change",
                            tnd_session_id(s));
}

int tnd_run_same_question(const char *id, long asked, long waits)
{
    /* the session did not wait when the command read it, and it asks now
     * (its holder let go in between): a question nobody was shown */
    if (asked < 0 && waits > 0)
        return tnd_error_config("session %s asked a person just after your "
                                "command read it, which found it not "
                                "waiting; look at it (tandem show %s) and "
                                "answer again",
                                id, id);
    /* the question answered is the one that waits: a served answer kept
     * across a restart went to a later escalation, after a person had
     * answered the first here, and approved a diff nobody was shown */
    if (asked > 0 && asked != waits)
        return tnd_error_config("session %s asked a person again since this "
                                "answer was given, for an earlier question; "
                                "look at it (tandem show %s) and answer again",
                                id, id);
    return 0;
}

static int check_answer(run *r, const tnd_continue_options *o,
                        tnd_session_status state)
{
    if (state != TND_SESSION_WAITING)
        return tnd_error_config("session %s is not waiting for an answer "
                                "(%s); use 'tandem resume %s' to continue "
                                "an interrupted session",
                                tnd_session_id(r->session),
                                state == TND_SESSION_OPEN
                                    ? "it was interrupted"
                                    : tnd_session_status_name(state),
                                tnd_session_id(r->session));
    if (tnd_run_same_question(
            tnd_session_id(r->session), o->escalation,
            tnd_journal_waiting_on(tnd_journal_records(r->journal))) < 0)
        return TND_ECONFIG;
    return answer_complete(r->repo, r->session, tnd_journal_records(r->journal),
                           NULL, o);
}

int tnd_run_answer_check(const char *repo, const tnd_continue_options *o,
                         const tnd_gate_config *gate)
{
    tnd_session *s;
    json_object *records = NULL;
    char *path, *real = tnd_fs_realpath(repo);
    int rc = -1;

    if (!real || !(s = tnd_session_open(real, o->session))) {
        free(real);
        return -1;
    }
    path = tnd_session_path(s, "journal.jsonl");
    if (tnd_journal_read(&records, path) == 0) {
        rc = tnd_run_same_question(tnd_session_id(s), o->escalation,
                                   tnd_journal_waiting_on(records));
        if (rc == 0)
            rc = answer_complete(real, s, records, gate, o);
    }
    json_object_put(records);
    free(path);
    tnd_session_destroy(&s);
    free(real);
    return rc;
}

/* The facts of session id in dir, from its journal's records. */
static void facts_of(tnd_session_facts *out, json_object *records,
                     const char *id, const char *dir)
{
    json_object *task = json_object_array_length(records)
                            ? json_object_array_get_idx(records, 0)
                            : NULL;

    out->id = tnd_xstrdup(id);
    out->dir = tnd_xstrdup(dir);
    if (task && tnd_json_str_or(task, "config", NULL))
        out->config = tnd_xstrdup(tnd_json_str_or(task, "config", NULL));
    out->served = task && tnd_json_bool_or(task, "served", false);
    out->owner = tnd_run_task_owner(task);
    out->escalation = tnd_journal_waiting_on(records);
}

int tnd_run_facts(tnd_session_facts *out, const char *repo, const char *part)
{
    tnd_session *s;
    json_object *records = NULL;
    char *path;
    int rc = -1;

    memset(out, 0, sizeof(*out));
    if (!(s = tnd_session_open(repo, part)))
        return TND_ECONFIG;
    path = tnd_session_path(s, "journal.jsonl");
    if (tnd_journal_read(&records, path) == 0 &&
        tnd_journal_status(&out->status, records) == 0) {
        facts_of(out, records, tnd_session_id(s), tnd_session_dir(s));
        rc = 0;
    } else {
        tnd_error_prefix("session %s", tnd_session_id(s));
    }
    json_object_put(records);
    free(path);
    tnd_session_destroy(&s);
    return rc;
}

int tnd_run_facts_at(tnd_session_facts *out, int dirfd, const char *repo,
                     const char *id)
{
    json_object *records = NULL;
    char *dir = tnd_session_dir_of(repo, id);
    char *path = tnd_fs_join(dir, "journal.jsonl");
    int rc = -1;

    memset(out, 0, sizeof(*out));
    if (tnd_journal_read_at(&records, dirfd, path) == 0 &&
        tnd_journal_status(&out->status, records) == 0) {
        facts_of(out, records, id, dir);
        rc = 0;
    } else {
        tnd_error_prefix("session %s", id);
    }
    json_object_put(records);
    free(path);
    free(dir);
    return rc;
}

char *tnd_run_task_owner(json_object *task)
{
    tnd_client_who by;

    tnd_client_who_read(&by, tnd_json_field(task, "by"));
    return by.via == TND_CLIENT_VIA_CURVE && *by.key ? tnd_xstrdup(by.key)
                                                     : NULL;
}

void tnd_session_facts_clear(tnd_session_facts *facts)
{
    free(facts->id);
    free(facts->dir);
    free(facts->config);
    free(facts->owner);
    memset(facts, 0, sizeof(*facts));
}

/* A session going on in this process after a person answered at the
 * terminal (run.go_on): what the next run of it needs of the last. */
typedef struct go_on {
    bool set;
    char *repo, *session, *llm, *base_url;
    int lock; /* the session's lock, held from one run to the next */
    tnd_run_options same; /* its options; no string of it is set */
} go_on;

static void go_on_take(go_on *g, const run *r)
{
    memset(g, 0, sizeof(*g));
    g->set = true;
    g->repo = tnd_xstrdup(r->repo);
    g->session = tnd_xstrdup(tnd_session_id(r->session));
    g->llm = r->opts.llm ? tnd_xstrdup(r->opts.llm) : NULL;
    g->base_url = r->opts.base_url ? tnd_xstrdup(r->opts.base_url) : NULL;
    /* no other tandem takes the session between the two runs */
    g->lock = tnd_session_take_lock(r->session);
    keep_ending(&g->same, &r->opts);
    g->same.quiet = r->opts.quiet;
    g->same.verbose = r->opts.verbose;
}

static void go_on_clear(go_on *g)
{
    free(g->repo);
    free(g->session);
    free(g->llm);
    free(g->base_url);
    if (g->lock >= 0)
        close(g->lock);
    memset(g, 0, sizeof(*g));
    g->lock = -1;
}

static int continue_once(const tnd_continue_options *o, go_on *next);

/* Whether r, about to go on after a person's answer, was interrupted
 * meanwhile (Ctrl-C while its agents stopped): then it does not go on
 * (the next run cleared the flag, and spent on), and *code is the
 * signal's exit, said as any interrupted run says it. */
static bool stopped_at_going_on(run *r, int *code)
{
    int sig = atomic_load(r->stop);
    char *repo;

    if (!sig)
        return false;
    repo = tnd_str_shell_word(r->repo);
    fprintf(r->err,
            "interrupted by signal %d after the answer, which is "
            "journaled; go on with: tandem resume --repo %s %s\n",
            sig, repo, tnd_session_id(r->session));
    free(repo);
    *code = TND_EXIT_SIGNAL + sig;
    return true;
}

/* Run the session g names again, as long as a person answers at its
 * terminal; the last run's exit code (code when there is none). */
static int keep_going(go_on *g, int code)
{
    while (g->set) {
        go_on next = {.lock = -1};
        tnd_continue_options o;

        memset(&o, 0, sizeof(o));
        o.repo = g->repo;
        o.session = g->session;
        o.llm = g->llm;
        o.base_url = g->base_url;
        o.quiet = g->same.quiet;
        o.verbose = g->same.verbose;
        o.same = &g->same;
        o.locked = g->lock >= 0;
        o.lock_fd = g->lock;
        g->lock = -1; /* continue_once's now */
        code = continue_once(&o, &next);
        go_on_clear(g);
        *g = next;
    }
    return code;
}

int tnd_loop_go_on(run *r)
{
    int code = TND_EXIT_HUMAN;
    go_on g;

    if (stopped_at_going_on(r, &code)) {
        tnd_loop_close(r);
        return code;
    }
    go_on_take(&g, r);
    tnd_loop_close(r);
    return keep_going(&g, code);
}

int tnd_run_continue(const tnd_continue_options *o)
{
    go_on g = {.lock = -1};

    return keep_going(&g, continue_once(o, &g));
}

static int continue_once(const tnd_continue_options *o, go_on *next)
{
    run r;
    tnd_session_status state;
    int64_t started_wall = 0;
    int code = TND_EXIT_FAILED, rc;

    bool first;

    tnd_loop_init(&r, o->host);
    if (!o->host) /* a server's log is its own */
        tnd_log_init("tandem", o->verbose ? TND_LOG_DEBUG : TND_LOG_WARN);
    if (!(r.repo = tnd_fs_realpath(o->repo ? o->repo : "."))) {
        fprintf(r.err, "tandem: --repo: %s\n", tnd_error_last());
        if (o->locked)
            close(o->lock_fd);
        tnd_loop_close(&r);
        return TND_EXIT_USAGE;
    }
    if (!(r.session = tnd_session_open(r.repo, o->session))) {
        fprintf(r.err, "tandem: %s\n", tnd_error_last());
        if (o->locked)
            close(o->lock_fd);
        tnd_loop_close(&r);
        return TND_EXIT_USAGE;
    }
    if (o->locked) {
        tnd_session_adopt_lock(r.session, o->lock_fd);
    } else if (tnd_session_lock(r.session) < 0) {
        /* held by another tandem: like any session that does not wait
         * for this answer, a usage error; else the lock file failed */
        bool held = tnd_session_locked(tnd_session_dir(r.session));
        fprintf(r.err, "tandem: %s\n", tnd_error_last());
        tnd_loop_close(&r);
        return held ? TND_EXIT_USAGE : TND_EXIT_FAILED;
    }
    {
        char *path = tnd_session_path(r.session, "journal.jsonl");
        /* none there: nothing to go on with, and opening it made an empty
         * one, which listed the session as if it had just begun */
        if (!tnd_fs_exists(path))
            tnd_error_set("session %s has no journal (%s), so it cannot be "
                          "resumed; tandem show %s says what it left",
                          tnd_session_id(r.session), path,
                          tnd_session_id(r.session));
        else
            r.journal = tnd_journal_open(path);
        free(path);
    }
    if (!r.journal || restore_options(&r,
                                      tnd_journal_count(r.journal)
                                          ? tnd_journal_record(r.journal, 0)
                                          : NULL,
                                      o, &started_wall) < 0) {
        fprintf(r.err, "tandem: %s\n", tnd_error_last());
        tnd_loop_close(&r);
        return TND_EXIT_FAILED;
    }
    if (tnd_journal_status(&state, tnd_journal_records(r.journal)) < 0) {
        fprintf(r.err, "tandem: session %s: %s\n", tnd_session_id(r.session),
                tnd_error_last());
        tnd_loop_close(&r);
        return TND_EXIT_FAILED;
    }
    if (state != TND_SESSION_OPEN && state != TND_SESSION_WAITING) {
        /* an answer to it changes nothing: a usage error, as a server
         * says it (`tandem reject -m no` of an approved session exited 0,
         * and a script took the reject as done) */
        fprintf(r.err, "tandem: session %s already finished: %s%s\n",
                tnd_session_id(r.session), tnd_session_status_name(state),
                o->answer ? "; there is nothing to answer" : "");
        code = o->answer                       ? TND_EXIT_USAGE
               : state == TND_SESSION_APPROVED ? TND_EXIT_OK
                                               : TND_EXIT_FAILED;
        tnd_loop_close(&r);
        return code;
    }
    if (o->answer && (rc = check_answer(&r, o, state)) < 0) {
        fprintf(r.err, "tandem: %s\n", tnd_error_last());
        tnd_loop_close(&r);
        return rc == TND_ECONFIG ? TND_EXIT_USAGE : TND_EXIT_FAILED;
    }
    /* saying yes or no asks no model: the person answering need not hold
     * its key (reject refused without it, and advised --llm, which an
     * answer refuses) */
    r.answer_ends =
        o->answer == TND_ANSWER_APPROVE || o->answer == TND_ANSWER_REJECT;
    r.no_model = r.answer_ends;
    if ((rc = tnd_loop_prepare(&r)) < 0) {
        fprintf(r.err, "tandem: %s\n", tnd_error_last());
        tnd_loop_close(&r);
        return rc == TND_ECONFIG ? TND_EXIT_USAGE : TND_EXIT_FAILED;
    }
    if (o->answer &&
        answer_complete(r.repo, r.session, tnd_journal_records(r.journal),
                        &r.gate, o) < 0) {
        /* what the config says: a budget it has no limit of to raise */
        fprintf(r.err, "tandem: %s\n", tnd_error_last());
        tnd_loop_close(&r);
        return TND_EXIT_USAGE;
    }
    /* the first run of a session a server made: nothing to resume */
    first = o->fresh && !o->answer && tnd_journal_count(r.journal) == 1;
    rc = 0;
    if (o->answer) {
        /* journaled when the replay reaches the question (person.c) */
        tnd_answer ans = {o->answer, o->text ? tnd_xstrdup(o->text) : NULL,
                          o->iterations, o->tokens, o->calls};
        r.pending = tnd_loop_answer_json(&ans, "command", o->who);
        tnd_answer_clear(&ans);
    } else if (!first) {
        rc = tnd_loop_step(&r, "resume", NULL);
    }
    if (rc < 0) {
        fprintf(r.err, "tandem: %s\n", tnd_error_last());
        tnd_loop_close(&r);
        return TND_EXIT_FAILED;
    }
    if (first)
        tnd_loop_say(&r, "session %s: %s", tnd_session_id(r.session),
                     r.opts.task);
    else
        tnd_loop_say(&r, "session %s: %s (%s)", tnd_session_id(r.session),
                     r.opts.task,
                     o->answer ? tnd_answer_name(o->answer)
                     : o->same ? "going on after the answer"
                               : "resumed");
    code = tnd_loop_go(&r, started_wall ? started_wall : tnd_wall_ms());
    if (r.pending) {
        /* the replay stopped before the question (said why): the session
         * waits for it still */
        fprintf(r.err,
                "tandem: your %s was not journaled: session %s stopped "
                "before the question it answers, which still waits\n",
                tnd_answer_name(o->answer), tnd_session_id(r.session));
        json_object_put(r.pending);
        r.pending = NULL;
    }
    if (r.go_on && !stopped_at_going_on(&r, &code))
        go_on_take(next, &r);
    tnd_loop_close(&r);
    return code;
}
