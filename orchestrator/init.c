/* tnd_init: guess a repository's build and test commands from the files
 * in its top directory, and write the agents.yaml that runs them (see
 * init.h for the rules). Nothing here runs the repository's code: a
 * Makefile's targets are read from its rule lines, not from `make -p`,
 * which would expand the Makefile's $(shell ...) calls. */
#include "orchestrator/init.h"

#include <assert.h>
#include <ctype.h>
#include <dirent.h>
#include <fnmatch.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/str.h"
#include "common/xalloc.h"
#include "orchestrator/git.h"
#include "proto/json.h"

/* Caps on what is read: a hand-written Makefile is kilobytes, and a
 * bigger one (generated, tracked by mistake) is still read whole. */
#define MAKEFILE_MAX (4u << 20)
#define FILE_MAX     (1u << 20)

/* A test script `npm init` writes, which fails on purpose. */
#define NPM_PLACEHOLDER "no test specified"

struct tnd_init {
    char *repo;
    char *command[2]; /* per tnd_init_skill; NULL: none guessed */
    char *source[2];
    char **found; /* NULL-terminated */
    size_t nfound;
    char **notes; /* NULL-terminated */
    size_t nnotes;
};

/* Append s (taken) to a NULL-terminated list of n entries. */
static void list_add(char ***list, size_t *n, char *s)
{
    *list = tnd_xrealloc(*list, *n + 2, sizeof(**list));
    (*list)[(*n)++] = s;
    (*list)[*n] = NULL;
}

/* Take command and source (both copied) for a skill no earlier build
 * system gave one for. */
static void offer(tnd_init *self, tnd_init_skill which, const char *command,
                  const char *source)
{
    if (self->command[which])
        return;
    self->command[which] = tnd_xstrdup(command);
    self->source[which] = tnd_xstrdup(source);
}

/* Read REPO/name into *out (caller frees): 1 when read, 0 when it is
 * not there, or cannot be read (the reason goes to the notes). */
static int read_file(tnd_init *self, const char *name, size_t cap, char **out)
{
    char *path = tnd_fs_join(self->repo, name);
    int error = tnd_fs_read(out, NULL, path, cap);

    free(path);
    if (error == TND_ENOTFOUND)
        return 0;
    if (error < 0) {
        list_add(&self->notes, &self->nnotes,
                 tnd_xasprintf("%s: %s; left out", name, tnd_error_last()));
        return 0;
    }
    return 1;
}

/* True when REPO/name is there as a regular file. */
static bool has_file(const tnd_init *self, const char *name)
{
    char *path = tnd_fs_join(self->repo, name);
    bool yes = tnd_fs_check_regular(path) == 0;

    free(path);
    return yes;
}

/* ---- Makefile ---------------------------------------------------- */

/* What the rule lines of a Makefile name. */
typedef struct make_rules {
    bool all, check, test;
    char *default_goal; /* the first ordinary target, or .DEFAULT_GOAL */
    char **targets;     /* every plain target, NULL-terminated */
    size_t ntargets;
    bool unsure; /* includes, or targets of variables or patterns */
} make_rules;

static bool target_char(char c)
{
    return isalnum((unsigned char)c) || strchr("_.-/+", c);
}

/* One word before a rule's colon: a target when it is a plain name
 * (no variable, no pattern). */
static void make_target(make_rules *r, const char *word, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (!target_char(word[i])) {
            r->unsure = true; /* $(VAR), %.o: more than reading says */
            return;
        }
    list_add(&r->targets, &r->ntargets, tnd_xstrndup(word, len));
    if (len == 3 && memcmp(word, "all", 3) == 0)
        r->all = true;
    else if (len == 5 && memcmp(word, "check", 5) == 0)
        r->check = true;
    else if (len == 4 && memcmp(word, "test", 4) == 0)
        r->test = true;
    /* GNU make's default goal: the first target not starting with '.'
     * (special targets and .PHONY-style names do not count). */
    if (!r->default_goal && word[0] != '.')
        r->default_goal = tnd_xasprintf("%.*s", (int)len, word);
}

/* `.DEFAULT_GOAL := x` (or =, ?=): the goal `make` builds. */
static void make_default_goal(make_rules *r, const char *line, size_t len)
{
    const char *eq = memchr(line, '=', len);
    const char *v, *end = line + len;

    if (!eq)
        return;
    for (v = eq + 1; v < end && isspace((unsigned char)*v); v++)
        ;
    while (end > v && isspace((unsigned char)end[-1]))
        end--;
    for (const char *c = v; c < end; c++)
        if (!target_char(*c)) {
            /* a variable, several goals, or bytes that are no name (a
             * '\r' put YAML of its own into the written comment) */
            r->unsure = true;
            return;
        }
    if (end > v) {
        free(r->default_goal);
        r->default_goal = tnd_xasprintf("%.*s", (int)(end - v), v);
    }
}

/* One logical line: a rule line names targets before its colon; a
 * recipe (tab), comment, directive or assignment names none. */
static void make_line(make_rules *r, const char *line, size_t len)
{
    const char *colon, *p, *end = line + len;

    if (len && line[0] == '\t')
        return;
    while (line < end && (*line == ' ' || *line == '\r'))
        line++;
    len = (size_t)(end - line);
    if (!len || *line == '#')
        return;
    if ((len > 8 && memcmp(line, "include", 7) == 0) ||
        (len > 9 && (memcmp(line, "-include", 8) == 0 ||
                     memcmp(line, "sinclude", 8) == 0)))
        r->unsure = true; /* another file may name more targets */
    if (len > 13 && memcmp(line, ".DEFAULT_GOAL", 13) == 0 &&
        (isspace((unsigned char)line[13]) || strchr(":?=", line[13]))) {
        make_default_goal(r, line, len);
        return;
    }
    if (!(colon = memchr(line, ':', len)) || memchr(line, '=', colon - line))
        return;
    /* VAR := x, VAR ::= x; and target-specific variables (t: VAR = x),
     * which make no rule. */
    p = colon + 1;
    if (p < end && *p == ':')
        p++;
    if (p < end && *p == '=')
        return;
    for (const char *q = p; q < end && *q != ';' && *q != '#'; q++)
        if (*q == '=')
            return;
    for (p = line; p < colon;) {
        const char *w;

        while (p < colon && isspace((unsigned char)*p))
            p++;
        for (w = p; p < colon && !isspace((unsigned char)*p); p++)
            ;
        if (p > w)
            make_target(r, w, (size_t)(p - w));
    }
}

static void make_rules_read(make_rules *r, const char *text)
{
    for (const char *line = text; *line;) {
        const char *nl = strchr(line, '\n');
        size_t len = nl ? (size_t)(nl - line) : strlen(line);

        make_line(r, line, len);
        if (!nl)
            break;
        /* A continued line goes on with the next one; the targets are
         * on the first, so the rest is skipped. */
        while (nl && nl > line && nl[-1] == '\\') {
            line = nl + 1;
            nl = strchr(line, '\n');
        }
        if (!nl)
            break;
        line = nl + 1;
    }
}

bool tnd_init_in_workspace(const char *repo, const char *file, bool untracked)
{
    const char *tracked[] = {"git", "ls-files", "--error-unmatch",
                             "--",  file,       NULL};
    const char *ignored[] = {"git", "check-ignore", "-q", "--", file, NULL};
    const char *inside[] = {"git", "rev-parse", "--is-inside-work-tree", NULL};
    bool yes;

    if (tnd_git_run(NULL, NULL, repo, inside, 4096) < 0) {
        tnd_error_clear();
        return true;
    }
    yes = tnd_git_run(NULL, NULL, repo, tracked, 1 << 20) == 0 ||
          (untracked && tnd_git_run(NULL, NULL, repo, ignored, 4096) != 0);
    tnd_error_clear();
    return yes;
}

static void guess_make(tnd_init *self)
{
    static const char *const names[] = {"GNUmakefile", "makefile", "Makefile",
                                        NULL};
    static const char *const not_builds[] = {
        "check", "test", "clean", "distclean", "install", "help", NULL};
    make_rules r = {0};
    const char *name = NULL, *targets[3];
    int n = 0;
    char *text = NULL, *from;
    tnd_buf line;

    /* The one GNU make reads, in its order. */
    for (int i = 0; names[i] && !name; i++)
        if (read_file(self, names[i], MAKEFILE_MAX, &text))
            name = names[i];
    if (!name)
        return;
    if (!tnd_init_in_workspace(self->repo, name, false)) {
        /* ./configure's, git-ignored: the workspace never holds it */
        list_add(&self->notes, &self->nnotes,
                 tnd_xasprintf("%s is not one of git's files (made by a "
                               "configure step?): the skills run on the "
                               "repository's files, so no make skill was "
                               "guessed; commit it, or make it in the "
                               "skills' commands (./configure && make)",
                               name));
        free(text);
        return;
    }
    make_rules_read(&r, text);
    if (r.all)
        targets[n++] = "all";
    if (r.check)
        targets[n++] = "check";
    if (r.test)
        targets[n++] = "test";
    tnd_buf_init(&line, TND_BUF_NOCAP);
    if (n) {
        tnd_buf_printf(&line, "%s (target%s ", name, n > 1 ? "s" : "");
        for (int i = 0; i < n; i++)
            tnd_buf_printf(&line, "%s%s", i ? ", " : "", targets[i]);
        tnd_buf_puts(&line, ")");
    } else {
        tnd_buf_printf(&line, "%s (no all, check or test target)", name);
    }
    list_add(&self->found, &self->nfound, tnd_buf_detach(&line, NULL));

    if (r.all) {
        from = tnd_xasprintf("%s, target all", name);
        offer(self, TND_INIT_BUILD,
              tnd_str_eq(r.default_goal, "all") ? "make" : "make all", from);
        free(from);
    } else if (r.default_goal &&
               !tnd_str_list_has(not_builds, r.default_goal)) {
        from = tnd_xasprintf("%s, default goal %s", name, r.default_goal);
        offer(self, TND_INIT_BUILD, "make", from);
        free(from);
    }
    if (r.check || r.test) {
        from = tnd_xasprintf("%s, target %s", name, r.check ? "check" : "test");
        offer(self, TND_INIT_TEST, r.check ? "make check" : "make test", from);
        free(from);
    }
    free(r.default_goal);
    tnd_str_list_free(&r.targets);
    free(text);
}

int tnd_init_make_targets(char ***out, const char **file, bool *sure,
                          const char *repo)
{
    static const char *const names[] = {"GNUmakefile", "makefile", "Makefile",
                                        NULL};
    make_rules r = {0};
    char *text = NULL;
    int error = TND_ENOTFOUND;

    *out = NULL;
    *file = NULL;
    *sure = false;
    for (int i = 0; names[i] && error == TND_ENOTFOUND; i++) {
        char *path = tnd_fs_join(repo, names[i]);
        error = tnd_fs_read(&text, NULL, path, MAKEFILE_MAX);
        free(path);
        *file = names[i];
    }
    if (error < 0) {
        *file = error == TND_ENOTFOUND ? NULL : *file;
        return error;
    }
    make_rules_read(&r, text);
    free(text);
    free(r.default_goal);
    *out = r.targets ? r.targets : tnd_xcalloc(1, sizeof(char *));
    *sure = !r.unsure;
    return 0;
}

/* ---- CMake, Meson, Cargo, go ------------------------------------- */

/* text lowered, without white space: "include (CTest)" finds as
 * "include(ctest)". Caller frees. */
static char *squeezed(const char *text)
{
    char *out = tnd_xcalloc(strlen(text) + 1, 1), *o = out;

    for (const char *p = text; *p; p++)
        if (!isspace((unsigned char)*p))
            *o++ = (char)tolower((unsigned char)*p);
    return out;
}

static void guess_cmake(tnd_init *self)
{
    char *text = NULL, *flat;
    const char *how = NULL;

    if (!read_file(self, "CMakeLists.txt", FILE_MAX, &text))
        return;
    /* ctest finds tests only when the top directory enables them. */
    flat = squeezed(text);
    if (strstr(flat, "enable_testing("))
        how = "enable_testing()";
    else if (strstr(flat, "include(ctest)"))
        how = "include(CTest)";
    list_add(&self->found, &self->nfound,
             tnd_xasprintf("CMakeLists.txt%s%s%s", how ? " (" : "",
                           how ? how : "", how ? ")" : ""));
    offer(self, TND_INIT_BUILD, "cmake -S . -B build && cmake --build build",
          "CMakeLists.txt");
    if (how) {
        char *from = tnd_xasprintf("CMakeLists.txt, %s", how);

        offer(self, TND_INIT_TEST, "ctest --test-dir build --output-on-failure",
              from);
        free(from);
    }
    free(flat);
    free(text);
}

/* A build system known by one file, whose commands need nothing read. */
static void guess_plain(tnd_init *self, const char *file, const char *build,
                        const char *test)
{
    if (!has_file(self, file))
        return;
    list_add(&self->found, &self->nfound, tnd_xstrdup(file));
    offer(self, TND_INIT_BUILD, build, file);
    offer(self, TND_INIT_TEST, test, file);
}

/* ---- npm --------------------------------------------------------- */

/* scripts.NAME of package.json when it is a string; NULL otherwise. */
static const char *npm_script(json_object *scripts, const char *name)
{
    json_object *v = tnd_json_field(scripts, name);

    return v && json_object_is_type(v, json_type_string)
               ? json_object_get_string(v)
               : NULL;
}

static void guess_npm(tnd_init *self)
{
    json_object *root = NULL, *scripts;
    const char *build, *test, *install;
    char *text = NULL, *command, *from;
    size_t len;

    if (!read_file(self, "package.json", FILE_MAX, &text))
        return;
    len = strlen(text);
    if (tnd_json_parse(&root, text, len) < 0) {
        list_add(&self->notes, &self->nnotes,
                 tnd_xasprintf("package.json: %s; left out", tnd_error_last()));
        goto out;
    }
    if (!json_object_is_type(root, json_type_object)) {
        list_add(&self->notes, &self->nnotes,
                 tnd_xstrdup("package.json: not a JSON object; left out"));
        goto out;
    }
    scripts = tnd_json_field(root, "scripts");
    build = npm_script(scripts, "build");
    test = npm_script(scripts, "test");
    if (test && strstr(test, NPM_PLACEHOLDER))
        test = NULL;
    list_add(
        &self->found, &self->nfound,
        tnd_xasprintf("package.json (%s)", build && test ? "scripts build, test"
                                           : build       ? "script build"
                                           : test        ? "script test"
                                                  : "no build or test script"));
    /* The workspace holds the tracked files only: node_modules has to
     * be installed in it, so installing is the build's first step. */
    install = has_file(self, "package-lock.json") ||
                      has_file(self, "npm-shrinkwrap.json")
                  ? "npm ci"
                  : "npm install";
    command = tnd_xasprintf("%s%s", install, build ? " && npm run build" : "");
    from = tnd_xasprintf("package.json, %s",
                         build ? "scripts.build" : "its dependencies");
    offer(self, TND_INIT_BUILD, command, from);
    if (test)
        offer(self, TND_INIT_TEST, "npm test", "package.json, scripts.test");
    free(command);
    free(from);
out:
    json_object_put(root);
    free(text);
}

/* ---- pytest ------------------------------------------------------ */

/* True when text has a line starting with section (an INI or TOML
 * table header such as "[tool.pytest"). */
static bool has_section(const char *text, const char *section)
{
    for (const char *line = text; line; line = strchr(line, '\n')) {
        if (*line == '\n')
            line++;
        while (*line == ' ' || *line == '\t')
            line++;
        if (tnd_str_starts_with(line, section))
            return true;
    }
    return false;
}

/* The first by name of the test_*.py files in REPO/tests/, as
 * "tests/test_x.py"; NULL when none. Caller frees. */
static char *pytest_file(const tnd_init *self)
{
    char *dir = tnd_fs_join(self->repo, "tests"), *first = NULL, *found;
    DIR *d = opendir(dir);
    struct dirent *e;

    free(dir);
    if (!d)
        return NULL;
    while ((e = readdir(d)))
        if (fnmatch("test_*.py", e->d_name, 0) == 0 &&
            (!first || strcmp(e->d_name, first) < 0)) {
            free(first);
            first = tnd_xstrdup(e->d_name);
        }
    closedir(d);
    found = first ? tnd_xasprintf("tests/%s", first) : NULL;
    free(first);
    return found;
}

static void guess_pytest(tnd_init *self)
{
    /* pytest's own configuration files, in the order it reads them. */
    static const struct {
        const char *file, *section, *shown;
    } configs[] = {
        {"pytest.ini", NULL, "pytest.ini"},
        {"pyproject.toml", "[tool.pytest", "pyproject.toml, [tool.pytest]"},
        {"tox.ini", "[pytest]", "tox.ini, [pytest]"},
        {"setup.cfg", "[tool:pytest]", "setup.cfg, [tool:pytest]"},
    };
    char *from = NULL;

    for (size_t i = 0; i < sizeof(configs) / sizeof(*configs) && !from; i++) {
        char *text = NULL;

        if (!read_file(self, configs[i].file, FILE_MAX, &text))
            continue;
        if (!configs[i].section || has_section(text, configs[i].section))
            from = tnd_xstrdup(configs[i].shown);
        free(text);
    }
    if (!from)
        from = pytest_file(self);
    if (!from)
        return;
    list_add(&self->found, &self->nfound, tnd_xasprintf("pytest (%s)", from));
    offer(self, TND_INIT_TEST, "python3 -m pytest -q", from);
    free(from);
}

/* ---- the guess --------------------------------------------------- */

tnd_init *tnd_init_guess(const char *repo)
{
    tnd_init *self;

    assert(repo);
    if (!tnd_fs_is_dir(repo)) {
        tnd_error_set("%s is not a directory; give the repository's top "
                      "directory with --repo DIR",
                      repo);
        return NULL;
    }
    self = tnd_xcalloc(1, sizeof(*self));
    self->repo = tnd_xstrdup(repo);
    self->found = tnd_xcalloc(1, sizeof(char *));
    self->notes = tnd_xcalloc(1, sizeof(char *));
    guess_make(self);
    guess_cmake(self);
    guess_plain(self, "meson.build",
                "meson setup build && meson compile -C build",
                "meson test -C build --print-errorlogs");
    guess_plain(self, "Cargo.toml", "cargo build", "cargo test");
    guess_plain(self, "go.mod", "go build ./...", "go test ./...");
    guess_npm(self);
    guess_pytest(self);
    return self;
}

void tnd_init_destroy(tnd_init **self_p)
{
    tnd_init *self = self_p ? *self_p : NULL;

    if (!self)
        return;
    for (int i = 0; i < 2; i++) {
        free(self->command[i]);
        free(self->source[i]);
    }
    tnd_str_list_free(&self->found);
    tnd_str_list_free(&self->notes);
    free(self->repo);
    free(self);
    *self_p = NULL;
}

const char *tnd_init_command(const tnd_init *self, tnd_init_skill which)
{
    return self->command[which];
}

const char *tnd_init_source(const tnd_init *self, tnd_init_skill which)
{
    return self->source[which];
}

const char *const *tnd_init_found(const tnd_init *self)
{
    return (const char *const *)self->found;
}

const char *const *tnd_init_notes(const tnd_init *self)
{
    return (const char *const *)self->notes;
}

/* ---- agents.yaml ------------------------------------------------- */

static const char *const skill_names[] = {"build", "test"};

/* A YAML double-quoted scalar of s. */
static void yaml_quoted(tnd_buf *b, const char *s)
{
    tnd_buf_puts(b, "\"");
    for (; *s; s++)
        tnd_buf_printf(b, "%s%c", *s == '"' || *s == '\\' ? "\\" : "", *s);
    tnd_buf_puts(b, "\"");
}

/* Whether command's tool downloads what it builds (npm's packages,
 * cargo's crates, go's modules): in the skills' sandbox, with a $HOME of
 * its own, it finds no cache and needs the network. */
static bool fetches(const char *command)
{
    static const char *const tools[] = {"npm ", "cargo ", "go ", NULL};

    for (int i = 0; tools[i]; i++)
        if (strncmp(command, tools[i], strlen(tools[i])) == 0)
            return true;
    return false;
}

/* A skill's entry under skills:, commented out (with an example
 * command) when nothing was guessed for it. */
static void render_skill(tnd_buf *b, const tnd_init *self, tnd_init_skill s)
{
    static const char *const examples[] = {"make", "make test"};
    const char *command = self->command[s];
    const char *c = command ? "" : "# ";

    tnd_buf_printf(b, "  %s%s:\n", c, skill_names[s]);
    tnd_buf_printf(b, "  %s  command: ", c);
    yaml_quoted(b, command ? command : examples[s]);
    tnd_buf_printf(b, "\n  %s  required: true\n", c);
    tnd_buf_printf(b, "  %s  timeout_s: 600\n", c);
    if (command && fetches(command))
        tnd_buf_puts(b, "    network: true        # it downloads what it "
                        "builds\n");
}

char *tnd_init_render(const tnd_init *self)
{
    const char *build = self->command[TND_INIT_BUILD];
    const char *test = self->command[TND_INIT_TEST];
    tnd_buf b;

    tnd_buf_init(&b, TND_BUF_NOCAP);
    tnd_buf_puts(
        &b,
        "# agents.yaml: tandem's configuration for this repository, written\n"
        "# by `tandem init`. Check it with `tandem doctor`, then give tandem\n"
        "# a task:\n"
        "#\n"
        "#     tandem run \"make the failing test pass\"\n"
        "#\n"
        "# Keys left out keep their defaults. Every key is described in\n"
        "# agents.yaml(5) (`man 5 agents.yaml`) and in the commented example\n"
        "# share/doc/tandem/agents.yaml where tandem is installed.\n"
        "version: 1\n"
        "\n"
        "agents:\n"
        "  # The models. `tandem run --llm PROVIDER:MODEL` (or TANDEM_LLM)\n"
        "  # picks another for one run. Providers: openai (the key in\n"
        "  # OPENAI_API_KEY; with base_url, any server speaking its API:\n"
        "  # vLLM, llama.cpp, LM Studio), anthropic (ANTHROPIC_API_KEY),\n"
        "  # ollama (local, no key), command (a program of your own) and\n"
        "  # replay (recorded answers).\n"
        "  coder:\n"
        "    llm:\n"
        "      provider: openai\n"
        "      model: gpt-4o-mini\n"
        "  reviewer:\n"
        "    llm:\n"
        "      provider: openai\n"
        "      model: gpt-4o-mini\n"
        "    # The skills (below) the reviewer runs on every proposal, in\n"
        "    # this order. A required skill that fails blocks the change,\n"
        "    # whatever the model says.\n");
    tnd_buf_printf(&b, "    skills: [%s%s%s]\n", build ? "build" : "",
                   build && test ? ", " : "", test ? "test" : "");
    tnd_buf_puts(
        &b, "\n"
            "# The audit gate; uncomment to change.\n"
            "# gate:\n"
            "#   max_iterations: 3    # attempts before a person is asked "
            "(1..50)\n"
            "#   escalate: auto       # who is asked: tty, queue or never; "
            "auto:\n"
            "#                        # tty on a terminal, else queue\n"
            "#   risk_paths: []       # globs: a change here goes to a person\n"
            "#   max_tokens: 0        # tokens a task may spend (0: no limit)\n"
            "\n"
            "# The skills: the reviewer's tools. Each command runs in a fresh "
            "copy\n"
            "# of the repository's git-tracked files with the proposal "
            "applied, so\n"
            "# what git does not track (installed dependencies, build outputs) "
            "is\n"
            "# not there. A string is run by bash -o pipefail -c (plain "
            "words directly).\n"
            "# Each runs in a sandbox: it may write only in that copy, and "
            "sees the\n"
            "# system's directories but not your home, other processes or "
            "the\n"
            "# network (network: true gives it the network; sandbox: none "
            "runs it\n"
            "# unsandboxed).\n"
            "#\n");
    if (!build && !test) {
        tnd_buf_puts(
            &b,
            "# tandem init recognised no build system in this repository "
            "(it\n"
            "# looks for a Makefile, CMakeLists.txt, meson.build, "
            "Cargo.toml,\n"
            "# go.mod, package.json and pytest's files). Fill in the "
            "commands\n"
            "# that build and test it, uncomment them, and list them in\n"
            "# agents.reviewer.skills (skills: [build, test]). Until then "
            "no\n"
            "# skill checks a change: only the reviewer's model judges it.\n");
    } else {
        tnd_buf_puts(&b, "# Guessed by tandem init from this repository's "
                         "files:\n");
        for (int s = TND_INIT_BUILD; s <= TND_INIT_TEST; s++) {
            if (self->command[s])
                tnd_buf_printf(&b, "#   %-6s %-24s from %s\n",
                               s == TND_INIT_BUILD ? "build:" : "test:",
                               self->command[s], self->source[s]);
            else if (s == TND_INIT_BUILD)
                tnd_buf_puts(&b, "#   build: none recognised; if the tests "
                                 "need a build, fill in the one\n"
                                 "#          below and add it to "
                                 "agents.reviewer.skills\n");
            else
                tnd_buf_puts(&b, "#   test:  none recognised: fill in the "
                                 "one below and add it to\n"
                                 "#          agents.reviewer.skills\n");
        }
    }
    tnd_buf_puts(&b, "skills:\n");
    render_skill(&b, self, TND_INIT_BUILD);
    render_skill(&b, self, TND_INIT_TEST);
    return tnd_buf_detach(&b, NULL);
}
