/* Removing a tree (see rmtree.h). */
#include "common/rmtree.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/error.h"

/* Directories a removal holds open at once, at most: one a level. A
 * build can make a tree 30,000 deep in seconds; holding each level open
 * ran out of descriptors (EMFILE at the soft RLIMIT_NOFILE, 1024 on most
 * hosts; then the workspace could not be reset nor the runtime directory
 * removed) or of stack. Below this depth a directory is moved up into the
 * top of the tree instead, and removed from there on a later pass. */
#define RMTREE_DEPTH 64
/* Names tried for one such move (another entry may have the name). */
#define RMTREE_NAMES 1000

typedef struct rmtree {
    int top;                /* the directory being removed, open */
    const char *shown;      /* its path, for messages */
    unsigned moved;         /* directories moved up into top, ever */
    bool again;             /* one was moved during this pass */
    const atomic_int *stop; /* set: stop before the next entry */
} rmtree;

static int rm_entries(rmtree *c, int fd, int depth);

/* Move the directory name in parent up into c->top; 1 when it was, 0
 * when it cannot be (the filesystem has no RENAME_NOREPLACE: it is
 * removed where it is), -1 on an error. */
static int rm_move_up(rmtree *c, int parent, const char *name)
{
    char to[32];

    for (int i = 0; i < RMTREE_NAMES; i++) {
        snprintf(to, sizeof(to), ".tandem-rm-%u", c->moved++);
        if (renameat2(parent, name, c->top, to, RENAME_NOREPLACE) == 0) {
            c->again = true;
            return 1;
        }
        if (errno == EINVAL || errno == ENOSYS)
            return 0;
        if (errno != EEXIST)
            return tnd_error_sys("cannot remove %s", c->shown);
    }
    return 0;
}

/* Remove the entry name in parent, depth levels below the top. */
static int rm_entry(rmtree *c, int parent, const char *name, int depth)
{
    struct stat st;
    int fd, error;

    if (fstatat(parent, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
        return errno == ENOENT ? 0
                               : tnd_error_sys("cannot remove %s", c->shown);
    if (!S_ISDIR(st.st_mode)) {
        if (unlinkat(parent, name, 0) < 0 && errno != ENOENT)
            return tnd_error_sys("cannot remove %s", c->shown);
        return 0;
    }
    /* a build may leave directories without write or search permission
     * (Go's module cache does): ours to remove, so ours to open up (and
     * to move: that writes its "..") */
    if ((st.st_mode & 0700) != 0700)
        fchmodat(parent, name, (st.st_mode & 07777) | 0700, 0);
    if (depth >= RMTREE_DEPTH && (error = rm_move_up(c, parent, name)) != 0)
        return error < 0 ? -1 : 0;
    fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0)
        return tnd_error_sys("cannot open %s", c->shown);
    error = rm_entries(c, fd, depth + 1);
    if (error == 0 && unlinkat(parent, name, AT_REMOVEDIR) < 0 &&
        errno != ENOENT)
        error = tnd_error_sys("cannot remove %s", c->shown);
    return error;
}

/* Remove everything in the directory open at fd, which is closed. */
static int rm_entries(rmtree *c, int fd, int depth)
{
    struct dirent *e;
    int error = 0;
    DIR *d;

    if (!(d = fdopendir(fd))) {
        close(fd);
        return tnd_error_sys("cannot open %s", c->shown);
    }
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        if (c->stop && atomic_load(c->stop)) {
            error = tnd_error_set("the removal of %s was stopped", c->shown);
            break;
        }
        if (rm_entry(c, dirfd(d), e->d_name, depth) < 0)
            error = -1;
    }
    closedir(d);
    return error;
}

static int rmtree_at(int parent, const char *name, const char *shown,
                     const atomic_int *stop)
{
    rmtree c = {-1, shown, 0, false, stop};
    struct stat st;
    int error = 0, fd;

    if (fstatat(parent, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
        return errno == ENOENT ? 0 : tnd_error_sys("cannot remove %s", shown);
    if (!S_ISDIR(st.st_mode)) {
        if (unlinkat(parent, name, 0) < 0 && errno != ENOENT)
            return tnd_error_sys("cannot remove %s", shown);
        return 0;
    }
    if ((st.st_mode & 0700) != 0700)
        fchmodat(parent, name, (st.st_mode & 07777) | 0700, 0);
    c.top =
        openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (c.top < 0)
        return tnd_error_sys("cannot open %s", shown);
    /* again while a pass moved a deep directory up: each pass takes
     * RMTREE_DEPTH levels off what is left */
    do {
        c.again = false;
        if ((fd = fcntl(c.top, F_DUPFD_CLOEXEC, 0)) < 0) {
            error = tnd_error_sys("cannot open %s", shown);
            break;
        }
        /* the copy shares the offset: read from the start */
        lseek(fd, 0, SEEK_SET);
        error = rm_entries(&c, fd, 1);
    } while (error == 0 && c.again);
    close(c.top);
    if (error == 0 && unlinkat(parent, name, AT_REMOVEDIR) < 0 &&
        errno != ENOENT)
        error = tnd_error_sys("cannot remove %s", shown);
    return error;
}

int tnd_fs_rmtree(const char *path)
{
    return rmtree_at(AT_FDCWD, path, path, NULL);
}

int tnd_fs_rmtree_at(int dirfd, const char *name)
{
    return rmtree_at(dirfd, name, name, NULL);
}

int tnd_fs_rmtree_at_until(int dirfd, const char *name, const atomic_int *stop)
{
    return rmtree_at(dirfd, name, name, stop);
}
