/* What the gate loop does with the world (see loop.h): progress lines
 * on stderr, the result on stdout (tnd_loop_put: a write that fails is
 * kept, for finish to say), journal steps (fsync'd, published, the views
 * refreshed), replies read back from the journal, and asking an agent with a
 * deadline. */
#include <errno.h>
#include <stdarg.h>
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
#include "common/term.h"
#include "common/str.h"
#include "common/xalloc.h"
#include "orchestrator/budget.h"
#include "orchestrator/crew.h"
#include "orchestrator/events.h"
#include "orchestrator/journal.h"
#include "orchestrator/loop.h"
#include "orchestrator/session.h"
#include "orchestrator/views.h"
#include "proto/json.h"

void tnd_loop_end_progress(run *r)
{
    if (r->progress_line) {
        fputs("\r\033[K", r->err);
        r->progress_line = false;
        tnd_log_line_open(false);
    }
}

void tnd_loop_say(run *r, const char *fmt, ...)
{
    va_list ap;
    char *text, *clean;

    if (r->opts.quiet)
        return;
    tnd_loop_end_progress(r);
    va_start(ap, fmt);
    text = tnd_xvasprintf(fmt, ap);
    va_end(ap);
    /* what it says often holds the model's words (a revise's reason):
     * no escape codes, and no key a model echoed (stderr is a CI log, or
     * a served session's client's) */
    clean = tnd_log_printable(text, strlen(text) + 1);
    /* and one line: a revise's reason quotes an issue's description,
     * whose newline began a line of the model's own ("tandem: [1/2]
     * approve: ...") under the real ones */
    for (char *p = clean; (p = strchr(p, '\n'));)
        *p = '?';
    fprintf(r->err, "tandem: %s\n", clean);
    free(clean);
    free(text);
}

void tnd_loop_put(run *r, FILE *to, const char *what, const char *text,
                  bool line)
{
    size_t len = strlen(text);
    bool failed;

    errno = 0;
    failed = fwrite(text, 1, len, to) != len ||
             (line && len && text[len - 1] != '\n' && fputc('\n', to) == EOF) ||
             fflush(to) != 0 || ferror(to);
    if (!failed || r->host || r->out_lost)
        return;
    /* > fix.patch on a full disk, a pipe closed early: a pipeline that
     * took exit 0 for a result it holds had none */
    r->out_lost = tnd_xasprintf("cannot write %s on stdout: %s", what,
                                errno ? strerror(errno) : "a write failed");
}

void tnd_loop_stop(run *r, tnd_session_status status, const char *reason)
{
    r->status = status;
    free(r->reason);
    /* printed at the end, and a review's findings say it */
    r->reason = tnd_log_redact(tnd_xstrdup(reason));
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
    if (tnd_views_write(r->session, r->journal, &r->views) < 0)
        tnd_log_warn("cannot refresh the session views: %s", tnd_error_last());
    return 0;
}

/* now.json: what the run does now, for a watcher that joins late (the
 * events before it joined are gone). records is the journal's length
 * when it was written: a later record makes it stale. phase is the
 * loop's phase, or NULL for what the agent asked does (r->doing). */
static void write_now(run *r, int n, const char *phase)
{
    json_object *o = json_object_new_object();
    char *text;
    size_t len;

    json_object_object_add(o, "attempt", json_object_new_int(n));
    json_object_object_add(
        o, "records",
        json_object_new_int64((int64_t)tnd_journal_count(r->journal)));
    if (phase) {
        json_object_object_add(o, "phase", json_object_new_string(phase));
    } else {
        json_object_object_add(o, "role",
                               json_object_new_string(r->doing.role));
        json_object_object_add(o, "what",
                               json_object_new_string(r->doing.what));
        json_object_object_add(
            o, "since_ms",
            json_object_new_int64(tnd_wall_ms() -
                                  (tnd_now_ms() - r->doing.since_ms)));
    }
    text = tnd_json_dump(o, &len);
    json_object_put(o);
    /* its records and times make each write differ from the last: not
     * compared with the file first */
    if (tnd_session_write_fresh(r->session, "now.json", text, len) < 0)
        tnd_log_debug("cannot write now.json: %s", tnd_error_last());
    free(text);
}

/* Tell watchers what the run is doing now (not journaled). */
void tnd_loop_phase(run *r, int n, const char *what)
{
    json_object *e = json_object_new_object();

    write_now(r, n, what);

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
    json_object *reply = tnd_loop_journaled(r, type, n);

    return reply ? tnd_json_dump(reply, len) : NULL;
}

json_object *tnd_loop_journaled(const run *r, const char *type, int n)
{
    long i = tnd_loop_find(r, type, n, 0);
    json_object *reply;

    if (i < 0 ||
        !json_object_object_get_ex(tnd_journal_record(r->journal, (size_t)i),
                                   "reply", &reply))
        return NULL;
    return reply;
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
    text = tnd_log_redact_json(tnd_json_pretty(o));
    json_object_put(o);
    dir = tnd_session_path(r->session, "llm");
    snprintf(name, sizeof(name), "llm/attempt-%d-%s.json", n, type);
    /* not fsync'd: they are for people, and a lost one is only logged */
    if (tnd_fs_mkdirs(dir, 0755) < 0 ||
        tnd_session_write_view(r->session, name, text, strlen(text)) < 0)
        tnd_log_warn("cannot keep the LLM exchanges of attempt %d: %s", n,
                     tnd_error_last());
    free(dir);
    free(text);
}

/* Journal a reply body under type; it is parsed back into JSON so the
 * journal stays one object per line. */
int tnd_loop_journal_reply(run *r, const char *type, int n, const char *body,
                           size_t len, json_object *parsed)
{
    json_object *reply = parsed, *f;

    /* the crew parsed it when it checked it: parsed again only when the
     * caller did not keep that */
    if (!reply && tnd_json_parse(&reply, body, len) < 0)
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

/* ---- talking to agents -------------------------------------------------- */

void tnd_loop_progress_start(run *r, const char *service)
{
    tnd_doing_start(&r->doing, service);
}

#define REDRAW_MS 250 /* at most 4 redraws a second */

/* The progress line on a terminal: what the agent does and for how long,
 * cut to the terminal's width (a line that wraps cannot be redrawn). */
static void draw_progress(run *r)
{
    char at[48], prefix[64], line[512];
    int64_t now = tnd_now_ms();

    if (r->opts.quiet || r->err != stderr ||
        !tnd_term_can_redraw(STDERR_FILENO))
        return;
    if (r->iterations == 0) /* before attempt 1: the baseline */
        snprintf(at, sizeof(at), "baseline: ");
    else
        snprintf(at, sizeof(at), "[%d/%d] ", r->iterations,
                 r->gate.max_iterations);
    snprintf(prefix, sizeof(prefix), "tandem: %s", at);
    /* too narrow for all of it: the time stays, the words are cut */
    tnd_doing_fit(line, sizeof(line), &r->doing, now, prefix, at,
                  tnd_term_width(STDERR_FILENO) - 1);
    if (!*line)
        return;
    fprintf(r->err, "\r\033[K%s", line);
    fflush(r->err);
    tnd_log_line_open(true);
    r->progress_line = true;
    r->progress_drawn = now;
}

/* A PARTIAL from an agent: what it is doing (a phase, or its model's
 * answer streaming in). On a terminal, one line that updates; elsewhere
 * nothing (logs stay clean). Watchers get it as an event. */
void tnd_loop_on_progress(const char *body, size_t len, void *payload)
{
    run *r = payload;
    json_object *obj = NULL;
    char was[sizeof(r->doing.what)];
    long chars = 0;

    if (!body) { /* a tick: the time on the line counts up */
        if (r->progress_line && tnd_now_ms() - r->progress_drawn >= REDRAW_MS)
            draw_progress(r);
        return;
    }
    if (tnd_json_parse(&obj, body, len) < 0 ||
        tnd_json_get_int(&chars, obj, "chars", 0, 1L << 40, TND_JSON_REQUIRED) <
            0) {
        tnd_log_debug("ignoring a progress message: %s", tnd_error_last());
        json_object_put(obj);
        return;
    }
    memcpy(was, r->doing.what, sizeof(was));
    if (!tnd_doing_update(&r->doing, obj, tnd_now_ms())) {
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
        if (!json_object_object_get_ex(e, "role", NULL))
            json_object_object_add(e, "role",
                                   json_object_new_string(r->doing.role));
        tnd_events_publish(r->events, tnd_session_id(r->session), e);
        json_object_put(e);
    }
    json_object_put(obj);
    if (strcmp(was, r->doing.what) != 0)
        write_now(r, r->iterations, NULL);
    tnd_log_debug("%s: %s, %ld characters so far", r->doing.role, r->doing.what,
                  chars);
    /* a phase at once; streamed text at most every REDRAW_MS */
    if (strcmp(r->doing.what, "writing") != 0 || !r->progress_line ||
        tnd_now_ms() - r->progress_drawn >= REDRAW_MS)
        draw_progress(r);
}

/* The request's deadline: its timeout (tnd_budget_request_s), or the
 * end of gate.max_wall_s if that comes first. */
int64_t tnd_loop_deadline(const run *r, const char *service, bool *by_budget)
{
    int64_t now = tnd_now_ms();
    int64_t deadline =
        now + (int64_t)tnd_budget_request_s(r->cfg, service) * 1000;
    long left = tnd_budget_wall_left(&r->gate, now - r->wall_from);

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
                 size_t len, char **reply, size_t *reply_len,
                 json_object **parsed)
{
    tnd_crew_request q = {
        .service = service, .key = key, .body = body, .len = len};
    bool by_budget;
    int64_t deadline = tnd_loop_deadline(r, service, &by_budget);
    int rc;

    tnd_loop_progress_start(r, service);
    rc = tnd_crew_call_many(r->crew, &q, 1, deadline, tnd_loop_on_progress, r);
    tnd_loop_end_progress(r);
    *reply = q.reply;
    *reply_len = q.reply_len;
    q.reply = NULL;
    if (parsed) {
        *parsed = rc == 0 ? q.parsed : NULL;
        if (rc == 0)
            q.parsed = NULL;
    }
    memcpy(r->reply_type, q.reply_type, sizeof(r->reply_type));
    tnd_crew_request_clear(&q);
    if (rc == TND_ETIMEOUT && !by_budget)
        return tnd_error_set("no reply from the %s within %ld s (%s)", service,
                             tnd_budget_request_s(r->cfg, service),
                             tnd_loop_timeout_source(r));
    return rc;
}
