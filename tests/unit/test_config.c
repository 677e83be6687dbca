/* Unit tests for common/config: loading and checking agents.yaml.
 *
 * Most cases parse from memory with tnd_config_parse, named "agents.yaml"
 * and based in /base, and compare the whole error text, so every
 * "FILE:LINE:COL: message" is checked down to the column. */
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

#include "agents/llm.h"
#include "common/buf.h"
#include "common/clock.h"
#include "common/config.h"
#include "common/sha256.h"
#include "common/fs.h"
#include "common/str.h"
#include "proto/body.h"

static char tmpdir[] = "/tmp/tnd-test-config-XXXXXX";

/* text parsed as agents.yaml in /base; must succeed. */
static tnd_config *parse_ok(const char *text)
{
    tnd_config *cfg = (tnd_config *)1;
    int rc = tnd_config_parse(&cfg, text, strlen(text), "agents.yaml", "/base");

    if (rc != 0)
        fail_msg("unexpected error: %s", tnd_error_last());
    assert_non_null(cfg);
    return cfg;
}

/* text parsed as agents.yaml; must fail. The message, borrowed. */
static const char *parse_err(const char *text)
{
    tnd_config *cfg = (tnd_config *)1;

    assert_int_equal(
        tnd_config_parse(&cfg, text, strlen(text), "agents.yaml", "/base"),
        TND_ECONFIG);
    assert_null(cfg);
    return tnd_error_last();
}

static size_t count_lines(const char *s)
{
    size_t n = *s ? 1 : 0;

    for (; *s; s++)
        n += *s == '\n';
    return n;
}

static void assert_argv(char **argv, const char *const *expected)
{
    size_t i;

    assert_non_null(argv);
    for (i = 0; expected[i]; i++) {
        assert_non_null(argv[i]);
        assert_string_equal(argv[i], expected[i]);
    }
    assert_null(argv[i]);
}

#define ARGV(...) ((const char *const[]){__VA_ARGS__, NULL})

static void assert_llm_defaults(const tnd_llm_config *llm)
{
    assert_string_equal(tnd_provider_name(llm->provider), "openai");
    assert_string_equal(llm->model, "gpt-4o-mini");
    /* empty: the provider's own, resolved when used */
    assert_string_equal(llm->base_url, "");
    assert_string_equal(llm->api_key_env, "");
    assert_string_equal(tnd_llm_base_url(llm), "https://api.openai.com/v1");
    assert_string_equal(tnd_llm_key_env(llm), "OPENAI_API_KEY");
    assert_true(llm->stream);
    assert_null(llm->headers[0]);
    assert_null(llm->command.argv);
    assert_string_equal(llm->cassette, "");
    assert_true(llm->temperature == 0.2);
    assert_int_equal(llm->max_tokens, 4096);
    assert_int_equal(llm->timeout_s, 300);
    assert_int_equal(llm->max_retries, 3);
}

static void assert_defaults(const tnd_config *cfg)
{
    assert_true(cfg->gate.confidence_threshold == 0.8);
    assert_true(cfg->gate.human_review_below == 0.7);
    assert_int_equal(cfg->gate.max_iterations, 3);
    assert_int_equal(cfg->gate.persistent_failure_threshold, 2);
    assert_string_equal(cfg->orchestrator.endpoint, "");
    assert_int_equal(cfg->orchestrator.heartbeat_ms, 1000);
    assert_int_equal(cfg->orchestrator.liveness, 5);
    assert_int_equal(cfg->orchestrator.request_timeout_s,
                     0); /* follow the work */
    assert_int_equal(cfg->orchestrator.workspace_max_bytes, 1024 << 20);
    assert_true(cfg->gate.baseline);
    assert_int_equal(cfg->gate.baseline_reuse_s, 600);
    assert_false(cfg->workspace.include_untracked);
    assert_false(cfg->workspace.incremental);

    assert_int_equal(cfg->coder.count, 1);
    assert_int_equal(cfg->coder.threads, 8);
    assert_int_equal(cfg->reviewer.threads, 8);
    assert_int_equal(cfg->reviewer.skills_at_once, 0); /* one per CPU */
    assert_null(cfg->coder.program.argv);
    assert_null(cfg->coder.skills[0]);
    assert_int_equal(cfg->coder.context_max_bytes, 128 * 1024);
    assert_int_equal(cfg->coder.map_max_tokens, 2048);
    assert_llm_defaults(&cfg->coder.llm);
    assert_int_equal(cfg->reviewer.count, 1);
    assert_null(cfg->reviewer.program.argv);
    assert_argv(cfg->reviewer.skills, ARGV("build", "test"));
    assert_llm_defaults(&cfg->reviewer.llm);

    assert_int_equal(cfg->nskills, 2);
    assert_string_equal(cfg->skills[0].name, "build");
    assert_argv(cfg->skills[0].command.argv, ARGV("make"));
    assert_string_equal(cfg->skills[0].command.display, "make");
    assert_true(cfg->skills[0].required);
    assert_int_equal(cfg->skills[0].timeout_s, 600);
    assert_int_equal(cfg->skills[0].output_cap, 64 * 1024);
    assert_string_equal(cfg->skills[1].name, "test");
    assert_argv(cfg->skills[1].command.argv, ARGV("make", "test"));
    for (size_t i = 0; i < 2; i++) {
        const tnd_skill_config *s = &cfg->skills[i];
        assert_string_equal(s->builtin, "");
        assert_null(s->paths[0]);
        assert_null(s->after); /* after every skill listed before it */
        assert_int_equal(s->limits.cpu_s, 3600);
        assert_int_equal(s->limits.memory_bytes, (size_t)8192 << 20);
        assert_int_equal(s->limits.file_bytes, (size_t)1024 << 20);
        assert_int_equal(s->limits.disk_bytes, (size_t)4096 << 20);
        assert_int_equal(s->limits.processes, 512);
        assert_int_equal(s->sandbox, TND_SANDBOX_BWRAP);
        assert_false(s->network);
        assert_null(s->forbid[0]);
        assert_int_equal(s->max_changed_lines, 0);
        assert_int_equal(s->max_file_bytes, 1024 * 1024);
        assert_null(s->public_paths[0]);
        assert_null(s->docs_paths[0]);
    }
}

/* ---- defaults and a full file ----------------------------------------- */

static void defaults_are_the_documented_values(void **state)
{
    tnd_config *cfg = tnd_config_defaults();

    (void)state;
    assert_null(cfg->path);
    assert_string_equal(cfg->dir, ".");
    assert_defaults(cfg);
    tnd_config_destroy(&cfg);
    assert_null(cfg);
    tnd_config_destroy(&cfg); /* NULL is fine */
    tnd_config_destroy(NULL);
}

static void empty_file_gives_the_defaults(void **state)
{
    static const char *const empties[] = {
        "", "\n", "# only a comment\n", "---\n", "~\n", "---\n...\n",
    };

    (void)state;
    for (size_t i = 0; i < sizeof(empties) / sizeof(*empties); i++) {
        tnd_config *cfg = parse_ok(empties[i]);
        assert_null(cfg->path);
        assert_string_equal(cfg->dir, "/base");
        assert_defaults(cfg);
        tnd_config_destroy(&cfg);
    }
}

static const char full_file[] =
    "# every key, none at its default\n"
    "version: 1\n"
    "gate:\n"
    "  max_iterations: 7\n"
    "  confidence_threshold: 0.9\n"
    "  human_review_below: 0.55\n"
    "  persistent_failure_threshold: 4\n"
    "  baseline: false\n"
    "  baseline_reuse_s: 0\n"
    "workspace:\n"
    "  include_untracked: true\n"
    "  incremental: true\n"
    "orchestrator:\n"
    "  endpoint: tcp://127.0.0.1:5555\n"
    "  heartbeat_ms: 250\n"
    "  liveness: 3\n"
    "  request_timeout_s: 600\n"
    "  workspace_max_mb: 16\n"
    "agents:\n"
    "  coder:\n"
    "    count: 2\n"
    "    command: ./my-coder --verbose\n"
    "    context_max_kb: 256\n"
    "    map_max_tokens: 512\n"
    "    skills: [lint]\n"
    "    llm:\n"
    "      provider: openai\n"
    "      model: gpt-x\n"
    "      base_url: http://localhost:8080/v1\n"
    "      api_key_env: MY_KEY\n"
    "      temperature: 0\n"
    "      max_tokens: 1000\n"
    "      timeout_s: 60\n"
    "      max_retries: 0\n"
    "  reviewer:\n"
    "    count: 0\n"
    "    command: [/usr/bin/env, tandem-reviewer, --fast]\n"
    "    context_max_kb: 1\n"
    "    skills:\n"
    "      - unit\n"
    "      - lint\n"
    "    llm:\n"
    "      provider: replay\n"
    "      cassette: tapes/review.json\n"
    "      temperature: 1.5\n"
    "skills:\n"
    "  lint:\n"
    "    command: [clang-tidy, \"src/a b.c\"]\n"
    "    required: false\n"
    "    timeout_s: 30\n"
    "    output_max_kb: 8\n"
    "  unit:\n"
    "    command: make check\n";

static void full_file_sets_every_field(void **state)
{
    tnd_config *cfg = parse_ok(full_file);
    const tnd_llm_config *c = &cfg->coder.llm, *r = &cfg->reviewer.llm;

    (void)state;
    assert_string_equal(cfg->dir, "/base");
    assert_int_equal(cfg->gate.max_iterations, 7);
    assert_true(cfg->gate.confidence_threshold == 0.9);
    assert_true(cfg->gate.human_review_below == 0.55);
    assert_int_equal(cfg->gate.persistent_failure_threshold, 4);
    assert_false(cfg->gate.baseline);
    assert_int_equal(cfg->gate.baseline_reuse_s, 0);
    assert_true(cfg->workspace.include_untracked);
    assert_true(cfg->workspace.incremental);

    assert_string_equal(cfg->orchestrator.endpoint, "tcp://127.0.0.1:5555");
    assert_int_equal(cfg->orchestrator.heartbeat_ms, 250);
    assert_int_equal(cfg->orchestrator.liveness, 3);
    assert_int_equal(cfg->orchestrator.request_timeout_s, 600);
    assert_int_equal(cfg->orchestrator.workspace_max_bytes, 16 << 20);

    assert_int_equal(cfg->coder.count, 2);
    /* beside the file, as a cassette is */
    assert_argv(cfg->coder.program.argv, ARGV("/base/./my-coder", "--verbose"));
    assert_string_equal(cfg->coder.program.display, "./my-coder --verbose");
    assert_int_equal(cfg->coder.context_max_bytes, 256 * 1024);
    assert_int_equal(cfg->coder.map_max_tokens, 512);
    assert_argv(cfg->coder.skills, ARGV("lint"));
    assert_string_equal(tnd_provider_name(c->provider), "openai");
    assert_string_equal(c->model, "gpt-x");
    assert_string_equal(c->base_url, "http://localhost:8080/v1");
    assert_string_equal(c->api_key_env, "MY_KEY");
    assert_string_equal(c->cassette, "");
    assert_true(c->temperature == 0.0);
    assert_int_equal(c->max_tokens, 1000);
    assert_int_equal(c->timeout_s, 60);
    assert_int_equal(c->max_retries, 0);

    /* the reviewer's llm keeps the defaults it does not set */
    assert_int_equal(cfg->reviewer.count, 0);
    assert_argv(cfg->reviewer.program.argv,
                ARGV("/usr/bin/env", "tandem-reviewer", "--fast"));
    assert_string_equal(cfg->reviewer.program.display,
                        "/usr/bin/env tandem-reviewer --fast");
    assert_int_equal(cfg->reviewer.context_max_bytes, 1024);
    assert_argv(cfg->reviewer.skills, ARGV("unit", "lint"));
    assert_string_equal(tnd_provider_name(r->provider), "replay");
    assert_string_equal(r->cassette, "/base/tapes/review.json");
    assert_true(r->temperature == 1.5);
    assert_string_equal(r->model, "gpt-4o-mini");
    assert_int_equal(r->max_tokens, 4096);

    /* skills replace the default set, in file order */
    assert_int_equal(cfg->nskills, 2);
    assert_string_equal(cfg->skills[0].name, "lint");
    assert_argv(cfg->skills[0].command.argv, ARGV("clang-tidy", "src/a b.c"));
    assert_string_equal(cfg->skills[0].command.display, "clang-tidy src/a b.c");
    assert_false(cfg->skills[0].required);
    assert_int_equal(cfg->skills[0].timeout_s, 30);
    assert_int_equal(cfg->skills[0].output_cap, 8 * 1024);
    assert_string_equal(cfg->skills[1].name, "unit");
    assert_argv(cfg->skills[1].command.argv, ARGV("make", "check"));
    assert_true(cfg->skills[1].required);
    assert_int_equal(cfg->skills[1].timeout_s, 600);
    assert_int_equal(cfg->skills[1].output_cap, 64 * 1024);
    tnd_config_destroy(&cfg);
}

static void values_at_the_ends_of_their_ranges_are_accepted(void **state)
{
    tnd_config *cfg = parse_ok("gate:\n"
                               "  max_iterations: 50\n"
                               "  confidence_threshold: 1\n"
                               "  human_review_below: 0\n"
                               "orchestrator:\n"
                               "  heartbeat_ms: 50\n"
                               "  request_timeout_s: \"604800\"\n"
                               "agents:\n"
                               "  coder: {count: 16, context_max_kb: 16384}\n"
                               "  reviewer:\n"
                               "    llm: {temperature: 2.0, max_retries: 20}\n"
                               "skills:\n"
                               "  x_1-Y:\n"
                               "    command: true\n"
                               "    required: yes\n"
                               "    output_max_kb: 1024\n"
                               "  build: {command: make, required: off}\n"
                               "  test: {command: make test, required: on}\n");

    (void)state;
    assert_int_equal(cfg->gate.max_iterations, 50);
    assert_true(cfg->gate.confidence_threshold == 1.0);
    assert_true(cfg->gate.human_review_below == 0.0);
    assert_int_equal(cfg->orchestrator.heartbeat_ms, 50);
    assert_int_equal(cfg->orchestrator.request_timeout_s, 604800);
    assert_int_equal(cfg->coder.count, 16);
    assert_int_equal(cfg->coder.context_max_bytes, 16384 * 1024);
    assert_true(cfg->reviewer.llm.temperature == 2.0);
    assert_int_equal(cfg->reviewer.llm.max_retries, 20);
    assert_true(tnd_config_skill(cfg, "x_1-Y")->required);
    assert_int_equal(tnd_config_skill(cfg, "x_1-Y")->output_cap, 1024 * 1024);
    assert_false(tnd_config_skill(cfg, "build")->required);
    assert_true(tnd_config_skill(cfg, "test")->required);
    tnd_config_destroy(&cfg);
}

static void null_values_keep_defaults_or_empty_lists(void **state)
{
    tnd_config *cfg = parse_ok("gate:\n"
                               "agents:\n"
                               "  reviewer:\n"
                               "    skills: ~\n"
                               "    llm:\n"
                               "skills: null\n");

    (void)state;
    assert_int_equal(cfg->gate.max_iterations, 3);
    assert_null(cfg->reviewer.skills[0]);
    assert_int_equal(cfg->nskills, 0);
    assert_null(tnd_config_skill(cfg, "build"));
    assert_llm_defaults(&cfg->reviewer.llm);
    tnd_config_destroy(&cfg);
}

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

/* ---- paths --------------------------------------------------------------- */

static void relative_cassette_is_resolved_against_the_file(void **state)
{
    static const struct {
        const char *cassette, *expected;
    } cases[] = {
        {"tape.json", "/base/tape.json"},
        {"sub/dir/tape.json", "/base/sub/dir/tape.json"},
        {"../shared/tape.json", "/base/../shared/tape.json"},
        {"/abs/tape.json", "/abs/tape.json"},
        {"\"\"", ""},
    };
    char text[256];

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
        tnd_config *cfg;
        snprintf(text, sizeof(text),
                 "agents:\n  coder:\n    llm:\n      cassette: %s\n",
                 cases[i].cassette);
        cfg = parse_ok(text);
        assert_string_equal(cfg->coder.llm.cassette, cases[i].expected);
        assert_string_equal(cfg->reviewer.llm.cassette, "");
        tnd_config_destroy(&cfg);
    }
}

static void relative_model_cassette_is_resolved_against_the_file(void **state)
{
    static const struct {
        const char *cassette, *expected;
    } cases[] = {
        {"tape.json", "/base/tape.json"},
        {"sub/dir/tape.json", "/base/sub/dir/tape.json"},
        {"../shared/tape.json", "/base/../shared/tape.json"},
        {"/abs/tape.json", "/abs/tape.json"},
    };
    char text[256];

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
        tnd_config *cfg;
        snprintf(text, sizeof(text),
                 "agents:\n  reviewer:\n    count: 2\n    models:\n"
                 "      - {provider: openai, model: a}\n"
                 "      - {provider: replay, cassette: %s}\n",
                 cases[i].cassette);
        cfg = parse_ok(text);
        assert_string_equal(cfg->reviewer.models[0].cassette, "");
        assert_string_equal(cfg->reviewer.models[1].cassette,
                            cases[i].expected);
        assert_string_equal(cfg->reviewer.llm.cassette, "");
        tnd_config_destroy(&cfg);
    }
}

/* A model program named by a relative path is beside the file, as the
 * file's header says (it ran from the config's directory and failed
 * from any other); a bare name is looked up on PATH, a skill's command
 * is the workspace's. */
static void relative_model_programs_are_resolved_against_the_file(void **state)
{
    static const struct {
        const char *command, *expected;
    } cases[] = {
        {"[./answer.sh, x]", "/base/./answer.sh"},
        {"bin/model --fast", "/base/bin/model"},
        {"[cat, x]", "cat"},
        {"[/abs/model]", "/abs/model"},
    };
    char text[256];

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
        tnd_config *cfg;
        snprintf(text, sizeof(text),
                 "agents:\n  coder:\n    llm: {provider: command, "
                 "command: %s}\n",
                 cases[i].command);
        cfg = parse_ok(text);
        assert_string_equal(cfg->coder.llm.command.argv[0], cases[i].expected);
        tnd_config_destroy(&cfg);
    }
}

/* ---- the reviewer quorum and the critique ------------------------------- */

static void reviewer_models_give_each_member_its_own(void **state)
{
    tnd_config *cfg = parse_ok("agents:\n"
                               "  reviewer:\n"
                               "    count: 2\n"
                               "    quorum: majority\n"
                               "    llm: {provider: openai, model: base}\n"
                               "    models:\n"
                               "      - provider: replay\n"
                               "        cassette: tapes/one.json\n"
                               "      - provider: anthropic\n"
                               "        model: claude-x\n"
                               "        temperature: 0\n"
                               "        max_tokens: 1000\n");
    const tnd_llm_config *m;

    (void)state;
    assert_string_equal(tnd_quorum_rule_name(cfg->reviewer.quorum), "majority");
    assert_int_equal(cfg->reviewer.nmodels, 2);
    /* each member starts from the built-in defaults, not from llm */
    m = &cfg->reviewer.models[0];
    assert_string_equal(tnd_provider_name(m->provider), "replay");
    assert_string_equal(m->model, "gpt-4o-mini");
    assert_string_equal(m->cassette, "/base/tapes/one.json");
    assert_true(m->temperature == 0.2);
    m = &cfg->reviewer.models[1];
    assert_string_equal(tnd_provider_name(m->provider), "anthropic");
    assert_string_equal(m->model, "claude-x");
    assert_string_equal(m->cassette, "");
    assert_true(m->temperature == 0.0);
    assert_int_equal(m->max_tokens, 1000);
    assert_string_equal(tnd_llm_base_url(m), "https://api.anthropic.com");
    assert_string_equal(tnd_llm_key_env(m), "ANTHROPIC_API_KEY");

    /* member N uses models[N-1]; past the list, or 0, the reviewer's llm */
    assert_ptr_equal(tnd_config_member_llm(cfg, 1), &cfg->reviewer.models[0]);
    assert_ptr_equal(tnd_config_member_llm(cfg, 2), &cfg->reviewer.models[1]);
    assert_ptr_equal(tnd_config_member_llm(cfg, 3), &cfg->reviewer.llm);
    assert_ptr_equal(tnd_config_member_llm(cfg, 0), &cfg->reviewer.llm);
    assert_string_equal(tnd_config_member_llm(cfg, 3)->model, "base");
    assert_int_equal(tnd_config_quorum(cfg), 2);
    tnd_config_destroy(&cfg);

    /* no models: every member is the reviewer's llm */
    cfg = tnd_config_defaults();
    assert_int_equal(cfg->reviewer.nmodels, 0);
    assert_string_equal(tnd_quorum_rule_name(cfg->reviewer.quorum), "all");
    assert_ptr_equal(tnd_config_member_llm(cfg, 1), &cfg->reviewer.llm);
    tnd_config_destroy(&cfg);
}

static void quorum_counts_reviewers(void **state)
{
    static const struct {
        const char *text;
        int quorum;
    } cases[] = {
        {"", 1},
        {"agents: {reviewer: {count: 1}}\n", 1},
        {"agents: {reviewer: {count: 2}}\n", 2},
        {"agents: {reviewer: {count: 16}}\n", 16},
        /* remote reviewers: the models make the quorum */
        {"agents: {reviewer: {count: 0}}\n", 1},
        {"agents: {reviewer: {count: 0, models: [{model: a}]}}\n", 1},
        {"agents: {reviewer: {count: 0, models: [{model: a}, {model: b}]}}\n",
         2},
        /* spawned reviewers: the count does, whatever the models */
        {"agents: {reviewer: {count: 4, models: [{model: a}, {model: b}]}}\n",
         4},
        {"agents: {reviewer: {count: 3, models: [{model: a}, {model: b}]}}\n",
         3},
        {"agents: {reviewer: {count: 2, models: []}}\n", 2},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
        tnd_config *cfg = parse_ok(cases[i].text);
        if (tnd_config_quorum(cfg) != cases[i].quorum)
            fail_msg("case %zu: %s: quorum %d, expected %d", i, cases[i].text,
                     tnd_config_quorum(cfg), cases[i].quorum);
        tnd_config_destroy(&cfg);
    }
}

static void critique_keys_are_read(void **state)
{
    tnd_config *cfg = tnd_config_defaults();

    (void)state;
    assert_string_equal(tnd_critique_mode_name(cfg->gate.critique), "always");
    assert_int_equal(cfg->gate.critique_diff_lines, 200);
    assert_int_equal(cfg->gate.critique_every, 0);
    assert_null(cfg->gate.risk_paths[0]);
    assert_true(tnd_str_list_has((const char *const *)cfg->gate.check_paths,
                                 "**/Makefile"));
    tnd_config_destroy(&cfg);

    cfg = parse_ok("gate: {check_paths: []}\n");
    assert_null(cfg->gate.check_paths[0]);
    tnd_config_destroy(&cfg);

    cfg = parse_ok("gate:\n"
                   "  critique: on_trigger\n"
                   "  critique_diff_lines: 0\n"
                   "  critique_every: 100000\n"
                   "  risk_paths: [\"src/auth/**\", \"*.pem\"]\n");
    assert_string_equal(tnd_critique_mode_name(cfg->gate.critique),
                        "on_trigger");
    assert_int_equal(cfg->gate.critique_diff_lines, 0);
    assert_int_equal(cfg->gate.critique_every, 100000);
    assert_argv(cfg->gate.risk_paths, ARGV("src/auth/**", "*.pem"));
    tnd_config_destroy(&cfg);

    cfg = parse_ok("gate: {critique: always, critique_diff_lines: 1000000}\n");
    assert_string_equal(tnd_critique_mode_name(cfg->gate.critique), "always");
    assert_int_equal(cfg->gate.critique_diff_lines, 1000000);
    tnd_config_destroy(&cfg);
}

/* A string command of plain words is run directly (no shell started per
 * skill); anything the shell would read otherwise stays with /bin/sh. */
static void plain_commands_skip_the_shell(void **state)
{
    static const char *const shelled[] = {
        "sleep 0.3; make", "FOO=1 make",    "cd sub && make", "echo $HOME",
        "make >log",       "ls *.c",        "exec make",      "make # comment",
        "~/bin/check",     "a | b",         ". ./env",        "export X=1",
        "echo \"$HOME\"",  "echo \"a\\b\"", "echo \"a`b`\"",  "echo 'open",
        "echo \"open",     "'make' all",    "FOO='a b' make", NULL};
    /* quotes the shell would only remove */
    static const struct {
        const char *line;
        const char *argv[5];
    } quoted[] = {
        {"grep -q 'value = 3' app.txt", {"grep", "-q", "value = 3", "app.txt"}},
        {"pytest -k \"a and not b\"", {"pytest", "-k", "a and not b"}},
        {"echo '' x", {"echo", "", "x"}},
        {"x a'b c'd \"e'f\"", {"x", "ab cd", "e'f"}},
        {"make 'a b'", {"make", "a b"}},
    };
    char text[256];
    tnd_config *cfg;

    (void)state;
    cfg = parse_ok("skills:\n"
                   "  build: {command: \"  make  -j2\tCFLAGS=-O2 all \"}\n"
                   "  test: {command: ./run-tests --fast, required: false}\n");
    assert_argv(cfg->skills[0].command.argv,
                ARGV("make", "-j2", "CFLAGS=-O2", "all"));
    assert_string_equal(cfg->skills[0].command.display,
                        "  make  -j2\tCFLAGS=-O2 all ");
    assert_argv(cfg->skills[1].command.argv, ARGV("./run-tests", "--fast"));
    tnd_config_destroy(&cfg);
    for (int i = 0; shelled[i]; i++) {
        snprintf(text, sizeof(text),
                 "skills:\n  build:\n    command: |-\n      %s\n"
                 "  test: {command: t}\n",
                 shelled[i]);
        cfg = parse_ok(text);
        /* a pipeline fails when any command in it does */
        assert_argv(cfg->skills[0].command.argv,
                    ARGV("/bin/bash", "-o", "pipefail", "-c", shelled[i]));
        tnd_config_destroy(&cfg);
    }
    for (size_t i = 0; i < sizeof(quoted) / sizeof(quoted[0]); i++) {
        const tnd_command *c;
        size_t k = 0;
        snprintf(text, sizeof(text),
                 "skills:\n  build:\n    command: |-\n      %s\n"
                 "  test: {command: t}\n",
                 quoted[i].line);
        cfg = parse_ok(text);
        c = &cfg->skills[0].command;
        for (; quoted[i].argv[k]; k++) {
            if (!c->argv[k])
                fail_msg("%s: no word %zu", quoted[i].line, k);
            assert_string_equal(c->argv[k], quoted[i].argv[k]);
        }
        assert_null(c->argv[k]);
        assert_string_equal(c->display, quoted[i].line);
        tnd_config_destroy(&cfg);
    }
}

static void load_reads_a_file_and_resolves_against_its_directory(void **state)
{
    char path[PATH_MAX], real[PATH_MAX], expect[PATH_MAX + 32];
    static const char text[] =
        "version: 1\n"
        "agents:\n"
        "  coder:\n"
        "    llm: {provider: replay, cassette: c.json}\n"
        "  reviewer:\n"
        "    llm: {provider: replay, cassette: c.json}\n";
    tnd_config *cfg = NULL;

    (void)state;
    snprintf(path, sizeof(path), "%s/agents.yaml", tmpdir);
    assert_int_equal(tnd_fs_write(path, text, strlen(text)), 0);
    assert_non_null(realpath(tmpdir, real));

    assert_int_equal(tnd_config_load(&cfg, path), 0);
    snprintf(expect, sizeof(expect), "%s/agents.yaml", real);
    assert_string_equal(cfg->path, expect);
    assert_string_equal(cfg->dir, real);
    snprintf(expect, sizeof(expect), "%s/c.json", real);
    assert_string_equal(cfg->coder.llm.cassette, expect);
    assert_string_equal(cfg->reviewer.llm.cassette, expect);
    /* the bytes it was read from, which a server compares (serve.c) */
    {
        char digest[TND_SHA256_HEX + 1];
        tnd_sha256_hex(digest, text, strlen(text));
        assert_string_equal(cfg->digest, digest);
    }
    tnd_config_destroy(&cfg);
    cfg = tnd_config_defaults();
    assert_string_equal(cfg->digest, "");
    tnd_config_destroy(&cfg);
    unlink(path);
}

/* A server's sessions use its parsed config while the file is unchanged
 * (orchestrator/prepare.c): any other bytes, or no file, are a change. */
static void unchanged_compares_the_bytes_it_was_loaded_from(void **state)
{
    char path[PATH_MAX];
    static const char text[] = "version: 1\ngate:\n  max_iterations: 4\n";
    tnd_config *cfg = NULL;

    (void)state;
    snprintf(path, sizeof(path), "%s/agents.yaml", tmpdir);
    assert_int_equal(tnd_fs_write(path, text, strlen(text)), 0);
    assert_int_equal(tnd_config_load(&cfg, path), 0);
    assert_true(tnd_config_unchanged(path, cfg->digest));
    /* the same settings in other bytes: changed all the same */
    assert_int_equal(
        tnd_fs_write(path, "version: 1\ngate:\n  max_iterations: 4\n#\n", 39),
        0);
    assert_false(tnd_config_unchanged(path, cfg->digest));
    assert_int_equal(tnd_fs_write(path, text, strlen(text)), 0);
    assert_true(tnd_config_unchanged(path, cfg->digest));
    unlink(path);
    assert_false(tnd_config_unchanged(path, cfg->digest));
    tnd_config_destroy(&cfg);
    /* the built-in defaults came from no file */
    cfg = tnd_config_defaults();
    assert_int_equal(tnd_fs_write(path, "", 0), 0);
    assert_false(tnd_config_unchanged(path, cfg->digest));
    tnd_config_destroy(&cfg);
    unlink(path);
}

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

typedef struct bad_case {
    const char *text;
    const char *error; /* the whole of tnd_error_last() */
} bad_case;

/* Appended where a case defines its own skills, which replace the
 * defaults that agents.reviewer.skills names. */
#define USES_LINT "agents: {reviewer: {skills: [lint]}}\n"

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
    {"skills:\n  lint:\n    command: x\n    retries: 2\n" USES_LINT,
     "agents.yaml:4:5: unknown key 'retries' in skills.lint (known keys: "
     "command, required, timeout_s, output_max_kb, builtin, paths, after, "
     "limits, sandbox, network, forbid, max_changed_lines, max_file_kb, "
     "public, docs)"},
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
    {"skills:\n  lint:\n    command: \"\"\n" USES_LINT,
     "agents.yaml:3:14: skills.lint.command must be a command: a string run "
     "by the shell, or a list [program, arg, ...]\n"
     "agents.yaml:3:5: skills.lint needs a command (for example: command: "
     "make test)"},
    {"skills: [build]\n",
     "agents.yaml:1:9: skills must be a mapping of skill names, got a list"},
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
    {"skills:\n  lint: {command: x, output_max_kb: 2048}\n" USES_LINT,
     "agents.yaml:2:37: skills.lint.output_max_kb must be an integer "
     "1..1024, got \"2048\""},
    /* booleans and choices */
    {"skills:\n  lint:\n    command: x\n    required: maybe\n" USES_LINT,
     "agents.yaml:4:15: skills.lint.required must be true or false, got "
     "\"maybe\""},
    {"skills:\n  lint:\n    command: x\n    required: [true]\n" USES_LINT,
     "agents.yaml:4:15: skills.lint.required must be true or false, got a "
     "list"},
    {"agents:\n  coder:\n    llm:\n      provider: gemini\n",
     "agents.yaml:4:17: agents.coder.llm.provider must be one of "
     "replay, openai, anthropic, ollama, command; got \"gemini\""},
    /* duplicates */
    {"gate:\n  max_iterations: 3\n  max_iterations: 4\n",
     "agents.yaml:3:3: duplicate key 'max_iterations' in gate"},
    {"gate: {}\ngate: {}\n",
     "agents.yaml:2:1: duplicate key 'gate' in the top level"},
    {"skills:\n  lint: {command: x}\n  lint: {command: y}\n" USES_LINT,
     "agents.yaml:3:3: duplicate key 'lint' in skills"},
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
    for (size_t i = 0; i < sizeof(bad_cases) / sizeof(*bad_cases); i++) {
        const char *got = parse_err(bad_cases[i].text);
        if (strcmp(got, bad_cases[i].error) != 0)
            fail_msg("case %zu:\n%s\nexpected:\n%s\ngot:\n%s", i,
                     bad_cases[i].text, bad_cases[i].error, got);
    }
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

/* ---- overriding the model from the command line ------------------------ */

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

/* The key variables the file names outlive --llm's change of provider,
 * which drops them from the llm sections: their values are secrets
 * still (a skill's environment had one) */
static void the_files_key_variables_outlive_an_override(void **state)
{
    tnd_config *cfg =
        parse_ok("agents:\n"
                 "  coder:\n"
                 "    llm: {provider: anthropic, model: m, api_key_env: "
                 "MY_CRED}\n"
                 "  reviewer:\n"
                 "    llm: {provider: anthropic, model: m, api_key_env: "
                 "MY_CRED}\n");

    (void)state;
    assert_argv(cfg->key_envs, ARGV("MY_CRED")); /* once */
    assert_int_equal(tnd_config_override_llm(cfg, "openai:gpt-x", NULL), 0);
    assert_argv(cfg->key_envs, ARGV("MY_CRED"));
    tnd_config_destroy(&cfg);
}

static void override_points_both_agents_at_a_model(void **state)
{
    tnd_config *cfg = tnd_config_defaults();

    (void)state;
    assert_int_equal(tnd_config_override_llm(cfg, "openai:gpt-x", NULL), 0);
    assert_string_equal(tnd_provider_name(cfg->coder.llm.provider), "openai");
    assert_string_equal(cfg->coder.llm.model, "gpt-x");
    assert_string_equal(cfg->reviewer.llm.model, "gpt-x");
    assert_string_equal(tnd_llm_base_url(&cfg->reviewer.llm),
                        "https://api.openai.com/v1");

    /* only the provider: the model stays */
    assert_int_equal(tnd_config_override_llm(cfg, "replay", NULL), 0);
    assert_string_equal(tnd_provider_name(cfg->coder.llm.provider), "replay");
    assert_string_equal(tnd_provider_name(cfg->reviewer.llm.provider),
                        "replay");
    assert_string_equal(cfg->coder.llm.model, "gpt-x");

    /* a model name may itself hold colons */
    assert_int_equal(tnd_config_override_llm(cfg, "openai:org:model:v2",
                                             "http://127.0.0.1:9/v1"),
                     0);
    assert_string_equal(tnd_provider_name(cfg->coder.llm.provider), "openai");
    assert_string_equal(cfg->coder.llm.model, "org:model:v2");
    assert_string_equal(cfg->coder.llm.base_url, "http://127.0.0.1:9/v1");
    assert_string_equal(cfg->reviewer.llm.base_url, "http://127.0.0.1:9/v1");

    /* only the base URL */
    assert_int_equal(
        tnd_config_override_llm(cfg, NULL, "https://llm.example/v1"), 0);
    assert_string_equal(tnd_provider_name(cfg->coder.llm.provider), "openai");
    assert_string_equal(cfg->reviewer.llm.base_url, "https://llm.example/v1");

    /* another provider drops the old one's URL and key variable */
    assert_int_equal(tnd_config_override_llm(cfg, "anthropic:claude-x", NULL),
                     0);
    assert_string_equal(tnd_provider_name(cfg->coder.llm.provider),
                        "anthropic");
    assert_string_equal(tnd_llm_base_url(&cfg->coder.llm),
                        "https://api.anthropic.com");
    assert_string_equal(tnd_llm_key_env(&cfg->coder.llm), "ANTHROPIC_API_KEY");
    assert_int_equal(tnd_config_override_llm(cfg, "ollama:qwen", NULL), 0);
    assert_string_equal(tnd_llm_base_url(&cfg->reviewer.llm),
                        "http://localhost:11434");
    assert_string_equal(tnd_llm_key_env(&cfg->reviewer.llm), "");
    tnd_config_destroy(&cfg);
}

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

static int setup(void **state)
{
    (void)state;
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    return rmdir(tmpdir);
}

/* The repository's agents.yaml documents every key with its default:
 * loading it must give exactly the built-in defaults. */
static void the_documented_file_is_the_defaults(void **state)
{
    tnd_config *file = NULL, *def = tnd_config_defaults();
    const tnd_llm_config *fl[2], *dl[2];

    (void)state;
    if (tnd_config_load(&file, "agents.yaml") != 0)
        fail_msg("agents.yaml: %s", tnd_error_last());
    assert_int_equal(file->gate.max_iterations, def->gate.max_iterations);
    assert_true(file->gate.confidence_threshold ==
                def->gate.confidence_threshold);
    assert_true(file->gate.human_review_below == def->gate.human_review_below);
    assert_int_equal(file->gate.persistent_failure_threshold,
                     def->gate.persistent_failure_threshold);
    assert_int_equal(file->gate.max_tokens, def->gate.max_tokens);
    assert_int_equal(file->gate.max_llm_calls, def->gate.max_llm_calls);
    assert_int_equal(file->gate.max_wall_s, def->gate.max_wall_s);
    assert_int_equal(file->gate.escalate, def->gate.escalate);
    assert_null(file->gate.risk_paths[0]);
    assert_int_equal(file->gate.critique, def->gate.critique);
    assert_int_equal(file->gate.critique_diff_lines,
                     def->gate.critique_diff_lines);
    assert_int_equal(file->gate.critique_every, def->gate.critique_every);
    assert_int_equal(file->gate.baseline_reuse_s, def->gate.baseline_reuse_s);
    assert_null(file->coder.context_include[0]);
    assert_int_equal(file->reviewer.quorum, def->reviewer.quorum);
    assert_int_equal(file->reviewer.nmodels, 0);
    assert_string_equal(file->orchestrator.endpoint,
                        def->orchestrator.endpoint);
    assert_int_equal(file->orchestrator.heartbeat_ms,
                     def->orchestrator.heartbeat_ms);
    assert_int_equal(file->orchestrator.liveness, def->orchestrator.liveness);
    assert_int_equal(file->orchestrator.request_timeout_s,
                     def->orchestrator.request_timeout_s);
    assert_int_equal(file->orchestrator.workspace_max_bytes,
                     def->orchestrator.workspace_max_bytes);
    assert_int_equal(file->coder.count, def->coder.count);
    assert_int_equal(file->reviewer.count, def->reviewer.count);
    assert_int_equal(file->coder.threads, def->coder.threads);
    assert_int_equal(file->reviewer.threads, def->reviewer.threads);
    assert_int_equal(file->coder.context_max_bytes,
                     def->coder.context_max_bytes);
    assert_int_equal(file->coder.map_max_tokens, def->coder.map_max_tokens);
    fl[0] = &file->coder.llm;
    fl[1] = &file->reviewer.llm;
    dl[0] = &def->coder.llm;
    dl[1] = &def->reviewer.llm;
    for (int i = 0; i < 2; i++) {
        assert_int_equal(fl[i]->provider, dl[i]->provider);
        assert_string_equal(fl[i]->model, dl[i]->model);
        assert_string_equal(fl[i]->base_url, dl[i]->base_url);
        assert_string_equal(fl[i]->api_key_env, dl[i]->api_key_env);
        assert_string_equal(fl[i]->cassette, dl[i]->cassette);
        assert_null(fl[i]->headers[0]);
        assert_int_equal(fl[i]->stream, dl[i]->stream);
        assert_true(fl[i]->temperature == dl[i]->temperature);
        assert_int_equal(fl[i]->max_tokens, dl[i]->max_tokens);
        assert_int_equal(fl[i]->timeout_s, dl[i]->timeout_s);
        assert_int_equal(fl[i]->max_retries, dl[i]->max_retries);
    }
    assert_string_equal(file->reviewer.skills[0], "build");
    assert_string_equal(file->reviewer.skills[1], "test");
    assert_null(file->reviewer.skills[2]);
    assert_int_equal(file->nskills, def->nskills);
    for (size_t i = 0; i < def->nskills; i++) {
        assert_string_equal(file->skills[i].name, def->skills[i].name);
        assert_string_equal(file->skills[i].command.display,
                            def->skills[i].command.display);
        assert_int_equal(file->skills[i].required, def->skills[i].required);
        assert_int_equal(file->skills[i].timeout_s, def->skills[i].timeout_s);
        assert_int_equal(file->skills[i].output_cap, def->skills[i].output_cap);
        assert_string_equal(file->skills[i].builtin, def->skills[i].builtin);
        assert_null(file->skills[i].paths[0]);
        assert_null(file->skills[i].after);
        assert_memory_equal(&file->skills[i].limits, &def->skills[i].limits,
                            sizeof(def->skills[i].limits));
        assert_int_equal(file->skills[i].sandbox, def->skills[i].sandbox);
        assert_int_equal(file->skills[i].network, def->skills[i].network);
        assert_null(file->skills[i].forbid[0]);
        assert_int_equal(file->skills[i].max_changed_lines,
                         def->skills[i].max_changed_lines);
        assert_int_equal(file->skills[i].max_file_bytes,
                         def->skills[i].max_file_bytes);
    }
    tnd_config_destroy(&file);
    tnd_config_destroy(&def);
}

/* ---- the choices and the llm check ----------------------------------- */

/* Each choice is read once, into its enum; every name maps to its own
 * value and back. */
static void every_choice_is_read_into_its_enum(void **state)
{
    static const struct {
        const char *name;
        tnd_provider value;
    } providers[] = {
        {"replay", TND_PROVIDER_REPLAY},       {"openai", TND_PROVIDER_OPENAI},
        {"anthropic", TND_PROVIDER_ANTHROPIC}, {"ollama", TND_PROVIDER_OLLAMA},
        {"command", TND_PROVIDER_COMMAND},
    };
    static const struct {
        const char *key, *name;
        int value;
    } choices[] = {
        {"escalate", "auto", TND_ESCALATE_AUTO},
        {"escalate", "tty", TND_ESCALATE_TTY},
        {"escalate", "queue", TND_ESCALATE_QUEUE},
        {"escalate", "never", TND_ESCALATE_NEVER},
        {"critique", "always", TND_CRITIQUE_ALWAYS},
        {"critique", "on_trigger", TND_CRITIQUE_ON_TRIGGER},
        {"quorum", "all", TND_QUORUM_ALL},
        {"quorum", "majority", TND_QUORUM_MAJORITY},
    };
    tnd_buf names;

    (void)state;
    tnd_buf_init(&names, 1024);
    for (size_t i = 0; i < sizeof(providers) / sizeof(providers[0]); i++) {
        char text[256];
        tnd_config *cfg;
        tnd_provider p = TND_PROVIDER_OPENAI;
        snprintf(text, sizeof(text),
                 "agents:\n  coder:\n    llm: {provider: %s, cassette: c, "
                 "command: x}\n",
                 providers[i].name);
        cfg = parse_ok(text);
        assert_int_equal(cfg->coder.llm.provider, providers[i].value);
        tnd_config_destroy(&cfg);
        assert_string_equal(tnd_provider_name(providers[i].value),
                            providers[i].name);
        assert_int_equal(tnd_provider_parse(&p, providers[i].name), 0);
        assert_int_equal(p, providers[i].value);
        tnd_buf_printf(&names, "%s%s", i ? ", " : "", providers[i].name);
    }
    /* the list messages show is the same */
    assert_string_equal(tnd_buf_str(&names), TND_PROVIDERS);
    tnd_buf_free(&names);
    for (size_t i = 0; i < sizeof(choices) / sizeof(choices[0]); i++) {
        char text[256];
        tnd_config *cfg;
        if (strcmp(choices[i].key, "quorum") == 0)
            snprintf(text, sizeof(text), "agents:\n  reviewer: {quorum: %s}\n",
                     choices[i].name);
        else
            snprintf(text, sizeof(text), "gate: {%s: %s}\n", choices[i].key,
                     choices[i].name);
        cfg = parse_ok(text);
        if (strcmp(choices[i].key, "escalate") == 0) {
            assert_int_equal(cfg->gate.escalate, choices[i].value);
            assert_string_equal(tnd_escalate_mode_name(cfg->gate.escalate),
                                choices[i].name);
        } else if (strcmp(choices[i].key, "critique") == 0) {
            assert_int_equal(cfg->gate.critique, choices[i].value);
            assert_string_equal(tnd_critique_mode_name(cfg->gate.critique),
                                choices[i].name);
        } else {
            assert_int_equal(cfg->reviewer.quorum, choices[i].value);
            assert_string_equal(tnd_quorum_rule_name(cfg->reviewer.quorum),
                                choices[i].name);
        }
        tnd_config_destroy(&cfg);
    }
    assert_string_equal(tnd_provider_name((tnd_provider)99), "?");
    assert_string_equal(parse_err("gate: {escalate: ask}\n"),
                        "agents.yaml:1:18: gate.escalate must be one of auto, "
                        "tty, queue, never; got \"ask\"");
    assert_string_equal(parse_err("gate: {escalate: [tty]}\n"),
                        "agents.yaml:1:18: gate.escalate must be a string, "
                        "got a list");
}

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
        cmocka_unit_test(defaults_are_the_documented_values),
        cmocka_unit_test(plain_commands_skip_the_shell),
        cmocka_unit_test(the_documented_file_is_the_defaults),
        cmocka_unit_test(empty_file_gives_the_defaults),
        cmocka_unit_test(full_file_sets_every_field),
        cmocka_unit_test(values_at_the_ends_of_their_ranges_are_accepted),
        cmocka_unit_test(null_values_keep_defaults_or_empty_lists),
        cmocka_unit_test(skill_lookup_finds_by_exact_name),
        cmocka_unit_test(skill_keys_paths_after_limits_and_builtins),
        cmocka_unit_test(relative_cassette_is_resolved_against_the_file),
        cmocka_unit_test(relative_model_cassette_is_resolved_against_the_file),
        cmocka_unit_test(relative_model_programs_are_resolved_against_the_file),
        cmocka_unit_test(reviewer_models_give_each_member_its_own),
        cmocka_unit_test(quorum_counts_reviewers),
        cmocka_unit_test(critique_keys_are_read),
        cmocka_unit_test(load_reads_a_file_and_resolves_against_its_directory),
        cmocka_unit_test(unchanged_compares_the_bytes_it_was_loaded_from),
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
        cmocka_unit_test(unknown_after_names_stop_with_the_report),
        cmocka_unit_test(deep_nesting_is_refused_at_its_place),
        cmocka_unit_test(override_points_both_agents_at_a_model),
        cmocka_unit_test(the_files_key_variables_outlive_an_override),
        cmocka_unit_test(override_rejects_bad_specs_and_changes_nothing),
        cmocka_unit_test(every_choice_is_read_into_its_enum),
        cmocka_unit_test(the_llm_check_names_the_key_to_set),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
