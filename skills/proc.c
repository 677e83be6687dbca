/* Run a child program with a deadline and bounded output (see proc.h).
 *
 * The caller is multi-threaded, so between the clone and execve() the
 * child only makes async-signal-safe calls (see start_child): everything it
 * needs (argv, envp, the PATH candidates for argv[0], the rlimits) is prepared
 * in a child_plan before the fork, and a close-on-exec status pipe carries the
 * errno of a failed chdir/setrlimit/exec back to the parent. The parent
 * then polls the child's stdin, stdout, stderr and a pidfd, so a child
 * that never reads its input cannot deadlock us, and keeps what
 * capture.h keeps of each stream (the head, a rolling tail, and the lines
 * between that name a failure), so memory stays bounded whatever the
 * child writes. Every pipe is
 * close-on-exec in the parent, so a fork in another thread cannot inherit
 * one and keep our reads from seeing EOF. */
#include "skills/proc.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/keyctl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/clock.h"
#include "common/error.h"
#include "common/pidwait.h"
#include "common/str.h"
#include "common/utf8.h"
#include "common/xalloc.h"
#include "skills/capture.h"

extern char **environ;

#define DEFAULT_CAP      (64 * 1024)
#define DEFAULT_GRACE_MS 2000
/* The longest poll(): how often *cancel is looked at. */
#define TICK_MS 50
/* How long we read on after the child exited and its group was killed:
 * only a process that left the group can still hold a pipe by then. */
#define DRAIN_MS   250
#define CHUNK      32768
#define MAX_LIMITS 4

/* Where the child was when it gave up; sent on the status pipe. */
enum {
    STAGE_SETUP = 1,
    STAGE_CGROUP,
    STAGE_KEYRING,
    STAGE_CWD,
    STAGE_LIMIT,
    STAGE_EXEC
};

typedef struct child_failure {
    int stage;
    int err;   /* errno */
    int limit; /* index into limit_table for STAGE_LIMIT */
} child_failure;

static const struct {
    int resource;
    const char *name;
} limit_table[MAX_LIMITS] = {{RLIMIT_CPU, "RLIMIT_CPU"},
                             {RLIMIT_AS, "RLIMIT_AS"},
                             {RLIMIT_FSIZE, "RLIMIT_FSIZE"},
                             {RLIMIT_NPROC, "RLIMIT_NPROC"}};

/* Everything the child needs, built before fork() so the child itself
 * allocates nothing and takes no locks. */
typedef struct child_plan {
    char *const *argv;
    char *const *envp;
    char **paths;    /* files to try as argv[0], in PATH order */
    const char *cwd; /* NULL: stay */
    int stdio[3];    /* become the child's fds 0, 1 and 2 (all >= 3);
                        stdio[0] == -1: /dev/null */
    int status_fd;   /* write end of the close-on-exec status pipe */
    int cgroup_fd;   /* the cgroup's join file; 0: none */
    int new_keyring; /* join a new session keyring */
    int nlimits;
    int limit_index[MAX_LIMITS]; /* into limit_table */
    struct rlimit limits[MAX_LIMITS];
    int max_fd;   /* fds to close when close_range() is missing */
    pid_t parent; /* getpid() before the fork */
} child_plan;

/* One of the child's output streams: its pipe and what is kept of it. */
typedef struct stream {
    int fd; /* read end; -1 once at EOF */
    tnd_capture cap;
} stream;

/* One tnd_proc_run() call as seen from the parent. */
typedef struct run {
    const tnd_proc_spec *spec;
    pid_t pid;     /* also the child's process group */
    int pidfd;     /* readable when the child exits; -1 if none */
    int in_fd;     /* write end of the child's stdin; -1 when done */
    size_t in_off; /* bytes of spec->input written */
    stream out, err;
    int wstatus; /* from waitpid() */
    int lost;    /* someone else reaped the child: no wstatus */
    int64_t start_ms, end_ms;
    tnd_proc_status stop; /* TIMEOUT or CANCELLED once we began killing */
} run;

static void close_fd(int *fd)
{
    if (*fd >= 0)
        close(*fd);
    *fd = -1;
}

static void close_pipe(int fds[2])
{
    close_fd(&fds[0]);
    close_fd(&fds[1]);
}

/* A close-on-exec copy of fd that is at least 3, so that the child's
 * dup2() onto 0..2 never meets its own source. */
static int lift(int fd)
{
    int high;

    if (fd < 0 || fd > 2)
        return fd;
    high = fcntl(fd, F_DUPFD_CLOEXEC, 3);
    close(fd);
    return high;
}

static int make_pipe(int fds[2])
{
    if (pipe2(fds, O_CLOEXEC) < 0)
        return tnd_error_sys("cannot create a pipe");
    fds[0] = lift(fds[0]);
    fds[1] = lift(fds[1]);
    if (fds[0] < 0 || fds[1] < 0) {
        tnd_error_sys("cannot create a pipe");
        close_pipe(fds);
        return -1;
    }
    return 0;
}

static void set_nonblock(int fd)
{
    int flags = fd >= 0 ? fcntl(fd, F_GETFL) : -1;

    if (flags >= 0)
        fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

/* --- the child, between fork() and execve(): async-signal-safe only --- */

static void child_fail(int fd, int stage, int err, int limit)
{
    child_failure f = {stage, err, limit};
    ssize_t n;

    do
        n = write(fd, &f, sizeof(f));
    while (n < 0 && errno == EINTR);
    _exit(127);
}

static void close_from(int lo, int max_fd)
{
#ifdef SYS_close_range
    if (syscall(SYS_close_range, (unsigned)lo, ~0U, 0) == 0)
        return;
#endif
    for (int fd = lo; fd < max_fd; fd++)
        close(fd);
}

/* Signals are all blocked on entry (see spawn()), so no handler of the
 * parent can run here and no call is interrupted. */
static void child_run(const child_plan *p)
{
    struct sigaction dfl;
    sigset_t none;
    int fd = p->status_fd, err = ENOENT, saw_eacces = 0, i;

    setpgid(0, 0);
    /* Die with the thread that runs us: an agent killed outright must not
     * leave its skill (or model program) running on, past its deadline.
     * That thread is blocked in tnd_proc_run() until we are reaped, so
     * it ends first only when the whole process dies. A parent that died
     * before prctl() sent no signal: then getppid() is no longer it. */
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
        child_fail(fd, STAGE_SETUP, errno, 0);
    if (getppid() != p->parent)
        _exit(127);
    /* before anything runs that could fork: all of it is in the cgroup
     * ("0", this thread: not our pid, which on v1 takes the slow lock,
     * skills/cgroup.h) */
    if (p->cgroup_fd > 0 && write(p->cgroup_fd, "0", 1) != 1)
        child_fail(fd, STAGE_CGROUP, errno, 0);
    /* a session keyring of its own, empty: the caller's (a login's,
     * kinit's, with the user keyring linked in) is inherited across
     * exec and into every namespace, and whoever possesses it reads
     * its keys. A kernel without keys has nothing to hide. */
    if (p->new_keyring &&
        syscall(SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, NULL) < 0 &&
        errno != ENOSYS)
        child_fail(fd, STAGE_KEYRING, errno, 0);
    memset(&dfl, 0, sizeof(dfl));
    dfl.sa_handler = SIG_DFL;
    for (i = 1; i < NSIG; i++)
        if (i != SIGKILL && i != SIGSTOP)
            sigaction(i, &dfl, NULL); /* EINVAL for libc's own: fine */
    if (p->stdio[0] < 0) {
        int nul = open("/dev/null", O_RDONLY);

        if (nul < 0 || (nul != 0 && dup2(nul, 0) < 0))
            child_fail(fd, STAGE_SETUP, errno, 0);
    }
    for (i = p->stdio[0] < 0 ? 1 : 0; i < 3; i++)
        if (dup2(p->stdio[i], i) < 0)
            child_fail(fd, STAGE_SETUP, errno, 0);
    if (fd != 3) {
        if (dup2(fd, 3) < 0 || fcntl(3, F_SETFD, FD_CLOEXEC) < 0)
            child_fail(fd, STAGE_SETUP, errno, 0);
        fd = 3;
    }
    close_from(4, p->max_fd);
    if (p->cwd && chdir(p->cwd) < 0)
        child_fail(fd, STAGE_CWD, errno, 0);
    for (i = 0; i < p->nlimits; i++) {
        int k = p->limit_index[i];

        if (setrlimit(limit_table[k].resource, &p->limits[i]) < 0)
            child_fail(fd, STAGE_LIMIT, errno, k);
    }
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    /* Like execvp(): skip candidates that are missing, remember one that
     * exists but may not be run, stop at any other error. */
    for (i = 0; p->paths[i]; i++) {
        execve(p->paths[i], p->argv, p->envp);
        if (errno == EACCES)
            saw_eacces = 1;
        else if (errno != ENOENT && errno != ENOTDIR && errno != ESTALE) {
            err = errno;
            break;
        }
    }
    if (err == ENOENT && saw_eacces)
        err = EACCES;
    child_fail(fd, STAGE_EXEC, err, 0);
}

/* --- starting the child --- */

/* Why not fork(): a fork copies the page tables of the whole process, and
 * the child's first writes fault pages in one by one; tandem serve is a
 * large process with a thread per session that starts git for each, and
 * the reviewer starts every skill. A clone that shares our memory and
 * suspends this thread until the child execs or exits (CLONE_VM |
 * CLONE_VFORK, what posix_spawn does) costs neither. posix_spawn itself
 * cannot set the death signal, the rlimits or the cgroup. The child only
 * writes its own stack and the status pipe; errno is this thread's, and
 * this thread waits. Sanitizer builds fork: the child's stack is
 * unknown to them. */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SPAWN_BY_FORK 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(memory_sanitizer)
#define SPAWN_BY_FORK 1
#endif
#endif
#ifndef SPAWN_BY_FORK
#define SPAWN_BY_FORK 0
#endif

/* The child's stack: child_run's frames and libc's thin wrappers. */
#define CHILD_STACK (256 * 1024)

static int child_entry(void *plan)
{
    child_run(plan);
    return 127; /* not reached: child_run execs or exits */
}

/* Start the child running plan. Its pid, or -1 with errno set. */
static pid_t start_child(const child_plan *plan)
{
    pid_t pid;
    void *stack = MAP_FAILED;

    if (!SPAWN_BY_FORK)
        stack = mmap(NULL, CHILD_STACK, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    if (stack != MAP_FAILED) {
        pid = clone(child_entry, (char *)stack + CHILD_STACK,
                    CLONE_VM | CLONE_VFORK | SIGCHLD, (void *)plan);
        munmap(stack, CHILD_STACK); /* the child has exec'd or exited */
        if (pid >= 0 || errno != EINVAL)
            return pid;
    }
    pid = fork();
    if (pid == 0)
        child_run(plan);
    return pid;
}

/* --- the parent: preparing the plan --- */

/* Files to try for prog: itself when it has a '/', else each PATH entry
 * of the child's environment (an empty entry is the working directory).
 * NULL-terminated; free with tnd_str_list_free(). */
static char **path_candidates(const char *prog, char *const *envp)
{
    const char *path = NULL, *p, *end;
    char **list = NULL;
    size_t n = 0, alloc = 0;

    if (!*prog || strchr(prog, '/')) {
        list = tnd_xcalloc(2, sizeof(*list));
        list[0] = tnd_xstrdup(prog);
        return list;
    }
    for (size_t i = 0; envp && envp[i]; i++)
        if (!strncmp(envp[i], "PATH=", 5)) {
            path = envp[i] + 5;
            break;
        }
    if (!path)
        path = "/bin:/usr/bin"; /* what execvp() uses */
    for (p = path;; p = end + 1) {
        end = strchr(p, ':');
        if (!end)
            end = p + strlen(p);
        TND_GROW(list, alloc, n + 2);
        if (end == p)
            list[n++] = tnd_xstrdup(prog);
        else
            list[n++] = tnd_xasprintf("%.*s/%s", (int)(end - p), p, prog);
        if (!*end)
            break;
    }
    list[n] = NULL;
    return list;
}

/* Limits the spec asks for, never above the current hard limit (raising
 * it would fail with EPERM, and a lower hard limit already holds). */
static void plan_limits(child_plan *plan, const tnd_proc_spec *spec)
{
    unsigned long long want[MAX_LIMITS] = {
        spec->rlimit_cpu_s > 0 ? (unsigned long long)spec->rlimit_cpu_s : 0,
        spec->rlimit_as_bytes, spec->rlimit_fsize_bytes,
        spec->rlimit_nproc > 0 ? (unsigned long long)spec->rlimit_nproc : 0};
    struct rlimit cur;

    for (int i = 0; i < MAX_LIMITS; i++) {
        rlim_t v = (rlim_t)want[i];

        if (!want[i])
            continue;
        if (getrlimit(limit_table[i].resource, &cur) < 0)
            cur.rlim_max = RLIM_INFINITY;
        if (cur.rlim_max < v)
            v = cur.rlim_max;
        plan->limit_index[plan->nlimits] = i;
        plan->limits[plan->nlimits].rlim_cur = v;
        plan->limits[plan->nlimits].rlim_max = v;
        /* at the soft CPU limit the kernel sends SIGXCPU, which says
         * which limit it was; at the hard one SIGKILL, which does not:
         * so the hard one is a second later */
        if (limit_table[i].resource == RLIMIT_CPU &&
            (cur.rlim_max == RLIM_INFINITY || cur.rlim_max > v))
            plan->limits[plan->nlimits].rlim_max = v + 1;
        plan->nlimits++;
    }
}

/* The children tnd_proc_run() started and has not reaped yet, in every
 * thread: a supervisor's sweep (skills/reap.h) must not take them for a
 * dead agent's leftovers. A fork happens with the lock held, so a sweep
 * that holds it sees every such child listed. */
static pthread_mutex_t children_lock = PTHREAD_MUTEX_INITIALIZER;
static pid_t *children;
static size_t nchildren, achildren;

void tnd_proc_children_lock(void)
{
    pthread_mutex_lock(&children_lock);
}

void tnd_proc_children_unlock(void)
{
    pthread_mutex_unlock(&children_lock);
}

bool tnd_proc_is_running(pid_t pid)
{
    for (size_t i = 0; i < nchildren; i++)
        if (children[i] == pid)
            return true;
    return false;
}

static void forget_child(pid_t pid)
{
    pthread_mutex_lock(&children_lock);
    for (size_t i = 0; i < nchildren; i++)
        if (children[i] == pid) {
            children[i] = children[--nchildren];
            break;
        }
    pthread_mutex_unlock(&children_lock);
}

static void reap(run *r)
{
    pid_t got;

    do
        got = waitpid(r->pid, &r->wstatus, 0);
    while (got < 0 && errno == EINTR);
    r->lost = got < 0;
    r->end_ms = tnd_now_ms();
    forget_child(r->pid);
}

static void report_failure(const child_failure *f, const tnd_proc_spec *spec)
{
    const char *prog = spec->argv[0];

    errno = f->err;
    if (f->stage == STAGE_EXEC)
        tnd_error_sys("cannot run '%s'", prog);
    else if (f->stage == STAGE_CGROUP)
        tnd_error_sys("cannot run '%s': cannot join its cgroup", prog);
    else if (f->stage == STAGE_KEYRING)
        tnd_error_sys("cannot run '%s': cannot make it a session keyring of "
                      "its own (the user's key quota reached? raise "
                      "kernel.keys.maxkeys, see keyrings(7))",
                      prog);
    else if (f->stage == STAGE_CWD)
        tnd_error_sys("cannot run '%s': cannot enter directory '%s'", prog,
                      spec->cwd);
    else if (f->stage == STAGE_LIMIT && f->limit >= 0 && f->limit < MAX_LIMITS)
        tnd_error_sys("cannot run '%s': cannot set %s", prog,
                      limit_table[f->limit].name);
    else
        tnd_error_sys("cannot run '%s': cannot set up the child process", prog);
}

/* Start the child. On success r holds its pid and our ends of its pipes;
 * on failure nothing is left open and no child is left unreaped. */
static int spawn(run *r)
{
    const tnd_proc_spec *spec = r->spec;
    int in[2] = {-1, -1}, outp[2] = {-1, -1}, errp[2] = {-1, -1};
    int status[2] = {-1, -1}, error = -1;
    child_failure f;
    child_plan plan;
    sigset_t all, saved;
    struct rlimit nofile;
    ssize_t n;

    memset(&plan, 0, sizeof(plan));
    plan.argv = (char *const *)spec->argv;
    plan.envp = spec->envp ? (char *const *)spec->envp : environ;
    plan.paths = path_candidates(spec->argv[0], plan.envp);
    plan.cwd = spec->cwd;
    plan.parent = getpid();
    plan.max_fd = 65536;
    if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur < 65536)
        plan.max_fd = (int)nofile.rlim_cur;
    plan_limits(&plan, spec);

    if ((spec->input && make_pipe(in) < 0) || make_pipe(outp) < 0 ||
        (!spec->merge_stderr && make_pipe(errp) < 0) || make_pipe(status) < 0)
        goto fail;
    plan.stdio[0] = in[0];
    plan.stdio[1] = outp[1];
    plan.stdio[2] = spec->merge_stderr ? outp[1] : errp[1];
    plan.status_fd = status[1];
    plan.cgroup_fd = spec->cgroup_join_fd;
    plan.new_keyring = spec->new_keyring;

    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &saved);
    r->start_ms = tnd_now_ms();
    pthread_mutex_lock(&children_lock);
    TND_GROW(children, achildren, nchildren + 1);
    r->pid = start_child(&plan);
    if (r->pid > 0)
        children[nchildren++] = r->pid;
    pthread_mutex_unlock(&children_lock);
    pthread_sigmask(SIG_SETMASK, &saved, NULL);
    if (r->pid < 0) {
        tnd_error_sys("cannot start a process");
        goto fail;
    }
    close_fd(&status[1]); /* the child's ends are the child's now */
    close_fd(&in[0]);
    close_fd(&outp[1]);
    close_fd(&errp[1]);
    /* EOF means execve() succeeded (it closed the write end). */
    memset(&f, 0, sizeof(f));
    do
        n = read(status[0], &f, sizeof(f));
    while (n < 0 && errno == EINTR);
    if (n > 0) {
        reap(r);
        r->pid = -1;
        if (n != (ssize_t)sizeof(f))
            f.stage = STAGE_SETUP, f.err = EIO;
        report_failure(&f, spec);
        goto out;
    }
    r->pidfd = tnd_pidfd_open(r->pid);
    r->in_fd = in[1];
    r->out.fd = outp[0];
    r->err.fd = errp[0];
    in[1] = outp[0] = errp[0] = -1;
    set_nonblock(r->in_fd);
    set_nonblock(r->out.fd);
    set_nonblock(r->err.fd);
    error = 0;
    goto out;
fail:
    tnd_error_prefix("cannot run '%s'", spec->argv[0]);
out:
    close_pipe(in);
    close_pipe(outp);
    close_pipe(errp);
    close_pipe(status);
    tnd_str_list_free(&plan.paths);
    return error;
}

/* --- the parent: supervising --- */

static void stream_init(stream *s, size_t cap)
{
    s->fd = -1;
    tnd_capture_init(&s->cap, cap);
}

static void stream_free(stream *s)
{
    close_fd(&s->fd);
    tnd_capture_free(&s->cap);
}

static void stream_read(stream *s)
{
    char chunk[CHUNK];
    ssize_t n;

    do
        n = read(s->fd, chunk, sizeof(chunk));
    while (n < 0 && errno == EINTR);
    if (n > 0)
        tnd_capture_add(&s->cap, chunk, (size_t)n);
    else if (n == 0 || errno != EAGAIN)
        close_fd(&s->fd);
}

/* SIGPIPE is blocked in this thread (see tnd_proc_run), so a child that
 * closed its stdin gives us EPIPE here rather than killing us. */
static void feed_input(run *r)
{
    size_t left = r->spec->input_len - r->in_off;
    ssize_t n = 0;

    if (left)
        do
            n = write(r->in_fd, r->spec->input + r->in_off, left);
        while (n < 0 && errno == EINTR);
    if (n > 0)
        r->in_off += (size_t)n;
    if (r->in_off == r->spec->input_len || (n < 0 && errno != EAGAIN))
        close_fd(&r->in_fd);
}

/* Has the child exited? Leaves it a zombie (WNOWAIT), so its pid and
 * process group cannot be reused until reap(). */
static int has_exited(pid_t pid)
{
    siginfo_t info;
    int rc;

    memset(&info, 0, sizeof(info));
    do
        rc = waitid(P_PID, (id_t)pid, &info, WEXITED | WNOHANG | WNOWAIT);
    while (rc < 0 && errno == EINTR);
    return rc < 0 ? errno == ECHILD : info.si_pid == pid;
}

/* Add fd to the poll set; its index there, or -1 when fd is closed. */
static int watch(struct pollfd *pfd, int *nfds, int fd, short events)
{
    if (fd < 0)
        return -1;
    pfd[*nfds] = (struct pollfd){fd, events, 0};
    return (*nfds)++;
}

/* sig to the run's process group, and to its first process itself: a
 * child may leave the group (setpgid into another of the session), and
 * the group's signal would then reach no one while we wait for it. It
 * is not reaped yet, so its pid still names it. */
static void signal_run(const run *r, int sig)
{
    kill(-r->pid, sig);
    kill(r->pid, sig);
}

static void supervise(run *r)
{
    const tnd_proc_spec *spec = r->spec;
    long grace =
        spec->kill_grace_ms > 0 ? spec->kill_grace_ms : DEFAULT_GRACE_MS;
    int64_t deadline =
        spec->timeout_ms > 0 ? r->start_ms + spec->timeout_ms : 0;
    int64_t kill_at = 0, drain_until = 0, next_watch = 0;
    int exited = 0, killed = 0;

    for (;;) {
        int64_t now = tnd_now_ms();
        struct pollfd pfd[4];
        int nfds = 0, in_i, out_i, err_i;
        long wait;

        if (!exited && has_exited(r->pid)) {
            kill(-r->pid, SIGKILL); /* whatever it left in its group */
            reap(r);
            exited = 1;
            drain_until = now + DRAIN_MS;
            close_fd(&r->in_fd);
            close_fd(&r->pidfd);
        }
        if (exited) {
            if ((r->out.fd < 0 && r->err.fd < 0) || now >= drain_until)
                break;
        } else if (!r->stop) {
            int cancel = spec->cancel && atomic_load(spec->cancel);

            if (cancel || (deadline && now >= deadline)) {
                r->stop = cancel ? TND_PROC_CANCELLED : TND_PROC_TIMEOUT;
                signal_run(r, SIGTERM);
                kill_at = now + grace;
            } else if (spec->output_stop &&
                       r->out.cap.total > spec->output_stop) {
                r->stop = TND_PROC_STOPPED;
                signal_run(r, SIGKILL);
                killed = 1;
            } else if (spec->watch && now >= next_watch) {
                /* at most once a tick, however often output wakes us */
                next_watch = now + TICK_MS;
                if (spec->watch(r->pid, spec->watch_payload)) {
                    r->stop = TND_PROC_STOPPED;
                    signal_run(r, SIGKILL);
                    killed = 1;
                }
            }
        } else if (!killed && now >= kill_at) {
            signal_run(r, SIGKILL);
            killed = 1;
        }

        /* Without a pidfd only the tick notices an exit; keep it short
         * once there are no pipes left to wake us. */
        wait = TICK_MS;
        if (r->pidfd < 0 && r->out.fd < 0 && r->err.fd < 0)
            wait = 5;
        if (exited)
            wait = tnd_clock_remaining(drain_until, wait);
        else if (!r->stop && deadline)
            wait = tnd_clock_remaining(deadline, wait);
        else if (r->stop && !killed)
            wait = tnd_clock_remaining(kill_at, wait);

        in_i = watch(pfd, &nfds, r->in_fd, POLLOUT);
        out_i = watch(pfd, &nfds, r->out.fd, POLLIN);
        err_i = watch(pfd, &nfds, r->err.fd, POLLIN);
        watch(pfd, &nfds, r->pidfd, POLLIN); /* wakes us when it exits */
        if (poll(pfd, (nfds_t)nfds, (int)wait) <= 0)
            continue; /* timeout or EINTR: the checks above decide */
        if (in_i >= 0 && pfd[in_i].revents)
            feed_input(r);
        if (out_i >= 0 && pfd[out_i].revents)
            stream_read(&r->out);
        if (err_i >= 0 && pfd[err_i].revents)
            stream_read(&r->err);
    }
}

static void fill_result(tnd_proc_result *out, run *r)
{
    int ws = r->wstatus;

    out->duration_ms = (long)(r->end_ms - r->start_ms);
    out->exit_code = -1;
    out->status = TND_PROC_EXITED;
    if (!r->lost && WIFEXITED(ws)) {
        out->exit_code = WEXITSTATUS(ws);
    } else if (!r->lost && WIFSIGNALED(ws)) {
        out->signal = WTERMSIG(ws);
        out->status = TND_PROC_SIGNALED;
    }
    if (r->stop)
        out->status = r->stop;
    out->output = tnd_capture_finish(&r->out.cap, &out->output_len);
    out->output_total = r->out.cap.total;
    out->errors = tnd_capture_finish(&r->err.cap, &out->errors_len);
    out->errors_total = r->err.cap.total;
}

int tnd_proc_run(tnd_proc_result *out, const tnd_proc_spec *spec)
{
    struct timespec zero = {0, 0};
    sigset_t pipe_set, old, pending;
    int error, pipe_was_pending;
    run r = {.spec = spec, .pid = -1, .pidfd = -1, .in_fd = -1};

    assert(out && spec && spec->argv && spec->argv[0]);
    memset(out, 0, sizeof(*out));
    stream_init(&r.out, spec->output_cap ? spec->output_cap : DEFAULT_CAP);
    stream_init(&r.err, spec->output_cap ? spec->output_cap : DEFAULT_CAP);

    /* Block SIGPIPE while we write to the child; swallow the one our own
     * EPIPE raised, and leave alone one that was already pending. */
    sigemptyset(&pipe_set);
    sigaddset(&pipe_set, SIGPIPE);
    sigpending(&pending);
    pipe_was_pending = sigismember(&pending, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_set, &old);

    if ((error = spawn(&r)) < 0)
        goto out;
    supervise(&r);
    fill_result(out, &r);
out:
    close_fd(&r.in_fd);
    close_fd(&r.pidfd);
    stream_free(&r.out);
    stream_free(&r.err);
    if (!pipe_was_pending && sigpending(&pending) == 0 &&
        sigismember(&pending, SIGPIPE))
        sigtimedwait(&pipe_set, NULL, &zero);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return error;
}

void tnd_proc_result_free(tnd_proc_result *result)
{
    if (!result)
        return;
    free(result->output);
    free(result->errors);
    result->output = result->errors = NULL;
    result->output_len = result->errors_len = 0;
}

const char *tnd_proc_describe(const tnd_proc_result *result)
{
    static _Thread_local char line[160];

    if (result->status == TND_PROC_SIGNALED)
        snprintf(line, sizeof(line), "killed by signal %d (%s)", result->signal,
                 strsignal(result->signal));
    else if (result->status == TND_PROC_TIMEOUT)
        snprintf(line, sizeof(line), "timed out after %.1fs",
                 (double)result->duration_ms / 1000.0);
    else if (result->status == TND_PROC_CANCELLED)
        snprintf(line, sizeof(line), "cancelled");
    else if (result->status == TND_PROC_STOPPED)
        snprintf(line, sizeof(line), "stopped");
    else
        snprintf(line, sizeof(line), "exit %d", result->exit_code);
    return line;
}
