/* A pids cgroup per skill run (see cgroup.h).
 *
 * Where: /proc/self/cgroup names this process's cgroup in each hierarchy,
 * /proc/self/mountinfo where each hierarchy is mounted (and which part of
 * it, in a container); the new cgroup is a child of ours there. Names are
 * tandem-skill-PID-N, so one left behind by a reviewer that was killed
 * can be told and removed by the next. */
#include "skills/cgroup.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/error.h"
#include "common/xalloc.h"

/* How long destroy waits for the killed processes to be gone. */
#define EMPTY_WAIT_MS 1000
/* Its naps while it waits: the first short, since what is left after a
 * run is usually a process already dying (bwrap exits before its
 * namespace's init, which its death then kills), then doubling. */
#define FIRST_NAP_US 50
#define LAST_NAP_US  2000
/* Rounds of reading cgroup.procs and killing what it lists (v1, or a
 * kernel without cgroup.kill): a fork that raced the read is caught by
 * the next round, and pids.max bounds how many there can be. */
#define KILL_ROUNDS 16
#define FILE_MAX    (256 * 1024)

struct tnd_cgroup {
    char *dir;   /* the cgroup's directory */
    int join_fd; /* the file a process joins it by, for writing */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned next_seq;
static bool swept;
/* Where this process makes its cgroups, or why it cannot, once found:
 * finding out reads /proc/self/cgroup and the whole mount table, which
 * every skill run would pay. The place is forgotten when a mkdir there
 * says it is gone. */
static char *parent_found, *parent_reason;
static bool parent_v1; /* parent_found is in the v1 pids hierarchy */
/* Where the finding reads this process's cgroups and the mount table:
 * /proc/self's, or a test's files (tnd_cgroup_set_proc_files). */
static char *cgroup_file, *mountinfo_file;

/* A small file of the kernel's, NUL-terminated; NULL when unreadable.
 * (/proc and cgroupfs files report size 0, so tnd_fs_read cannot.) */
static char *slurp(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    char *buf;
    size_t len = 0;
    ssize_t n;

    if (fd < 0)
        return NULL;
    buf = tnd_xmalloc(FILE_MAX + 1);
    while (len < FILE_MAX && (n = read(fd, buf + len, FILE_MAX - len)) > 0)
        len += (size_t)n;
    close(fd);
    buf[len] = '\0';
    return buf;
}

static int write_text(const char *path, const char *text)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    ssize_t n;
    int err;

    if (fd < 0)
        return -1;
    n = write(fd, text, strlen(text));
    err = errno;
    close(fd);
    errno = err;
    return n == (ssize_t)strlen(text) ? 0 : -1;
}

/* item is one of the comma-separated words of list. */
static bool has_word(const char *list, const char *item, size_t n)
{
    for (const char *p = list; p && *p;) {
        size_t len = strcspn(p, ", \n");
        if (len == n && strncmp(p, item, n) == 0)
            return true;
        p += len;
        p += strspn(p, ", \n");
    }
    return false;
}

/* This process's cgroup path in the v2 hierarchy (v2) or in the v1 one
 * that has the pids controller. Caller frees; NULL when none. */
static char *own_path(bool v2)
{
    char *text = slurp(cgroup_file ? cgroup_file : "/proc/self/cgroup");
    char *out = NULL;

    for (char *line = text; line && *line && !out;) {
        char *end = strchr(line, '\n'), *c1, *c2;
        if (end)
            *end = '\0';
        /* "ID:CONTROLLERS:PATH"; v2's is "0::PATH" */
        c1 = strchr(line, ':');
        c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        if (c2) {
            *c2 = '\0';
            if (v2 ? c2 == c1 + 1 && strncmp(line, "0:", 2) == 0
                   : has_word(c1 + 1, "pids", 4))
                out = tnd_xstrdup(c2 + 1);
        }
        line = end ? end + 1 : NULL;
    }
    free(text);
    return out;
}

/* mountinfo escapes blanks and backslashes as \ooo. */
static void unescape(char *s)
{
    char *o = s;

    for (; *s; s++)
        if (s[0] == '\\' && s[1] >= '0' && s[1] <= '7' && s[2] && s[3]) {
            *o++ = (char)(((s[1] - '0') << 6) | ((s[2] - '0') << 3) |
                          (s[3] - '0'));
            s += 3;
        } else {
            *o++ = *s;
        }
    *o = '\0';
}

/* The directory of path (this process's cgroup) in the hierarchy: v2's
 * mount, or the cgroup v1 mount with the pids controller. Caller frees;
 * NULL when it is not mounted here. */
static char *place(const char *path, bool v2)
{
    char *text =
        slurp(mountinfo_file ? mountinfo_file : "/proc/self/mountinfo");
    char *out = NULL;

    for (char *line = text; line && *line && !out;) {
        char *end = strchr(line, '\n'), *f[6], *dash, *type, *opts, *save;
        int i = 0;
        if (end)
            *end = '\0';
        dash = strstr(line, " - ");
        if (dash) {
            *dash = '\0';
            for (char *t = strtok_r(line, " ", &save); t && i < 6;
                 t = strtok_r(NULL, " ", &save))
                f[i++] = t;
            type = strtok_r(dash + 3, " ", &save);
            (void)strtok_r(NULL, " ", &save); /* the source */
            opts = strtok_r(NULL, " ", &save);
            if (i >= 5 && type &&
                (v2 ? strcmp(type, "cgroup2") == 0
                    : strcmp(type, "cgroup") == 0 && opts &&
                          has_word(opts, "pids", 4))) {
                const char *root = f[3], *rest = path;
                unescape(f[3]);
                unescape(f[4]);
                if (strcmp(root, "/") != 0) {
                    size_t n = strlen(root);
                    rest = strncmp(path, root, n) == 0 &&
                                   (path[n] == '/' || path[n] == '\0')
                               ? path + n
                               : NULL;
                }
                if (rest)
                    out = tnd_xasprintf("%s%s", f[4],
                                        strcmp(rest, "/") == 0 ? "" : rest);
            }
        }
        line = end ? end + 1 : NULL;
    }
    free(text);
    return out;
}

/* Our cgroup's directory where a child with a pids limit can be made:
 * v2 with pids enabled for children (or enabled now), else v1's pids
 * hierarchy (*v1 set). Caller frees; NULL with the reason. */
static char *parent_dir(bool *v1)
{
    char *path = own_path(true), *dir = path ? place(path, true) : NULL;

    if (dir) {
        char *ctl = tnd_xasprintf("%s/cgroup.subtree_control", dir);
        char *have = slurp(ctl);
        bool ok = have && has_word(have, "pids", 4);
        if (!ok)
            ok = write_text(ctl, "+pids") == 0;
        free(have);
        free(ctl);
        if (!ok) {
            free(dir);
            dir = NULL;
        }
    }
    free(path);
    *v1 = false;
    if (dir)
        return dir;
    path = own_path(false);
    dir = path ? place(path, false) : NULL;
    free(path);
    *v1 = true;
    if (dir && access(dir, W_OK) == 0)
        return dir;
    free(dir);
    tnd_error_set("no pids cgroup can be made here (the pids controller is "
                  "neither enabled below this process's cgroup v2 nor "
                  "mounted writable as cgroup v1)");
    return NULL;
}

/* Remove the empty cgroups of ours whose process is gone. */
static void sweep(const char *parent)
{
    DIR *d = opendir(parent);
    struct dirent *e;

    while (d && (e = readdir(d))) {
        int pid;
        unsigned seq;
        char tail;
        if (sscanf(e->d_name, "tandem-skill-%d-%u%c", &pid, &seq, &tail) == 2 &&
            pid > 0 && kill(pid, 0) < 0 && errno == ESRCH)
            (void)unlinkat(dirfd(d), e->d_name, AT_REMOVEDIR);
    }
    if (d)
        closedir(d);
}

/* The parent for a new cgroup (caller frees), found now when stale or
 * not found yet; its sequence number in *seq, whether it is v1's in *v1.
 * NULL with the reason. */
static char *parent_for_new(unsigned *seq, bool *v1, bool stale)
{
    char *parent;

    pthread_mutex_lock(&lock);
    if (stale) {
        free(parent_found);
        parent_found = NULL;
    }
    if (!parent_found && !parent_reason &&
        !(parent_found = parent_dir(&parent_v1)))
        parent_reason = tnd_xstrdup(tnd_error_last());
    *v1 = parent_v1;
    if (parent_found)
        parent = tnd_xstrdup(parent_found);
    else {
        parent = NULL;
        tnd_error_set("%s", parent_reason);
    }
    *seq = next_seq++;
    if (parent && !swept) {
        swept = true;
        sweep(parent);
    }
    pthread_mutex_unlock(&lock);
    return parent;
}

void tnd_cgroup_set_proc_files(const char *cgroup, const char *mountinfo)
{
    pthread_mutex_lock(&lock);
    free(cgroup_file);
    free(mountinfo_file);
    cgroup_file = cgroup ? tnd_xstrdup(cgroup) : NULL;
    mountinfo_file = mountinfo ? tnd_xstrdup(mountinfo) : NULL;
    free(parent_found);
    free(parent_reason);
    parent_found = parent_reason = NULL;
    pthread_mutex_unlock(&lock);
}

tnd_cgroup *tnd_cgroup_new(long max_tasks)
{
    char *parent, *file, num[32];
    tnd_cgroup *cg;
    unsigned seq;
    bool v1 = false;
    int made;

    cg = tnd_xcalloc(1, sizeof(*cg));
    cg->join_fd = -1;
    for (int attempt = 0;; attempt++) {
        if (!(parent = parent_for_new(&seq, &v1, attempt > 0))) {
            free(cg);
            return NULL;
        }
        cg->dir =
            tnd_xasprintf("%s/tandem-skill-%d-%u", parent, (int)getpid(), seq);
        free(parent);
        made = mkdir(cg->dir, 0755);
        /* ENOENT: our own cgroup is no longer where it was found */
        if (made == 0 || errno != ENOENT || attempt > 0)
            break;
        free(cg->dir);
    }
    if (made < 0) {
        tnd_error_sys("cannot make the cgroup %s", cg->dir);
        free(cg->dir);
        free(cg);
        return NULL;
    }
    snprintf(num, sizeof(num), "%ld", max_tasks);
    file = tnd_xasprintf("%s/pids.max", cg->dir);
    if (write_text(file, num) < 0) {
        tnd_error_sys("cannot set %s", file);
    } else {
        free(file);
        /* v1's tasks moves only the thread that writes: a child just
         * forked, which is all of itself. cgroup.procs moves a whole
         * thread group under a lock whose taking waits for an RCU grace
         * period once writers have been idle (5-23 ms here: most of the
         * first skill start of every audit); v2 has no tasks file */
        file = tnd_xasprintf("%s/%s", cg->dir, v1 ? "tasks" : "cgroup.procs");
        if ((cg->join_fd = open(file, O_WRONLY | O_CLOEXEC)) < 0)
            tnd_error_sys("cannot open %s", file);
        else if (cg->join_fd <= 2) {
            /* 0 means "none" to tnd_proc_spec, and a child's stdio takes
             * 0..2: keep it above them */
            int high = fcntl(cg->join_fd, F_DUPFD_CLOEXEC, 3);
            close(cg->join_fd);
            cg->join_fd = high;
            if (high < 0)
                tnd_error_sys("cannot open %s", file);
        }
    }
    free(file);
    if (cg->join_fd < 0) {
        tnd_cgroup_destroy(&cg);
        return NULL;
    }
    return cg;
}

int tnd_cgroup_join_fd(const tnd_cgroup *self)
{
    return self->join_fd;
}

bool tnd_cgroup_refused(const tnd_cgroup *self)
{
    /* asked every tick a skill runs: a line on the stack, no slurp */
    char *file = tnd_xasprintf("%s/pids.events", self->dir);
    char text[256], *max;
    int fd = open(file, O_RDONLY | O_CLOEXEC);
    ssize_t n = fd >= 0 ? read(fd, text, sizeof(text) - 1) : -1;
    bool refused = false;

    if (fd >= 0)
        close(fd);
    if (n > 0) {
        text[n] = '\0';
        if ((max = strstr(text, "max ")))
            refused = strtol(max + 4, NULL, 10) > 0;
    }
    free(file);
    return refused;
}

void tnd_cgroup_kill(tnd_cgroup *self)
{
    char *file = tnd_xasprintf("%s/cgroup.kill", self->dir);

    if (write_text(file, "1") < 0) {
        free(file);
        file = tnd_xasprintf("%s/cgroup.procs", self->dir);
        for (int round = 0; round < KILL_ROUNDS; round++) {
            char *text = slurp(file), *p, *end;
            bool any = false;
            for (p = text; p && *p; p = end) {
                long pid = strtol(p, &end, 10);
                if (end == p)
                    break;
                if (pid > 0 && kill((pid_t)pid, SIGKILL) == 0)
                    any = true;
            }
            free(text);
            if (!any)
                break;
        }
    }
    free(file);
}

void tnd_cgroup_destroy(tnd_cgroup **self_p)
{
    tnd_cgroup *cg = self_p ? *self_p : NULL;
    int64_t until;

    if (!cg)
        return;
    if (cg->join_fd >= 0)
        close(cg->join_fd);
    until = tnd_now_ms() + EMPTY_WAIT_MS;
    /* an empty one goes at once; else kill what is in it, and the kernel
     * takes the killed tasks out as they exit */
    for (long nap_us = FIRST_NAP_US;
         rmdir(cg->dir) < 0 && errno == EBUSY && tnd_now_ms() < until;
         nap_us = nap_us * 2 > LAST_NAP_US ? LAST_NAP_US : nap_us * 2) {
        struct timespec nap = {0, nap_us * 1000};
        tnd_cgroup_kill(cg);
        nanosleep(&nap, NULL);
    }
    free(cg->dir);
    free(cg);
    *self_p = NULL;
}
