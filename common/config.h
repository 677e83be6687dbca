/* tnd_config - agents.yaml: what tandem runs, with which models and tools.
 *
 * The orchestrator and both agents read the same file. Loading checks
 * every key against the schema below and reports each problem as
 * "FILE:LINE:COL: message" (all of them, not just the first), so a typo
 * costs one edit, not one run per typo. See the repository's agents.yaml
 * for the documented defaults. */
#ifndef TND_CONFIG_H
#define TND_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include "common/error.h"
#include "common/names.h"

/* LLM providers an agent can use, as agents.yaml and --llm name them
 * (the same list as tnd_provider's names, for messages). */
#define TND_PROVIDERS "replay, openai, anthropic, ollama, command"

/* The choices of agents.yaml. Each is parsed once, when the config loads
 * (or --llm names a provider); the names are the text agents.yaml, the
 * journal and messages use. */

/* Which API an agent's model is behind (llm.provider). */
typedef enum tnd_provider {
    TND_PROVIDER_REPLAY,    /* answers recorded in a cassette */
    TND_PROVIDER_OPENAI,    /* OpenAI's chat completions, or compatible */
    TND_PROVIDER_ANTHROPIC, /* Anthropic's messages */
    TND_PROVIDER_OLLAMA,    /* a local Ollama server */
    TND_PROVIDER_COMMAND,   /* a program of the user's */
} tnd_provider;

/* Who answers an escalation (gate.escalate). */
typedef enum tnd_escalate_mode {
    TND_ESCALATE_AUTO,  /* tty when stdin is a terminal, else queue */
    TND_ESCALATE_TTY,   /* a person on the terminal */
    TND_ESCALATE_QUEUE, /* the session waits for tandem approve|reject|... */
    TND_ESCALATE_NEVER, /* nobody: the session ends escalated */
} tnd_escalate_mode;

/* When the reviewer's model is asked for a critique (gate.critique). */
typedef enum tnd_critique_mode {
    TND_CRITIQUE_ALWAYS,     /* every audit */
    TND_CRITIQUE_ON_TRIGGER, /* when a trigger fires (orchestrator/review.h) */
} tnd_critique_mode;

/* How many quorum members must approve (agents.reviewer.quorum). */
typedef enum tnd_quorum_rule {
    TND_QUORUM_ALL,      /* every member */
    TND_QUORUM_MAJORITY, /* more than half */
} tnd_quorum_rule;

TND_NAMES_INT_SIZED(tnd_provider);
TND_NAMES_INT_SIZED(tnd_escalate_mode);
TND_NAMES_INT_SIZED(tnd_critique_mode);
TND_NAMES_INT_SIZED(tnd_quorum_rule);

/* The name of each value ("openai", "on_trigger"...); "?" for none. */
const char *tnd_provider_name(tnd_provider p);
const char *tnd_escalate_mode_name(tnd_escalate_mode m);
const char *tnd_critique_mode_name(tnd_critique_mode m);
const char *tnd_quorum_rule_name(tnd_quorum_rule q);

/* The provider called name into *out; -1 with "unknown provider 'NAME'
 * (known: replay, openai, ...)" when there is none. */
int tnd_provider_parse(tnd_provider *out, const char *name);

/* Most entries of agents.reviewer.skills: an audit reply carries at most
 * this many results (TND_BODY_MAX_SKILLS in proto/body.h). */
#define TND_CONFIG_MAX_SKILLS 32

typedef struct tnd_command {
    char **argv;   /* NULL-terminated; a string command with shell syntax
                      becomes {"/bin/bash", "-o", "pipefail", "-c", STRING,
                      NULL} ({"/bin/sh", "-c", STRING, NULL} without bash) */
    char *display; /* the command as the config wrote it, for messages */
    bool shell;    /* argv runs display through a shell, as above */
} tnd_command;

typedef struct tnd_llm_config {
    tnd_provider provider;
    char *model;         /* model name sent to the API */
    char *base_url;      /* API base as the provider documents it; "" for
                            the provider's own (agents/llm.h:
                            tnd_llm_base_url) */
    char *api_key_env;   /* name of the variable holding the key (never
                            the key itself); "" for the provider's usual
                            (agents/llm.h: tnd_llm_key_env) */
    char *cassette;      /* replay: absolute path of the cassette file */
    tnd_command command; /* command provider: the program to run */
    char **headers;      /* extra HTTP headers, "Name: value",
                            NULL-terminated */
    bool stream;         /* ask for a streamed answer where the API can */
    double temperature;  /* < 0: the API's default */
    int max_tokens;      /* completion limit per call */
    int timeout_s;       /* per request */
    int max_retries;     /* transient failures retried this many times */
} tnd_llm_config;

/* Resource limits for a skill's command; 0 = none set (the reviewer's
 * own apply). Defaults: TND_SKILL_LIMIT_* below. */
typedef struct tnd_skill_limits {
    long cpu_s;          /* RLIMIT_CPU: CPU seconds of each process */
    size_t memory_bytes; /* RLIMIT_AS: address space of each process */
    size_t file_bytes;   /* RLIMIT_FSIZE: the largest file it may write */
    size_t disk_bytes;   /* all it may write in the workspace (files it
                            made or changed, allocated bytes; see
                            skills/diskuse.h) */
    long processes;      /* processes and threads of the skill at once
                            (a pids cgroup, else RLIMIT_NPROC above the
                            user's count; see skills/skill.c) */
} tnd_skill_limits;

#define TND_SKILL_LIMIT_CPU_S     3600
#define TND_SKILL_LIMIT_MEMORY_MB 8192
#define TND_SKILL_LIMIT_FILE_MB   1024
#define TND_SKILL_LIMIT_DISK_MB   4096
#define TND_SKILL_LIMIT_PROCESSES 512

/* Where a skill's command runs (skills.NAME.sandbox). The zero value is
 * the sandbox, so a config built by hand is contained too. */
typedef enum tnd_sandbox_mode {
    TND_SANDBOX_BWRAP = 0, /* bubblewrap: new namespaces, only the
                                    workspace writable (skills/sandbox.h) */
    TND_SANDBOX_NONE,      /* directly, as the reviewer's user */
} tnd_sandbox_mode;

TND_NAMES_INT_SIZED(tnd_sandbox_mode);

/* "bwrap" or "none"; "?" out of range. */
const char *tnd_sandbox_mode_name(tnd_sandbox_mode s);

typedef struct tnd_skill_config {
    char *name;
    tnd_command command; /* argv NULL for a built-in skill */
    bool required;       /* a failure blocks approval */
    int timeout_s;
    size_t output_cap; /* bytes of output kept (head and tail) */
    char *builtin;     /* "" for a command, else "git" or "docs" */
    char **paths;      /* run only when the change touches a path matching
                          one of these globs; empty: always */
    char **after;      /* names of skills to wait for; NULL (the key is
                          absent): every skill listed before it in
                          agents.reviewer.skills; empty: none */
    tnd_skill_limits limits;
    tnd_sandbox_mode sandbox;
    bool network; /* bwrap: share the host's network (default: none but
                     a loopback of its own) */
    /* builtin: git */
    char **forbid;         /* globs no changed path may match */
    int max_changed_lines; /* added + removed; 0: no limit */
    size_t max_file_bytes; /* largest added file; 0: no limit */
    /* builtin: docs */
    char **public_paths; /* globs of the public interface */
    char **docs_paths;   /* globs of the documentation */
} tnd_skill_config;

typedef struct tnd_agent_config {
    int count;           /* local processes to spawn (0: remote agents
                            connect by themselves) */
    int threads;         /* tandem serve --pool: requests one agent process
                            serves at once (tandem-coder --threads) */
    tnd_command program; /* argv[0] NULL: the bundled agent binary */
    tnd_llm_config llm;
    char **skills;            /* reviewer: skill names to run, in order;
                                 NULL-terminated */
    size_t context_max_bytes; /* coder: bytes of repository files sent */
    char **context_include;   /* coder: globs of files always sent first
                                 (budget allowing); NULL-terminated */
    int map_max_tokens;       /* coder: the repository map's cap */
    tnd_quorum_rule quorum;   /* reviewer, count > 1: who must approve */
    int skills_at_once;       /* reviewer: skills one process runs at
                                 once over all its requests; 0: one per
                                 CPU it may use */
    tnd_llm_config *models;   /* reviewer: the model of each quorum
                                 member (member i uses models[i-1]);
                                 nmodels may be less than count */
    size_t nmodels;
} tnd_agent_config;

typedef struct tnd_gate_config {
    int max_iterations;
    double confidence_threshold;      /* approve only at or above */
    double human_review_below;        /* ask a human below this */
    int persistent_failure_threshold; /* same failure this many times in a
                                         row: escalate */
    long max_tokens;   /* budget per task, prompt + completion; 0: none */
    int max_llm_calls; /* budget per task; 0: none */
    int max_wall_s;    /* budget per task in seconds; 0: none */
    tnd_escalate_mode escalate; /* who answers an escalation */
    char **risk_paths;          /* globs: a change touching one goes to a human
                                   even when it passes; NULL-terminated */
    char **check_paths;         /* globs of the files that define the
                                   checks (build and test files): under
                                   on_trigger a change touching one, or a
                                   file a skill's command names, is
                                   critiqued; NULL-terminated */
    tnd_critique_mode critique; /* when to ask for the LLM critique */
    int critique_diff_lines;    /* on_trigger: a diff changing more lines */
    int critique_every;         /* on_trigger: every Nth task (0: never) */
    bool baseline;              /* run the skills on the unmodified tree
                                   before the first attempt (tandem run) */
    int baseline_reuse_s;       /* tandem serve: a baseline of the same tree
                                   and skills this young is reused (0:
                                   never) */
} tnd_gate_config;

typedef struct tnd_orchestrator_config {
    char *endpoint; /* "" = ipc:// in a private runtime directory */
    int heartbeat_ms;
    int liveness;          /* missed heartbeats before a peer is dead */
    int request_timeout_s; /* longest wait for one agent reply; 0: what
                              the work may take (model and skill
                              timeouts, and a minute) */
    size_t workspace_max_bytes;
    /* CURVE on a tcp:// endpoint: the orchestrator's NAME.key and the
     * authorized-keys file (proto/curve.h); "" for none */
    char *curve_key;
    char *authorized_keys;
    bool insecure; /* a tcp:// endpoint beyond loopback without CURVE */
} tnd_orchestrator_config;

/* What each attempt's tree holds (see orchestrator/snapshot.h). */
typedef struct tnd_workspace_config {
    bool include_untracked; /* untracked (not ignored) files come in */
    bool incremental;       /* attempts keep build outputs: only the files
                               a proposal touched are put back */
} tnd_workspace_config;

typedef struct tnd_config {
    char *path;      /* the file it came from; NULL for built-in defaults */
    char *dir;       /* base for relative paths (the file's directory) */
    char digest[65]; /* SHA-256 of the file's bytes, in hex (tnd_config_load);
                        "" otherwise */
    tnd_gate_config gate;
    tnd_orchestrator_config orchestrator;
    tnd_workspace_config workspace;
    tnd_agent_config coder;
    tnd_agent_config reviewer;
    tnd_skill_config *skills;
    size_t nskills;
    char **key_envs; /* every api_key_env the file names, kept when --llm
                        changes a provider (which drops its api_key_env):
                        their values are secrets still, scrubbed from skills
                        and redacted; NULL-terminated */
} tnd_config;

/* The built-in defaults (the same values agents.yaml documents). Never
 * NULL. Free with tnd_config_destroy(). */
tnd_config *tnd_config_defaults(void);

/* Load and check a file. On failure returns TND_ECONFIG with the reason
 * in tnd_error_last(): every problem in the contents, one
 * "FILE:LINE:COL: message" per line, or why the file cannot be a config
 * at all (missing, not a regular file, over 1 MiB, unreadable). */
int tnd_config_load(tnd_config **out, const char *path);

/* Whether the file at path holds the bytes a config with this digest
 * (tnd_config.digest) was loaded from: false when it holds others or
 * cannot be read (tnd_config_load says why). */
bool tnd_config_unchanged(const char *path, const char *digest);

/* 0, or TND_ECONFIG naming the file and the fix when dir holds no
 * agents.yaml but an agents.yml: it was passed over for the built-in
 * defaults, whose model is a hosted one, where the file named a model
 * of the user's own. */
int tnd_config_check_name(const char *dir);

/* As tnd_config_load, from memory; name is used in messages and dir as
 * the base for relative paths. */
int tnd_config_parse(tnd_config **out, const char *text, size_t len,
                     const char *name, const char *dir);

/* Point both agents at another model: spec is "PROVIDER:MODEL" (or just
 * "PROVIDER"), base_url may be NULL. A provider other than the config's
 * also drops the config's base_url and api_key_env (they were the old
 * provider's), so the new provider's own apply unless base_url is given.
 * TND_ECONFIG with a message on a bad spec. */
int tnd_config_override_llm(tnd_config *self, const char *spec,
                            const char *base_url);

/* The one check of an llm section beyond its keys' types, which the
 * loader, --llm (tandem run, resume, review), tandem doctor and the
 * backends all make: what its provider needs is there (replay: a
 * cassette; command: a command), and with files, the cassette is a
 * regular file now. label names the section in the message
 * ("agents.coder.llm"). 0, or TND_ECONFIG with the key to set in
 * tnd_error_last(). */
int tnd_llm_config_check(const tnd_llm_config *llm, const char *label,
                         bool files);

/* tnd_llm_config_check of every model: the coder's, the reviewer's and
 * each of agents.reviewer.models; the first problem, as TND_ECONFIG. */
int tnd_config_check_llms(const tnd_config *self, bool files);

/* Reviewers in the quorum: agents.reviewer.count when above 1; with
 * count 0 (remote reviewers) the number of agents.reviewer.models when
 * above 1; else 1 (no quorum). Member i serves "reviewer.i". */
int tnd_config_quorum(const tnd_config *self);

/* The model of reviewer quorum member (1-based): models[member-1] when
 * the config gives one, else the reviewer's llm. Borrowed. */
const tnd_llm_config *tnd_config_member_llm(const tnd_config *self, int member);

/* The skill called name; NULL when there is none. Borrowed. */
const tnd_skill_config *tnd_config_skill(const tnd_config *self,
                                         const char *name);

/* Whether entry i of reviewer.skills waits for entry j: for j among the
 * skill's `after` names, or for every j < i when it has none. */
bool tnd_config_skill_waits(const tnd_config *self, size_t i, size_t j);

/* Free; sets *self_p to NULL. Safe on NULL. */
void tnd_config_destroy(tnd_config **self_p);

#endif
