/* tandem-reviewer: the reviewer agent program. */
#include <stdio.h>
#include <stdlib.h>

#include "agents/agent.h"
#include "agents/llm.h"
#include "agents/options.h"
#include "agents/progress.h"
#include "agents/reviewer.h"
#include "agents/transcript.h"
#include "common/error.h"
#include "common/log.h"
#include "common/str.h"
#include "skills/proc.h"

typedef struct state {
    tnd_llm *llm;
    const tnd_config *config;
    char **envp;
} state;

static char *handle(tnd_agent_job *job, const char *body, size_t len,
                    size_t *reply_len, void *payload)
{
    state *st = payload;
    tnd_progress progress;
    tnd_transcript transcript;
    tnd_reviewer_ctx ctx = {st->llm, st->config, st->envp,
                            tnd_agent_job_cancel(job), &progress};
    char *reply;

    tnd_llm_set_cancel(st->llm, ctx.cancel);
    tnd_progress_init(&progress, job, "reviewer");
    tnd_transcript_init(&transcript);
    tnd_llm_set_delta(st->llm, tnd_progress_delta, &progress);
    tnd_llm_set_exchange(st->llm, tnd_transcript_exchange, &transcript);
    reply = tnd_reviewer_handle(&ctx, body, len, reply_len);
    tnd_llm_set_exchange(st->llm, NULL, NULL);
    tnd_llm_set_delta(st->llm, NULL, NULL);
    tnd_progress_finish(&progress);
    reply = tnd_transcript_attach(&transcript, reply, reply_len);
    tnd_transcript_clear(&transcript);
    return reply;
}

int main(int argc, char **argv)
{
    tnd_agent_cli cli;
    tnd_agent_options opts = {0};
    state st = {0};
    char service[32];
    int rc = tnd_agent_cli_parse(&cli, argc, argv, "reviewer");

    if (rc != 0)
        return rc > 0 ? 0 : 2;
    if (!(st.llm =
              tnd_llm_new(tnd_config_member_llm(cli.config, cli.member)))) {
        tnd_log_error("agents.reviewer.llm: %s", tnd_error_last());
        tnd_agent_cli_clear(&cli);
        return 2;
    }
    if (cli.record && tnd_llm_set_record(st.llm, cli.record) < 0) {
        tnd_log_error("--record: %s", tnd_error_last());
        tnd_llm_destroy(&st.llm);
        tnd_agent_cli_clear(&cli);
        return 2;
    }
    {
        /* skills never see an API key: the usual names are scrubbed,
         * and so are the variables the config names */
        const tnd_config *c = cli.config;
        const char *extra[20] = {tnd_llm_key_env(&c->coder.llm),
                                 tnd_llm_key_env(&c->reviewer.llm)};
        for (size_t i = 0; i < c->reviewer.nmodels && i < 16; i++)
            extra[2 + i] = tnd_llm_key_env(&c->reviewer.models[i]);
        st.envp = tnd_proc_env_scrubbed(extra);
    }
    st.config = cli.config;
    if (!cli.service && cli.member > 0) {
        snprintf(service, sizeof(service), "reviewer.%d", cli.member);
        opts.service = service;
    } else {
        opts.service = cli.service ? cli.service : "reviewer";
    }
    opts.endpoint = cli.endpoint;
    opts.identity = cli.identity;
    opts.heartbeat_ms = cli.heartbeat_ms;
    opts.liveness = cli.liveness;
    opts.handler = handle;
    opts.payload = &st;
    rc = tnd_agent_run(&opts);
    if (rc < 0)
        tnd_log_error("%s", tnd_error_last());
    tnd_str_list_free(&st.envp);
    tnd_llm_destroy(&st.llm);
    tnd_agent_cli_clear(&cli);
    return rc < 0 ? 1 : 0;
}
