/* tnd_agent_cli - the command line both agent programs share.
 *
 *   tandem-coder --connect ENDPOINT [--config FILE] [--llm PROVIDER:MODEL]
 *                [--base-url URL] [--id NAME] [--heartbeat MS]
 *                [--liveness N] [--record FILE] [--service NAME]
 *                [--member N] [--runtime DIR] [--threads N]
 *                [--server-key KEY|FILE --key FILE]
 *                [--verbose] [--help] [--version]
 */
#ifndef TND_OPTIONS_H
#define TND_OPTIONS_H

#include "agents/agent.h"
#include "agents/llm.h"
#include "common/config.h"
#include "proto/curve.h"

typedef struct tnd_agent_cli {
    char *endpoint;
    char *identity; /* NULL: SERVICE-PID */
    tnd_config *config;
    int heartbeat_ms; /* from the config unless given */
    int liveness;
    char *record;  /* --record: append each answer here; NULL */
    char *service; /* --service: the MDP service to serve; NULL: the
                      role's own ("coder", "reviewer") */
    int member;    /* --member: reviewer quorum member, 1-based; 0 */
    char *runtime; /* --runtime DIR, symlinks resolved: where a workspace
                      path from the orchestrator may lie; NULL */
    int threads;   /* --threads: requests served at once; 1 */
    /* --server-key and --key: CURVE toward a tcp:// orchestrator; both
     * or neither. curve.secret_key is wiped by tnd_agent_cli_clear. */
    bool curve;
    char server_key[TND_CURVE_Z85_LEN + 1];
    tnd_curve_pair curve_pair;
} tnd_agent_cli;

/* Parse argv for the agent program serving role ("coder" or "reviewer").
 * Returns 0 to run; 1 when --help or --version was printed (exit 0);
 * TND_ECONFIG after printing a usage or config error (exit 2). */
int tnd_agent_cli_parse(tnd_agent_cli *out, int argc, char **argv,
                        const char *role);

/* Free what tnd_agent_cli_parse allocated. */
void tnd_agent_cli_clear(tnd_agent_cli *cli);

/* One model of llm (named where in messages, e.g. "agents.coder.llm")
 * for each of the agent's threads, out[0 .. cli->threads), each
 * recording to --record when given. -1 after logging why (none is left
 * made): the program exits 2. Destroy with tnd_agent_cli_llms_destroy. */
int tnd_agent_cli_llms(tnd_llm **out, const tnd_agent_cli *cli,
                       const tnd_llm_config *llm, const char *where);

/* Destroy what tnd_agent_cli_llms made; safe on NULL entries. */
void tnd_agent_cli_llms_destroy(tnd_llm **llms, const tnd_agent_cli *cli);

/* The worker options the command line sets: endpoint, identity,
 * heartbeat, liveness and threads (the caller sets the service, the
 * handler and its payloads). */
void tnd_agent_cli_worker(tnd_agent_options *out, const tnd_agent_cli *cli);

#endif
