/* tandem-coder: the coder agent program. */
#include <stdio.h>
#include <stdlib.h>

#include "agents/agent.h"
#include "agents/coder.h"
#include "agents/llm.h"
#include "agents/observer.h"
#include "agents/options.h"
#include "common/error.h"
#include "common/log.h"

static char *handle(tnd_agent_job *job, const char *body, size_t len,
                    size_t *reply_len, void *payload)
{
    tnd_llm *llm = payload;
    tnd_observer ob;
    char *reply;

    tnd_observer_start(&ob, llm, job, "coder");
    reply = tnd_coder_handle(llm, body, len, reply_len);
    return tnd_observer_finish(&ob, reply, reply_len);
}

int main(int argc, char **argv)
{
    tnd_agent_cli cli;
    tnd_agent_options opts = {0};
    tnd_llm *llms[TND_AGENT_MAX_THREADS] = {0};
    int rc = tnd_agent_cli_parse(&cli, argc, argv, "coder");

    if (rc != 0)
        return rc > 0 ? 0 : 2;
    if (tnd_agent_cli_llms(llms, &cli, &cli.config->coder.llm,
                           "agents.coder.llm") < 0) {
        tnd_agent_cli_clear(&cli);
        return 2;
    }
    tnd_agent_cli_worker(&opts, &cli);
    opts.service = cli.service ? cli.service : "coder";
    opts.handler = handle;
    opts.payloads = (void *const *)llms; /* each thread its own model */
    rc = tnd_agent_run(&opts);
    if (rc < 0)
        tnd_log_error("%s", tnd_error_last());
    tnd_agent_cli_llms_destroy(llms, &cli);
    tnd_agent_cli_clear(&cli);
    return rc < 0 ? 1 : 0;
}
