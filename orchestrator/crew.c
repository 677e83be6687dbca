/* The run's agents: runtime directory, broker, processes, calls (see
 * crew.h). */
#include "orchestrator/crew.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/log.h"
#include "common/xalloc.h"
#include "orchestrator/broker.h"
#include "orchestrator/link.h"
#include "orchestrator/pool.h"
#include "orchestrator/rundir.h"
#include "proto/answer.h"
#include "proto/json.h"

#define POLL_MS       200
#define STOP_GRACE_MS 5000
#define IPC_PATH_MAX  100 /* sun_path is 108 bytes; keep a margin */

struct tnd_crew {
    const tnd_crew_options *opts;
    tnd_rundir *rundir;  /* the runtime directory, held while the run lives */
    char *runtime;       /* its path */
    char *endpoint;      /* the local broker's; NULL with a link */
    tnd_pool *pool;      /* the local agents and their broker, or */
    tnd_link *link;      /* the hub's line (tandem serve); borrowed */
    int waiting_said[2]; /* by role: 0 not yet; 1 said; 2 said with an
                            agent registered for a service not asked */
    long resent; /* dispatches past each request's first (tnd_crew_resent) */
};

int tnd_crew_check(const tnd_config *config, bool coder)
{
    return tnd_pool_check(config, NULL, coder, false);
}

/* A private directory for the ipc socket and the workspace: only this user
 * may enter it, so no other user can connect to our broker. The runs
 * killed before us left theirs: they go first. */
static int make_runtime(tnd_crew *c)
{
    char *base = tnd_rundir_base();
    tnd_rundir_sweep swept;

    if (!base)
        return -1;
    tnd_rundir_sweep_dead(&swept, base, TND_RUNDIR_SWEEP_ENTRIES,
                          TND_RUNDIR_SWEEP_REMOVALS, false);
    if (swept.removed)
        tnd_log_info("removed %zu runtime director%s left by runs that are "
                     "gone",
                     swept.removed, swept.removed == 1 ? "y" : "ies");
    c->rundir = tnd_rundir_new(base, c->opts->session_id, c->opts->session_dir,
                               TND_RUNDIR_BUSY_WAIT_MS);
    free(base);
    if (!c->rundir)
        return -1;
    c->runtime = tnd_xstrdup(tnd_rundir_path(c->rundir));
    if (c->link)
        return 0; /* the hub's broker serves the agents */
    if (*c->opts->config->orchestrator.endpoint) {
        c->endpoint = tnd_xstrdup(c->opts->config->orchestrator.endpoint);
    } else {
        c->endpoint = tnd_xasprintf("ipc://%s/broker.sock", c->runtime);
        if (strlen(c->endpoint) - 6 > IPC_PATH_MAX)
            return tnd_error_set("the socket path %s is too long for ipc://; "
                                 "set TMPDIR to a shorter directory",
                                 c->endpoint + 6);
    }
    return 0;
}

tnd_crew *tnd_crew_new(const tnd_crew_options *opts)
{
    tnd_crew *c = tnd_xcalloc(1, sizeof(*c));

    c->opts = opts;
    c->link = opts->link;
    if (make_runtime(c) < 0 || (!opts->agents_later && tnd_crew_start(c) < 0))
        goto fail;
    return c;
fail:
    tnd_crew_destroy(&c, false);
    return NULL;
}

int tnd_crew_start(tnd_crew *c)
{
    const tnd_crew_options *opts = c->opts;
    tnd_pool_options po;

    if (c->link || c->pool)
        return 0;
    memset(&po, 0, sizeof(po));
    po.config = opts->config;
    po.endpoint = c->endpoint;
    po.logs_dir = opts->logs_dir;
    po.llm = opts->llm;
    po.base_url = opts->base_url;
    po.record = opts->record;
    po.runtime = c->runtime;
    po.verbose = opts->verbose;
    po.no_coder = opts->no_coder;
    if (!(c->pool = tnd_pool_new(&po)))
        /* an orchestrator.endpoint another process listens on, say */
        return tnd_error_is_config() ? TND_ECONFIG : TND_ERROR;
    return 0;
}

void tnd_crew_destroy(tnd_crew **self_p, bool keep)
{
    tnd_crew *c = self_p ? *self_p : NULL;

    if (!c)
        return;
    tnd_pool_destroy(&c->pool, STOP_GRACE_MS);
    if (c->runtime && keep && c->endpoint) {
        char *sock = tnd_fs_join(c->runtime, "broker.sock");
        unlink(sock);
        free(sock);
    }
    tnd_rundir_destroy(&c->rundir, keep);
    free(c->runtime);
    free(c->endpoint);
    free(c);
    *self_p = NULL;
}

const char *tnd_crew_runtime(const tnd_crew *self)
{
    return self->runtime;
}

const char *tnd_crew_endpoint(const tnd_crew *self)
{
    return self->endpoint;
}

/* ---- the port: a local broker, or the hub through the link ------------- */

static int port_submit(tnd_crew *c, const tnd_crew_request *q)
{
    return c->link
               ? tnd_link_submit(c->link, q->service, q->key, q->body, q->len)
               : tnd_broker_submit(tnd_pool_broker(c->pool), q->service, q->key,
                                   q->body, q->len);
}

static void port_cancel(tnd_crew *c, const char *key)
{
    if (c->link)
        tnd_link_cancel(c->link, key);
    else
        tnd_broker_cancel(tnd_pool_broker(c->pool), key);
}

/* The times the request under key went to an agent so far. Over a
 * link, as far as the hub's events said: an agent that took the request
 * and died before its first PARTIAL is not counted. */
static int port_dispatches(tnd_crew *c, const char *key)
{
    return c->link ? tnd_link_dispatches(c->link, key)
                   : tnd_broker_dispatches(tnd_pool_broker(c->pool), key);
}

static int port_poll(tnd_crew *c, tnd_broker_event *ev, long ms)
{
    return c->link ? tnd_link_poll(c->link, ev, ms)
                   : tnd_broker_poll(tnd_pool_broker(c->pool), ev, ms);
}

static void port_drop(tnd_crew *c, const char *worker, const char *why)
{
    if (c->link)
        tnd_link_drop(c->link, worker, why);
    else
        tnd_broker_drop_worker(tnd_pool_broker(c->pool), worker, why);
}

/* The agents of the pool; the hub's own are its business. */
static int port_tick(tnd_crew *c)
{
    return c->pool ? tnd_pool_tick(c->pool) : 0;
}

/* No agent serves service yet (the hub, not a session, says so in
 * serve). */
static bool port_none_for(tnd_crew *c, const char *service)
{
    return c->pool &&
           tnd_broker_workers(tnd_pool_broker(c->pool), service) == 0;
}

static bool is_reviewer(const char *service)
{
    return strncmp(service, "reviewer", 8) == 0;
}

/* No agent serves service yet: say so, naming an agent registered for a
 * service this run never asks (tandem-reviewer --service reviewer.1
 * without a quorum, a typo), which otherwise waits in silence beside
 * it. said: what was said before (0 nothing, 1 the wait alone): then
 * only such an agent is news. Returns what is said now, 1 or 2. */
static int say_waiting(tnd_crew *c, const char *service, int said)
{
    const char *its = NULL;
    const char *other =
        tnd_broker_worker_unasked(tnd_pool_broker(c->pool), !c->opts->no_coder,
                                  tnd_config_quorum(c->opts->config), &its);

    if (!other && !said)
        tnd_log_warn("waiting for a %s agent to connect to %s", service,
                     c->endpoint);
    else if (other)
        tnd_log_warn("waiting for a %s agent to connect to %s; agent %s is "
                     "registered for the service %s, which this run does "
                     "not ask%s%s",
                     service, c->endpoint, other, its,
                     is_reviewer(its) == is_reviewer(service)
                         ? ": start it with --service "
                         : "",
                     is_reviewer(its) == is_reviewer(service) ? service : "");
    return other ? 2 : 1;
}

/* The request of reqs under key, or NULL. */
static tnd_crew_request *request_for(tnd_crew_request *reqs, size_t n,
                                     const char *key)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(reqs[i].key, key) == 0)
            return &reqs[i];
    return NULL;
}

/* Stop waiting for q: what it was sent so far is counted, then the
 * broker forgets it. */
static void give_up(tnd_crew *self, tnd_crew_request *q)
{
    q->sent += port_dispatches(self, q->key);
    port_cancel(self, q->key);
}

static void cancel_open(tnd_crew *self, tnd_crew_request *reqs, size_t n,
                        int rc, const char *why)
{
    for (size_t i = 0; i < n; i++) {
        if (reqs[i].done)
            continue;
        give_up(self, &reqs[i]);
        reqs[i].done = true;
        reqs[i].rc = rc;
        reqs[i].error = tnd_xstrdup(why);
    }
}

/* The first failure among reqs, with the error set to it; 0 when none. */
static int first_failure(const tnd_crew_request *reqs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (reqs[i].rc != 0) {
            tnd_error_set("%s", reqs[i].error);
            return reqs[i].rc;
        }
    return 0;
}

/* A FINAL that does not answer q: drop the agent that sent it and ask
 * again, or give up on q (done, with the reason) after
 * TND_CREW_MAX_INVALID of them. False when the reply is usable. */
static bool refuse(tnd_crew *self, tnd_crew_request *q,
                   const tnd_broker_event *ev)
{
    char *why;

    if (tnd_answer_check(q->body, q->len, ev->body, ev->body_len, q->reply_type,
                         sizeof(q->reply_type), &q->parsed) == 0)
        return false;
    why = tnd_xasprintf("the %s agent %s sent a reply that cannot be used: "
                        "%s",
                        q->service, ev->worker, tnd_error_last());
    q->invalid++;
    port_drop(self, ev->worker, why);
    if (self->opts->interrupted && atomic_load(self->opts->interrupted)) {
        /* stopping: sent again, it was cancelled at once, and meanwhile
         * the broker could hand it to an agent, whose work was thrown
         * away (a reply taken as the stop came, take_waiting) */
        q->rc = TND_ECANCELLED;
        q->error = tnd_xasprintf("interrupted by signal %d; not asked again "
                                 "after %s",
                                 atomic_load(self->opts->interrupted), why);
        q->done = true;
    } else if (q->invalid >= TND_CREW_MAX_INVALID) {
        q->rc = -1;
        q->error =
            tnd_xasprintf("%s (%d such replies; giving up)", why, q->invalid);
        q->done = true;
    } else if (port_submit(self, q) < 0) {
        q->rc = -1;
        q->error =
            tnd_xasprintf("%s; cannot ask again: %s", why, tnd_error_last());
        q->done = true;
    } else {
        tnd_log_warn("%s; asking again (%d of %d)", why, q->invalid + 1,
                     TND_CREW_MAX_INVALID);
    }
    free(why);
    return true;
}

/* Whether a progress body says the agent still held the request when it
 * was sent again (it reconnected while working on it; PROTOCOL.md). */
static bool held(const char *body, size_t len)
{
    json_object *p = NULL;
    bool yes = false;

    if (!memmem(body, len, "held", 4) || tnd_json_parse(&p, body, len) < 0) {
        tnd_error_clear();
        return false;
    }
    yes = strcmp(tnd_json_str_or(p, "type", ""), "progress") == 0 &&
          strcmp(tnd_json_str_or(p, "phase", ""), "held") == 0;
    json_object_put(p);
    return yes;
}

/* Take ev for the request of reqs it names; clears ev. True when that
 * request is now done (answered, or given up on). */
static bool take(tnd_crew *self, tnd_crew_request *reqs, size_t n,
                 tnd_broker_event *ev, tnd_crew_progress_fn progress,
                 void *payload)
{
    tnd_crew_request *q = request_for(reqs, n, ev->key);
    bool done = false;

    if (q && !q->done && ev->kind != TND_BROKER_PARTIAL)
        q->sent += ev->dispatches;
    if (q && !q->done && ev->kind == TND_BROKER_FINAL && refuse(self, q, ev)) {
        done = q->done;
    } else if (q && !q->done && ev->kind == TND_BROKER_FINAL) {
        q->reply = ev->body;
        q->reply_len = ev->body_len;
        ev->body = NULL;
        q->done = done = true;
    } else if (q && !q->done && ev->kind == TND_BROKER_FAILED) {
        q->rc = -1;
        q->error = tnd_xstrdup(ev->error);
        q->done = done = true;
    } else if (q && ev->kind == TND_BROKER_PARTIAL &&
               held(ev->body, ev->body_len)) {
        q->held++;
    } else if (q && ev->kind == TND_BROKER_PARTIAL && progress) {
        progress(ev->body, ev->body_len, payload);
    }
    tnd_broker_event_clear(ev);
    return done;
}

/* Take the events a link holds already, without waiting: how many
 * requests they ended. Over a link only: polling the pool's broker
 * hands queued requests to agents, work a stopped session throws away. */
static size_t take_waiting(tnd_crew *self, tnd_crew_request *reqs, size_t n,
                           size_t open, tnd_crew_progress_fn progress,
                           void *payload)
{
    tnd_broker_event ev;
    size_t ended = 0;

    while (self->link && ended < open && tnd_link_poll(self->link, &ev, 0) == 1)
        if (take(self, reqs, n, &ev, progress, payload))
            ended++;
    return ended;
}

static int call_many(tnd_crew *self, tnd_crew_request *reqs, size_t n,
                     int64_t deadline, tnd_crew_progress_fn progress,
                     void *payload)
{
    int64_t asked = tnd_now_ms();
    size_t open = n;

    for (size_t i = 0; i < n; i++) {
        reqs[i].rc = 0;
        reqs[i].done = false;
        reqs[i].reply = NULL;
        reqs[i].reply_len = 0;
        reqs[i].reply_type[0] = '\0';
        reqs[i].parsed = NULL;
        reqs[i].error = NULL;
        reqs[i].invalid = 0;
        reqs[i].sent = 0;
        reqs[i].held = 0;
    }
    if (self->opts->interrupted && atomic_load(self->opts->interrupted)) {
        /* stopped already (a reply taken as the stop came): nothing is
         * sent, so no agent starts work that would be thrown away */
        for (size_t i = 0; i < n; i++) {
            reqs[i].done = true;
            reqs[i].rc = TND_ECANCELLED;
            reqs[i].error = tnd_xasprintf("interrupted by signal %d",
                                          atomic_load(self->opts->interrupted));
        }
        return first_failure(reqs, n);
    }
    for (size_t i = 0; i < n; i++)
        if (port_submit(self, &reqs[i]) < 0) {
            char *why = tnd_xstrdup(tnd_error_last());
            cancel_open(self, reqs, n, -1, why);
            free(why);
            return first_failure(reqs, n);
        }
    while (open > 0) {
        tnd_broker_event ev;
        long wait = tnd_clock_remaining(deadline, POLL_MS);
        int rc;

        if (self->opts->interrupted && atomic_load(self->opts->interrupted)) {
            char *why = tnd_xasprintf("interrupted by signal %d",
                                      atomic_load(self->opts->interrupted));
            /* a reply already here was paid for: taken, it is journaled
             * and not asked again when the session goes on (a stop
             * noticed on the PARTIAL before it threw it away) */
            open -= take_waiting(self, reqs, n, open, progress, payload);
            if (open > 0)
                cancel_open(self, reqs, n, TND_ECANCELLED, why);
            free(why);
            return first_failure(reqs, n);
        }
        if ((rc = port_poll(self, &ev, wait)) < 0) {
            char *why = tnd_xstrdup(tnd_error_last());
            cancel_open(self, reqs, n, -1, why);
            free(why);
            return first_failure(reqs, n);
        }
        if (rc == 1 && take(self, reqs, n, &ev, progress, payload))
            open--;
        if (port_tick(self) < 0) {
            char *why = tnd_xstrdup(tnd_error_last());
            cancel_open(self, reqs, n, -1, why);
            free(why);
            return first_failure(reqs, n);
        }
        if (progress && open > 0)
            progress(NULL, 0, payload); /* the timer tick */
        for (size_t i = 0; i < n; i++) {
            int role = is_reviewer(reqs[i].service);
            /* said once; again only to name an agent that registered
             * for a service not asked since (it may come late) */
            if (reqs[i].done || self->waiting_said[role] == 2 ||
                !port_none_for(self, reqs[i].service) ||
                tnd_now_ms() - asked <= 3000)
                continue;
            self->waiting_said[role] =
                say_waiting(self, reqs[i].service, self->waiting_said[role]);
        }
        if (open > 0 && tnd_now_ms() >= deadline) {
            for (size_t i = 0; i < n; i++)
                if (!reqs[i].done) {
                    char *why = tnd_xasprintf("no reply from the %s in time",
                                              reqs[i].service);
                    give_up(self, &reqs[i]);
                    reqs[i].done = true;
                    reqs[i].rc = TND_ETIMEOUT;
                    reqs[i].error = why;
                }
            return first_failure(reqs, n);
        }
    }
    return first_failure(reqs, n);
}

int tnd_crew_call_many(tnd_crew *self, tnd_crew_request *reqs, size_t n,
                       int64_t deadline, tnd_crew_progress_fn progress,
                       void *payload)
{
    int rc = call_many(self, reqs, n, deadline, progress, payload);

    for (size_t i = 0; i < n; i++) {
        /* sent again to the agent that had it, and still held there:
         * one dispatch, as far as the work and its calls go */
        if (reqs[i].held > 0 && reqs[i].sent > 1)
            reqs[i].sent = reqs[i].sent - reqs[i].held > 1
                               ? reqs[i].sent - reqs[i].held
                               : 1;
        if (reqs[i].sent > 1)
            self->resent += reqs[i].sent - 1;
    }
    return rc;
}

long tnd_crew_resent(const tnd_crew *self)
{
    return self->resent;
}

int tnd_crew_idle(tnd_crew *self, long ms)
{
    tnd_broker_event ev;
    int rc;

    if (self->opts->interrupted && atomic_load(self->opts->interrupted))
        return tnd_error_set("interrupted by signal %d",
                             atomic_load(self->opts->interrupted)),
               TND_ECANCELLED;
    if ((rc = port_poll(self, &ev, ms)) < 0)
        return -1;
    if (rc == 1)
        tnd_broker_event_clear(&ev);
    return port_tick(self);
}

void tnd_crew_request_clear(tnd_crew_request *q)
{
    free(q->reply);
    free(q->error);
    json_object_put(q->parsed);
    q->reply = NULL;
    q->error = NULL;
    q->parsed = NULL;
}

int tnd_crew_call(tnd_crew *self, const char *service, const char *key,
                  const char *body, size_t len, int64_t deadline,
                  tnd_crew_progress_fn progress, void *payload, char **reply,
                  size_t *reply_len)
{
    tnd_crew_request q = {
        .service = service, .key = key, .body = body, .len = len};
    int rc = tnd_crew_call_many(self, &q, 1, deadline, progress, payload);

    *reply = q.reply;
    *reply_len = q.reply_len;
    q.reply = NULL;
    tnd_crew_request_clear(&q);
    return rc;
}
