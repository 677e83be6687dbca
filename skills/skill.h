/* tnd_skill - run one of the reviewer's configured skills (build, test,
 * lint, ...) in a workspace and report what happened.
 *
 * The command comes from agents.yaml, written by the config's author;
 * nothing from a task or a model is ever put into it. It runs in its own
 * process group with the skill's timeout, an environment without secrets,
 * and its output capped (head and tail kept). */
#ifndef TND_SKILL_H
#define TND_SKILL_H

#include <stdatomic.h>

#include "common/config.h"
#include "proto/audit.h"

/* Run skill in dir and fill *out (free with tnd_skill_result_clear).
 * Never fails as a call: a skill that cannot start is reported with
 * status TND_SKILL_ERROR and the reason as its output. envp is the
 * environment to give it (see tnd_proc_env_scrubbed); cancel may be NULL. */
void tnd_skill_run(tnd_skill_result *out, const tnd_skill_config *skill,
                   const char *dir, char *const *envp,
                   const atomic_int *cancel);

/* One line for people: "test: fail (exit 2, 0.4s)". Borrowed from a
 * buffer of this thread, valid until the next call. */
const char *tnd_skill_summary(const tnd_skill_result *r);

#endif
