/* `tandem init` (see init_cmd.h): options, the file's checks and its
 * writing; the guessing is init.c's. The text is loaded back with the
 * config loader before it is written, so init never leaves a file that
 * `tandem run` refuses. */
#include "orchestrator/init_cmd.h"
#include "orchestrator/cli.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/config.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/xalloc.h"
#include "orchestrator/init.h"
#include "orchestrator/run.h"

void tnd_init_cmd_usage(const char *name, FILE *to)
{
    (void)name;
    fputs("usage: tandem init [--repo DIR] [--force]\n"
          "\n"
          "Write REPO/agents.yaml, commented, with the reviewer's build and\n"
          "test skills guessed from the repository's files: a Makefile\n"
          "(targets all, check, test), CMakeLists.txt, meson.build,\n"
          "Cargo.toml, go.mod, package.json (scripts build and test), or\n"
          "pytest's (pytest.ini, [tool.pytest] in pyproject.toml, test_*.py\n"
          "in tests/). What was guessed, and from which file, goes to\n"
          "stderr; a repository with none of them gets the skills to fill\n"
          "in. Nothing in the repository is run.\n"
          "\n"
          "options:\n"
          "  --repo DIR   the repository (default: .)\n"
          "  --force      replace an agents.yaml that is there already\n"
          "  -h, --help   show this help\n"
          "\n"
          "exit status: 0 written, 1 it could not be written, 2 usage error\n"
          "(an agents.yaml that is there already, without --force)\n",
          to);
}

/* Say what was recognised and guessed. */
static void tell(const tnd_init *g, const char *repo)
{
    static const char *const names[] = {"build", "test"};
    const char *const *found = tnd_init_found(g);

    for (const char *const *n = tnd_init_notes(g); *n; n++)
        fprintf(stderr, "tandem init: %s\n", *n);
    if (!*found) {
        fprintf(stderr,
                "tandem init: recognised no build system in %s (looked for "
                "Makefile, CMakeLists.txt, meson.build, Cargo.toml, go.mod, "
                "package.json, pytest.ini, pyproject.toml, tests/test_*.py)\n",
                repo);
        return;
    }
    fputs("tandem init: found ", stderr);
    for (size_t i = 0; found[i]; i++)
        fprintf(stderr, "%s%s", i ? ", " : "", found[i]);
    fputs("\n", stderr);
    for (int s = TND_INIT_BUILD; s <= TND_INIT_TEST; s++) {
        const char *command = tnd_init_command(g, (tnd_init_skill)s);

        if (command)
            fprintf(stderr, "tandem init: %s: %s (from %s)\n", names[s],
                    command, tnd_init_source(g, (tnd_init_skill)s));
        else
            fprintf(stderr, "tandem init: %s: none recognised\n", names[s]);
    }
}

/* Guess, check the text loads, write it. Returns a TND_EXIT_* code. */
static int write_config(const char *repo, const char *path)
{
    tnd_init *g = tnd_init_guess(repo);
    tnd_config *cfg = NULL;
    char *text = NULL, *doctor;
    int code = TND_EXIT_FAILED;

    if (!g) {
        fprintf(stderr, "tandem init: %s\n", tnd_error_last());
        return TND_EXIT_USAGE;
    }
    tell(g, repo);
    text = tnd_init_render(g);
    if (tnd_config_parse(&cfg, text, strlen(text), path, repo) < 0) {
        fprintf(stderr,
                "tandem init: the agents.yaml it made does not load (a bug "
                "in tandem init; please report it):\n%s\n",
                tnd_error_last());
        goto out;
    }
    if (tnd_fs_write_atomic(path, text, strlen(text)) < 0) {
        fprintf(stderr, "tandem init: cannot write %s: %s\n", path,
                tnd_error_last());
        goto out;
    }
    doctor = strcmp(repo, ".") == 0
                 ? tnd_xstrdup("tandem doctor")
                 : tnd_xasprintf("tandem doctor --repo %s", repo);
    if (tnd_init_command(g, TND_INIT_BUILD) ||
        tnd_init_command(g, TND_INIT_TEST))
        fprintf(stderr,
                "tandem init: wrote %s; look over its skills and models, "
                "then run '%s'\n",
                path, doctor);
    else
        fprintf(stderr,
                "tandem init: wrote %s with no skill: fill in skills.build "
                "and skills.test in it and list them in "
                "agents.reviewer.skills, then run '%s'\n",
                path, doctor);
    free(doctor);
    code = TND_EXIT_OK;
out:
    tnd_config_destroy(&cfg);
    free(text);
    tnd_init_destroy(&g);
    return code;
}

int tnd_init_cmd(const char *name, int argc, char **argv)
{
    static const int accepts[] = {TND_OPT_REPO, TND_OPT_FORCE, 0};
    const char *repo = ".";
    bool force = false;
    char *path;
    tnd_cli cli;
    int c, code;

    tnd_cli_start(&cli, name, tnd_init_cmd_usage, accepts, false, argc, argv);
    while ((c = tnd_cli_next(&cli)) > 0) {
        if (c == TND_OPT_REPO)
            repo = optarg;
        else /* TND_OPT_FORCE */
            force = true;
    }
    if (c < 0)
        return cli.status;
    if (optind < argc) {
        fprintf(stderr,
                "tandem init: unexpected argument '%s'; the repository is "
                "given with --repo DIR\n",
                argv[optind]);
        return TND_EXIT_USAGE;
    }
    if (!tnd_fs_is_dir(repo)) {
        fprintf(stderr,
                "tandem init: --repo %s is not a directory; give the "
                "repository's top directory\n",
                repo);
        return TND_EXIT_USAGE;
    }
    path = tnd_fs_join(repo, "agents.yaml");
    if (tnd_fs_exists(path) && !force) {
        fprintf(stderr,
                "tandem init: %s is there already; tandem init --force "
                "replaces it\n",
                path);
        free(path);
        return TND_EXIT_USAGE;
    }
    code = write_config(repo, path);
    free(path);
    return code;
}
