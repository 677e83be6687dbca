/* `tandem run`: the gate loop across real processes (see run.h).
 *
 * Everything one run owns hangs off struct run and is released in
 * run_close(), whatever path the run took. The agents and their plumbing
 * live in the crew (crew.c), the report in report.c; this file is the
 * loop: check the budget, propose, apply, audit, decide. */
#include "orchestrator/run.h"

#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agents/cassette.h"
#include "common/buf.h"
#include "common/clock.h"
#include "common/config.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/log.h"
#include "common/str.h"
#include "common/xalloc.h"
#include "orchestrator/budget.h"
#include "orchestrator/context.h"
#include "orchestrator/crew.h"
#include "orchestrator/feedback.h"
#include "orchestrator/gate.h"
#include "orchestrator/report.h"
#include "orchestrator/session.h"
#include "orchestrator/workspace.h"
#include "proto/audit.h"
#include "proto/code.h"
#include "proto/json.h"

typedef struct run {
    const tnd_run_options *opts;
    tnd_config *cfg;
    char *repo;
    tnd_session *session;
    tnd_crew *crew;
    tnd_workspace *ws;
    tnd_report *report;
    char *record_partial; /* FILE.partial while recording */
    int64_t started;
    int iterations;
    const char *status; /* NULL while the loop runs */
    char *reason;
    char *final_rel; /* final.diff relative to the repo */
    char *last_rel;  /* the last attempt's diff */
    char **history;  /* one line per attempt, NULL-terminated */
    size_t nhistory, ahistory;
    uint64_t *hashes; /* diff hash per attempt (0: no diff) */
    size_t nhashes, ahashes;
    char **required;    /* required skill names, NULL-terminated */
    char *hidden[4];    /* repo files the coder is not shown: tandem's own
                           config and cassettes; NULL-terminated */
    size_t streamed;    /* characters of the answer streamed so far */
    bool progress_line; /* a progress line is on the terminal */
} run;

/* What one attempt builds up, freed in one place. */
typedef struct attempt {
    int n;
    tnd_code_request req;
    tnd_code_reply reply;
    tnd_audit_reply audit;
    bool audited;
    tnd_gate_input in;
    tnd_gate_decision decision;
    char *diff;
    char *diff_rel;
    char *apply_error;
} attempt;

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
    interrupted = sig;
}

static void end_progress(run *r)
{
    if (r->progress_line) {
        fputs("\r\033[K", stderr);
        r->progress_line = false;
    }
}

static void say(run *r, const char *fmt, ...) TND_PRINTF(2, 3);

static void say(run *r, const char *fmt, ...)
{
    va_list ap;

    if (r->opts->quiet)
        return;
    end_progress(r);
    va_start(ap, fmt);
    fputs("tandem: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

/* ---- set-up ------------------------------------------------------------- */

static int check_llm(const tnd_config *cfg)
{
    const tnd_llm_config *llm[2] = {&cfg->coder.llm, &cfg->reviewer.llm};
    static const char *const roles[2] = {"coder", "reviewer"};

    for (int i = 0; i < 2; i++) {
        if (strcmp(llm[i]->provider, "replay") == 0 && !*llm[i]->cassette)
            return tnd_error_config("agents.%s.llm: provider replay needs a "
                                    "cassette (set llm.cassette in "
                                    "agents.yaml)",
                                    roles[i]);
        if (strcmp(llm[i]->provider, "replay") == 0 &&
            !tnd_fs_exists(llm[i]->cassette))
            return tnd_error_config("agents.%s.llm.cassette: %s does not exist",
                                    roles[i], llm[i]->cassette);
        if (strcmp(llm[i]->provider, "command") == 0 && !llm[i]->command.argv)
            return tnd_error_config("agents.%s.llm: provider command needs "
                                    "llm.command (the program to run)",
                                    roles[i]);
    }
    return 0;
}

static int load_config(run *r)
{
    const tnd_run_options *o = r->opts;
    char *implicit = tnd_fs_join(r->repo, "agents.yaml");
    const char *path = o->config;
    int error = 0;

    if (!path && tnd_fs_exists(implicit))
        path = implicit;
    if (path)
        error = tnd_config_load(&r->cfg, path);
    else
        r->cfg = tnd_config_defaults();
    free(implicit);
    if (error < 0)
        return error == TND_ECONFIG ? TND_ECONFIG : -1;
    if ((o->llm || o->base_url) &&
        tnd_config_override_llm(r->cfg, o->llm, o->base_url) < 0)
        return TND_ECONFIG;
    if (check_llm(r->cfg) < 0 || tnd_crew_check(r->cfg) < 0)
        return TND_ECONFIG;
    if (o->record && strcmp(r->cfg->coder.llm.provider, "replay") == 0 &&
        strcmp(r->cfg->reviewer.llm.provider, "replay") == 0)
        return tnd_error_config("--record records a live model's answers, "
                                "but both agents replay a cassette; add "
                                "--llm PROVIDER:MODEL");
    return 0;
}

/* tandem's own files inside the repository are not the coder's business
 * (and a cassette would show it the answers). */
static void hide_own_files(run *r)
{
    const char *own[3] = {r->cfg->path, r->cfg->coder.llm.cassette,
                          r->cfg->reviewer.llm.cassette};
    size_t n = 0, len = strlen(r->repo);

    for (int i = 0; i < 3; i++) {
        char *real;
        if (!own[i] || !*own[i] || !(real = realpath(own[i], NULL)))
            continue;
        if (strncmp(real, r->repo, len) == 0 && real[len] == '/') {
            bool dup = false;
            for (size_t k = 0; k < n; k++)
                dup = dup || strcmp(r->hidden[k], real + len + 1) == 0;
            if (!dup)
                r->hidden[n++] = tnd_xstrdup(real + len + 1);
        }
        free(real);
    }
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

/* ---- talking to agents -------------------------------------------------- */

/* A PARTIAL from an agent: progress while its model streams. On a
 * terminal, one line that updates; elsewhere nothing (logs stay clean). */
static void on_progress(const char *body, size_t len, void *payload)
{
    run *r = payload;
    json_object *obj = NULL;
    long chars = 0;

    if (tnd_json_parse(&obj, body, len) < 0 ||
        tnd_json_get_int(&chars, obj, "chars", 0, 1L << 40, TND_JSON_REQUIRED) <
            0) {
        tnd_log_debug("ignoring a progress message: %s", tnd_error_last());
        json_object_put(obj);
        return;
    }
    json_object_put(obj);
    r->streamed = (size_t)chars;
    tnd_log_debug("streaming: %zu characters so far", r->streamed);
    if (!r->opts->quiet && isatty(STDERR_FILENO)) {
        fprintf(stderr, "\r\033[Ktandem: [%d/%d] streaming: %zu characters",
                r->iterations, r->cfg->gate.max_iterations, r->streamed);
        r->progress_line = true;
    }
}

/* The request's deadline: orchestrator.request_timeout_s, or the end of
 * gate.max_wall_s if that comes first. */
static int64_t deadline_for(const run *r, bool *by_budget)
{
    int64_t now = tnd_now_ms();
    int64_t deadline =
        now + (int64_t)r->cfg->orchestrator.request_timeout_s * 1000;
    long left = tnd_budget_wall_left(&r->cfg->gate, now - r->started);

    *by_budget = left >= 0 && now + left < deadline;
    return *by_budget ? now + left : deadline;
}

/* Ask an agent; a budget that runs out during the wait ends the loop
 * (escalated) rather than failing it. */
static int ask(run *r, const char *service, const char *key, char *body,
               size_t len, char **reply, size_t *reply_len)
{
    bool by_budget;
    int64_t deadline = deadline_for(r, &by_budget);
    int rc;

    r->streamed = 0;
    rc = tnd_crew_call(r->crew, service, key, body, len, deadline, on_progress,
                       r, reply, reply_len);
    end_progress(r);
    if (rc == TND_ETIMEOUT && !by_budget)
        return tnd_error_set("no reply from the %s within %d s "
                             "(orchestrator.request_timeout_s)",
                             service, r->cfg->orchestrator.request_timeout_s);
    return rc;
}

/* ---- the loop ----------------------------------------------------------- */

static void history_add(run *r, const char *fmt, ...) TND_PRINTF(2, 3);

static void history_add(run *r, const char *fmt, ...)
{
    va_list ap;

    TND_GROW(r->history, r->ahistory, r->nhistory + 2);
    va_start(ap, fmt);
    r->history[r->nhistory++] = tnd_xvasprintf(fmt, ap);
    va_end(ap);
    r->history[r->nhistory] = NULL;
}

/* Text of the failing skills, to steer context toward the files named. */
static char *failure_hints(const tnd_audit_reply *a)
{
    tnd_buf b;

    tnd_buf_init(&b, 64 * 1024);
    for (size_t i = 0; a && i < a->nskills; i++)
        if (a->skills[i].status != TND_SKILL_PASS)
            tnd_buf_puts(&b, a->skills[i].output);
    for (size_t i = 0; a && a->critique && i < a->critique->nissues; i++)
        if (a->critique->issues[i].file) {
            tnd_buf_puts(&b, a->critique->issues[i].file);
            tnd_buf_puts(&b, "\n");
        }
    return tnd_buf_detach(&b, NULL);
}

static void describe_audit(run *r, int n, const tnd_audit_reply *a)
{
    tnd_buf b;

    tnd_buf_init(&b, 4096);
    for (size_t i = 0; i < a->nskills; i++) {
        const tnd_skill_result *s = &a->skills[i];
        tnd_buf_printf(&b, "%s%s %s", i ? ", " : "", s->name,
                       s->status == TND_SKILL_PASS ? "pass" : "FAIL");
        if (s->status == TND_SKILL_FAIL && s->exit_code >= 0)
            tnd_buf_printf(&b, " (exit %d)", s->exit_code);
        else if (s->status != TND_SKILL_PASS)
            tnd_buf_printf(&b, " (%s)", tnd_skill_status_name(s->status));
    }
    if (a->critique)
        tnd_buf_printf(&b, "%scritique: %s, confidence %.2f, %zu issue%s",
                       a->nskills ? "; " : "",
                       tnd_verdict_name(a->critique->verdict),
                       a->critique->confidence, a->critique->nissues,
                       a->critique->nissues == 1 ? "" : "s");
    else
        tnd_buf_printf(&b, "%sno valid critique", a->nskills ? "; " : "");
    say(r, "[%d/%d] reviewer: %s", n, r->cfg->gate.max_iterations,
        tnd_buf_str(&b));
    tnd_buf_free(&b);
}

static void stop(run *r, const char *status, const char *reason)
{
    r->status = status;
    free(r->reason);
    r->reason = tnd_xstrdup(reason);
}

/* 1 (and the loop stops, escalated) when a budget is spent. */
static int spent(run *r)
{
    char why[256];
    tnd_usage used = tnd_report_total(r->report);

    if (!tnd_budget_spent(why, sizeof(why), &r->cfg->gate, &used,
                          tnd_now_ms() - r->started))
        return 0;
    say(r, "budget: %s", why);
    stop(r, "escalated", why);
    return 1;
}

static int propose(run *r, attempt *a, const char *feedback, const char *hints)
{
    char key[160];
    char *body, *reply = NULL;
    size_t len, reply_len = 0;
    int rc;

    a->req.task_id = (char *)tnd_session_id(r->session);
    a->req.attempt = a->n;
    a->req.task = (char *)r->opts->task;
    a->req.feedback = (char *)feedback;
    if (tnd_context_build(&a->req, tnd_workspace_path(r->ws), r->opts->task,
                          hints, (const char *const *)r->hidden,
                          r->cfg->coder.context_max_bytes) < 0)
        return -1;
    say(r, "[%d/%d] coder: proposing a change (%zu file%s in context)", a->n,
        r->cfg->gate.max_iterations, a->req.nfiles,
        a->req.nfiles == 1 ? "" : "s");
    body = tnd_code_request_encode(&a->req, &len);
    snprintf(key, sizeof(key), "%s/%d/coder", a->req.task_id, a->n);
    rc = ask(r, "coder", key, body, len, &reply, &reply_len);
    free(body);
    if (rc == 0 &&
        (rc = tnd_code_reply_decode(&a->reply, reply, reply_len)) == 0)
        tnd_report_usage(r->report, TND_ROLE_CODER, &a->reply.usage);
    free(reply);
    return rc;
}

static int apply(run *r, attempt *a)
{
    tnd_gate_input *in = &a->in;
    char name[64];
    uint64_t h = 0;

    if (a->reply.format_error) {
        in->format_error = a->reply.format_error;
    } else if (tnd_workspace_apply(r->ws, a->reply.edits, a->reply.nedits) <
                   0 ||
               !(a->diff = tnd_workspace_diff(r->ws))) {
        a->apply_error = tnd_xstrdup(tnd_error_last());
        in->apply_error = a->apply_error;
    } else if (!*a->diff) {
        in->empty = true;
    }
    if (in->format_error || in->apply_error)
        say(r, "[%d/%d] coder: %s", a->n, r->cfg->gate.max_iterations,
            in->format_error ? "no usable edits" : "the edits do not apply");
    else
        say(r, "[%d/%d] coder: %zu edit%s (%ld+%ld tokens)", a->n,
            r->cfg->gate.max_iterations, a->reply.nedits,
            a->reply.nedits == 1 ? "" : "s", a->reply.usage.prompt_tokens,
            a->reply.usage.completion_tokens);
    if (a->diff && *a->diff) {
        h = tnd_str_hash(TND_FNV_SEED, a->diff, strlen(a->diff));
        for (size_t i = 0; i < r->nhashes; i++)
            if (r->hashes[i] == h)
                in->repeats = (int)i + 1;
    }
    TND_GROW(r->hashes, r->ahashes, r->nhashes + 1);
    r->hashes[r->nhashes++] = h;
    snprintf(name, sizeof(name), "attempt-%d.diff", a->n);
    if (tnd_session_write(r->session, name, a->diff ? a->diff : "",
                          a->diff ? strlen(a->diff) : 0) < 0)
        return -1;
    a->diff_rel = tnd_session_relpath(r->session, name);
    return 0;
}

static int audit(run *r, attempt *a)
{
    tnd_audit_request ar = {(char *)tnd_session_id(r->session), a->n,
                            (char *)r->opts->task,
                            (char *)tnd_workspace_path(r->ws), a->diff};
    char key[160];
    char *body, *reply = NULL;
    size_t len, reply_len = 0;
    int rc;

    body = tnd_audit_request_encode(&ar, &len);
    snprintf(key, sizeof(key), "%s/%d/reviewer", ar.task_id, a->n);
    say(r, "[%d/%d] reviewer: auditing", a->n, r->cfg->gate.max_iterations);
    rc = ask(r, "reviewer", key, body, len, &reply, &reply_len);
    free(body);
    if (rc == 0 &&
        (rc = tnd_audit_reply_decode(&a->audit, reply, reply_len)) == 0) {
        a->audited = true;
        tnd_report_usage(r->report, TND_ROLE_REVIEWER, &a->audit.usage);
        a->in.audit = &a->audit;
        describe_audit(r, a->n, &a->audit);
    }
    free(reply);
    return rc;
}

static void attempt_clear(attempt *a)
{
    free(a->req.repo_map);
    for (size_t i = 0; i < a->req.nfiles; i++) {
        free(a->req.files[i].path);
        free(a->req.files[i].content);
    }
    free(a->req.files);
    tnd_code_reply_clear(&a->reply);
    tnd_audit_reply_clear(&a->audit);
    free(a->diff);
    free(a->diff_rel);
    free(a->apply_error);
}

/* A failed request: a spent budget or an interruption ends the loop in
 * their own way; anything else fails the run. */
static int request_failed(run *r, int rc)
{
    if (rc == TND_ETIMEOUT && spent(r))
        return 0;
    return rc;
}

static int loop(run *r)
{
    char *feedback = tnd_xstrdup(""), *hints = NULL;
    uint64_t last_sig = 0;
    int streak = 0, error = 0;

    for (int n = 1; !r->status && error == 0; n++) {
        attempt a;
        uint64_t sig;

        memset(&a, 0, sizeof(a));
        a.n = n;
        r->iterations = n;
        if (spent(r))
            break;
        if ((error = propose(r, &a, feedback, hints)) < 0 ||
            (error = apply(r, &a)) < 0) {
            error = request_failed(r, error);
            attempt_clear(&a);
            break;
        }
        a.in.attempt = n;
        a.in.required = (const char *const *)r->required;
        if (!a.in.format_error && !a.in.apply_error && !a.in.empty &&
            !a.in.repeats) {
            if (spent(r) || (error = audit(r, &a)) < 0) {
                error = request_failed(r, error);
                attempt_clear(&a);
                break;
            }
        }

        sig = tnd_gate_signature(&a.in);
        streak = sig && sig == last_sig ? streak + 1 : (sig ? 1 : 0);
        last_sig = sig;
        a.in.streak = streak;
        tnd_gate_decide(&a.decision, &r->cfg->gate, &a.in);
        tnd_report_attempt(r->report, n, &a.reply, &a.in, &a.decision,
                           a.diff_rel, sig);
        say(r, "[%d/%d] %s: %s", n, r->cfg->gate.max_iterations,
            tnd_gate_action_name(a.decision.action), a.decision.reason);
        free(r->last_rel);
        r->last_rel = tnd_xstrdup(a.diff_rel);
        if (a.decision.action == TND_GATE_APPROVE) {
            if ((error = tnd_session_write(r->session, "final.diff", a.diff,
                                           strlen(a.diff))) == 0) {
                r->final_rel = tnd_session_relpath(r->session, "final.diff");
                stop(r, "approved", a.decision.reason);
                fputs(a.diff, stdout);
                fflush(stdout);
            }
        } else if (a.decision.action == TND_GATE_ESCALATE) {
            stop(r, "escalated", a.decision.reason);
        } else {
            char *next = tnd_feedback_build(
                &a.in, &a.decision, (const char *const *)r->history, a.diff);
            free(feedback);
            feedback = next;
            free(hints);
            hints = failure_hints(a.audited ? &a.audit : NULL);
            history_add(r, "attempt %d: %s", n, a.decision.reason);
            error = tnd_workspace_revert(r->ws);
        }
        attempt_clear(&a);
    }
    free(feedback);
    free(hints);
    return error;
}

/* ---- the end ------------------------------------------------------------ */

/* Turn the agents' recording into the cassette --record asked for. */
static void save_recording(run *r)
{
    size_t count = 0, skipped = 0;
    char *comment;

    if (!r->record_partial)
        return;
    comment =
        tnd_xasprintf("recorded by tandem %s: %s", TND_VERSION, r->opts->task);
    if (tnd_cassette_from_recording(r->record_partial, r->opts->record, comment,
                                    &count, &skipped) < 0) {
        fprintf(stderr, "tandem: cannot write the recording: %s\n",
                tnd_error_last());
    } else {
        fprintf(stderr, "recorded %zu exchange%s in %s%s\n", count,
                count == 1 ? "" : "s", r->opts->record,
                skipped ? " (some lines were torn and left out)" : "");
        unlink(r->record_partial);
    }
    free(comment);
}

static int finish(run *r)
{
    char *text, *summary;
    int code;

    tnd_report_outcome(r->report, r->status, r->reason, r->iterations,
                       r->final_rel, r->last_rel, tnd_now_ms() - r->started);
    text = tnd_report_json(r->report);
    if (tnd_session_write(r->session, "report.json", text, strlen(text)) < 0)
        tnd_log_error("cannot write the report: %s", tnd_error_last());
    free(text);
    save_recording(r);
    summary = tnd_report_summary(r->report);
    fprintf(stderr, "%s\n", summary);
    free(summary);
    if (strcmp(r->status, "approved") == 0) {
        code = TND_EXIT_OK;
    } else if (strcmp(r->status, "escalated") == 0) {
        fprintf(stderr, "needs a human: %s\n", r->reason);
        if (r->last_rel)
            fprintf(stderr, "the last proposal is in %s/%s\n", r->repo,
                    r->last_rel);
        code = TND_EXIT_HUMAN;
    } else {
        fprintf(stderr, "failed: %s\n", r->reason ? r->reason : "");
        code = TND_EXIT_FAILED;
    }
    fprintf(stderr, "session %s: %s/\n", tnd_session_id(r->session),
            tnd_session_dir(r->session));
    return code;
}

static void run_close(run *r)
{
    tnd_crew_destroy(&r->crew, r->opts->keep_workspace);
    tnd_workspace_destroy(&r->ws, !r->opts->keep_workspace);
    tnd_report_destroy(&r->report);
    tnd_session_destroy(&r->session);
    tnd_config_destroy(&r->cfg);
    for (size_t i = 0; i < r->nhistory; i++)
        free(r->history[i]);
    free(r->history);
    free(r->hashes);
    if (r->required)
        for (char **p = r->required; *p; p++)
            free(*p);
    free(r->required);
    for (int i = 0; i < 4; i++)
        free(r->hidden[i]);
    free(r->record_partial);
    free(r->reason);
    free(r->final_rel);
    free(r->last_rel);
    free(r->repo);
}

/* Resolve the repository and the configuration: exit 2 on any mistake,
 * before anything is created. */
static int prepare(run *r)
{
    int error;

    if (!(r->repo = tnd_fs_realpath(r->opts->repo ? r->opts->repo : "."))) {
        tnd_error_prefix("--repo");
        return TND_ECONFIG;
    }
    if (!tnd_fs_is_dir(r->repo))
        return tnd_error_config("--repo: %s is not a directory", r->repo);
    if ((error = load_config(r)) < 0)
        return error;
    if (r->opts->record) {
        char *dir = tnd_fs_dirname(r->opts->record);
        bool ok = tnd_fs_is_dir(dir);
        free(dir);
        if (!ok)
            return tnd_error_config("--record %s: its directory does not "
                                    "exist",
                                    r->opts->record);
        r->record_partial = tnd_xasprintf("%s.partial", r->opts->record);
        unlink(r->record_partial);
    }
    collect_required(r);
    hide_own_files(r);
    return 0;
}

int tnd_run(const tnd_run_options *opts)
{
    run r;
    struct sigaction sa, old_int, old_term, old_hup;
    tnd_crew_options co;
    char *logs = NULL, *ws_dir = NULL;
    int error, code;

    memset(&r, 0, sizeof(r));
    r.opts = opts;
    r.started = tnd_now_ms();
    tnd_log_init("tandem", opts->verbose ? TND_LOG_DEBUG : TND_LOG_WARN);
    if ((error = prepare(&r)) < 0) {
        fprintf(stderr, "tandem: %s\n", tnd_error_last());
        run_close(&r);
        return error == TND_ECONFIG ? TND_EXIT_USAGE : TND_EXIT_FAILED;
    }
    if (!(r.session = tnd_session_new(r.repo))) {
        fprintf(stderr, "tandem: %s\n", tnd_error_last());
        run_close(&r);
        return TND_EXIT_FAILED;
    }
    r.report = tnd_report_new(tnd_session_id(r.session), opts->task, r.repo,
                              r.cfg->path, tnd_wall_ms());

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    interrupted = 0;
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    sigaction(SIGHUP, &sa, &old_hup);
    signal(SIGPIPE, SIG_IGN);

    say(&r, "session %s: %s", tnd_session_id(r.session), opts->task);
    logs = tnd_session_path(r.session, "logs");
    memset(&co, 0, sizeof(co));
    co.config = r.cfg;
    co.session_id = tnd_session_id(r.session);
    co.logs_dir = logs;
    co.llm = opts->llm;
    co.base_url = opts->base_url;
    co.record = r.record_partial;
    co.verbose = opts->verbose;
    co.interrupted = &interrupted;
    error = -1;
    if ((r.crew = tnd_crew_new(&co)) != NULL) {
        ws_dir = tnd_fs_join(tnd_crew_runtime(r.crew), "workspace");
        if ((r.ws = tnd_workspace_new(r.repo, ws_dir,
                                      r.cfg->orchestrator.workspace_max_bytes)))
            error = loop(&r);
    }
    if (error < 0)
        stop(&r, "failed", tnd_error_last());
    tnd_crew_destroy(&r.crew, opts->keep_workspace);
    code = finish(&r);
    free(logs);
    free(ws_dir);
    run_close(&r);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    sigaction(SIGHUP, &old_hup, NULL);
    return code;
}
