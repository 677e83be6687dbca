/* The run's side of paid.h (see loop.h): a request that may ask a model
 * is journaled as `asked` before it goes out and, when it was not simply
 * answered, as `unanswered` after; each stage of an attempt counts what
 * earlier runs of the session left of them. So the report counts every
 * call paid, a resumed run's as much as an uninterrupted one's, and it
 * counts them where the first run did, so a budget checked on the way
 * sees the same totals on replay. */
#include <string.h>

#include "common/error.h"
#include "orchestrator/budget.h"
#include "orchestrator/loop.h"
#include "orchestrator/paid.h"

int tnd_loop_asked(run *r, int n, const char *step, const char *service)
{
    /* not fsync'd: lost in a power cut, it loses a count, not a step */
    if (tnd_journal_note(r->journal, "asked",
                         tnd_paid_asked_json(n, step, service)) < 0)
        return -1;
    tnd_events_publish(
        r->events, tnd_session_id(r->session),
        tnd_journal_record(r->journal, tnd_journal_count(r->journal) - 1));
    return 0;
}

int tnd_loop_unanswered(run *r, int n, const char *step,
                        const tnd_crew_request *q)
{
    /* the one answer that came is its reply's to count */
    long calls = q->sent - (q->rc == 0 ? 1 : 0);
    tnd_role role = tnd_paid_role(q->service);
    tnd_usage known;
    /* the crew checked the reply, so its type is known: only an error
     * is parsed again, for the usage it says */
    bool error = q->rc == 0 && strcmp(q->reply_type, "error") == 0 &&
                 tnd_paid_error_usage(&known, q->reply, q->reply_len);

    if (!error)
        memset(&known, 0, sizeof(known));
    if (calls < 0)
        calls = 0;
    if (q->rc == 0 && calls == 0 && !error)
        return 0; /* answered at the first go: its reply closes `asked` */
    tnd_report_unanswered(r->report, role, calls);
    tnd_report_usage(r->report, role, &known);
    return tnd_loop_step(
        r, "unanswered",
        tnd_paid_unanswered_json(n, step, q->service, calls, &known));
}

void tnd_loop_count_paid(run *r, int n, tnd_role role)
{
    tnd_paid p;

    tnd_paid_count(&p, r->journal, n, role);
    tnd_report_unanswered(r->report, role, p.unanswered);
    tnd_report_usage(r->report, role, &p.known);
}

int tnd_loop_ask_model(run *r, int n, const char *step, const char *service,
                       const char *key, const char *body, size_t len,
                       char **reply, size_t *reply_len, json_object **parsed)
{
    tnd_crew_request q = {
        .service = service, .key = key, .body = body, .len = len};
    bool by_budget;
    int64_t deadline;
    int rc;

    *reply = NULL;
    *reply_len = 0;
    if (parsed)
        *parsed = NULL;
    if (tnd_loop_asked(r, n, step, service) < 0)
        return -1;
    deadline = tnd_loop_deadline(r, service, &by_budget);
    tnd_loop_progress_start(r, service);
    rc = tnd_crew_call_many(r->crew, &q, 1, deadline, tnd_loop_on_progress, r);
    tnd_loop_end_progress(r);
    if (tnd_loop_unanswered(r, n, step, &q) < 0)
        rc = -1;
    else if (rc == TND_ETIMEOUT && !by_budget)
        rc = tnd_error_set("no reply from the %s within %ld s (%s)", service,
                           tnd_budget_request_s(r->cfg, service),
                           tnd_loop_timeout_source(r));
    else if (rc != 0)
        tnd_error_set("%s", q.error ? q.error : "the request failed");
    if (rc == 0) {
        *reply = q.reply;
        *reply_len = q.reply_len;
        q.reply = NULL;
        if (parsed) {
            *parsed = q.parsed;
            q.parsed = NULL;
        }
    }
    memcpy(r->reply_type, q.reply_type, sizeof(r->reply_type));
    tnd_crew_request_clear(&q);
    return rc;
}
