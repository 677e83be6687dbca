/* tnd_env - the environment a child of tandem's gets: the current one
 * without secrets and without a calling make's own variables. */
#ifndef TND_ENV_H
#define TND_ENV_H

/* A copy of the current environment without secrets: variables whose name
 * ends in _KEY, _TOKEN, _SECRET or _PASSWORD (any case), contains
 * API_KEY, APIKEY, SECRET or PASSWORD, or is listed in extra (a
 * NULL-terminated list of names; may be NULL). Nor with make's own
 * variables (MAKEFLAGS, MFLAGS, MAKELEVEL, MAKEOVERRIDES, GNUMAKEFLAGS):
 * a tandem started from a make must not hand its jobserver and level to
 * the project's build, which then printed the workspace's path on every
 * "Entering directory" line. Caller frees with
 * tnd_str_list_free(). */
char **tnd_env_scrubbed(const char *const *extra);

/* Take out of envp (in place, freeing them) the variables by which git
 * names a repository, its index and its config for the commands it
 * starts (`git rev-parse --local-env-vars`, and GIT_CONFIG_KEY_N and
 * GIT_CONFIG_VALUE_N). A pre-commit hook runs with GIT_INDEX_FILE (and
 * GIT_DIR in a linked worktree): a skill's own git, in the workspace or
 * a repository it made, wrote into the commit being made. */
void tnd_env_drop_git(char **envp);

/* The value of variable name in envp (NULL: this process's environment),
 * or NULL when it is not set. Borrowed. */
const char *tnd_env_get(char *const *envp, const char *name);

#endif
