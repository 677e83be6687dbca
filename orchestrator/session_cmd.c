/* resume, approve, reject, guide, budget (see session_cmd.h). */
#include "orchestrator/session_cmd.h"

#include <assert.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "orchestrator/escalate.h"
#include "orchestrator/run.h"

/* The answer a command gives: 0 for resume (none), -1 for a command
 * that is none of these. Parsed once; below, the kind says which. */
static int answer_of(const char *cmd)
{
    tnd_answer_kind kind = 0;

    if (strcmp(cmd, "resume") == 0)
        return 0;
    if (tnd_answer_kind_parse(&kind, cmd) < 0 || kind == TND_ANSWER_SKIP ||
        kind == TND_ANSWER_STOP)
        return -1; /* answers on the terminal only */
    return (int)kind;
}

bool tnd_cmd_continue_known(const char *cmd)
{
    return answer_of(cmd) >= 0;
}

void tnd_cmd_continue_usage(const char *cmd, FILE *to)
{
    int kind = answer_of(cmd);

    if (kind == 0)
        fputs(
            "usage: tandem resume [--repo DIR] ID\n"
            "\n"
            "Go on with session ID (or a unique prefix of it) after a crash,\n"
            "a kill, an interruption or a failure: the steps its journal\n"
            "holds are replayed (no model is asked again for an answer it\n"
            "gave), then the loop continues from the first missing step.\n",
            to);
    else if (kind == TND_ANSWER_APPROVE)
        fputs("usage: tandem approve [--repo DIR] ID\n"
              "\n"
              "Approve the last proposal of session ID, which waits for a\n"
              "person: it becomes final.diff and is printed on stdout.\n",
              to);
    else if (kind == TND_ANSWER_REJECT)
        fputs("usage: tandem reject [--repo DIR] ID -m WHY\n"
              "\n"
              "End the waiting session ID as rejected, with your reason.\n",
              to);
    else if (kind == TND_ANSWER_GUIDE)
        fputs(
            "usage: tandem guide [--repo DIR] ID -m TEXT\n"
            "\n"
            "Give the coder guidance and go on: TEXT goes into its next\n"
            "attempt's prompt (one more attempt is granted if none is left).\n",
            to);
    else
        fputs("usage: tandem budget [--repo DIR] ID [--iterations N] "
              "[--tokens N]\n"
              "\n"
              "Grant the waiting session ID more attempts and/or more tokens,\n"
              "and go on.\n",
              to);
    fputs("\n"
          "options:\n"
          "  --repo DIR        the repository (default: .)\n",
          to);
    if (kind == TND_ANSWER_REJECT)
        fputs("  -m, --message T   why (required)\n", to);
    if (kind == TND_ANSWER_GUIDE)
        fputs("  -m, --message T   the guidance (required)\n", to);
    if (kind == TND_ANSWER_BUDGET)
        fputs("  --iterations N    more attempts (1..50)\n"
              "  --tokens N        more tokens (when gate.max_tokens is set)\n",
              to);
    if (kind == 0)
        fputs("  --llm P:MODEL     another model from here on (answers the\n"
              "                    journal holds are not asked again)\n"
              "  --base-url URL    another API base for it\n",
              to);
    fputs("  -q, --quiet       no progress lines\n"
          "  -v, --verbose     debug logging\n"
          "  -h, --help        show this help\n"
          "\n"
          "exit status: 0 approved, 1 rejected or failed, 2 usage error,\n"
          "3 waiting for a human again, 130 interrupted (128 + the signal)\n",
          to);
}

int tnd_cmd_continue(const char *cmd, int argc, char **argv)
{
    enum { O_REPO = 256, O_ITERATIONS, O_TOKENS, O_LLM, O_BASE_URL };
    static const struct option longs[] = {
        {"repo", required_argument, NULL, O_REPO},
        {"llm", required_argument, NULL, O_LLM},
        {"base-url", required_argument, NULL, O_BASE_URL},
        {"message", required_argument, NULL, 'm'},
        {"iterations", required_argument, NULL, O_ITERATIONS},
        {"tokens", required_argument, NULL, O_TOKENS},
        {"quiet", no_argument, NULL, 'q'},
        {"verbose", no_argument, NULL, 'v'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    tnd_continue_options o;
    char *end;
    long n;
    int c;

    memset(&o, 0, sizeof(o));
    assert(answer_of(cmd) >= 0); /* main.c asked tnd_cmd_continue_known */
    o.answer = (tnd_answer_kind)answer_of(cmd);
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "m:qvh", longs, NULL)) != -1) {
        switch (c) {
        case O_REPO:
            o.repo = optarg;
            break;
        case 'm':
            o.text = optarg;
            break;
        case O_LLM:
            o.llm = optarg;
            break;
        case O_BASE_URL:
            o.base_url = optarg;
            break;
        case O_ITERATIONS:
        case O_TOKENS:
            n = strtol(optarg, &end, 10);
            if (!*optarg || *end || n < 1 ||
                n > (c == O_ITERATIONS ? 50 : 100000000L)) {
                fprintf(stderr,
                        "tandem %s: --%s must be a positive number%s, got "
                        "\"%s\"\n",
                        cmd, c == O_ITERATIONS ? "iterations" : "tokens",
                        c == O_ITERATIONS ? " up to 50" : "", optarg);
                return TND_EXIT_USAGE;
            }
            if (c == O_ITERATIONS)
                o.iterations = (int)n;
            else
                o.tokens = n;
            break;
        case 'q':
            o.quiet = true;
            break;
        case 'v':
            o.verbose = true;
            break;
        case 'h':
            tnd_cmd_continue_usage(cmd, stdout);
            return TND_EXIT_OK;
        default:
            fprintf(stderr,
                    "tandem %s: unknown option '%s'\ntry 'tandem %s "
                    "--help'\n",
                    cmd, argv[optind - 1], cmd);
            return TND_EXIT_USAGE;
        }
    }
    if (optind != argc - 1) {
        fprintf(stderr,
                "tandem %s: give one session id (or a prefix)\ntry "
                "'tandem %s --help'\n",
                cmd, cmd);
        return TND_EXIT_USAGE;
    }
    o.session = argv[optind];
    if (o.text && o.answer != TND_ANSWER_REJECT &&
        o.answer != TND_ANSWER_GUIDE) {
        fprintf(stderr, "tandem %s: -m is for reject and guide\n", cmd);
        return TND_EXIT_USAGE;
    }
    if ((o.llm || o.base_url) && o.answer) {
        fprintf(stderr,
                "tandem %s: --llm and --base-url are for resume (an answer "
                "goes on with the session's own model)\n",
                cmd);
        return TND_EXIT_USAGE;
    }
    if ((o.iterations || o.tokens) && o.answer != TND_ANSWER_BUDGET) {
        fprintf(stderr,
                "tandem %s: --iterations and --tokens are for "
                "budget\n",
                cmd);
        return TND_EXIT_USAGE;
    }
    return tnd_run_continue(&o);
}
