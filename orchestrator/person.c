/* People in the loop (see loop.h): an escalation journaled and shown,
 * asked on a terminal or left waiting for `tandem approve|reject|guide|
 * budget`, answers replayed in order on resume, and spent budgets. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/log.h"
#include "common/str.h"
#include "common/user.h"
#include "common/xalloc.h"
#include "orchestrator/budget.h"
#include "orchestrator/feedback.h"
#include "orchestrator/loop.h"
#include "orchestrator/workspace.h"
#include "proto/code.h"
#include "proto/json.h"

#define TAIL_LINES 15
/* The bytes of the last proposal an escalation shows (cut in the middle
 * past them; the terminal's "d" shows it whole). */
#define DIFF_SHOWN 3000

/* text as one line of at most max bytes for the person's terminal (and
 * a CI log): redacted whole before the cut, so no part of a key a model
 * echoed shows, then no escape codes and no newline. Caller frees. */
static char *one_line(const char *text, size_t max)
{
    char *out = tnd_log_printable(text, max);

    for (char *p = out; *p; p++)
        if (*p == '\n' || *p == '\t')
            *p = '?';
    return out;
}

/* The last lines of text (at most TAIL_LINES), indented, redacted. */
static void show_tail(FILE *to, const char *text)
{
    size_t len = strlen(text), start;
    int lines = 0;
    char *raw, *tail;

    while (len > 0 && text[len - 1] == '\n')
        len--;
    for (start = len; start > 0; start--)
        if (text[start - 1] == '\n' && ++lines == TAIL_LINES)
            break;
    raw = tnd_xstrndup(text + start, len - start);
    /* no escape codes from a skill's output on the person's terminal */
    tail = tnd_log_printable(raw, 16384); /* redacted before it is cut */
    free(raw);
    for (char *line = tail, *nl; line; line = nl ? nl + 1 : NULL) {
        if ((nl = strchr(line, '\n')))
            *nl = '\0';
        fprintf(to, "    %s\n", line);
    }
    free(tail);
}

/* The evidence of the audit of attempt n: the tail of each failing
 * skill's output and the reviewer's issues, so a person can answer
 * without opening the session's files. False when that attempt has no
 * audit (the budget ran out before it): another attempt's evidence
 * under its diff would say it was audited (a review found a fix shown
 * with the failing test of the attempt before it). */
static bool show_evidence(run *r, FILE *to, int n_attempt)
{
    json_object *reply = NULL, *skills, *issues;
    size_t n;

    for (size_t i = tnd_journal_count(r->journal); i-- > 0 && !reply;) {
        json_object *rec = tnd_journal_record(r->journal, i);
        if (strcmp(tnd_journal_type(rec), "audit") == 0 &&
            tnd_json_int_or(rec, "attempt", 0) == n_attempt)
            reply = tnd_json_field(rec, "reply");
    }
    if (!reply)
        return false;
    skills = tnd_json_array(reply, "skills");
    n = skills ? json_object_array_length(skills) : 0;
    for (size_t i = 0; i < n; i++) {
        json_object *sk = json_object_array_get_idx(skills, i);
        const char *status = tnd_json_str_or(sk, "status", "");
        const char *out = tnd_json_str_or(sk, "output", "");
        if (strcmp(status, "pass") == 0 || strcmp(status, "skipped") == 0)
            continue;
        char *name = one_line(tnd_json_str_or(sk, "name", "?"), 80);
        fprintf(to, "%s %s (exit %ld)%s\n", name, status,
                tnd_json_int_or(sk, "exit_code", -1),
                *out ? ", the end of its output:" : ", with no output");
        free(name);
        if (*out)
            show_tail(to, out);
    }
    issues = tnd_json_array(tnd_json_field(reply, "critique"), "issues");
    n = issues ? json_object_array_length(issues) : 0;
    if (n > 0)
        fprintf(to, "the reviewer's issues:\n");
    for (size_t i = 0; i < n; i++) {
        json_object *is = json_object_array_get_idx(issues, i);
        const char *raw = tnd_json_str_or(is, "file", NULL);
        char *file;
        /* the journal keeps the reply as it came: a place the model
         * named that is no file of the workspace (/etc/passwd) is left
         * out, as the report and the findings leave it */
        if (raw && (tnd_edit_path_check(raw) < 0 ||
                    (r->ws && !tnd_workspace_holds(r->ws, raw)))) {
            tnd_error_clear();
            raw = NULL;
        }
        file = raw ? one_line(raw, 1024) : NULL;
        long line = tnd_json_int_or(is, "line", 0);
        char *what = one_line(tnd_json_str_or(is, "description", ""), 300);
        char *sev = one_line(tnd_json_str_or(is, "severity", "?"), 20);
        char where[1100] = "";
        if (file && line > 0)
            snprintf(where, sizeof(where), "%s:%ld ", file, line);
        else if (file)
            snprintf(where, sizeof(where), "%s ", file);
        fprintf(to, "  %s%s: %s\n", where, sev, what);
        free(sev);
        free(what);
        free(file);
    }
    return true;
}

/* The latest attempt before the last whose change was the last's, and
 * audited; 0 when none. */
static int same_change(run *r)
{
    for (int k = r->last_n - 1; k >= 1; k--) {
        char name[64], *path, *text = NULL;
        size_t len = 0;
        bool same;
        snprintf(name, sizeof(name), "attempt-%d.diff", k);
        path = tnd_session_path(r->session, name);
        same = tnd_fs_read(&text, &len, path, strlen(r->last_diff) + 1) == 0 &&
               len == strlen(r->last_diff) &&
               memcmp(text, r->last_diff, len) == 0;
        tnd_error_clear();
        free(text);
        free(path);
        if (same && tnd_loop_find(r, "audit", k, 0) >= 0)
            return k;
    }
    return 0;
}

/* What a person sees before answering: the task, the attempts in one line
 * each, the recurring error, the evidence of the audit of the last diff,
 * and that diff (where it is whole, when it is cut). All of it is the
 * model's words or a repository's bytes: no terminal escape goes out. */
static void show_escalation(run *r, const char *reason, FILE *to)
{
    char *text;

    if (r->opts.quiet && r->mode != TND_ESCALATE_TTY)
        return;
    tnd_loop_end_progress(r);
    fprintf(to, "\n== tandem needs a human ==\n");
    text = one_line(r->opts.task, 2000);
    fprintf(to, "task: %s\n", text);
    free(text);
    text = one_line(reason, 2000);
    fprintf(to, "why: %s\n", text);
    free(text);
    for (size_t i = 0; i < r->nhistory; i++) {
        text = one_line(r->history[i], 2000);
        fprintf(to, "  %s\n", text);
        free(text);
    }
    if (r->last_diff && !show_evidence(r, to, r->last_n)) {
        /* the gate stops a change proposed again before its audit: the
         * audit of its first proposal is the evidence (it said "the
         * budget ran out", with no budget set, and showed none) */
        int same = same_change(r);
        if (same > 0) {
            fprintf(to, "attempt %d's change is attempt %d's, audited then:\n",
                    r->last_n, same);
            show_evidence(r, to, same);
        } else {
            fprintf(to, "attempt %d's change was not audited\n", r->last_n);
        }
    } else if (!r->last_diff)
        show_evidence(r, to, r->iterations);
    if (r->last_diff) {
        char *cut = tnd_str_cut_middle(r->last_diff, DIFF_SHOWN);
        char *d = tnd_str_printable(cut, strlen(cut) + 1);
        fprintf(to, "the last proposal (attempt %d):\n%s%s", r->last_n, d,
                *d && d[strlen(d) - 1] == '\n' ? "" : "\n");
        if (strlen(r->last_diff) > DIFF_SHOWN)
            fprintf(to,
                    "(cut in the middle; all of it: %s/.tandem/sessions/"
                    "%s/attempt-%d.diff)\n",
                    r->repo, tnd_session_id(r->session), r->last_n);
        free(d);
        free(cut);
    }
}

static void show_commands(run *r, FILE *to)
{
    const char *id = tnd_session_id(r->session);

    fprintf(to,
            "\nthe session waits for an answer; from %s run one of:\n"
            "  tandem approve %s\n"
            "  tandem reject %s -m WHY\n",
            r->repo, id, id);
    if (r->opts.review)
        return; /* no coder to guide or to give more attempts */
    fprintf(to, "  tandem guide %s -m TEXT\n", id);
    /* the budgets a person may raise: a session stopped by
     * gate.max_llm_calls was offered only answers that left it spent */
    fprintf(to, "  tandem budget %s --iterations N%s%s\n", id,
            r->gate.max_tokens > 0 ? " --tokens N" : "",
            r->gate.max_llm_calls > 0 ? " --calls N" : "");
}

/* The terminal to ask on, or NULL: none, or one this run is in the
 * background of (`tandem run ... &`: the question went to the shell's
 * prompt, what the person typed to the shell, and tandem waited for
 * ever, stopped by SIGTTIN). */
static FILE *terminal(void)
{
    FILE *tty = fopen("/dev/tty", "r+");

    if (tty && tcgetpgrp(fileno(tty)) != getpgrp()) {
        fclose(tty);
        tnd_log_warn("tandem runs in the background of its terminal: the "
                     "question is not asked there");
        return NULL;
    }
    return tty;
}

json_object *tnd_loop_answer_json(const tnd_answer *ans, const char *by,
                                  const tnd_client_who *who)
{
    json_object *f = json_object_new_object();

    json_object_object_add(f, "kind",
                           json_object_new_string(tnd_answer_name(ans->kind)));
    json_object_object_add(f, "text", tnd_json_str_or_null(ans->text));
    json_object_object_add(f, "iterations",
                           json_object_new_int(ans->iterations));
    json_object_object_add(f, "tokens", json_object_new_int64(ans->tokens));
    if (ans->calls)
        json_object_object_add(f, "calls", json_object_new_int64(ans->calls));
    json_object_object_add(f, "by", json_object_new_string(by));
    if (who && who->via != TND_CLIENT_VIA_NONE) {
        /* a server's: never its own user, who only relayed it */
        tnd_client_who_add(f, who);
    } else {
        char *user = tnd_user_name(); /* whoever runs this tandem answered */
        json_object_object_add(f, "user", json_object_new_string(user));
        free(user);
    }
    return f;
}

/* The journaled escalation of attempt n at `at` not used up yet; -1. */
static long find_escalation(const run *r, int n, const char *at)
{
    for (size_t i = r->cursor; i < tnd_journal_count(r->journal); i++) {
        json_object *rec = tnd_journal_record(r->journal, i);
        if (strcmp(tnd_journal_type(rec), "escalation") == 0 &&
            tnd_json_int_or(rec, "attempt", 0) == n &&
            tnd_str_eq(tnd_json_str_or(rec, "at", NULL), at))
            return (long)i;
    }
    return -1;
}

/* The answer journaled after the escalation of attempt n at index esc,
 * if any: 1 with *ans filled, and it is used up (the cursor moves past
 * it) and in the report; 0 when there is none; -1 when its kind is none
 * tandem knows. */
static int journaled_answer(run *r, int n, long esc, tnd_answer *ans)
{
    for (size_t i = (size_t)esc + 1; i < tnd_journal_count(r->journal); i++) {
        json_object *rec = tnd_journal_record(r->journal, i);
        const char *type = tnd_journal_type(rec);
        if (strcmp(type, "answer") == 0) {
            memset(ans, 0, sizeof(*ans));
            if (tnd_answer_kind_parse(&ans->kind,
                                      tnd_json_str_or(rec, "kind", "")) < 0) {
                tnd_error_prefix("session %s: journal.jsonl:%zu",
                                 tnd_session_id(r->session), i + 1);
                return -1;
            }
            r->cursor = i + 1; /* used up */
            tnd_report_answer(r->report, n, rec);
            ans->text = tnd_xstrdup(tnd_json_str_or(rec, "text", NULL));
            ans->iterations = (int)tnd_json_int_or(rec, "iterations", 0);
            ans->tokens = tnd_json_int_or(rec, "tokens", 0);
            ans->calls = tnd_json_int_or(rec, "calls", 0);
            return 1;
        }
        if (strcmp(type, "escalation") == 0 || strcmp(type, "proposal") == 0)
            break;
    }
    return 0;
}

/* The command's answer (r->pending), journaled now that the replay has
 * reached the question it answers, the one the session waits on (at
 * index esc): as journaled_answer. 0 when there is none, or this is
 * another question. */
static int take_pending(run *r, int n, long esc, tnd_answer *ans)
{
    json_object *f = r->pending;

    if (!f || tnd_json_int_or(tnd_journal_record(r->journal, (size_t)esc),
                              "seq", -1) !=
                  tnd_journal_waiting_on(tnd_journal_records(r->journal)))
        return 0;
    r->pending = NULL;
    if (tnd_loop_step(r, "answer", f) < 0)
        return -1;
    return journaled_answer(r, n, esc, ans);
}

/* While a person reads the question: the agents keep their heartbeats
 * (a prompt that took longer than the broker's liveness made every agent
 * reconnect and re-register). */
static bool keep_agents(void *payload)
{
    run *r = payload;
    int rc = tnd_crew_idle(r->crew, 0);

    if (rc < 0 && rc != TND_ECANCELLED)
        tnd_log_warn("while waiting for an answer: %s", tnd_error_last());
    return rc == 0;
}

/* Ask the person at the terminal about the escalation just shown, of
 * attempt n: 1 with *ans, journaled; 0 when the person stopped (or there
 * is no terminal): the session waits; -1 on a journal failure, or
 * interrupted at the question. The escalation is shown on tty too when
 * stderr goes elsewhere (2>log showed them the menu alone). */
static int ask_tty(run *r, int n, const char *reason, FILE *tty,
                   tnd_answer *ans)
{
    if (!tty) {
        tnd_log_warn("no terminal to ask on; the session waits");
        return 0;
    }
    if (!isatty(fileno(r->err)))
        show_escalation(r, reason, tty);
    for (;;) {
        /* what the escalation cut in the middle, whole on request */
        tnd_escalate_ask(ans, tty, tty, r->opts.review,
                         r->last_diff && strlen(r->last_diff) > DIFF_SHOWN
                             ? r->last_diff
                             : NULL,
                         keep_agents, r);
        if (ans->kind != TND_ANSWER_APPROVE || (r->last_diff && *r->last_diff))
            break;
        /* as `tandem approve` refuses it: approved, it ended the session
         * failed, for good ("there is no change to approve") */
        fprintf(tty, "there is no proposal to approve: no attempt made a "
                     "change yet\n");
        tnd_answer_clear(ans);
    }
    if (ans->kind == TND_ANSWER_STOP && atomic_load(r->stop)) {
        /* Ctrl-C at the question: interrupted (130), as anywhere else;
         * the escalation waits in the journal. The prompt's line is
         * ended: the summary went on after "choice [...]> ^C" */
        fputc('\n', tty);
        fflush(tty);
        tnd_answer_clear(ans);
        return tnd_error_set("interrupted at the question");
    }
    if (ans->kind == TND_ANSWER_STOP) {
        tnd_answer_clear(ans);
        return 0;
    }
    if (tnd_loop_step(r, "answer", tnd_loop_answer_json(ans, "tty", NULL)) < 0)
        return -1;
    tnd_report_answer(
        r->report, n,
        tnd_journal_record(r->journal, tnd_journal_count(r->journal) - 1));
    r->cursor = tnd_journal_count(r->journal);
    return 1;
}

/* The loop must ask a person. 1 with *ans to apply; 0 when the loop
 * stops (waiting, or escalate: never); -1 on a journal failure. `at` is
 * "decision" (after attempt n) or "start" (a budget ran out before it). */
int tnd_loop_escalate(run *r, int n, const char *at, const char *reason,
                      tnd_answer *ans)
{
    long esc = find_escalation(r, n, at);
    FILE *tty = NULL;
    int rc;

    if (esc < 0) {
        json_object *f = json_object_new_object();
        json_object_object_add(f, "attempt", json_object_new_int(n));
        json_object_object_add(f, "at", json_object_new_string(at));
        json_object_object_add(f, "reason", json_object_new_string(reason));
        json_object_object_add(
            f, "mode", json_object_new_string(tnd_escalate_mode_name(r->mode)));
        if (tnd_loop_step(r, "escalation", f) < 0)
            return -1;
        esc = (long)tnd_journal_count(r->journal) - 1;
    } else if ((rc = journaled_answer(r, n, esc, ans)) != 0 ||
               (rc = take_pending(r, n, esc, ans)) != 0) {
        if (rc > 0)
            tnd_loop_say(r, "a person answered: %s",
                         tnd_answer_name(ans->kind));
        return rc;
    }
    r->cursor = (size_t)esc + 1;
    show_escalation(r, reason, r->err);
    tnd_loop_stop(r, TND_SESSION_ESCALATED, reason);
    if (r->mode == TND_ESCALATE_NEVER) {
        r->final_escalation = true;
        return 0;
    }
    if (r->mode == TND_ESCALATE_TTY) {
        tty = terminal();
        rc = ask_tty(r, n, reason, tty, ans);
        if (rc != 0) {
            if (tty)
                fclose(tty);
            if (rc > 0)
                r->status = TND_SESSION_OPEN;
            return rc;
        }
    }
    r->waiting = true;
    show_commands(r, r->err);
    /* "q, answer later" at a terminal whose stderr goes to a file: the
     * escalation was shown there, so the way to answer is too */
    if (tty && !isatty(fileno(r->err)))
        show_commands(r, tty);
    if (tty)
        fclose(tty);
    return 0;
}

/* Apply a person's answer at attempt a. 1 when the loop goes on (the
 * answer asked for another attempt), 0 when it ends, -1 on failure. */
int tnd_loop_take_answer(run *r, attempt *a, loop_state *ls,
                         const tnd_answer *ans)
{
    int n = a ? a->n : r->iterations;

    switch (ans->kind) {
    case TND_ANSWER_APPROVE:
        return tnd_loop_approve(
                   r, a && a->diff && *a->diff ? a->diff : r->last_diff,
                   "approved by a person") < 0
                   ? -1
                   : 0;
    case TND_ANSWER_REJECT: {
        char *why =
            tnd_xasprintf("rejected by a person%s%s", ans->text ? ": " : "",
                          ans->text ? ans->text : "");
        tnd_loop_stop(r, TND_SESSION_REJECTED, why);
        free(why);
        return 0;
    }
    case TND_ANSWER_BUDGET:
    case TND_ANSWER_GUIDE:
    case TND_ANSWER_SKIP:
        if (!r->opts.review)
            break;
        /* a review has no coder to try again */
        tnd_loop_stop(r, TND_SESSION_REJECTED,
                      ans->kind == TND_ANSWER_GUIDE && ans->text
                          ? ans->text
                          : "rejected by a "
                            "person");
        return 0;
    default:
        return 0;
    }
    switch (ans->kind) {
    case TND_ANSWER_BUDGET:
        if (ans->iterations > 0)
            r->gate.max_iterations =
                (r->gate.max_iterations > n ? r->gate.max_iterations : n) +
                ans->iterations;
        if (ans->tokens > 0 && r->gate.max_tokens > 0)
            r->gate.max_tokens += ans->tokens;
        if (ans->calls > 0 && r->gate.max_llm_calls > 0)
            r->gate.max_llm_calls += (int)ans->calls;
        break;
    case TND_ANSWER_GUIDE:
    case TND_ANSWER_SKIP:
        if (r->gate.max_iterations <= n)
            r->gate.max_iterations = n + 1;
        break;
    default:
        return 0;
    }
    if (ans->kind == TND_ANSWER_GUIDE && ans->text) {
        free(r->guidance);
        r->guidance = tnd_xstrdup(ans->text);
    }
    /* a person's answer is a fresh start for the failure streak, and for
     * the wall budget, as a resume is (at a terminal a wall budget stayed
     * spent, and the same question came back whatever the answer) */
    ls->streak = 0;
    ls->last_sig = 0;
    r->wall_from = tnd_now_ms();
    r->status = TND_SESSION_OPEN;
    return 1;
}

/* A budget spent at `at` ("start" of attempt n, or before its "audit"):
 * escalate (a person may grant more). 1 when the loop goes on, 0 when it
 * stops, -1 on failure. a is the attempt so far (NULL at its start). */
/* Whether a budget is spent now; why (size n) says which. */
static bool spent(run *r, char *why, size_t n)
{
    tnd_usage used = tnd_report_total(r->report);

    return tnd_budget_spent(why, n, &r->gate, &used,
                            tnd_now_ms() - r->wall_from);
}

static int check_budget_once(run *r, int n, const char *at, attempt *a,
                             loop_state *ls)
{
    long esc = find_escalation(r, n, at);
    tnd_answer ans;
    char why[256];
    int rc;

    if (esc >= 0)
        snprintf(why, sizeof(why), "%s",
                 tnd_json_str_or(tnd_journal_record(r->journal, (size_t)esc),
                                 "reason", NULL));
    else if (!spent(r, why, sizeof(why)))
        return 1;
    tnd_loop_say(r, "budget: %s", why);
    memset(&ans, 0, sizeof(ans));
    rc = tnd_loop_escalate(r, n, at, why, &ans);
    if (rc == 1)
        rc = tnd_loop_take_answer(r, a, ls, &ans);
    if (rc == 1 && r->guidance && !a) {
        /* the attempt this guidance is for has not been asked yet */
        char *with = tnd_xasprintf("%s\nA person looked at this and says:\n"
                                   "%s\nFollow this guidance.\n",
                                   ls->feedback, r->guidance);
        free(ls->feedback);
        ls->feedback = with;
        free(r->guidance);
        r->guidance = NULL;
    }
    tnd_answer_clear(&ans);
    return rc;
}

int tnd_loop_check_budget(run *r, int n, const char *at, attempt *a,
                          loop_state *ls)
{
    char why[256];
    int rc;

    /* an answer that let the step run again, and it ran out again: the
     * next escalation journaled here is the one its answer is for (a
     * review found every answer after the first ignored, and the step
     * paid for again at each). And an answer that leaves the budget
     * spent (budget --tokens too few, guide or skip on a token budget)
     * is asked again before anything is paid (each bought one paid step
     * past the budget) */
    do
        rc = check_budget_once(r, n, at, a, ls);
    while (rc == 1 &&
           (find_escalation(r, n, at) >= 0 || spent(r, why, sizeof(why))));
    return rc;
}

/* A budget ran out while waiting for an agent at `at` of attempt n: the
 * attempt is left unfinished, and an answer goes on from the journal, the
 * way a resume does (this run's state is of the attempt cut short). At a
 * terminal the person is asked now, and the session goes on in this
 * process (r->go_on); else it waits. */
int tnd_loop_budget_ran_out(run *r, int n, const char *at)
{
    char why[256];
    tnd_usage used = tnd_report_total(r->report);
    json_object *f;
    tnd_answer ans;
    FILE *tty = NULL;
    int rc = 0;

    if (!tnd_budget_spent(why, sizeof(why), &r->gate, &used,
                          tnd_now_ms() - r->wall_from))
        return -1;
    tnd_loop_say(r, "budget: %s", why);
    f = json_object_new_object();
    json_object_object_add(f, "attempt", json_object_new_int(n));
    json_object_object_add(f, "at", json_object_new_string(at));
    json_object_object_add(f, "reason", json_object_new_string(why));
    json_object_object_add(
        f, "mode", json_object_new_string(tnd_escalate_mode_name(r->mode)));
    if (tnd_loop_step(r, "escalation", f) < 0)
        return -1;
    show_escalation(r, why, r->err);
    tnd_loop_stop(r, TND_SESSION_ESCALATED, why);
    if (r->mode == TND_ESCALATE_NEVER) {
        r->final_escalation = true;
        return 0;
    }
    r->waiting = true;
    if (r->mode == TND_ESCALATE_TTY && !r->host) {
        memset(&ans, 0, sizeof(ans));
        tty = terminal();
        rc = ask_tty(r, n, why, tty, &ans);
        tnd_answer_clear(&ans);
        if (rc < 0) {
            if (tty)
                fclose(tty);
            return -1;
        }
        r->go_on = rc > 0;
    }
    if (!r->go_on) {
        show_commands(r, r->err);
        if (tty && !isatty(fileno(r->err)))
            show_commands(r, tty);
    }
    if (tty)
        fclose(tty);
    return 0;
}
