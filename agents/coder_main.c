/* tandem-coder: the coder agent program. */
#include <stdio.h>
#include <stdlib.h>

#include "agents/agent.h"
#include "agents/coder.h"
#include "agents/llm.h"
#include "agents/options.h"
#include "agents/progress.h"
#include "agents/transcript.h"
#include "common/error.h"
#include "common/log.h"

static char *handle(tnd_agent_job *job, const char *body, size_t len,
                    size_t *reply_len, void *payload)
{
    tnd_llm *llm = payload;
    tnd_progress progress;
    tnd_transcript transcript;
    char *reply;

    tnd_llm_set_cancel(llm, tnd_agent_job_cancel(job));
    tnd_progress_init(&progress, job, "coder");
    tnd_transcript_init(&transcript);
    tnd_llm_set_delta(llm, tnd_progress_delta, &progress);
    tnd_llm_set_exchange(llm, tnd_transcript_exchange, &transcript);
    reply = tnd_coder_handle(llm, body, len, reply_len);
    tnd_llm_set_exchange(llm, NULL, NULL);
    tnd_llm_set_delta(llm, NULL, NULL);
    tnd_progress_finish(&progress);
    reply = tnd_transcript_attach(&transcript, reply, reply_len);
    tnd_transcript_clear(&transcript);
    return reply;
}

int main(int argc, char **argv)
{
    tnd_agent_cli cli;
    tnd_agent_options opts = {0};
    tnd_llm *llm;
    int rc = tnd_agent_cli_parse(&cli, argc, argv, "coder");

    if (rc != 0)
        return rc > 0 ? 0 : 2;
    if (!(llm = tnd_llm_new(&cli.config->coder.llm))) {
        tnd_log_error("agents.coder.llm: %s", tnd_error_last());
        tnd_agent_cli_clear(&cli);
        return 2;
    }
    if (cli.record && tnd_llm_set_record(llm, cli.record) < 0) {
        tnd_log_error("--record: %s", tnd_error_last());
        tnd_llm_destroy(&llm);
        tnd_agent_cli_clear(&cli);
        return 2;
    }
    opts.service = cli.service ? cli.service : "coder";
    opts.endpoint = cli.endpoint;
    opts.identity = cli.identity;
    opts.heartbeat_ms = cli.heartbeat_ms;
    opts.liveness = cli.liveness;
    opts.handler = handle;
    opts.payload = llm;
    rc = tnd_agent_run(&opts);
    if (rc < 0)
        tnd_log_error("%s", tnd_error_last());
    tnd_llm_destroy(&llm);
    tnd_agent_cli_clear(&cli);
    return rc < 0 ? 1 : 0;
}
