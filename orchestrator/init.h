/* tnd_init - what `tandem init` guesses from a repository: the build
 * systems in its top directory, the build and test commands they give,
 * and the agents.yaml made from them.
 *
 * Looked for, in this order (the first that gives a build command gives
 * the build skill, the first that gives a test command the test skill):
 *
 *   Makefile     build: make (make all when all is not the default goal);
 *                test: make check, else make test (the targets found)
 *   CMake        CMakeLists.txt; test only with enable_testing() or
 *                include(CTest) in it
 *   Meson        meson.build
 *   Cargo        Cargo.toml
 *   go           go.mod
 *   npm          package.json: npm ci (npm install without a lock file),
 *                then scripts.build; scripts.test unless it is npm's
 *                placeholder
 *   pytest       pytest.ini, [tool.pytest...] in pyproject.toml, or
 *                test_*.py in tests/
 *
 * Files are only read, never run: a Makefile's targets come from its
 * rule lines, package.json's scripts from its JSON. */
#ifndef TND_INIT_H
#define TND_INIT_H

#include <stdbool.h>

/* The two skills init guesses. */
typedef enum tnd_init_skill {
    TND_INIT_BUILD,
    TND_INIT_TEST,
} tnd_init_skill;

typedef struct tnd_init tnd_init;

/* Look at repo and guess. NULL with the error set when repo is not a
 * directory; a file that cannot be read is left out and said in
 * tnd_init_notes(). Free with tnd_init_destroy(). */
tnd_init *tnd_init_guess(const char *repo);

/* Free; sets *self_p to NULL. Safe on NULL. */
void tnd_init_destroy(tnd_init **self_p);

/* Whether file (relative to repo) is among what the skills will see: a
 * file of git's (or, with untracked, one not ignored), or any file
 * outside a git work tree. A Makefile ./configure wrote and git ignores
 * is not: doctor and init trusted one the workspace never holds. */
bool tnd_init_in_workspace(const char *repo, const char *file, bool untracked);

/* The targets named by the rule lines of the Makefile GNU make reads in
 * repo (GNUmakefile, makefile, Makefile), for `tandem doctor`: *out
 * NULL-terminated (free with tnd_str_list_free), *file the file's name
 * (static), *sure false when an include or a target made of a variable
 * or a pattern may name more than reading finds. Read, never run.
 * TND_ENOTFOUND when there is none; -1 with the error set when it
 * cannot be read. */
int tnd_init_make_targets(char ***out, const char **file, bool *sure,
                          const char *repo);

/* The command guessed for a skill, e.g. "make check"; NULL when none.
 * Borrowed until tnd_init_destroy. */
const char *tnd_init_command(const tnd_init *self, tnd_init_skill which);

/* Where that command came from, e.g. "Makefile, target check"; NULL
 * when none. Borrowed until tnd_init_destroy. */
const char *tnd_init_source(const tnd_init *self, tnd_init_skill which);

/* What was recognised, one line each in the order looked for, e.g.
 * "Makefile (targets all, check, test)"; an empty list when nothing.
 * NULL-terminated, borrowed until tnd_init_destroy. */
const char *const *tnd_init_found(const tnd_init *self);

/* Files that were there but could not be read, one line each with the
 * reason. NULL-terminated, borrowed until tnd_init_destroy. */
const char *const *tnd_init_notes(const tnd_init *self);

/* The commented agents.yaml for what was guessed: the models, and the
 * skills guessed (none, with the places to fill in, when nothing was).
 * Caller frees. */
char *tnd_init_render(const tnd_init *self);

#endif
