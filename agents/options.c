/* Agent command line (see options.h). */
#include "agents/options.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

#include "common/error.h"
#include "common/fs.h"
#include "common/log.h"
#include "common/xalloc.h"
#include "proto/mdp.h"

static void usage(FILE *to, const char *prog, const char *role)
{
    fprintf(to,
            "usage: %s --connect ENDPOINT [options]\n"
            "\n"
            "The tandem %s agent: serves the '%s' service of a tandem\n"
            "orchestrator over ZeroMQ (Majordomo MDP/0.2). tandem starts it\n"
            "by itself; run it by hand to put the agent on another host.\n"
            "\n"
            "options:\n"
            "  --connect ENDPOINT   the orchestrator's endpoint, e.g.\n"
            "                       tcp://build-host:5555 (required)\n"
            "  --config FILE        agents.yaml to read (default: built-in\n"
            "                       defaults)\n"
            "  --llm PROVIDER:MODEL use this model instead of the config's\n"
            "                       (providers: %s)\n"
            "  --base-url URL       the API base URL for the provider\n"
            "  --id NAME            identity shown in the orchestrator's "
            "logs\n"
            "  --heartbeat MS       heartbeat interval; must match the\n"
            "                       orchestrator's (default: the config's)\n"
            "  --liveness N         missed heartbeats before reconnecting\n"
            "  --record FILE        append each LLM answer to FILE as one\n"
            "                       JSON line (tandem run --record does this)\n"
            "  --service NAME       serve NAME instead of the role's own\n"
            "                       service\n"
            "  --threads N          serve up to N requests at once, as N\n"
            "                       workers named ID.1 .. ID.N (1..%d,\n"
            "                       default 1)\n"
            "  --server-key KEY     CURVE: the orchestrator's public key, or\n"
            "                       its NAME.pub file (with --key)\n"
            "  --key FILE           CURVE: this agent's NAME.key (tandem keys\n"
            "                       generate); the orchestrator must list its\n"
            "                       public key with this role\n"
            "%s"
            "  -v, --verbose        log more\n"
            "  -h, --help           show this help\n"
            "  --version            show the version\n"
            "\n"
            "exit status: 0 stopped by SIGTERM/SIGINT, 1 runtime failure,\n"
            "2 usage or configuration error\n",
            prog, role, role, TND_PROVIDERS, TND_AGENT_MAX_THREADS,
            strcmp(role, "reviewer") == 0
                ? "  --member N           quorum member N: serve reviewer.N\n"
                  "                       (unless --service says otherwise)\n"
                  "                       with the model\n"
                  "                       agents.reviewer.models[N-1]\n"
                  "  --runtime DIR        the orchestrator's private runtime\n"
                  "                       directory (tandem passes it to the\n"
                  "                       agents it starts): a workspace path\n"
                  "                       sent beneath it is used in place;\n"
                  "                       without it every tree comes by\n"
                  "                       content\n"
                : "");
}

static int parse_int(const char *opt, const char *s, int min, int max, int *out)
{
    char *end;
    long n = strtol(s, &end, 10);

    if (!*s || *end || n < min || n > max) {
        fprintf(stderr, "%s must be an integer %d..%d, got \"%s\"\n", opt, min,
                max, s);
        return TND_ECONFIG;
    }
    *out = (int)n;
    return 0;
}

int tnd_agent_cli_parse(tnd_agent_cli *out, int argc, char **argv,
                        const char *role)
{
    enum {
        O_CONNECT = 256,
        O_CONFIG,
        O_LLM,
        O_BASE_URL,
        O_ID,
        O_HEARTBEAT,
        O_LIVENESS,
        O_RECORD,
        O_SERVICE,
        O_MEMBER,
        O_SERVER_KEY,
        O_KEY,
        O_RUNTIME,
        O_THREADS,
        O_VERSION
    };
    static const struct option longs[] = {
        {"connect", required_argument, NULL, O_CONNECT},
        {"config", required_argument, NULL, O_CONFIG},
        {"llm", required_argument, NULL, O_LLM},
        {"base-url", required_argument, NULL, O_BASE_URL},
        {"id", required_argument, NULL, O_ID},
        {"heartbeat", required_argument, NULL, O_HEARTBEAT},
        {"liveness", required_argument, NULL, O_LIVENESS},
        {"record", required_argument, NULL, O_RECORD},
        {"service", required_argument, NULL, O_SERVICE},
        {"member", required_argument, NULL, O_MEMBER},
        {"server-key", required_argument, NULL, O_SERVER_KEY},
        {"key", required_argument, NULL, O_KEY},
        {"runtime", required_argument, NULL, O_RUNTIME},
        {"threads", required_argument, NULL, O_THREADS},
        {"verbose", no_argument, NULL, 'v'},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, O_VERSION},
        {NULL, 0, NULL, 0},
    };
    const char *prog = argc > 0 ? argv[0] : "tandem-agent";
    const char *config = NULL, *llm = NULL, *base_url = NULL;
    const char *server_key = NULL, *key = NULL;
    int hb = 0, liveness = 0, c, verbose = 0;

    memset(out, 0, sizeof(*out));
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "vh", longs, NULL)) != -1) {
        switch (c) {
        case O_CONNECT:
            free(out->endpoint);
            out->endpoint = tnd_xstrdup(optarg);
            break;
        case O_CONFIG:
            config = optarg;
            break;
        case O_LLM:
            llm = optarg;
            break;
        case O_BASE_URL:
            base_url = optarg;
            break;
        case O_ID:
            free(out->identity);
            out->identity = tnd_xstrdup(optarg);
            break;
        case O_HEARTBEAT:
            if (parse_int("--heartbeat", optarg, 50, 60000, &hb) < 0)
                goto usage_error;
            break;
        case O_LIVENESS:
            if (parse_int("--liveness", optarg, 2, 100, &liveness) < 0)
                goto usage_error;
            break;
        case O_THREADS:
            if (parse_int("--threads", optarg, 1, TND_AGENT_MAX_THREADS,
                          &out->threads) < 0)
                goto usage_error;
            break;
        case O_SERVICE:
            free(out->service);
            out->service = tnd_xstrdup(optarg);
            break;
        case O_MEMBER:
            if (strcmp(role, "reviewer") != 0) {
                fprintf(stderr, "--member is for reviewers in a quorum\n");
                goto usage_error;
            }
            if (parse_int("--member", optarg, 1, 16, &out->member) < 0)
                goto usage_error;
            break;
        case O_SERVER_KEY:
            server_key = optarg;
            break;
        case O_KEY:
            key = optarg;
            break;
        case O_RUNTIME:
            if (strcmp(role, "reviewer") != 0) {
                fprintf(stderr, "--runtime is for reviewers\n");
                goto usage_error;
            }
            free(out->runtime);
            if (!(out->runtime = tnd_fs_realpath(optarg))) {
                fprintf(stderr, "%s: --runtime: %s\n", prog, tnd_error_last());
                goto usage_error;
            }
            break;
        case O_RECORD:
            if (!*optarg) {
                fprintf(stderr, "%s: --record needs a file name\n", prog);
                goto usage_error;
            }
            free(out->record);
            out->record = tnd_xstrdup(optarg);
            break;
        case 'v':
            verbose = 1;
            break;
        case 'h':
            usage(stdout, prog, role);
            tnd_agent_cli_clear(out);
            return 1;
        case O_VERSION:
            printf("tandem-%s %s\n", role, TND_VERSION);
            tnd_agent_cli_clear(out);
            return 1;
        default:
            fprintf(stderr, "%s: unknown option '%s'\n", prog,
                    argv[optind - 1]);
            goto usage_error;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "%s: unexpected argument '%s'\n", prog, argv[optind]);
        goto usage_error;
    }
    if (!out->endpoint) {
        fprintf(stderr, "%s: --connect ENDPOINT is required\n", prog);
        goto usage_error;
    }
    if (tnd_mdp_endpoint_check(out->endpoint, false) < 0) {
        fprintf(stderr, "%s: --connect %s\n", prog, tnd_error_last());
        goto usage_error;
    }
    if (!server_key != !key) {
        fprintf(stderr,
                "%s: CURVE needs both --server-key (the "
                "orchestrator's public key) and --key (this agent's "
                "NAME.key; tandem keys generate writes one)\n",
                prog);
        goto usage_error;
    }
    if (server_key && (tnd_curve_read_public(out->server_key, server_key) < 0 ||
                       tnd_curve_read_pair(&out->curve_pair, key) < 0)) {
        fprintf(stderr, "%s: %s\n", prog, tnd_error_last());
        goto usage_error;
    }
    out->curve = server_key != NULL;
    if (out->identity && (!*out->identity || strlen(out->identity) > 200)) {
        fprintf(stderr, "%s: --id must be 1..200 bytes\n", prog);
        goto usage_error;
    }
    tnd_log_init(role, verbose ? TND_LOG_DEBUG : TND_LOG_INFO);
    if (config) {
        if (tnd_config_load(&out->config, config) < 0) {
            fprintf(stderr, "%s\n", tnd_error_last());
            tnd_agent_cli_clear(out);
            return TND_ECONFIG;
        }
    } else {
        out->config = tnd_config_defaults();
    }
    if ((llm || base_url) &&
        tnd_config_override_llm(out->config, llm, base_url) < 0) {
        fprintf(stderr, "%s: %s\n", prog, tnd_error_last());
        tnd_agent_cli_clear(out);
        return TND_ECONFIG;
    }
    out->heartbeat_ms = hb ? hb : out->config->orchestrator.heartbeat_ms;
    out->liveness = liveness ? liveness : out->config->orchestrator.liveness;
    if (out->threads == 0)
        out->threads = 1;
    return 0;
usage_error:
    fprintf(stderr, "try '%s --help'\n", prog);
    tnd_agent_cli_clear(out);
    return TND_ECONFIG;
}

void tnd_agent_cli_clear(tnd_agent_cli *cli)
{
    free(cli->endpoint);
    free(cli->identity);
    free(cli->record);
    free(cli->service);
    free(cli->runtime);
    tnd_config_destroy(&cli->config);
    memset(cli, 0, sizeof(*cli)); /* the secret key too */
}

/* The model holds its own copy of its key now: take every configured
 * key out of the environment, so that nothing this agent starts (skills)
 * and no other process of the user reads one from /proc/PID/environ,
 * and make the process non-dumpable, so its memory and /proc files are
 * the kernel's and root's alone. A `command` model program inherits the
 * environment and may need a key: then the keys stay. */
static void hide_keys(const tnd_config *cfg, const tnd_llm_config *own)
{
    tnd_llm_standard_keys_register();
    if (own->provider != TND_PROVIDER_COMMAND) {
        tnd_llm_secret_hide(&cfg->coder.llm);
        tnd_llm_secret_hide(&cfg->reviewer.llm);
        for (size_t i = 0; i < cfg->reviewer.nmodels; i++)
            tnd_llm_secret_hide(&cfg->reviewer.models[i]);
    }
    if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
        tnd_log_warn("cannot make the agent non-dumpable: %s", strerror(errno));
}

int tnd_agent_cli_llms(tnd_llm **out, const tnd_agent_cli *cli,
                       const tnd_llm_config *llm, const char *where)
{
    int n = cli->threads > 0 ? cli->threads : 1;

    /* all of them before the keys leave the environment */
    for (int k = 0; k < n; k++) {
        if (!(out[k] = tnd_llm_new(llm))) {
            tnd_log_error("%s: %s", where, tnd_error_last());
            goto fail;
        }
        if (cli->record && tnd_llm_set_record(out[k], cli->record) < 0) {
            tnd_log_error("--record: %s", tnd_error_last());
            goto fail;
        }
    }
    hide_keys(cli->config, llm);
    return 0;
fail:
    for (int k = 0; k < n; k++)
        tnd_llm_destroy(&out[k]);
    return -1;
}

void tnd_agent_cli_llms_destroy(tnd_llm **llms, const tnd_agent_cli *cli)
{
    for (int k = 0; llms && k < cli->threads; k++)
        tnd_llm_destroy(&llms[k]);
}

void tnd_agent_cli_worker(tnd_agent_options *out, const tnd_agent_cli *cli)
{
    out->endpoint = cli->endpoint;
    out->identity = cli->identity;
    out->heartbeat_ms = cli->heartbeat_ms;
    out->server_key = cli->curve ? cli->server_key : NULL;
    out->curve_pair = cli->curve ? &cli->curve_pair : NULL;
    out->liveness = cli->liveness;
    out->threads = cli->threads;
}
