/* Adopting and ending orphaned descendants (see reap.h).
 *
 * The children of this process are found in /proc (the ppid field of
 * each /proc/PID/stat), which every Linux has, rather than in
 * /proc/self/task/TID/children, which needs CONFIG_PROC_CHILDREN.
 *
 * Why a scan that finds no stray means there is none: every live
 * descendant of a dead agent has an ancestor that is our child (the
 * nearest one alive, or the one whose exit made it ours), and a child of
 * ours stays one, alive or zombie, until we reap it, so it is in every
 * scan that runs while it exists. Only its own children can become ours
 * after a scan, and only once it has exited; by then it waits for us as
 * a zombie, and we scan again after each reap. */
#include "skills/reap.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/clock.h"
#include "common/error.h"
#include "common/pidwait.h"
#include "common/xalloc.h"
#include "skills/proc.h"

/* Strays named in the error when some would not die. */
#define NAMED_MAX 8

typedef struct stray {
    pid_t pid;
    pid_t pgid;
} stray;

int tnd_reap_adopt(void)
{
    if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0)
        return tnd_error_sys("cannot become the parent of orphaned "
                             "descendants (PR_SET_CHILD_SUBREAPER)");
    return 0;
}

/* The state, parent and process group of pid from /proc/PID/stat: "PID
 * (COMM) STATE PPID PGRP ...". COMM may hold spaces and parentheses, so
 * the fields are read after the last ')'. -1 when pid is gone. */
static int read_stat_state(char *state_out, pid_t *ppid, pid_t *pgid,
                           const char *pid)
{
    char path[64], text[512], state;
    const char *close_paren;
    long parent, group;
    ssize_t n;
    int fd;

    snprintf(path, sizeof(path), "/proc/%s/stat", pid);
    if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
        return -1;
    do
        n = read(fd, text, sizeof(text) - 1);
    while (n < 0 && errno == EINTR);
    close(fd);
    if (n <= 0)
        return -1;
    text[n] = '\0';
    if (!(close_paren = strrchr(text, ')')) ||
        sscanf(close_paren + 1, " %c %ld %ld", &state, &parent, &group) != 3)
        return -1;
    *ppid = (pid_t)parent;
    *pgid = (pid_t)group;
    *state_out = state;
    return 0;
}

static int read_stat(pid_t *ppid, pid_t *pgid, const char *pid)
{
    char state;

    return read_stat_state(&state, ppid, pgid, pid);
}

static int kept(pid_t pid, const pid_t *keep, size_t nkeep)
{
    for (size_t i = 0; i < nkeep; i++)
        if (keep[i] == pid)
            return 1;
    return 0;
}

/* Our children not in keep, zombies included. -1 (error set) when /proc
 * cannot be listed. */
static int find_strays(stray **out, size_t *n, size_t *alloc, const pid_t *keep,
                       size_t nkeep)
{
    pid_t self = getpid(), ppid, pgid;
    struct dirent *e;
    DIR *proc;

    *n = 0;
    if (!(proc = opendir("/proc")))
        return tnd_error_sys("cannot list the processes in /proc");
    while ((e = readdir(proc)) != NULL) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);

        if (pid <= 0 || *end || read_stat(&ppid, &pgid, e->d_name) < 0 ||
            ppid != self || kept((pid_t)pid, keep, nkeep) ||
            tnd_proc_is_running((pid_t)pid))
            continue;
        TND_GROW(*out, *alloc, *n + 1);
        (*out)[(*n)++] = (stray){(pid_t)pid, pgid};
    }
    closedir(proc);
    return 0;
}

/* May the whole group go? Not ours, nor one a kept child is in. */
static int group_is_strays(pid_t pgid, const pid_t *keep, size_t nkeep)
{
    if (pgid <= 1 || pgid == getpgrp())
        return 0;
    for (size_t i = 0; i < nkeep; i++)
        if (keep[i] == pgid || getpgid(keep[i]) == pgid)
            return 0;
    return 1;
}

static void name_strays(const stray *s, size_t n)
{
    tnd_buf b;

    tnd_buf_init(&b, TND_BUF_NOCAP);
    for (size_t i = 0; i < n && i < NAMED_MAX; i++)
        tnd_buf_printf(&b, "%s%ld", i ? ", " : "", (long)s[i].pid);
    if (n > NAMED_MAX)
        tnd_buf_printf(&b, " and %zu more", n - NAMED_MAX);
    tnd_error_set("%zu orphaned process%s would not die after SIGKILL "
                  "(pid %s)",
                  n, n == 1 ? "" : "es", tnd_buf_str(&b));
    tnd_buf_free(&b);
}

/* Until one of the n strays may have died, or the deadline. */
static void wait_strays(const stray *s, size_t n, int64_t deadline)
{
    pid_t *pids = tnd_xcalloc(n, sizeof(pid_t));

    for (size_t i = 0; i < n; i++)
        pids[i] = s[i].pid;
    tnd_pid_wait_any(pids, n, deadline);
    free(pids);
}

int tnd_reap_strays(size_t *out, const pid_t *keep, size_t nkeep, long wait_ms)
{
    int64_t deadline = tnd_now_ms() + (wait_ms > 0 ? wait_ms : 0);
    stray *s = NULL;
    size_t n = 0, alloc = 0, left;
    int error = 0;

    *out = 0;
    for (;;) {
        /* no program of another thread's tnd_proc_run starts meanwhile,
         * so every child that is not listed there is a leftover */
        tnd_proc_children_lock();
        if ((error = find_strays(&s, &n, &alloc, keep, nkeep)) < 0 || !n) {
            tnd_proc_children_unlock();
            break;
        }
        /* the group first, while its member holds the id unreaped */
        for (size_t i = 0; i < n; i++) {
            if (group_is_strays(s[i].pgid, keep, nkeep))
                kill(-s[i].pgid, SIGKILL);
            kill(s[i].pid, SIGKILL);
        }
        tnd_proc_children_unlock();
        left = 0;
        for (size_t i = 0; i < n; i++) {
            pid_t got;

            do
                got = waitpid(s[i].pid, NULL, WNOHANG);
            while (got < 0 && errno == EINTR);
            if (got == s[i].pid)
                (*out)++;
            else if (got == 0)
                s[left++] = s[i];
        }
        if (!left)
            continue; /* what they left is ours now: look again */
        if (tnd_now_ms() >= deadline) {
            name_strays(s, left);
            error = TND_ETIMEOUT;
            break;
        }
        wait_strays(s, left, deadline);
    }
    free(s);
    return error;
}

int tnd_reap_zombies(size_t *out, const pid_t *keep, size_t nkeep)
{
    pid_t self = getpid(), ppid, pgid;
    struct dirent *e;
    DIR *proc;
    char state;

    *out = 0;
    if (!(proc = opendir("/proc")))
        return tnd_error_sys("cannot list the processes in /proc");
    /* a program another thread's tnd_proc_run waits for is its own */
    tnd_proc_children_lock();
    while ((e = readdir(proc)) != NULL) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);

        if (pid <= 0 || *end ||
            read_stat_state(&state, &ppid, &pgid, e->d_name) < 0 ||
            ppid != self || state != 'Z' || kept((pid_t)pid, keep, nkeep) ||
            tnd_proc_is_running((pid_t)pid))
            continue;
        if (waitpid((pid_t)pid, NULL, WNOHANG) == (pid_t)pid)
            (*out)++;
    }
    tnd_proc_children_unlock();
    closedir(proc);
    return 0;
}
