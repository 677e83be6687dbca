/* resume, approve, reject, guide, budget (see session_cmd.h). */
#include "orchestrator/session_cmd.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "orchestrator/cli.h"
#include "orchestrator/escalate.h"
#include "orchestrator/run.h"
#include "orchestrator/submit.h"

/* The answer a command gives: 0 for resume (none). Parsed once; below,
 * the kind says which command this is. */
static tnd_answer_kind answer_of(const char *cmd)
{
    tnd_answer_kind kind = 0;

    if (strcmp(cmd, "resume") != 0 && tnd_answer_kind_parse(&kind, cmd) < 0)
        assert(!"main.c's table names a command that is no answer");
    return kind;
}

void tnd_cmd_continue_usage(const char *cmd, FILE *to)
{
    tnd_answer_kind kind = answer_of(cmd);

    if (kind == 0)
        fputs(
            "usage: tandem resume [--repo DIR] ID\n"
            "\n"
            "Go on with session ID (or any part of it that no other session's\n"
            "id has) after a crash, a kill, an interruption or a failure:\n"
            "the steps its journal holds are replayed (no model is asked\n"
            "again for an answer it gave), then the loop continues from the\n"
            "first missing step.\n",
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
              "[--tokens N] [--calls N]\n"
              "\n"
              "Grant the waiting session ID more attempts, tokens or LLM\n"
              "calls, and go on.\n",
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
              "  --tokens N        more tokens (when gate.max_tokens is set)\n"
              "  --calls N         more LLM calls (1..1000, when\n"
              "                    gate.max_llm_calls is set)\n",
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
          "exit status: 0 approved, 1 rejected or failed, or the diff could\n"
          "not be written on stdout, 2 usage error, 3 waiting for a human\n"
          "again, 130 interrupted (128 + the signal)\n",
          to);
    if (kind != 0)
        fputs("75 (an answer to a session tandem serve ran): the server is\n"
              "busy or stopping; answer again later\n",
              to);
}

int tnd_cmd_continue(const char *cmd, int argc, char **argv)
{
    /* all of them, for each: what is for another answer is said so */
    static const int accepts[] = {TND_OPT_REPO,       TND_OPT_LLM,
                                  TND_OPT_BASE_URL,   TND_OPT_MESSAGE,
                                  TND_OPT_QUIET,      TND_OPT_VERBOSE,
                                  TND_OPT_ITERATIONS, TND_OPT_TOKENS,
                                  TND_OPT_CALLS,      0};
    tnd_continue_options o;
    tnd_cli cli;
    char *end;
    long n;
    int c;

    memset(&o, 0, sizeof(o));
    o.answer = answer_of(cmd);
    tnd_cli_start(&cli, cmd, tnd_cmd_continue_usage, accepts, argc, argv);
    while ((c = tnd_cli_next(&cli)) > 0) {
        if (c == TND_OPT_REPO)
            o.repo = optarg;
        else if (c == TND_OPT_MESSAGE)
            o.text = optarg;
        else if (c == TND_OPT_LLM)
            o.llm = optarg;
        else if (c == TND_OPT_BASE_URL)
            o.base_url = optarg;
        else if (c == TND_OPT_QUIET)
            o.quiet = true;
        else if (c == TND_OPT_VERBOSE)
            o.verbose = true;
        else if ((n = strtol(optarg, &end, 10)) < 1 || *end ||
                 n > (c == TND_OPT_ITERATIONS ? 50
                      : c == TND_OPT_CALLS    ? 1000
                                              : 100000000L))
            return tnd_cli_error(&cli,
                                 "--%s must be a positive number%s, got \"%s\"",
                                 c == TND_OPT_ITERATIONS ? "iterations"
                                 : c == TND_OPT_CALLS    ? "calls"
                                                         : "tokens",
                                 c == TND_OPT_ITERATIONS ? " up to 50"
                                 : c == TND_OPT_CALLS    ? " up to 1000"
                                                         : "",
                                 optarg);
        else if (c == TND_OPT_ITERATIONS)
            o.iterations = (int)n;
        else if (c == TND_OPT_CALLS)
            o.calls = n;
        else
            o.tokens = n;
    }
    if (c < 0)
        return cli.status;
    if (optind != argc - 1)
        return tnd_cli_error(&cli, "give one session id (or a prefix)");
    o.session = argv[optind];
    if (o.text && o.answer != TND_ANSWER_REJECT && o.answer != TND_ANSWER_GUIDE)
        return tnd_cli_error(&cli, "-m is for reject and guide");
    if ((o.llm || o.base_url) && o.answer)
        return tnd_cli_error(&cli, "--llm and --base-url are for resume (an "
                                   "answer goes on with the session's own "
                                   "model)");
    if ((o.iterations || o.tokens || o.calls) && o.answer != TND_ANSWER_BUDGET)
        return tnd_cli_error(
            &cli, "--iterations, --tokens and --calls are for budget");
    /* said before a server takes it: blank is nothing said */
    if ((o.answer == TND_ANSWER_REJECT || o.answer == TND_ANSWER_GUIDE) &&
        (!o.text || !o.text[strspn(o.text, " \t\r\n")]))
        return tnd_cli_error(&cli, "%s: say it with -m TEXT",
                             tnd_answer_name(o.answer));
    if (o.answer) {
        /* the question the person answers: the one that waits now, when
         * they asked (a later one is not theirs to take); none when it
         * did not wait (0 said "not known", and one asked a moment later,
         * as its holder let go, was answered unseen) */
        tnd_session_facts f;
        if (tnd_run_facts(&f, o.repo ? o.repo : ".", o.session) == 0)
            o.escalation = f.status == TND_SESSION_WAITING ? f.escalation : -1;
        tnd_session_facts_clear(&f);
        /* an answer that is not whole is refused before anything goes on
         * (a server took it, resumed the session and only then said
         * exit 2); whether it waits, a lock or a server says after */
        if (o.escalation > 0 && tnd_run_answer_check(o.repo ? o.repo : ".", &o,
                                                     NULL) == TND_ECONFIG) {
            fprintf(stderr, "tandem: %s\n", tnd_error_last());
            return TND_EXIT_USAGE;
        }
        tnd_error_clear();
    }
    if (o.answer && (c = tnd_submit_answer(&o)) >= 0)
        return c; /* the server that ran it went on with it */
    return tnd_run_continue(&o);
}
