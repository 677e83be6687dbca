/* File operations confined to a tree (see beneath.h). */
#include "common/beneath.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/error.h"
#include "common/xalloc.h"

static bool walk_only; /* tests: the fallback, as on an older kernel */

void tnd_beneath_walk_only(bool on)
{
    walk_only = on;
}

static int escape_error(const char *rel)
{
    errno = ELOOP;
    return tnd_error_set("%s: the path passes through a symbolic link, or "
                         "leaves the tree",
                         rel);
}

static bool lexically_ok(const char *rel)
{
    const char *p = rel;

    if (!*rel || *rel == '/')
        return false;
    while (*p) {
        size_t n = strcspn(p, "/");
        if ((n == 2 && p[0] == '.' && p[1] == '.'))
            return false;
        p += n;
        p += strspn(p, "/");
    }
    return true;
}

/* openat2, or -1 with errno ENOSYS where the kernel lacks it. */
static int open2(int dirfd, const char *rel, int flags, mode_t mode)
{
#ifdef SYS_openat2
    struct open_how how;
    long fd;

    memset(&how, 0, sizeof(how));
    how.flags = (unsigned long long)flags;
    how.mode = (flags & O_CREAT) ? (unsigned long long)mode : 0;
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
    do
        fd = syscall(SYS_openat2, dirfd, rel, &how, sizeof(how));
    while (fd < 0 && errno == EAGAIN);
    return (int)fd;
#else
    (void)dirfd, (void)rel, (void)flags, (void)mode;
    errno = ENOSYS;
    return -1;
#endif
}

/* The component walk: each directory opened with O_NOFOLLOW. */
static int walk_open(int rootfd, const char *rel, int flags, mode_t mode)
{
    char *copy = tnd_xstrdup(rel), *p = copy, *slash;
    int dirfd = fcntl(rootfd, F_DUPFD_CLOEXEC, 0), fd = -1;

    if (dirfd < 0)
        goto out;
    while ((slash = strchr(p, '/')) != NULL) {
        int next;
        *slash = '\0';
        if (*p && strcmp(p, ".") != 0) {
            struct stat st;
            next =
                openat(dirfd, p, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            /* a symlink to a directory is a link on the way (ELOOP, as
             * openat2 says); a file is no directory (ENOTDIR, as there) */
            int err = errno;
            if (next < 0 && err == ENOTDIR)
                err = fstatat(dirfd, p, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
                              !S_ISLNK(st.st_mode)
                          ? ENOTDIR
                          : ELOOP;
            close(dirfd);
            dirfd = next;
            if (dirfd < 0) {
                errno = err;
                goto out;
            }
        }
        p = slash + 1;
        p += strspn(p, "/");
    }
    fd = openat(dirfd, *p ? p : ".", flags, mode);
out:
    if (dirfd >= 0)
        close(dirfd);
    free(copy);
    return fd;
}

static int open_raw(int rootfd, const char *rel, int flags, mode_t mode)
{
    int fd;

    flags |= O_CLOEXEC | O_NOFOLLOW;
    if (walk_only) {
        fd = -1;
        errno = ENOSYS;
    } else {
        fd = open2(rootfd, rel, flags, mode);
    }
    if (fd < 0 && (errno == ENOSYS || errno == EPERM))
        fd = walk_open(rootfd, rel, flags, mode);
    return fd;
}

int tnd_beneath_open(int rootfd, const char *rel, int flags, mode_t mode)
{
    int fd;

    if (!lexically_ok(rel))
        return escape_error(rel);
    fd = open_raw(rootfd, rel, flags, mode);
    if (fd < 0) {
        if (errno == ELOOP || errno == EXDEV)
            return escape_error(rel);
        return tnd_error_sys("cannot open %s", rel);
    }
    return fd;
}

/* The directory that holds rel's last component, opened beneath rootfd;
 * *last points into rel at that component. */
static int open_parent(int rootfd, const char *rel, const char **last)
{
    const char *slash = strrchr(rel, '/');
    char *dir;
    int fd;

    *last = slash ? slash + 1 : rel;
    if (!slash)
        return fcntl(rootfd, F_DUPFD_CLOEXEC, 0);
    dir = tnd_xstrndup(rel, (size_t)(slash - rel));
    fd = open_raw(rootfd, dir, O_PATH | O_DIRECTORY, 0);
    free(dir);
    return fd;
}

int tnd_beneath_mkdirs(int rootfd, const char *rel,
                       void (*created)(const char *rel, void *payload),
                       void *payload)
{
    char *path = tnd_xstrdup(rel);
    size_t len = strlen(path);
    int error = 0;

    if (!lexically_ok(rel)) {
        free(path);
        return escape_error(rel);
    }
    /* each prefix in turn: "a", "a/b", "a/b/c" */
    for (size_t i = 1; i <= len && error == 0; i++) {
        const char *last;
        int dirfd;
        if (path[i] != '/' && path[i] != '\0')
            continue;
        path[i] = '\0';
        dirfd = open_parent(rootfd, path, &last);
        if (dirfd < 0) {
            error = errno == ELOOP || errno == ENOTDIR || errno == EXDEV
                        ? escape_error(rel)
                        : tnd_error_sys("cannot create directory %s", path);
        } else if (mkdirat(dirfd, last, 0755) == 0) {
            if (created)
                created(path, payload);
        } else if (errno == EEXIST) {
            struct stat st;
            if (fstatat(dirfd, last, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
                S_ISLNK(st.st_mode))
                error = escape_error(rel);
            else if (!S_ISDIR(st.st_mode))
                error = tnd_error_set("%s: %s is a file, not a directory", rel,
                                      path);
        } else {
            error = tnd_error_sys("cannot create directory %s", path);
        }
        if (dirfd >= 0)
            close(dirfd);
        if (i < len)
            path[i] = '/';
    }
    free(path);
    return error;
}

int tnd_beneath_remove(int rootfd, const char *rel, bool dir, bool missing_ok)
{
    const char *last;
    int dirfd, rc, saved;

    if (!lexically_ok(rel))
        return escape_error(rel);
    dirfd = open_parent(rootfd, rel, &last);
    if (dirfd < 0) {
        if (errno == ENOENT && missing_ok)
            return 0;
        if (errno == ELOOP || errno == ENOTDIR || errno == EXDEV)
            return escape_error(rel);
        return tnd_error_sys("cannot remove %s", rel);
    }
    rc = unlinkat(dirfd, last, dir ? AT_REMOVEDIR : 0);
    saved = errno;
    close(dirfd);
    if (rc == 0 || (saved == ENOENT && missing_ok))
        return 0;
    errno = saved;
    tnd_error_sys("cannot remove %s", rel);
    errno = saved;
    return -1;
}
