/* Unit tests for orchestrator/init: the build and test commands guessed
 * from throwaway repositories (a row per build system and per Makefile
 * rule shape), the order among several systems, files that cannot be
 * read, and the agents.yaml made from each guess loaded back by the
 * config loader. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/config.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/rmtree.h"
#include "common/str.h"
#include "common/xalloc.h"
#include "orchestrator/init.h"

static char repo[4096];

static int setup(void **state)
{
    const char *tmp = getenv("TMPDIR");

    (void)state;
    snprintf(repo, sizeof(repo), "%s/tnd-test-init-XXXXXX",
             tmp && *tmp ? tmp : P_tmpdir);
    return mkdtemp(repo) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    return tnd_fs_rmtree(repo);
}

/* Write REPO/name (its directory made first). */
static void put(const char *name, const char *text)
{
    char *path = tnd_fs_join(repo, name), *dir = tnd_fs_dirname(path);

    assert_int_equal(tnd_fs_mkdirs(dir, 0755), 0);
    assert_int_equal(tnd_fs_write(path, text, strlen(text)), 0);
    free(dir);
    free(path);
}

/* Empty REPO for the next row. */
static void clear(void)
{
    assert_int_equal(tnd_fs_rmtree(repo), 0);
    assert_int_equal(mkdir(repo, 0755), 0);
}

/* The rendered text loads, and its skills are the guessed commands, in
 * order, each required. */
static void expect_loads(const tnd_init *g)
{
    char *text = tnd_init_render(g);
    tnd_config *cfg = NULL;
    size_t n = 0;

    if (tnd_config_parse(&cfg, text, strlen(text), "agents.yaml", repo) < 0)
        fail_msg("the rendered agents.yaml does not load:\n%s\n---\n%s",
                 tnd_error_last(), text);
    for (int s = TND_INIT_BUILD; s <= TND_INIT_TEST; s++) {
        const char *command = tnd_init_command(g, (tnd_init_skill)s);
        const tnd_skill_config *skill;

        if (!command)
            continue;
        assert_non_null(cfg->reviewer.skills[n]);
        assert_string_equal(cfg->reviewer.skills[n],
                            s == TND_INIT_BUILD ? "build" : "test");
        skill = tnd_config_skill(cfg, cfg->reviewer.skills[n]);
        assert_non_null(skill);
        assert_string_equal(skill->command.display, command);
        assert_true(skill->required);
        n++;
    }
    assert_null(cfg->reviewer.skills[n]);
    assert_int_equal(cfg->nskills, n);
    tnd_config_destroy(&cfg);
    free(text);
}

/* A file of a repository: path and contents. */
typedef struct file {
    const char *name, *text;
} file;

/* A row: the files, then what is guessed (NULL: nothing) and the first
 * line of what was found. */
typedef struct row {
    const char *what;
    file files[4];
    const char *build, *build_from, *test, *test_from, *found;
} row;

static const row rows[] = {
    {"a Makefile with all, check and test: check wins",
     {{"Makefile", "all: prog\n\nprog: prog.c\n\tcc -o prog prog.c\n"
                   "check: all\n\t./prog --selftest\ntest: check\n"}},
     "make",
     "Makefile, target all",
     "make check",
     "Makefile, target check",
     "Makefile (targets all, check, test)"},
    {"the demo's Makefile",
     {{"Makefile", "CFLAGS = -O2\n\nall: stats\n\ntest: all\n\t./t\n"
                   ".PHONY: all test\n"}},
     "make",
     "Makefile, target all",
     "make test",
     "Makefile, target test",
     "Makefile (targets all, test)"},
    {"all that is not the default goal is asked for by name",
     {{"Makefile", "help:\n\t@echo see README\nall check: lib\n"}},
     "make all",
     "Makefile, target all",
     "make check",
     "Makefile, target check",
     "Makefile (targets all, check)"},
    {"no all: make builds the default goal",
     {{"Makefile", "# build it\nprog: prog.o\n\tcc -o $@ $^\n"}},
     "make",
     "Makefile, default goal prog",
     NULL,
     NULL,
     "Makefile (no all, check or test target)"},
    {".DEFAULT_GOAL is the goal",
     {{"Makefile", "test:\n\t./t\nall:\n\tcc x.c\n.DEFAULT_GOAL := all\n"}},
     "make",
     "Makefile, target all",
     "make test",
     "Makefile, target test",
     "Makefile (targets all, test)"},
    /* a '\r' in the goal hid YAML of its own in the written comment */
    {"a .DEFAULT_GOAL that is no name is not read",
     {{"Makefile", "build:\n\tcc x.c\n.DEFAULT_GOAL := build\rorchestrator: "
                   "{insecure: true}\n"}},
     "make",
     "Makefile, default goal build",
     NULL,
     NULL,
     "Makefile (no all, check or test target)"},
    {"a default goal that tests or cleans is no build",
     {{"Makefile", "test:\n\t./run-tests\nclean:\n\trm -f x\n"}},
     NULL,
     NULL,
     "make test",
     "Makefile, target test",
     "Makefile (target test)"},
    {"assignments, recipes, comments, patterns and variables are no "
     "targets",
     {{"Makefile", "X := check: not a rule\nY = all: nor this\nZ ::= test:\n"
                   "# all: a comment\n\tcheck: a recipe line\n"
                   "%.o: %.c\n\tcc -c $<\n$(OBJS): config.h\n"
                   "prog: CFLAGS += -DTEST=1\n"
                   "SRC = a.c \\\n  test: continued\n"
                   "prog: prog.o\n"}},
     "make",
     "Makefile, default goal prog",
     NULL,
     NULL,
     "Makefile (no all, check or test target)"},
    {"GNUmakefile is read before Makefile, as make does",
     {{"GNUmakefile", "all:\n\ttrue\n"}, {"Makefile", "test:\n\ttrue\n"}},
     "make",
     "GNUmakefile, target all",
     NULL,
     NULL,
     "GNUmakefile (target all)"},
    {"CRLF line ends and indented rules",
     {{"Makefile", "all: x\r\n  check: all\r\n\tdo\r\n"}},
     "make",
     "Makefile, target all",
     "make check",
     "Makefile, target check",
     "Makefile (targets all, check)"},
    {"CMake with enable_testing",
     {{"CMakeLists.txt", "project(x C)\nadd_executable(x x.c)\n"
                         "enable_testing()\nadd_test(NAME t COMMAND x)\n"}},
     "cmake -S . -B build && cmake --build build",
     "CMakeLists.txt",
     "ctest --test-dir build --output-on-failure",
     "CMakeLists.txt, enable_testing()",
     "CMakeLists.txt (enable_testing())"},
    {"CMake with include (CTest), spaced and capitalised",
     {{"CMakeLists.txt", "PROJECT(x)\nINCLUDE (CTest)\n"}},
     "cmake -S . -B build && cmake --build build",
     "CMakeLists.txt",
     "ctest --test-dir build --output-on-failure",
     "CMakeLists.txt, include(CTest)",
     "CMakeLists.txt (include(CTest))"},
    {"CMake without tests",
     {{"CMakeLists.txt", "project(x)\nadd_executable(x x.c)\n"}},
     "cmake -S . -B build && cmake --build build",
     "CMakeLists.txt",
     NULL,
     NULL,
     "CMakeLists.txt"},
    {"Meson",
     {{"meson.build", "project('x', 'c')\n"}},
     "meson setup build && meson compile -C build",
     "meson.build",
     "meson test -C build --print-errorlogs",
     "meson.build",
     "meson.build"},
    {"Cargo",
     {{"Cargo.toml", "[package]\nname = \"x\"\n"}},
     "cargo build",
     "Cargo.toml",
     "cargo test",
     "Cargo.toml",
     "Cargo.toml"},
    {"go",
     {{"go.mod", "module example.com/x\n\ngo 1.21\n"}},
     "go build ./...",
     "go.mod",
     "go test ./...",
     "go.mod",
     "go.mod"},
    {"npm with a lock file, build and test scripts",
     {{"package.json",
       "{\"name\":\"x\",\"scripts\":{\"build\":\"tsc\",\"test\":\"jest\"}}"},
      {"package-lock.json", "{}"}},
     "npm ci && npm run build",
     "package.json, scripts.build",
     "npm test",
     "package.json, scripts.test",
     "package.json (scripts build, test)"},
    {"npm's placeholder test script is no test; no lock file: install",
     {{"package.json",
       "{\"scripts\":{\"test\":\"echo \\\"Error: no test specified\\\" "
       "&& exit 1\"}}"}},
     "npm install",
     "package.json, its dependencies",
     NULL,
     NULL,
     "package.json (no build or test script)"},
    {"npm with a test script only",
     {{"package.json", "{\"scripts\":{\"test\":\"node test.js\"}}"}},
     "npm install",
     "package.json, its dependencies",
     "npm test",
     "package.json, scripts.test",
     "package.json (script test)"},
    {"pytest.ini",
     {{"pytest.ini", "[pytest]\n"}},
     NULL,
     NULL,
     "python3 -m pytest -q",
     "pytest.ini",
     "pytest (pytest.ini)"},
    {"pyproject.toml with [tool.pytest.ini_options]",
     {{"pyproject.toml", "[project]\nname = \"x\"\n\n"
                         "[tool.pytest.ini_options]\naddopts = \"-q\"\n"}},
     NULL,
     NULL,
     "python3 -m pytest -q",
     "pyproject.toml, [tool.pytest]",
     "pytest (pyproject.toml, [tool.pytest])"},
    {"setup.cfg with [tool:pytest]",
     {{"setup.cfg", "[metadata]\nname = x\n[tool:pytest]\n"}},
     NULL,
     NULL,
     "python3 -m pytest -q",
     "setup.cfg, [tool:pytest]",
     "pytest (setup.cfg, [tool:pytest])"},
    {"test_*.py in tests/, the first by name",
     {{"tests/test_b.py", "def test_b(): pass\n"},
      {"tests/test_a.py", "def test_a(): pass\n"},
      {"tests/helper.py", ""}},
     NULL,
     NULL,
     "python3 -m pytest -q",
     "tests/test_a.py",
     "pytest (tests/test_a.py)"},
    {"a pyproject.toml without pytest, and tests/ without test_*.py",
     {{"pyproject.toml", "[project]\nname = \"x\"\n# [tool.pytest]\n"},
      {"tests/check.py", ""}},
     NULL,
     NULL,
     NULL,
     NULL,
     NULL},
    {"a Makefile without tests, then pytest gives the test",
     {{"Makefile", "all:\n\tpython3 -m compileall -q .\n"},
      {"pytest.ini", "[pytest]\n"}},
     "make",
     "Makefile, target all",
     "python3 -m pytest -q",
     "pytest.ini",
     "Makefile (target all)"},
    {"Cargo comes before npm",
     {{"package.json", "{\"scripts\":{\"build\":\"wasm-pack build\"}}"},
      {"Cargo.toml", "[package]\n"}},
     "cargo build",
     "Cargo.toml",
     "cargo test",
     "Cargo.toml",
     "Cargo.toml"},
    {"nothing recognised",
     {{"README", "hello\n"}, {"main.c", "int main(void) { return 0; }\n"}},
     NULL,
     NULL,
     NULL,
     NULL,
     NULL},
};

static void make_targets_are_read_from_rule_lines(void **state)
{
    char **targets = NULL;
    const char *name = NULL;
    bool sure = false;

    (void)state;
    assert_int_equal(tnd_init_make_targets(&targets, &name, &sure, repo),
                     TND_ENOTFOUND);
    assert_null(targets);
    put("Makefile", "CC := cc\nall: x\n\tcc x.c\ncheck test: all\n"
                    "x.o: VAR = 1\n");
    assert_int_equal(tnd_init_make_targets(&targets, &name, &sure, repo), 0);
    assert_string_equal(name, "Makefile");
    assert_true(sure);
    assert_true(tnd_str_list_has((const char *const *)targets, "check"));
    assert_true(tnd_str_list_has((const char *const *)targets, "test"));
    assert_true(tnd_str_list_has((const char *const *)targets, "all"));
    assert_false(tnd_str_list_has((const char *const *)targets, "CC"));
    tnd_str_list_free(&targets);
    /* an include, or a target of a variable, may name more */
    put("Makefile", "include rules.mk\nall:\n");
    assert_int_equal(tnd_init_make_targets(&targets, &name, &sure, repo), 0);
    assert_false(sure);
    tnd_str_list_free(&targets);
    put("Makefile", "$(PROGS): x\n");
    assert_int_equal(tnd_init_make_targets(&targets, &name, &sure, repo), 0);
    assert_false(sure);
    tnd_str_list_free(&targets);
}

static void each_build_system_is_guessed(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(rows) / sizeof(*rows); i++) {
        const row *r = &rows[i];
        tnd_init *g;

        clear();
        for (const file *f = r->files; f < r->files + 4 && f->name; f++)
            put(f->name, f->text);
        g = tnd_init_guess(repo);
        assert_non_null(g);
        if (!tnd_str_eq(tnd_init_command(g, TND_INIT_BUILD), r->build) ||
            !tnd_str_eq(tnd_init_source(g, TND_INIT_BUILD), r->build_from) ||
            !tnd_str_eq(tnd_init_command(g, TND_INIT_TEST), r->test) ||
            !tnd_str_eq(tnd_init_source(g, TND_INIT_TEST), r->test_from) ||
            !tnd_str_eq(tnd_init_found(g)[0], r->found))
            fail_msg("%s: got build '%s' (%s), test '%s' (%s), found '%s'",
                     r->what, tnd_init_command(g, TND_INIT_BUILD),
                     tnd_init_source(g, TND_INIT_BUILD),
                     tnd_init_command(g, TND_INIT_TEST),
                     tnd_init_source(g, TND_INIT_TEST), tnd_init_found(g)[0]);
        assert_null(tnd_init_notes(g)[0]);
        expect_loads(g);
        tnd_init_destroy(&g);
        assert_null(g);
    }
}

static void every_system_found_is_listed_in_order(void **state)
{
    const char *const *found;
    tnd_init *g;

    (void)state;
    put("Makefile", "all:\n");
    put("CMakeLists.txt", "project(x)\n");
    put("meson.build", "project('x')\n");
    put("Cargo.toml", "[package]\n");
    put("go.mod", "module x\n");
    put("package.json", "{}");
    put("pytest.ini", "[pytest]\n");
    g = tnd_init_guess(repo);
    found = tnd_init_found(g);
    assert_string_equal(found[0], "Makefile (target all)");
    assert_string_equal(found[1], "CMakeLists.txt");
    assert_string_equal(found[2], "meson.build");
    assert_string_equal(found[3], "Cargo.toml");
    assert_string_equal(found[4], "go.mod");
    assert_string_equal(found[5], "package.json (no build or test script)");
    assert_string_equal(found[6], "pytest (pytest.ini)");
    assert_null(found[7]);
    /* The Makefile gives the build; the first with a test is Meson,
     * since the Makefile has no test target and CMake no tests. */
    assert_string_equal(tnd_init_command(g, TND_INIT_BUILD), "make");
    assert_string_equal(tnd_init_command(g, TND_INIT_TEST),
                        "meson test -C build --print-errorlogs");
    expect_loads(g);
    tnd_init_destroy(&g);
}

static void files_that_cannot_be_read_are_noted(void **state)
{
    char *fifo = tnd_fs_join(repo, "Makefile");
    const char *const *notes;
    tnd_init *g;

    (void)state;
    /* A FIFO would block a plain read forever. */
    assert_int_equal(mkfifo(fifo, 0644), 0);
    put("package.json", "{\"scripts\": [not json");
    put("CMakeLists.txt/x", "a directory, not a file\n");
    g = tnd_init_guess(repo);
    assert_non_null(g);
    notes = tnd_init_notes(g);
    assert_non_null(notes[0]);
    assert_non_null(strstr(notes[0], "Makefile"));
    assert_non_null(strstr(notes[0], "FIFO"));
    assert_non_null(strstr(notes[1], "CMakeLists.txt"));
    assert_non_null(strstr(notes[2], "package.json: not valid JSON"));
    assert_null(notes[3]);
    assert_null(tnd_init_found(g)[0]);
    assert_null(tnd_init_command(g, TND_INIT_BUILD));
    assert_null(tnd_init_command(g, TND_INIT_TEST));
    expect_loads(g);
    tnd_init_destroy(&g);
    free(fifo);

    put("package.json", "[\"scripts\"]");
    g = tnd_init_guess(repo);
    assert_string_equal(tnd_init_notes(g)[2],
                        "package.json: not a JSON object; left out");
    tnd_init_destroy(&g);
}

static void the_template_says_what_to_fill_in(void **state)
{
    tnd_init *g;
    char *text;

    (void)state;
    g = tnd_init_guess(repo);
    text = tnd_init_render(g);
    assert_non_null(strstr(text, "recognised no build system"));
    assert_non_null(strstr(text, "    skills: []\n"));
    assert_non_null(strstr(text, "  # build:\n  #   command: \"make\"\n"));
    assert_non_null(strstr(text, "  # test:\n  #   command: \"make test\"\n"));
    free(text);
    tnd_init_destroy(&g);

    put("pytest.ini", "[pytest]\n");
    g = tnd_init_guess(repo);
    text = tnd_init_render(g);
    assert_non_null(strstr(text, "    skills: [test]\n"));
    assert_non_null(
        strstr(text, "#   test:  python3 -m pytest -q     from pytest.ini\n"));
    assert_non_null(strstr(text, "#   build: none recognised"));
    assert_non_null(strstr(text, "  # build:\n"));
    assert_non_null(strstr(text, "  test:\n    command: \"python3 -m pytest "
                                 "-q\"\n    required: true\n"));
    /* the skills run sandboxed; pytest needs no network */
    assert_non_null(strstr(text, "# Each runs in a sandbox"));
    assert_null(strstr(text, "    network: true"));
    free(text);
    tnd_init_destroy(&g);

    /* a tool that downloads what it builds gets the network */
    put("go.mod", "module example.com/x\n\ngo 1.21\n");
    g = tnd_init_guess(repo);
    text = tnd_init_render(g);
    assert_non_null(strstr(text, "  build:\n    command: \"go build ./...\"\n"
                                 "    required: true\n    timeout_s: 600\n"
                                 "    network: true        # it downloads "
                                 "what it builds\n"));
    free(text);
    tnd_init_destroy(&g);
}

static void a_repository_that_is_no_directory_is_refused(void **state)
{
    char *path = tnd_fs_join(repo, "file");

    (void)state;
    put("file", "x");
    assert_null(tnd_init_guess(path));
    assert_non_null(strstr(tnd_error_last(), "is not a directory"));
    free(path);
    path = tnd_fs_join(repo, "missing");
    assert_null(tnd_init_guess(path));
    assert_non_null(strstr(tnd_error_last(), "--repo DIR"));
    free(path);
    tnd_init_destroy(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(make_targets_are_read_from_rule_lines,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(each_build_system_is_guessed, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(every_system_found_is_listed_in_order,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(files_that_cannot_be_read_are_noted,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(the_template_says_what_to_fill_in,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(
            a_repository_that_is_no_directory_is_refused, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
