/* tnd_builtin - skills that run inside the reviewer, on the proposal's
 * diff, with no program and no git.
 *
 *   builtin: git   fails on a change that touches a `forbid` path, changes
 *                  more than `max_changed_lines` lines, adds a conflict
 *                  marker, adds a file over `max_file_kb`, or adds a line
 *                  that looks like a secret (private keys, AWS, GitHub,
 *                  Slack and OpenAI-style keys, `api_key = "..."`).
 *   builtin: docs  fails when a `public` path changed and no `docs` path
 *                  did.
 *
 * The output is a report for people and for the reviewer's model: the
 * diff's statistics, then one "path:line: what" line per finding, so the
 * findings become the skill's locations. Secrets are named by kind,
 * never echoed. */
#ifndef TND_BUILTIN_H
#define TND_BUILTIN_H

#include "common/config.h"
#include "proto/audit.h"

/* Run the built-in skill->builtin over diff (the request's) and fill *out
 * as tnd_skill_run does: pass (exit 0), fail (exit 1, a finding), or
 * error (the diff could not be read). workspace is used to size added
 * files; may be NULL. */
void tnd_builtin_run(tnd_skill_result *out, const tnd_skill_config *skill,
                     const char *workspace, const char *diff);

/* The kind of secret text[0..len) seems to hold ("an AWS access key
 * id"), or NULL. */
const char *tnd_builtin_secret(const char *text, size_t len);

#endif
