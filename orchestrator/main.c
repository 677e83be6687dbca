/* tandem: the command line. Subcommands dispatch to their modules; this
 * file only parses arguments and prints help. */
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/str.h"
#include "common/xalloc.h"
#include "orchestrator/doctor.h"
#include "orchestrator/lessons_cmd.h"
#include "orchestrator/run.h"
#include "orchestrator/history_cmd.h"
#include "orchestrator/serve.h"
#include "orchestrator/session_cmd.h"
#include "orchestrator/submit.h"
#include "proto/body.h"

static void usage(FILE *to)
{
    fputs("usage: tandem COMMAND [options]\n"
          "\n"
          "tandem: a coder agent proposes a change, a reviewer agent audits\n"
          "it with real tools and an LLM critique, and nothing gets through\n"
          "until the audit gate approves it.\n"
          "\n"
          "commands:\n"
          "  run TASK...     do a task in a repository through the gate loop\n"
          "  review [TASK]   audit an existing change (git changes, or a\n"
          "                  patch with --diff) through the same gate\n"
          "  serve           one resident orchestrator for many tasks\n"
          "  submit TASK...  send a task to 'tandem serve' and wait for it\n"
          "  doctor          check the config, the models, keys and tools\n"
          "  resume ID       go on with a session after a crash or a stop\n"
          "  approve ID      approve the proposal of a session that waits\n"
          "  reject ID       reject it (-m WHY)\n"
          "  guide ID        give the coder guidance and go on (-m TEXT)\n"
          "  budget ID       grant more attempts (--iterations N) and go "
          "on\n"
          "  sessions        list the sessions of a repository ('sessions\n"
          "                  prune' removes old ones)\n"
          "  show ID         a session's reflection log and its diff\n"
          "  stats           figures across sessions (--json)\n"
          "  watch [ID]      a live view of running sessions\n"
          "  lessons COMMAND list, show or forget what earlier tasks "
          "taught\n"
          "  help [COMMAND]  show help for tandem or a command\n"
          "\n"
          "options:\n"
          "  -h, --help      show this help\n"
          "  --version       show the version\n"
          "\n"
          "exit status: 0 approved/ok, 1 rejected or failed, 2 usage or\n"
          "configuration error, 3 waiting for a human, 130 interrupted\n"
          "(128 + the signal; 'tandem resume ID' goes on)\n"
          "\n"
          "'tandem COMMAND --help' shows a command's options.\n",
          to);
}

static void run_usage(FILE *to)
{
    fputs(
        "usage: tandem run [options] TASK...\n"
        "\n"
        "Do TASK in a repository: the coder proposes a change in an\n"
        "isolated copy, the reviewer builds, tests and critiques it, and\n"
        "the gate decides. Your files are not modified. The approved diff\n"
        "goes to stdout, progress and a summary to stderr, and everything\n"
        "else to REPO/.tandem/sessions/ID/ (report.json, attempt-N.diff,\n"
        "final.diff, agent logs).\n"
        "\n"
        "options:\n"
        "  --repo DIR           the repository (default: .)\n"
        "  --config FILE        agents.yaml to use (default: REPO/agents.yaml\n"
        "                       when it exists, else built-in defaults)\n"
        "  --llm PROVIDER:MODEL use this model for every agent, e.g.\n"
        "                       openai:gpt-4o-mini (env TANDEM_LLM)\n"
        "  --base-url URL       API base URL for that provider, e.g.\n"
        "                       http://localhost:8080/v1 (env "
        "TANDEM_BASE_URL)\n"
        "  --task-file FILE     read the task from FILE ('-': stdin)\n"
        "  --record FILE        write the live models' answers to FILE, a\n"
        "                       cassette the replay provider plays back\n"
        "  --keep-workspace     keep the workspace copy for inspection\n"
        "  -q, --quiet          no progress lines\n"
        "  -v, --verbose        debug logging from tandem and the agents\n"
        "  -h, --help           show this help\n"
        "\n"
        "exit status: 0 approved, 1 failed, 2 usage or configuration\n"
        "error, 3 needs a human (the loop could not converge), 130\n"
        "interrupted (128 + the signal; 'tandem resume ID' goes on)\n",
        to);
}

/* An environment variable's value; NULL when unset or empty. */
static const char *env(const char *name)
{
    const char *v = getenv(name);

    return v && *v ? v : NULL;
}

/* The words of a task joined by spaces, or NULL (said on stderr) when
 * they are longer than the protocol allows. Caller frees. */
static char *task_from_args(int argc, char **argv, const char *cmd)
{
    tnd_buf b;

    tnd_buf_init(&b, TND_BODY_MAX_TASK);
    for (int i = 0; i < argc; i++)
        if (tnd_buf_printf(&b, "%s%s", i ? " " : "", argv[i]) < 0) {
            fprintf(stderr, "tandem %s: the task is longer than %d bytes\n",
                    cmd, TND_BODY_MAX_TASK);
            tnd_buf_free(&b);
            return NULL;
        }
    return tnd_buf_detach(&b, NULL);
}

/* The task in a file, or on stdin for "-": NULL with the error set when
 * it cannot be read, is not a regular file, or is over the protocol's
 * cap. Caller frees. */
static char *read_task_file(const char *path)
{
    char *text = NULL;
    int error;

    if (strcmp(path, "-") == 0) {
        error = tnd_fs_read_fd(&text, NULL, STDIN_FILENO, "stdin",
                               TND_BODY_MAX_TASK);
        if (error < 0)
            tnd_error_set("--task-file -: %s", tnd_error_last());
        return text;
    }
    error = tnd_fs_read(&text, NULL, path, TND_BODY_MAX_TASK);
    if (error == TND_ENOTFOUND)
        tnd_error_set("--task-file %s does not exist", path);
    else if (error < 0)
        tnd_error_set("--task-file: %s; give a regular file of at most %d "
                      "KiB, or - for stdin",
                      tnd_error_last(), TND_BODY_MAX_TASK >> 10);
    return text;
}

/* The long options' codes: those run and review (and doctor) have in
 * common, then each command's own. */
enum {
    O_REPO = 256,
    O_CONFIG,
    O_LLM,
    O_BASE_URL,
    O_TASK_FILE,
    O_KEEP,
    O_RECORD,
    O_DIFF,
    O_STAGED,
    O_TIMEOUT
};

/* Options run and review start from: the model from the environment. */
static void run_options_init(tnd_run_options *o)
{
    memset(o, 0, sizeof(*o));
    o->llm = env("TANDEM_LLM");
    o->base_url = env("TANDEM_BASE_URL");
}

/* Take an option run and review share (c from getopt_long, its value in
 * optarg) into o; false when c is not one of them. */
static bool run_option(tnd_run_options *o, int c)
{
    switch (c) {
    case O_REPO:
        o->repo = optarg;
        return true;
    case O_CONFIG:
        o->config = optarg;
        return true;
    case O_LLM:
        o->llm = optarg;
        return true;
    case O_BASE_URL:
        o->base_url = optarg;
        return true;
    case 'q':
        o->quiet = true;
        return true;
    case 'v':
        o->verbose = true;
        return true;
    default:
        return false;
    }
}

static int cmd_run(int argc, char **argv)
{
    static const struct option longs[] = {
        {"repo", required_argument, NULL, O_REPO},
        {"config", required_argument, NULL, O_CONFIG},
        {"llm", required_argument, NULL, O_LLM},
        {"base-url", required_argument, NULL, O_BASE_URL},
        {"task-file", required_argument, NULL, O_TASK_FILE},
        {"keep-workspace", no_argument, NULL, O_KEEP},
        {"record", required_argument, NULL, O_RECORD},
        {"quiet", no_argument, NULL, 'q'},
        {"verbose", no_argument, NULL, 'v'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    tnd_run_options o;
    const char *task_file = NULL;
    char *task = NULL;
    int c, code;

    run_options_init(&o);
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "+qvh", longs, NULL)) != -1) {
        if (run_option(&o, c))
            continue;
        switch (c) {
        case O_TASK_FILE:
            task_file = optarg;
            break;
        case O_KEEP:
            o.keep_workspace = true;
            break;
        case O_RECORD:
            o.record = optarg;
            break;
        case 'h':
            run_usage(stdout);
            return TND_EXIT_OK;
        default:
            fprintf(stderr, "tandem run: unknown option '%s'\n",
                    argv[optind - 1]);
            fprintf(stderr, "try 'tandem run --help'\n");
            return TND_EXIT_USAGE;
        }
    }
    if (task_file && optind < argc) {
        fprintf(stderr, "tandem run: give the task as arguments or with "
                        "--task-file, not both\n");
        return TND_EXIT_USAGE;
    }
    if (task_file) {
        if (!(task = read_task_file(task_file))) {
            fprintf(stderr, "tandem run: %s\n", tnd_error_last());
            return TND_EXIT_USAGE;
        }
    } else {
        if (!(task = task_from_args(argc - optind, argv + optind, "run")))
            return TND_EXIT_USAGE;
    }
    tnd_str_trim(task);
    if (!*task) {
        fprintf(stderr, "tandem run: say what to do, e.g. tandem run "
                        "\"make the failing test pass\"\n"
                        "try 'tandem run --help'\n");
        free(task);
        return TND_EXIT_USAGE;
    }
    o.task = task;
    code = tnd_run(&o);
    free(task);
    return code;
}

static void review_usage(FILE *to)
{
    fputs(
        "usage: tandem review [options] [TASK...]\n"
        "\n"
        "Audit a change that already exists, with the reviewer and the\n"
        "gate of `tandem run` but no coder: the change is applied to an\n"
        "isolated copy, the skills and the critique judge it, and the\n"
        "gate decides. TASK says what the change is meant to do (the\n"
        "critique judges it against that; default: \"review this\n"
        "change\"). Without --diff the change is the repository's git\n"
        "changes against HEAD (untracked files are not part of it).\n"
        "Your files are not modified. A rejected change prints the\n"
        "findings on stdout; the session is in REPO/.tandem/sessions/ID/.\n"
        "\n"
        "options:\n"
        "  --diff FILE          review the patch in FILE ('-': stdin), a\n"
        "                       unified diff against the files as they are\n"
        "  --staged             only the staged changes (git diff --cached),\n"
        "                       what a commit would take: for a pre-commit\n"
        "                       hook\n"
        "  --repo DIR           the repository (default: .)\n"
        "  --config FILE        agents.yaml to use (default: REPO/agents.yaml\n"
        "                       when it exists, else built-in defaults)\n"
        "  --llm PROVIDER:MODEL use this model for the reviewer (env\n"
        "                       TANDEM_LLM)\n"
        "  --base-url URL       API base URL for that provider (env\n"
        "                       TANDEM_BASE_URL)\n"
        "  -q, --quiet          no progress lines\n"
        "  -v, --verbose        debug logging from tandem and the agents\n"
        "  -h, --help           show this help\n"
        "\n"
        "exit status: 0 approved, 1 rejected or failed, 2 usage or\n"
        "configuration error (or nothing to review), 3 needs a human,\n"
        "130 interrupted (128 + the signal)\n",
        to);
}

static int cmd_review(int argc, char **argv)
{
    static const struct option longs[] = {
        {"repo", required_argument, NULL, O_REPO},
        {"config", required_argument, NULL, O_CONFIG},
        {"llm", required_argument, NULL, O_LLM},
        {"base-url", required_argument, NULL, O_BASE_URL},
        {"diff", required_argument, NULL, O_DIFF},
        {"staged", no_argument, NULL, O_STAGED},
        {"quiet", no_argument, NULL, 'q'},
        {"verbose", no_argument, NULL, 'v'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    tnd_run_options o;
    char *task;
    int c, code;

    run_options_init(&o);
    o.review = true;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "+qvh", longs, NULL)) != -1) {
        if (run_option(&o, c))
            continue;
        switch (c) {
        case O_DIFF:
            o.diff = optarg;
            break;
        case O_STAGED:
            o.staged = true;
            break;
        case 'h':
            review_usage(stdout);
            return TND_EXIT_OK;
        default:
            fprintf(stderr,
                    "tandem review: unknown option '%s'\n"
                    "try 'tandem review --help'\n",
                    argv[optind - 1]);
            return TND_EXIT_USAGE;
        }
    }
    if (o.diff && o.staged) {
        fprintf(stderr, "tandem review: --staged picks git's staged "
                        "changes; it cannot go with --diff\n");
        return TND_EXIT_USAGE;
    }
    if (!(task = task_from_args(argc - optind, argv + optind, "review")))
        return TND_EXIT_USAGE;
    tnd_str_trim(task);
    o.task = *task ? task : "review this change";
    code = tnd_run(&o);
    free(task);
    return code;
}

static void doctor_usage(FILE *to)
{
    fputs("usage: tandem doctor [options]\n"
          "\n"
          "Check that a run can work: the configuration loads, the agent\n"
          "programs exist, each agent's API key variable is set (the value\n"
          "is never shown), each endpoint answers and offers the model\n"
          "(asking for its model list, not for a completion), and the\n"
          "programs the skills run are on PATH. Prints a table.\n"
          "\n"
          "options:\n"
          "  --repo DIR           the repository (default: .)\n"
          "  --config FILE        agents.yaml to check (default: as tandem\n"
          "                       run finds it)\n"
          "  --llm PROVIDER:MODEL check this model instead (env TANDEM_LLM)\n"
          "  --base-url URL       and this base URL (env TANDEM_BASE_URL)\n"
          "  --timeout S          seconds per endpoint check (default 10)\n"
          "  -h, --help           show this help\n"
          "\n"
          "exit status: 0 every check passed, 1 a check failed, 2 usage "
          "error\n",
          to);
}

static int cmd_doctor(int argc, char **argv)
{
    static const struct option longs[] = {
        {"repo", required_argument, NULL, O_REPO},
        {"config", required_argument, NULL, O_CONFIG},
        {"llm", required_argument, NULL, O_LLM},
        {"base-url", required_argument, NULL, O_BASE_URL},
        {"timeout", required_argument, NULL, O_TIMEOUT},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    tnd_doctor_options o;
    char *end;
    long secs;
    int c;

    memset(&o, 0, sizeof(o));
    o.llm = env("TANDEM_LLM");
    o.base_url = env("TANDEM_BASE_URL");
    o.timeout_ms = 10000;
    opterr = 0;
    optind = 1;
    while ((c = getopt_long(argc, argv, "+h", longs, NULL)) != -1) {
        switch (c) {
        case O_REPO:
            o.repo = optarg;
            break;
        case O_CONFIG:
            o.config = optarg;
            break;
        case O_LLM:
            o.llm = optarg;
            break;
        case O_BASE_URL:
            o.base_url = optarg;
            break;
        case O_TIMEOUT:
            secs = strtol(optarg, &end, 10);
            if (!*optarg || *end || secs < 1 || secs > 600) {
                fprintf(stderr,
                        "tandem doctor: --timeout must be 1..600 "
                        "seconds, got \"%s\"\n",
                        optarg);
                return TND_EXIT_USAGE;
            }
            o.timeout_ms = secs * 1000;
            break;
        case 'h':
            doctor_usage(stdout);
            return TND_EXIT_OK;
        default:
            fprintf(stderr,
                    "tandem doctor: unknown option '%s'\n"
                    "try 'tandem doctor --help'\n",
                    argv[optind - 1]);
            return TND_EXIT_USAGE;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "tandem doctor: unexpected argument '%s'\n",
                argv[optind]);
        return TND_EXIT_USAGE;
    }
    return tnd_doctor(&o);
}

int main(int argc, char **argv)
{
    const char *cmd = argc > 1 ? argv[1] : NULL;

    if (!cmd) {
        usage(stderr);
        return TND_EXIT_USAGE;
    }
    if (strcmp(cmd, "-h") == 0 || strcmp(cmd, "--help") == 0) {
        usage(stdout);
        return TND_EXIT_OK;
    }
    if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "version") == 0) {
        printf("tandem %s\n", TND_VERSION);
        return TND_EXIT_OK;
    }
    if (strcmp(cmd, "help") == 0) {
        if (argc > 2 && strcmp(argv[2], "run") == 0)
            run_usage(stdout);
        else if (argc > 2 && strcmp(argv[2], "review") == 0)
            review_usage(stdout);
        else if (argc > 2 && strcmp(argv[2], "doctor") == 0)
            doctor_usage(stdout);
        else if (argc > 2 && strcmp(argv[2], "serve") == 0)
            tnd_cmd_serve_usage(stdout);
        else if (argc > 2 && strcmp(argv[2], "submit") == 0)
            tnd_cmd_submit_usage(stdout);
        else if (argc > 2 && tnd_cmd_history_known(argv[2]))
            tnd_cmd_history_usage(argv[2], stdout);
        else if (argc > 2 && tnd_cmd_continue_known(argv[2]))
            tnd_cmd_continue_usage(argv[2], stdout);
        else if (argc > 2 && strcmp(argv[2], "lessons") == 0)
            tnd_cmd_lessons_usage(stdout);
        else if (argc > 2) {
            fprintf(stderr, "tandem help: no command '%s'\n", argv[2]);
            return TND_EXIT_USAGE;
        } else
            usage(stdout);
        return TND_EXIT_OK;
    }
    if (strcmp(cmd, "run") == 0)
        return cmd_run(argc - 1, argv + 1);
    if (strcmp(cmd, "review") == 0)
        return cmd_review(argc - 1, argv + 1);
    if (tnd_cmd_continue_known(cmd))
        return tnd_cmd_continue(cmd, argc - 1, argv + 1);
    if (tnd_cmd_history_known(cmd))
        return tnd_cmd_history(cmd, argc - 1, argv + 1);
    if (strcmp(cmd, "doctor") == 0)
        return cmd_doctor(argc - 1, argv + 1);
    if (strcmp(cmd, "serve") == 0)
        return tnd_cmd_serve(argc - 1, argv + 1);
    if (strcmp(cmd, "submit") == 0)
        return tnd_cmd_submit(argc - 1, argv + 1);
    if (strcmp(cmd, "lessons") == 0)
        return tnd_cmd_lessons(argc - 1, argv + 1);
    fprintf(stderr, "tandem: unknown command '%s'\ntry 'tandem --help'\n", cmd);
    return TND_EXIT_USAGE;
}
