/* An audit's running sandbox, entered by its skills (see holder.h).
 *
 * bwrap is started with posix_spawn rather than through skills/proc.c,
 * which waits for its program to end: a holder runs until the audit
 * ends. Every pipe is close-on-exec and lifted above the descriptors the
 * child gets (0..3), so another thread's fork inherits none and the
 * child's dup2s never meet their own source; everything else is closed
 * in the child. bwrap's stderr goes to a pipe read only when it fails,
 * and cat's stdout to one read once, for the line that says the sandbox
 * is built; their read ends stay open while the holder runs, so a late
 * word from either never meets a closed pipe. */
#include "skills/holder.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/log.h"
#include "common/pidwait.h"
#include "common/str.h"
#include "common/xalloc.h"
#include "skills/bwrap.h"
#include "skills/env.h"
#include "skills/proc.h"
#include "skills/sandbox.h"

extern char **environ;

/* How long bwrap may take to say the sandbox is up, and to end once its
 * pipe is closed. */
#define START_MS 10000
#define STOP_MS  2000
/* The descriptor bwrap writes its info to, in the child. */
#define INFO_FD 3
/* The enter program's prefix on its own messages (enter_main.c). */
#define ENTER_PREFIX "tandem-sandbox-enter: "

struct tnd_holder {
    pid_t bwrap;              /* our child, reaped in tnd_holder_stop */
    long pid;                 /* the first process inside */
    unsigned long long start; /* its start time (/proc/PID/stat) */
    int hold;                 /* write end of the command's stdin */
    int out;                  /* read end of its stdout */
    int err;                  /* read end of bwrap's stderr */
};

static void close_fd(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

/* A close-on-exec pipe with both ends above INFO_FD. */
static int lifted_pipe(int fds[2])
{
    int raw[2];

    fds[0] = fds[1] = -1;
    if (pipe2(raw, O_CLOEXEC) < 0)
        return tnd_error_sys("cannot create a pipe");
    fds[0] = fcntl(raw[0], F_DUPFD_CLOEXEC, INFO_FD + 1);
    fds[1] = fcntl(raw[1], F_DUPFD_CLOEXEC, INFO_FD + 1);
    close(raw[0]);
    close(raw[1]);
    if (fds[0] < 0 || fds[1] < 0) {
        close_fd(&fds[0]);
        close_fd(&fds[1]);
        return tnd_error_sys("cannot create a pipe");
    }
    return 0;
}

/* Read fd into buf until it holds a '}' (bwrap's info is one JSON
 * object), EOF, or deadline. */
static void read_info(int fd, char *buf, size_t size, int64_t deadline)
{
    size_t n = 0;

    buf[0] = '\0';
    while (n + 1 < size && !strchr(buf, '}')) {
        struct pollfd p = {fd, POLLIN, 0};
        int64_t left = deadline - tnd_now_ms();
        ssize_t got;
        if (left <= 0 || poll(&p, 1, (int)left) == 0)
            return;
        got = read(fd, buf + n, size - 1 - n);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return;
        n += (size_t)got;
        buf[n] = '\0';
    }
}

/* Whether a line comes on fd before deadline. */
static bool read_line(int fd, int64_t deadline)
{
    char c;

    for (;;) {
        struct pollfd p = {fd, POLLIN, 0};
        int64_t left = deadline - tnd_now_ms();
        ssize_t got;
        if (left <= 0 || poll(&p, 1, (int)left) == 0)
            return false;
        got = read(fd, &c, 1);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return false;
        if (c == '\n')
            return true;
    }
}

/* Field 22 of /proc/pid/stat, or 0. */
static unsigned long long start_time(long pid)
{
    char path[64], buf[1024], *p;
    FILE *f;
    size_t n;

    snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
    if (!(f = fopen(path, "re")))
        return 0;
    n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    if (!(p = strrchr(buf, ')')))
        return 0;
    p++;
    for (int field = 3; field < 22; field++) {
        p += strspn(p, " ");
        p += strcspn(p, " ");
    }
    return strtoull(p, NULL, 10);
}

/* Wait for bwrap (until deadline, then SIGKILL) and reap it. */
static void end_bwrap(pid_t pid, int64_t deadline)
{
    pid_t got;

    if (tnd_pid_wait_any(&pid, 1, deadline) == 0 ||
        waitpid(pid, NULL, WNOHANG) == 0)
        kill(pid, SIGKILL);
    do
        got = waitpid(pid, NULL, 0);
    while (got < 0 && errno == EINTR);
}

/* What bwrap said on its way out, first line; caller frees. */
static char *what_it_said(int fd)
{
    char buf[512];
    ssize_t n;

    do
        n = read(fd, buf, sizeof(buf) - 1);
    while (n < 0 && errno == EINTR);
    buf[n > 0 ? n : 0] = '\0';
    buf[strcspn(buf, "\n")] = '\0';
    return tnd_xstrdup(*buf ? buf : "it ended without saying why");
}

static int spawn(pid_t *pid, char **argv, char *const *envp, int in, int out,
                 int err, int info)
{
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    sigset_t none, all;
    int rc;

    posix_spawn_file_actions_init(&fa);
    posix_spawnattr_init(&attr);
    sigemptyset(&none);
    sigfillset(&all);
    posix_spawn_file_actions_adddup2(&fa, in, 0);
    posix_spawn_file_actions_adddup2(&fa, out, 1);
    posix_spawn_file_actions_adddup2(&fa, err, 2);
    posix_spawn_file_actions_adddup2(&fa, info, INFO_FD);
    posix_spawn_file_actions_addclosefrom_np(&fa, INFO_FD + 1);
    /* a group of its own, as a skill's bwrap has: a signal to the
     * reviewer's group is not the holder's business */
    posix_spawnattr_setpgroup(&attr, 0);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setsigdefault(&attr, &all);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP |
                                        POSIX_SPAWN_SETSIGMASK |
                                        POSIX_SPAWN_SETSIGDEF);
    rc = posix_spawn(pid, argv[0], &fa, &attr, argv, envp ? envp : environ);
    posix_spawnattr_destroy(&attr);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) {
        errno = rc;
        return tnd_error_sys("cannot start %s", argv[0]);
    }
    return 0;
}

tnd_holder *tnd_holder_start(const char *bwrap, const char *workspace,
                             const char *home, const char *tmpdir, bool network,
                             char *const *envp)
{
    int in[2] = {-1, -1}, out[2] = {-1, -1}, err[2] = {-1, -1};
    int info[2] = {-1, -1};
    const char *cat_argv[] = {NULL, NULL};
    char *cat = NULL, **argv = NULL, buf[1024], *at, *said;
    tnd_holder *h = NULL;
    tnd_sandbox_spec sb;
    pid_t pid = -1;
    long child = 0;
    int64_t deadline;
    bool ready = false;

    if (tnd_sandbox_resolve(&cat, "cat", tnd_env_get(envp, "PATH"), workspace,
                            NULL) < 0)
        return NULL;
    cat_argv[0] = cat;
    memset(&sb, 0, sizeof(sb));
    sb.bwrap = bwrap;
    sb.workspace = workspace;
    sb.argv = cat_argv;
    sb.home = home;
    sb.tmpdir = tmpdir;
    sb.network = network;
    sb.info_fd = INFO_FD;
    argv = tnd_sandbox_argv(&sb);
    if (lifted_pipe(in) < 0 || lifted_pipe(out) < 0 || lifted_pipe(err) < 0 ||
        lifted_pipe(info) < 0 ||
        spawn(&pid, argv, envp, in[0], out[1], err[1], info[1]) < 0)
        goto out;
    close_fd(&in[0]);
    close_fd(&out[1]);
    close_fd(&err[1]);
    close_fd(&info[1]);
    deadline = tnd_now_ms() + START_MS;
    read_info(info[0], buf, sizeof(buf), deadline);
    if ((at = strstr(buf, "\"child-pid\":")))
        child = strtol(at + strlen("\"child-pid\":"), NULL, 10);
    /* bwrap tells the pid before it builds the sandbox; cat running,
     * and echoing a line, says it is built */
    if (child > 0 && write(in[1], "\n", 1) == 1)
        ready = read_line(out[0], deadline);
    if (!ready) {
        close_fd(&in[1]); /* its command ends, if it started */
        end_bwrap(pid, tnd_now_ms() + STOP_MS);
        said = what_it_said(err[0]);
        tnd_error_set("cannot start the audit's sandbox with %s: %s", bwrap,
                      said);
        free(said);
        goto out;
    }
    h = tnd_xcalloc(1, sizeof(*h));
    h->bwrap = pid;
    h->pid = child;
    h->start = start_time(child);
    h->hold = in[1];
    h->out = out[0];
    h->err = err[0];
    in[1] = out[0] = err[0] = -1;
out:
    close_fd(&in[0]);
    close_fd(&in[1]);
    close_fd(&out[0]);
    close_fd(&out[1]);
    close_fd(&err[0]);
    close_fd(&err[1]);
    close_fd(&info[0]);
    close_fd(&info[1]);
    tnd_str_list_free(&argv);
    free(cat);
    return h;
}

char **tnd_holder_argv(const tnd_holder *self, const char *enter,
                       const char *dir, const char *const *argv)
{
    size_t n = 0, i = 0;
    char **out;

    while (argv[n])
        n++;
    out = tnd_xcalloc(n + 6, sizeof(*out));
    out[i++] = tnd_xstrdup(enter);
    out[i++] = tnd_xasprintf("%ld", self->pid);
    out[i++] = tnd_xasprintf("%llu", self->start);
    out[i++] = tnd_xstrdup(dir);
    out[i++] = tnd_xstrdup("--");
    for (size_t k = 0; k < n; k++)
        out[i++] = tnd_xstrdup(argv[k]);
    return out;
}

bool tnd_holder_failed(const char *output, int code)
{
    return code >= TND_HOLDER_NOT_ENTERED && code <= 127 && output &&
           strncmp(output, ENTER_PREFIX, strlen(ENTER_PREFIX)) == 0;
}

void tnd_holder_stop(tnd_holder **self_p)
{
    tnd_holder *h = *self_p;

    if (!h)
        return;
    *self_p = NULL;
    close_fd(&h->hold);
    end_bwrap(h->bwrap, tnd_now_ms() + STOP_MS);
    close_fd(&h->out);
    close_fd(&h->err);
    free(h);
}

/* ---- the check, once per process ---------------------------------------- */

/* Enter a holder in an empty directory and run `true`: 0 when it
 * passes, else -1 with what went wrong. */
static int probe(const char *enter, const char *bwrap)
{
    const char *tmp = getenv("TMPDIR");
    char *dir = tnd_xasprintf("%s/tandem-probe-XXXXXX",
                              tmp && *tmp == '/' ? tmp : "/tmp");
    const char *true_argv[] = {NULL, NULL};
    char *truth = NULL, **argv = NULL, *said = NULL;
    tnd_holder *h = NULL;
    int error = -1;

    if (!mkdtemp(dir)) {
        tnd_error_sys("cannot make a directory %s", dir);
        goto out;
    }
    if (tnd_sandbox_resolve(&truth, "true", getenv("PATH"), dir, NULL) < 0 ||
        !(h = tnd_holder_start(bwrap, dir, getenv("HOME"), tmp, false, NULL)))
        goto out;
    true_argv[0] = truth;
    argv = tnd_holder_argv(h, enter, dir, true_argv);
    if ((error = tnd_bwrap_try((const char *const *)argv, dir, &said)) < 0 &&
        said)
        tnd_error_set("%s cannot enter a running sandbox: %s", enter, said);
    free(said);
out:
    tnd_str_list_free(&argv);
    tnd_holder_stop(&h);
    free(truth);
    rmdir(dir);
    free(dir);
    return error;
}

static pthread_mutex_t check_lock = PTHREAD_MUTEX_INITIALIZER;
static bool checked;
static char *found; /* the program, when entering works */

static char *find_enter(void)
{
    const char *env = getenv("TANDEM_SANDBOX_ENTER");
    char *self, *path;

    if (env && *env)
        path = tnd_xstrdup(env);
    else {
        self = tnd_fs_self_dir();
        path = tnd_xasprintf("%s/tandem-sandbox-enter", self ? self : ".");
        free(self);
    }
    /* absolute: a skill runs it from the workspace */
    if (access(path, X_OK) == 0 && (self = realpath(path, NULL))) {
        free(path);
        return self;
    }
    tnd_error_sys("%s cannot be run", path);
    free(path);
    return NULL;
}

int tnd_holder_check(const char **enter, const char *bwrap)
{
    pthread_mutex_lock(&check_lock);
    if (!checked) {
        char *program = find_enter();
        checked = true;
        if (program && probe(program, bwrap) == 0)
            found = program;
        else {
            free(program);
            tnd_log_warn("skills start a sandbox each, not one per audit: %s "
                         "(fix: install tandem-sandbox-enter beside "
                         "tandem-reviewer, or set TANDEM_SANDBOX_ENTER)",
                         tnd_error_last());
        }
    }
    pthread_mutex_unlock(&check_lock);
    *enter = found;
    if (found)
        return 0;
    return tnd_error_set("no program to enter a running sandbox");
}

void tnd_holders_start(tnd_holders *self, const bool need[2],
                       const char *workspace, char *const *envp)
{
    const char *bwrap = NULL;
    char *dir = NULL;

    memset(self, 0, sizeof(*self));
    if (!need[0] && !need[1])
        return;
    if (tnd_bwrap_check(&bwrap) < 0 ||
        tnd_holder_check(&self->enter, bwrap) < 0) {
        self->enter = NULL;
        return;
    }
    if (workspace[0] != '/' && !(dir = tnd_fs_realpath(workspace)))
        return;
    for (int net = 0; net < 2; net++) {
        if (!need[net])
            continue;
        self->shape[net] = tnd_holder_start(
            bwrap, dir ? dir : workspace, tnd_env_get(envp, "HOME"),
            tnd_env_get(envp, "TMPDIR"), net == 1, envp);
        if (!self->shape[net])
            tnd_log_warn("the skills%s of this audit start a sandbox each: %s",
                         net ? " with network: true" : "", tnd_error_last());
    }
    free(dir);
}

void tnd_holders_stop(tnd_holders *self)
{
    for (int net = 0; net < 2; net++)
        tnd_holder_stop(&self->shape[net]);
    memset(self, 0, sizeof(*self));
}
