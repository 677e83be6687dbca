/* `tandem hook` (see hook_cmd.h): the subcommand and its options, then
 * hook.c's install or uninstall, and what happened said on stderr. */
#include "orchestrator/hook_cmd.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "agents/probe.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/xalloc.h"
#include "orchestrator/cli.h"
#include "orchestrator/hook.h"
#include "orchestrator/run.h"

void tnd_cmd_hook_usage(const char *cmd, FILE *to)
{
    (void)cmd;
    fputs("usage: tandem hook COMMAND [options]\n"
          "\n"
          "tandem's git pre-commit hook: before each commit it runs\n"
          "'tandem review --staged' on what the commit takes, and a\n"
          "rejected change stops the commit. It goes where git looks for\n"
          "hooks: core.hooksPath when set, else .git/hooks. A hook that\n"
          "another program or a person wrote is never removed, and is\n"
          "replaced only with --force. (With the pre-commit framework, use\n"
          "the hook id tandem-review instead: see the README.)\n"
          "\n"
          "commands:\n"
          "  install         write tandem's pre-commit hook\n"
          "  uninstall       remove it\n"
          "\n"
          "options:\n"
          "  --repo DIR      the repository (default: .)\n"
          "  -h, --help      show this help\n"
          "\n"
          "exit status: 0 done, 1 the hook cannot be read or written, 2\n"
          "usage error, no git repository, or another hook in the way\n"
          "\n"
          "'tandem hook COMMAND --help' shows a command's help.\n",
          to);
}

static void install_usage(const char *cmd, FILE *to)
{
    (void)cmd;
    fputs("usage: tandem hook install [options]\n"
          "\n"
          "Write tandem's pre-commit hook into the hooks directory git uses\n"
          "for the repository (core.hooksPath when set, else .git/hooks),\n"
          "or rewrite it when it is already there. The hook runs 'tandem\n"
          "review --staged --allow-empty -q': it is silent when the change\n"
          "is approved, stops a rejected one, and passes a commit that\n"
          "changes no file (--amend of the message, --allow-empty). 'git\n"
          "commit --no-verify' skips it once.\n"
          "\n"
          "options:\n"
          "  --repo DIR           the repository (default: .)\n"
          "  --force              replace a pre-commit hook that is not\n"
          "                       tandem's\n"
          "  --on-error WHAT      when the review cannot be done (the model\n"
          "                       unreachable, no key): fail stops the\n"
          "                       commit (the default), pass lets it\n"
          "                       through with a warning\n"
          "  -h, --help           show this help\n"
          "\n"
          "exit status: 0 installed, 1 the hook cannot be written, 2 usage\n"
          "error, no git repository, or another hook in the way (it is\n"
          "named; --force replaces it)\n",
          to);
}

static void uninstall_usage(const char *cmd, FILE *to)
{
    (void)cmd;
    fputs("usage: tandem hook uninstall [options]\n"
          "\n"
          "Remove tandem's pre-commit hook from the hooks directory git\n"
          "uses for the repository. A pre-commit hook that is not tandem's\n"
          "is left alone (and said so).\n"
          "\n"
          "options:\n"
          "  --repo DIR           the repository (default: .)\n"
          "  -h, --help           show this help\n"
          "\n"
          "exit status: 0 removed, or no hook of tandem's there, 1 the\n"
          "hook cannot be read or removed, 2 usage error or no git\n"
          "repository\n",
          to);
}

/* What one subcommand was asked. */
typedef struct hook_args {
    const char *repo;
    bool force;
    bool on_error_pass;
} hook_args;

/* Parse `hook install|uninstall`'s options into a. -1 to go on, else the
 * exit code to return at once. */
static int parse(hook_args *a, bool install, int argc, char **argv)
{
    static const int install_opts[] = {TND_OPT_REPO, TND_OPT_FORCE,
                                       TND_OPT_ON_ERROR, 0};
    static const int uninstall_opts[] = {TND_OPT_REPO, 0};
    tnd_cli cli;
    int c;

    memset(a, 0, sizeof(*a));
    a->repo = ".";
    tnd_cli_start(&cli, install ? "hook install" : "hook uninstall",
                  install ? install_usage : uninstall_usage,
                  install ? install_opts : uninstall_opts, argc, argv);
    while ((c = tnd_cli_next(&cli)) > 0) {
        if (c == TND_OPT_REPO)
            a->repo = optarg;
        else if (c == TND_OPT_FORCE)
            a->force = true;
        else if (strcmp(optarg, "fail") == 0 || strcmp(optarg, "pass") == 0)
            a->on_error_pass = strcmp(optarg, "pass") == 0;
        else
            return tnd_cli_error(&cli,
                                 "--on-error must be fail (stop the commit) "
                                 "or pass (let it through), got \"%s\"",
                                 optarg);
    }
    if (c < 0)
        return cli.status;
    if (optind < argc)
        return tnd_cli_error(&cli, "unexpected argument '%s'", argv[optind]);
    if (!tnd_fs_is_dir(a->repo))
        return tnd_cli_error(&cli,
                             "--repo %s is not a directory; give the "
                             "repository's path",
                             a->repo);
    return -1;
}

/* The exit code of a failed hook.c call, said on stderr. */
static int failed(const char *cmd, int rc)
{
    fprintf(stderr, "tandem %s: %s\n", cmd, tnd_error_last());
    return rc == TND_ECONFIG ? TND_EXIT_USAGE : TND_EXIT_FAILED;
}

static int install(const hook_args *a)
{
    char *dir = NULL, *text = NULL;
    tnd_hook_state was;
    int rc;

    if ((rc = tnd_hook_dir(&dir, a->repo)) < 0)
        return failed("hook install", rc);
    if (!a->force && tnd_hook_shared(a->repo, dir)) {
        /* a global core.hooksPath: installed there, the hook ran for
         * every repository of the user, each sending its changes to the
         * model (a review found it done without a word) */
        fprintf(stderr,
                "tandem hook install: git's hooks for %s are in %s "
                "(core.hooksPath), outside the repository, so a hook there "
                "runs for every repository that uses that path; install it "
                "there with --force, or give this repository its own: git "
                "config core.hooksPath .git/hooks\n",
                a->repo, dir);
        free(dir);
        return TND_EXIT_USAGE;
    }
    text = tnd_hook_text(a->on_error_pass);
    rc = tnd_hook_install(&was, dir, text, a->force);
    free(text);
    if (rc < 0) {
        free(dir);
        return failed("hook install", rc);
    }
    fprintf(stderr,
            "tandem hook install: %s %s/pre-commit%s: each commit's staged "
            "changes are reviewed (a review that cannot be done %s)\n",
            was == TND_HOOK_TANDEM ? "rewrote" : "wrote", dir,
            was == TND_HOOK_FOREIGN || was == TND_HOOK_FRAMEWORK
                ? ", replacing the hook that was there (--force)"
                : "",
            a->on_error_pass ? "lets the commit through with a warning"
                             : "stops the commit");
    /* the hook runs tandem by name: said now, not at every commit */
    if (!tnd_probe_program(NULL, 0, "tandem"))
        fprintf(stderr,
                "tandem hook install: warning: tandem is not on PATH, so "
                "the hook stops every commit until it is ('make install' "
                "puts it in /usr/local/bin)\n");
    free(dir);
    return TND_EXIT_OK;
}

static int uninstall(const hook_args *a)
{
    char *dir = NULL;
    tnd_hook_state was;
    int rc;

    if ((rc = tnd_hook_dir(&dir, a->repo)) < 0)
        return failed("hook uninstall", rc);
    if ((rc = tnd_hook_uninstall(&was, dir)) < 0) {
        free(dir);
        return failed("hook uninstall", rc);
    }
    if (was == TND_HOOK_TANDEM)
        fprintf(stderr, "tandem hook uninstall: removed %s/pre-commit\n", dir);
    else if (was == TND_HOOK_NONE)
        fprintf(stderr,
                "tandem hook uninstall: %s has no pre-commit hook; nothing "
                "to remove\n",
                dir);
    else
        fprintf(stderr,
                "tandem hook uninstall: %s/pre-commit is not tandem's hook; "
                "left alone\n",
                dir);
    free(dir);
    return TND_EXIT_OK;
}

int tnd_cmd_hook(const char *cmd, int argc, char **argv)
{
    hook_args a;
    int rc;

    if (argc < 2 || strcmp(argv[1], "-h") == 0 ||
        strcmp(argv[1], "--help") == 0) {
        tnd_cmd_hook_usage(cmd, argc < 2 ? stderr : stdout);
        return argc < 2 ? TND_EXIT_USAGE : TND_EXIT_OK;
    }
    if (strcmp(argv[1], "install") == 0) {
        if ((rc = parse(&a, true, argc - 1, argv + 1)) >= 0)
            return rc;
        return install(&a);
    }
    if (strcmp(argv[1], "uninstall") == 0) {
        if ((rc = parse(&a, false, argc - 1, argv + 1)) >= 0)
            return rc;
        return uninstall(&a);
    }
    fprintf(stderr,
            "tandem hook: unknown command '%s'; use install or uninstall\n"
            "try 'tandem hook --help'\n",
            argv[1]);
    return TND_EXIT_USAGE;
}
