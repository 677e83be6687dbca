/* The hub of tandem serve (see hub.h): the broker's events, the session
 * threads' links and the clients, all on the main thread. */
#include "orchestrator/hub.h"

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zmq.h>

#include "common/clock.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/log.h"
#include "common/str.h"
#include "common/xalloc.h"
#include "orchestrator/accepted.h"
#include "orchestrator/broker.h"
#include "orchestrator/hubsession.h"
#include "orchestrator/journal.h"
#include "orchestrator/link.h"
#include "orchestrator/pool.h"
#include "orchestrator/run.h"
#include "orchestrator/rundir.h"
#include "proto/client.h"
#include "proto/json.h"

#define TND_HUB_LINKS "inproc://tandem-hub"
#define POLL_MS       100
#define ALIVE_MS      2000
#define STOP_GRACE_MS 5000

struct tnd_hub {
    const tnd_hub_options *o;
    tnd_pool *pool;
    tnd_broker *broker; /* the pool's */
    tnd_accepted *accepted;
    void *ctx, *router; /* the links' side */
    tnd_hubsession **s; /* queued first-come first-served, and running */
    size_t n, alloc;
    unsigned long seq; /* names sessions: s1, s2, ... */
    int64_t next_alive;
    bool draining, stopped;
    int64_t drain_deadline;
};

/* ---- sessions ----------------------------------------------------------- */

static size_t count(const tnd_hub *h, tnd_hubsession_state state)
{
    size_t n = 0;

    for (size_t i = 0; i < h->n; i++)
        n += tnd_hubsession_state_of(h->s[i]) == state;
    return n;
}

static tnd_hubsession *by_name(tnd_hub *h, const char *name, size_t len)
{
    for (size_t i = 0; i < h->n; i++) {
        const char *n = tnd_hubsession_name(h->s[i]);
        if (strlen(n) == len && memcmp(n, name, len) == 0)
            return h->s[i];
    }
    return NULL;
}

static tnd_hubsession *by_id(tnd_hub *h, const char *id)
{
    for (size_t i = 0; i < h->n; i++)
        if (strcmp(tnd_hubsession_id(h->s[i]), id) == 0)
            return h->s[i];
    return NULL;
}

static tnd_hubsession *add(tnd_hub *h, const char *repo, const char *id,
                           const char *dir)
{
    char name[32];
    tnd_hubsession *s;

    snprintf(name, sizeof(name), "s%lu", ++h->seq);
    s = tnd_hubsession_new(name, repo, id, dir);
    TND_GROW(h->s, h->alloc, h->n + 1);
    h->s[h->n++] = s;
    return s;
}

static void forget(tnd_hub *h, tnd_hubsession *s)
{
    for (size_t i = 0; i < h->n; i++)
        if (h->s[i] == s) {
            memmove(&h->s[i], &h->s[i + 1], (h->n - i - 1) * sizeof(*h->s));
            h->n--;
            break;
        }
    tnd_hubsession_destroy(&s);
}

/* Sessions waiting ahead of s (0 when s runs, or will at once). */
static long ahead_of(const tnd_hub *h, const tnd_hubsession *s)
{
    long n = 0,
         free_slots = h->o->max_sessions - (long)count(h, TND_HS_RUNNING);

    for (size_t i = 0; i < h->n && h->s[i] != s; i++)
        n += tnd_hubsession_state_of(h->s[i]) == TND_HS_QUEUED;
    return n < free_slots ? 0 : n - free_slots + 1;
}

/* s ended with code: its clients get the outcome, the accepted list
 * forgets it unless it was stopped (a stopped session is resumed by the
 * next server), and the hub lets go of it. */
static void ended(tnd_hub *h, tnd_hubsession *s, int code)
{
    bool stopped = code > TND_EXIT_SIGNAL;

    tnd_hubsession_finish(s, h->broker, code);
    fprintf(stderr, "tandem serve: session %s %s (exit %d)\n",
            tnd_hubsession_id(s),
            stopped ? "stopped; the next server resumes it" : "ended", code);
    if (!stopped && tnd_accepted_end(h->accepted, tnd_hubsession_id(s)) < 0)
        tnd_log_error("%s", tnd_error_last());
    forget(h, s);
}

/* Start queued sessions while slots are free. */
static void start_queued(tnd_hub *h)
{
    for (size_t i = 0;
         i < h->n && (long)count(h, TND_HS_RUNNING) < h->o->max_sessions; i++) {
        tnd_hubsession *s = h->s[i];
        if (tnd_hubsession_state_of(s) != TND_HS_QUEUED)
            continue;
        if (tnd_hubsession_start(s, h->ctx, TND_HUB_LINKS) < 0) {
            char *why = tnd_xasprintf("cannot start session %s: %s",
                                      tnd_hubsession_id(s), tnd_error_last());
            tnd_log_error("%s", why);
            tnd_hubsession_fail(s, h->broker, "failed", why);
            free(why);
            forget(h, s);
            i--;
        }
    }
}

/* ---- clients ------------------------------------------------------------ */

static void answer(tnd_hub *h, const tnd_broker_event *ev, bool final,
                   char *body, size_t len)
{
    if (tnd_broker_client_send(h->broker, ev->client, ev->client_len,
                               ev->service, final, body, len) < 0)
        tnd_log_warn("cannot answer client %s: %s", ev->key, tnd_error_last());
    free(body);
}

static void refuse(tnd_hub *h, const tnd_broker_event *ev, const char *kind,
                   const char *why)
{
    size_t len;
    char *body = tnd_client_error(kind, why, &len);

    tnd_log_info("refusing a request of client %s: %s", ev->key, why);
    answer(h, ev, true, body, len);
}

/* Whether the server may take a task in repo: it must see the directory
 * and read it, as the user it runs as. */
static int check_repo(const char *repo)
{
    struct stat st;

    if (stat(repo, &st) < 0)
        return tnd_error_sys("repo %s", repo);
    if (!S_ISDIR(st.st_mode))
        return tnd_error_set("repo %s is not a directory", repo);
    if (access(repo, R_OK | X_OK) < 0)
        return tnd_error_sys("repo %s cannot be read by the server (uid %d)",
                             repo, (int)getuid());
    return 0;
}

/* The task's config must be the one the server's agents run with. */
static int check_config(const tnd_hub *h, const char *config)
{
    const char *mine = h->o->config->path;
    char *real;
    bool same;

    if (!config)
        return 0;
    real = tnd_fs_realpath(config);
    same = real && mine && strcmp(real, mine) == 0;
    free(real);
    if (!same)
        return tnd_error_set("--config %s: this server's agents run with %s; "
                             "a server runs one configuration (start another "
                             "tandem serve --config %s, or use tandem run)",
                             config, mine ? mine : "the built-in defaults",
                             config);
    return 0;
}

/* A review's diff, as the client sent it, in a file of the server's
 * own private runtime directory for tnd_run_create to read (it keeps a
 * copy in the session); NULL with the error set. Caller unlinks and
 * frees. */
static char *diff_file(const char *diff)
{
    char *base = tnd_rundir_base(), *path;
    int fd;

    if (!base)
        return NULL;
    path = tnd_xasprintf("%s/review-XXXXXX", base);
    free(base);
    if ((fd = mkstemp(path)) < 0) {
        tnd_error_sys("cannot make %s", path);
        free(path);
        return NULL;
    }
    close(fd);
    if (tnd_fs_write(path, diff, strlen(diff)) < 0) {
        unlink(path);
        free(path);
        return NULL;
    }
    return path;
}

/* The session for a submitted task, made and recorded; NULL with kind
 * and the error set when it cannot be. */
static tnd_hubsession *create(tnd_hub *h, const tnd_client_request *req,
                              const char **kind)
{
    tnd_run_options ro;
    tnd_run_host host;
    atomic_int never = 0;
    char *id = NULL, *dir = NULL, *said = NULL, *diff = NULL;
    size_t said_len = 0;
    tnd_hubsession *s = NULL;
    int code;

    memset(&ro, 0, sizeof(ro));
    ro.repo = req->repo;
    ro.config = h->o->config->path;
    ro.task = req->task;
    ro.review = req->review;
    ro.staged = req->staged;
    if (req->diff && !(ro.diff = diff = diff_file(req->diff))) {
        *kind = "failed";
        return NULL;
    }
    memset(&host, 0, sizeof(host));
    host.stop = &never;
    host.out = host.err = open_memstream(&said, &said_len);
    if (!host.err) {
        *kind = "failed";
        tnd_error_sys("cannot make a session");
        if (diff)
            unlink(diff);
        free(diff);
        return NULL;
    }
    code = tnd_run_create(&id, &dir, &ro, &host);
    fclose(host.err);
    if (diff)
        unlink(diff);
    free(diff);
    if (code != 0) {
        *kind = code == TND_EXIT_USAGE ? "config" : "failed";
        tnd_str_trim(said);
        tnd_error_set("%s",
                      strncmp(said, "tandem: ", 8) == 0 ? said + 8 : said);
    } else if (tnd_accepted_add(h->accepted, req->repo, id, NULL) < 0) {
        *kind = "failed";
        tnd_error_prefix("session %s was made but cannot be recorded", id);
    } else {
        s = add(h, req->repo, id, dir);
    }
    free(said);
    free(id);
    free(dir);
    return s;
}

static void on_submit(tnd_hub *h, const tnd_broker_event *ev,
                      const tnd_client_request *req)
{
    const char *kind = "bad_request";
    tnd_hubsession *s;
    size_t len;
    char *body;

    if (h->draining) {
        refuse(h, ev, "stopping",
               "tandem serve is stopping and takes no new task; submit "
               "again when it runs");
        return;
    }
    if ((long)h->n >= h->o->max_sessions + h->o->queue_max) {
        body = tnd_client_busy(h->o->max_sessions, h->o->queue_max, &len);
        answer(h, ev, true, body, len);
        return;
    }
    if (check_repo(req->repo) < 0 ||
        (kind = "config", check_config(h, req->config) < 0) ||
        !(s = create(h, req, &kind))) {
        refuse(h, ev, kind, tnd_error_last());
        return;
    }
    fprintf(stderr, "tandem serve: session %s accepted in %s\n",
            tnd_hubsession_id(s), req->repo);
    body = tnd_client_accepted(tnd_hubsession_id(s), tnd_hubsession_dir(s),
                               ahead_of(h, s), &len);
    if (!req->detach)
        tnd_hubsession_follow(s, ev->client, ev->client_len, ev->service);
    answer(h, ev, req->detach, body, len);
    start_queued(h);
}

static void on_attach(tnd_hub *h, const tnd_broker_event *ev,
                      const tnd_client_request *req)
{
    tnd_hubsession *s = by_id(h, req->session);
    size_t len;
    char *body;

    if (!s) {
        char *why = tnd_xasprintf(
            "no session %s runs or waits in this server; a session that "
            "ended is in its repository (tandem show --repo REPO %s)",
            req->session, req->session);
        refuse(h, ev, "not_found", why);
        free(why);
        return;
    }
    if (tnd_hubsession_follow(s, ev->client, ev->client_len, ev->service) < 0) {
        refuse(h, ev, "busy", tnd_error_last());
        return;
    }
    body = tnd_client_accepted(tnd_hubsession_id(s), tnd_hubsession_dir(s),
                               ahead_of(h, s), &len);
    answer(h, ev, false, body, len);
}

/* An answer as the accepted list keeps it. */
static json_object *answer_json(const tnd_client_request *req)
{
    json_object *o = json_object_new_object();

    json_object_object_add(o, "answer", json_object_new_string(req->answer));
    if (req->text)
        json_object_object_add(o, "text", json_object_new_string(req->text));
    json_object_object_add(o, "iterations",
                           json_object_new_int64(req->iterations));
    json_object_object_add(o, "tokens", json_object_new_int64(req->tokens));
    return o;
}

/* s goes on with the answer ans (as answer_json makes it); -1 with the
 * error set when it names no answer a person may give. */
static int set_answer(tnd_hubsession *s, json_object *ans)
{
    tnd_answer_kind kind;

    if (tnd_answer_kind_parse(&kind, tnd_json_str_or(ans, "answer", "none")) <
        0)
        return -1;
    if (kind > TND_ANSWER_BUDGET)
        return tnd_error_set("'%s' is an answer at the terminal only; a "
                             "server takes approve, reject, guide or budget",
                             tnd_answer_name(kind));
    tnd_hubsession_set_answer(s, kind, tnd_json_str_or(ans, "text", NULL),
                              (int)tnd_json_int_or(ans, "iterations", 0),
                              tnd_json_int_or(ans, "tokens", 0));
    return 0;
}

/* Whether the server may answer the session: one it ran, with its
 * config, that waits for a person and that it does not hold now. -1
 * with *kind and the error set. */
static int check_answerable(tnd_hub *h, const tnd_client_request *req,
                            tnd_session_facts *f, const char **kind)
{
    *kind = "not_found";
    if (tnd_run_facts(f, req->repo, req->session) < 0)
        return -1;
    *kind = "busy";
    if (by_id(h, f->id))
        return tnd_error_set("session %s is %s in this server, not waiting "
                             "for an answer",
                             f->id,
                             tnd_hubsession_state_of(by_id(h, f->id)) ==
                                     TND_HS_RUNNING
                                 ? "running"
                                 : "queued");
    *kind = "config";
    if (f->status != TND_SESSION_WAITING)
        return tnd_error_set("session %s is not waiting for an answer (%s)",
                             f->id, tnd_session_status_name(f->status));
    if (check_config(h, f->config) < 0) {
        tnd_error_prefix("session %s", f->id);
        return -1;
    }
    return 0;
}

static void on_answer(tnd_hub *h, const tnd_broker_event *ev,
                      const tnd_client_request *req)
{
    tnd_session_facts f;
    tnd_hubsession *s;
    json_object *ans = answer_json(req);
    const char *kind = "bad_request";
    size_t len;
    char *body;

    memset(&f, 0, sizeof(f));
    if (h->draining) {
        refuse(h, ev, "stopping",
               "tandem serve is stopping and takes no answer; answer again "
               "when it runs");
    } else if ((long)h->n >= h->o->max_sessions + h->o->queue_max) {
        body = tnd_client_busy(h->o->max_sessions, h->o->queue_max, &len);
        answer(h, ev, true, body, len);
    } else if (check_repo(req->repo) < 0 ||
               check_answerable(h, req, &f, &kind) < 0) {
        refuse(h, ev, kind, tnd_error_last());
        tnd_session_facts_clear(&f);
    } else {
        s = add(h, req->repo, f.id, f.dir);
        if (set_answer(s, ans) < 0) {
            refuse(h, ev, "bad_request", tnd_error_last());
            forget(h, s);
        } else if (tnd_accepted_add(h->accepted, req->repo, f.id, ans) < 0) {
            refuse(h, ev, "failed", tnd_error_last());
            forget(h, s);
        } else {
            fprintf(stderr, "tandem serve: session %s goes on with %s\n", f.id,
                    req->answer);
            body = tnd_client_accepted(f.id, f.dir, ahead_of(h, s), &len);
            tnd_hubsession_follow(s, ev->client, ev->client_len, ev->service);
            answer(h, ev, false, body, len);
            start_queued(h);
        }
        tnd_session_facts_clear(&f);
    }
    json_object_put(ans);
}

static void on_status(tnd_hub *h, const tnd_broker_event *ev)
{
    json_object *o = json_object_new_object(), *list = json_object_new_array();
    size_t len;
    char *body;

    json_object_object_add(o, "tandem", json_object_new_int(1));
    json_object_object_add(o, "type", json_object_new_string("status"));
    json_object_object_add(
        o, "running", json_object_new_int64((int64_t)count(h, TND_HS_RUNNING)));
    json_object_object_add(
        o, "queued", json_object_new_int64((int64_t)count(h, TND_HS_QUEUED)));
    json_object_object_add(o, "max_sessions",
                           json_object_new_int64(h->o->max_sessions));
    json_object_object_add(o, "queue_max",
                           json_object_new_int64(h->o->queue_max));
    json_object_object_add(o, "stopping", json_object_new_boolean(h->draining));
    for (size_t i = 0; i < h->n; i++)
        json_object_array_add(list, tnd_hubsession_json(h->s[i]));
    json_object_object_add(o, "sessions", list);
    body = tnd_json_dump(o, &len);
    json_object_put(o);
    answer(h, ev, true, body, len);
}

static void on_client(tnd_hub *h, const tnd_broker_event *ev)
{
    tnd_client_request req;

    if (tnd_client_request_decode(&req, ev->service, ev->body, ev->body_len) <
        0) {
        refuse(h, ev, "bad_request", tnd_error_last());
        return;
    }
    switch (req.kind) {
    case TND_CLIENT_KIND_SUBMIT:
        on_submit(h, ev, &req);
        break;
    case TND_CLIENT_KIND_ATTACH:
        on_attach(h, ev, &req);
        break;
    case TND_CLIENT_KIND_STATUS:
        on_status(h, ev);
        break;
    case TND_CLIENT_KIND_ANSWER:
        on_answer(h, ev, &req);
        break;
    }
    tnd_client_request_clear(&req);
}

/* ---- agents' events and session threads' messages ----------------------- */

/* An event of a session's request: its key is "NAME:KEY". */
static void on_agent_event(tnd_hub *h, tnd_broker_event *ev)
{
    char *colon = strchr(ev->key, ':');
    tnd_hubsession *s =
        colon ? by_name(h, ev->key, (size_t)(colon - ev->key)) : NULL;

    if (!s || tnd_hubsession_state_of(s) != TND_HS_RUNNING) {
        tnd_log_debug("dropping an event for %s: no such session runs",
                      ev->key);
        return;
    }
    memmove(ev->key, colon + 1, strlen(colon + 1) + 1);
    if (tnd_link_send_event(h->router, tnd_hubsession_name(s), ev) < 0)
        tnd_log_warn("session %s: %s", tnd_hubsession_id(s), tnd_error_last());
}

static void on_link(tnd_hub *h, const tnd_link_msg *m)
{
    tnd_hubsession *s = by_name(h, m->from, strlen(m->from));
    char key[TND_BROKER_MAX_KEY + 64];

    if (!s) {
        tnd_log_warn("a message from %s, which is no session", m->from);
        return;
    }
    switch (m->verb) {
    case TND_LINK_SUBMIT:
        snprintf(key, sizeof(key), "%s:%s", m->from, m->b);
        if (strlen(key) > TND_BROKER_MAX_KEY ||
            tnd_broker_submit(h->broker, m->a, key, m->body, m->len) < 0) {
            tnd_broker_event ev;
            memset(&ev, 0, sizeof(ev));
            ev.kind = TND_BROKER_FAILED;
            snprintf(ev.key, sizeof(ev.key), "%s", m->b);
            ev.error = strlen(key) > TND_BROKER_MAX_KEY
                           ? (char *)"the request key is too long"
                           : (char *)tnd_error_last();
            tnd_link_send_event(h->router, m->from, &ev);
        }
        break;
    case TND_LINK_CANCEL:
        snprintf(key, sizeof(key), "%s:%s", m->from, m->a);
        tnd_broker_cancel(h->broker, key);
        break;
    case TND_LINK_DROP:
        tnd_broker_drop_worker(h->broker, m->a, m->b);
        break;
    case TND_LINK_OUT:
    case TND_LINK_ERR:
        tnd_hubsession_output(s, h->broker, m->verb == TND_LINK_ERR, m->body,
                              m->len);
        break;
    case TND_LINK_DONE:
        ended(h, s, atoi(m->body));
        break;
    }
}

/* ---- time --------------------------------------------------------------- */

/* Every client that follows a session hears from the server at least
 * every ALIVE_MS, so it can tell a long model call from a dead server. */
static void alive(tnd_hub *h)
{
    if (tnd_now_ms() < h->next_alive)
        return;
    for (size_t i = 0; i < h->n; i++)
        tnd_hubsession_alive(h->s[i], h->broker);
    h->next_alive = tnd_now_ms() + ALIVE_MS;
}

/* The first stop: no new task, queued sessions stay on disk (their
 * clients are told), running ones have drain_ms. After that, or at a
 * second stop, the running ones are stopped as a signal would. */
static void stops(tnd_hub *h)
{
    int n = atomic_load(h->o->stops);

    if (n >= 1 && !h->draining) {
        h->draining = true;
        h->drain_deadline = tnd_now_ms() + h->o->drain_ms;
        fprintf(stderr,
                "tandem serve: stopping: no new tasks; %zu running session%s "
                "may go on for %ld s (--drain-s), %zu queued stay for the "
                "next server\n",
                count(h, TND_HS_RUNNING),
                count(h, TND_HS_RUNNING) == 1 ? "" : "s", h->o->drain_ms / 1000,
                count(h, TND_HS_QUEUED));
        for (size_t i = 0; i < h->n; i++) {
            tnd_hubsession *s = h->s[i];
            if (tnd_hubsession_state_of(s) != TND_HS_QUEUED)
                continue;
            tnd_hubsession_fail(s, h->broker, "stopping",
                                "tandem serve stopped before this session "
                                "started; it is on disk, and the next tandem "
                                "serve runs it (tandem submit --attach ID "
                                "follows it then)");
            forget(h, s);
            i--;
        }
    }
    if (h->draining && !h->stopped &&
        (n >= 2 || tnd_now_ms() >= h->drain_deadline)) {
        h->stopped = true;
        if (count(h, TND_HS_RUNNING))
            fprintf(stderr, "tandem serve: stopping %zu running session%s\n",
                    count(h, TND_HS_RUNNING),
                    count(h, TND_HS_RUNNING) == 1 ? "" : "s");
        for (size_t i = 0; i < h->n; i++)
            tnd_hubsession_stop(h->s[i], SIGTERM);
    }
}

/* ---- the loop ----------------------------------------------------------- */

int tnd_hub_run(tnd_hub *self)
{
    for (;;) {
        zmq_pollitem_t items[2] = {
            {tnd_broker_socket(self->broker), 0, ZMQ_POLLIN, 0},
            {self->router, 0, ZMQ_POLLIN, 0},
        };
        tnd_broker_event ev;
        tnd_link_msg m;
        int rc;

        if (zmq_poll(items, 2, POLL_MS) < 0 && errno != EINTR)
            return tnd_error_set("the hub cannot poll: %s",
                                 zmq_strerror(errno));
        while ((rc = tnd_broker_poll(self->broker, &ev, 0)) == 1) {
            if (ev.kind == TND_BROKER_CLIENT)
                on_client(self, &ev);
            else
                on_agent_event(self, &ev);
            tnd_broker_event_clear(&ev);
        }
        if (rc < 0)
            return -1;
        while ((rc = tnd_link_recv(&m, self->router)) != 0) {
            if (rc < 0) {
                tnd_log_warn("%s", tnd_error_last());
                continue;
            }
            on_link(self, &m);
            tnd_link_msg_clear(&m);
        }
        if (tnd_pool_tick(self->pool) < 0)
            tnd_log_error("%s", tnd_error_last());
        stops(self);
        if (!self->draining)
            start_queued(self);
        alive(self);
        if (self->draining && self->n == 0)
            return 0;
    }
}

/* ---- life --------------------------------------------------------------- */

/* An earlier server's sessions that did not end: queued again, unless
 * their journal says they finished or wait for a person. One that waits
 * and was accepted with an answer goes on with it; one that journaled
 * its answer already goes on as any other. */
static void take_over(tnd_hub *h)
{
    size_t n = tnd_accepted_pending(h->accepted);
    char **repos = tnd_xcalloc(n + 1, sizeof(char *));
    char **ids = tnd_xcalloc(n + 1, sizeof(char *));
    json_object **answers = tnd_xcalloc(n + 1, sizeof(json_object *));

    /* a copy: ending one changes the list */
    for (size_t i = 0; i < n; i++) {
        repos[i] = tnd_xstrdup(tnd_accepted_repo(h->accepted, i));
        ids[i] = tnd_xstrdup(tnd_accepted_id(h->accepted, i));
        answers[i] = json_object_get(tnd_accepted_answer(h->accepted, i));
    }
    for (size_t i = 0; i < n; i++) {
        const char *repo = repos[i], *id = ids[i];
        char *dir = tnd_xasprintf("%s/.tandem/sessions/%s", repo, id);
        char *path = tnd_fs_join(dir, "journal.jsonl");
        json_object *records = NULL;
        const char *last = "";

        if (tnd_journal_read(&records, path) == 0) {
            for (size_t k = json_object_array_length(records); k-- > 0;) {
                last = tnd_journal_type(json_object_array_get_idx(records, k));
                if (strcmp(last, "resume") != 0)
                    break;
            }
        } else {
            last = "unreadable";
            tnd_log_warn("session %s of an earlier server: %s", id,
                         tnd_error_last());
        }
        bool waits = strcmp(last, "escalation") == 0;
        if (strcmp(last, "finish") == 0 || (waits && !answers[i]) ||
            strcmp(last, "unreadable") == 0) {
            if (tnd_accepted_end(h->accepted, id) < 0)
                tnd_log_error("%s", tnd_error_last());
        } else {
            tnd_hubsession *s = add(h, repo, id, dir);
            fprintf(stderr,
                    "tandem serve: session %s of an earlier server goes on "
                    "(%s)\n",
                    id, repo);
            if (waits && set_answer(s, answers[i]) < 0) {
                tnd_log_error("session %s: %s", id, tnd_error_last());
                forget(h, s);
                if (tnd_accepted_end(h->accepted, id) < 0)
                    tnd_log_error("%s", tnd_error_last());
            }
        }
        json_object_put(answers[i]);
        json_object_put(records);
        free(path);
        free(dir);
    }
    tnd_str_list_free(&repos);
    tnd_str_list_free(&ids);
    free(answers);
}

tnd_hub *tnd_hub_new(const tnd_hub_options *opts)
{
    tnd_hub *h = tnd_xcalloc(1, sizeof(*h));
    tnd_pool_options po;
    int hwm = 0;

    h->o = opts;
    if (!(h->accepted = tnd_accepted_open(opts->accepted)))
        goto fail;
    if (!(h->ctx = zmq_ctx_new()) ||
        !(h->router = zmq_socket(h->ctx, ZMQ_ROUTER)) ||
        zmq_setsockopt(h->router, ZMQ_SNDHWM, &hwm, sizeof(hwm)) < 0 ||
        zmq_setsockopt(h->router, ZMQ_RCVHWM, &hwm, sizeof(hwm)) < 0 ||
        zmq_bind(h->router, TND_HUB_LINKS) < 0) {
        tnd_error_set("cannot open the hub's inproc socket: %s",
                      zmq_strerror(errno));
        goto fail;
    }
    memset(&po, 0, sizeof(po));
    po.config = opts->config;
    po.endpoint = opts->endpoint;
    po.logs_dir = opts->logs_dir;
    po.verbose = opts->verbose;
    po.copies = opts->pool;
    po.clients = true;
    if (!(h->pool = tnd_pool_new(&po)))
        goto fail;
    h->broker = tnd_pool_broker(h->pool);
    take_over(h);
    return h;
fail:
    tnd_hub_destroy(&h);
    return NULL;
}

void tnd_hub_destroy(tnd_hub **self_p)
{
    tnd_hub *h = self_p ? *self_p : NULL;
    int linger = 0;

    if (!h)
        return;
    /* threads still running (the loop failed): stop them and wait; their
     * link's last messages are dropped with the socket */
    for (size_t i = 0; i < h->n; i++)
        tnd_hubsession_stop(h->s[i], SIGTERM);
    while (h->n > 0)
        forget(h, h->s[h->n - 1]);
    free(h->s);
    if (h->router) {
        zmq_setsockopt(h->router, ZMQ_LINGER, &linger, sizeof(linger));
        zmq_close(h->router);
    }
    if (h->ctx)
        zmq_ctx_term(h->ctx);
    tnd_pool_destroy(&h->pool, STOP_GRACE_MS);
    tnd_accepted_close(&h->accepted);
    free(h);
    *self_p = NULL;
}
