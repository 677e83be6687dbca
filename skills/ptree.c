/* Counting processes and their threads in /proc (see ptree.h). */
#include "skills/ptree.h"

#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/xalloc.h"

/* Most bytes read of one thread's children list: 16 KiB is over 2,000
 * pids, more than any limit this counts against. */
#define LIST_MAX (16 * 1024)

/* The entries of a task directory that are threads (numbers), read
 * from the start. */
static long numbered(DIR *d)
{
    struct dirent *e;
    long n = 0;

    rewinddir(d);
    while ((e = readdir(d)))
        if (isdigit((unsigned char)e->d_name[0]))
            n++;
    return n;
}

/* The threads of the process /proc/NAME, opened beneath proc; at least
 * 1 (it was there a moment ago). */
static long threads(int proc, const char *name)
{
    char path[64];
    int fd;
    DIR *d;
    long n;

    snprintf(path, sizeof(path), "%.16s/task", name);
    if ((fd = openat(proc, path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
        return 1;
    if (!(d = fdopendir(fd))) {
        close(fd);
        return 1;
    }
    n = numbered(d);
    closedir(d);
    return n ? n : 1;
}

/* The threads of pid (the entries of /proc/PID/task; 0 when it is gone).
 * When there are at most room of them, the children of every thread
 * (/proc/PID/task/TID/children) are appended to *list; past room they
 * are not read: the count is over already, and a process of thousands
 * of threads would cost as many reads. */
static long tasks(pid_t pid, long room, pid_t **list, size_t *n, size_t *alloc)
{
    char path[64], *buf;
    DIR *d;
    struct dirent *e;
    long count;

    snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
    if (!(d = opendir(path)))
        return 0;
    if ((count = numbered(d)) > room) {
        closedir(d);
        return count;
    }
    rewinddir(d);
    buf = tnd_xmalloc(LIST_MAX + 1);
    while ((e = readdir(d))) {
        size_t len = 0;
        ssize_t got;
        char *p, *end;
        int fd;
        if (!isdigit((unsigned char)e->d_name[0]))
            continue;
        snprintf(path, sizeof(path), "/proc/%d/task/%.16s/children", (int)pid,
                 e->d_name);
        if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
            continue;
        while (len < LIST_MAX &&
               (got = read(fd, buf + len, LIST_MAX - len)) > 0)
            len += (size_t)got;
        close(fd);
        buf[len] = '\0';
        for (p = buf;; p = end) {
            long v = strtol(p, &end, 10);
            if (end == p)
                break;
            TND_GROW(*list, *alloc, *n + 1);
            (*list)[(*n)++] = (pid_t)v;
        }
    }
    closedir(d);
    free(buf);
    return count;
}

long tnd_ptree_count_below(pid_t pid, long cap)
{
    pid_t *list = NULL;
    size_t n = 0, alloc = 0, next = 0;
    long total = 0; /* the threads of list[0 .. next) */

    tasks(pid, LONG_MAX, &list, &n, &alloc);
    /* breadth first; each process found counts its threads, and adds its
     * own children; one not yet looked at counts at least its one */
    while (next < n && total + (long)(n - next) <= cap) {
        long room = cap - total - (long)(n - next - 1);
        total += tasks(list[next++], room, &list, &n, &alloc);
    }
    if (next < n)
        total = cap + 1;
    free(list);
    return total > cap ? cap + 1 : total;
}

long tnd_ptree_count_user(uid_t uid)
{
    DIR *d = opendir("/proc");
    struct dirent *e;
    struct stat st;
    long n = 0;

    if (!d)
        return 0;
    while ((e = readdir(d)))
        if (isdigit((unsigned char)e->d_name[0]) &&
            fstatat(dirfd(d), e->d_name, &st, 0) == 0 && st.st_uid == uid)
            n += threads(dirfd(d), e->d_name);
    closedir(d);
    return n;
}
