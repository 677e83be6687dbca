/* Unit tests for common/config: what agents.yaml sets. The defaults (and
 * the repository's agents.yaml, which documents them), every key read,
 * paths resolved against the file, the reviewer quorum, the choices,
 * a file loaded and compared with the bytes it came from, and --llm's
 * overrides.
 *
 * Most cases parse from memory (config_text.h). What a config is refused
 * for is in test_config_check.c, the skills section in
 * test_config_skills.c, commands in test_config_command.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agents/llm.h"
#include "common/buf.h"
#include "common/config.h"
#include "common/fs.h"
#include "common/sha256.h"
#include "common/str.h"
#include "tests/unit/config_text.h"

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

/* ---- a file ------------------------------------------------------------ */

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

/* ---- overriding the model from the command line ------------------------ */

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

/* ---- the choices ------------------------------------------------------- */

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(defaults_are_the_documented_values),
        cmocka_unit_test(the_documented_file_is_the_defaults),
        cmocka_unit_test(empty_file_gives_the_defaults),
        cmocka_unit_test(full_file_sets_every_field),
        cmocka_unit_test(values_at_the_ends_of_their_ranges_are_accepted),
        cmocka_unit_test(null_values_keep_defaults_or_empty_lists),
        cmocka_unit_test(relative_cassette_is_resolved_against_the_file),
        cmocka_unit_test(relative_model_cassette_is_resolved_against_the_file),
        cmocka_unit_test(reviewer_models_give_each_member_its_own),
        cmocka_unit_test(quorum_counts_reviewers),
        cmocka_unit_test(critique_keys_are_read),
        cmocka_unit_test(load_reads_a_file_and_resolves_against_its_directory),
        cmocka_unit_test(unchanged_compares_the_bytes_it_was_loaded_from),
        cmocka_unit_test(override_points_both_agents_at_a_model),
        cmocka_unit_test(the_files_key_variables_outlive_an_override),
        cmocka_unit_test(every_choice_is_read_into_its_enum),
    };
    return cmocka_run_group_tests(tests, config_setup, config_teardown);
}
