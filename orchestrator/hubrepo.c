/* Which repositories, and which config, tandem serve acts in for a
 * client (see hub_int.h): one the server's user reads, and that no other
 * user can change the path to (common/trust.h), by the path checked. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/config.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/trust.h"
#include "common/xalloc.h"
#include "orchestrator/hub_int.h"
#include "orchestrator/session.h"

/* Whether dir holds a `.git` (a work tree's top, or a repository's). */
static bool has_git(const char *dir)
{
    char *git = tnd_fs_join(dir, ".git");
    struct stat st;
    bool there = lstat(git, &st) == 0;

    free(git);
    return there;
}

/* Whether the directories from the top of the git work tree repo is in
 * (the nearest one above it with a `.git`, when repo has none) down to
 * repo are ones nobody else may write in, sticky or not: git works in
 * the whole work tree, and a sticky directory in it lets another user
 * add names there (a `.gitattributes` that picks a filter). 0, or -1
 * with the error set. */
static int strict_to_top(const char *repo)
{
    char *dir = tnd_xstrdup(repo), *slash;
    size_t top = 0;
    int rc = 0;

    if (has_git(repo)) {
        free(dir);
        return 0;
    }
    while (!top && (slash = strrchr(dir, '/')) && slash != dir) {
        *slash = '\0';
        if (has_git(dir))
            top = strlen(dir);
    }
    /* the top, and each directory below it above repo, as a last one */
    for (size_t n = top; top && n < strlen(repo) && rc == 0;
         n += strcspn(repo + n + 1, "/") + 1) {
        char *part = tnd_xstrndup(repo, n);
        rc = tnd_trust_path(part);
        free(part);
    }
    free(dir);
    return rc;
}

int tnd_hub_trust_repo(const char *repo)
{
    if (tnd_trust_path(repo) < 0 || strict_to_top(repo) < 0 ||
        tnd_session_check_own_home(repo) < 0) {
        char *why = tnd_xstrdup(tnd_error_last());
        int rc = tnd_error_set(
            "repo %s: %s; tandem serve runs a session in a repository only "
            "where no other user can move a directory on the way to it or "
            "put a link in `.tandem` (they could lead the server's writes "
            "anywhere its user, uid %d, may write): mend that, or run the "
            "task as the repository's owner (tandem run, or a tandem serve "
            "of that user)",
            repo, why, (int)geteuid());
        free(why);
        return rc;
    }
    return 0;
}

char *tnd_hub_check_repo(const char *repo, const char **kind)
{
    struct stat st;
    char *real;

    *kind = "bad_request";
    if (stat(repo, &st) < 0) {
        tnd_error_sys("repo %s", repo);
        return NULL;
    }
    if (!S_ISDIR(st.st_mode)) {
        tnd_error_set("repo %s is not a directory", repo);
        return NULL;
    }
    if (access(repo, R_OK | X_OK) < 0) {
        tnd_error_sys("repo %s cannot be read by the server (uid %d)", repo,
                      (int)getuid());
        return NULL;
    }
    if (!(real = tnd_fs_realpath(repo)))
        return NULL;
    /* checked, and from here on acted by: a link the client named on
     * the way (in a directory another user may write in) resolved again
     * when the session is made could name their repository by then */
    *kind = "forbidden";
    if (tnd_hub_trust_repo(real) < 0) {
        free(real);
        return NULL;
    }
    return real;
}

/* The task's config must be the one the server's agents run with. */
int tnd_hub_check_config(const tnd_hub *h, const char *config)
{
    if (config && !tnd_hub_runs_config(h, config))
        return tnd_error_set("--config %s: this server's agents run with %s; "
                             "a server runs one configuration (start another "
                             "tandem serve --config %s, or use tandem run)",
                             config,
                             h->o->config->path ? h->o->config->path
                                                : "the built-in defaults",
                             config);
    return 0;
}

/* The repository a client named, by its real path, as its sessions are
 * made in it and kept in the accepted list: the path the client sent,
 * through a symlink that changed later, had the next server read another
 * repository's journal. Caller frees. */
char *tnd_hub_real_repo(const char *sent)
{
    char *real = tnd_fs_realpath(sent);

    if (!real) {
        tnd_error_clear();
        real = tnd_xstrdup(sent);
    }
    return real;
}
