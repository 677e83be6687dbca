/* tnd_git - run git (or a program like it) on a repository, read-only.
 *
 * git runs with an argv (no shell), in the repository's directory, with
 * the environment scrubbed of secrets, a deadline, and its output capped:
 * output past the cap is an error, never a silently cut list. It never
 * reaches the network: no transport is allowed, so a partial clone's
 * git fails on a blob it lacks where it fetched it, and git-lfs's smudge
 * filter fetches nothing: a file whose LFS object is not on this machine
 * is TND_ECONFIG, naming it and `git lfs fetch`. */
#ifndef TND_GIT_H
#define TND_GIT_H

#include <stdbool.h>
#include <stddef.h>

/* How long one git command may take. */
#define TND_GIT_TIMEOUT_MS (120 * 1000)

/* Run argv in dir. 0 when it exits 0, with its stdout in *out (caller
 * frees; out may be NULL) and its length in *len (may be NULL). A program
 * that cannot start is TND_ENOTFOUND; one that fails, or writes more than
 * cap bytes, is -1; the error names the command and gives its stderr. */
int tnd_git_run(char **out, size_t *len, const char *dir,
                const char *const *argv, size_t cap);

/* As tnd_git_run, with the index file index (GIT_INDEX_FILE) in place of
 * the repository's own. */
int tnd_git_run_index(char **out, size_t *len, const char *dir,
                      const char *index, const char *const *argv, size_t cap);

/* As tnd_git_run_index, with the objects git writes (git apply --cached,
 * git add) going to the directory objects instead of the repository,
 * whose objects (repo_objects, `git rev-parse --git-path objects`) git
 * still reads: work on a scratch index that leaves the repository as it
 * was. */
int tnd_git_run_scratch(char **out, size_t *len, const char *dir,
                        const char *index, const char *objects,
                        const char *repo_objects, const char *const *argv,
                        size_t cap);

/* As tnd_git_run_scratch (index, objects and repo_objects each NULL
 * for the repository's own), with the input_len bytes of input on git's
 * stdin: the paths of a --stdin form (checkout-index --stdin -z,
 * hash-object --stdin-paths, check-attr --stdin -z, add and reset
 * --pathspec-from-file=- --pathspec-file-nul), never put on its command
 * line, whose size the kernel caps (ARG_MAX: E2BIG, and git does not
 * start). */
int tnd_git_run_input(char **out, size_t *len, const char *dir,
                      const char *index, const char *objects,
                      const char *repo_objects, const char *input,
                      size_t input_len, const char *const *argv, size_t cap);

/* As tnd_git_run_input (no output), without the caller's
 * GIT_LFS_SKIP_SMUDGE: for a checkout of Git LFS files whose objects are
 * on this machine (lfs.h), which git-lfs writes with their content even
 * where the environment asks it to skip (a CI clone's), as nothing need
 * be fetched. alone: as tnd_git_run_alone (a submodule's repository,
 * named by --git-dir; objects NULL). */
int tnd_git_run_smudge(const char *dir, const char *index, const char *objects,
                       const char *repo_objects, const char *input,
                       size_t input_len, const char *const *argv, bool alone);

/* As tnd_git_run_index (index may be NULL), git finding its repository
 * from dir and argv alone: without the caller's GIT_DIR, GIT_WORK_TREE
 * and the like, which a commit's hook has (in a linked worktree), and
 * which named the superproject in a submodule's directory. */
int tnd_git_run_alone(char **out, size_t *len, const char *dir,
                      const char *index, const char *const *argv, size_t cap);

/* As tnd_git_run, for a caller that tells git's failures apart by what
 * git says: git runs with LC_ALL=C, so its messages are not translated,
 * and when it ran and failed (-1), *why holds its stderr, trimmed
 * (caller frees; NULL in every other case). */
int tnd_git_try(char **out, size_t *len, char **why, const char *dir,
                const char *const *argv, size_t cap);

/* As tnd_git_try, with the input_len bytes of input on git's stdin (see
 * tnd_git_run_input). */
int tnd_git_try_input(char **out, size_t *len, char **why, const char *dir,
                      const char *input, size_t input_len,
                      const char *const *argv, size_t cap);

/* Whether dir is in a repository's own directory (a bare repository, a
 * .git directory or one under it): git's data, not a project, whose
 * files a run must not take as a tree to change (its config and hooks
 * run programs). One git process; for a caller whose git said "must be
 * run in a work tree". */
bool tnd_git_in_git_dir(const char *dir);

/* Whether dir, or a directory above it, looks like a repository's own
 * directory (a file HEAD, directories objects and refs: git's own test),
 * and git says dir is in it. No process unless one looks like it: for
 * a check on every run, before a session is made in it. */
bool tnd_git_dir_above(const char *dir);

/* What tandem says of such a directory (see above), for an error. */
#define TND_GIT_DIR_WORDS                                                     \
    "%s is inside a git repository's own directory (a bare repository, or "   \
    ".git), which holds git's data and settings, not a project: give a work " \
    "tree's top as --repo (git worktree add makes one of a bare repository)"

#endif
