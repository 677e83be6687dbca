/* Counting processes in /proc (see ptree.h). */
#include "skills/ptree.h"

#include <ctype.h>
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/xalloc.h"

/* Most bytes read of one thread's children list: 16 KiB is over 2,000
 * pids, more than any limit this counts against. */
#define LIST_MAX (16 * 1024)

/* Append the children of every thread of pid (from
 * /proc/PID/task/TID/children) to *list. */
static void children(pid_t pid, pid_t **list, size_t *n, size_t *alloc)
{
    char path[64], *buf = tnd_xmalloc(LIST_MAX + 1);
    DIR *d;
    struct dirent *e;

    snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
    if (!(d = opendir(path))) {
        free(buf);
        return;
    }
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
}

long tnd_ptree_count_below(pid_t pid, long cap)
{
    pid_t *list = NULL;
    size_t n = 0, alloc = 0, next = 0;

    children(pid, &list, &n, &alloc);
    /* breadth first; each found process's own children are added */
    while (next < n && (long)n <= cap)
        children(list[next++], &list, &n, &alloc);
    free(list);
    return (long)n > cap ? cap + 1 : (long)n;
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
            n++;
    closedir(d);
    return n;
}
