/* tandem: the command line. Subcommands dispatch to their modules; this
 * file only parses arguments and prints help. */
#include <errno.h>
#include <getopt.h>
#include <stdbool.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/str.h"
#include "common/xalloc.h"
#include "orchestrator/cli.h"
#include "orchestrator/doctor.h"
#include "orchestrator/findings.h"
#include "orchestrator/init_cmd.h"
#include "orchestrator/keys_cmd.h"
#include "orchestrator/lessons_cmd.h"
#include "orchestrator/run.h"
#include "orchestrator/history_cmd.h"
#include "orchestrator/hook_cmd.h"
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
          "  init            write an agents.yaml guessed from the repository\n"
          "  keys generate   write a CURVE key pair for tcp:// endpoints\n"
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
          "  hook COMMAND    install or uninstall a git pre-commit hook\n"
          "                  that reviews each commit\n"
          "  help [COMMAND]  show help for tandem or a command\n"
          "\n"
          "options:\n"
          "  -h, --help      show this help\n"
          "  --version       show the version\n"
          "\n"
          "exit status: 0 approved/ok, 1 rejected or failed, 2 usage or\n"
          "configuration error, 3 waiting for a human, 4 could not review\n"
          "(tandem review), 5 approved but not applied or not committed\n"
          "(--apply, --commit), 75 the server is busy or stopping (submit,\n"
          "or an answer to a session it ran: try again later), 130\n"
          "interrupted (128 + the signal; 'tandem resume ID' goes on)\n"
          "\n"
          "'tandem COMMAND --help' shows a command's options.\n",
          to);
}

static void run_usage(const char *name, FILE *to)
{
    (void)name;
    fputs(
        "usage: tandem run [options] TASK...\n"
        "\n"
        "Do TASK in a repository: the coder proposes a change in an\n"
        "isolated copy, the reviewer builds, tests and critiques it, and\n"
        "the gate decides. Your files are not modified unless --apply\n"
        "asks. The approved diff goes to stdout, progress and a summary to\n"
        "stderr, and everything else to REPO/.tandem/sessions/ID/\n"
        "(report.json, attempt-N.diff, final.diff, agent logs).\n"
        "\n"
        "Options may also follow the task; -- ends them, so a word of the\n"
        "task that starts with '-' goes after it.\n"
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
        "  --insecure           allow a tcp:// orchestrator.endpoint without\n"
        "                       CURVE, loopback too (as\n"
        "                       orchestrator.insecure: true); the report\n"
        "                       says so\n"
        "  --apply              once approved, apply the change to the\n"
        "                       repository, only if it applies cleanly to\n"
        "                       the files as they are then (else they are\n"
        "                       left alone: exit 5, the patch is in\n"
        "                       final.diff)\n"
        "  --commit             as --apply, then commit the files the\n"
        "                       change touches (and nothing else) with the\n"
        "                       coder's rationale as the message; git only.\n"
        "                       The run works on HEAD's tree, without your\n"
        "                       uncommitted changes: it audits the commit\n"
        "                       it makes\n"
        "  --json               print the session's report (report.json)\n"
        "                       on stdout instead of the diff, which is\n"
        "                       in it (final_diff_text)\n"
        "  -q, --quiet          no progress lines\n"
        "  -v, --verbose        debug logging from tandem and the agents\n"
        "  -h, --help           show this help\n"
        "\n"
        "exit status: 0 approved (and applied, with --apply), 1 rejected\n"
        "(by a person, or a human needed under gate.escalate: never) or\n"
        "failed, or the diff could not be written on stdout (said on\n"
        "stderr), 2 usage or configuration error, 3 needs a human (the\n"
        "loop could not converge, a budget ran out, too little\n"
        "confidence, a change to gate.risk_paths), 5 approved but not\n"
        "applied or not committed (--apply, --commit), 130 interrupted\n"
        "(128 + the signal; 'tandem resume ID' goes on)\n",
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

/* Which of llm and base_url are the environment's (no option replaced
 * getenv's value), for their errors: "TANDEM_LLM", "TANDEM_BASE_URL",
 * both, or NULL. A TANDEM_LLM=gpt-4o-mini was reported as a bad --llm
 * that was never given. */
static const char *from_env(const char *llm, const char *base_url)
{
    bool l = llm && llm == env("TANDEM_LLM");
    bool u = base_url && base_url == env("TANDEM_BASE_URL");

    return l && u ? "TANDEM_LLM and TANDEM_BASE_URL"
           : l    ? "TANDEM_LLM"
           : u    ? "TANDEM_BASE_URL"
                  : NULL;
}

/* Options run and review start from: the model from the environment. */
static void run_options_init(tnd_run_options *o)
{
    memset(o, 0, sizeof(*o));
    o->llm = env("TANDEM_LLM");
    o->base_url = env("TANDEM_BASE_URL");
}

/* Take an option run and review share (c from tnd_cli_next, its value
 * in optarg) into o; false when c is not one of them. */
static bool run_option(tnd_run_options *o, int c)
{
    switch (c) {
    case TND_OPT_REPO:
        o->repo = optarg;
        return true;
    case TND_OPT_CONFIG:
        o->config = optarg;
        return true;
    case TND_OPT_LLM:
        o->llm = optarg;
        return true;
    case TND_OPT_BASE_URL:
        o->base_url = optarg;
        return true;
    case TND_OPT_QUIET:
        o->quiet = true;
        return true;
    case TND_OPT_VERBOSE:
        o->verbose = true;
        return true;
    case TND_OPT_JSON:
        o->json = true;
        return true;
    case TND_OPT_INSECURE:
        o->insecure = true;
        return true;
    default:
        return false;
    }
}

static int cmd_run(const char *name, int argc, char **argv)
{
    static const int accepts[] = {TND_OPT_REPO,     TND_OPT_CONFIG,
                                  TND_OPT_LLM,      TND_OPT_BASE_URL,
                                  TND_OPT_RECORD,   TND_OPT_KEEP_WORKSPACE,
                                  TND_OPT_JSON,     TND_OPT_QUIET,
                                  TND_OPT_VERBOSE,  TND_OPT_TASK_FILE,
                                  TND_OPT_APPLY,    TND_OPT_COMMIT,
                                  TND_OPT_INSECURE, 0};
    tnd_run_options o;
    const char *task_file = NULL;
    char *task = NULL;
    tnd_cli cli;
    int c, code;

    run_options_init(&o);
    tnd_cli_start(&cli, name, run_usage, accepts, argc, argv);
    while ((c = tnd_cli_next(&cli)) > 0) {
        if (run_option(&o, c))
            continue;
        if (c == TND_OPT_TASK_FILE)
            task_file = optarg;
        else if (c == TND_OPT_KEEP_WORKSPACE)
            o.keep_workspace = true;
        else if (c == TND_OPT_RECORD)
            o.record = optarg;
        else if (c == TND_OPT_APPLY && o.apply != TND_APPLY_COMMIT)
            o.apply = TND_APPLY_TREE;
        else /* --commit, which implies --apply */
            o.apply = TND_APPLY_COMMIT;
    }
    if (c < 0)
        return cli.status;
    if (task_file && optind < argc)
        return tnd_cli_error(&cli, "give the task as arguments or with "
                                   "--task-file, not both");
    if (task_file && !(task = read_task_file(task_file)))
        return tnd_cli_error(&cli, "%s", tnd_error_last());
    if (!task && !(task = task_from_args(argc - optind, argv + optind, name)))
        return TND_EXIT_USAGE;
    tnd_str_trim(task);
    if (!*task) {
        free(task);
        return tnd_cli_error(&cli, "say what to do, e.g. tandem run \"make "
                                   "the failing test pass\"");
    }
    o.task = task;
    o.from_env = from_env(o.llm, o.base_url);
    code = tnd_run(&o);
    free(task);
    return code;
}

static void review_usage(const char *name, FILE *to)
{
    (void)name;
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
        "Options may also follow the task; -- ends them.\n"
        "\n"
        "options:\n"
        "  --diff FILE          review the patch in FILE ('-': stdin), a\n"
        "                       unified diff against the files as they are\n"
        "  --staged             only the staged changes (git diff --cached),\n"
        "                       what a commit would take: for a pre-commit\n"
        "                       hook\n"
        "  --allow-empty        no git changes is exit 0, saying there was\n"
        "                       nothing to review (a commit that changes no\n"
        "                       file: --amend of the message, --allow-empty);\n"
        "                       with --staged only in a commit's hook, where\n"
        "                       git sets GIT_INDEX_FILE (pre-commit run\n"
        "                       --all-files in CI stages nothing: exit 2)\n"
        "  --on-error WHAT      a review that could not be done (the model\n"
        "                       unreachable, no key, an agent that crashed):\n"
        "                       fail (exit 4, the default) or pass (exit 0\n"
        "                       with a warning)\n"
        "  --format FORMAT      write the findings on stdout as sarif\n"
        "                       (SARIF 2.1.0), rdjsonl (reviewdog) or\n"
        "                       github (workflow commands), whatever the\n"
        "                       outcome\n"
        "  --insecure           allow a tcp:// orchestrator.endpoint without\n"
        "                       CURVE, loopback too; the report says so\n"
        "  --json               print the session's report (report.json)\n"
        "                       on stdout instead of the findings\n"
        "  --repo DIR           the repository (default: .)\n"
        "  --config FILE        agents.yaml to use (default: REPO/agents.yaml\n"
        "                       when it exists, else built-in defaults)\n"
        "  --llm PROVIDER:MODEL use this model for the reviewer (env\n"
        "                       TANDEM_LLM)\n"
        "  --base-url URL       API base URL for that provider (env\n"
        "                       TANDEM_BASE_URL)\n"
        "  -q, --quiet          no progress lines, and nothing at all when\n"
        "                       the change is approved\n"
        "  -v, --verbose        debug logging from tandem and the agents\n"
        "  -h, --help           show this help\n"
        "\n"
        "exit status: 0 approved (or nothing to review, with --allow-empty),\n"
        "1 rejected, or the findings could not be written on stdout, 2\n"
        "usage or configuration error (or nothing to review), 3 needs a\n"
        "human, 4 could not review (0 with --on-error pass), 130\n"
        "interrupted (128 + the signal)\n",
        to);
}

static int cmd_review(const char *name, int argc, char **argv)
{
    static const int accepts[] = {
        TND_OPT_REPO,  TND_OPT_CONFIG,  TND_OPT_LLM,         TND_OPT_BASE_URL,
        TND_OPT_QUIET, TND_OPT_VERBOSE, TND_OPT_STAGED,      TND_OPT_DIFF,
        TND_OPT_JSON,  TND_OPT_FORMAT,  TND_OPT_ALLOW_EMPTY, TND_OPT_ON_ERROR,
        TND_OPT_APPLY, TND_OPT_COMMIT,  TND_OPT_INSECURE,    0};
    tnd_run_options o;
    char *task;
    tnd_cli cli;
    int c, code;

    run_options_init(&o);
    o.review = true;
    tnd_cli_start(&cli, name, review_usage, accepts, argc, argv);
    while ((c = tnd_cli_next(&cli)) > 0) {
        if (run_option(&o, c))
            continue;
        if (c == TND_OPT_DIFF)
            o.diff = optarg;
        else if (c == TND_OPT_STAGED)
            o.staged = true;
        else if (c == TND_OPT_ALLOW_EMPTY)
            o.allow_empty = true;
        else if (c == TND_OPT_APPLY || c == TND_OPT_COMMIT)
            return tnd_cli_error(&cli,
                                 "%s is for tandem run: a review judges a "
                                 "change that is already in your tree, so "
                                 "there is nothing to apply or commit; "
                                 "commit it yourself once approved",
                                 c == TND_OPT_APPLY ? "--apply" : "--commit");
        else if (c == TND_OPT_ON_ERROR && strcmp(optarg, "fail") == 0)
            o.on_error = TND_ON_ERROR_FAIL;
        else if (c == TND_OPT_ON_ERROR && strcmp(optarg, "pass") == 0)
            o.on_error = TND_ON_ERROR_PASS;
        else if (c == TND_OPT_ON_ERROR)
            return tnd_cli_error(&cli,
                                 "--on-error must be fail (exit 4) or pass "
                                 "(exit 0 with a warning), got \"%s\"",
                                 optarg);
        else if (tnd_findings_format_parse(&o.format, optarg) < 0)
            return tnd_cli_error(&cli, "%s", tnd_error_last());
    }
    if (c < 0)
        return cli.status;
    if (o.json && o.format)
        return tnd_cli_error(&cli, "--json prints the report and --format "
                                   "the findings; give one of them");
    if (o.diff && o.allow_empty)
        return tnd_cli_error(&cli, "--allow-empty is for git's changes (a "
                                   "commit with none); a --diff patch must "
                                   "hold one");
    if (o.diff && o.staged)
        return tnd_cli_error(&cli, "--staged picks git's staged changes; it "
                                   "cannot go with --diff");
    if (!(task = task_from_args(argc - optind, argv + optind, name)))
        return TND_EXIT_USAGE;
    tnd_str_trim(task);
    o.task = *task ? task : "review this change";
    o.from_env = from_env(o.llm, o.base_url);
    code = tnd_run(&o);
    free(task);
    return code;
}

static void doctor_usage(const char *name, FILE *to)
{
    (void)name;
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
          "  --json               print the checks as one JSON document\n"
          "  -h, --help           show this help\n"
          "\n"
          "exit status: 0 every check passed, 1 a check failed, 2 usage "
          "error\n",
          to);
}

static int cmd_doctor(const char *name, int argc, char **argv)
{
    static const int accepts[] = {TND_OPT_REPO,
                                  TND_OPT_CONFIG,
                                  TND_OPT_LLM,
                                  TND_OPT_BASE_URL,
                                  TND_OPT_TIMEOUT,
                                  TND_OPT_JSON,
                                  0};
    tnd_doctor_options o;
    tnd_cli cli;
    char *end;
    long secs;
    int c;

    memset(&o, 0, sizeof(o));
    o.llm = env("TANDEM_LLM");
    o.base_url = env("TANDEM_BASE_URL");
    o.timeout_ms = 10000;
    tnd_cli_start(&cli, name, doctor_usage, accepts, argc, argv);
    while ((c = tnd_cli_next(&cli)) > 0) {
        if (c == TND_OPT_REPO)
            o.repo = optarg;
        else if (c == TND_OPT_CONFIG)
            o.config = optarg;
        else if (c == TND_OPT_LLM)
            o.llm = optarg;
        else if (c == TND_OPT_BASE_URL)
            o.base_url = optarg;
        else if (c == TND_OPT_JSON)
            o.json = true;
        else if ((secs = strtol(optarg, &end, 10)) >= 1 && secs <= 600 && !*end)
            o.timeout_ms = secs * 1000; /* TND_OPT_TIMEOUT */
        else
            return tnd_cli_error(&cli,
                                 "--timeout must be 1..600 seconds, got "
                                 "\"%s\"",
                                 optarg);
    }
    if (c < 0)
        return cli.status;
    if (optind < argc)
        return tnd_cli_error(&cli, "unexpected argument '%s'", argv[optind]);
    o.from_env = from_env(o.llm, o.base_url);
    return tnd_doctor(&o);
}

/* Every command, for dispatch and for `tandem help CMD`. */
static const tnd_cli_command commands[] = {
    {"run", cmd_run, run_usage},
    {"review", cmd_review, review_usage},
    {"doctor", cmd_doctor, doctor_usage},
    {"init", tnd_init_cmd, tnd_init_cmd_usage},
    {"keys", tnd_keys_cmd, tnd_keys_cmd_usage},
    {"serve", tnd_cmd_serve, tnd_cmd_serve_usage},
    {"submit", tnd_cmd_submit, tnd_cmd_submit_usage},
    {"resume", tnd_cmd_continue, tnd_cmd_continue_usage},
    {"approve", tnd_cmd_continue, tnd_cmd_continue_usage},
    {"reject", tnd_cmd_continue, tnd_cmd_continue_usage},
    {"guide", tnd_cmd_continue, tnd_cmd_continue_usage},
    {"budget", tnd_cmd_continue, tnd_cmd_continue_usage},
    {"sessions", tnd_cmd_history, tnd_cmd_history_usage},
    {"show", tnd_cmd_history, tnd_cmd_history_usage},
    {"stats", tnd_cmd_history, tnd_cmd_history_usage},
    {"watch", tnd_cmd_history, tnd_cmd_history_usage},
    {"lessons", tnd_cmd_lessons, tnd_cmd_lessons_usage},
    {"hook", tnd_cmd_hook, tnd_cmd_hook_usage},
};

/* The command called name; NULL when there is none. */
static const tnd_cli_command *command(const char *name)
{
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
        if (strcmp(commands[i].name, name) == 0)
            return &commands[i];
    return NULL;
}

/* code, unless what the command wrote on stdout was lost (a full disk, a
 * closed pipe) where it would have exited 0: then 1, said on stderr. A
 * command that saw the failure itself (run, review) has said so and
 * exits 1 already; one that exits with another code keeps it. */
static int written(int code)
{
    int failed = fflush(stdout) != 0 ? errno : 0;

    if (code != TND_EXIT_OK || (!failed && !ferror(stdout)))
        return code;
    fprintf(stderr, "tandem: cannot write the output on stdout%s%s\n",
            failed ? ": " : "", failed ? strerror(failed) : "");
    return TND_EXIT_FAILED;
}

static int dispatch(int argc, char **argv)
{
    const char *cmd = argc > 1 ? argv[1] : NULL;
    const tnd_cli_command *c;

    tnd_fs_std_fds();
    if (!cmd) {
        usage(stderr);
        return TND_EXIT_USAGE;
    }
    /* help, help help, help --help: what help is for is tandem's help */
    if (strcmp(cmd, "-h") == 0 || strcmp(cmd, "--help") == 0 ||
        (strcmp(cmd, "help") == 0 &&
         (argc < 3 || (argc == 3 && (strcmp(argv[2], "help") == 0 ||
                                     strcmp(argv[2], "--help") == 0 ||
                                     strcmp(argv[2], "-h") == 0))))) {
        usage(stdout);
        return TND_EXIT_OK;
    }
    if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "version") == 0) {
        if (argc > 2) {
            fprintf(stderr, "tandem %s: unexpected arguments\n", cmd);
            return TND_EXIT_USAGE;
        }
        printf("tandem %s\n", TND_VERSION);
        return TND_EXIT_OK;
    }
    if (strcmp(cmd, "help") == 0) {
        if (!(c = command(argv[2]))) {
            fprintf(stderr, "tandem help: no command '%s'\n", argv[2]);
            return TND_EXIT_USAGE;
        }
        if (argc > 3 && argc < 8) {
            /* `tandem help hook install`: the subcommand's own help, as
             * `tandem hook install --help` (it gave hook's) */
            static char help[] = "--help";
            char *sub[8] = {NULL};
            for (int i = 2; i < argc; i++)
                sub[i - 2] = argv[i];
            sub[argc - 2] = help;
            return c->run(c->name, argc - 1, sub);
        }
        c->usage(c->name, stdout);
        return TND_EXIT_OK;
    }
    if ((c = command(cmd)))
        return c->run(c->name, argc - 1, argv + 1);
    fprintf(stderr, "tandem: unknown command '%s'\ntry 'tandem --help'\n", cmd);
    return TND_EXIT_USAGE;
}

/* A command a signal stopped (128 + its number) dies of it once all is
 * saved and its agents are gone, as a program should: the shell loop,
 * make or xargs that ran it stops too. An exit 130 let `for t in a b;
 * do tandem run "$t"; done` go on to the next task, paying for it, at
 * every Ctrl-C. The shell still reads 128 + the signal. */
static int die_of_signal(int code)
{
    static const int stops[] = {SIGINT, SIGTERM, SIGHUP};
    sigset_t set;

    for (size_t i = 0; i < sizeof(stops) / sizeof(*stops); i++) {
        if (code != TND_EXIT_SIGNAL + stops[i])
            continue;
        fflush(NULL);
        signal(stops[i], SIG_DFL);
        sigemptyset(&set);
        sigaddset(&set, stops[i]);
        sigprocmask(SIG_UNBLOCK, &set, NULL);
        raise(stops[i]);
    }
    return code;
}

int main(int argc, char **argv)
{
    return die_of_signal(written(dispatch(argc, argv)));
}
