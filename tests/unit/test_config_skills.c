/* Unit tests for common/config_skills: the skills section of
 * agents.yaml. A skill found by its name; every key of a skill (paths,
 * after, limits, the sandbox, the built-ins' own) and who waits for
 * whom; every error of the section as FILE:LINE:COL, cycles of `after`
 * among them; unknown `after` names stopping with the report.
 *
 * The cases parse from memory (config_text.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/clock.h"
#include "common/config.h"
#include "tests/unit/config_text.h"

static void skill_lookup_finds_by_exact_name(void **state)
{
    tnd_config *cfg = tnd_config_defaults();
    const tnd_skill_config *s;

    (void)state;
    s = tnd_config_skill(cfg, "test");
    assert_ptr_equal(s, &cfg->skills[1]);
    assert_string_equal(s->command.display, "make test");
    assert_ptr_equal(tnd_config_skill(cfg, "build"), &cfg->skills[0]);
    assert_null(tnd_config_skill(cfg, "Build"));
    assert_null(tnd_config_skill(cfg, "tes"));
    assert_null(tnd_config_skill(cfg, ""));
    tnd_config_destroy(&cfg);
}

static void skill_keys_paths_after_limits_and_builtins(void **state)
{
    tnd_config *cfg = parse_ok(
        "agents:\n"
        "  reviewer:\n"
        "    skills: [fmt, lint, unit, secrets, docs]\n"
        "skills:\n"
        "  fmt:\n"
        "    command: clang-format -i src/*.c\n"
        "    paths: [\"src/**\", \"include/*.h\"]\n"
        "  lint:\n"
        "    command: [cppcheck, src]\n"
        "    after: []\n"
        "    sandbox: none\n"
        "    limits: {processes: 0}\n"
        "  unit:\n"
        "    command: make check\n"
        "    after: [fmt]\n"
        "    network: true\n"
        "    limits: {cpu_s: 60, memory_mb: 512, file_mb: 10, processes: 64}\n"
        "  secrets:\n"
        "    builtin: git\n"
        "    after: ~\n"
        "    forbid: [\"*.pem\", \"secrets/**\"]\n"
        "    max_changed_lines: 500\n"
        "    max_file_kb: 0\n"
        "  docs:\n"
        "    builtin: docs\n"
        "    required: false\n"
        "    public: [\"include/**\"]\n"
        "    docs: [README.md, \"docs/**\"]\n");
    const tnd_skill_config *fmt = tnd_config_skill(cfg, "fmt");
    const tnd_skill_config *lint = tnd_config_skill(cfg, "lint");
    const tnd_skill_config *unit = tnd_config_skill(cfg, "unit");
    const tnd_skill_config *secrets = tnd_config_skill(cfg, "secrets");
    const tnd_skill_config *docs = tnd_config_skill(cfg, "docs");

    (void)state;
    assert_argv(fmt->paths, ARGV("src/**", "include/*.h"));
    assert_null(fmt->after);
    assert_non_null(lint->after);
    assert_null(lint->after[0]);
    assert_argv(unit->after, ARGV("fmt"));
    assert_int_equal(unit->limits.cpu_s, 60);
    assert_int_equal(unit->limits.memory_bytes, 512 << 20);
    assert_int_equal(unit->limits.file_bytes, 10 << 20);
    assert_int_equal(unit->limits.processes, 64);
    assert_int_equal(unit->sandbox, TND_SANDBOX_BWRAP);
    assert_true(unit->network);
    /* a limit given alone leaves the others at their defaults; 0: none */
    assert_int_equal(lint->limits.processes, 0);
    assert_int_equal(lint->limits.cpu_s, TND_SKILL_LIMIT_CPU_S);
    assert_int_equal(lint->sandbox, TND_SANDBOX_NONE);
    assert_false(lint->network);
    assert_string_equal(tnd_sandbox_mode_name(lint->sandbox), "none");
    assert_string_equal(tnd_sandbox_mode_name(unit->sandbox), "bwrap");
    assert_string_equal(secrets->builtin, "git");
    assert_null(secrets->command.argv);
    assert_null(secrets->after[0]); /* "after: ~" is "after: []" */
    assert_argv(secrets->forbid, ARGV("*.pem", "secrets/**"));
    assert_int_equal(secrets->max_changed_lines, 500);
    assert_int_equal(secrets->max_file_bytes, 0);
    assert_string_equal(docs->builtin, "docs");
    assert_false(docs->required);
    assert_argv(docs->public_paths, ARGV("include/**"));
    assert_argv(docs->docs_paths, ARGV("README.md", "docs/**"));

    /* who waits for whom, by position in agents.reviewer.skills */
    assert_false(tnd_config_skill_waits(cfg, 0, 1)); /* fmt: first */
    assert_false(tnd_config_skill_waits(cfg, 1, 0)); /* lint: after [] */
    assert_true(tnd_config_skill_waits(cfg, 2, 0));  /* unit: after [fmt] */
    assert_false(tnd_config_skill_waits(cfg, 2, 1));
    assert_true(tnd_config_skill_waits(cfg, 4, 0)); /* docs: default, */
    assert_true(tnd_config_skill_waits(cfg, 4, 3)); /* every one before */
    assert_false(tnd_config_skill_waits(cfg, 4, 4));
    assert_false(tnd_config_skill_waits(cfg, 3, 2)); /* secrets: after ~ */
    tnd_config_destroy(&cfg);
}

/* ---- errors: one case, one exact message ------------------------------- */

/* Appended where a case defines its own skills, which replace the
 * defaults that agents.reviewer.skills names. */
#define USES_LINT "agents: {reviewer: {skills: [lint]}}\n"

static const bad_case skills_cases[] = {
    {"skills:\n  lint:\n    command: x\n    retries: 2\n" USES_LINT,
     "agents.yaml:4:5: unknown key 'retries' in skills.lint (known keys: "
     "command, required, timeout_s, output_max_kb, builtin, paths, after, "
     "limits, sandbox, network, forbid, max_changed_lines, max_file_kb, "
     "public, docs)"},
    {"skills:\n  lint:\n    command: \"\"\n" USES_LINT,
     "agents.yaml:3:14: skills.lint.command must be a command: a string run "
     "by the shell, or a list [program, arg, ...]\n"
     "agents.yaml:3:5: skills.lint needs a command (for example: command: "
     "make test)"},
    {"skills: [build]\n",
     "agents.yaml:1:9: skills must be a mapping of skill names, got a list"},
    {"skills:\n  lint: {command: x, output_max_kb: 2048}\n" USES_LINT,
     "agents.yaml:2:37: skills.lint.output_max_kb must be an integer "
     "1..1024, got \"2048\""},
    {"skills:\n  lint:\n    command: x\n    required: maybe\n" USES_LINT,
     "agents.yaml:4:15: skills.lint.required must be true or false, got "
     "\"maybe\""},
    {"skills:\n  lint:\n    command: x\n    required: [true]\n" USES_LINT,
     "agents.yaml:4:15: skills.lint.required must be true or false, got a "
     "list"},
    {"skills:\n  lint: {command: x}\n  lint: {command: y}\n" USES_LINT,
     "agents.yaml:3:3: duplicate key 'lint' in skills"},
    {"agents:\n  reviewer:\n    skills: []\nskills:\n  lint:\n"
     "    required: false\n",
     "agents.yaml:6:5: skills.lint needs a command (for example: command: "
     "make test)"},
    {"agents:\n  reviewer:\n    skills: []\nskills:\n  \"bad name\":\n"
     "    command: x\n",
     "agents.yaml:5:3: skill name 'bad name' must be 1..40 letters, digits, "
     "'-' or '_'"},
    /* skills: paths, after, limits, built-ins */
    {"agents: {reviewer: {skills: [lint]}}\n"
     "skills:\n  lint:\n    command: x\n    after: [nope]\n",
     "agents.yaml:5:13: skills.lint.after names 'nope', which is not "
     "defined under skills (defined: lint)"},
    {"agents: {reviewer: {skills: [a, b]}}\n"
     "skills:\n  a: {command: x, after: [b]}\n  b: {command: y}\n",
     "agents.yaml:3:26: skills.a.after makes a cycle: a waits for b, b "
     "waits for a (a skill without after waits for every skill listed "
     "before it in agents.reviewer.skills)"},
    {"agents: {reviewer: {skills: [a, b, c]}}\n"
     "skills:\n  a: {command: x, after: []}\n"
     "  b: {command: y, after: [c]}\n  c: {command: z, after: [b]}\n",
     "agents.yaml:4:26: skills.b.after makes a cycle: b waits for c, c "
     "waits for b (a skill without after waits for every skill listed "
     "before it in agents.reviewer.skills)"},
    {"agents: {reviewer: {skills: [a]}}\n"
     "skills:\n  a: {command: x, after: [a]}\n",
     "agents.yaml:3:26: skills.a.after makes a cycle: a waits for a (a "
     "skill without after waits for every skill listed before it in "
     "agents.reviewer.skills)"},
    {"agents: {reviewer: {skills: [lint]}}\n"
     "skills:\n  lint:\n    command: x\n"
     "    paths: [\"src/[ab\", \"ok/**\", \"/abs\"]\n",
     "agents.yaml:5:13: skills.lint.paths[0] is not a valid pattern "
     "\"src/[ab\": '[' has no closing ']' in the same path component\n"
     "agents.yaml:5:33: skills.lint.paths[2] is not a valid pattern "
     "\"/abs\": a pattern is relative to the repository root and must not "
     "start with '/'"},
    {"agents: {reviewer: {skills: [d]}}\n"
     "skills:\n  d: {builtin: git, forbid: [\"a//b\"], "
     "max_changed_lines: -3}\n",
     "agents.yaml:3:58: skills.d.max_changed_lines must be an integer "
     "0..100000000, got \"-3\"\n"
     "agents.yaml:3:30: skills.d.forbid[0] is not a valid pattern \"a//b\": "
     "a pattern must not hold an empty path component ('//')"},
    {"agents: {reviewer: {skills: [g]}}\n"
     "skills:\n  g:\n    builtin: git\n    command: make\n"
     "    limits: {cpu_s: 3}\n",
     "agents.yaml:5:5: skills.g: builtin: git runs inside the reviewer and "
     "takes no command (keep one of the two)\n"
     "agents.yaml:6:5: skills.g.limits applies to commands; builtin: git "
     "runs inside the reviewer"},
    {"agents: {reviewer: {skills: [g]}}\n"
     "skills:\n  g:\n    builtin: git\n    sandbox: none\n"
     "    network: true\n",
     "agents.yaml:5:5: skills.g.sandbox applies to commands; builtin: git "
     "runs inside the reviewer\n"
     "agents.yaml:6:5: skills.g.network applies to commands; builtin: git "
     "runs inside the reviewer"},
    {USES_LINT "skills:\n  lint: {command: x, sandbox: docker}\n",
     "agents.yaml:3:31: skills.lint.sandbox must be one of bwrap, none; got "
     "\"docker\""},
    {USES_LINT "skills:\n  lint: {command: x, network: maybe}\n",
     "agents.yaml:3:31: skills.lint.network must be true or false, got "
     "\"maybe\""},
    {"agents: {reviewer: {skills: [l]}}\n"
     "skills:\n  l:\n    command: x\n    forbid: [a]\n    public: [b]\n"
     "    max_file_kb: 3\n",
     "agents.yaml:5:5: skills.l.forbid applies only to builtin: git\n"
     "agents.yaml:7:5: skills.l.max_file_kb applies only to builtin: git\n"
     "agents.yaml:6:5: skills.l.public applies only to builtin: docs"},
    {"agents: {reviewer: {skills: [d]}}\n"
     "skills:\n  d: {builtin: docs, public: [\"*.h\"]}\n",
     "agents.yaml:3:7: skills.d: builtin: docs needs public: [globs] (the "
     "interface) and docs: [globs] (its documentation)"},
    {"agents: {reviewer: {skills: [d]}}\nskills:\n  d: {builtin: svn}\n",
     "agents.yaml:3:16: skills.d.builtin must be one of git, docs; got "
     "\"svn\""},
    {"agents: {reviewer: {skills: [l]}}\n"
     "skills:\n  l:\n    command: x\n"
     "    limits: {cpu_s: -1, memory_mb: lots, file_mb: 2000000, procs: 3}\n",
     "agents.yaml:5:21: skills.l.limits.cpu_s must be an integer "
     "0..604800, got \"-1\"\n"
     "agents.yaml:5:36: skills.l.limits.memory_mb must be an integer "
     "0..1048576, got \"lots\"\n"
     "agents.yaml:5:51: skills.l.limits.file_mb must be an integer "
     "0..1048576, got \"2000000\"\n"
     "agents.yaml:5:60: unknown key 'procs' in skills.l.limits (known keys: "
     "cpu_s, memory_mb, file_mb, disk_mb, processes)"},
    {"agents: {reviewer: {skills: [l]}}\n"
     "skills:\n  l: {command: x, after: b, paths: \"src/**\", limits: [1]}\n",
     "agents.yaml:3:26: skills.l.after must be a list, got a value\n"
     "agents.yaml:3:36: skills.l.paths must be a list, got a value\n"
     "agents.yaml:3:54: skills.l.limits must be a mapping of keys, got a "
     "list"},
};

static void every_skills_error_names_file_line_and_column(void **state)
{
    (void)state;
    assert_bad_cases(skills_cases,
                     sizeof(skills_cases) / sizeof(*skills_cases));
}

/* Each unknown name in an `after` listed every skill defined, for a
 * report that had long stopped taking lines: 10,000 skills and 50,000
 * unknown names took 44 s. The check stops with the report. */
static void unknown_after_names_stop_with_the_report(void **state)
{
    tnd_buf b;
    char *text;
    const char *got;
    int64_t start;

    (void)state;
    tnd_buf_init(&b, TND_BUF_NOCAP);
    tnd_buf_puts(&b, "skills:\n");
    for (int i = 0; i < 1000; i++)
        tnd_buf_printf(&b, "  s%d: {command: x}\n", i);
    tnd_buf_puts(&b, "  t: {command: x, after: [zz");
    for (int i = 1; i < 4000; i++)
        tnd_buf_puts(&b, ", zz");
    tnd_buf_puts(&b, "]}\nagents: {reviewer: {skills: [t]}}\n");
    text = tnd_buf_detach(&b, NULL);
    start = tnd_now_ms();
    got = parse_err(text);
    /* 0.4 s, valgrind ~10 s (the skills' own duplicate-key check) */
    assert_in_range(tnd_now_ms() - start, 0, 30000);
    assert_non_null(strstr(got, "skills.t.after names 'zz', which is not "
                                "defined under skills (defined: s0, s1, "));
    assert_non_null(strstr(got, "too many errors; stopping here"));
    free(text);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(skill_lookup_finds_by_exact_name),
        cmocka_unit_test(skill_keys_paths_after_limits_and_builtins),
        cmocka_unit_test(every_skills_error_names_file_line_and_column),
        cmocka_unit_test(unknown_after_names_stop_with_the_report),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
