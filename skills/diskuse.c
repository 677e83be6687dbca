/* How much a skill wrote in its workspace (see diskuse.h). */
#include "skills/diskuse.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

/* A walk: what it counts against. */
typedef struct walk {
    struct timespec since;
    dev_t dev;
    unsigned long long bytes, stop;
} walk;

static bool changed_since(const struct stat *st, const struct timespec *t)
{
    return st->st_ctim.tv_sec > t->tv_sec ||
           (st->st_ctim.tv_sec == t->tv_sec &&
            st->st_ctim.tv_nsec >= t->tv_nsec);
}

/* Count the entries of the directory open at fd (closed here). */
static void walk_dir(walk *w, int fd, int depth)
{
    DIR *d = fdopendir(fd);
    struct dirent *e;

    if (!d) {
        close(fd);
        return;
    }
    while (w->bytes <= w->stop && (e = readdir(d))) {
        struct stat st;
        int sub;
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
            st.st_dev != w->dev)
            continue;
        if (changed_since(&st, &w->since)) {
            unsigned long long b = (unsigned long long)st.st_blocks * 512;
            w->bytes += b > TND_DISKUSE_ENTRY ? b : TND_DISKUSE_ENTRY;
        }
        if (!S_ISDIR(st.st_mode))
            continue;
        if (depth >= TND_DISKUSE_DEPTH) {
            w->bytes = w->stop + 1;
            break;
        }
        sub = openat(dirfd(d), e->d_name,
                     O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        if (sub >= 0) {
            walk_dir(w, sub, depth + 1);
        } else if ((errno == EACCES || errno == EPERM) &&
                   changed_since(&st, &w->since)) {
            /* closed to the walk since the skill started (chmod 0, say):
             * what it holds cannot be counted, so it counts as over */
            w->bytes = w->stop + 1;
            break;
        }
    }
    closedir(d);
}

unsigned long long tnd_diskuse_since(const char *dir,
                                     const struct timespec *since,
                                     unsigned long long stop)
{
    walk w = {*since, 0, 0, stop};
    struct stat st;
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

    if (fd < 0)
        return 0;
    if (fstat(fd, &st) < 0) {
        close(fd);
        return 0;
    }
    w.dev = st.st_dev;
    walk_dir(&w, fd, 1);
    return w.bytes;
}

/* The bytes in use on the filesystem dir is on, each inode in use
 * counted as TND_DISKUSE_ENTRY (see there); 0 when it cannot say. */
static unsigned long long used_bytes(const char *dir)
{
    struct statvfs s;
    unsigned long long used;

    if (statvfs(dir, &s) < 0 || s.f_blocks < s.f_bfree)
        return 0;
    used = (unsigned long long)(s.f_blocks - s.f_bfree) * s.f_frsize;
    /* none, on a filesystem that makes inodes as it needs them (btrfs) */
    if (s.f_files >= s.f_ffree)
        used += (unsigned long long)(s.f_files - s.f_ffree) * TND_DISKUSE_ENTRY;
    return used;
}

void tnd_diskuse_start(tnd_diskuse *d, const char *dir,
                       unsigned long long limit)
{
    memset(d, 0, sizeof(*d));
    d->dir = dir;
    d->limit = limit;
    if (!limit)
        return;
    /* the coarse clock: the one the filesystem stamps ctime with, so a
     * file written just after this is never stamped before it */
    clock_gettime(CLOCK_REALTIME_COARSE, &d->since);
    d->low = used_bytes(dir);
    d->next = d->low + limit;
}

bool tnd_diskuse_over(tnd_diskuse *d)
{
    unsigned long long used;

    if (!d->limit || d->over)
        return d->over;
    used = used_bytes(d->dir);
    if (used < d->low) {
        /* freed by anyone: the skill's room is measured from here */
        d->next -= d->low - used < d->next ? d->low - used : d->next;
        d->low = used;
    }
    if (used < d->next)
        return false;
    d->own = tnd_diskuse_since(d->dir, &d->since, d->limit);
    if (d->own > d->limit)
        return d->over = true;
    d->low = used;
    d->next = used + (d->limit - d->own);
    return false;
}
