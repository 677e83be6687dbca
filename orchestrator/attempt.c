/* The attempts of the gate loop (see loop.h): check the budget, ask the
 * coder for a proposal (or take it from the journal), apply it, have it
 * audited, let the gate decide, and revise, approve or ask a person; and
 * the lessons a task takes from earlier ones and leaves for later ones. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/log.h"
#include "common/str.h"
#include "common/xalloc.h"
#include "agents/llm.h"
#include "orchestrator/context.h"
#include "orchestrator/feedback.h"
#include "orchestrator/findings.h"
#include "orchestrator/gate.h"
#include "orchestrator/gitapply.h"
#include "orchestrator/lessons.h"
#include "orchestrator/loop.h"
#include "orchestrator/report.h"
#include "orchestrator/session.h"
#include "orchestrator/snapshot.h"
#include "orchestrator/workspace.h"
#include "proto/audit.h"
#include "proto/body.h"
#include "proto/code.h"
#include "proto/json.h"
#include "proto/mdp.h"
#include "skills/excerpt.h"

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

/* Why a coder may not make edit e, or NULL. Its text may not hold a
 * secret (a key's value): the diff would write the key into the
 * repository, and every file tandem writes masks it, so final.diff and
 * what --apply put in the tree were not the change the gate audited (a
 * key "double" made the approved "(double)sum" into "(******)sum"). Nor
 * may it touch tandem's own files: the config, which a later run takes
 * (one that made a skill `sandbox: none` ran the model's command outside
 * the sandbox), or a cassette. Caller frees. */
static char *refused(const run *r, const tnd_edit *e)
{
    const char *what;

    for (size_t i = 0; r->hidden[i]; i++)
        if (strcmp(e->path, r->hidden[i]) == 0)
            return tnd_xasprintf(
                "the edits change %s, which is tandem's own (its "
                "configuration or a recorded answer): a coder may not change "
                "how its work is run or audited. Leave it as it is",
                e->path);
    if ((what = tnd_llm_secret_in(r->cfg, e->path)) ||
        (what = tnd_llm_secret_in(r->cfg, e->search)) ||
        (what = tnd_llm_secret_in(r->cfg, e->replace)))
        return tnd_xasprintf(
            "the edits hold the value of %s, a secret: a key must never go "
            "into the repository, and tandem keeps it out of every file it "
            "writes. Make the change without it (read the key from the "
            "environment at run time)",
            what);
    return NULL;
}

/* A coder's reply with an edit it may not make (refused) becomes one
 * with that format error and no edits, before it is journaled, so a
 * resume replays what was decided. Returns reply, or the new one; when
 * reply stands as it came, its decode goes to *kept (*decoded true), so
 * it is not decoded again after it is journaled. *parsed is reply parsed
 * (the crew's), decoded rather than the text; put (NULL) when the reply
 * is replaced. */
static char *screen_proposal(const run *r, char *reply, size_t *len,
                             json_object **parsed, tnd_code_reply *kept,
                             bool *decoded)
{
    tnd_code_reply cr;
    char *why = NULL, *out;

    *decoded = false;
    if ((*parsed ? tnd_code_reply_from_json(&cr, *parsed)
                 : tnd_code_reply_decode(&cr, reply, *len)) < 0) {
        tnd_code_reply_clear(&cr);
        return reply; /* its decode says why, where it is taken */
    }
    for (size_t i = 0; i < cr.nedits && !why; i++)
        why = refused(r, &cr.edits[i]);
    if (!why) {
        *kept = cr;
        *decoded = true;
        return reply;
    }
    tnd_edit_list_free(cr.edits, cr.nedits);
    cr.edits = NULL;
    cr.nedits = 0;
    free(cr.format_error);
    cr.format_error = why;
    out = tnd_code_reply_encode(&cr, len);
    tnd_code_reply_clear(&cr);
    free(reply);
    json_object_put(*parsed);
    *parsed = NULL;
    return out;
}

static int propose(run *r, attempt *a, const loop_state *ls)
{
    char key[160];
    char *body, *reply;
    size_t len, reply_len = 0;
    int rc = 0;
    tnd_code_reply kept;
    bool decoded = false;
    json_object *parsed = NULL;

    a->req.task_id = (char *)tnd_session_id(r->session);
    a->req.attempt = a->n;
    a->req.task = (char *)r->opts.task;
    a->req.feedback = ls->feedback;
    a->req.lessons = r->lessons; /* borrowed: attempt_clear leaves them */
    a->req.nlessons = r->nlessons;
    tnd_loop_count_paid(r, a->n, TND_ROLE_CODER);
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
        if ((rc = tnd_loop_journal_reply(r, "proposal", a->n, reply, reply_len,
                                         NULL)) < 0) {
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
            .map_max = (size_t)r->cfg->coder.map_max_tokens * 4,
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
            "%zu left out, ~%zu tokens asked)",
            a->n, r->gate.max_iterations, st.files, st.files == 1 ? "" : "s",
            st.left_out, len / 4);
        if (st.named_out > st.named_over)
            tnd_loop_say(r,
                         "[%d/%d] coder: not sent, though named: %s; the "
                         "named files need agents.coder.context_max_kb: "
                         "%zu or more (it is %zu)",
                         a->n, r->gate.max_iterations, st.named,
                         (st.named_need + 1023) / 1024, co.budget / 1024);
        else if (st.named_out)
            /* no budget would hold them: a file goes whole or not at
             * all, and one request holds at most 16 MiB */
            tnd_loop_say(r,
                         "[%d/%d] coder: not sent, though named: %s; a file "
                         "sent to the coder may be at most %d KiB (as "
                         "UTF-8), and the request %d MiB; the map lists "
                         "them",
                         a->n, r->gate.max_iterations, st.named,
                         TND_BODY_MAX_FILE / 1024, TND_MDP_MAX_BODY >> 20);
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
        rc = tnd_loop_ask_model(r, a->n, "proposal", "coder", key, body, len,
                                &reply, &reply_len, &parsed);
        free(body);
        if (rc == 0)
            reply =
                screen_proposal(r, reply, &reply_len, &parsed, &kept, &decoded);
        /* the journal takes parsed */
        if (rc == 0 && (rc = tnd_loop_journal_reply(r, "proposal", a->n, reply,
                                                    reply_len, parsed)) < 0)
            free(reply);
        if (rc < 0) {
            if (decoded)
                tnd_code_reply_clear(&kept);
            return rc;
        }
    }
    if (decoded) { /* the text journaled is the one screen_proposal read */
        a->reply = kept;
        rc = 0;
    } else {
        rc = tnd_code_reply_decode(&a->reply, reply, reply_len);
    }
    if (rc == 0)
        tnd_report_usage(r->report, TND_ROLE_CODER, &a->reply.usage);
    free(reply);
    return rc;
}

int tnd_loop_apply(run *r, const tnd_code_reply *reply)
{
    return tnd_workspace_apply_exec(r->ws, reply->edits, reply->nedits,
                                    r->opts.review ? r->modes : NULL,
                                    r->opts.review ? r->nmodes : 0);
}

/* A patch under review (--diff) is what git apply makes of it: the tree
 * the review made from tandem's reading must be that one (gitapply.h).
 * 0 when it is; 1 when it is not, *error saying why (caller frees), the
 * attempt's apply error; -1 when it cannot be told (git missing, the
 * disk), error set: the review could not be done (it went on with
 * tandem's reading, and a patch git reads otherwise was approved) */
static int not_gits(run *r, char **error)
{
    const char **paths = tnd_xcalloc(r->nedits + r->nmodes + 1, sizeof(*paths));
    char *why = NULL;
    size_t n = 0;
    int rc;

    *error = NULL;
    for (size_t i = 0; i < r->nedits; i++)
        paths[n++] = r->edits[i].path;
    for (size_t i = 0; i < r->nmodes; i++)
        paths[n++] = r->modes[i].path;
    rc =
        tnd_gitapply_same(r->change.diff, strlen(r->change.diff),
                          tnd_snapshot_path(r->base), tnd_workspace_path(r->ws),
                          paths, tnd_crew_runtime(r->crew), r->repo, &why);
    if (rc < 0)
        tnd_error_prefix("cannot check the patch against git apply, which "
                         "makes the tree an approval lets through");
    else if (rc > 0)
        *error = tnd_xasprintf(
            "git apply does not make of this patch the tree tandem reviewed "
            "(%s): an approval would let through a change no one audited. "
            "Make the patch with git diff, or apply it and review the git "
            "changes (tandem review without --diff)",
            why);
    free(why);
    free(paths);
    return rc;
}

static int apply(run *r, attempt *a)
{
    tnd_gate_input *in = &a->in;
    const char *secret;
    char name[64];
    uint64_t h = 0;
    int checked;

    tnd_loop_phase(r, a->n, "applying");
    if (a->reply.format_error) {
        in->format_error = a->reply.format_error;
    } else if (tnd_loop_apply(r, &a->reply) < 0 ||
               !(a->diff = tnd_workspace_diff(r->ws))) {
        a->apply_error = tnd_xstrdup(tnd_error_last());
        in->apply_error = a->apply_error;
    } else if (!*a->diff) {
        in->empty = true;
    } else if (r->opts.review && !r->change.rev &&
               (checked = not_gits(r, &a->apply_error)) != 0) {
        if (checked < 0)
            return -1;
        in->apply_error = a->apply_error;
        free(a->diff);
        a->diff = NULL;
    } else if ((secret = tnd_llm_secret_in(r->cfg, a->diff))) {
        /* the edits hold no key (screen_proposal), but the lines the
         * diff keeps around them do: written masked, final.diff would
         * not be this diff (and --apply failed on it) */
        a->apply_error = tnd_xasprintf(
            "the diff of this change holds the value of %s, a secret, in "
            "lines of the repository it keeps as context: tandem keeps a "
            "secret out of every file it writes, so this diff cannot be "
            "kept as it would be audited. A key must not be a word of the "
            "code: use another key",
            secret);
        in->apply_error = a->apply_error;
        free(a->diff);
        a->diff = NULL;
    }
    snprintf(name, sizeof(name), "attempt-%d.diff", a->n);
    /* before it is said and counted: an answer that ends the session may
     * take the attempt as the session holds it */
    if (tnd_loop_as_audited(r, a, name) < 0)
        return -1;
    if (in->format_error || in->apply_error)
        tnd_loop_say(r, "[%d/%d] %s: %s", a->n, r->gate.max_iterations,
                     r->opts.review ? "change" : "coder",
                     in->format_error ? "no usable edits"
                                      : "the edits do not apply");
    else if (r->opts.review && r->nmodes > 0)
        tnd_loop_say(r,
                     "[%d/%d] change: %zu hunk%s and file%s applied, and the "
                     "mode%s of %zu file%s",
                     a->n, r->gate.max_iterations, a->reply.nedits,
                     a->reply.nedits == 1 ? "" : "s",
                     a->reply.nedits == 1 ? "" : "s", r->nmodes == 1 ? "" : "s",
                     r->nmodes, r->nmodes == 1 ? "" : "s");
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
        r->last_n = a->n;
        free(r->last_rationale);
        r->last_rationale = tnd_xstrdup(a->reply.rationale);
    }
    TND_GROW(r->hashes, r->ahashes, r->nhashes + 1);
    r->hashes[r->nhashes++] = h;
    if (!a->as_journaled &&
        tnd_session_write(r->session, name, a->diff ? a->diff : "",
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
    tnd_report_approved(r->report, diff);
    if (!r->opts.review && !r->opts.json)
        tnd_loop_put(r, r->out, "the approved diff", diff, false);
    return 0;
}

/* ---- a person --------------------------------------------------------- */

/* ---- the loop ----------------------------------------------------------- */

/* The decision journaled for attempt a replayed as it was made: a config
 * edited before a resume (gate.max_iterations raised to say "go on") made
 * the gate decide otherwise, and the person's reject of the escalation
 * journaled after it went unused; the session ended approved. */
static void as_journaled(run *r, attempt *a, long at)
{
    json_object *rec = tnd_journal_record(r->journal, (size_t)at);
    const char *action = tnd_json_str_or(rec, "action", ""),
               *reason = tnd_json_str_or(rec, "reason", NULL);
    tnd_gate_action was;

    if (strcmp(action, "approve") == 0)
        was = TND_GATE_APPROVE;
    else if (strcmp(action, "revise") == 0)
        was = TND_GATE_REVISE;
    else if (strcmp(action, "escalate") == 0)
        was = TND_GATE_ESCALATE;
    else
        return; /* a journal of another tandem: decided anew */
    if (was != a->decision.action)
        tnd_log_warn("the gate would now %s attempt %d (%s), but the "
                     "session decided to %s it (%s): the configuration "
                     "changed since, and a session goes on as it was "
                     "decided",
                     tnd_gate_action_name(a->decision.action), a->n,
                     a->decision.reason, action, reason ? reason : "");
    a->decision.action = was;
    a->decision.passed = tnd_json_bool_or(rec, "passed", a->decision.passed);
    if (reason)
        snprintf(a->decision.reason, sizeof(a->decision.reason), "%s", reason);
}

/* The gate's decision for attempt a, journaled once, and replayed as
 * journaled. */
static int decide(run *r, attempt *a, loop_state *ls)
{
    uint64_t sig = tnd_gate_signature(&a->in);
    long at = tnd_loop_find(r, "decision", a->n, 0);
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
    if (at >= 0)
        as_journaled(r, a, at);
    tnd_report_attempt(r->report, a->n, &a->reply, &a->in, &a->decision,
                       a->diff_rel, sig);
    if (r->findings)
        tnd_findings_add_attempt(r->findings, &a->in, &a->decision);
    tnd_loop_say(r, "[%d/%d] %s: %s", a->n, r->gate.max_iterations,
                 r->opts.review && !a->decision.passed
                     ? "reject"
                     : tnd_gate_action_name(a->decision.action),
                 a->decision.reason);
    free(r->last_rel);
    r->last_rel = tnd_xstrdup(a->diff_rel);
    if (at < 0) {
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

/* The lessons a session's first run chose, from its `lessons` record
 * (those forgotten since left out), into *found (caller frees). */
static void journaled_lessons(const tnd_lesson ***found, size_t *n, run *r,
                              json_object *rec)
{
    json_object *ids = NULL;
    size_t count = 0;

    json_object_object_get_ex(rec, "ids", &ids);
    if (json_object_is_type(ids, json_type_array))
        count = json_object_array_length(ids);
    *found = tnd_xcalloc(count + 1, sizeof(**found));
    *n = 0;
    for (size_t i = 0; i < count; i++) {
        const char *id =
            json_object_get_string(json_object_array_get_idx(ids, i));
        const tnd_lesson *l = NULL;
        if (id && tnd_lessons_find(&l, r->bank, id) == 0 &&
            strcmp(l->id, id) == 0)
            (*found)[(*n)++] = l;
    }
    tnd_error_clear();
}

/* The lessons earlier tasks of this kind left, for every attempt. */
void tnd_loop_recall(run *r)
{
    const tnd_lesson **found = NULL;
    long at = tnd_loop_find(r, "lessons", 0, 0);
    size_t n = 0;

    if (r->opts.review)
        return; /* no coder: nothing to tell, nothing to credit */
    if (!(r->bank = tnd_lessons_open(r->repo))) {
        tnd_log_warn("lessons are not used: %s", tnd_error_last());
        return;
    }
    if (at >= 0) {
        journaled_lessons(&found, &n, r,
                          tnd_journal_record(r->journal, (size_t)at));
    } else if (tnd_loop_find(r, "task", 0, 0) >= 0 &&
               tnd_loop_find(r, "workspace", 0, 0) >= 0) {
        /* a session from before lessons were journaled: its coder's
         * lessons are not known, so none (and none credited) */
        found = tnd_xcalloc(1, sizeof(*found));
    } else {
        json_object *step, *ids = json_object_new_array();
        if (tnd_lessons_relevant(&found, &n, r->bank,
                                 tnd_lessons_task_type(r->opts.task), NULL,
                                 0) < 0) {
            tnd_log_warn("lessons are not used: %s", tnd_error_last());
            json_object_put(ids);
            return;
        }
        for (size_t i = 0; i < n; i++)
            json_object_array_add(ids, json_object_new_string(found[i]->id));
        step = json_object_new_object();
        json_object_object_add(step, "ids", ids);
        if (tnd_loop_step(r, "lessons", step) < 0) {
            tnd_log_warn("lessons are not used: %s", tnd_error_last());
            free(found);
            return;
        }
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
void tnd_loop_remember(run *r)
{
    if (!r->bank)
        return;
    if (r->finished_now && r->status != TND_SESSION_FAILED &&
        r->status != TND_SESSION_INTERRUPTED && !r->waiting && r->lesson_ids)
        tnd_lessons_applied(r->bank, (const char *const *)r->lesson_ids,
                            r->status == TND_SESSION_APPROVED);
    if (tnd_lessons_save(r->bank) < 0)
        tnd_log_warn("cannot save the lessons: %s", tnd_error_last());
}

/* A review the gate does not pass: rejected, and what a coder would
 * have been told goes to stdout, for the change's author. */
static int reject_change(run *r, attempt *a)
{
    char *findings = tnd_feedback_build(&a->in, &a->decision, NULL, NULL);

    tnd_loop_stop(r, TND_SESSION_REJECTED, a->decision.reason);
    /* skills' output is in it: no escape codes on the author's terminal
     * (a review found them passed through), and no key a model echoed */
    free(r->findings_text);
    r->findings_text = tnd_log_printable(findings, strlen(findings) + 1);
    if (!r->opts.json && !r->findings)
        tnd_loop_put(r, r->out, "the findings", r->findings_text, false);
    free(findings);
    return 0;
}

/* One attempt. 1: go on; 0: the loop ends (r->status says how); -1. */
static int one_attempt(run *r, attempt *a, loop_state *ls)
{
    tnd_answer ans;
    int rc;

    if ((rc = tnd_loop_check_budget(r, a->n, "start", NULL, ls)) <= 0)
        return rc;
    if ((rc = propose(r, a, ls)) < 0 || (rc = apply(r, a)) < 0)
        return rc == TND_ETIMEOUT ? tnd_loop_budget_ran_out(r, a->n, "start")
                                  : rc;
    a->in.attempt = a->n;
    a->in.required = (const char *const *)r->required;
    a->in.baseline = r->has_baseline ? &r->baseline : NULL;
    /* taken as the session holds it, the attempt was audited when the
     * journal says so (its diff was made on other files) */
    if (a->as_journaled ? tnd_loop_audit_journaled(r, a->n)
                        : !a->in.format_error && !a->in.apply_error &&
                              !a->in.empty && !a->in.repeats) {
        if (!r->status &&
            (rc = tnd_loop_check_budget(r, a->n, "audit", a, ls)) <= 0)
            return rc;
        if ((rc = tnd_loop_audit(r, a)) < 0)
            return rc == TND_ETIMEOUT
                       ? tnd_loop_budget_ran_out(r, a->n, "audit")
                       : rc;
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

int tnd_loop_attempts(run *r)
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
