/* A person's answer to a session tandem serve holds that waits (see
 * hub_int.h): checked against the session's journal, read from its own
 * directory, before the session goes on with it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/error.h"
#include "common/log.h"
#include "common/str.h"
#include "common/xalloc.h"
#include "orchestrator/hub_int.h"
#include "orchestrator/run.h"
#include "orchestrator/session.h"
#include "proto/client.h"
#include "proto/curve.h"
#include "proto/json.h"

/* An answer as the accepted list keeps it. */
static json_object *answer_json(const tnd_client_request *req, long escalation)
{
    json_object *o = json_object_new_object();

    json_object_object_add(o, "escalation", json_object_new_int64(escalation));
    json_object_object_add(o, "answer", json_object_new_string(req->answer));
    if (req->text)
        json_object_object_add(o, "text", json_object_new_string(req->text));
    json_object_object_add(o, "iterations",
                           json_object_new_int64(req->iterations));
    json_object_object_add(o, "tokens", json_object_new_int64(req->tokens));
    if (req->calls)
        json_object_object_add(o, "calls", json_object_new_int64(req->calls));
    return o;
}

/* The kind of the answer named `name`, one a server takes; -1 with the
 * error set (naming only those) when it is not. */
static int server_answer_kind(tnd_answer_kind *kind, const char *name)
{
    if (tnd_answer_kind_parse(kind, name) < 0)
        return tnd_error_set("unknown answer '%s'; a server takes approve, "
                             "reject, guide or budget",
                             name);
    if (*kind > TND_ANSWER_BUDGET)
        return tnd_error_set("'%s' is an answer at the terminal only; a "
                             "server takes approve, reject, guide or budget",
                             tnd_answer_name(*kind));
    return 0;
}

/* s goes on with the answer ans (as answer_json makes it); -1 with the
 * error set when it names no answer a person may give. */
int tnd_hub_set_answer(tnd_hubsession *s, json_object *ans)
{
    tnd_answer a = {0};

    if (server_answer_kind(&a.kind, tnd_json_str_or(ans, "answer", "none")) < 0)
        return -1;
    a.text = (char *)tnd_json_str_or(ans, "text", NULL);
    a.iterations = (int)tnd_json_int_or(ans, "iterations", 0);
    a.tokens = tnd_json_int_or(ans, "tokens", 0);
    a.calls = tnd_json_int_or(ans, "calls", 0);
    tnd_hubsession_set_answer(s, &a, tnd_json_int_or(ans, "escalation", 0));
    return 0;
}

/* Whether the answer is whole (text to reject or guide with, a budget
 * that grants something, a proposal to approve, ...), checked as the
 * session would, before the server keeps it: a guide with no text was
 * accepted, the session went on, and only then ended with exit 2 and a
 * command line's advice. -1 with the error set. */
static int answer_whole(tnd_hub *h, const tnd_client_request *req,
                        const char *repo, const tnd_session_facts *f)
{
    tnd_continue_options o;
    int rc;

    memset(&o, 0, sizeof(o));
    o.session = f->id;
    o.escalation = f->escalation;
    o.text = req->text;
    o.iterations = (int)req->iterations;
    o.tokens = req->tokens;
    o.calls = req->calls;
    /* server_answer_kind took it: one of approve, reject, guide, budget */
    if (tnd_answer_kind_parse(&o.answer, req->answer) < 0)
        return -1;
    rc = tnd_run_answer_check(repo, &o, &h->o->config->gate);
    return rc == TND_ECONFIG ? -1 : 0; /* unreadable: the session says so */
}

/* f, the facts of a session read by its path in repo, read again from
 * its directory as open_session opens it. -1 with *kind and the error
 * set. */
static int facts_again(tnd_session_facts *f, const char *repo,
                       const char **kind)
{
    char *id = tnd_xstrdup(f->id);
    int dir = tnd_hub_open_session(repo, id), rc;

    tnd_session_facts_clear(f);
    *kind = dir == TND_ENOTFOUND ? "not_found" : "forbidden";
    rc = dir < 0 ? -1 : tnd_run_facts_at(f, dir, repo, id);
    if (dir >= 0)
        close(dir);
    free(id);
    return rc;
}

/* Whether the server may answer the session in repo (the path
 * tnd_hub_check_repo checked): one it ran, with its config, that waits
 * for a person and that it does not hold now. -1 with *kind and the
 * error set. */
static int check_answerable(tnd_hub *h, const tnd_client_request *req,
                            const char *repo, tnd_session_facts *f,
                            const char **kind)
{
    *kind = "not_found";
    if (tnd_run_facts(f, repo, req->session) < 0)
        return -1;
    /* what it says read again, from its directory as open_session opens
     * it: the repository's owner could have led the path to another
     * repository's session */
    if (facts_again(f, repo, kind) < 0)
        return -1;
    /* not waiting: a usage error, as without a server (it was "busy",
     * exit 75, and a script that retried on it sent the losing answer of
     * two people again) */
    *kind = "config";
    if (tnd_hub_by_id(h, f->id))
        return tnd_error_set("session %s is %s in this server, not waiting "
                             "for an answer",
                             f->id,
                             tnd_hubsession_state_of(tnd_hub_by_id(h, f->id)) ==
                                     TND_HS_RUNNING
                                 ? "running"
                                 : "queued");
    *kind = "config";
    if (f->status != TND_SESSION_WAITING)
        return tnd_error_set("session %s is not waiting for an answer (%s)",
                             f->id, tnd_session_status_name(f->status));
    if (tnd_run_same_question(f->id, req->escalation, f->escalation) < 0)
        return -1;
    /* a session made with no config ran with the built-in defaults: the
     * server's agents are the same only when it has none either (no
     * config means "the server's" for a submit, not for an answer; a
     * review found one so answered with agents it never ran with). Not
     * this server's to run: the answering command goes on with it itself
     * ("elsewhere"; it said to start a second server, which cannot) */
    *kind = "elsewhere";
    if (!f->config && h->o->config->path)
        return tnd_error_set("session %s ran with the built-in defaults; "
                             "this server's agents run with %s (answer it "
                             "with no server running, or from a tandem serve "
                             "started without --config)",
                             f->id, h->o->config->path);
    if (tnd_hub_check_config(h, f->config) < 0) {
        tnd_error_prefix("session %s", f->id);
        return -1;
    }
    *kind = "config"; /* a usage error, as without a server */
    return answer_whole(h, req, repo, f);
}

void tnd_hub_on_answer(tnd_hub *h, const tnd_broker_event *ev,
                       const tnd_client_request *req)
{
    tnd_session_facts f;
    tnd_hubsession *s;
    json_object *ans = NULL;
    const char *kind = "bad_request";
    tnd_answer_kind answer_kind;
    size_t len;
    char *body, *repo = NULL;

    memset(&f, 0, sizeof(f));
    if (h->draining) {
        tnd_hub_refuse(
            h, ev, "stopping",
            "tandem serve is stopping and takes no answer; answer again "
            "when it runs");
    } else if (server_answer_kind(&answer_kind, req->answer) < 0) {
        /* a request no server takes, whatever session it names */
        tnd_hub_refuse(h, ev, "bad_request", tnd_error_last());
    } else if (!(repo = tnd_hub_check_repo(req->repo, &kind)) ||
               check_answerable(h, req, repo, &f, &kind) < 0) {
        tnd_hub_refuse(h, ev, kind, tnd_error_last());
        tnd_session_facts_clear(&f);
    } else if ((long)h->n >= h->o->max_sessions + h->o->queue_max) {
        body = tnd_client_busy(h->o->max_sessions, h->o->queue_max, &len);
        tnd_hub_answer(h, ev, true, body, len);
        tnd_session_facts_clear(&f);
    } else {
        /* the escalation it answers, as the server found it waiting;
         * the session held from now on, so no resume or prune takes it
         * while it waits for a slot */
        int lock = tnd_session_lock_dir(f.dir);
        ans = answer_json(req, f.escalation);
        if (lock < 0) { /* another tandem holds it: exit 2, as without us */
            tnd_hub_refuse(h, ev, "config", tnd_error_last());
            tnd_session_facts_clear(&f);
            json_object_put(ans);
            free(repo);
            return;
        }
        s = tnd_hub_add(h, repo, f.id, f.dir, f.owner);
        tnd_hubsession_hold_lock(s, lock);
        /* the session goes on with the answer of who sent this request */
        tnd_hubsession_set_who(s, &ev->who);
        if (tnd_hub_set_answer(s, ans) < 0) {
            tnd_hub_refuse(h, ev, "bad_request", tnd_error_last());
            tnd_hub_forget(h, s);
        } else if (tnd_accepted_add(h->accepted, repo, f.id, ans, &ev->who) <
                   0) {
            tnd_hub_refuse(h, ev, "failed", tnd_error_last());
            tnd_hub_forget(h, s);
        } else {
            fprintf(stderr, "tandem serve: session %s goes on with %s\n", f.id,
                    req->answer);
            body =
                tnd_client_accepted(f.id, f.dir, tnd_hub_ahead_of(h, s), &len);
            tnd_hubsession_follow(s, ev->client, ev->client_len, ev->service);
            tnd_hub_answer(h, ev, false, body, len);
            tnd_hub_start_queued(h);
        }
        tnd_session_facts_clear(&f);
    }
    json_object_put(ans);
    free(repo);
}
