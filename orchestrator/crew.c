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
#include "orchestrator/rundir.h"
#include "orchestrator/supervisor.h"
#include "proto/answer.h"

#define POLL_MS       200
#define STOP_GRACE_MS 5000
#define IPC_PATH_MAX  100 /* sun_path is 108 bytes; keep a margin */
#define MAX_ARGS      48

static const char *const roles[2] = {"coder", "reviewer"};

struct tnd_crew {
    const tnd_crew_options *opts;
    tnd_rundir *rundir; /* the runtime directory, held while the run lives */
    char *runtime;      /* its path */
    char *endpoint;
    char *programs[2];
    tnd_broker *broker;
    tnd_supervisor *sup;
    bool waiting_said[2];
};

static const tnd_agent_config *agent(const tnd_config *cfg, int role)
{
    return role ? &cfg->reviewer : &cfg->coder;
}

/* The agent program for role: the config's, or the one installed next to
 * this tandem. NULL (error set) when it cannot be run. Caller frees. */
static char *program(const tnd_config *cfg, int role)
{
    const tnd_agent_config *a = agent(cfg, role);
    char *self, *prog;

    if (a->program.argv) {
        const char *p = a->program.argv[0];
        prog = p[0] == '/' || !strchr(p, '/') ? tnd_xstrdup(p)
                                              : tnd_fs_join(cfg->dir, p);
    } else {
        self = tnd_fs_self_dir();
        prog = tnd_xasprintf("%s/tandem-%s", self ? self : ".", roles[role]);
        free(self);
    }
    if (strchr(prog, '/') && access(prog, X_OK) < 0) {
        tnd_error_sys("agent program %s cannot be run (build it with 'make', "
                      "or set agents.%s.command in agents.yaml)",
                      prog, roles[role]);
        free(prog);
        return NULL;
    }
    return prog;
}

int tnd_crew_check(const tnd_config *config, bool coder)
{
    for (int role = coder ? 0 : 1; role < 2; role++) {
        char *prog;
        if (agent(config, role)->count == 0) {
            if (!*config->orchestrator.endpoint)
                return tnd_error_config(
                    "agents.%s.count is 0, so %s agents must connect by "
                    "themselves; set orchestrator.endpoint to an address "
                    "they can reach (e.g. tcp://0.0.0.0:5555)",
                    roles[role], roles[role]);
            continue;
        }
        if (!(prog = program(config, role)))
            return TND_ECONFIG;
        free(prog);
    }
    return 0;
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

/* argv[n] and argv[n + 1] are option and its value, when there is one;
 * the new n. */
static size_t add_option(const char **argv, size_t n, const char *option,
                         const char *value)
{
    if (!value)
        return n;
    argv[n] = option;
    argv[n + 1] = value;
    return n + 2;
}

static int start_agents(tnd_crew *c)
{
    const tnd_crew_options *o = c->opts;
    const tnd_config *cfg = o->config;
    char hb[32], lv[32];

    snprintf(hb, sizeof(hb), "%d", cfg->orchestrator.heartbeat_ms);
    snprintf(lv, sizeof(lv), "%d", cfg->orchestrator.liveness);
    c->sup = tnd_supervisor_new();
    for (int role = o->no_coder ? 1 : 0; role < 2; role++) {
        const tnd_agent_config *a = agent(cfg, role);
        bool quorum = role == 1 && tnd_config_quorum(cfg) > 1;
        for (int i = 1; i <= a->count; i++) {
            const char *argv[MAX_ARGS];
            size_t n = 1;
            char *name = tnd_xasprintf("%s-%d", roles[role], i);
            char service[32], member[16];
            char *file = tnd_xasprintf("%s.log", name);
            char *log = tnd_fs_join(o->logs_dir, file);
            tnd_agent_spec spec;
            int error;

            argv[0] = c->programs[role];
            for (char **p = a->program.argv ? a->program.argv + 1 : NULL;
                 p && *p && n < MAX_ARGS - 24; p++)
                argv[n++] = *p;
            argv[n++] = "--connect";
            argv[n++] = c->endpoint;
            argv[n++] = "--id";
            argv[n++] = name;
            argv[n++] = "--heartbeat";
            argv[n++] = hb;
            argv[n++] = "--liveness";
            argv[n++] = lv;
            n = add_option(argv, n, "--config", cfg->path);
            n = add_option(argv, n, "--llm", o->llm);
            n = add_option(argv, n, "--base-url", o->base_url);
            n = add_option(argv, n, "--record", o->record);
            if (o->verbose)
                argv[n++] = "--verbose";
            snprintf(service, sizeof(service), "%s", roles[role]);
            if (quorum) {
                /* each member serves its own service, with its own model */
                snprintf(service, sizeof(service), "reviewer.%d", i);
                snprintf(member, sizeof(member), "%d", i);
                argv[n++] = "--service";
                argv[n++] = service;
                argv[n++] = "--member";
                argv[n++] = member;
            }
            argv[n] = NULL;
            spec.name = name;
            spec.service = service;
            spec.argv = argv;
            spec.log_path = log;
            error = tnd_supervisor_add(c->sup, &spec);
            free(name);
            free(file);
            free(log);
            if (error < 0)
                return -1;
        }
    }
    return 0;
}

/* A local agent that stopped heartbeating while its process lives (a
 * SIGSTOP, a hang) would keep its place and serve nobody: kill it, so
 * the supervisor restarts it and its request finds an agent. */
static void agent_silent(const char *name, void *payload)
{
    tnd_crew *c = payload;

    if (c->sup)
        tnd_supervisor_kill(c->sup, name);
}

tnd_crew *tnd_crew_new(const tnd_crew_options *opts)
{
    tnd_crew *c = tnd_xcalloc(1, sizeof(*c));
    tnd_broker_options bo;

    c->opts = opts;
    for (int role = opts->no_coder ? 1 : 0; role < 2; role++)
        if (agent(opts->config, role)->count > 0 &&
            !(c->programs[role] = program(opts->config, role)))
            goto fail;
    if (make_runtime(c) < 0)
        goto fail;
    memset(&bo, 0, sizeof(bo));
    bo.endpoint = c->endpoint;
    bo.heartbeat_ms = opts->config->orchestrator.heartbeat_ms;
    bo.liveness = opts->config->orchestrator.liveness;
    bo.silent = agent_silent;
    bo.silent_payload = c;
    if (!(c->broker = tnd_broker_new(&bo)) ||
        tnd_fs_mkdirs(opts->logs_dir, 0755) < 0 || start_agents(c) < 0)
        goto fail;
    return c;
fail:
    tnd_crew_destroy(&c, false);
    return NULL;
}

void tnd_crew_destroy(tnd_crew **self_p, bool keep)
{
    tnd_crew *c = self_p ? *self_p : NULL;

    if (!c)
        return;
    tnd_supervisor_destroy(&c->sup, STOP_GRACE_MS);
    tnd_broker_destroy(&c->broker);
    if (c->runtime && keep) {
        char *sock = tnd_fs_join(c->runtime, "broker.sock");
        unlink(sock);
        free(sock);
    }
    tnd_rundir_destroy(&c->rundir, keep);
    free(c->programs[0]);
    free(c->programs[1]);
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

static void agent_gone(const char *name, void *payload)
{
    tnd_broker_worker_gone(payload, name);
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
    q->sent += tnd_broker_dispatches(self->broker, q->key);
    tnd_broker_cancel(self->broker, q->key);
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

static bool is_reviewer(const char *service)
{
    return strncmp(service, "reviewer", 8) == 0;
}

/* A FINAL that does not answer q: drop the agent that sent it and ask
 * again, or give up on q (done, with the reason) after
 * TND_CREW_MAX_INVALID of them. False when the reply is usable. */
static bool refuse(tnd_crew *self, tnd_crew_request *q,
                   const tnd_broker_event *ev)
{
    char *why;

    if (tnd_answer_check(q->body, q->len, ev->body, ev->body_len) == 0)
        return false;
    why = tnd_xasprintf("the %s agent %s sent a reply that cannot be used: "
                        "%s",
                        q->service, ev->worker, tnd_error_last());
    q->invalid++;
    tnd_broker_drop_worker(self->broker, ev->worker, why);
    if (q->invalid >= TND_CREW_MAX_INVALID) {
        q->rc = -1;
        q->error =
            tnd_xasprintf("%s (%d such replies; giving up)", why, q->invalid);
        q->done = true;
    } else if (tnd_broker_submit(self->broker, q->service, q->key, q->body,
                                 q->len) < 0) {
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

int tnd_crew_call_many(tnd_crew *self, tnd_crew_request *reqs, size_t n,
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
        reqs[i].error = NULL;
        reqs[i].invalid = 0;
        reqs[i].sent = 0;
    }
    for (size_t i = 0; i < n; i++)
        if (tnd_broker_submit(self->broker, reqs[i].service, reqs[i].key,
                              reqs[i].body, reqs[i].len) < 0) {
            char *why = tnd_xstrdup(tnd_error_last());
            cancel_open(self, reqs, n, -1, why);
            free(why);
            return first_failure(reqs, n);
        }
    while (open > 0) {
        tnd_broker_event ev;
        long wait = tnd_clock_remaining(deadline, POLL_MS);
        int rc;

        if (self->opts->interrupted && *self->opts->interrupted) {
            char *why = tnd_xasprintf("interrupted by signal %d",
                                      (int)*self->opts->interrupted);
            cancel_open(self, reqs, n, TND_ECANCELLED, why);
            free(why);
            return first_failure(reqs, n);
        }
        if ((rc = tnd_broker_poll(self->broker, &ev, wait)) < 0) {
            char *why = tnd_xstrdup(tnd_error_last());
            cancel_open(self, reqs, n, -1, why);
            free(why);
            return first_failure(reqs, n);
        }
        if (rc == 1) {
            tnd_crew_request *q = request_for(reqs, n, ev.key);
            if (q && !q->done && ev.kind != TND_BROKER_PARTIAL)
                q->sent += ev.dispatches;
            if (q && !q->done && ev.kind == TND_BROKER_FINAL &&
                refuse(self, q, &ev)) {
                if (q->done)
                    open--;
            } else if (q && !q->done && ev.kind == TND_BROKER_FINAL) {
                q->reply = ev.body;
                q->reply_len = ev.body_len;
                ev.body = NULL;
                q->done = true;
                open--;
            } else if (q && !q->done && ev.kind == TND_BROKER_FAILED) {
                q->rc = -1;
                q->error = tnd_xstrdup(ev.error);
                q->done = true;
                open--;
            } else if (q && ev.kind == TND_BROKER_PARTIAL && progress) {
                progress(ev.body, ev.body_len, payload);
            }
            tnd_broker_event_clear(&ev);
        }
        if (tnd_supervisor_tick(self->sup, agent_gone, self->broker) < 0) {
            char *why = tnd_xstrdup(tnd_error_last());
            cancel_open(self, reqs, n, -1, why);
            free(why);
            return first_failure(reqs, n);
        }
        for (size_t i = 0; i < n; i++) {
            int role = is_reviewer(reqs[i].service);
            if (reqs[i].done || self->waiting_said[role] ||
                tnd_broker_workers(self->broker, reqs[i].service) > 0 ||
                tnd_now_ms() - asked <= 3000)
                continue;
            tnd_log_warn("waiting for a %s agent to connect to %s",
                         reqs[i].service, self->endpoint);
            self->waiting_said[role] = true;
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

int tnd_crew_idle(tnd_crew *self, long ms)
{
    tnd_broker_event ev;
    int rc;

    if (self->opts->interrupted && *self->opts->interrupted)
        return tnd_error_set("interrupted by signal %d",
                             (int)*self->opts->interrupted),
               TND_ECANCELLED;
    if ((rc = tnd_broker_poll(self->broker, &ev, ms)) < 0)
        return -1;
    if (rc == 1)
        tnd_broker_event_clear(&ev);
    return tnd_supervisor_tick(self->sup, agent_gone, self->broker);
}

void tnd_crew_request_clear(tnd_crew_request *q)
{
    free(q->reply);
    free(q->error);
    q->reply = NULL;
    q->error = NULL;
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
