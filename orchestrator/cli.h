/* tnd_cli - tandem's command line: its commands, and every command's
 * options parsed one way.
 *
 * main.c dispatches on a table of commands (tnd_cli_command), which also
 * finds each one's help for `tandem help CMD`. Every option any command
 * takes is listed once, here (tnd_cli_opt); a command names the ones it
 * accepts, -h and --help show its help, and tnd_cli_next says what is
 * wrong with anything else, in the same words for every command:
 * "tandem CMD: unknown option '--x'", "tandem CMD: --repo needs a
 * value", then "try 'tandem CMD --help'". */
#ifndef TND_CLI_H
#define TND_CLI_H

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>

#include "common/error.h"

/* Print the help of command name to to. */
typedef void tnd_cli_usage_fn(const char *name, FILE *to);

/* `tandem NAME ...`: run gets argv[0] == name and returns a TND_EXIT_*
 * code (orchestrator/run.h). */
typedef struct tnd_cli_command {
    const char *name;
    int (*run)(const char *name, int argc, char **argv);
    tnd_cli_usage_fn *usage;
} tnd_cli_command;

/* The options. The long ones are numbered from TND_OPT_REPO in the order
 * of cli.c's names, those that take a value first; the ones with a
 * letter (-m, -q, -v) are their letter. Every command takes -h. */
typedef enum tnd_cli_opt {
    TND_OPT_REPO = 256,
    TND_OPT_CONFIG,
    TND_OPT_LLM,
    TND_OPT_BASE_URL,
    TND_OPT_TASK_FILE,
    TND_OPT_RECORD,
    TND_OPT_DIFF,
    TND_OPT_TIMEOUT,
    TND_OPT_ITERATIONS,
    TND_OPT_TOKENS,
    TND_OPT_CALLS,
    TND_OPT_OLDER_THAN,
    TND_OPT_FOR,
    TND_OPT_FORMAT,
    TND_OPT_BIND,
    TND_OPT_MAX_SESSIONS,
    TND_OPT_QUEUE_MAX,
    TND_OPT_DRAIN_S,
    TND_OPT_STATE,
    TND_OPT_CONNECT,
    TND_OPT_ATTACH,
    TND_OPT_OUT,
    TND_OPT_NAME,
    TND_OPT_ON_ERROR,
    TND_OPT_POOL,
    TND_OPT_SERVER_KEY,
    TND_OPT_KEY,
    TND_OPT_RECONNECT_S,
    TND_OPT_KEEP_WORKSPACE, /* from here on, flags: no value */
    TND_OPT_STAGED,
    TND_OPT_WAITING,
    TND_OPT_DRY_RUN,
    TND_OPT_JSON,
    TND_OPT_FORCE,
    TND_OPT_DETACH,
    TND_OPT_STATUS,
    TND_OPT_ALLOW_EMPTY,
    TND_OPT_REVIEW,
    TND_OPT_APPLY,
    TND_OPT_COMMIT,
    TND_OPT_SERVER,
    TND_OPT_INSECURE,
    TND_OPT_PLAIN, /* the last long one */
    TND_OPT_MESSAGE = 'm',
    TND_OPT_QUIET = 'q',
    TND_OPT_VERBOSE = 'v',
} tnd_cli_opt;

/* Most options one command accepts. */
#define TND_CLI_MAX_OPTIONS 24

/* One command's options being parsed (getopt_long underneath: optarg
 * and optind are getopt's). */
typedef struct tnd_cli {
    const char *cmd; /* "run", "sessions prune": for messages */
    tnd_cli_usage_fn *usage;
    int status; /* once tnd_cli_next says stop: the command's exit code */
    int argc;
    int end; /* operands met so far are moved to argv[end..argc) */
    char **argv;
    struct option longs[TND_CLI_MAX_OPTIONS + 2]; /* accepted, -h, end */
    char shorts[2 * TND_CLI_MAX_OPTIONS + 4];     /* their letters */
} tnd_cli;

/* Start on argv (argv[0] is the command's name) for cmd, whose help is
 * usage and which accepts the options in accepts (0-terminated, at most
 * TND_CLI_MAX_OPTIONS; -h is always taken). Options may come before,
 * between or after the operands (a task's words), GNU-style: "--" ends
 * them, so a word starting with '-' that is not an option goes after
 * it. */
void tnd_cli_start(tnd_cli *self, const char *cmd, tnd_cli_usage_fn *usage,
                   const int *accepts, int argc, char **argv);

/* The next option's id (its value, for one that takes a value, in
 * optarg); 0 when the options end (the operands are then argv[optind..
 * argc), in the order given, whether they came before the options,
 * between them or after them or "--");
 * -1 when the command stops with self->status: TND_EXIT_OK after -h
 * printed its help, TND_EXIT_USAGE after saying on stderr what is wrong
 * (an option the command does not take, or one without its value). */
int tnd_cli_next(tnd_cli *self);

/* "tandem CMD: MESSAGE" and "try 'tandem CMD --help'" on stderr. Returns
 * TND_EXIT_USAGE, for `return tnd_cli_error(...)`. */
int tnd_cli_error(const tnd_cli *self, const char *fmt, ...) TND_PRINTF(2, 3);

#endif
