/* tandem-reviewer: the reviewer agent program. */
#include <stdio.h>
#include <stdlib.h>

#include "agents/agent.h"
#include "agents/blobcache.h"
#include "agents/llm.h"
#include "agents/options.h"
#include "agents/observer.h"
#include "agents/reviewer.h"
#include "common/error.h"
#include "common/log.h"
#include "common/str.h"
#include "skills/env.h"
#include "skills/proc.h"

/* A worker's own model, and what all share: the blob cache locks itself
 * around what must not interleave (see reviewer.c, workspace_for). */
typedef struct state {
    tnd_llm *llm;
    const tnd_config *config;
    char **envp;
    tnd_blobcache *cache;
    const char *runtime;
    tnd_slots *slots;
    tnd_holder *holder;
    const char *role; /* "reviewer", or "reviewer.N" for quorum member N */
} state;

static char *handle(tnd_agent_job *job, const char *body, size_t len,
                    size_t *reply_len, void *payload)
{
    state *st = payload;
    tnd_observer ob;
    tnd_reviewer_ctx ctx = {
        st->llm,      st->config, st->envp,    tnd_agent_job_cancel(job),
        &ob.progress, st->cache,  st->runtime, st->slots,
        st->holder,   st->role};
    char *reply;

    tnd_observer_start(&ob, st->llm, job, "reviewer");
    reply = tnd_reviewer_handle(&ctx, body, len, reply_len);
    return tnd_observer_finish(&ob, reply, reply_len);
}

int main(int argc, char **argv)
{
    tnd_agent_cli cli;
    tnd_agent_options opts = {0};
    tnd_llm *llms[TND_AGENT_MAX_THREADS] = {0};
    state st[TND_AGENT_MAX_THREADS];
    void *payloads[TND_AGENT_MAX_THREADS];
    char **envp;
    tnd_blobcache *cache;
    tnd_slots *slots;
    tnd_holder *holder;
    char service[32], role[32];
    int rc = tnd_agent_cli_parse(&cli, argc, argv, "reviewer");

    if (rc != 0)
        return rc > 0 ? 0 : 2;
    if (tnd_agent_cli_llms(llms, &cli,
                           tnd_config_member_llm(cli.config, cli.member),
                           "agents.reviewer.llm") < 0) {
        tnd_agent_cli_clear(&cli);
        return 2;
    }
    {
        /* skills never see an API key: the usual names are scrubbed,
         * and so are the variables the config names */
        const tnd_config *c = cli.config;
        const char *extra[40] = {tnd_llm_key_env(&c->coder.llm),
                                 tnd_llm_key_env(&c->reviewer.llm)};
        size_t n = 2;
        for (size_t i = 0; i < c->reviewer.nmodels && n < 18; i++)
            extra[n++] = tnd_llm_key_env(&c->reviewer.models[i]);
        /* and the file's own, which --llm may have dropped */
        for (size_t i = 0; c->key_envs && c->key_envs[i] && n < 39; i++)
            extra[n++] = c->key_envs[i];
        envp = tnd_env_scrubbed(extra);
        /* nor the repository a git hook that started tandem works on */
        tnd_env_drop_git(envp);
    }
    if (!(cache = tnd_blobcache_new(
              "reviewer", cli.config->orchestrator.workspace_max_bytes))) {
        tnd_log_error("%s", tnd_error_last());
        tnd_str_list_free(&envp);
        tnd_agent_cli_llms_destroy(llms, &cli);
        tnd_agent_cli_clear(&cli);
        return 1;
    }
    slots = tnd_slots_new(tnd_reviewer_skills_at_once(cli.config));
    {
        /* where this reviewer's workspaces are: the holder binds them */
        const char *roots[] = {tnd_blobcache_dir(cache), cli.runtime, NULL};
        holder = tnd_holder_new(roots, envp);
    }
    if (cli.member > 0)
        snprintf(role, sizeof(role), "reviewer.%d", cli.member);
    else
        snprintf(role, sizeof(role), "reviewer");
    for (int k = 0; k < cli.threads; k++) {
        st[k] = (state){llms[k],     cli.config, envp,   cache,
                        cli.runtime, slots,      holder, role};
        payloads[k] = &st[k];
    }
    tnd_agent_cli_worker(&opts, &cli);
    if (!cli.service && cli.member > 0) {
        snprintf(service, sizeof(service), "reviewer.%d", cli.member);
        opts.service = service;
    } else {
        opts.service = cli.service ? cli.service : "reviewer";
    }
    opts.handler = handle;
    opts.payloads = payloads;
    rc = tnd_agent_run(&opts);
    if (rc < 0)
        tnd_log_error("%s", tnd_error_last());
    tnd_holder_destroy(&holder);
    tnd_slots_destroy(&slots);
    tnd_blobcache_destroy(&cache);
    tnd_str_list_free(&envp);
    tnd_agent_cli_llms_destroy(llms, &cli);
    tnd_agent_cli_clear(&cli);
    return rc < 0 ? 1 : 0;
}
