/* The gate loop across real processes: `tandem run`, `tandem resume` and
 * the answers to an escalation (see run.h).
 *
 * Everything one run owns hangs off struct run and is released in
 * run_close(), whatever path the run took. The agents and their plumbing
 * live in the crew (crew.c), the report in report.c, the journal in
 * journal.c; this file is the loop: check the budget, propose, apply,
 * audit, decide, and when the gate says so, ask a person.
 *
 * Replay: every agent reply is journaled before it is used. A resumed
 * run goes through the same loop from attempt 1, taking each reply from
 * the journal when it is there and from the agents when it is not, so
 * its state (feedback, failure streaks, usage) is exactly what the
 * interrupted run had, and no model is asked twice for the same thing. */
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
#include "orchestrator/change.h"
#include "orchestrator/context.h"
#include "orchestrator/crew.h"
#include "orchestrator/escalate.h"
#include "orchestrator/events.h"
#include "orchestrator/feedback.h"
#include "orchestrator/gate.h"
#include "orchestrator/journal.h"
#include "orchestrator/lessons.h"
#include "orchestrator/loop.h"
#include "orchestrator/report.h"
#include "orchestrator/rundir.h"
#include "orchestrator/session.h"
#include "orchestrator/snapshot.h"
#include "orchestrator/unidiff.h"
#include "orchestrator/views.h"
#include "orchestrator/workspace.h"
#include "proto/audit.h"
#include "proto/code.h"
#include "proto/json.h"
#include "skills/excerpt.h"

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
    interrupted = sig;
}

void tnd_loop_end_progress(run *r)
{
    if (r->progress_line) {
        fputs("\r\033[K", stderr);
        r->progress_line = false;
    }
}

void tnd_loop_say(run *r, const char *fmt, ...)
{
    va_list ap;

    if (r->opts.quiet)
        return;
    tnd_loop_end_progress(r);
    va_start(ap, fmt);
    fputs("tandem: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

void tnd_loop_stop(run *r, tnd_session_status status, const char *reason)
{
    r->status = status;
    free(r->reason);
    r->reason = tnd_xstrdup(reason);
}

/* ---- the journal -------------------------------------------------------- */

/* Record a step (fsync'd) and refresh the views; the run does not act on
 * a step it could not record. fields is consumed. */
int tnd_loop_step(run *r, const char *type, json_object *fields)
{
    if (tnd_journal_append(r->journal, type, fields) < 0)
        return -1;
    tnd_events_publish(
        r->events, tnd_session_id(r->session),
        tnd_journal_record(r->journal, tnd_journal_count(r->journal) - 1));
    if (tnd_views_write(r->session, r->journal) < 0)
        tnd_log_warn("cannot refresh the session views: %s", tnd_error_last());
    return 0;
}

/* Tell watchers what the run is doing now (not journaled). */
void tnd_loop_phase(run *r, int n, const char *what)
{
    json_object *e = json_object_new_object();

    json_object_object_add(e, "type", json_object_new_string("phase"));
    json_object_object_add(e, "attempt", json_object_new_int(n));
    json_object_object_add(e, "phase", json_object_new_string(what));
    tnd_events_publish(r->events, tnd_session_id(r->session), e);
    json_object_put(e);
}

/* The index of the first record of type for attempt at or after from;
 * -1 when there is none. */
long tnd_loop_find(const run *r, const char *type, int n, size_t from)
{
    for (size_t i = from; i < tnd_journal_count(r->journal); i++) {
        json_object *rec = tnd_journal_record(r->journal, i);
        if (strcmp(tnd_journal_type(rec), type) == 0 &&
            tnd_json_int_or(rec, "attempt", 0) == n)
            return (long)i;
    }
    return -1;
}

/* A reply journaled for (type, attempt), as the body it came in; NULL
 * when the journal has none. Caller frees. */
char *tnd_loop_journaled_reply(const run *r, const char *type, int n,
                               size_t *len)
{
    long i = tnd_loop_find(r, type, n, 0);
    json_object *reply;

    if (i < 0 ||
        !json_object_object_get_ex(tnd_journal_record(r->journal, (size_t)i),
                                   "reply", &reply))
        return NULL;
    return tnd_json_dump(reply, len);
}

/* The LLM exchanges an agent sent with its reply go to the session's
 * llm/attempt-N-TYPE.json (secrets redacted again, in case an agent on
 * another host knew of none), not into the journal: they are for people,
 * and can be large. A failure to write them is only logged. */
static void keep_exchanges(run *r, const char *type, int n, json_object *reply)
{
    json_object *ex, *o;
    char name[96], *dir, *text;

    if (!json_object_object_get_ex(reply, "exchanges", &ex))
        return;
    o = json_object_new_object();
    json_object_object_add(o, "attempt", json_object_new_int(n));
    json_object_object_add(o, "step", json_object_new_string(type));
    json_object_object_add(o, "exchanges", json_object_get(ex));
    json_object_object_del(reply, "exchanges");
    text = tnd_log_redact(tnd_json_pretty(o));
    json_object_put(o);
    dir = tnd_session_path(r->session, "llm");
    snprintf(name, sizeof(name), "llm/attempt-%d-%s.json", n, type);
    if (tnd_fs_mkdirs(dir, 0755) < 0 ||
        tnd_session_write(r->session, name, text, strlen(text)) < 0)
        tnd_log_warn("cannot keep the LLM exchanges of attempt %d: %s", n,
                     tnd_error_last());
    free(dir);
    free(text);
}

/* Journal a reply body under type; it is parsed back into JSON so the
 * journal stays one object per line. */
int tnd_loop_journal_reply(run *r, const char *type, int n, const char *body,
                           size_t len)
{
    json_object *reply = NULL, *f;

    if (tnd_json_parse(&reply, body, len) < 0)
        return -1;
    keep_exchanges(r, type, n, reply);
    if (strcmp(tnd_json_str_or(reply, "type", ""), "error") == 0) {
        /* an agent that could not do it: not an answer to replay, so a
         * resumed session asks again (the caller reports the error) */
        json_object_put(reply);
        return 0;
    }
    f = json_object_new_object();
    json_object_object_add(f, "attempt", json_object_new_int(n));
    json_object_object_add(f, "reply", reply);
    return tnd_loop_step(r, type, f);
}

/* ---- set-up ------------------------------------------------------------- */

static int load_config(run *r)
{
    const tnd_run_options *o = &r->opts;
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
    /* what the loader cannot know: whether the files named exist now, and
     * what --llm made of the models */
    if (tnd_config_check_llms(r->cfg, true) < 0 ||
        tnd_crew_check(r->cfg, !r->opts.review) < 0)
        return TND_ECONFIG;
    if (o->record && r->cfg->coder.llm.provider == TND_PROVIDER_REPLAY &&
        r->cfg->reviewer.llm.provider == TND_PROVIDER_REPLAY)
        return tnd_error_config("--record records a live model's answers, "
                                "but both agents replay a cassette; add "
                                "--llm PROVIDER:MODEL");
    r->gate = r->cfg->gate;
    if (r->gate.escalate == TND_ESCALATE_AUTO)
        r->mode = isatty(STDIN_FILENO) ? TND_ESCALATE_TTY : TND_ESCALATE_QUEUE;
    else
        r->mode = r->gate.escalate;
    return 0;
}

/* tandem's own files inside the repository are not the coder's business
 * (and a cassette would show it the answers). */
static void hide_own_files(run *r)
{
    const char *own[3 + 16] = {r->cfg->path, r->cfg->coder.llm.cassette,
                               r->cfg->reviewer.llm.cassette};
    size_t n = 0, len = strlen(r->repo), nown = 3;

    for (size_t i = 0; i < r->cfg->reviewer.nmodels && i < 16; i++)
        own[nown++] = r->cfg->reviewer.models[i].cassette;
    for (size_t i = 0; i < nown; i++) {
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
void tnd_loop_on_progress(const char *body, size_t len, void *payload)
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
    if (!json_object_object_get_ex(obj, "delta", NULL) &&
        !json_object_object_get_ex(obj, "phase", NULL)) {
        /* "still working": a sign of life for the broker, nothing to
         * show */
        json_object_put(obj);
        return;
    }
    if (r->events) {
        json_object *e = json_object_new_object();
        json_object_object_add(e, "type", json_object_new_string("progress"));
        json_object_object_add(e, "attempt",
                               json_object_new_int(r->iterations));
        json_object_object_foreach(obj, key, val)
        {
            if (strcmp(key, "type") != 0 && strcmp(key, "tandem") != 0)
                json_object_object_add(e, key, json_object_get(val));
        }
        tnd_events_publish(r->events, tnd_session_id(r->session), e);
        json_object_put(e);
    }
    json_object_put(obj);
    r->streamed = (size_t)chars;
    tnd_log_debug("streaming: %zu characters so far", r->streamed);
    if (!r->opts.quiet && isatty(STDERR_FILENO)) {
        fprintf(stderr, "\r\033[Ktandem: [%d/%d] streaming: %zu characters",
                r->iterations, r->gate.max_iterations, r->streamed);
        r->progress_line = true;
    }
}

/* The request's deadline: its timeout (tnd_budget_request_s), or the
 * end of gate.max_wall_s if that comes first. */
int64_t tnd_loop_deadline(const run *r, const char *service, bool *by_budget)
{
    int64_t now = tnd_now_ms();
    int64_t deadline =
        now + (int64_t)tnd_budget_request_s(r->cfg, service) * 1000;
    long left = tnd_budget_wall_left(&r->gate, now - r->started);

    *by_budget = left >= 0 && now + left < deadline;
    return *by_budget ? now + left : deadline;
}

/* Where a request's timeout came from, for the message that says it ran
 * out. */
const char *tnd_loop_timeout_source(const run *r)
{
    return r->cfg->orchestrator.request_timeout_s > 0
               ? "orchestrator.request_timeout_s"
               : "the agent's model and skill timeouts and a minute; "
                 "orchestrator.request_timeout_s sets one";
}

/* Ask an agent; a budget that runs out during the wait ends the loop
 * (escalated) rather than failing it. */
int tnd_loop_ask(run *r, const char *service, const char *key, char *body,
                 size_t len, char **reply, size_t *reply_len)
{
    bool by_budget;
    int64_t deadline = tnd_loop_deadline(r, service, &by_budget);
    int rc;

    r->streamed = 0;
    rc = tnd_crew_call(r->crew, service, key, body, len, deadline,
                       tnd_loop_on_progress, r, reply, reply_len);
    tnd_loop_end_progress(r);
    if (rc == TND_ETIMEOUT && !by_budget)
        return tnd_error_set("no reply from the %s within %ld s (%s)", service,
                             tnd_budget_request_s(r->cfg, service),
                             tnd_loop_timeout_source(r));
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

/* The failing skills' output as the coder is shown it, to steer the
 * context toward the files it names: the excerpt, not the whole output,
 * so twenty kilobytes of warnings the baseline already had do not put
 * the files they name first. baseline may be NULL. */
static char *failure_hints(const tnd_audit_reply *a,
                           const tnd_audit_reply *baseline)
{
    tnd_buf b;

    tnd_buf_init(&b, 64 * 1024);
    for (size_t i = 0; a && i < a->nskills; i++) {
        const tnd_skill_result *s = &a->skills[i], *before;
        char *seen;
        if (s->status == TND_SKILL_PASS || s->status == TND_SKILL_SKIPPED)
            continue;
        before = baseline ? tnd_gate_before(baseline, s->name) : NULL;
        seen = tnd_excerpt(s->output, before ? before->output : NULL,
                           TND_FEEDBACK_MAX_OUTPUT, NULL);
        tnd_buf_puts(&b, seen);
        free(seen);
    }
    for (size_t i = 0; a && a->critique && i < a->critique->nissues; i++)
        if (a->critique->issues[i].file) {
            tnd_buf_puts(&b, a->critique->issues[i].file);
            tnd_buf_puts(&b, "\n");
        }
    return tnd_buf_detach(&b, NULL);
}

static int propose(run *r, attempt *a, const loop_state *ls)
{
    char key[160];
    char *body, *reply;
    size_t len, reply_len = 0;
    int rc = 0;

    a->req.task_id = (char *)tnd_session_id(r->session);
    a->req.attempt = a->n;
    a->req.task = (char *)r->opts.task;
    a->req.feedback = ls->feedback;
    a->req.lessons = r->lessons; /* borrowed: attempt_clear leaves them */
    a->req.nlessons = r->nlessons;
    if ((reply = tnd_loop_journaled_reply(r, "proposal", a->n, &reply_len))) {
        tnd_loop_say(r, "[%d/%d] %s: (from the journal)", a->n,
                     r->gate.max_iterations,
                     r->opts.review ? "change" : "coder");
    } else if (r->opts.review) {
        /* the change under review stands in for a coder's proposal */
        tnd_code_reply cr = {.task_id = a->req.task_id,
                             .attempt = a->n,
                             .rationale = (char *)"the change under review",
                             .edits = r->edits,
                             .nedits = r->nedits};
        reply = tnd_code_reply_encode(&cr, &reply_len);
        if ((rc = tnd_loop_journal_reply(r, "proposal", a->n, reply,
                                         reply_len)) < 0) {
            free(reply);
            return rc;
        }
    } else {
        tnd_context_options co = {
            .task = r->opts.task,
            .hints = ls->hints,
            .include = r->cfg->coder.context_include,
            .exclude = (const char *const *)r->hidden,
            .budget = r->cfg->coder.context_max_bytes,
        };
        tnd_context_stats st;
        /* from the base: what a build wrote is never offered as source */
        if (tnd_context_build(&a->req, tnd_snapshot_path(r->base), &co, &st) <
            0)
            return -1;
        body = tnd_code_request_encode(&a->req, &len);
        /* about 4 bytes a token: enough to see a prompt grow */
        tnd_loop_say(
            r,
            "[%d/%d] coder: proposing a change (%zu file%s in context, "
            "~%zu tokens asked)",
            a->n, r->gate.max_iterations, st.files, st.files == 1 ? "" : "s",
            len / 4);
        if (st.replaced)
            tnd_loop_say(r,
                         "[%d/%d] coder: %zu byte%s in %zu file%s not valid "
                         "UTF-8, sent as U+FFFD",
                         a->n, r->gate.max_iterations, st.replaced,
                         st.replaced == 1 ? "" : "s", st.replaced_files,
                         st.replaced_files == 1 ? "" : "s");
        tnd_report_context(r->report, &st, co.budget, len);
        tnd_loop_phase(r, a->n, "coding");
        snprintf(key, sizeof(key), "%s/%d/coder", a->req.task_id, a->n);
        rc = tnd_loop_ask(r, "coder", key, body, len, &reply, &reply_len);
        free(body);
        if (rc == 0 && (rc = tnd_loop_journal_reply(r, "proposal", a->n, reply,
                                                    reply_len)) < 0)
            free(reply);
        if (rc < 0)
            return rc;
    }
    if ((rc = tnd_code_reply_decode(&a->reply, reply, reply_len)) == 0)
        tnd_report_usage(r->report, TND_ROLE_CODER, &a->reply.usage);
    free(reply);
    return rc;
}

static int apply(run *r, attempt *a)
{
    tnd_gate_input *in = &a->in;
    char name[64];
    uint64_t h = 0;

    tnd_loop_phase(r, a->n, "applying");
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
        tnd_loop_say(r, "[%d/%d] %s: %s", a->n, r->gate.max_iterations,
                     r->opts.review ? "change" : "coder",
                     in->format_error ? "no usable edits"
                                      : "the edits do not apply");
    else if (r->opts.review)
        tnd_loop_say(r, "[%d/%d] change: %zu hunk%s and file%s applied", a->n,
                     r->gate.max_iterations, a->reply.nedits,
                     a->reply.nedits == 1 ? "" : "s",
                     a->reply.nedits == 1 ? "" : "s");
    else
        tnd_loop_say(r, "[%d/%d] coder: %zu edit%s (%ld+%ld tokens)", a->n,
                     r->gate.max_iterations, a->reply.nedits,
                     a->reply.nedits == 1 ? "" : "s",
                     a->reply.usage.prompt_tokens,
                     a->reply.usage.completion_tokens);
    if (a->diff && *a->diff) {
        h = tnd_str_hash(TND_FNV_SEED, a->diff, strlen(a->diff));
        for (size_t i = 0; i < r->nhashes; i++)
            if (r->hashes[i] == h)
                in->repeats = (int)i + 1;
        free(r->last_diff);
        r->last_diff = tnd_xstrdup(a->diff);
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
    free(a->risky);
}

/* Approve: final.diff, the diff on stdout. */
int tnd_loop_approve(run *r, const char *diff, const char *reason)
{
    if (!diff || !*diff) {
        tnd_loop_stop(r, TND_SESSION_FAILED,
                      "there is no change to approve: no attempt "
                      "produced a diff");
        return 0;
    }
    if (tnd_session_write(r->session, "final.diff", diff, strlen(diff)) < 0)
        return -1;
    free(r->final_rel);
    r->final_rel = tnd_session_relpath(r->session, "final.diff");
    tnd_loop_stop(r, TND_SESSION_APPROVED, reason);
    if (!r->opts.review) {
        fputs(diff, stdout);
        fflush(stdout);
    }
    return 0;
}

/* ---- a person --------------------------------------------------------- */

/* ---- the loop ----------------------------------------------------------- */

/* The gate's decision for attempt a, journaled once. */
static int decide(run *r, attempt *a, loop_state *ls)
{
    uint64_t sig = tnd_gate_signature(&a->in);
    char hex[32];

    tnd_gate_config gate = r->gate;

    ls->streak = sig && sig == ls->last_sig ? ls->streak + 1 : (sig ? 1 : 0);
    ls->last_sig = sig;
    a->in.streak = ls->streak;
    if (r->opts.review) {
        /* one attempt, no coder: a failure is just that, not a loop that
         * ran out */
        gate.max_iterations = a->n + 1;
        gate.persistent_failure_threshold = a->n + 1;
    }
    tnd_gate_decide(&a->decision, &gate, &a->in);
    tnd_report_attempt(r->report, a->n, &a->reply, &a->in, &a->decision,
                       a->diff_rel, sig);
    tnd_loop_say(r, "[%d/%d] %s: %s", a->n, r->gate.max_iterations,
                 r->opts.review && !a->decision.passed
                     ? "reject"
                     : tnd_gate_action_name(a->decision.action),
                 a->decision.reason);
    free(r->last_rel);
    r->last_rel = tnd_xstrdup(a->diff_rel);
    if (tnd_loop_find(r, "decision", a->n, 0) < 0) {
        json_object *f = json_object_new_object();
        snprintf(hex, sizeof(hex), "%016llx", (unsigned long long)sig);
        json_object_object_add(f, "attempt", json_object_new_int(a->n));
        json_object_object_add(
            f, "action",
            json_object_new_string(tnd_gate_action_name(a->decision.action)));
        json_object_object_add(f, "reason",
                               json_object_new_string(a->decision.reason));
        json_object_object_add(f, "passed",
                               json_object_new_boolean(a->decision.passed));
        json_object_object_add(f, "signature",
                               sig ? json_object_new_string(hex) : NULL);
        json_object_object_add(f, "streak", json_object_new_int(ls->streak));
        json_object_object_add(f, "diff", tnd_json_str_or_null(a->diff_rel));
        return tnd_loop_step(r, "decision", f);
    }
    return 0;
}

/* Another attempt: feedback from this one, the files back as they were. */
static int next_attempt(run *r, attempt *a, loop_state *ls)
{
    char *next = tnd_feedback_build(&a->in, &a->decision,
                                    (const char *const *)r->history, a->diff);

    if (r->guidance) {
        char *with = tnd_xasprintf("%s\nA person looked at this and says:\n"
                                   "%s\nFollow this guidance.\n",
                                   next, r->guidance);
        free(next);
        next = with;
        free(r->guidance);
        r->guidance = NULL;
    }
    free(ls->feedback);
    ls->feedback = next;
    free(ls->hints);
    ls->hints = failure_hints(a->audited ? &a->audit : NULL,
                              r->has_baseline ? &r->baseline : NULL);
    history_add(r, "attempt %d: %s", a->n, a->decision.reason);
    return tnd_workspace_reset(r->ws);
}

/* An approval after failed attempts is a lesson: the first failure was
 * the mistake, the approved change its correction. A lesson that cannot
 * be stored costs a warning, never the run. */
static void learn(run *r, const attempt *a)
{
    const char *mistake;
    char **paths;
    char *correction;

    if (!r->bank || r->nhistory == 0)
        return;
    mistake = strchr(r->history[0], ':') ? strchr(r->history[0], ':') + 2
                                         : r->history[0];
    paths = tnd_xcalloc(a->reply.nedits + 1, sizeof(char *));
    for (size_t i = 0; i < a->reply.nedits; i++)
        paths[i] = a->reply.edits[i].path;
    correction = tnd_xasprintf(
        "%s (approved at attempt %d)",
        *a->reply.rationale ? a->reply.rationale : "the approved change", a->n);
    if (tnd_lessons_learn(r->bank, r->opts.task, mistake, correction,
                          (const char *const *)paths) < 0)
        tnd_log_warn("cannot store a lesson: %s", tnd_error_last());
    free(correction);
    free(paths);
}

/* The lessons earlier tasks of this kind left, for every attempt. */
static void recall(run *r)
{
    const tnd_lesson **found = NULL;
    size_t n = 0;

    if (!(r->bank = tnd_lessons_open(r->repo))) {
        tnd_log_warn("lessons are not used: %s", tnd_error_last());
        return;
    }
    if (tnd_lessons_relevant(&found, &n, r->bank,
                             tnd_lessons_task_type(r->opts.task), NULL,
                             0) < 0) {
        tnd_log_warn("lessons are not used: %s", tnd_error_last());
        return;
    }
    r->lessons = tnd_xcalloc(n + 1, sizeof(char *));
    r->lesson_ids = tnd_xcalloc(n + 1, sizeof(char *));
    for (size_t i = 0; i < n; i++) {
        r->lessons[i] = tnd_lessons_render(found[i]);
        r->lesson_ids[i] = tnd_xstrdup(found[i]->id);
    }
    r->nlessons = n;
    free(found);
    if (n)
        tnd_loop_say(r, "using %zu lesson%s from earlier tasks here", n,
                     n == 1 ? "" : "s");
}

/* The lessons that were used did (or did not) lead to an approval. */
static void remember(run *r)
{
    if (!r->bank)
        return;
    if (r->status != TND_SESSION_FAILED && !r->waiting && r->lesson_ids)
        tnd_lessons_applied(r->bank, (const char *const *)r->lesson_ids,
                            r->status == TND_SESSION_APPROVED);
    if (tnd_lessons_save(r->bank) < 0)
        tnd_log_warn("cannot save the lessons: %s", tnd_error_last());
}

/* One attempt. 1: go on; 0: the loop ends (r->status says how); -1. */
/* A review the gate does not pass: rejected, and what a coder would
 * have been told goes to stdout, for the change's author. */
static int reject_change(run *r, attempt *a)
{
    char *findings = tnd_feedback_build(&a->in, &a->decision, NULL, NULL);

    tnd_loop_stop(r, TND_SESSION_REJECTED, a->decision.reason);
    fputs(findings, stdout);
    fflush(stdout);
    free(findings);
    return 0;
}

static int one_attempt(run *r, attempt *a, loop_state *ls)
{
    tnd_answer ans;
    int rc;

    if ((rc = tnd_loop_check_budget(r, a->n, "start", NULL, ls)) <= 0)
        return rc;
    if ((rc = propose(r, a, ls)) < 0 || (rc = apply(r, a)) < 0)
        return rc == TND_ETIMEOUT ? tnd_loop_budget_ran_out(r, a->n) : rc;
    a->in.attempt = a->n;
    a->in.required = (const char *const *)r->required;
    a->in.baseline = r->has_baseline ? &r->baseline : NULL;
    if (!a->in.format_error && !a->in.apply_error && !a->in.empty &&
        !a->in.repeats) {
        if (!r->status &&
            (rc = tnd_loop_check_budget(r, a->n, "audit", a, ls)) <= 0)
            return rc;
        if ((rc = tnd_loop_audit(r, a)) < 0)
            return rc == TND_ETIMEOUT ? tnd_loop_budget_ran_out(r, a->n) : rc;
    }
    if (decide(r, a, ls) < 0)
        return -1;
    if (r->opts.review && !a->decision.passed)
        return reject_change(r, a);
    switch (a->decision.action) {
    case TND_GATE_APPROVE:
        learn(r, a);
        return tnd_loop_approve(r, a->diff, a->decision.reason) < 0 ? -1 : 0;
    case TND_GATE_REVISE:
        return next_attempt(r, a, ls) < 0 ? -1 : 1;
    case TND_GATE_ESCALATE:
        break;
    }
    memset(&ans, 0, sizeof(ans));
    rc = tnd_loop_escalate(r, a->n, "decision", a->decision.reason, &ans);
    if (rc == 1 && (rc = tnd_loop_take_answer(r, a, ls, &ans)) == 1 &&
        next_attempt(r, a, ls) < 0)
        rc = -1;
    tnd_answer_clear(&ans);
    return rc;
}

static int loop(run *r)
{
    loop_state ls = {NULL, NULL, 0, 0};
    int rc = 1;

    /* what already fails before any change is the coder's first clue */
    ls.feedback =
        r->has_baseline ? tnd_feedback_baseline(&r->baseline) : tnd_xstrdup("");
    ls.hints = r->has_baseline ? failure_hints(&r->baseline, NULL) : NULL;

    for (int n = 1; rc == 1; n++) {
        attempt a;

        memset(&a, 0, sizeof(a));
        a.n = n;
        r->iterations = n;
        rc = one_attempt(r, &a, &ls);
        attempt_clear(&a);
    }
    free(ls.feedback);
    free(ls.hints);
    return rc < 0 ? -1 : 0;
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
        tnd_xasprintf("recorded by tandem %s: %s", TND_VERSION, r->opts.task);
    if (tnd_cassette_from_recording(r->record_partial, r->opts.record, comment,
                                    &count, &skipped) < 0) {
        fprintf(stderr, "tandem: cannot write the recording: %s\n",
                tnd_error_last());
    } else {
        fprintf(stderr, "recorded %zu exchange%s in %s%s\n", count,
                count == 1 ? "" : "s", r->opts.record,
                skipped ? " (some lines were torn and left out)" : "");
        unlink(r->record_partial);
    }
    free(comment);
}

static int finish(run *r)
{
    char *text, *summary;
    int code;

    tnd_report_outcome(r->report, tnd_session_status_name(r->status), r->reason,
                       r->iterations, r->final_rel, r->last_rel,
                       tnd_now_ms() - r->started);
    text = tnd_report_json(r->report);
    if (tnd_session_write(r->session, "report.json", text, strlen(text)) < 0)
        tnd_log_error("cannot write the report: %s", tnd_error_last());
    free(text);
    /* a session that ended for good says so in its journal; one waiting
     * for an answer, or stopped by a failure, can go on later */
    if (r->status != TND_SESSION_FAILED &&
        r->status != TND_SESSION_INTERRUPTED && !r->waiting) {
        json_object *f = json_object_new_object();
        json_object_object_add(
            f, "status",
            json_object_new_string(tnd_session_status_name(r->status)));
        json_object_object_add(f, "reason", tnd_json_str_or_null(r->reason));
        if (tnd_loop_step(r, "finish", f) < 0)
            tnd_log_error("%s", tnd_error_last());
    }
    save_recording(r);
    remember(r);
    summary = tnd_report_summary(r->report);
    fprintf(stderr, "%s\n", summary);
    free(summary);
    if (r->status == TND_SESSION_APPROVED) {
        code = TND_EXIT_OK;
    } else if (r->status == TND_SESSION_ESCALATED) {
        fprintf(stderr, "needs a human: %s\n", r->reason);
        if (r->last_rel)
            fprintf(stderr, "the last proposal is in %s/%s\n", r->repo,
                    r->last_rel);
        code = r->final_escalation ? TND_EXIT_FAILED : TND_EXIT_HUMAN;
    } else if (r->status == TND_SESSION_INTERRUPTED) {
        fprintf(stderr, "interrupted: %s\n", r->reason);
        fprintf(stderr, "go on with: tandem resume --repo %s %s\n", r->repo,
                tnd_session_id(r->session));
        code = TND_EXIT_SIGNAL + (int)interrupted;
    } else {
        fprintf(stderr, "%s: %s\n", tnd_session_status_name(r->status),
                r->reason ? r->reason : "");
        code = r->config_error ? TND_EXIT_USAGE : TND_EXIT_FAILED;
    }
    fprintf(stderr, "session %s: %s/\n", tnd_session_id(r->session),
            tnd_session_dir(r->session));
    return code;
}

static void run_close(run *r)
{
    tnd_edit_list_free(r->edits, r->nedits);
    tnd_change_clear(&r->change);
    tnd_audit_reply_clear(&r->baseline);
    tnd_events_destroy(&r->events);
    tnd_crew_destroy(&r->crew, r->opts.keep_workspace);
    tnd_workspace_destroy(&r->ws, !r->opts.keep_workspace);
    tnd_snapshot_destroy(&r->base, !r->opts.keep_workspace);
    tnd_report_destroy(&r->report);
    tnd_journal_close(&r->journal);
    tnd_session_destroy(&r->session);
    tnd_config_destroy(&r->cfg);
    tnd_str_list_free(&r->history);
    free(r->hashes);
    tnd_str_list_free(&r->required);
    for (size_t i = 0; i < sizeof(r->hidden) / sizeof(*r->hidden); i++)
        free(r->hidden[i]);
    for (int i = 0; i < 6; i++)
        free(r->owned[i]);
    free(r->record_partial);
    free(r->reason);
    free(r->final_rel);
    free(r->last_rel);
    free(r->last_diff);
    free(r->guidance);
    tnd_lessons_close(&r->bank);
    tnd_str_list_free(&r->lessons);
    tnd_str_list_free(&r->lesson_ids);
    free(r->repo);
}

/* Resolve the configuration: exit 2 on any mistake, before anything is
 * created. r->repo is set. */
/* The change to review, as edits, and its base tree; one attempt. A
 * resumed review takes its diff from the session, where the first run
 * kept it. */
static int prepare_review(run *r)
{
    char *base = tnd_rundir_base();
    char *kept =
        r->session ? tnd_session_path(r->session, "change.diff") : NULL;
    int rc = -1;

    if (base)
        rc = tnd_change_load(&r->change, r->repo, kept ? kept : r->opts.diff,
                             r->opts.staged, r->review_rev, base);
    free(kept);
    free(base);
    if (rc < 0)
        return rc;
    if (tnd_unidiff_edits(&r->edits, &r->nedits, r->change.diff,
                          strlen(r->change.diff)) < 0) {
        if (r->opts.diff && strcmp(r->opts.diff, "-") != 0)
            tnd_error_prefix("--diff %s", r->opts.diff);
        else
            tnd_error_prefix(r->opts.diff ? "the diff on stdin"
                                          : "the git changes");
        return TND_ECONFIG;
    }
    r->gate.max_iterations = 1;
    return 0;
}

static int prepare(run *r)
{
    int error;

    if ((error = load_config(r)) < 0)
        return error;
    if (r->opts.record) {
        char *dir = tnd_fs_dirname(r->opts.record);
        bool ok = tnd_fs_is_dir(dir);
        free(dir);
        if (!ok)
            return tnd_error_config("--record %s: its directory does not "
                                    "exist",
                                    r->opts.record);
        r->record_partial = tnd_xasprintf("%s.partial", r->opts.record);
    }
    collect_required(r);
    hide_own_files(r);
    return r->opts.review ? prepare_review(r) : 0;
}

/* Open the event stream in the runtime directory and tell watchers where
 * it is; a run without one still works. */
static void publish_events(run *r)
{
    char *ep = tnd_xasprintf("ipc://%s/events.sock", tnd_crew_runtime(r->crew));

    if (!(r->events = tnd_events_new(ep)))
        tnd_log_warn("%s", tnd_error_last());
    else if (tnd_session_write(r->session, "events", ep, strlen(ep)) < 0)
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

/* The task's base and the workspace, in the run's private runtime
 * directory. A review of git changes has its base exported from the
 * commit; the rest take the repository's tracked files. */
static int make_workspace(run *r)
{
    const char *runtime = tnd_crew_runtime(r->crew);
    char *base_dir = tnd_fs_join(runtime, "base");
    char *ws_dir = tnd_fs_join(runtime, "workspace");
    bool incremental = r->cfg->workspace.incremental;
    tnd_snapshot_options so = {
        .include_untracked = r->cfg->workspace.include_untracked,
        .whole = r->opts.review && r->change.tmp,
        .max_bytes = r->cfg->orchestrator.workspace_max_bytes,
    };
    char *what;
    int rc = -1;

    r->base = tnd_snapshot_new(r->opts.review ? r->change.base : r->repo,
                               base_dir, &so);
    if (!r->base || !(r->ws = tnd_workspace_new(r->base, ws_dir, incremental)))
        goto out;
    tnd_report_workspace(r->report, tnd_snapshot_json(r->base, incremental));
    /* once per session: what the first run's tree held */
    if (tnd_loop_find(r, "workspace", 0, 0) < 0 &&
        tnd_loop_step(r, "workspace", tnd_snapshot_json(r->base, incremental)) <
            0)
        goto out;
    what = tnd_snapshot_describe(r->base);
    tnd_loop_say(r, "workspace: %s%s", what,
                 incremental ? "; build outputs stay between attempts "
                               "(workspace.incremental)"
                             : "");
    free(what);
    rc = 0;
out:
    free(base_dir);
    free(ws_dir);
    return rc;
}

/* Start the agents and the workspace, run the loop, finish. */
static int go(run *r, int64_t started_wall)
{
    struct sigaction sa, old_int, old_term, old_hup;
    tnd_crew_options co;
    char *logs = tnd_session_path(r->session, "logs");
    int error = -1, code;

    r->report = tnd_report_new(tnd_session_id(r->session), r->opts.task,
                               r->repo, r->cfg->path, started_wall);
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    interrupted = 0;
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    sigaction(SIGHUP, &sa, &old_hup);
    signal(SIGPIPE, SIG_IGN);
    signal(SIGXFSZ, SIG_IGN); /* a file size limit is a write error */

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
    co.interrupted = &interrupted;
    recall(r);
    if ((r->crew = tnd_crew_new(&co)) != NULL) {
        publish_events(r);
        if (make_workspace(r) == 0 && (error = tnd_loop_baseline(r)) == 0)
            error = loop(r);
        r->config_error = error == TND_ECONFIG;
        if (error == 1)
            error = 0; /* stopped before attempt 1; r->status says why */
    }
    if (error < 0 && interrupted) {
        /* not a failure: the person stopped it, and it can go on */
        char *why = tnd_xasprintf("interrupted by signal %d (%s)",
                                  (int)interrupted, strsignal(interrupted));
        tnd_loop_stop(r, TND_SESSION_INTERRUPTED, why);
        free(why);
    } else if (error < 0) {
        tnd_loop_stop(r, TND_SESSION_FAILED, tnd_error_last());
    }
    tnd_crew_destroy(&r->crew, r->opts.keep_workspace);
    code = finish(r);
    close_events(r);
    free(logs);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    sigaction(SIGHUP, &old_hup, NULL);
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
    if (r->opts.review) {
        json_object *rv = json_object_new_object();
        json_object_object_add(rv, "rev", tnd_json_str_or_null(r->change.rev));
        json_object_object_add(rv, "staged",
                               json_object_new_boolean(r->opts.staged));
        json_object_object_add(f, "review", rv);
    }
    return f;
}

int tnd_run(const tnd_run_options *opts)
{
    run r;
    int64_t started_wall = tnd_wall_ms();
    int error, code;

    memset(&r, 0, sizeof(r));
    r.opts = *opts;
    r.started = tnd_now_ms();
    r.last_confidence = -1;
    tnd_log_init("tandem", opts->verbose ? TND_LOG_DEBUG : TND_LOG_WARN);
    if (!(r.repo = tnd_fs_realpath(opts->repo ? opts->repo : "."))) {
        fprintf(stderr, "tandem: --repo: %s\n", tnd_error_last());
        run_close(&r);
        return TND_EXIT_USAGE;
    }
    if (!tnd_fs_is_dir(r.repo)) {
        fprintf(stderr, "tandem: --repo: %s is not a directory\n", r.repo);
        run_close(&r);
        return TND_EXIT_USAGE;
    }
    if ((error = prepare(&r)) < 0) {
        fprintf(stderr, "tandem: %s\n", tnd_error_last());
        run_close(&r);
        return error == TND_ECONFIG ? TND_EXIT_USAGE : TND_EXIT_FAILED;
    }
    if (r.record_partial)
        unlink(r.record_partial);
    if (!(r.session = tnd_session_new(r.repo)) ||
        tnd_session_lock(r.session) < 0) {
        fprintf(stderr, "tandem: %s\n", tnd_error_last());
        run_close(&r);
        return TND_EXIT_FAILED;
    }
    {
        char *path = tnd_session_path(r.session, "journal.jsonl");
        char **ids = tnd_session_list(r.repo);
        r.journal = tnd_journal_open(path);
        free(path);
        for (char **p = ids; *p; p++)
            r.ordinal++; /* this session included */
        tnd_str_list_free(&ids);
    }
    if (!r.journal ||
        (opts->review &&
         tnd_session_write(r.session, "change.diff", r.change.diff,
                           strlen(r.change.diff)) < 0) ||
        tnd_loop_step(&r, "task", task_record(&r, started_wall)) < 0) {
        fprintf(stderr, "tandem: %s\n", tnd_error_last());
        run_close(&r);
        return TND_EXIT_FAILED;
    }
    tnd_loop_say(&r, "session %s: %s", tnd_session_id(r.session), opts->task);
    code = go(&r, started_wall);
    run_close(&r);
    return code;
}

/* ---- continuing a session ----------------------------------------------- */

static char *own(run *r, int slot, const char *s)
{
    free(r->owned[slot]);
    r->owned[slot] = tnd_xstrdup(s);
    return r->owned[slot];
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
    r->opts.quiet = o->quiet;
    r->opts.verbose = o->verbose;
    *started = tnd_json_int_or(task, "started_ms", 0);
    r->ordinal = tnd_json_int_or(task, "ordinal", 0);
    if (json_object_object_get_ex(task, "review", &review)) {
        r->opts.review = true;
        r->opts.staged = tnd_json_bool_or(review, "staged", false);
        if (tnd_json_str_or(review, "rev", NULL))
            r->review_rev = own(r, 5, tnd_json_str_or(review, "rev", NULL));
    }
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
    if (r->opts.review &&
        (o->answer == TND_ANSWER_GUIDE || o->answer == TND_ANSWER_BUDGET))
        return tnd_error_config("session %s is a review: there is no coder "
                                "to %s; answer with 'tandem approve' or "
                                "'tandem reject'",
                                tnd_session_id(r->session),
                                o->answer == TND_ANSWER_GUIDE ? "guide"
                                                              : "give more "
                                                                "attempts");
    if (o->answer == TND_ANSWER_BUDGET && o->iterations <= 0 && o->tokens <= 0)
        return tnd_error_config("budget: give --iterations N or --tokens N");

    if ((o->answer == TND_ANSWER_GUIDE || o->answer == TND_ANSWER_REJECT) &&
        (!o->text || !*o->text))
        return tnd_error_config("%s: say it with -m TEXT",
                                tnd_answer_name(o->answer));
    if (o->answer == TND_ANSWER_APPROVE) {
        /* something to approve: the last attempt with a diff */
        for (size_t i = tnd_journal_count(r->journal); i-- > 0;) {
            json_object *rec = tnd_journal_record(r->journal, i);
            const char *diff = tnd_json_str_or(rec, "diff", NULL);
            if (strcmp(tnd_journal_type(rec), "decision") == 0 && diff) {
                char *path = tnd_fs_join(r->repo, diff), *text = NULL;
                size_t len = 0;
                bool ok =
                    tnd_fs_read(&text, &len, path, 64 << 20) == 0 && len > 0;
                free(text);
                free(path);
                if (ok)
                    return 0;
            }
        }
        return tnd_error_config("session %s has no proposal to approve: no "
                                "attempt produced a change",
                                tnd_session_id(r->session));
    }
    return 0;
}

int tnd_run_continue(const tnd_continue_options *o)
{
    run r;
    tnd_session_status state;
    int64_t started_wall = 0;
    int code = TND_EXIT_FAILED, rc;

    memset(&r, 0, sizeof(r));
    r.started = tnd_now_ms();
    r.last_confidence = -1;
    tnd_log_init("tandem", o->verbose ? TND_LOG_DEBUG : TND_LOG_WARN);
    if (!(r.repo = tnd_fs_realpath(o->repo ? o->repo : "."))) {
        fprintf(stderr, "tandem: --repo: %s\n", tnd_error_last());
        run_close(&r);
        return TND_EXIT_USAGE;
    }
    if (!(r.session = tnd_session_open(r.repo, o->session))) {
        fprintf(stderr, "tandem: %s\n", tnd_error_last());
        run_close(&r);
        return TND_EXIT_USAGE;
    }
    if (tnd_session_lock(r.session) < 0) {
        fprintf(stderr, "tandem: %s\n", tnd_error_last());
        run_close(&r);
        return TND_EXIT_FAILED;
    }
    {
        char *path = tnd_session_path(r.session, "journal.jsonl");
        r.journal = tnd_journal_open(path);
        free(path);
    }
    if (!r.journal || restore_options(&r,
                                      tnd_journal_count(r.journal)
                                          ? tnd_journal_record(r.journal, 0)
                                          : NULL,
                                      o, &started_wall) < 0) {
        fprintf(stderr, "tandem: %s\n", tnd_error_last());
        run_close(&r);
        return TND_EXIT_FAILED;
    }
    if (tnd_journal_status(&state, tnd_journal_records(r.journal)) < 0) {
        fprintf(stderr, "tandem: session %s: %s\n", tnd_session_id(r.session),
                tnd_error_last());
        run_close(&r);
        return TND_EXIT_FAILED;
    }
    if (state != TND_SESSION_OPEN && state != TND_SESSION_WAITING) {
        fprintf(stderr, "tandem: session %s already finished: %s\n",
                tnd_session_id(r.session), tnd_session_status_name(state));
        code = state == TND_SESSION_APPROVED ? TND_EXIT_OK : TND_EXIT_FAILED;
        run_close(&r);
        return code;
    }
    if (o->answer && (rc = check_answer(&r, o, state)) < 0) {
        fprintf(stderr, "tandem: %s\n", tnd_error_last());
        run_close(&r);
        return rc == TND_ECONFIG ? TND_EXIT_USAGE : TND_EXIT_FAILED;
    }
    if ((rc = prepare(&r)) < 0) {
        fprintf(stderr, "tandem: %s\n", tnd_error_last());
        run_close(&r);
        return rc == TND_ECONFIG ? TND_EXIT_USAGE : TND_EXIT_FAILED;
    }
    if (o->answer == TND_ANSWER_BUDGET && o->tokens > 0 && o->iterations <= 0 &&
        r.gate.max_tokens == 0) {
        fprintf(stderr, "tandem: budget: gate.max_tokens is 0 (no token "
                        "budget), so --tokens grants nothing; give "
                        "--iterations N\n");
        run_close(&r);
        return TND_EXIT_USAGE;
    }
    if (o->answer) {
        tnd_answer ans = {o->answer, o->text ? tnd_xstrdup(o->text) : NULL,
                          o->iterations, o->tokens};
        rc = tnd_loop_step(&r, "answer", tnd_loop_answer_json(&ans, "command"));
        tnd_answer_clear(&ans);
    } else {
        rc = tnd_loop_step(&r, "resume", NULL);
    }
    if (rc < 0) {
        fprintf(stderr, "tandem: %s\n", tnd_error_last());
        run_close(&r);
        return TND_EXIT_FAILED;
    }
    tnd_loop_say(&r, "session %s: %s (%s)", tnd_session_id(r.session),
                 r.opts.task,
                 o->answer ? tnd_answer_name(o->answer) : "resumed");
    code = go(&r, started_wall ? started_wall : tnd_wall_ms());
    run_close(&r);
    return code;
}
