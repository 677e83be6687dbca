/* The hub of tandem serve (see hub.h): the broker's events, the session
 * threads' links and the clients, all on the main thread. */
#include "orchestrator/hub.h"
#include "orchestrator/hub_int.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
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
#include "common/config.h"
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
#include "orchestrator/session.h"
#include "proto/client.h"
#include "proto/json.h"

#define TND_HUB_LINKS "inproc://tandem-hub"
#define POLL_MS       100
#define ALIVE_MS      2000
#define STOP_GRACE_MS 5000

/* ---- sessions ----------------------------------------------------------- */

size_t tnd_hub_count(const tnd_hub *h, tnd_hubsession_state state)
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

tnd_hubsession *tnd_hub_by_id(tnd_hub *h, const char *id)
{
    for (size_t i = 0; i < h->n; i++)
        if (strcmp(tnd_hubsession_id(h->s[i]), id) == 0)
            return h->s[i];
    return NULL;
}

tnd_hubsession *tnd_hub_add(tnd_hub *h, const char *repo, const char *id,
                            const char *dir, const char *owner)
{
    char name[32];
    tnd_hubsession *s;

    snprintf(name, sizeof(name), "s%lu", ++h->seq);
    s = tnd_hubsession_new(name, repo, id, dir);
    tnd_hubsession_set_owner(s, owner);
    TND_GROW(h->s, h->alloc, h->n + 1);
    h->s[h->n++] = s;
    return s;
}

void tnd_hub_forget(tnd_hub *h, tnd_hubsession *s)
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
long tnd_hub_ahead_of(const tnd_hub *h, const tnd_hubsession *s)
{
    long n = 0, free_slots =
                    h->o->max_sessions - (long)tnd_hub_count(h, TND_HS_RUNNING);

    if (tnd_hubsession_state_of(s) == TND_HS_RUNNING)
        return 0; /* it holds a slot: in a full server it "waited" on one */
    for (size_t i = 0; i < h->n && h->s[i] != s; i++)
        n += tnd_hubsession_state_of(h->s[i]) == TND_HS_QUEUED;
    return n < free_slots ? 0 : n - free_slots + 1;
}

/* The outcome the accepted list keeps for s, which ended with code (what
 * its clients are told): TND_EXIT_HUMAN when its journal says it waits
 * for a person, else code. An answer the session refused (the files
 * changed under an attempt it replayed) ends its run with exit 1 to the
 * person who gave it, and leaves it waiting: kept as 1, a client that
 * came back for it was told it failed (what --attach said was right only
 * because it read the journal again). Read from the session's directory
 * as every answer to a client reads it (tnd_session_dir_open). */
static int outcome_of(const tnd_hubsession *s, int code)
{
    const char *id = tnd_hubsession_id(s);
    json_object *records = NULL;
    tnd_session_status status;
    char *path;
    int dir;

    if (code == TND_EXIT_OK || code == TND_EXIT_HUMAN)
        return code;
    if ((dir = tnd_session_dir_open(tnd_hubsession_repo(s), id)) < 0) {
        tnd_error_clear(); /* gone: the code it ended with */
        return code;
    }
    path = tnd_fs_join(tnd_hubsession_dir(s), "journal.jsonl");
    if (tnd_journal_read_at(&records, dir, path) == 0 &&
        tnd_journal_status(&status, records) == 0 &&
        status == TND_SESSION_WAITING)
        code = TND_EXIT_HUMAN;
    tnd_error_clear();
    json_object_put(records);
    free(path);
    close(dir);
    return code;
}

/* s ended with code: its clients get the outcome, the accepted list
 * ends it and keeps its outcome (outcome_of) unless it was stopped (a
 * stopped session is resumed by the next server), and the hub lets go
 * of it. */
static void ended(tnd_hub *h, tnd_hubsession *s, int code)
{
    bool stopped = code > TND_EXIT_SIGNAL;

    tnd_hubsession_finish(s, h->broker, code);
    fprintf(stderr, "tandem serve: session %s %s (exit %d)\n",
            tnd_hubsession_id(s),
            stopped ? "stopped; the next server resumes it" : "ended", code);
    if (!stopped &&
        tnd_accepted_end(h->accepted, tnd_hubsession_id(s), outcome_of(s, code),
                         tnd_hubsession_owner(s)) < 0)
        tnd_log_error("%s", tnd_error_last());
    tnd_hub_forget(h, s);
}

/* Start queued sessions while slots are free. */
void tnd_hub_start_queued(tnd_hub *h)
{
    for (size_t i = 0; i < h->n && (long)tnd_hub_count(h, TND_HS_RUNNING) <
                                       h->o->max_sessions;
         i++) {
        tnd_hubsession *s = h->s[i];
        if (tnd_hubsession_state_of(s) != TND_HS_QUEUED)
            continue;
        tnd_run_host shared = {
            .insecure = tnd_pool_insecure(h->pool) ? h->o->endpoint : NULL,
            .baselines = h->baselines,
            .zmq_ctx = h->ctx,
            .config = h->o->config};
        if (tnd_hubsession_start(s, TND_HUB_LINKS, &shared) < 0) {
            char *why = tnd_xasprintf("cannot start session %s: %s",
                                      tnd_hubsession_id(s), tnd_error_last());
            tnd_log_error("%s", why);
            tnd_hubsession_fail(s, h->broker, "failed", why);
            free(why);
            tnd_hub_forget(h, s);
            i--;
        }
    }
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
    /* every event carries the request's count as it was when the agent
     * sent it: counted again here, a PARTIAL read in one batch with its
     * FINAL said 0 (the FINAL let the request go), and a session stopped
     * then counted a call its model made as never asked */
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
                tnd_hub_count(h, TND_HS_RUNNING),
                tnd_hub_count(h, TND_HS_RUNNING) == 1 ? "" : "s",
                h->o->drain_ms / 1000, tnd_hub_count(h, TND_HS_QUEUED));
        for (size_t i = 0; i < h->n; i++) {
            tnd_hubsession *s = h->s[i];
            if (tnd_hubsession_state_of(s) != TND_HS_QUEUED)
                continue;
            tnd_hubsession_fail(s, h->broker, "stopping",
                                "tandem serve stopped before this session "
                                "started; it is on disk, and the next tandem "
                                "serve runs it (tandem submit --attach ID "
                                "follows it then)");
            tnd_hub_forget(h, s);
            i--;
        }
    }
    if (h->draining && !h->stopped &&
        (n >= 2 || tnd_now_ms() >= h->drain_deadline)) {
        h->stopped = true;
        if (tnd_hub_count(h, TND_HS_RUNNING))
            fprintf(stderr, "tandem serve: stopping %zu running session%s\n",
                    tnd_hub_count(h, TND_HS_RUNNING),
                    tnd_hub_count(h, TND_HS_RUNNING) == 1 ? "" : "s");
        for (size_t i = 0; i < h->n; i++)
            tnd_hubsession_stop(h->s[i], h->router, SIGTERM);
    }
}

/* ---- the loop ----------------------------------------------------------- */

/* Requests waiting for a service no agent serves, said once a while:
 * with agents.coder.count: 0 (agents on other hosts) and none
 * connected, the server and its clients said nothing until the request
 * timed out, where tandem run warns after 3 s. */
static void unserved(tnd_hub *h)
{
    int members = tnd_config_quorum(h->o->config);
    int64_t now = tnd_now_ms();

    for (int k = 0; k < 2 + (members > 1 ? members : 0) && k < 2 + 32; k++) {
        char service[32];
        if (k < 2)
            snprintf(service, sizeof(service), "%s",
                     k == 0 ? "coder" : "reviewer");
        else
            snprintf(service, sizeof(service), "reviewer.%d", k - 1);
        /* local agents (count > 0) are the pool's to start, and slow
         * ones (valgrind) are no news; remote ones may never come */
        int local =
            k == 0 ? h->o->config->coder.count : h->o->config->reviewer.count;
        if (local > 0 || tnd_broker_pending(h->broker, service) == 0 ||
            tnd_broker_workers(h->broker, service) > 0) {
            h->unserved_since[k] = 0;
            h->unserved_said[k] = 0;
        } else if (!h->unserved_since[k]) {
            h->unserved_since[k] = now;
        } else if (h->unserved_said[k] < 2 &&
                   now - h->unserved_since[k] > 3000) {
            /* said once; again only to name an agent that registered for
             * a service not asked since (it may come late) */
            const char *its = NULL;
            const char *other =
                tnd_broker_worker_unasked(h->broker, true, members, &its);
            if (!h->unserved_said[k])
                fprintf(stderr,
                        "tandem serve: requests for the %s wait, and no %s "
                        "agent is connected to %s; start one there "
                        "(tandem-%s --connect %s ...), or set its count in "
                        "agents.yaml\n",
                        service, service, tnd_hub_endpoint(h),
                        k == 0 ? "coder" : "reviewer", tnd_hub_endpoint(h));
            if (other)
                fprintf(stderr,
                        "tandem serve: agent %s is registered for the "
                        "service %s, which no session asks\n",
                        other, its);
            h->unserved_said[k] = other ? 2 : 1;
        }
    }
}

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
                tnd_hub_on_client(self, &ev);
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
            tnd_hub_start_queued(self);
        alive(self);
        unserved(self);
        if (self->draining && self->n == 0)
            return 0;
    }
}

/* ---- life --------------------------------------------------------------- */

int tnd_hub_code_of_ended(json_object *records)
{
    tnd_session_status status;
    json_object *task = json_object_array_get_idx(records, 0);

    if (tnd_journal_status(&status, records) < 0) {
        tnd_error_clear();
        return TND_EXIT_FAILED;
    }
    switch (status) {
    case TND_SESSION_APPROVED:
        return TND_EXIT_OK;
    case TND_SESSION_WAITING:
        return TND_EXIT_HUMAN;
    case TND_SESSION_FAILED:
        /* a review that could not be done; run says failed */
        return task && json_object_object_get_ex(task, "review", NULL)
                   ? TND_EXIT_NOT_REVIEWED
                   : TND_EXIT_FAILED;
    default: /* rejected, or a final escalation (gate.escalate never) */
        return TND_EXIT_FAILED;
    }
}

/* id, when it matches part better than best (or as well, another id):
 * *best, *found and *count follow. */
static void consider(const char *id, const char *part, bool visible, int *best,
                     const char **found, size_t *count)
{
    int m = id ? tnd_session_match(id, part) : 0;

    /* a part of another key's id is no match: which ids it matched told
     * a client other clients' sessions, a character at a time (the
     * whole id is still found, and refused as not this key's) */
    if (m == 0 || m < *best || (!visible && m < 2))
        return;
    if (m > *best) {
        *best = m;
        *count = 0;
        *found = NULL;
    }
    if (!*found || strcmp(*found, id) != 0) {
        *count += 1;
        *found = id;
    }
}

/* Whether a session of owner (NULL: none known) is owner's to find by a
 * part of its id (mine NULL: every session is). */
static bool owned(const char *owner, const char *mine)
{
    return !mine || (owner && strcmp(owner, mine) == 0);
}

char *tnd_hub_resolve_id(const tnd_hub *h, const char *part, const char *mine,
                         bool *none)
{
    const char *found = NULL;
    size_t count = 0;
    int best = 0;
    tnd_accepted_outcome e;

    for (size_t i = 0; i < h->n; i++)
        consider(tnd_hubsession_id(h->s[i]), part,
                 owned(tnd_hubsession_owner(h->s[i]), mine), &best, &found,
                 &count);
    /* not running here: whose they are is not known */
    for (size_t i = 0; i < tnd_accepted_pending(h->accepted); i++)
        consider(tnd_accepted_id(h->accepted, i), part, !mine, &best, &found,
                 &count);
    for (size_t k = 0; k < tnd_accepted_ended(h->accepted); k++) {
        const char *id = tnd_accepted_ended_id(h->accepted, k);
        consider(id, part,
                 id && tnd_accepted_outcome_of(h->accepted, id, &e) &&
                     owned(e.owner, mine),
                 &best, &found, &count);
    }
    *none = count == 0;
    if (best == 2)
        return tnd_xstrdup(part); /* the whole id, wherever it is */
    if (count == 1)
        return tnd_xstrdup(found);
    if (count == 0)
        tnd_error_set("no session %s runs or waits in this server; a "
                      "session that ended is in its repository (tandem show "
                      "--repo REPO %s)",
                      part, part);
    else
        tnd_error_set("'%s' matches more than one session of this server; "
                      "give more of the id",
                      part);
    return NULL;
}

bool tnd_hub_runs_config(const tnd_hub *h, const char *config)
{
    const char *mine = h->o->config->path;
    char *real;
    bool same;

    if (!config)
        return mine == NULL;
    real = tnd_fs_realpath(config);
    same = real && mine && strcmp(real, mine) == 0;
    free(real);
    tnd_error_clear();
    return same;
}

int tnd_hub_code_now(int dirfd, const char *dir, int code)
{
    char *path;
    json_object *records = NULL;
    tnd_session_status status;

    if (dirfd < 0)
        return code;
    path = tnd_fs_join(dir, "journal.jsonl");
    if (tnd_journal_read_at(&records, dirfd, path) == 0 &&
        tnd_journal_status(&status, records) == 0 && status != TND_SESSION_OPEN)
        code = tnd_hub_code_of_ended(records);
    tnd_error_clear();
    json_object_put(records);
    free(path);
    return code;
}

tnd_hub *tnd_hub_new(const tnd_hub_options *opts)
{
    tnd_hub *h = tnd_xcalloc(1, sizeof(*h));
    tnd_pool_options po;
    int hwm = 0;

    h->o = opts;
    if (opts->config->gate.baseline_reuse_s > 0)
        h->baselines = tnd_basecache_new(
            TND_BASECACHE_MAX,
            (int64_t)opts->config->gate.baseline_reuse_s * 1000);
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
    tnd_hub_take_over(h);
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
        tnd_hubsession_stop(h->s[i], h->router, SIGTERM);
    while (h->n > 0)
        tnd_hub_forget(h, h->s[h->n - 1]);
    free(h->s);
    if (h->router) {
        zmq_setsockopt(h->router, ZMQ_LINGER, &linger, sizeof(linger));
        zmq_close(h->router);
    }
    if (h->ctx)
        zmq_ctx_term(h->ctx);
    tnd_pool_destroy(&h->pool, STOP_GRACE_MS);
    tnd_accepted_close(&h->accepted);
    tnd_basecache_destroy(&h->baselines); /* every session thread ended */
    tnd_str_list_free(&h->left);
    free(h->left_why);
    free(h);
    *self_p = NULL;
}

const char *tnd_hub_endpoint(const tnd_hub *self)
{
    return tnd_broker_endpoint(self->broker);
}
