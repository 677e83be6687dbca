/* Reading sessions back (see history.h). */
#include "orchestrator/history.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/error.h"
#include "common/fs.h"
#include "common/log.h"
#include "common/str.h"
#include "common/xalloc.h"
#include "orchestrator/journal.h"
#include "orchestrator/session.h"
#include "proto/json.h"

#define TOP_PATTERNS 5

int64_t tnd_history_parse_time(const char *iso)
{
    struct tm tm;
    int ms = 0;
    const char *rest;

    if (!iso)
        return -1;
    memset(&tm, 0, sizeof(tm));
    rest = strptime(iso, "%Y-%m-%dT%H:%M:%S", &tm);
    if (!rest)
        return -1;
    if (*rest == '.')
        ms = atoi(rest + 1);
    return (int64_t)timegm(&tm) * 1000 + ms;
}

/* A status that names no outcome leaves the session unreadable, and a
 * warning says which value and which file. */
/* A session another process holds: tandem serve's queue, or a run. */
static tnd_session_status held(const char *dir)
{
    return tnd_session_queued(dir) ? TND_SESSION_QUEUED : TND_SESSION_RUNNING;
}

static tnd_session_status state_of(json_object *records, json_object *report,
                                   const char *dir, const char *id,
                                   bool held_by_caller)
{
    const char *said = tnd_json_str_or(report, "status", NULL);
    tnd_session_status st;

    if (!held_by_caller && tnd_session_locked(dir))
        return held(dir);
    if (tnd_journal_status(&st, records) < 0) {
        tnd_log_warn("session %s: %s", id, tnd_error_last());
        return TND_SESSION_UNREADABLE;
    }
    if (st != TND_SESSION_OPEN)
        return st;
    /* open: it failed when its report says so, else it was stopped */
    if (said && tnd_session_status_parse(&st, said) < 0) {
        tnd_log_warn("session %s: report.json: %s", id, tnd_error_last());
        return TND_SESSION_UNREADABLE;
    }
    return said && st == TND_SESSION_FAILED ? TND_SESSION_FAILED
                                            : TND_SESSION_INTERRUPTED;
}

static void summarise(tnd_summary *s, const char *repo, const char *id,
                      bool held_by_caller, json_object **records_out,
                      json_object **report_out)
{
    char *dir = tnd_session_dir_of(repo, id);
    char *path = tnd_fs_join(dir, "journal.jsonl"), *text = NULL;
    json_object *records = NULL, *report = NULL, *task;
    char *why = NULL;
    bool damaged = false, missing = false;
    size_t len;

    memset(s, 0, sizeof(*s));
    s->id = tnd_xstrdup(id);
    if (tnd_journal_read_outline(&records, path) < 0) {
        /* a journal that cannot be read is no interrupted session, which
         * a resume goes on with (a damaged one was listed as one, and so
         * were one whose journal was gone or empty, beside its report) */
        missing = !tnd_fs_exists(path);
        damaged = true;
        why = tnd_xstrdup(tnd_error_last());
        records = NULL;
    } else if (json_object_array_length(records) == 0) {
        /* no task record (none was written yet, or its line was torn):
         * nothing a resume can go on with either */
        missing = damaged = true;
        why = tnd_xasprintf("%s is empty", path);
        json_object_put(records);
        records = NULL;
    }
    free(path);
    path = tnd_fs_join(dir, "report.json");
    if (tnd_fs_read(&text, &len, path, 64 << 20) == 0 &&
        tnd_json_parse(&report, text, len) < 0)
        report = NULL;
    free(text);
    free(path);
    task = records && json_object_array_length(records)
               ? json_object_array_get_idx(records, 0)
               : NULL;
    /* a run that has made its directory and not yet its task record
     * runs; one killed then left it so, without a task or a report: it
     * never started (it was "unreadable", with a warning that its
     * journal was empty, as if something had damaged it) */
    s->state = !damaged && (records || report)
                   ? state_of(records, report, dir, id, held_by_caller)
               : missing && !held_by_caller && tnd_session_locked(dir)
                   ? held(dir)
               : missing && !report ? TND_SESSION_UNSTARTED
                                    : TND_SESSION_UNREADABLE;
    if (why && s->state == TND_SESSION_UNREADABLE)
        tnd_log_warn("session %s: %s", id, why);
    free(why);
    s->task = tnd_xstrdup(
        tnd_json_str_or(task, "task", tnd_json_str_or(report, "task", NULL)));
    s->started = tnd_json_int_or(task, "started_ms", 0);
    s->iterations = tnd_json_int_or(report, "iterations", 0);
    /* no report (a run killed before it wrote one, a file removed): the
     * calls and tokens are in replies the outline leaves out, so they
     * are unknown, not 0 (an approved session read "0 calls") */
    s->llm_calls = tnd_json_int_or(report, "llm_calls", -1);
    s->tokens =
        s->llm_calls < 0
            ? -1
            : tnd_json_int_or(tnd_json_field(report, "tokens"), "prompt", 0) +
                  tnd_json_int_or(tnd_json_field(report, "tokens"),
                                  "completion", 0);
    s->elapsed_ms = tnd_json_int_or(report, "elapsed_ms", 0);
    for (size_t i = 0; records && i < json_object_array_length(records); i++) {
        json_object *rec = json_object_array_get_idx(records, i);
        /* gate.escalate: never journals the escalation it did not make:
         * no person was asked */
        if (strcmp(tnd_journal_type(rec), "escalation") == 0 &&
            strcmp(tnd_json_str_or(rec, "mode", ""), "never") != 0)
            s->escalations++;
        /* without a report, the attempts the journal decided on */
        if (!report && strcmp(tnd_journal_type(rec), "decision") == 0 &&
            tnd_json_int_or(rec, "attempt", 0) > s->iterations)
            s->iterations = tnd_json_int_or(rec, "attempt", 0);
    }
    for (size_t i = records ? json_object_array_length(records) : 0;
         i-- > 0 && s->last <= 0;)
        s->last = tnd_history_parse_time(tnd_json_str_or(
            json_object_array_get_idx(records, i), "time", NULL));
    if (s->last < 0)
        s->last = 0;
    free(dir);
    if (records_out)
        *records_out = records;
    else
        json_object_put(records);
    if (report_out)
        *report_out = report;
    else
        json_object_put(report);
}

int tnd_history_list(tnd_summary **out, size_t *count, const char *repo)
{
    char **ids = tnd_session_list(repo);
    size_t n = 0;

    for (char **p = ids; *p; p++)
        n++;
    *out = tnd_xcalloc(n + 1, sizeof(tnd_summary));
    for (size_t i = 0; i < n; i++)
        summarise(&(*out)[i], repo, ids[i], false, NULL, NULL);
    *count = n;
    tnd_str_list_free(&ids);
    return 0;
}

void tnd_history_summary(tnd_summary *out, const char *repo, const char *id,
                         bool held_by_caller)
{
    summarise(out, repo, id, held_by_caller, NULL, NULL);
}

void tnd_history_summary_clear(tnd_summary *s)
{
    free(s->id);
    free(s->task);
    memset(s, 0, sizeof(*s));
}

void tnd_history_free(tnd_summary *list, size_t count)
{
    for (size_t i = 0; i < count; i++)
        tnd_history_summary_clear(&list[i]);
    free(list);
}

typedef struct pattern {
    char *signature;
    char *reason;
    long occurrences;
    long sessions;
    long last_session; /* the session (1, 2, ...) that counted it last */
} pattern;

typedef struct totals {
    long runs, reviews, reviews_approved, reviews_rejected;
    long ended, approved, escalated_any, with_report;
    double iterations;
    double approved_tokens, approved_calls;
    long approved_costed; /* approved sessions whose report gives them */
    double coding_ms, auditing_ms, waiting_ms;
    long codings, audits, waits;
    pattern *patterns;
    size_t npatterns, apatterns;
    size_t *index; /* open addressing into patterns by signature: a
                      journal of many decisions made a linear search of
                      each (and a rescan of the session's earlier ones)
                      take minutes */
    size_t nindex;
    long session; /* the session being counted, from 1 */
} totals;

/* The slot of sig in t->index: its pattern's, or the empty one. */
static size_t *slot_of(totals *t, const char *sig)
{
    size_t mask = t->nindex - 1,
           i = (size_t)tnd_str_hash(TND_FNV_SEED, sig, strlen(sig)) & mask;

    while (t->index[i] != SIZE_MAX &&
           strcmp(t->patterns[t->index[i]].signature, sig) != 0)
        i = (i + 1) & mask;
    return &t->index[i];
}

/* Room in the index for one more pattern, at most half full. */
static void index_room(totals *t)
{
    size_t old = t->nindex, *was = t->index;

    if ((t->npatterns + 1) * 2 <= t->nindex)
        return;
    t->nindex = old ? old * 2 : 64;
    t->index = tnd_xcalloc(t->nindex, sizeof(size_t));
    for (size_t i = 0; i < t->nindex; i++)
        t->index[i] = SIZE_MAX;
    for (size_t k = 0; k < t->npatterns; k++)
        *slot_of(t, t->patterns[k].signature) = k;
    free(was);
}

static void count_pattern(totals *t, const char *sig, const char *reason)
{
    pattern *p = NULL;
    size_t *slot;

    index_room(t);
    slot = slot_of(t, sig);
    if (*slot != SIZE_MAX)
        p = &t->patterns[*slot];
    if (!p) {
        TND_GROW(t->patterns, t->apatterns, t->npatterns + 1);
        *slot = t->npatterns;
        p = &t->patterns[t->npatterns++];
        memset(p, 0, sizeof(*p));
        p->signature = tnd_xstrdup(sig);
        p->reason = tnd_xstrdup(reason ? reason : "");
    } else if (reason && (strlen(reason) < strlen(p->reason) ||
                          (strlen(reason) == strlen(p->reason) &&
                           strcmp(reason, p->reason) < 0))) {
        /* the plainest wording, whatever order the sessions come in
         * (ids made in the same second sort by their random part) */
        free(p->reason);
        p->reason = tnd_xstrdup(reason);
    }
    p->occurrences++;
    if (p->last_session != t->session) {
        p->sessions++;
        p->last_session = t->session;
    }
}

/* Phase times from the journal's timestamps: coding is from the step
 * before a proposal to the proposal, auditing from the proposal to the
 * audit, waiting from an escalation to its answer. */
static void phases(totals *t, json_object *records)
{
    int64_t prev = -1, proposed = -1;

    for (size_t i = 0; records && i < json_object_array_length(records); i++) {
        json_object *r = json_object_array_get_idx(records, i);
        const char *type = tnd_journal_type(r);
        int64_t now = tnd_history_parse_time(tnd_json_str_or(r, "time", NULL));
        if (now < 0)
            continue;
        if (prev >= 0 && strcmp(type, "proposal") == 0) {
            t->coding_ms += (double)(now - prev);
            t->codings++;
            proposed = now;
        } else if (proposed >= 0 && strcmp(type, "audit") == 0) {
            /* from the proposal: an audit in phases journals its skills
             * and critiques on the way */
            t->auditing_ms += (double)(now - proposed);
            t->audits++;
            proposed = -1;
        } else if (prev >= 0 && strcmp(type, "answer") == 0) {
            t->waiting_ms += (double)(now - prev);
            t->waits++;
        } else if (proposed >= 0 && strcmp(type, "resume") == 0) {
            /* the audit a run stopped in is made again from here: the
             * time it lay stopped (a night, say) is no auditing */
            proposed = now;
        }
        prev = now;
    }
}

static int by_occurrences(const void *a, const void *b)
{
    const pattern *x = a, *y = b;

    if (x->occurrences != y->occurrences)
        return x->occurrences > y->occurrences ? -1 : 1;
    return strcmp(x->signature, y->signature);
}

/* a / b rounded to three significant digits (whole numbers stay
 * whole); JSON null when b is 0: an average of nothing is unknown, and 0
 * said a 0 % success rate, say, of a repository where none had ended. */
static json_object *average(double a, double b)
{
    char text[32];
    double v;

    if (b <= 0)
        return NULL;
    v = a / b;
    snprintf(text, sizeof(text), v >= 100 || v <= -100 ? "%.0f" : "%.3g", v);
    return json_object_new_double_s(v, text);
}

/* Whether the session is a `tandem review` (its task record says so). */
static bool is_review(json_object *records)
{
    for (size_t i = 0; records && i < json_object_array_length(records); i++) {
        json_object *r = json_object_array_get_idx(records, i);
        if (strcmp(tnd_journal_type(r), "task") == 0)
            return json_object_object_get_ex(r, "review", NULL);
    }
    return false;
}

int tnd_history_stats(json_object **out, const char *repo)
{
    char **ids = tnd_session_list(repo);
    json_object *o = json_object_new_object(), *by_state;
    json_object *per = json_object_new_object(), *ph = json_object_new_object();
    json_object *top = json_object_new_array();
    json_object *rv = json_object_new_object();
    totals t;
    long total = 0;

    memset(&t, 0, sizeof(t));
    by_state = json_object_new_object();
    for (char **p = ids; *p; p++) {
        tnd_summary s;
        json_object *records = NULL, *report = NULL, *count;
        const char *name;
        total++;
        summarise(&s, repo, *p, false, &records, &report);
        if (is_review(records)) {
            /* a review answers "may this change go in", not a task: its
             * figures would blur the runs' */
            t.reviews++;
            t.reviews_approved += s.state == TND_SESSION_APPROVED;
            t.reviews_rejected += s.state == TND_SESSION_REJECTED;
            json_object_put(records);
            json_object_put(report);
            tnd_history_summary_clear(&s);
            continue;
        }
        t.runs++;
        name = tnd_session_status_name(s.state);
        count = tnd_json_field(by_state, name);
        json_object_object_add(
            by_state, name,
            json_object_new_int((count ? json_object_get_int(count) : 0) + 1));
        if (s.state != TND_SESSION_RUNNING && s.state != TND_SESSION_QUEUED &&
            s.state != TND_SESSION_WAITING)
            t.ended++;
        if (report) {
            t.with_report++;
            t.iterations += (double)s.iterations;
        }
        if (s.state == TND_SESSION_APPROVED && s.llm_calls >= 0) {
            /* one whose cost is unknown (no report) counts in neither */
            t.approved_costed++;
            t.approved_tokens += (double)s.tokens;
            t.approved_calls += (double)s.llm_calls;
        }
        if (s.state == TND_SESSION_APPROVED)
            t.approved++;
        if (s.escalations)
            t.escalated_any++;
        phases(&t, records);
        t.session++;
        for (size_t i = 0; records && i < json_object_array_length(records);
             i++) {
            json_object *r = json_object_array_get_idx(records, i);
            const char *sig = tnd_json_str_or(r, "signature", NULL);
            if (strcmp(tnd_journal_type(r), "decision") != 0 || !sig)
                continue;
            count_pattern(&t, sig, tnd_json_str_or(r, "reason", NULL));
        }
        json_object_put(records);
        json_object_put(report);
        tnd_history_summary_clear(&s);
    }
    tnd_str_list_free(&ids);
    if (t.npatterns > 1)
        qsort(t.patterns, t.npatterns, sizeof(pattern), by_occurrences);
    for (size_t i = 0; i < t.npatterns; i++) {
        if (i < TOP_PATTERNS) {
            json_object *j = json_object_new_object();
            json_object_object_add(
                j, "signature",
                json_object_new_string(t.patterns[i].signature));
            json_object_object_add(
                j, "reason", json_object_new_string(t.patterns[i].reason));
            json_object_object_add(
                j, "occurrences",
                json_object_new_int64(t.patterns[i].occurrences));
            json_object_object_add(
                j, "sessions", json_object_new_int64(t.patterns[i].sessions));
            json_object_array_add(top, j);
        }
        free(t.patterns[i].signature);
        free(t.patterns[i].reason);
    }
    free(t.patterns);
    free(t.index);
    json_object_object_add(o, "sessions", json_object_new_int64(total));
    json_object_object_add(o, "runs", json_object_new_int64(t.runs));
    json_object_object_add(rv, "sessions", json_object_new_int64(t.reviews));
    json_object_object_add(rv, "approved",
                           json_object_new_int64(t.reviews_approved));
    json_object_object_add(rv, "rejected",
                           json_object_new_int64(t.reviews_rejected));
    json_object_object_add(o, "reviews", rv);
    json_object_object_add(o, "by_state", by_state);
    json_object_object_add(o, "average_iterations",
                           average(t.iterations, (double)t.with_report));
    json_object_object_add(o, "success_rate",
                           average((double)t.approved, (double)t.ended));
    json_object_object_add(o, "escalation_rate",
                           average((double)t.escalated_any, (double)t.runs));
    json_object_object_add(
        per, "tokens", average(t.approved_tokens, (double)t.approved_costed));
    json_object_object_add(
        per, "llm_calls", average(t.approved_calls, (double)t.approved_costed));
    /* how many approved sessions the two figures are of (none: null) */
    json_object_object_add(per, "costed",
                           json_object_new_int64(t.approved_costed));
    json_object_object_add(o, "per_approved", per);
    json_object_object_add(ph, "coding_ms",
                           average(t.coding_ms, (double)t.codings));
    json_object_object_add(ph, "auditing_ms",
                           average(t.auditing_ms, (double)t.audits));
    json_object_object_add(ph, "waiting_ms",
                           average(t.waiting_ms, (double)t.waits));
    json_object_object_add(o, "phases", ph);
    json_object_object_add(o, "failure_patterns", top);
    *out = o;
    return 0;
}
