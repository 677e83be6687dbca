/* tnd_skill - run one of the reviewer's configured skills (build, test,
 * lint, ...) in a workspace and report what happened.
 *
 * The command comes from agents.yaml, written by the config's author;
 * nothing from a task or a model is ever put into it. It runs in its own
 * process group with the skill's timeout and limits, an environment
 * without secrets, and its output capped (head and tail kept). A built-in
 * skill (builtin: git, docs) runs inside this process instead, on the
 * proposal's diff (see builtin.h). */
#ifndef TND_SKILL_H
#define TND_SKILL_H

#include <stdatomic.h>
#include <stdbool.h>

#include "common/config.h"
#include "proto/audit.h"
#include "skills/holder.h"

/* Where and on what a skill runs; everything borrowed. */
typedef struct tnd_skill_ctx {
    const char *dir;          /* the workspace: the command's cwd */
    const char *diff;         /* the proposal; built-in skills read it */
    char *const *envp;        /* see tnd_env_scrubbed */
    const atomic_int *cancel; /* may be NULL */
    tnd_holder *holder;       /* the reviewer's running sandbox, from
                                 which a sandboxed skill's own is made
                                 (see holder.h); NULL: it starts bwrap
                                 of its own */
} tnd_skill_ctx;

/* Run skill and fill *out (free with tnd_skill_result_clear). Never
 * fails as a call: a skill that cannot start is reported with status
 * TND_SKILL_ERROR and the reason as its output. Safe to call from
 * several threads at once. */
void tnd_skill_run(tnd_skill_result *out, const tnd_skill_config *skill,
                   const tnd_skill_ctx *ctx);

/* Whether skill concerns a change touching touched (NULL-terminated
 * repository paths): always when it has no paths, else when one of
 * touched matches one of them. */
bool tnd_skill_applies(const tnd_skill_config *skill,
                       const char *const *touched);

/* Fill *out for a skill that did not run: status skipped, exit code -1,
 * why as its output. */
void tnd_skill_skip(tnd_skill_result *out, const tnd_skill_config *skill,
                    const char *why);

/* One line for people: "test: fail (exit 2, 0.4s)". Borrowed from a
 * buffer of this thread, valid until the next call. */
const char *tnd_skill_summary(const tnd_skill_result *r);

#endif
