/* The end of a run (see loop.h): the report written, the session's
 * `finish` journaled when it ended for good, an approved change put into
 * the tree when asked, the recording turned into a cassette, the lessons
 * saved, and the summary and exit code said; a run that stopped on its
 * way back to the question its session waits on ends nothing and leaves
 * the question's report. */
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agents/cassette.h"
#include "common/clock.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/log.h"
#include "common/str.h"
#include "common/xalloc.h"
#include "orchestrator/apply.h"
#include "orchestrator/findings.h"
#include "orchestrator/journal.h"
#include "orchestrator/loop.h"
#include "orchestrator/report.h"
#include "orchestrator/session.h"
#include "proto/json.h"

/* Whether the session has ended for good: no answer, resume or going on
 * will run it again. */
static bool ended(const run *r)
{
    return r->status != TND_SESSION_FAILED &&
           r->status != TND_SESSION_INTERRUPTED && !r->waiting;
}

/* Turn the agents' recording into the cassette --record asked for. The
 * recording stays while the session can go on, so that its next run adds
 * to it (a cassette of an answered session held only what came after the
 * answer, and its replay lacked the first attempts). */
static void save_recording(run *r)
{
    size_t count = 0, skipped = 0;
    char *comment;

    if (!r->record_partial || r->go_on) /* the run going on saves it */
        return;
    if (!ended(r) && tnd_fs_exists(r->opts.record)) {
        /* a run that failed at its first call (a server down, a bad key)
         * replaced a good cassette with one of no exchange */
        struct stat st;
        if (stat(r->record_partial, &st) < 0 || st.st_size == 0) {
            fprintf(r->err,
                    "tandem: %s is left as it was: this session did not "
                    "end, and recorded no answer\n",
                    r->opts.record);
            return;
        }
        fprintf(r->err,
                "tandem: %s is left as it was, since this session did not "
                "end; the answers recorded so far are in %s, and the run "
                "that ends the session (tandem resume --repo %s %s) writes "
                "%s\n",
                r->opts.record, r->record_partial, r->repo,
                tnd_session_id(r->session), r->opts.record);
        return;
    }
    comment =
        tnd_xasprintf("recorded by tandem %s: %s", TND_VERSION, r->opts.task);
    if (tnd_cassette_from_recording(r->record_partial, r->opts.record, comment,
                                    r->opts.task, &count, &skipped) < 0) {
        fprintf(r->err, "tandem: cannot write the recording: %s\n",
                tnd_error_last());
    } else {
        fprintf(r->err, "recorded %zu exchange%s in %s%s\n", count,
                count == 1 ? "" : "s", r->opts.record,
                skipped ? " (some lines were torn and left out)" : "");
        if (ended(r))
            unlink(r->record_partial);
    }
    free(comment);
}

/* review --format: the document of the findings as the session stands
 * (a review that could not be done says so in it), in
 * r->findings_text. */
static void render_findings(run *r)
{
    if (r->status == TND_SESSION_FAILED || r->status == TND_SESSION_INTERRUPTED)
        tnd_findings_not_done(r->findings, r->reason);
    /* a result without a file goes at the change's first file */
    tnd_findings_anchor(r->findings, r->nedits   ? r->edits[0].path
                                     : r->nmodes ? r->modes[0].path
                                                 : NULL);
    free(r->findings_text);
    r->findings_text = tnd_findings_render(r->findings, r->opts.format);
    /* a key a model echoed in an issue stays out of stdout (a CI log) */
    if (r->opts.format == TND_FINDINGS_SARIF ||
        r->opts.format == TND_FINDINGS_RDJSONL)
        tnd_log_redact_json(r->findings_text);
    else
        tnd_log_redact(r->findings_text);
}

void tnd_loop_emit(run *r, const char *report)
{
    if (r->opts.json) {
        tnd_loop_put(r, stdout, "the report", report, true);
        return;
    }
    if (!r->findings)
        return;
    if (!r->findings_text) /* a review that ended before its report */
        render_findings(r);
    tnd_loop_put(r, stdout, "the findings", r->findings_text, false);
}

/* A reason for the terminal: no terminal escape (it holds a model's or
 * a program's words), its lines joined by spaces (a '?' for each, as
 * names get, ran words together: "... agents.yaml?no change could
 * pass"). Caller frees. */
static char *reason_line(const char *raw)
{
    char *s = tnd_str_printable(raw, 4000);

    for (char *p = s; *p; p++)
        if (*p == '\n' || *p == '\t')
            *p = ' ';
    return s;
}

/* A review that could not be done: exit 4, or, under --on-error pass, 0
 * with a warning that the change went through unreviewed. */
int tnd_loop_not_reviewed(const run *r, const char *raw)
{
    char *why = raw ? reason_line(raw) : NULL;
    int code = TND_EXIT_NOT_REVIEWED;

    if (why)
        tnd_log_redact(why);

    if (r->opts.on_error == TND_ON_ERROR_PASS) {
        fprintf(r->err,
                "tandem review: warning: could not review the change (%s); "
                "--on-error pass lets it through unreviewed\n",
                why ? why : "no reason given");
        code = TND_EXIT_OK;
    } else {
        fprintf(r->err,
                "could not review: %s (exit %d; --on-error pass lets a change "
                "through when the review cannot be done)\n",
                why ? why : "no reason given", TND_EXIT_NOT_REVIEWED);
    }
    free(why);
    return code;
}

/* --apply, --commit: the approved change into the user's tree, only when
 * it applies cleanly to the tree as it is now (apply.h). 0 when done as
 * asked; 1 (exit 5) when not, the tree as it was, or applied but not
 * committed. Said on r->err and in the report. */
static int put_in_tree(run *r)
{
    char *file = tnd_fs_join(r->repo, r->final_rel), *diff = NULL, *msg;
    tnd_apply_result res;
    int rc;

    memset(&res, 0, sizeof(res));
    if (tnd_fs_read(&diff, NULL, file, TND_BODY_MAX_DIFF) < 0) {
        res.mode = r->opts.apply;
        res.why = tnd_xstrdup(tnd_error_last());
        rc = 1;
    } else {
        msg = tnd_apply_message(r->last_rationale, r->opts.task,
                                tnd_session_id(r->session));
        rc = tnd_apply_patch(&res, r->repo, diff, file, r->opts.apply, msg,
                             r->head);
        free(msg);
    }
    tnd_apply_say(r->err, "tandem", &res, rc, r->repo, file,
                  TND_EXIT_NOT_APPLIED);
    tnd_report_apply(r->report, tnd_apply_json(&res));
    tnd_apply_result_clear(&res);
    free(diff);
    free(file);
    return rc;
}

/* report.json with status and reason, written; its text (caller
 * frees). *lost is set when it could not be written (said on stderr). */
static char *write_report_as(run *r, const char *status, const char *reason,
                             bool *lost)
{
    char *text;
    json_object *kept = NULL, **slot = r->host ? r->host->report : NULL;

    tnd_report_outcome(r->report, status, reason, r->iterations, r->final_rel,
                       r->last_rel, tnd_now_ms() - r->started);
    tnd_report_findings(r->report, r->findings_text);
    text = tnd_report_json_kept(r->report, slot ? &kept : NULL);
    if (tnd_session_write(r->session, "report.json", text, strlen(text)) < 0) {
        tnd_log_error("cannot write the report: %s", tnd_error_last());
        *lost = true;
        json_object_put(kept); /* the file holds what it held */
        kept = NULL;
    }
    if (slot) { /* what the file holds now, or NULL: read it */
        json_object_put(*slot);
        *slot = kept;
    }
    return text;
}

/* report.json as the session stands now, written (write_report_as). */
static char *write_report(run *r, bool *lost)
{
    return write_report_as(r, tnd_session_status_name(r->status), r->reason,
                           lost);
}

/* The question the session waits on (its journal's last escalation), or
 * NULL when its journal says it does not wait. A run that failed or was
 * stopped before it came back to that question (an answer refused
 * because the files changed under an attempt it replays, a resume that
 * failed on the way, Ctrl-C during either) journaled no answer and ended
 * nothing: the session still waits for a person, whatever this run
 * says. The record is borrowed from the journal. */
static json_object *still_waits(const run *r)
{
    json_object *records = tnd_journal_records(r->journal);
    tnd_session_status st;
    long seq;

    if (r->status != TND_SESSION_FAILED && r->status != TND_SESSION_INTERRUPTED)
        return NULL;
    if (tnd_journal_status(&st, records) < 0) {
        tnd_error_clear();
        return NULL;
    }
    if (st != TND_SESSION_WAITING)
        return NULL;
    seq = tnd_journal_waiting_on(records);
    for (size_t i = tnd_journal_count(r->journal); i-- > 0;) {
        json_object *rec = tnd_journal_record(r->journal, i);
        if (tnd_json_int_or(rec, "seq", -1) == seq)
            return rec;
    }
    return NULL;
}

/* The report.json the question wrote, when it is there and says the
 * session waits (escalated); else NULL. Caller frees. */
static char *question_report(run *r)
{
    char *path = tnd_session_path(r->session, "report.json"), *text = NULL;
    json_object *o = NULL;
    size_t len = 0;
    bool kept;

    kept = tnd_fs_read(&text, &len, path, 64 << 20) == 0 &&
           tnd_json_parse(&o, text, len) == 0 &&
           tnd_str_eq(tnd_json_str_or(o, "status", NULL), "escalated");
    tnd_error_clear();
    json_object_put(o);
    free(path);
    if (!kept) {
        free(text);
        return NULL;
    }
    return text;
}

/* The end of a run that stopped before the question its session still
 * waits on (still_waits): the report stays the question's, since this
 * run's replay stopped part of the way and its status is no outcome of
 * the session (a refused answer rewrote it `failed`, and a pipeline,
 * `submit --attach` and `--json` were told the session failed while it
 * waited); written only when there is none (a full disk then), saying
 * escalated. No `finish`, no lessons credited. The person is told why
 * this run stopped, that the session still waits and how to answer. */
static int finish_waiting(run *r, json_object *question)
{
    const char *asked = tnd_json_str_or(question, "reason", NULL);
    const char *answers =
        r->opts.review ? "approve|reject" : "approve|reject|guide|budget";
    char *text = question_report(r), *reason, *why, *repo;
    bool lost = false; /* said on stderr; the journal has the last word */
    int code;

    if (!text)
        text = write_report_as(r, "escalated", asked, &lost);
    if (!r->go_on)
        tnd_loop_emit(r, text);
    free(text);
    save_recording(r);
    tnd_loop_remember(r);
    reason = reason_line(r->reason ? r->reason : "");
    why = reason_line(asked ? asked : "no reason journaled");
    repo = tnd_str_shell_word(r->repo);
    if (r->status == TND_SESSION_INTERRUPTED) {
        fprintf(r->err, "interrupted: %s\n", reason);
        code = TND_EXIT_SIGNAL + atomic_load(r->stop);
    } else if (r->opts.review && !r->config_error) {
        code = tnd_loop_not_reviewed(r, r->reason); /* as any review's */
    } else {
        fprintf(r->err, "tandem: %s\n", reason);
        code = r->config_error ? TND_EXIT_USAGE : TND_EXIT_FAILED;
    }
    if (r->host && r->status == TND_SESSION_INTERRUPTED) {
        /* a server stopping: the answer it took is in its accepted
         * list, and the next server goes on with it */
        fprintf(r->err,
                "the next tandem serve goes on with it (tandem submit "
                "--attach %s follows it then)\n",
                tnd_session_id(r->session));
    } else if (r->status == TND_SESSION_INTERRUPTED && !r->pending) {
        /* stopped at the question, or on the way back to it: a resume
         * asks it again */
        fprintf(r->err,
                "the session still waits for a person, on the question it "
                "asked (%s)\ngo on with: tandem resume --repo %s %s (or "
                "answer it: tandem %s %s)\n",
                why, repo, tnd_session_id(r->session), answers,
                tnd_session_id(r->session));
    } else {
        if (r->pending) /* said here, so resume.c need not */
            fprintf(r->err,
                    "tandem: your %s was not taken (nothing was journaled): ",
                    tnd_json_str_or(r->pending, "kind", "answer"));
        else
            fprintf(r->err, "tandem: ");
        fprintf(r->err,
                "session %s still waits for a person, on the question it "
                "asked (%s); answer it from %s with tandem %s %s\n",
                tnd_session_id(r->session), why, repo, answers,
                tnd_session_id(r->session));
    }
    if (r->host && r->pending)
        /* in the server's log too: an answer an earlier server took is
         * taken up with nobody following the session */
        tnd_log_warn("session %s: the %s it was given was not taken, and "
                     "it still waits for a person: %s",
                     tnd_session_id(r->session),
                     tnd_json_str_or(r->pending, "kind", "answer"), reason);
    json_object_put(r->pending);
    r->pending = NULL;
    fprintf(r->err, "session %s: %s/\n", tnd_session_id(r->session),
            tnd_session_dir(r->session));
    free(repo);
    free(why);
    free(reason);
    return code;
}

/* --apply, --commit: the report as it stands before the tree is touched,
 * the change's fate not known yet. `finish` is journaled before the
 * change goes in, so a kill there left an approved session with no
 * report.json, which no resume writes (it only says the session is
 * over), and nothing that said the change may not be in the tree. The
 * report written after put_in_tree replaces it. */
static void report_before_apply(run *r)
{
    tnd_apply_result res;
    bool lost = false;

    memset(&res, 0, sizeof(res));
    res.mode = r->opts.apply;
    res.why = tnd_xstrdup("not known: tandem stopped while it put the change "
                          "into the tree; see the tree (the approved patch "
                          "is in final.diff)");
    tnd_report_apply(r->report, tnd_apply_json(&res));
    tnd_apply_result_clear(&res);
    free(write_report(r, &lost)); /* the one after put_in_tree counts */
}

/* A session that ended for good says so in its journal; one waiting for
 * an answer, or stopped by a failure, can go on later. */
static void journal_finish(run *r)
{
    json_object *f;

    if (!ended(r))
        return;
    f = json_object_new_object();
    json_object_object_add(
        f, "status",
        json_object_new_string(tnd_session_status_name(r->status)));
    json_object_object_add(f, "reason", tnd_json_str_or_null(r->reason));
    if (tnd_loop_step(r, "finish", f) < 0)
        tnd_log_error("%s", tnd_error_last());
    else
        r->finished_now = true;
}

int tnd_loop_finish(run *r)
{
    char *text, *summary, *reason;
    int code, unapplied = 0;
    bool apply =
        r->status == TND_SESSION_APPROVED && r->opts.apply && r->final_rel;
    bool no_report = false;
    json_object *question = still_waits(r);

    if (question)
        return finish_waiting(r, question);
    /* Approved for good before the user's tree is touched: a kill while
     * the change goes in left an approved session unjournaled, whose
     * replay then met its own change in the tree (a review found it
     * stuck). final.diff is durable already; what --apply did is in the
     * report and on stderr. */
    if (apply) {
        report_before_apply(r);
        journal_finish(r);
        unapplied = put_in_tree(r);
    }
    if (r->findings) /* in the report too, for a client that comes back */
        render_findings(r);
    text = write_report(r, &no_report);
    if (!r->go_on)
        tnd_loop_emit(r, text);
    free(text);
    /* report.json is what CI reads: a session whose report could not be
     * written (a full disk) is not journaled as ended, so that a resume
     * writes it, replaying every step; once `finish` is journaled a
     * resume only says the session is over, and the report was never
     * made (while the run exited 0) */
    if (!apply && !no_report)
        journal_finish(r);
    save_recording(r);
    tnd_loop_remember(r);
    if (r->go_on) /* the session goes on here; its end says how it went */
        return TND_EXIT_HUMAN;
    /* review -q: an approved change says nothing (a pre-commit hook's
     * success is silent); anything else still says what happened. run -q
     * keeps its summary: what the diff on stdout cost */
    if (r->status == TND_SESSION_APPROVED && r->opts.quiet && r->opts.review &&
        !r->out_lost && !no_report)
        return TND_EXIT_OK;
    reason = reason_line(r->reason ? r->reason : "");
    summary = tnd_report_summary(r->report);
    fprintf(r->err, "%s\n", summary);
    free(summary);
    if (r->status == TND_SESSION_APPROVED) {
        code = unapplied ? TND_EXIT_NOT_APPLIED : TND_EXIT_OK;
    } else if (r->status == TND_SESSION_ESCALATED) {
        fprintf(r->err, "needs a human: %s\n", reason);
        if (r->last_rel)
            fprintf(r->err, "the last proposal is in %s/%s\n", r->repo,
                    r->last_rel);
        code = r->final_escalation ? TND_EXIT_FAILED : TND_EXIT_HUMAN;
    } else if (r->status == TND_SESSION_INTERRUPTED) {
        fprintf(r->err, "interrupted: %s\n", r->reason);
        if (r->host) /* a server's: its next start goes on with it */
            fprintf(r->err,
                    "the next tandem serve goes on with it (tandem submit "
                    "--attach %s follows it then)\n",
                    tnd_session_id(r->session));
        else {
            char *repo = tnd_str_shell_word(r->repo);
            fprintf(r->err, "go on with: tandem resume --repo %s %s\n", repo,
                    tnd_session_id(r->session));
            free(repo);
        }
        code = TND_EXIT_SIGNAL + atomic_load(r->stop);
    } else if (r->opts.review && r->status == TND_SESSION_FAILED &&
               !r->config_error) {
        code = tnd_loop_not_reviewed(r, r->reason);
    } else {
        fprintf(r->err, "%s: %s\n", tnd_session_status_name(r->status), reason);
        code = r->config_error ? TND_EXIT_USAGE : TND_EXIT_FAILED;
    }
    if (no_report && ended(r) && !apply) {
        char *repo = tnd_str_shell_word(r->repo);
        fprintf(r->err,
                "tandem: the session stays open without its report; go on "
                "with: tandem resume --repo %s %s%s\n",
                repo, tnd_session_id(r->session),
                code == TND_EXIT_OK ? " (exit 1)" : "");
        free(repo);
        code = code == TND_EXIT_OK ? TND_EXIT_FAILED : code;
    } else if (no_report && apply) {
        /* ended before the tree was touched: no resume writes it, and
         * CI reads it (a full disk exited 0 with none) */
        fprintf(r->err,
                "tandem: the session ended without its report.json; what "
                "--apply did is said above%s\n",
                code == TND_EXIT_OK ? " (exit 1)" : "");
        code = code == TND_EXIT_OK ? TND_EXIT_FAILED : code;
    }
    if (r->out_lost) {
        fprintf(r->err,
                "tandem: %s; the output was lost (the session "
                "keeps it)%s\n",
                r->out_lost, code == TND_EXIT_OK ? ", exit 1" : "");
        code = code == TND_EXIT_OK ? TND_EXIT_FAILED : code;
    }
    fprintf(r->err, "session %s: %s/\n", tnd_session_id(r->session),
            tnd_session_dir(r->session));
    free(reason);
    return code;
}
