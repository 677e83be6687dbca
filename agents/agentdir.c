/* An agent's runtime directory, and those of agents that are gone (see
 * agentdir.h).
 *
 * Everything in another agent's directory is reached relative to an
 * open descriptor, never following a symbolic link. */
#include "agents/agentdir.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/error.h"
#include "common/fs.h"
#include "common/log.h"
#include "common/rmtree.h"
#include "common/xalloc.h"

#define LOCK     "lock"
#define LOCK_NEW "lock.new" /* made and locked here, then renamed */
#define SUFFIX   6          /* mkdtemp's XXXXXX */

struct tnd_agentdir {
    char *path;
    int lock_fd; /* holds the flock on path/lock */
};

/* $XDG_RUNTIME_DIR when it is a usable absolute directory of the user's
 * (names get "tandem-" in front), else $TMPDIR/tandem-UID. Caller
 * frees. */
static char *base_dir(bool *xdg)
{
    const char *x = getenv("XDG_RUNTIME_DIR");
    struct stat st;

    *xdg = x && x[0] == '/' && stat(x, &st) == 0 && S_ISDIR(st.st_mode) &&
           st.st_uid == getuid() && access(x, W_OK) == 0;
    if (*xdg)
        return tnd_xstrdup(x);
    return tnd_fs_user_tmp();
}

/* Whether name is prefix followed by what mkdtemp puts for XXXXXX. */
static bool ours(const char *name, const char *prefix)
{
    size_t n = strlen(prefix);

    if (strncmp(name, prefix, n) != 0 || strlen(name + n) != SUFFIX)
        return false;
    for (const char *p = name + n; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
              (*p >= '0' && *p <= '9')))
            return false;
    return true;
}

static bool same(const struct stat *a, const struct stat *b)
{
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/* Remove what the directory open as dfd holds, the lock last: an owner
 * or a reclaimer killed halfway leaves a directory that is still judged
 * by its lock. shown names it in the error. */
static int clear(int dfd, const char *shown)
{
    DIR *d;
    struct dirent *e;
    int fd = fcntl(dfd, F_DUPFD_CLOEXEC, 0), rc = 0;

    if (fd < 0 || !(d = fdopendir(fd))) {
        if (fd >= 0)
            close(fd);
        return tnd_error_sys("cannot open %s", shown);
    }
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 ||
            strcmp(e->d_name, LOCK) == 0)
            continue;
        if (tnd_fs_rmtree_at(dfd, e->d_name) < 0) {
            tnd_error_prefix("%s", shown);
            rc = -1;
        }
    }
    closedir(d);
    if (rc == 0 && unlinkat(dfd, LOCK, 0) < 0 && errno != ENOENT)
        rc = tnd_error_sys("cannot remove %s/" LOCK, shown);
    return rc;
}

/* The lock of the agent directory name in base, taken: its descriptor,
 * with *dfd the directory's, when its owner is provably gone; else -1
 * (alive, or nothing to judge it by). */
static int take_dead(int basefd, const char *name, int *dfd)
{
    struct stat st, dst, lst, now;
    int lfd;

    *dfd = -1;
    if (fstatat(basefd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
        !S_ISDIR(st.st_mode) || st.st_uid != getuid())
        return -1;
    *dfd =
        openat(basefd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (*dfd < 0)
        return -1;
    lfd = openat(*dfd, LOCK, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    /* no lock file: one being made, or from before lock files; either
     * way nothing proves its owner gone */
    if (lfd >= 0 &&
        (fstat(*dfd, &dst) < 0 || !same(&dst, &st) || fstat(lfd, &lst) < 0 ||
         !S_ISREG(lst.st_mode) || lst.st_uid != getuid() ||
         flock(lfd, LOCK_EX | LOCK_NB) < 0 ||
         /* taken: still the lock of that directory, still at that name
          * (one that another reclaimer removed meanwhile is not) */
         fstatat(*dfd, LOCK, &now, AT_SYMLINK_NOFOLLOW) < 0 ||
         !same(&now, &lst) ||
         fstatat(basefd, name, &now, AT_SYMLINK_NOFOLLOW) < 0 ||
         !same(&now, &st))) {
        close(lfd);
        lfd = -1;
    }
    if (lfd < 0) {
        close(*dfd);
        *dfd = -1;
    }
    return lfd;
}

/* Remove the directories in base named prefix-XXXXXX whose owners are
 * gone, at most TND_AGENTDIR_RECLAIM_MAX. Never fails: what cannot be
 * removed is said in the log and left for the next start. */
static void reclaim(const char *base, const char *prefix)
{
    int basefd = open(base, O_RDONLY | O_DIRECTORY | O_CLOEXEC), fd, dfd;
    int removed = 0, rc;
    DIR *d;
    struct dirent *e;
    char *shown;

    if (basefd < 0 || !(d = fdopendir(basefd))) {
        if (basefd >= 0)
            close(basefd);
        return;
    }
    while ((e = readdir(d)) != NULL && removed < TND_AGENTDIR_RECLAIM_MAX) {
        if (!ours(e->d_name, prefix) ||
            (fd = take_dead(dirfd(d), e->d_name, &dfd)) < 0)
            continue;
        shown = tnd_fs_join(base, e->d_name);
        rc = clear(dfd, shown);
        if (rc == 0 && unlinkat(dirfd(d), e->d_name, AT_REMOVEDIR) < 0)
            rc = tnd_error_sys("cannot remove %s", shown);
        if (rc == 0) {
            removed++;
            tnd_log_info("removed %s: the agent that made it is gone", shown);
        } else {
            tnd_log_warn("%s (left by an agent that is gone; remove it by "
                         "hand if it stays)",
                         tnd_error_last());
        }
        free(shown);
        close(dfd);
        close(fd); /* removed: the lock goes with its last descriptor */
    }
    closedir(d);
}

/* The lock of the new directory dir: made as LOCK_NEW, locked, then
 * renamed to LOCK. Its descriptor, or -1 with the error set. */
static int make_lock(const char *dir)
{
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    int fd = -1;

    if (dfd < 0 || (fd = tnd_fs_lock_new(dfd, LOCK_NEW)) < 0 ||
        renameat(dfd, LOCK_NEW, dfd, LOCK) < 0) {
        tnd_error_sys("cannot lock %s/" LOCK, dir);
        if (fd >= 0)
            close(fd);
        fd = -1;
    }
    if (dfd >= 0)
        close(dfd);
    return fd;
}

tnd_agentdir *tnd_agentdir_new(const char *role)
{
    tnd_agentdir *a;
    bool xdg;
    char *base = base_dir(&xdg), *prefix, *tmpl, *real = NULL;
    int fd;

    if (!base)
        return NULL;
    prefix = tnd_xasprintf("%s%s-", xdg ? "tandem-" : "", role);
    reclaim(base, prefix);
    tmpl = tnd_xasprintf("%s/%sXXXXXX", base, prefix);
    free(prefix);
    free(base);
    if (!mkdtemp(tmpl)) { /* mode 0700 */
        tnd_error_sys("cannot make a runtime directory like %s", tmpl);
        free(tmpl);
        return NULL;
    }
    if ((fd = make_lock(tmpl)) < 0 || !(real = tnd_fs_realpath(tmpl))) {
        if (fd >= 0)
            close(fd);
        tnd_fs_rmtree(tmpl);
        free(tmpl);
        return NULL;
    }
    free(tmpl);
    a = tnd_xcalloc(1, sizeof(*a));
    a->path = real;
    a->lock_fd = fd;
    return a;
}

void tnd_agentdir_destroy(tnd_agentdir **self_p)
{
    tnd_agentdir *a = self_p ? *self_p : NULL;
    int dfd, rc;

    if (!a)
        return;
    dfd = open(a->path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    rc = dfd < 0 ? tnd_error_sys("cannot open %s", a->path)
                 : clear(dfd, a->path);
    if (rc == 0 && rmdir(a->path) < 0)
        rc = tnd_error_sys("cannot remove %s", a->path);
    if (rc < 0)
        tnd_log_warn("%s (remove it by hand if the next agent of its kind "
                     "does not)",
                     tnd_error_last());
    if (dfd >= 0)
        close(dfd);
    close(a->lock_fd);
    free(a->path);
    free(a);
    *self_p = NULL;
}

const char *tnd_agentdir_path(const tnd_agentdir *self)
{
    return self->path;
}
