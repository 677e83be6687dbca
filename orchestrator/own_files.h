/* tnd_own_files - the files of a repository that tandem's configuration
 * runs with.
 *
 * The config file itself, the cassettes, and every file its commands
 * name (a model script of `provider: command`, an agent program, a script
 * given to an interpreter: `[python3, ./model.py]`) when they lie inside
 * the repository. A change must not rewrite them and the coder is not
 * shown them (run.c): a cassette would show it the answers, an edited
 * agents.yaml configured its own review, and a model script it rewrote,
 * once applied, would judge the next change. */
#ifndef TND_OWN_FILES_H
#define TND_OWN_FILES_H

#include <stddef.h>

#include "common/config.h"

/* Words of one command looked at, at most. */
#define TND_OWN_FILES_WORDS 64

/* Into out[0..max), the paths (relative to repo, an absolute real path;
 * caller frees each) of the files cfg runs with that lie inside repo,
 * each once, in the order: the config, the cassettes, the commands' files.
 * A word of a command names a file when it resolves, from the current
 * directory as the agents' own, to a regular file; a program without a
 * '/' is found on PATH, not here. Returns how many. */
size_t tnd_own_files(char **out, size_t max, const tnd_config *cfg,
                     const char *repo);

#endif
