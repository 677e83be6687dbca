/* The reviewer's side of an attempt (see loop.h): the audit in one
 * request, or in phases (the skills once, then a critique from each
 * member of a quorum when a trigger fires, merged), taken from the
 * journal when a resumed run has it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/config.h"
#include "common/log.h"
#include "common/str.h"
#include "common/xalloc.h"
#include "orchestrator/budget.h"
#include "orchestrator/loop.h"
#include "orchestrator/paid.h"
#include "orchestrator/review.h"
#include "orchestrator/review_merge.h"
#include "proto/json.h"
#include "skills/bwrap.h"

/* "build pass, test FAIL (exit 2)" */
void tnd_loop_skills_line(tnd_buf *b, const tnd_audit_reply *a)
{
    for (size_t i = 0; i < a->nskills; i++) {
        const tnd_skill_result *s = &a->skills[i];
        tnd_buf_printf(b, "%s%s %s", i ? ", " : "", s->name,
                       s->status == TND_SKILL_PASS      ? "pass"
                       : s->status == TND_SKILL_SKIPPED ? "skipped"
                                                        : "FAIL");
        if (s->ended)
            tnd_buf_printf(b, " (%s)", s->ended);
        else if (s->status == TND_SKILL_FAIL && s->exit_code >= 0)
            tnd_buf_printf(b, " (exit %d)", s->exit_code);
        else if (s->status != TND_SKILL_PASS && s->status != TND_SKILL_SKIPPED)
            tnd_buf_printf(b, " (%s)", tnd_skill_status_name(s->status));
    }
    if (!a->nskills)
        tnd_buf_puts(b, "no skills");
}

static void describe_audit(run *r, int n, const tnd_audit_reply *a,
                           bool replayed, bool skipped)
{
    tnd_buf b;

    tnd_buf_init(&b, 4096);
    tnd_loop_skills_line(&b, a);
    if (a->critique)
        tnd_buf_printf(&b, "; critique: %s, confidence %.2f, %zu issue%s",
                       tnd_verdict_name(a->critique->verdict),
                       a->critique->confidence, a->critique->nissues,
                       a->critique->nissues == 1 ? "" : "s");
    else
        tnd_buf_printf(&b, "; %s",
                       skipped ? "no critique asked" : "no valid critique");
    tnd_loop_say(r, "[%d/%d] reviewer: %s%s", n, r->gate.max_iterations,
                 tnd_buf_str(&b), replayed ? " (from the journal)" : "");
    tnd_buf_free(&b);
}

/* Journal an audit's (merged) reply with how its critique went. */
static int journal_audit(run *r, int n, const tnd_audit_reply *a, bool asked,
                         const char *why)
{
    size_t len;
    char *body = tnd_audit_reply_encode(a, &len);
    json_object *reply = NULL, *f, *c;
    int rc;

    rc = tnd_json_parse(&reply, body, len);
    free(body);
    if (rc < 0)
        return -1;
    f = json_object_new_object();
    json_object_object_add(f, "attempt", json_object_new_int(n));
    json_object_object_add(f, "reply", reply);
    c = json_object_new_object();
    json_object_object_add(c, "asked", json_object_new_boolean(asked));
    json_object_object_add(c, "why", json_object_new_string(why));
    json_object_object_add(f, "critique", c);
    return tnd_loop_step(r, "audit", f);
}

/* How the journaled audit record rec went about its critique, when the
 * audit ran in phases (else *asked is left alone). */
static void journaled_round(json_object *rec, bool *asked, char *why,
                            size_t size)
{
    json_object *c, *v;

    if (!json_object_object_get_ex(rec, "critique", &c) ||
        !json_object_object_get_ex(c, "asked", &v))
        return;
    *asked = json_object_get_boolean(v);
    snprintf(why, size, "%s", tnd_json_str_or(c, "why", ""));
}

/* Whether line (0: none) lies past the end of rel, a file of the
 * workspace. */
static bool past_end(const run *r, const char *rel, long line)
{
    long lines = line > 0 ? tnd_workspace_lines(r->ws, rel) : -1;

    return lines >= 0 && line > lines;
}

/* Drop the places a reply points at (its skills' locations, its
 * critique's issue files) that are not files in the workspace: outside
 * it, through a symlink, or not there at all; and the lines past their
 * file's end (a model's guess: SARIF and GitHub's annotations name lines
 * of the file, and code scanning refuses a region outside it). An agent,
 * perhaps on another host, or its model says where; the orchestrator
 * checks before report.json, the feedback and the context rely on it. An
 * issue stays (it may still block): only its place, or its line, goes. */
void tnd_loop_keep_real_places(run *r, tnd_audit_reply *a)
{
    size_t dropped = 0;

    for (size_t i = 0; a->critique && i < a->critique->nissues; i++) {
        tnd_issue *is = &a->critique->issues[i];
        char *shown;
        if (!is->file)
            continue;
        if (tnd_workspace_holds(r->ws, is->file)) {
            if (!past_end(r, is->file, is->line))
                continue;
            if (dropped++ == 0) {
                shown = tnd_str_one_line(is->file, 200);
                tnd_log_warn("the critique's issue %zu names line %ld of %s, "
                             "past the file's end; its line is left out",
                             i + 1, is->line, shown);
                free(shown);
            }
            is->line = 0;
            continue;
        }
        if (dropped++ == 0) {
            shown = tnd_str_one_line(is->file, 200);
            tnd_log_warn("the critique's issue %zu names %s, not a file in "
                         "the workspace; its place is left out",
                         i + 1, shown);
            free(shown);
        }
        free(is->file);
        is->file = NULL;
        is->line = 0;
    }

    for (size_t i = 0; i < a->nskills; i++) {
        tnd_skill_result *s = &a->skills[i];
        size_t kept = 0;
        for (size_t k = 0; k < s->nlocations; k++) {
            const tnd_location *loc = &s->locations[k];
            bool held = tnd_workspace_holds(r->ws, loc->file);
            if (held && !past_end(r, loc->file, loc->line)) {
                s->locations[kept++] = s->locations[k];
                continue;
            }
            if (dropped++ == 0) {
                /* the name is the skill's output's: no escape codes to
                 * the person's terminal */
                char *shown = tnd_str_one_line(loc->file, 200);
                tnd_log_warn(
                    "%s: %s:%ld is not %s; left out", s->name, shown, loc->line,
                    held ? "a line of the file" : "a file in the workspace");
                free(shown);
            }
            free(s->locations[k].file);
        }
        s->nlocations = kept;
    }
    if (dropped > 1)
        tnd_log_warn("%zu places the reviewer reported were left out", dropped);
}

/* A reply to a request that went to an agent before the one that
 * answered (lost with it, or its reply refused): that agent ran skills in
 * the workspace this one used, and what it left is in this reply's
 * evidence (a library its killed make half wrote, with a fresh mtime:
 * the next make said "nothing to be done", and a correct change failed
 * its test). The reply is put aside, what its model was paid counted,
 * and the workspace put back as the attempt (a, or the base when NULL)
 * made it, to be asked again. */
static int put_aside(run *r, int n, const char *type, const char *service,
                     bool model, const char *reply, size_t len,
                     const attempt *a)
{
    tnd_audit_reply was;
    int rc = 0;

    if (n == 0)
        tnd_loop_say(r, "baseline: an agent lost with it worked in the "
                        "workspace; the workspace is put back and the "
                        "baseline asked again");
    else
        tnd_loop_say(r,
                     "[%d/%d] reviewer: an agent lost with the audit "
                     "worked in its workspace; the workspace is put back "
                     "and the audit asked again",
                     n, r->gate.max_iterations);
    memset(&was, 0, sizeof(was));
    if (model && tnd_audit_reply_decode(&was, reply, len) == 0) {
        tnd_report_usage(r->report, TND_ROLE_REVIEWER, &was.usage);
        rc = tnd_loop_step(
            r, "unanswered",
            tnd_paid_unanswered_json(n, type, service, 0, &was.usage));
    }
    tnd_audit_reply_clear(&was);
    if (rc == 0)
        rc = tnd_workspace_reset(r->ws);
    if (rc == 0 && a && (a->reply.nedits > 0 || (r->opts.review && r->nmodes)))
        rc = tnd_loop_apply(r, &a->reply);
    return rc;
}

/* Ask for the skills' run in the workspace (with the critique when
 * model): tnd_loop_ask_content, and once more after put_aside when an
 * agent before the one that answered had the request. a: the attempt
 * whose edits the workspace holds, or NULL for the base. */
int tnd_loop_ask_clean(run *r, int n, const char *type, const char *service,
                       const char *key, bool model, tnd_audit_request *ar,
                       const attempt *a, char **reply, size_t *reply_len,
                       json_object **parsed)
{
    int rc;

    for (int again = 0;; again++) {
        long resent = tnd_crew_resent(r->crew);
        rc = tnd_loop_ask_content(r, n, type, service, key, model, ar, reply,
                                  reply_len, parsed);
        if (rc < 0 || again || tnd_crew_resent(r->crew) == resent)
            return rc;
        rc = put_aside(r, n, type, service, model, *reply, *reply_len, a);
        free(*reply);
        *reply = NULL;
        if (parsed) {
            json_object_put(*parsed);
            *parsed = NULL;
        }
        if (rc < 0)
            return rc;
    }
}

/* Ask the reviewer (service) for one reply, or take it from the journal
 * under type. Decoded into out. a: the attempt audited (the workspace
 * holds its edits). */
static int ask_reviewer(run *r, const attempt *a, const char *service,
                        const char *type, tnd_audit_request *ar,
                        tnd_audit_reply *out)
{
    int n = a->n;
    char key[160];
    char *reply = NULL;
    size_t reply_len = 0;
    json_object *parsed = NULL, *journaled;
    int rc;

    if (!(journaled = tnd_loop_journaled(r, type, n))) {
        snprintf(key, sizeof(key), "%s/%d/%s", ar->task_id, n, type);
        /* the skills alone ask no model: nothing to count */
        rc = tnd_loop_ask_clean(r, n, type, service, key, ar->critique, ar, a,
                                &reply, &reply_len, &parsed);
        /* the journal takes parsed */
        if (rc == 0)
            rc = tnd_loop_journal_reply(r, type, n, reply, reply_len, parsed);
        if (rc == 0 && !(journaled = tnd_loop_journaled(r, type, n)))
            /* not journaled (an error): its decode says what it is */
            rc = tnd_audit_reply_decode(out, reply, reply_len);
        free(reply);
        if (rc < 0 || !journaled)
            return rc;
    }
    /* decoded as the journal holds it, not printed and parsed again */
    return tnd_audit_reply_from_json(out, journaled);
}

/* One member's critique: its journal type, key and service, the request
 * when it is asked, and the reply (journaled earlier, or new). */
typedef struct member_ask {
    char type[32], key[160], service[32];
    char *body;
    char *reply;
    size_t len;
} member_ask;

/* The critiques of the quorum's members (or of the one reviewer) on the
 * evidence in ar, asked at once; those already journaled are not asked
 * again. members[i] gets member i+1's reply. */
static int ask_members(run *r, int n, int quorum, tnd_audit_request *ar,
                       tnd_audit_reply *members)
{
    member_ask *ms = tnd_xcalloc((size_t)quorum, sizeof(*ms));
    tnd_crew_request *reqs = tnd_xcalloc((size_t)quorum, sizeof(*reqs));
    size_t nreq = 0;
    bool by_budget, sent = false;
    char *failed;
    int rc = 0;

    for (int m = 0; m < quorum; m++) {
        member_ask *a = &ms[m];
        snprintf(a->type, sizeof(a->type), "critique.%d", m + 1);
        if ((a->reply = tnd_loop_journaled_reply(r, a->type, n, &a->len)))
            continue;
        if (quorum > 1)
            snprintf(a->service, sizeof(a->service), "reviewer.%d", m + 1);
        else
            snprintf(a->service, sizeof(a->service), "reviewer");
        snprintf(a->key, sizeof(a->key), "%s/%d/%s", ar->task_id, n, a->type);
        if (!(a->body = tnd_loop_encode_round(r, ar, NULL, &reqs[nreq].len))) {
            rc = -1;
            break;
        }
        reqs[nreq].service = a->service;
        reqs[nreq].key = a->key;
        reqs[nreq].body = a->body;
        nreq++;
        if (tnd_loop_asked(r, n, a->type, a->service) < 0) {
            rc = -1;
            break;
        }
    }
    if (rc == 0 && nreq > 0) {
        int64_t deadline = tnd_loop_deadline(r, "reviewer", &by_budget);
        sent = true;
        tnd_loop_progress_start(r, "reviewer");
        rc = tnd_crew_call_many(r->crew, reqs, nreq, deadline,
                                tnd_loop_on_progress, r);
        tnd_loop_end_progress(r);
        if (rc == TND_ETIMEOUT && !by_budget)
            tnd_error_set("no critique from the reviewers within %ld s (%s)",
                          tnd_budget_request_s(r->cfg, "reviewer"),
                          tnd_loop_timeout_source(r));
    }
    /* journal every reply that came, failure or not: a resumed run asks
     * only the members that did not answer */
    for (size_t i = 0, m = 0; sent && i < nreq; i++, m++) {
        while (ms[m].reply)
            m++;
        if (tnd_loop_unanswered(r, n, ms[m].type, &reqs[i]) < 0)
            rc = -1;
        if (reqs[i].rc == 0 &&
            tnd_loop_answer_needs(r, ms[m].service, ms[m].key, ar,
                                  reqs[i].reply_type, &reqs[i].reply,
                                  &reqs[i].reply_len, &reqs[i].parsed) < 0) {
            free(reqs[i].reply); /* a "need" is no answer to journal */
            reqs[i].reply = NULL;
            reqs[i].rc = -1;
            if (rc == 0)
                rc = -1;
        }
        if (reqs[i].rc == 0 && reqs[i].reply) {
            ms[m].reply = reqs[i].reply;
            ms[m].len = reqs[i].reply_len;
            reqs[i].reply = NULL;
            /* the journal takes the parse */
            if (tnd_loop_journal_reply(r, ms[m].type, n, ms[m].reply, ms[m].len,
                                       reqs[i].parsed) < 0 &&
                rc == 0)
                rc = -1;
            reqs[i].parsed = NULL;
        }
        tnd_crew_request_clear(&reqs[i]);
    }
    /* every reply that came, also when another member failed (its error
     * kept): the caller counts what they were paid */
    failed = rc < 0 ? tnd_xstrdup(tnd_error_last()) : NULL;
    for (int m = 0; m < quorum; m++) {
        json_object *journaled;
        if (!ms[m].reply && rc < 0)
            continue;
        /* as the journal holds it, when it does: not parsed again */
        journaled = ms[m].reply ? tnd_loop_journaled(r, ms[m].type, n) : NULL;
        if ((journaled ? tnd_audit_reply_from_json(&members[m], journaled)
                       : tnd_audit_reply_decode(&members[m], ms[m].reply,
                                                ms[m].len)) < 0) {
            tnd_audit_reply_clear(&members[m]);
            if (rc == 0) {
                tnd_error_prefix("reviewer %d", m + 1);
                rc = -1;
            }
        }
    }
    if (failed) {
        tnd_error_set("%s", failed);
        free(failed);
    }
    for (int m = 0; m < quorum; m++) {
        free(ms[m].body);
        free(ms[m].reply);
    }
    free(ms);
    free(reqs);
    return rc;
}

/* What a skipped critique would have cost: the last one asked, or the
 * evidence's size in tokens (about 4 bytes each) with the prompt's
 * frame and an answer. */
static long tokens_saved(const run *r, const attempt *a,
                         const tnd_audit_reply *skills)
{
    size_t bytes = a->diff ? strlen(a->diff) : 0;

    if (r->critique_tokens > 0)
        return r->critique_tokens;
    for (size_t i = 0; i < skills->nskills; i++)
        bytes += strlen(skills->skills[i].output);
    return (long)(bytes / 4) + 1000;
}

static json_object *members_json(const tnd_audit_reply *members, int n)
{
    json_object *list = json_object_new_array();

    for (int m = 0; m < n; m++) {
        json_object *j = json_object_new_object();
        const tnd_critique *c = members[m].critique;
        json_object_object_add(j, "member", json_object_new_int(m + 1));
        if (c) {
            json_object_object_add(
                j, "verdict",
                json_object_new_string(tnd_verdict_name(c->verdict)));
            json_object_object_add(j, "confidence",
                                   json_object_new_double(c->confidence));
            json_object_object_add(j, "issues",
                                   json_object_new_int((int)c->nissues));
        } else {
            json_object_object_add(
                j, "error", tnd_json_str_or_null(members[m].critique_error));
        }
        json_object_array_add(list, j);
    }
    return list;
}

/* "reviewers: 1 of 2 approve (quorum: all): #1 approve 0.93, #2 revise
 * 0.85" */
static void say_members(run *r, int n, const tnd_audit_reply *members,
                        int quorum)
{
    tnd_buf b;
    int approvals = 0;

    tnd_buf_init(&b, 4096);
    for (int m = 0; m < quorum; m++) {
        const tnd_critique *c = members[m].critique;
        if (c && c->verdict == TND_VERDICT_APPROVE)
            approvals++;
        if (c)
            tnd_buf_printf(&b, "%s#%d %s %.2f", m ? ", " : "", m + 1,
                           tnd_verdict_name(c->verdict), c->confidence);
        else
            tnd_buf_printf(&b, "%s#%d no valid critique", m ? ", " : "", m + 1);
    }
    tnd_loop_say(r, "[%d/%d] reviewers: %d of %d approve (quorum: %s): %s", n,
                 r->gate.max_iterations, approvals, quorum,
                 tnd_quorum_rule_name(r->cfg->reviewer.quorum),
                 tnd_buf_str(&b));
    tnd_buf_free(&b);
}

/* The audit request for attempt a (its strings borrowed), asking for a
 * critique or not. */
static tnd_audit_request audit_request(const run *r, const attempt *a,
                                       bool critique)
{
    tnd_audit_request ar = {
        .task_id = (char *)tnd_session_id(r->session),
        .attempt = a->n,
        .task = (char *)r->opts.task,
        .workspace = (char *)tnd_workspace_path(r->ws),
        .diff = a->diff,
        .critique = critique,
    };

    return ar;
}

/* The audit in two phases (gate.critique on_trigger, or a quorum): the
 * skills once, then the critique when a trigger fires, from every
 * member, merged. The merged reply is journaled as the attempt's audit. */
static int audit_in_phases(run *r, attempt *a, int quorum)
{
    tnd_audit_request ar = audit_request(r, a, false);
    tnd_audit_reply *members = NULL;
    tnd_trigger_input ti;
    char why[600], checks[512];
    bool asked;
    int rc;

    if (tnd_loop_with_content(r, &ar, a) < 0)
        return -1;
    /* a resume has them from the journal: nothing runs */
    tnd_loop_say(r, "[%d/%d] reviewer: %s", a->n, r->gate.max_iterations,
                 tnd_loop_find(r, "skills", a->n, 0) >= 0
                     ? "the skills' results, from the journal"
                     : "running the skills");
    tnd_loop_phase(r, a->n, "auditing");
    rc = ask_reviewer(r, a, quorum > 1 ? "reviewer.1" : "reviewer", "skills",
                      &ar, &a->audit);
    if (rc < 0)
        return rc;
    memset(&ti, 0, sizeof(ti));
    ti.skills = &a->audit;
    ti.required = (const char *const *)r->required;
    ti.changed_lines = tnd_review_changed_lines(a->diff);
    ti.risky = a->in.risky;
    ti.checks = tnd_review_checks(checks, sizeof(checks), r->cfg, a->diff);
    ti.baseline = r->has_baseline ? &r->baseline : NULL;
    ti.last_confidence = r->last_confidence;
    ti.ordinal = r->ordinal;
    asked = tnd_review_triggers(why, sizeof(why), &r->gate, &ti);
    if (!asked) {
        tnd_loop_say(r, "[%d/%d] reviewer: no critique: %s", a->n,
                     r->gate.max_iterations, why);
        tnd_report_critique(r->report, false, why,
                            tokens_saved(r, a, &a->audit), NULL);
        a->in.critique_skipped = true;
        free(a->audit.critique_error);
        a->audit.critique_error = tnd_xstrdup(why);
        goto journal;
    }
    tnd_loop_say(r, "[%d/%d] reviewer%s: critique (%s)", a->n,
                 r->gate.max_iterations, quorum > 1 ? "s" : "", why);
    tnd_loop_phase(r, a->n, "critique");
    ar.critique = true;
    ar.skills = a->audit.skills;
    ar.nskills = a->audit.nskills;
    members = tnd_xcalloc((size_t)quorum, sizeof(*members));
    if ((rc = ask_members(r, a->n, quorum, &ar, members)) < 0) {
        const tnd_skill_result *s = NULL;
        /* the members that answered were paid, and their replies are
         * journaled: the report of the failed session counts them (a
         * resumed run counts them in the merged audit, as a run that
         * went through does) */
        for (int m = 0; m < quorum; m++)
            tnd_report_usage(r->report, TND_ROLE_REVIEWER, &members[m].usage);
        /* a required skill failed: the gate rejects whatever a critique
         * says, so a critique that could not be had (a reviewer that
         * crashed in it) is no "could not review", which --on-error pass
         * let through */
        if (atomic_load(r->stop) ||
            !tnd_gate_unmet(&a->audit, (const char *const *)r->required, &s) ||
            !s ||
            (s->status != TND_SKILL_FAIL && s->status != TND_SKILL_TIMEOUT))
            goto out;
        tnd_loop_say(r,
                     "[%d/%d] reviewer: no critique (%s); required skill %s "
                     "did not pass, which decides",
                     a->n, r->gate.max_iterations, tnd_error_last(), s->name);
        free(a->audit.critique_error);
        a->audit.critique_error = tnd_xasprintf(
            "the critique could not be had: %s", tnd_error_last());
        rc = 0;
        goto journal;
    }
    if (quorum == 1) {
        tnd_critique_destroy(&a->audit.critique);
        free(a->audit.critique_error);
        a->audit.critique = members[0].critique;
        a->audit.critique_error = members[0].critique_error;
        members[0].critique = NULL;
        members[0].critique_error = NULL;
        tnd_usage_add(&a->audit.usage, &members[0].usage);
    } else {
        tnd_usage usage = a->audit.usage;
        tnd_review_merge(&a->audit, members, (size_t)quorum,
                         r->cfg->reviewer.quorum == TND_QUORUM_MAJORITY);
        tnd_usage_add(&a->audit.usage, &usage);
    }
    if (quorum > 1)
        say_members(r, a->n, members, quorum);
    r->critique_tokens =
        a->audit.usage.prompt_tokens + a->audit.usage.completion_tokens;
    tnd_report_critique(r->report, true, why, 0,
                        quorum > 1 ? members_json(members, quorum) : NULL);
journal:
    rc = journal_audit(r, a->n, &a->audit, asked, why);
out:
    for (int m = 0; members && m < quorum; m++)
        tnd_audit_reply_clear(&members[m]);
    free(members);
    return rc;
}

/* The audit in one request: the reviewer runs the skills and asks its
 * model (gate.critique always, one reviewer). */
static int audit_at_once(run *r, attempt *a)
{
    tnd_audit_request ar = audit_request(r, a, true);

    if (tnd_loop_with_content(r, &ar, a) < 0)
        return -1;
    tnd_loop_say(r, "[%d/%d] reviewer: auditing", a->n, r->gate.max_iterations);
    tnd_loop_phase(r, a->n, "auditing");
    return ask_reviewer(r, a, "reviewer", "audit", &ar, &a->audit);
}

int tnd_loop_audit(run *r, attempt *a)
{
    int quorum = tnd_config_quorum(r->cfg);
    bool phased = quorum > 1 || r->gate.critique != TND_CRITIQUE_ALWAYS;
    bool asked = true, replayed = false;
    char why[600] = "", risky[512];
    long at;
    int rc;

    a->in.risky =
        tnd_review_risky(risky, sizeof(risky), r->gate.risk_paths, a->diff);
    if (a->in.risky) {
        a->risky = tnd_xstrdup(a->in.risky);
        a->in.risky = a->risky;
    }
    tnd_loop_count_paid(r, a->n, TND_ROLE_REVIEWER);
    if ((at = tnd_loop_find(r, "audit", a->n, 0)) >= 0) {
        /* decided before a crash: the journal has the merged reply */
        size_t len = 0;
        char *reply = tnd_loop_journaled_reply(r, "audit", a->n, &len);
        journaled_round(tnd_journal_record(r->journal, (size_t)at), &asked, why,
                        sizeof(why));
        replayed = true;
        rc = reply ? tnd_audit_reply_decode(&a->audit, reply, len) : -1;
        free(reply);
        if (rc == 0 && phased)
            tnd_report_critique(r->report, asked, why,
                                asked ? 0 : tokens_saved(r, a, &a->audit),
                                NULL);
        if (rc == 0 && phased && asked)
            r->critique_tokens =
                a->audit.usage.prompt_tokens + a->audit.usage.completion_tokens;
        a->in.critique_skipped = !asked;
    } else {
        rc = phased ? audit_in_phases(r, a, quorum) : audit_at_once(r, a);
    }
    if (rc < 0)
        return rc;
    tnd_loop_keep_real_places(r, &a->audit);
    a->audited = true;
    tnd_report_usage(r->report, TND_ROLE_REVIEWER, &a->audit.usage);
    a->in.audit = &a->audit;
    if (a->audit.critique)
        r->last_confidence = a->audit.critique->confidence;
    describe_audit(r, a->n, &a->audit, replayed, a->in.critique_skipped);
    return 0;
}
