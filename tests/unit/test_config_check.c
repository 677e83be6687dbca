/* Unit tests for common/config_check, and what a config is refused for.
 *
 * The checks between keys (a model's key variable and URL, a quorum's
 * models, one threshold not above another, the skills the reviewer
 * names, at most 32 of them) and the llm check a run and doctor make
 * with the files; and the errors as a whole: every error as
 * FILE:LINE:COL (the skills section's in test_config_skills.c), several
 * at once, their cap, alias bombs, a megabyte of nesting, a FIFO, a
 * directory or a device as the file (exit-2 errors), a bad --llm.
 *
 * Most cases parse from memory (config_text.h) and compare the whole
 * error text, so every "FILE:LINE:COL: message" is checked down to the
 * column. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/clock.h"
#include "common/config.h"
#include "common/fs.h"
#include "common/str.h"
#include "proto/body.h"
#include "tests/unit/config_text.h"

static size_t count_lines(const char *s)
{
    size_t n = *s ? 1 : 0;

    for (; *s; s++)
        n += *s == '\n';
    return n;
}

/* ---- a file that cannot be read --------------------------------------- */

static void load_names_the_file_in_every_error(void **state)
{
    char path[PATH_MAX], expect[PATH_MAX + 128];
    static const char text[] = "gate:\n  max_iterations: 0\n";
    tnd_config *cfg = (tnd_config *)1;

    (void)state;
    snprintf(path, sizeof(path), "%s/bad.yaml", tmpdir);
    assert_int_equal(tnd_fs_write(path, text, strlen(text)), 0);
    assert_int_equal(tnd_config_load(&cfg, path), TND_ECONFIG);
    assert_null(cfg);
    snprintf(expect, sizeof(expect),
             "%s:2:19: gate.max_iterations must be an integer 1..50, got "
             "\"0\"",
             path);
    assert_string_equal(tnd_error_last(), expect);
    unlink(path);
}

static void load_of_a_missing_file_says_which(void **state)
{
    char path[PATH_MAX];
    tnd_config *cfg = (tnd_config *)1;

    (void)state;
    snprintf(path, sizeof(path), "%s/nope.yaml", tmpdir);
    assert_int_equal(tnd_config_load(&cfg, path), TND_ECONFIG);
    assert_null(cfg);
    assert_non_null(strstr(tnd_error_last(), path));
    assert_non_null(strstr(tnd_error_last(), "does not exist"));
}

/* What cannot be a config file is a config error (exit 2), named with
 * what it is and the fix; a FIFO is refused without waiting for a
 * writer (the alarm turns a hang into a failure; it is no deadline). */
static void load_refuses_what_is_not_a_regular_file(void **state)
{
    char path[PATH_MAX], expect[2 * PATH_MAX];
    tnd_config *cfg = (tnd_config *)1;

    (void)state;
    snprintf(expect, sizeof(expect),
             "%s is not a regular file (it is a directory); the config "
             "must be a regular file of at most 1 MiB",
             tmpdir);
    assert_int_equal(tnd_config_load(&cfg, tmpdir), TND_ECONFIG);
    assert_null(cfg);
    assert_string_equal(tnd_error_last(), expect);

    snprintf(path, sizeof(path), "%s/fifo.yaml", tmpdir);
    assert_int_equal(mkfifo(path, 0600), 0);
    snprintf(expect, sizeof(expect),
             "%s is not a regular file (it is a FIFO); the config must be "
             "a regular file of at most 1 MiB",
             path);
    alarm(60);
    assert_int_equal(tnd_config_load(&cfg, path), TND_ECONFIG);
    alarm(0);
    assert_null(cfg);
    assert_string_equal(tnd_error_last(), expect);
    unlink(path);

    alarm(60);
    assert_int_equal(tnd_config_load(&cfg, "/dev/zero"), TND_ECONFIG);
    alarm(0);
    assert_null(cfg);
    assert_string_equal(tnd_error_last(),
                        "/dev/zero is not a regular file (it is a character "
                        "device); the config must be a regular file of at "
                        "most 1 MiB");
}

static void load_refuses_a_file_over_a_megabyte(void **state)
{
    char path[PATH_MAX], expect[PATH_MAX + 128];
    size_t big = (1 << 20) + 1;
    char *text = malloc(big);
    tnd_config *cfg = (tnd_config *)1;

    (void)state;
    memset(text, '#', big);
    snprintf(path, sizeof(path), "%s/huge.yaml", tmpdir);
    assert_int_equal(tnd_fs_write(path, text, big), 0);
    assert_int_equal(tnd_config_load(&cfg, path), TND_ECONFIG);
    assert_null(cfg);
    snprintf(expect, sizeof(expect),
             "%s is larger than 1048576 bytes; the config must be a regular "
             "file of at most 1 MiB",
             path);
    assert_string_equal(tnd_error_last(), expect);
    unlink(path);
    free(text);
}

/* ---- errors: one case, one exact message ------------------------------- */

static const bad_case bad_cases[] = {
    /* unknown keys, with and without a near miss */
    {"gate:\n  max_iteration: 5\n",
     "agents.yaml:2:3: unknown key 'max_iteration' in gate (did you mean "
     "'max_iterations'?)"},
    {"agentz: {}\n",
     "agents.yaml:1:1: unknown key 'agentz' in the top level (did you mean "
     "'agents'?)"},
    {"agents:\n  coder:\n    llm:\n      modle: x\n",
     "agents.yaml:4:7: unknown key 'modle' in agents.coder.llm (did you mean "
     "'model'?)"},
    {"gate:\n  colour: red\n",
     "agents.yaml:2:3: unknown key 'colour' in gate (known keys: "
     "max_iterations, confidence_threshold, human_review_below, "
     "persistent_failure_threshold, max_tokens, max_llm_calls, max_wall_s, "
     "escalate, risk_paths, check_paths, critique, critique_diff_lines, "
     "critique_every, baseline, baseline_reuse_s)"},
    {"verbose: true\n",
     "agents.yaml:1:1: unknown key 'verbose' in the top level (known keys: "
     "gate, orchestrator, workspace, agents, version, skills)"},
    {"workspace:\n  incremental: sometimes\n",
     "agents.yaml:2:16: workspace.incremental must be true or false, got "
     "\"sometimes\""},
    {"workspace:\n  include_untraced: true\n",
     "agents.yaml:2:3: unknown key 'include_untraced' in workspace (did you "
     "mean 'include_untracked'?)"},
    /* wrong types */
    {"gate:\n  max_iterations: three\n",
     "agents.yaml:2:19: gate.max_iterations must be an integer 1..50, got "
     "\"three\""},
    {"agents:\n  reviewer:\n    skills_at_once: 1025\n",
     "agents.yaml:3:21: agents.reviewer.skills_at_once must be an integer "
     "0..1024, got \"1025\""},
    {"gate:\n  max_iterations: 2.5\n",
     "agents.yaml:2:19: gate.max_iterations must be an integer 1..50, got "
     "\"2.5\""},
    {"gate:\n  max_iterations:\n    a: 1\n",
     "agents.yaml:3:5: gate.max_iterations must be an integer 1..50, got a "
     "mapping"},
    {"gate:\n  confidence_threshold: [1]\n",
     "agents.yaml:2:25: gate.confidence_threshold must be a number 0..1, got "
     "a list"},
    {"gate:\n  max_iterations:\n",
     "agents.yaml:2:18: gate.max_iterations must be an integer 1..50, got "
     "nothing"},
    {"agents:\n  coder:\n    llm:\n      model: [a, b]\n",
     "agents.yaml:4:14: agents.coder.llm.model must be a string, got a list"},
    {"orchestrator:\n  endpoint: {a: 1}\n",
     "agents.yaml:2:13: orchestrator.endpoint must be a string, got a "
     "mapping"},
    {"gate: fast\n",
     "agents.yaml:1:7: gate must be a mapping of keys, got a value"},
    {"agents:\n  - coder\n",
     "agents.yaml:2:3: agents must be a mapping of keys, got a list"},
    {"[1, 2]\n",
     "agents.yaml:1:1: the top level must be a mapping of keys, got a list"},
    {"agents:\n  reviewer:\n    skills: build\n",
     "agents.yaml:3:13: agents.reviewer.skills must be a list, got a value"},
    {"agents:\n  reviewer:\n    skills: [build, [x]]\n",
     "agents.yaml:3:21: agents.reviewer.skills[1] must be a string"},
    {"agents:\n  coder:\n    command: {a: b}\n",
     "agents.yaml:3:14: agents.coder.command must be a command: a string run "
     "by the shell, or a list [program, arg, ...]"},
    {"agents:\n  coder:\n    command: []\n",
     "agents.yaml:3:14: agents.coder.command must not be an empty list"},
    {"agents:\n  coder:\n    command: \"\"\n",
     "agents.yaml:3:14: agents.coder.command must be a command: a string "
     "run by the shell, or a list [program, arg, ...]"},
    {"{[a]: 1}\n", "agents.yaml:1:2: keys in the top level must be plain "
                   "names"},
    /* out of range: the range and the value */
    {"gate:\n  max_iterations: 51\n",
     "agents.yaml:2:19: gate.max_iterations must be an integer 1..50, got "
     "\"51\""},
    {"gate:\n  max_iterations: 99999999999999999999999\n",
     "agents.yaml:2:19: gate.max_iterations must be an integer 1..50, got "
     "\"99999999999999999999999\""},
    {"gate:\n  confidence_threshold: 1.5\n",
     "agents.yaml:2:25: gate.confidence_threshold must be a number 0..1, got "
     "\"1.5\""},
    {"gate:\n  confidence_threshold: .nan\n",
     "agents.yaml:2:25: gate.confidence_threshold must be a number 0..1, got "
     "\".nan\""},
    {"agents:\n  coder:\n    llm:\n      temperature: -0.5\n",
     "agents.yaml:4:20: agents.coder.llm.temperature must be a number 0..2, "
     "got \"-0.5\""},
    {"agents:\n  reviewer:\n    count: 17\n",
     "agents.yaml:3:12: agents.reviewer.count must be an integer 0..16, got "
     "\"17\""},
    {"orchestrator:\n  heartbeat_ms: 10\n",
     "agents.yaml:2:17: orchestrator.heartbeat_ms must be an integer "
     "50..60000, got \"10\""},
    /* the range exactly, not rounded to "1..1.04858e+06" */
    {"orchestrator:\n  workspace_max_mb: 1048577\n",
     "agents.yaml:2:21: orchestrator.workspace_max_mb must be an integer "
     "1..1048576, got \"1048577\""},
    {"orchestrator:\n  request_timeout_s: [1]\n",
     "agents.yaml:2:22: orchestrator.request_timeout_s must be an integer "
     "0..604800, got a list"},
    /* booleans and choices */
    {"agents:\n  coder:\n    llm:\n      provider: gemini\n",
     "agents.yaml:4:17: agents.coder.llm.provider must be one of "
     "replay, openai, anthropic, ollama, command; got \"gemini\""},
    /* duplicates */
    {"gate:\n  max_iterations: 3\n  max_iterations: 4\n",
     "agents.yaml:3:3: duplicate key 'max_iterations' in gate"},
    {"gate: {}\ngate: {}\n",
     "agents.yaml:2:1: duplicate key 'gate' in the top level"},
    /* skills */
    {"agents:\n"
     "  reviewer:\n"
     "    skills:\n"
     "      - build\n"
     "      - lint\n",
     "agents.yaml:5:9: agents.reviewer.skills names 'lint', which is not "
     "defined under skills (defined: build, test)"},
    {"skills:\n  lint: {command: x}\n",
     "agents.yaml:2:3: agents.reviewer.skills names 'build', which is not "
     "defined under skills (defined: lint)\n"
     "agents.yaml:2:3: agents.reviewer.skills names 'test', which is not "
     "defined under skills (defined: lint)"},
    {"agents:\n  reviewer:\n    skills: [lint]\nskills: {}\n",
     "agents.yaml:3:14: agents.reviewer.skills names 'lint', which is not "
     "defined under skills (defined: none)"},
    /* the reviewer quorum and the critique */
    {"agents:\n  reviewer:\n    models:\n      - {provider: openai, model: a}\n",
     "agents.yaml:4:7: agents.reviewer.models lists the models of a quorum, "
     "but agents.reviewer.count is 1 (one reviewer, using "
     "agents.reviewer.llm); raise count to 2, or set count 0 for remote "
     "members"},
    {"agents:\n  coder:\n    quorum: all\n",
     "agents.yaml:3:5: agents.coder.quorum: only the reviewer has a quorum"},
    {"agents:\n  reviewer:\n    context_include: [a]\n",
     "agents.yaml:3:5: agents.reviewer.context_include: only the coder is sent "
     "repository files; set agents.coder.context_include"},
    {"agents:\n  reviewer:\n    map_max_tokens: 1000\n",
     "agents.yaml:3:5: agents.reviewer.map_max_tokens: only the coder is sent "
     "a repository map; set agents.coder.map_max_tokens"},
    {"agents:\n  coder:\n    threads: 65\n",
     "agents.yaml:3:14: agents.coder.threads must be an integer 1..64, got "
     "\"65\""},
    {"agents:\n  coder:\n    map_max_tokens: 100\n",
     "agents.yaml:3:21: agents.coder.map_max_tokens must be an integer "
     "256..65536, got \"100\""},
    {"gate:\n  risk_paths: [\"src/[ab\"]\n",
     "agents.yaml:2:16: gate.risk_paths[0] is not a valid pattern \"src/[ab\": "
     "'[' has no closing ']' in the same path component"},
    {"agents:\n  coder:\n    context_include: [\"x/[\"]\n",
     "agents.yaml:3:23: agents.coder.context_include[0] is not a valid pattern "
     "\"x/[\": '[' has no closing ']' in the same path component"},
    {"agents:\n  coder:\n    models:\n      - {provider: openai, model: a}\n",
     "agents.yaml:4:7: agents.coder.models: only the reviewer has quorum "
     "members; give the coder's model under agents.coder.llm"},
    {"agents:\n  reviewer:\n    count: 2\n    models:\n      - {provider: openai, modle: a}\n",
     "agents.yaml:5:28: unknown key 'modle' in agents.reviewer.models[0] (did "
     "you mean 'model'?)"},
    {"agents:\n  reviewer:\n    count: 2\n    models:\n      - {provider: openai, model: a}\n"
     "      - {provider: replay}\n",
     "agents.yaml:6:9: agents.reviewer.models[1]: provider replay needs a "
     "cassette (set agents.reviewer.models[1].cassette to the file of "
     "recorded answers)"},
    {"agents:\n  reviewer:\n    count: 2\n    models:\n"
     "      - {provider: openai, base_url: ftp://x}\n",
     "agents.yaml:5:38: agents.reviewer.models[0].base_url must start with "
     "http:// or https://, got \"ftp://x\""},
    {"agents:\n  reviewer:\n    models: {provider: openai}\n",
     "agents.yaml:3:13: agents.reviewer.models must be a list of llm "
     "sections, got a mapping"},
    {"agents:\n  reviewer:\n    count: 0\n    models: [openai]\n",
     "agents.yaml:4:14: agents.reviewer.models[0] must be a mapping of keys, "
     "got a value"},
    {"agents:\n  reviewer:\n    quorum: some\n",
     "agents.yaml:3:13: agents.reviewer.quorum must be one of all, majority; "
     "got \"some\""},
    {"gate:\n  critique: sometimes\n",
     "agents.yaml:2:13: gate.critique must be one of always, on_trigger; got "
     "\"sometimes\""},
    {"gate:\n  critique_diff_lines: -1\n",
     "agents.yaml:2:24: gate.critique_diff_lines must be an integer "
     "0..1000000, got \"-1\""},
    {"gate:\n  critique_diff_lines: 1000001\n",
     "agents.yaml:2:24: gate.critique_diff_lines must be an integer "
     "0..1000000, got \"1000001\""},
    {"gate:\n  critique_every: 100001\n",
     "agents.yaml:2:19: gate.critique_every must be an integer 0..100000, got "
     "\"100001\""},
    {"gate:\n  baseline_reuse_s: -1\n",
     "agents.yaml:2:21: gate.baseline_reuse_s must be an integer 0..86400, got "
     "\"-1\""},
    /* the document as a whole */
    {"version: 2\n",
     "agents.yaml:1:10: version must be 1 (this tandem reads version 1 "
     "files)"},
    {"version: [1]\n",
     "agents.yaml:1:10: version must be 1 (this tandem reads version 1 "
     "files)"},
    {"gate:\n  confidence_threshold: 0.6\n  human_review_below: 0.65\n",
     "agents.yaml:3:23: gate.human_review_below (0.65) must not be above "
     "gate.confidence_threshold (0.6)"},
    {"gate:\n  max_iterations: 4\n  confidence_threshold: 0.5\n",
     "agents.yaml:3:25: gate.human_review_below (0.7) must not be above "
     "gate.confidence_threshold (0.5)"},
    {"agents:\n  reviewer:\n    llm:\n      provider: replay\n",
     "agents.yaml:4:7: agents.reviewer.llm: provider replay needs a "
     "cassette (set agents.reviewer.llm.cassette to the file of recorded "
     "answers)"},
    {"agents:\n  coder:\n    llm:\n      model: m\n"
     "      base_url: ftp://example.com/v1\n",
     "agents.yaml:5:17: agents.coder.llm.base_url must start with http:// "
     "or https://, got \"ftp://example.com/v1\""},
    /* accepted silently, then failing at the first call */
    {"agents:\n  coder:\n    llm:\n      provider: openai\n      model: \"\"\n",
     "agents.yaml:4:7: agents.coder.llm.model is empty: name the model the "
     "server runs (tandem doctor lists what it offers)"},
    /* a key pasted where its variable's name goes is not echoed (it
     * went to stderr, and into CI logs) */
    {"agents:\n  coder:\n    llm:\n      model: m\n"
     "      api_key_env: sk-proj-Abc123SecretValue_xyz789\n",
     "agents.yaml:4:7: agents.coder.llm.api_key_env is not the name of an "
     "environment variable (letters, digits and '_', not starting with a "
     "digit; its value is not shown, as it may be a key itself): put the key "
     "in a variable, e.g. export OPENAI_API_KEY=..., and its name here"},
    {"agents:\n  coder:\n    llm:\n      model: m\n      base_url: http://\n",
     "agents.yaml:4:7: agents.coder.llm.base_url: \"http://\" names no host; "
     "give one, e.g. http://127.0.0.1:11434"},
    /* not YAML at all: where libyaml gave up */
    {"gate:\n  max_iterations: [1, 2\n",
     "agents.yaml:3:1: not valid YAML: did not find expected ',' or ']' "
     "while parsing a flow sequence"},
    {"gate:\n\tmax_iterations: 3\n",
     "agents.yaml:2:1: not valid YAML: found character that cannot start "
     "any token while scanning for the next token"},
    {"gate:\n  a: 1\n b: 2\n",
     "agents.yaml:3:2: not valid YAML: did not find expected key while "
     "parsing a block mapping"},
    {"gate: \"unterminated\n",
     "agents.yaml:2:1: not valid YAML: found unexpected end of stream while "
     "scanning a quoted scalar"},
};

static void every_error_names_file_line_and_column(void **state)
{
    (void)state;
    assert_bad_cases(bad_cases, sizeof(bad_cases) / sizeof(*bad_cases));
}

static void several_errors_are_all_reported_one_per_line(void **state)
{
    const char *got = parse_err("version: 1\n"
                                "gate:\n"
                                "  max_iterations: 0\n"
                                "  confidence_threshold: high\n"
                                "agents:\n"
                                "  coder:\n"
                                "    cuont: 1\n"
                                "    llm:\n"
                                "      provider: nobody\n"
                                "skills:\n"
                                "  lint: {}\n");

    (void)state;
    assert_string_equal(
        got,
        "agents.yaml:3:19: gate.max_iterations must be an integer 1..50, got "
        "\"0\"\n"
        "agents.yaml:4:25: gate.confidence_threshold must be a number 0..1, "
        "got \"high\"\n"
        "agents.yaml:7:5: unknown key 'cuont' in agents.coder (did you mean "
        "'count'?)\n"
        "agents.yaml:9:17: agents.coder.llm.provider must be one of "
        "replay, openai, anthropic, ollama, command; got \"nobody\"\n"
        "agents.yaml:11:9: skills.lint needs a command (for example: "
        "command: make test)\n"
        "agents.yaml:11:3: agents.reviewer.skills names 'build', which is not "
        "defined under skills (defined: lint)\n"
        "agents.yaml:11:3: agents.reviewer.skills names 'test', which is not "
        "defined under skills (defined: lint)");
}

/* A value or key holding a line break is quoted in its message without
 * it: each problem stays one line starting with the file's name, which
 * is what people and editors read the report by. Found by
 * tests/fuzz/fuzz_config with this file: the pattern "\n\n**" broke its
 * line in two. */
static void a_line_break_in_a_value_keeps_one_problem_per_line(void **state)
{
    static const char fuzzed[] = "skills:\n s:\n  docs: ['\n\n**']";
    const char *got = parse_err(fuzzed), *line;

    (void)state;
    assert_int_equal(count_lines(got), 5);
    for (line = got; line;
         line = strchr(line, '\n'), line = line ? line + 1 : NULL)
        if (strncmp(line, "agents.yaml:", 12) != 0)
            fail_msg("a line of the report is not a problem:\n%s", got);
    assert_non_null(strstr(got, "agents.yaml:3:10: skills.s.docs[0] is not a "
                                "valid pattern \"?**\": "));
    /* a key, in the other messages that quote one */
    got = parse_err("gate:\n  \"max\\niterations\": 3\n"
                    "  \"x\\r\": 1\n  \"x\\r\": 2\n");
    assert_int_equal(count_lines(got), 3);
    assert_non_null(strstr(got, "agents.yaml:2:3: unknown key 'max?iterations' "
                                "in gate (did you mean 'max_iterations'?)"));
    assert_non_null(strstr(got, "agents.yaml:4:3: duplicate key 'x?' in gate"));
}

/* "gate:" with max_iterations set 1 + n times: n duplicate-key errors
 * (short ones), on lines 3..n+2. Caller frees. */
static char *duplicates(int n)
{
    tnd_buf b;

    tnd_buf_init(&b, TND_BUF_NOCAP);
    tnd_buf_puts(&b, "gate:\n");
    for (int i = 0; i <= n; i++)
        tnd_buf_puts(&b, "  max_iterations: 3\n");
    return tnd_buf_detach(&b, NULL);
}

/* n top-level keys unknown_0000..: n long errors. Caller frees. */
static char *unknown_keys(int n)
{
    tnd_buf b;

    tnd_buf_init(&b, TND_BUF_NOCAP);
    for (int i = 0; i < n; i++)
        tnd_buf_printf(&b, "unknown_%04d: 1\n", i);
    return tnd_buf_detach(&b, NULL);
}

static void errors_are_capped(void **state)
{
    const char *got, *p;
    char *text;

    (void)state;
    /* exactly at the cap: all of them, no "too many" */
    text = duplicates(20);
    got = parse_err(text);
    assert_int_equal(count_lines(got), 20);
    assert_true(tnd_str_ends_with(
        got, "agents.yaml:22:3: duplicate key 'max_iterations' in gate"));
    assert_null(strstr(got, "too many"));
    free(text);

    /* one more: the first 20 and a last line saying there were more */
    text = duplicates(21);
    got = parse_err(text);
    assert_int_equal(count_lines(got), 21);
    assert_non_null(strstr(got, "agents.yaml:22:3: duplicate key"));
    assert_null(strstr(got, "agents.yaml:23:3"));
    assert_true(tnd_str_ends_with(
        got, "\nagents.yaml: too many errors; stopping here"));
    free(text);

    /* Long messages: as many whole lines as fit in tnd_error_last(),
     * then the "too many" line; none is cut off. Checking stops there
     * (the duplicate check over every pair was quadratic: 30000 keys
     * took seconds; bench, not a timed test, would show it again). */
    text = unknown_keys(30000);
    got = parse_err(text);
    assert_true(strlen(got) < 2000);
    assert_true(count_lines(got) > 5 && count_lines(got) <= 21);
    assert_true(tnd_str_ends_with(
        got, "\nagents.yaml: too many errors; stopping here"));
    for (p = got; (p = strchr(p, '\n')) != NULL; p++)
        if (strncmp(p - 1, ")\n", 2) != 0)
            fail_msg("a line was cut: %s", got);
    free(text);
}

/* A megabyte of YAML can ask for far more through aliases: 160,000
 * aliases of a 400 KB string in one list asked for 64 GB; and every key
 * of a mapping is checked against those before it (55,000 skills took
 * 12 s). Lists, their text and mappings are capped, said with the
 * place. */
static void aliases_cannot_multiply_a_list(void **state)
{
    tnd_buf b;
    char *text;
    const char *got;

    (void)state;
    tnd_buf_init(&b, TND_BUF_NOCAP);
    tnd_buf_puts(&b, "x: &big \"");
    for (int i = 0; i < 4000; i++)
        tnd_buf_puts(&b, "0123456789");
    tnd_buf_puts(&b, "\"\ngate:\n  risk_paths: [*big");
    for (int i = 1; i < 4000; i++)
        tnd_buf_puts(&b, ", *big");
    tnd_buf_puts(&b, "]\n");
    text = tnd_buf_detach(&b, NULL);
    got = parse_err(text);
    assert_non_null(strstr(got, "gate.risk_paths["));
    assert_non_null(strstr(got, "hold more than 8 MiB of text"));
    free(text);

    tnd_buf_init(&b, TND_BUF_NOCAP);
    tnd_buf_puts(&b, "skills:\n");
    for (int i = 0; i < 1100; i++)
        tnd_buf_printf(&b, "  s%d: {command: x}\n", i);
    text = tnd_buf_detach(&b, NULL);
    got = parse_err(text);
    assert_non_null(strstr(got, "skills has more than 1024 keys"));
    free(text);
}

static void alias_bomb_is_cheap(void **state)
{
    static const char bomb[] =
        "a: &a [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n"
        "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
        "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
        "d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
        "e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]\n"
        "f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]\n"
        "g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f]\n"
        "h: &h [*g, *g, *g, *g, *g, *g, *g, *g, *g]\n"
        "i: &i [*h, *h, *h, *h, *h, *h, *h, *h, *h]\n"
        "agents:\n"
        "  coder:\n"
        "    skills: *i\n"
        "    command: *i\n"
        "    llm: *i\n"
        "skills:\n"
        "  x:\n"
        "    command: *i\n";
    /* The same shape through mappings, under keys the schema reads. */
    static const char map_bomb[] =
        "x1: &m1 {command: make, required: true}\n"
        "x2: &m2 {a: *m1, b: *m1, c: *m1, d: *m1, e: *m1, f: *m1}\n"
        "x3: &m3 {a: *m2, b: *m2, c: *m2, d: *m2, e: *m2, f: *m2}\n"
        "x4: &m4 {a: *m3, b: *m3, c: *m3, d: *m3, e: *m3, f: *m3}\n"
        "x5: &m5 {a: *m4, b: *m4, c: *m4, d: *m4, e: *m4, f: *m4}\n"
        "x6: &m6 {a: *m5, b: *m5, c: *m5, d: *m5, e: *m5, f: *m5}\n"
        "x7: &m7 {a: *m6, b: *m6, c: *m6, d: *m6, e: *m6, f: *m6}\n"
        "x8: &m8 {a: *m7, b: *m7, c: *m7, d: *m7, e: *m7, f: *m7}\n"
        "agents: {coder: *m8, reviewer: *m8}\n"
        "skills: *m8\n"
        "gate: *m8\n";
    int64_t start = tnd_now_ms();
    const char *got;

    (void)state;
    got = parse_err(bomb);
    assert_non_null(strstr(got, "agents.yaml:1:1: unknown key 'a'"));
    assert_non_null(strstr(got, "agents.coder.skills[0] must be a string"));
    got = parse_err(map_bomb);
    assert_non_null(strstr(got, "unknown key 'x1'"));
    /* a hang guard (expanded, the bomb is billions of nodes), wide
     * enough for a loaded machine under valgrind */
    assert_in_range(tnd_now_ms() - start, 0, 30000);
}

/* agents.reviewer.skills of n entries naming skill a. Caller frees. */
static char *reviewer_skills(size_t n)
{
    tnd_buf b;

    tnd_buf_init(&b, TND_BUF_NOCAP);
    tnd_buf_puts(&b, "skills:\n  a: {command: make, after: []}\n"
                     "agents:\n  reviewer:\n    skills: [a");
    for (size_t i = 1; i < n; i++)
        tnd_buf_puts(&b, ", a");
    tnd_buf_puts(&b, "]\n");
    return tnd_buf_detach(&b, NULL);
}

/* An audit carries at most TND_BODY_MAX_SKILLS results and the reviewer
 * ran only that many, so a longer list left its last skills silently
 * unrun; the order check between its entries was also quadratic: 20,000
 * names took a second, the megabyte a config may be, minutes. Found
 * while reading the config checks for inputs larger than the fuzzer's. */
static void at_most_32_reviewer_skills(void **state)
{
    char *text = reviewer_skills(TND_CONFIG_MAX_SKILLS);
    tnd_config *cfg = parse_ok(text);
    int64_t start;

    (void)state;
    assert_int_equal(TND_CONFIG_MAX_SKILLS, TND_BODY_MAX_SKILLS);
    tnd_config_destroy(&cfg);
    free(text);
    text = reviewer_skills(TND_CONFIG_MAX_SKILLS + 1);
    assert_string_equal(parse_err(text),
                        "agents.yaml:5:13: agents.reviewer.skills lists 33 "
                        "skills; at most 32 run (list fewer, or combine "
                        "checks in one command)");
    free(text);
    text = reviewer_skills(200000);
    start = tnd_now_ms();
    /* past any list's cap: refused unread (it was the count of skills) */
    assert_non_null(strstr(parse_err(text), "agents.reviewer.skills has "
                                            "200000 items, more than the "
                                            "4096 tandem reads"));
    /* 0.1 s; valgrind ~3 s; the pairwise check took two minutes */
    assert_in_range(tnd_now_ms() - start, 0, 30000);
    free(text);
}

/* A megabyte of nesting used to keep libyaml busy for minutes; it is
 * refused at the 65th level with its place, like any other mistake.
 * The documented file nests 5 deep. */
static void deep_nesting_is_refused_at_its_place(void **state)
{
    size_t n = 1 << 18; /* "{a: " 256 Ki times: 1 MiB */
    char *text = malloc(4 * n + 1);
    tnd_config *cfg = (tnd_config *)1;

    (void)state;
    for (size_t i = 0; i < n; i++)
        memcpy(text + 4 * i, "{a: ", 4);
    text[4 * n] = '\0';
    assert_int_equal(
        tnd_config_parse(&cfg, text, 4 * n, "agents.yaml", "/base"),
        TND_ECONFIG);
    assert_null(cfg);
    assert_string_equal(tnd_error_last(),
                        "agents.yaml:1:257: lists and mappings nested more "
                        "than 64 levels deep; tandem reads nothing that "
                        "deep, so flatten it");
    free(text);
}

/* ---- overriding the model from the command line ------------------------ */

static void override_rejects_bad_specs_and_changes_nothing(void **state)
{
    static const struct {
        const char *spec, *base_url, *error;
    } cases[] = {
        {"gemini:pro", NULL,
         "--llm gemini:pro: unknown provider 'gemini' (known: replay, "
         "openai, anthropic, ollama, command)"},
        {"", NULL,
         "--llm : give PROVIDER:MODEL, e.g. openai:gpt-4o-mini (providers: "
         "replay, openai, anthropic, ollama, command)"},
        {"gpt-4o-mini", NULL,
         "--llm gpt-4o-mini: give PROVIDER:MODEL, e.g. openai:gpt-4o-mini "
         "(providers: replay, openai, anthropic, ollama, command)"},
        {":gpt-x", NULL,
         "--llm :gpt-x: unknown provider '' (known: replay, openai, "
         "anthropic, ollama, command)"},
        {"OpenAI:gpt-x", NULL,
         "--llm OpenAI:gpt-x: unknown provider 'OpenAI' (known: replay, "
         "openai, anthropic, ollama, command)"},
        {"openai:", NULL, "--llm openai:: the model after ':' is empty"},
        {"openai:gpt-x", "ftp://x/v1",
         "--base-url ftp://x/v1 must start with http:// or https://"},
        {NULL, "localhost:8080/v1",
         "--base-url localhost:8080/v1 must start with http:// or https://"},
    };
    tnd_config *cfg = tnd_config_defaults();

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
        assert_int_equal(
            tnd_config_override_llm(cfg, cases[i].spec, cases[i].base_url),
            TND_ECONFIG);
        assert_string_equal(tnd_error_last(), cases[i].error);
        assert_llm_defaults(&cfg->coder.llm);
        assert_llm_defaults(&cfg->reviewer.llm);
    }
    assert_int_equal(tnd_config_override_llm(cfg, NULL, NULL), 0);
    assert_llm_defaults(&cfg->coder.llm);
    tnd_config_destroy(&cfg);
}

/* ---- the llm check ----------------------------------------------------- */

/* One check, one wording, wherever an llm section is checked: the key to
 * set, and with files, whether the cassette is there. */
static void the_llm_check_names_the_key_to_set(void **state)
{
    tnd_config *cfg = tnd_config_defaults();
    tnd_llm_config *llm = &cfg->coder.llm;
    char path[PATH_MAX], expect[2 * PATH_MAX];

    (void)state;
    assert_int_equal(tnd_llm_config_check(llm, "agents.coder.llm", true), 0);
    assert_int_equal(tnd_config_check_llms(cfg, true), 0);

    llm->provider = TND_PROVIDER_REPLAY;
    assert_int_equal(tnd_llm_config_check(llm, "agents.coder.llm", false),
                     TND_ECONFIG);
    assert_string_equal(tnd_error_last(),
                        "agents.coder.llm: provider replay needs a cassette "
                        "(set agents.coder.llm.cassette to the file of "
                        "recorded answers)");
    snprintf(path, sizeof(path), "%s/no-such-cassette.json", tmpdir);
    free(llm->cassette);
    llm->cassette = strdup(path);
    /* the loader does not look at files; a run and doctor do */
    assert_int_equal(tnd_llm_config_check(llm, "agents.coder.llm", false), 0);
    assert_int_equal(tnd_llm_config_check(llm, "agents.coder.llm", true),
                     TND_ECONFIG);
    snprintf(expect, sizeof(expect),
             "agents.coder.llm.cassette: %s does not exist", path);
    assert_string_equal(tnd_error_last(), expect);
    free(llm->cassette);
    llm->cassette = strdup(tmpdir);
    assert_int_equal(tnd_llm_config_check(llm, "agents.coder.llm", true),
                     TND_ECONFIG);
    assert_non_null(strstr(tnd_error_last(), "agents.coder.llm.cassette: "));
    assert_non_null(strstr(tnd_error_last(), "not a regular file"));
    snprintf(path, sizeof(path), "%s/cassette.json", tmpdir);
    assert_int_equal(tnd_fs_write(path, "{}", 2), 0);
    free(llm->cassette);
    llm->cassette = strdup(path);
    assert_int_equal(tnd_llm_config_check(llm, "agents.coder.llm", true), 0);
    unlink(path);

    llm->provider = TND_PROVIDER_COMMAND;
    assert_int_equal(tnd_llm_config_check(llm, "llm", true), TND_ECONFIG);
    assert_string_equal(tnd_error_last(),
                        "llm: provider command needs a command (set "
                        "llm.command to the program that reads the prompt on "
                        "stdin and writes the answer on stdout: a list "
                        "[program, arg, ...] or a shell string)");
    tnd_config_destroy(&cfg);

    /* every model of the config, each named by its place */
    cfg = parse_ok("agents:\n  reviewer:\n    count: 2\n"
                   "    models: [{provider: openai}, {provider: ollama}]\n");
    assert_int_equal(tnd_config_check_llms(cfg, true), 0);
    cfg->reviewer.models[1].provider = TND_PROVIDER_REPLAY;
    assert_int_equal(tnd_config_check_llms(cfg, true), TND_ECONFIG);
    assert_string_equal(tnd_error_last(),
                        "agents.reviewer.models[1]: provider replay needs a "
                        "cassette (set agents.reviewer.models[1].cassette to "
                        "the file of recorded answers)");
    /* --llm can make a provider that lacks what it needs */
    assert_int_equal(tnd_config_override_llm(cfg, "command", NULL), 0);
    assert_int_equal(tnd_config_check_llms(cfg, false), TND_ECONFIG);
    assert_non_null(
        strstr(tnd_error_last(), "agents.coder.llm: provider command needs"));
    tnd_config_destroy(&cfg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(load_names_the_file_in_every_error),
        cmocka_unit_test(load_of_a_missing_file_says_which),
        cmocka_unit_test(load_refuses_what_is_not_a_regular_file),
        cmocka_unit_test(load_refuses_a_file_over_a_megabyte),
        cmocka_unit_test(every_error_names_file_line_and_column),
        cmocka_unit_test(several_errors_are_all_reported_one_per_line),
        cmocka_unit_test(a_line_break_in_a_value_keeps_one_problem_per_line),
        cmocka_unit_test(errors_are_capped),
        cmocka_unit_test(alias_bomb_is_cheap),
        cmocka_unit_test(aliases_cannot_multiply_a_list),
        cmocka_unit_test(at_most_32_reviewer_skills),
        cmocka_unit_test(deep_nesting_is_refused_at_its_place),
        cmocka_unit_test(override_rejects_bad_specs_and_changes_nothing),
        cmocka_unit_test(the_llm_check_names_the_key_to_set),
    };
    return cmocka_run_group_tests(tests, config_setup, config_teardown);
}
