/* Following a session of tandem serve for `tandem submit` (see
 * submit_int.h): the request sent, each reply to stderr or stdout, the
 * server's silence timed, and a server lost under the session waited
 * for until one takes the session up again. */
#include "orchestrator/submit_int.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

#include "common/clock.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/str.h"
#include "common/xalloc.h"
#include "orchestrator/journal.h"
#include "orchestrator/serve.h"
#include "orchestrator/submit.h"
#include "proto/json.h"
#include "proto/mdp.h"

#define FIRST_ANSWER_MS 10000 /* the server answers a request at once */
#define SILENCE_MS      15000 /* it says "alive" every 2 s while it works */
#define RETRY_MS        200   /* between two tries at a server coming back, */
#define RETRY_MAX_MS    2000  /* doubling up to this */

static atomic_int left;          /* a signal: leave, the task goes on */
static atomic_bool said_refused; /* to a status ask: the key was refused */

static void on_signal(int sig)
{
    atomic_store(&left, sig);
}

/* CURVE for the socket when the server wants it: its public key (from
 * --server-key, else serve.endpoint) and this client's pair (--key, else
 * $TANDEM_KEY). 0 when there is none to set; -1 said on stderr. */
static int setup_curve(tnd_submit_client *s)
{
    const char *key_file = s->key ? s->key : getenv("TANDEM_KEY");
    char server[TND_CURVE_Z85_LEN + 1];
    tnd_curve_pair pair;
    int rc = 0;

    if (s->server_key) {
        if (tnd_curve_read_public(server, s->server_key) < 0) {
            fprintf(stderr, "%s: --server-key: %s\n", s->me, tnd_error_last());
            return -1;
        }
    } else if (s->found_key[0]) {
        memcpy(server, s->found_key, sizeof(server));
    } else {
        if (s->key) {
            fprintf(stderr,
                    "%s: --key needs the server's public key: give "
                    "--server-key KEY (its NAME.pub)\n",
                    s->me);
            return -1;
        }
        return 0;
    }
    if (!key_file || !*key_file) {
        fprintf(stderr,
                "%s: the server at %s wants CURVE: give --key FILE (a "
                "NAME.key its authorized keys list with the client role), "
                "or set TANDEM_KEY\n",
                s->me, s->endpoint);
        return -1;
    }
    if (tnd_curve_read_pair(&pair, key_file) < 0) {
        fprintf(stderr, "%s: --key: %s\n", s->me, tnd_error_last());
        return -1;
    }
    if (zmq_setsockopt(s->socket, ZMQ_CURVE_SERVERKEY, server,
                       TND_CURVE_Z85_LEN) < 0 ||
        zmq_setsockopt(s->socket, ZMQ_CURVE_PUBLICKEY, pair.public_key,
                       TND_CURVE_Z85_LEN) < 0 ||
        zmq_setsockopt(s->socket, ZMQ_CURVE_SECRETKEY, pair.secret_key,
                       TND_CURVE_Z85_LEN) < 0) {
        fprintf(stderr, "%s: cannot set up CURVE: %s\n", s->me,
                zmq_strerror(errno));
        rc = -1;
    }
    memcpy(s->public_key, pair.public_key, sizeof(s->public_key));
    s->key_file = key_file;
    explicit_bzero(pair.secret_key, sizeof(pair.secret_key));
    return rc;
}

static int send_request(tnd_submit_client *s, const tnd_client_request *req)
{
    tnd_mdp_msg m;
    size_t len;
    char *body = tnd_client_request_encode(req, &len);
    int rc;

    tnd_mdp_msg_init(&m, false, TND_MDPC_REQUEST,
                     tnd_client_service(req->kind));
    m.body = body;
    m.body_len = len;
    rc = tnd_mdp_send(s->socket, NULL, 0, &m);
    tnd_mdp_msg_clear(&m);
    return rc;
}

/* The exit code when no outcome was heard (no server answers there, a
 * reply that cannot be read): under --review a review that could not be
 * done, 4, as tandem review exits when its model cannot be reached (1
 * said "rejected"); else run's 1. */
static int unheard(const tnd_submit_client *s)
{
    return s->review ? TND_EXIT_NOT_REVIEWED : TND_EXIT_FAILED;
}

static bool may_come_back(const tnd_submit_client *s);

/* Whether the answer s sent is the one the session took: the first
 * answer its journal holds after the escalation answered is a server's
 * (it names how it came: "via"), of the same kind. Only in doubt (no
 * journal here, no such escalation) is it taken to be. A server stopped
 * while it held the answer keeps it for the next; a person who answered
 * here meanwhile, with no server, came first, and the next server found
 * the session ended: its outcome was this command's (a reject exited 0
 * with the approved diff on stdout). */
static bool answer_taken(const tnd_submit_client *s)
{
    char *path;
    json_object *records = NULL;
    bool after = false, taken = true;
    size_t n;

    if (!s->answer_dir || s->answer_escalation <= 0 || !s->answer_kind)
        return true;
    path = tnd_fs_join(s->answer_dir, "journal.jsonl");
    if (tnd_journal_read(&records, path) < 0) {
        tnd_error_clear();
        free(path);
        return true;
    }
    free(path);
    n = json_object_array_length(records);
    for (size_t i = 0; i < n; i++) {
        json_object *rec = json_object_array_get_idx(records, i);
        const char *type = tnd_journal_type(rec);
        if (!after) {
            after = strcmp(type, "escalation") == 0 &&
                    tnd_json_int_or(rec, "seq", 0) == s->answer_escalation;
            continue;
        }
        if (strcmp(type, "answer") == 0) {
            taken =
                tnd_json_field(rec, "via") != NULL &&
                tnd_str_eq(tnd_json_str_or(rec, "kind", NULL), s->answer_kind);
            break;
        }
        if (strcmp(type, "escalation") == 0 || strcmp(type, "finish") == 0) {
            taken = false;
            break;
        }
    }
    json_object_put(records);
    return taken;
}

/* One reply: 1 when it was the last (*code set), 0 to go on, -1. */
static int on_reply(tnd_submit_client *s, const tnd_client_reply *r, int *code)
{
    const char *diff;
    char *text;
    int applied;

    switch (r->type) {
    case TND_CLIENT_ACCEPTED:
        free(s->session);
        s->session = tnd_xstrdup(r->session);
        if (s->coming_back && !s->quiet)
            fprintf(stderr,
                    "tandem: tandem serve at %s took session %s up again\n",
                    s->endpoint, r->session);
        s->coming_back = false;
        if (s->answering && !s->quiet)
            fprintf(stderr, "tandem: session %s goes on in tandem serve (%s)\n",
                    r->session, s->endpoint);
        if (s->detach) {
            text = tnd_xasprintf("%s\n", r->session);
            tnd_submit_put_out(s, "the session's id", text, strlen(text));
            free(text);
            *code = TND_EXIT_OK;
            return 1;
        }
        if (r->queued > 0 && !s->quiet)
            fprintf(stderr,
                    "tandem: session %s waits: %ld session%s ahead of it\n",
                    r->session, r->queued, r->queued == 1 ? "" : "s");
        return 0;
    case TND_CLIENT_OUTPUT:
        s->heard = true;
        if (r->err ? s->quiet : s->json)
            return 0;
        if (r->err) {
            /* what a server says goes to a person's terminal: no escape
             * (stdout is the diff, and goes as it is) */
            text = tnd_str_printable(r->text, r->text_len + 1);
            fputs(text, stderr);
            free(text);
            fflush(stderr);
        } else {
            tnd_submit_put_session_out(s, r->text, r->text_len);
        }
        return 0;
    case TND_CLIENT_ALIVE:
        return 0;
    case TND_CLIENT_DONE:
        if (s->answering && s->came_back && !answer_taken(s)) {
            /* its outcome is another answer's, not this command's */
            fprintf(stderr,
                    "%s: your %s was not used: session %s went on with "
                    "another answer, given while no tandem serve ran "
                    "(tandem show %s says whose and how it ended)\n",
                    s->me, s->answer_kind, r->session, r->session);
            *code = TND_EXIT_USAGE;
            return 1;
        }
        /* --apply, --commit: first, so the report printed says it */
        applied = s->apply && !s->review && r->exit_code == TND_EXIT_OK
                      ? tnd_submit_apply(s, r->report, r->session)
                      : TND_EXIT_OK;
        if (s->json && r->report) {
            text = tnd_json_pretty(r->report);
            tnd_submit_put_out(s, "the report", text, strlen(text));
            free(text);
        } else if (s->json ||
                   (!s->wrote_out && !r->report &&
                    (r->exit_code == TND_EXIT_OK || r->status || !s->heard))) {
            /* none came: there is none, it was too large for a reply, or
             * the server could not read it (said nothing when the
             * session's directory was gone; nor, whatever the exit code,
             * to a client that heard nothing else of the session, as one
             * attaching to a rejected review, whose findings are in it).
             * A session that failed before it had a report said why in
             * its output. */
            fprintf(stderr,
                    "%s: session %s ended%s%s; its report did not come with "
                    "the reply: read .tandem/sessions/%s/report.json in its "
                    "repository\n",
                    s->me, r->session, r->status ? " " : "",
                    r->status ? r->status : "", r->session);
        } else if (!s->out_resent && r->exit_code == TND_EXIT_OK &&
                   strcmp(tnd_json_str_or(r->report, "kind", ""), "run") == 0) {
            /* it ended while nobody followed it (or while a server this
             * client lost sent it): the diff is in its report */
            if (!s->quiet && !s->wrote_out)
                fprintf(stderr, "tandem: session %s ended %s\n", r->session,
                        r->status ? r->status : "");
            diff = tnd_json_str_or(r->report, "final_diff_text", "");
            tnd_submit_put_session_out(s, diff, strlen(diff));
        } else if (!s->out_resent &&
                   strcmp(tnd_json_str_or(r->report, "kind", ""), "review") ==
                       0 &&
                   tnd_json_str_or(r->report, "findings_text", NULL)) {
            /* a review that ended while nobody followed it: what it put
             * on stdout is in its report, as it went out (attach said
             * nothing of a rejected change) */
            diff = tnd_json_str_or(r->report, "findings_text", "");
            tnd_submit_put_session_out(s, diff, strlen(diff));
        } else if (!s->wrote_out && !s->heard && r->exit_code != TND_EXIT_OK) {
            /* a task that ended badly while nobody followed it: its
             * status and why (attach said nothing, exit 3 or 1) */
            tnd_submit_said_end(r);
        }
        tnd_submit_out_end(s);
        *code = r->exit_code == TND_EXIT_OK ? applied : r->exit_code;
        return 1;
    case TND_CLIENT_STATUS_REPLY:
        if (s->status_out) {
            *s->status_out = json_object_get(r->report);
        } else if (s->json) {
            text = tnd_json_pretty(r->report);
            tnd_submit_put_out(s, "the status", text, strlen(text));
            free(text);
        } else {
            tnd_submit_print_status(r);
        }
        *code = TND_EXIT_OK;
        return 1;
    case TND_CLIENT_ERROR:
        if (s->coming_back && strcmp(r->kind, "stopping") == 0) {
            /* the next server runs it: wait on */
            if (!s->said_stopping)
                tnd_submit_say_error(s, r);
            s->said_stopping = true;
            s->lost = true;
            *code = unheard(s);
            return 1;
        }
        if (s->answering && strcmp(r->kind, "elsewhere") == 0) {
            /* not that server's: the answer goes on here */
            s->elsewhere = true;
            *code = TND_EXIT_USAGE;
            return 1;
        }
        tnd_submit_say_error(s, r);
        if (s->coming_back) {
            /* not run's outcome: the session could not be followed */
            *code = unheard(s);
            return 1;
        }
        if (strcmp(r->kind, "stopping") == 0 && may_come_back(s)) {
            /* accepted and kept: the next server runs it, and this
             * client follows it there as after a server lost. It exited
             * 75, "try again later", and a pipeline that did ran the
             * task twice */
            s->said_stopping = true;
            s->lost = true;
            *code = unheard(s);
            return 1;
        }
        if (strcmp(r->kind, "stopping") == 0 && s->session) {
            /* accepted, kept, and not waited for (--reconnect-s 0): 75
             * would say "not taken, try again" */
            fprintf(stderr,
                    "%s: session %s is on disk: it goes on when a server "
                    "runs (tandem submit --attach %s follows it then)\n",
                    s->me, s->session, s->session);
            *code = unheard(s);
            return 1;
        }
        *code = strcmp(r->kind, "busy") == 0 || strcmp(r->kind, "stopping") == 0
                    ? TND_EXIT_TEMPFAIL
                : strcmp(r->kind, "failed") != 0 ? TND_EXIT_USAGE
                : s->review                      ? TND_EXIT_NOT_REVIEWED
                                                 : TND_EXIT_FAILED;
        return 1;
    }
    return 0;
}

/* A signal said leave: the session goes on. 128 + the signal. */
static int leaving(const tnd_submit_client *s)
{
    if (s->session)
        fprintf(stderr,
                "%s: left; session %s goes on (tandem submit --attach %s "
                "follows it)\n",
                s->me, s->session, s->session);
    return TND_EXIT_SIGNAL + atomic_load(&left);
}

/* Whether a server lost now may be waited for to take the session up
 * again: it has one for this client. Its stdout may have come in part:
 * the next server sends it all again, and what was written is not
 * written twice (put_session_out; the client exited 1 with the whole
 * diff written when the server was lost just before its end). */
static bool may_come_back(const tnd_submit_client *s)
{
    return ((s->session && !s->detach) || (!s->session && s->submit)) &&
           !s->status_out && s->reconnect_s > 0;
}

/* Read replies until the FINAL; a TND_EXIT_* code. When the server is
 * lost (the connection ended, or silent too long) and may_come_back,
 * s->lost is set instead and the code is unheard's. */
static int follow(tnd_submit_client *s)
{
    int64_t heard = tnd_now_ms();
    bool any = false;
    int code = unheard(s);

    s->lost = false;
    for (;;) {
        zmq_pollitem_t items[2] = {
            {s->socket, 0, ZMQ_POLLIN, 0},
            {tnd_linewatch_socket(s->watch), 0, ZMQ_POLLIN, 0},
        };
        int limit = any ? SILENCE_MS : s->first_ms;
        /* read before the socket: what came before the connection ended
         * is read before it counts as lost (a "done" dropped so had the
         * client wait for a server to take up a session that ended) */
        bool broke = tnd_linewatch_broke(s->watch);
        tnd_mdp_msg m;
        tnd_client_reply r;
        int rc;

        if (atomic_load(&left))
            return leaving(s);
        if (tnd_linewatch_refused(s->watch)) {
            /* it never answers such a key: waiting 10 s and asking
             * whether it runs hid why. Said once to watch, which asks
             * every second */
            if (!s->status_out || !atomic_exchange(&said_refused, true))
                fprintf(
                    stderr,
                    "%s: tandem serve at %s refused this client's key %s "
                    "(from %s): its authorized keys do not list it. Give "
                    "--key FILE (or set TANDEM_KEY) of a key listed there "
                    "with the client role (person, to answer a session), or "
                    "have the server's operator list this one\n",
                    s->me, s->endpoint, s->public_key,
                    s->key_file ? s->key_file : "?");
            return TND_EXIT_USAGE;
        }
        if (tnd_linewatch_mismatch(s->watch)) {
            /* no answer ever comes: it waited 10 s and asked whether the
             * server ran */
            fprintf(stderr,
                    "%s: tandem serve at %s did not take the "
                    "connection: %s\n",
                    s->me, s->endpoint,
                    tnd_linewatch_why(s->watch, s->key_file != NULL));
            return TND_EXIT_USAGE;
        }
        if (zmq_poll(items, 2, broke ? 0 : 500) < 0 && errno != EINTR) {
            fprintf(stderr, "%s: %s\n", s->me, zmq_strerror(errno));
            return unheard(s);
        }
        while ((rc = tnd_mdp_recv(&m, NULL, NULL, s->socket)) == 0) {
            int last;
            /* only a client reply is the server heard (a peer sending
             * anything else kept the wait going for ever) */
            if (m.worker || (m.command != TND_MDPC_PARTIAL &&
                             m.command != TND_MDPC_FINAL)) {
                tnd_mdp_msg_clear(&m);
                continue;
            }
            heard = tnd_now_ms();
            any = true;
            if (tnd_client_reply_decode(&r, m.body, m.body_len) < 0) {
                fprintf(stderr, "%s: %s\n", s->me, tnd_error_last());
                tnd_mdp_msg_clear(&m);
                return unheard(s);
            }
            if (r.type == TND_CLIENT_DONE && s->session && r.session &&
                strcmp(r.session, s->session) != 0) {
                /* another session's end is not this one's */
                fprintf(stderr,
                        "%s: the server ended session %s, not %s; ignored\n",
                        s->me, r.session, s->session);
                tnd_client_reply_clear(&r);
                tnd_mdp_msg_clear(&m);
                continue;
            }
            last = on_reply(s, &r, &code);
            if (!last && m.command == TND_MDPC_FINAL) {
                /* a last reply that says no outcome */
                fprintf(stderr,
                        "%s: tandem serve at %s ended the exchange without "
                        "an outcome%s%s\n",
                        s->me, s->endpoint, s->session ? " for session " : "",
                        s->session ? s->session : "");
                last = 1;
            }
            tnd_client_reply_clear(&r);
            tnd_mdp_msg_clear(&m);
            if (last)
                return code;
        }
        if (rc != TND_ETIMEOUT) {
            fprintf(stderr, "%s: %s\n", s->me, tnd_error_last());
            return unheard(s);
        }
        /* before an answer only a connection that ended is a server
         * lost: one that keeps it and says nothing is not a tandem serve
         * to send the task to again */
        if ((broke || (s->session && tnd_now_ms() - heard > limit)) &&
            may_come_back(s)) {
            s->lost = true;
            return code;
        }
        if (broke && s->session && !s->detach) {
            /* the server knows this connection no more: nothing else
             * comes on it (it waited out the silence for nothing) */
            fprintf(stderr,
                    "%s: lost tandem serve at %s; session %s is on disk: it "
                    "goes on when a server runs it (tandem submit --attach "
                    "%s follows it)\n",
                    s->me, s->endpoint, s->session, s->session);
            return unheard(s);
        }
        if (tnd_now_ms() - heard > limit) {
            /* a wrong --server-key read as a server that was not there */
            const char *why = tnd_linewatch_why(s->watch, s->key_file != NULL);
            fprintf(stderr,
                    "%s: no answer from tandem serve at %s for "
                    "%d s; %s%s%s%s\n",
                    s->me, s->endpoint, limit / 1000,
                    why ? why : "is it running?", s->session ? " Session " : "",
                    s->session ? s->session : "",
                    s->session ? " is on disk; it goes on when a server runs "
                                 "it (tandem submit --attach ID)"
                               : "");
            return unheard(s);
        }
    }
}

/* A socket on s->endpoint, watched (s->socket, s->watch); 0, or a
 * TND_EXIT_* code said on stderr. */
static int open_line(tnd_submit_client *s)
{
    if (!s->ctx) {
        s->ctx = zmq_ctx_new();
        s->own_ctx = true;
    }
    if (!s->ctx || !(s->socket = zmq_socket(s->ctx, ZMQ_DEALER)) ||
        tnd_mdp_socket_limits(s->socket) < 0) {
        fprintf(stderr, "%s: cannot make a socket: %s\n", s->me,
                zmq_strerror(errno));
        return unheard(s);
    }
    if (setup_curve(s) < 0)
        return TND_EXIT_USAGE;
    if (!(s->watch = tnd_linewatch_new(s->ctx, s->socket))) {
        fprintf(stderr, "%s: %s\n", s->me, tnd_error_last());
        return unheard(s);
    }
    if (zmq_connect(s->socket, s->endpoint) < 0) {
        fprintf(stderr, "%s: cannot connect to %s: %s\n", s->me, s->endpoint,
                zmq_strerror(errno));
        return unheard(s);
    }
    return 0;
}

static void close_line(tnd_submit_client *s)
{
    int linger = 0;

    tnd_linewatch_destroy(&s->watch);
    if (s->socket) {
        zmq_setsockopt(s->socket, ZMQ_LINGER, &linger, sizeof(linger));
        zmq_close(s->socket);
        s->socket = NULL;
    }
}

/* The server was lost while it ran s->session (follow set s->lost): wait
 * up to --reconnect-s for a server to take the session up again (the
 * one restarted, or the one that comes back on a connection cut) and
 * follow it there. A new socket each time: a ROUTER knows a client by
 * its connection, and a request queued for a server not yet there would
 * be sent again with every try. A TND_EXIT_* code. */
static int come_back(tnd_submit_client *s)
{
    int64_t deadline = 0;
    tnd_client_request req;
    int nap = 0, code = unheard(s);

    memset(&req, 0, sizeof(req));
    req.kind = TND_CLIENT_KIND_ATTACH;
    req.session = tnd_xstrdup(s->session ? s->session : s->submit->session);
    /* where the next server finds it if it ended before the outcomes
     * that server keeps */
    req.repo = s->repo_sent ? tnd_xstrdup(s->repo_sent) : NULL;
    while (s->lost) {
        int64_t left_ms;
        char *ep;

        if (!s->coming_back && !s->session) {
            /* lost before it answered: the task is sent again, under the
             * id it proposed, so the next server follows the session
             * made then, or makes it (it said no server answered, and
             * exited 1, while the next server ran the task) */
            fprintf(stderr,
                    "%s: lost tandem serve at %s before it answered: "
                    "waiting up to %ld s for a server to send the task to "
                    "again (as session %s: never run twice)\n",
                    s->me, s->endpoint, s->reconnect_s, req.session);
            deadline = tnd_now_ms() + s->reconnect_s * 1000;
            nap = 0;
            s->coming_back = true;
            s->came_back = true;
            tnd_submit_out_from_start(s);
        } else if (!s->coming_back) {
            /* lost, or lost again after a server took it up: each loss
             * is waited for as long (the first loss's deadline gave up
             * at once on a second one past it) */
            fprintf(stderr,
                    "%s: lost tandem serve at %s; session %s is on disk: "
                    "waiting up to %ld s for a server to take it up again "
                    "(Ctrl-C leaves it going on)\n",
                    s->me, s->endpoint, s->session, s->reconnect_s);
            deadline = tnd_now_ms() + s->reconnect_s * 1000;
            nap = 0;
            s->coming_back = true;
            s->came_back = true;
            tnd_submit_out_from_start(s);
        }
        /* a server that is stopping answers each try: not 5 a second for
         * its whole drain */
        if (nap)
            poll(NULL, 0, nap); /* a signal ends it early */
        nap =
            nap ? (nap * 2 < RETRY_MAX_MS ? nap * 2 : RETRY_MAX_MS) : RETRY_MS;
        if (atomic_load(&left)) {
            code = leaving(s);
            break;
        }
        if ((left_ms = deadline - tnd_now_ms()) <= 0) {
            if (s->session)
                fprintf(stderr,
                        "%s: no tandem serve took session %s up again in "
                        "%ld s; it goes on when one runs (tandem submit "
                        "--attach %s follows it then)\n",
                        s->me, s->session, s->reconnect_s, s->session);
            else
                fprintf(stderr,
                        "%s: no tandem serve answered in %ld s; the task "
                        "may be session %s, on disk if the lost server "
                        "made it (tandem submit --attach %s follows it "
                        "then)\n",
                        s->me, s->reconnect_s, req.session, req.session);
            code = unheard(s);
            break;
        }
        close_line(s);
        if (!s->connect) {
            /* where a server restarted listens, once it runs */
            if (!tnd_serve_running() ||
                !(ep = tnd_serve_endpoint(s->found_key))) {
                tnd_error_clear();
                continue;
            }
            free(s->endpoint);
            s->endpoint = ep;
        }
        if ((code = open_line(s)) != 0)
            break;
        if (send_request(s, s->session ? &req : s->submit) < 0) {
            fprintf(stderr, "%s: cannot send to %s: %s\n", s->me, s->endpoint,
                    tnd_error_last());
            code = unheard(s);
            break;
        }
        s->first_ms =
            left_ms < FIRST_ANSWER_MS ? (int)left_ms : FIRST_ANSWER_MS;
        code = follow(s);
    }
    s->coming_back = false;
    tnd_client_request_clear(&req);
    return code;
}

/* Send req to the server and follow what it answers; a TND_EXIT_* code.
 * s->endpoint is set. */
int tnd_submit_exchange(tnd_submit_client *s, const tnd_client_request *req)
{
    struct sigaction sa, old[3];
    bool handled = false;
    int code = unheard(s), rc;

    s->first_ms = FIRST_ANSWER_MS;
    /* nobody at an ipc:// socket is said at once: it was 10 s of waiting
     * for an answer, then "is it running?" */
    if (tnd_mdp_ipc_listening(s->endpoint) == 0) {
        fprintf(stderr,
                "%s: no tandem serve listens at %s (start one, or "
                "give --connect the endpoint it printed)\n",
                s->me, s->endpoint);
        goto out;
    }
    if ((rc = open_line(s)) != 0) {
        code = rc;
        goto out;
    }
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old[0]);
    sigaction(SIGTERM, &sa, &old[1]);
    sigaction(SIGHUP, &sa, &old[2]);
    handled = true;
    signal(SIGPIPE, SIG_IGN);
    if (req->kind == TND_CLIENT_KIND_SUBMIT && req->session)
        s->submit = req;
    s->repo_sent = req->repo;
    if (send_request(s, req) < 0) {
        fprintf(stderr, "%s: cannot send to %s: %s\n", s->me, s->endpoint,
                tnd_error_last());
        goto out;
    }
    code = follow(s);
    if (s->lost)
        code = come_back(s);
    /* the status table's printf too: a stream that failed stays failed */
    errno = 0;
    if (!s->status_out && !s->out_lost &&
        (fflush(stdout) != 0 || ferror(stdout)))
        s->out_lost = tnd_xasprintf("cannot write on stdout: %s",
                                    errno ? strerror(errno) : "a write failed");
    if (s->out_lost) {
        fprintf(stderr, "%s: %s; the output was lost%s%s%s%s\n", s->me,
                s->out_lost, s->session ? " (session " : "",
                s->session ? s->session : "", s->session ? " keeps it)" : "",
                code == TND_EXIT_OK ? ", exit 1" : "");
        code = code == TND_EXIT_OK ? TND_EXIT_FAILED : code;
        free(s->out_lost);
        s->out_lost = NULL;
    }
out:
    s->submit = NULL; /* req is the caller's, for this exchange only */
    s->repo_sent = NULL;
    close_line(s);
    if (s->own_ctx && s->ctx)
        zmq_ctx_term(s->ctx);
    s->ctx = NULL;
    s->own_ctx = false;
    if (handled) { /* a caller such as watch keeps its own */
        sigaction(SIGINT, &old[0], NULL);
        sigaction(SIGTERM, &old[1], NULL);
        sigaction(SIGHUP, &old[2], NULL);
        /* a status ask is a moment of its caller's: a signal that came
         * in it is the caller's (watch swallowed a Ctrl-C that came
         * while it asked, and every ask after it gave up at once) */
        if (s->status_out && atomic_load(&left))
            raise(atomic_exchange(&left, 0));
    }
    return code;
}
