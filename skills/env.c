/* A child's environment without secrets (see env.h). */
#include "skills/env.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "common/xalloc.h"

extern char **environ;

/* Is the NAME of a NAME=value entry a secret (see env.h)? */
static int is_secret(const char *entry, const char *const *extra)
{
    /* _SECRET and _PASSWORD endings are covered by parts[]. */
    static const char *const suffixes[] = {"_KEY", "_TOKEN"};
    static const char *const parts[] = {"API_KEY", "APIKEY", "SECRET",
                                        "PASSWORD"};
    size_t len = strcspn(entry, "="), i;
    char *name = tnd_xstrndup(entry, len);
    int secret = 0;

    for (i = 0; i < len; i++)
        name[i] = (char)toupper((unsigned char)name[i]);
    for (i = 0; i < sizeof(suffixes) / sizeof(*suffixes); i++) {
        size_t n = strlen(suffixes[i]);

        if (len >= n && !strcmp(name + len - n, suffixes[i]))
            secret = 1;
    }
    for (i = 0; i < sizeof(parts) / sizeof(*parts); i++)
        if (strstr(name, parts[i]))
            secret = 1;
    for (i = 0; extra && extra[i]; i++)
        if (!strcasecmp(name, extra[i]))
            secret = 1;
    free(name);
    return secret;
}

/* Whether an entry NAME=value sets one of names (NULL-terminated). */
static bool sets_one_of(const char *entry, const char *const *names)
{
    size_t len = strcspn(entry, "=");

    for (size_t i = 0; entry[len] == '=' && names[i]; i++)
        if (strlen(names[i]) == len && strncmp(entry, names[i], len) == 0)
            return true;
    return false;
}

/* A variable a make that started tandem set for its own children: a
 * project's build run as a skill is a make of its own, at the top. */
static bool is_make_own(const char *entry)
{
    static const char *const names[] = {"MAKEFLAGS",    "MFLAGS",
                                        "MAKELEVEL",    "MAKEOVERRIDES",
                                        "GNUMAKEFLAGS", NULL};

    return sets_one_of(entry, names);
}

char **tnd_env_scrubbed(const char *const *extra)
{
    size_t n = 0, kept = 0;
    char **env;

    while (environ && environ[n])
        n++;
    env = tnd_xcalloc(n + 1, sizeof(*env));
    for (size_t i = 0; i < n; i++)
        if (!is_secret(environ[i], extra) && !is_make_own(environ[i]))
            env[kept++] = tnd_xstrdup(environ[i]);
    env[kept] = NULL;
    return env;
}

/* Whether an entry NAME=value sets one of git's repository variables. */
static bool is_git_local(const char *entry)
{
    static const char *const names[] = {
        "GIT_ALTERNATE_OBJECT_DIRECTORIES",
        "GIT_CONFIG",
        "GIT_CONFIG_PARAMETERS",
        "GIT_CONFIG_COUNT",
        "GIT_OBJECT_DIRECTORY",
        "GIT_DIR",
        "GIT_WORK_TREE",
        "GIT_IMPLICIT_WORK_TREE",
        "GIT_GRAFT_FILE",
        "GIT_INDEX_FILE",
        "GIT_NO_REPLACE_OBJECTS",
        "GIT_REPLACE_REF_BASE",
        "GIT_PREFIX",
        "GIT_INTERNAL_SUPER_PREFIX",
        "GIT_SHALLOW_FILE",
        "GIT_COMMON_DIR",
        "GIT_QUARANTINE_PATH",
        NULL,
    };
    size_t len = strcspn(entry, "=");

    if (entry[len] != '=')
        return false;
    if ((len > 15 && strncmp(entry, "GIT_CONFIG_KEY_", 15) == 0) ||
        (len > 17 && strncmp(entry, "GIT_CONFIG_VALUE_", 17) == 0))
        return true;
    return sets_one_of(entry, names);
}

void tnd_env_drop_git(char **envp)
{
    size_t kept = 0;

    for (size_t i = 0; envp && envp[i]; i++) {
        if (is_git_local(envp[i]))
            free(envp[i]);
        else
            envp[kept++] = envp[i];
    }
    if (envp)
        envp[kept] = NULL;
}

const char *tnd_env_get(char *const *envp, const char *name)
{
    size_t n = strlen(name);

    if (!envp)
        return getenv(name);
    for (; *envp; envp++)
        if (strncmp(*envp, name, n) == 0 && (*envp)[n] == '=')
            return *envp + n + 1;
    return NULL;
}
