/* The local agents and their broker (see pool.h). */
#include "orchestrator/pool.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/error.h"
#include "common/fs.h"
#include "common/log.h"
#include "common/str.h"
#include "common/xalloc.h"
#include "orchestrator/rundir.h"
#include "orchestrator/supervisor.h"
#include "proto/mdp.h"

#define MAX_ARGS 48

static const char *const roles[2] = {"coder", "reviewer"};

struct tnd_pool {
    tnd_broker *broker;
    tnd_supervisor *sup;
    /* CURVE on a tcp:// endpoint: our key pair (the local agents use it
     * too) and the keys admitted; curve false: none */
    bool curve;
    bool insecure; /* tcp:// beyond loopback without CURVE, allowed */
    tnd_curve_pair pair;
    tnd_curve_list authorized;
    tnd_curve_entry own;  /* our key in it: the local agents' */
    const char *key_file; /* the config's curve_key, for the agents */
    char *runtime;        /* --runtime for the local reviewers */
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

/* Forget the keys setup_transport loaded (the secret one wiped). */
static void release_keys(tnd_pool *p)
{
    tnd_curve_list_clear(&p->authorized);
    memset(&p->pair, 0, sizeof(p->pair));
}

/* Whether a tcp:// endpoint binds only loopback. */
static bool loopback(const char *endpoint)
{
    const char *host = endpoint + strlen("tcp://");

    return tnd_str_starts_with(host, "127.") ||
           tnd_str_starts_with(host, "localhost:") ||
           tnd_str_starts_with(host, "[::1]:");
}

/* What a tcp:// endpoint needs: CURVE with the configured keys (loaded
 * into p), or an explicit insecure (said on stderr unless this is only a
 * check), on loopback too: every user of this host can reach a loopback
 * port, and one of them could register as a reviewer and approve any
 * change of the run (agents alone did without it there), or, with
 * clients (tandem serve), run tasks in any repository the server's user
 * can read. */
static int setup_transport(tnd_pool *p, const tnd_config *cfg,
                           const char *endpoint, bool clients, bool check)
{
    const tnd_orchestrator_config *oc = &cfg->orchestrator;
    tnd_curve_entry *self;

    if (!tnd_str_starts_with(endpoint, "tcp://"))
        return 0;
    if (!*oc->curve_key) {
        if (!oc->insecure && !clients && loopback(endpoint))
            return tnd_error_config(
                "%s has no CURVE, and every user of this host can connect "
                "to a loopback port: any of them could act as your reviewer "
                "and approve any change. Leave orchestrator.endpoint out for "
                "the private ipc:// default, set orchestrator.curve_key and "
                "orchestrator.authorized_keys (tandem keys generate writes "
                "keys), or set orchestrator.insecure: true (--insecure) if "
                "you trust every local user",
                endpoint);
        if (!oc->insecure && clients && loopback(endpoint))
            return tnd_error_config(
                "%s has no CURVE, and every user of this host can connect "
                "to a loopback port: any of them could submit tasks in your "
                "repositories and answer your sessions. Leave out --bind for "
                "the private ipc:// default, set orchestrator.curve_key and "
                "orchestrator.authorized_keys (tandem keys generate writes "
                "keys), or give --insecure if you trust every local user",
                endpoint);
        if (!oc->insecure)
            return tnd_error_config(
                "orchestrator.endpoint %s accepts connections from other "
                "hosts without CURVE, so anyone who connects could act as an "
                "agent: set orchestrator.curve_key and "
                "orchestrator.authorized_keys (tandem keys generate writes "
                "keys), or orchestrator.insecure: true on a network you "
                "trust",
                endpoint);
        if (!check)
            tnd_log_warn("orchestrator.insecure: %s has no CURVE: anyone "
                         "who can connect may act as an agent%s",
                         endpoint, clients ? " or a client" : "");
        p->insecure = true;
        return 0;
    }
    if (!*oc->authorized_keys)
        return tnd_error_config("orchestrator.curve_key is set but "
                                "orchestrator.authorized_keys is not: list "
                                "the agents' public keys with their roles");
    if (tnd_curve_read_pair(&p->pair, oc->curve_key) < 0 ||
        tnd_curve_list_load(&p->authorized, oc->authorized_keys) < 0)
        return tnd_error_config("%s", tnd_error_last());
    /* the local agents connect with our own key */
    p->authorized.entries = tnd_xrealloc(
        p->authorized.entries, p->authorized.n + 1, sizeof(tnd_curve_entry));
    self = &p->authorized.entries[p->authorized.n++];
    memset(self, 0, sizeof(*self));
    memcpy(self->public_key, p->pair.public_key, TND_CURVE_Z85_LEN + 1);
    self->roles = TND_CURVE_CODER | TND_CURVE_REVIEWER;
    snprintf(self->name, sizeof(self->name), "tandem's own agents");
    p->own = *self;
    p->key_file = oc->curve_key;
    p->curve = true;
    return 0;
}

const char *tnd_pool_insecure_endpoint(const tnd_config *config)
{
    const tnd_orchestrator_config *oc = &config->orchestrator;

    return tnd_str_starts_with(oc->endpoint, "tcp://") && !*oc->curve_key &&
                   oc->insecure && !loopback(oc->endpoint)
               ? oc->endpoint
               : NULL;
}

int tnd_pool_check(const tnd_config *config, const char *endpoint, bool coder,
                   bool clients)
{
    if (!endpoint)
        endpoint = config->orchestrator.endpoint;
    if (*endpoint && tnd_mdp_endpoint_check(endpoint, true) < 0)
        return tnd_error_config("orchestrator.endpoint: %s", tnd_error_last());
    for (int role = coder ? 0 : 1; role < 2; role++) {
        char *prog;
        if (agent(config, role)->count == 0) {
            if (!*endpoint)
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
    {
        /* the key files load: a bad one is exit 2 before anything starts */
        tnd_pool probe;
        int rc;
        memset(&probe, 0, sizeof(probe));
        rc = setup_transport(&probe, config, endpoint, clients, true);
        release_keys(&probe);
        return rc;
    }
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

/* The agents of one role, started as children with --connect. */
static int start_role(tnd_pool *p, const tnd_pool_options *o, int role,
                      const char *prog)
{
    const tnd_config *cfg = o->config;
    const tnd_agent_config *a = agent(cfg, role);
    bool quorum = role == 1 && tnd_config_quorum(cfg) > 1;
    /* as bound: a tcp port 0 or "*" resolved */
    const char *endpoint = tnd_broker_endpoint(p->broker);
    char hb[32], lv[32];

    /* each member's copies, in processes of at most a->threads */
    int copies = o->copies > 0 ? o->copies : 1;
    int per = a->threads > 0 ? a->threads : 1;
    int nproc = (copies + per - 1) / per;

    snprintf(hb, sizeof(hb), "%d", cfg->orchestrator.heartbeat_ms);
    snprintf(lv, sizeof(lv), "%d", cfg->orchestrator.liveness);
    for (int k = 1; k <= a->count * nproc; k++) {
        /* the k-th agent of the role: member i of its set, process j of
         * that member's copies */
        int i = (k - 1) % a->count + 1, j = (k - 1) / a->count;
        int threads = copies - j * per < per ? copies - j * per : per;
        const char *argv[MAX_ARGS];
        size_t n = 1;
        char *name = tnd_xasprintf("%s-%d", roles[role], k);
        char service[32], member[16], nthreads[16];
        char *file = tnd_xasprintf("%s.log", name);
        char *log = tnd_fs_join(o->logs_dir, file);
        tnd_agent_spec spec;
        int error;

        argv[0] = prog;
        for (char **q = a->program.argv ? a->program.argv + 1 : NULL;
             q && *q && n < MAX_ARGS - 24; q++)
            argv[n++] = *q;
        argv[n++] = "--connect";
        argv[n++] = endpoint;
        argv[n++] = "--id";
        argv[n++] = name;
        argv[n++] = "--heartbeat";
        argv[n++] = hb;
        argv[n++] = "--liveness";
        argv[n++] = lv;
        if (p->curve) {
            n = add_option(argv, n, "--server-key", p->pair.public_key);
            n = add_option(argv, n, "--key", p->key_file);
        }
        n = add_option(argv, n, "--config", cfg->path);
        n = add_option(argv, n, "--llm", o->llm);
        n = add_option(argv, n, "--base-url", o->base_url);
        n = add_option(argv, n, "--record", o->record);
        if (role == 1)
            n = add_option(argv, n, "--runtime", p->runtime);
        if (threads > 1) {
            snprintf(nthreads, sizeof(nthreads), "%d", threads);
            n = add_option(argv, n, "--threads", nthreads);
        }
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
        error = tnd_supervisor_add(p->sup, &spec);
        free(name);
        free(file);
        free(log);
        if (error < 0)
            return -1;
    }
    return 0;
}

/* A local agent that stopped heartbeating while its process lives (a
 * SIGSTOP, a hang) would keep its place and serve nobody: kill it, so
 * the supervisor restarts it and its request finds an agent. */
static void agent_silent(const char *name, void *payload)
{
    tnd_pool *p = payload;
    char agent[TND_MDP_MAX_IDENTITY + 1];

    if (!p->sup)
        return;
    /* a worker of an agent with --threads is AGENT.N: the process is
     * AGENT's (one silent thread means a stuck process) */
    tnd_mdp_worker_agent(agent, sizeof(agent), name);
    if (tnd_supervisor_kill(p->sup, name) == TND_ENOTFOUND)
        tnd_supervisor_kill(p->sup, agent);
}

tnd_pool *tnd_pool_new(const tnd_pool_options *opts)
{
    tnd_pool *p = tnd_xcalloc(1, sizeof(*p));
    char *programs[2] = {NULL, NULL};
    tnd_broker_options bo;
    int error = -1;

    for (int role = opts->no_coder ? 1 : 0; role < 2; role++)
        if (agent(opts->config, role)->count > 0 &&
            !(programs[role] = program(opts->config, role)))
            goto out;
    if (setup_transport(p, opts->config, opts->endpoint, opts->clients, false) <
        0)
        goto out;
    /* the local reviewers may use a workspace path beneath it */
    if (!(p->runtime =
              opts->runtime ? tnd_xstrdup(opts->runtime) : tnd_rundir_base()))
        goto out;
    memset(&bo, 0, sizeof(bo));
    bo.endpoint = opts->endpoint;
    bo.curve = p->curve ? &p->pair : NULL;
    bo.authorized = p->curve ? &p->authorized : NULL;
    bo.authorized_path =
        p->curve ? opts->config->orchestrator.authorized_keys : NULL;
    bo.own_key = p->curve ? &p->own : NULL;
    bo.heartbeat_ms = opts->config->orchestrator.heartbeat_ms;
    bo.liveness = opts->config->orchestrator.liveness;
    bo.silent = agent_silent;
    bo.silent_payload = p;
    bo.clients = opts->clients;
    if (!(p->broker = tnd_broker_new(&bo)) ||
        tnd_fs_mkdirs(opts->logs_dir, 0755) < 0)
        goto out;
    p->sup = tnd_supervisor_new();
    error = 0;
    for (int role = opts->no_coder ? 1 : 0; error == 0 && role < 2; role++)
        if (programs[role])
            error = start_role(p, opts, role, programs[role]);
out:
    free(programs[0]);
    free(programs[1]);
    if (error < 0)
        tnd_pool_destroy(&p, 0);
    return p;
}

void tnd_pool_destroy(tnd_pool **self_p, long grace_ms)
{
    tnd_pool *p = self_p ? *self_p : NULL;

    if (!p)
        return;
    tnd_supervisor_destroy(&p->sup, grace_ms);
    tnd_broker_destroy(&p->broker);
    release_keys(p);
    free(p->runtime);
    free(p);
    *self_p = NULL;
}

bool tnd_pool_insecure(const tnd_pool *self)
{
    return self->insecure;
}

tnd_broker *tnd_pool_broker(tnd_pool *self)
{
    return self->broker;
}

const char *tnd_pool_endpoint(const tnd_pool *self)
{
    return tnd_broker_endpoint(self->broker);
}

static void agent_gone(const char *name, void *payload)
{
    tnd_broker_worker_gone(payload, name);
}

int tnd_pool_tick(tnd_pool *self)
{
    return tnd_supervisor_tick(self->sup, agent_gone, self->broker);
}
