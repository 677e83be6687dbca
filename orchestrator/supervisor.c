/* Agent processes: spawn, reap, restart, stop (see supervisor.h).
 *
 * What a dead agent leaves: its skill (or model program) died with it
 * (PR_SET_PDEATHSIG, skills/proc.c), but what that started runs on. We
 * are the parent of every orphaned descendant (skills/reap.h), so those
 * processes are our children once their parents die, and the only ones
 * besides the agents: the run loop's own programs (git) are reaped
 * before tnd_proc_run returns, on this same thread. So after an agent
 * exits, every child of ours that is not a running agent is its
 * leftover, or one of another agent's that escaped its process group;
 * tick kills and reaps them all before it reports the agent gone (which
 * hands its request out again) or starts it anew. The restarted agent
 * therefore never finds its predecessor's job still at work in the
 * workspace. */
#include "orchestrator/supervisor.h"

#include <assert.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/clock.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/log.h"
#include "common/pidwait.h"
#include "common/str.h"
#include "common/xalloc.h"
#include "skills/reap.h"

#define QUICK_EXIT_MS      10000 /* an exit sooner than this counts as a failure */
#define MAX_QUICK_FAILURES 3
#define BACKOFF_FIRST_MS   250
#define BACKOFF_MAX_MS     5000
/* How long one tick waits for killed leftovers to die; more ticks follow
 * when they take longer (a process in uninterruptible sleep). */
#define SWEEP_TICK_MS 200
/* How long shutting down waits for the leftovers. */
#define SWEEP_STOP_MS 2000
/* how often exited orphans are collected (a /proc scan) */
#define ZOMBIES_MS 1000

typedef struct child {
    char *name;
    char *service;
    char **argv;
    char *log_path;
    pid_t pid; /* 0 when not running */
    int64_t started;
    int64_t restart_at; /* when pid == 0: start again at this time */
    int failures;       /* quick exits in a row */
    /* From its exit until what it left is gone: */
    bool sweeping;  /* not yet reported gone, not to be restarted */
    bool slow_said; /* the leftovers that would not die were logged */
    int status;     /* its wait status */
    int64_t exited; /* when we saw it exit */
    size_t ended;   /* processes it left that we killed */
} child;

struct tnd_supervisor {
    child *children;
    size_t n, alloc;
    int64_t next_zombies; /* when exited orphans are reaped next */
};

tnd_supervisor *tnd_supervisor_new(void)
{
    /* without it, orphans go to init and only the skill itself dies with
     * its agent; the run still works */
    if (tnd_reap_adopt() < 0)
        tnd_log_warn("%s; what a killed agent's skills started may keep "
                     "running",
                     tnd_error_last());
    return tnd_xcalloc(1, sizeof(tnd_supervisor));
}

/* fork + exec with a close-on-exec status pipe, so a failed exec is
 * reported here rather than as a mysterious exit 127. */
static int spawn(child *c)
{
    int status[2] = {-1, -1}, logfd = -1, devnull = -1, err = 0, max_fd = 65536;
    pid_t parent = getpid(), pid;
    struct rlimit nofile;
    ssize_t n;

    if (pipe2(status, O_CLOEXEC) < 0)
        return tnd_error_sys("cannot start %s", c->name);
    logfd = open(c->log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (logfd < 0 || devnull < 0) {
        tnd_error_sys("cannot open %s", logfd < 0 ? c->log_path : "/dev/null");
        goto fail;
    }
    /* every descriptor past the status pipe's closes in the child: a
     * server past 1024 descriptors (serve raises its limit) left the
     * higher ones, dup()ed without O_CLOEXEC, open in the agents */
    if (getrlimit(RLIMIT_NOFILE, &nofile) == 0 &&
        nofile.rlim_cur != RLIM_INFINITY && nofile.rlim_cur < (rlim_t)1 << 20)
        max_fd = (int)nofile.rlim_cur;
    pid = fork();
    if (pid < 0) {
        tnd_error_sys("cannot start %s", c->name);
        goto fail;
    }
    if (pid == 0) {
        /* child: async-signal-safe calls only */
        struct sigaction sa;
        sigset_t none;
        int e;
        memset(&sa, 0, sizeof(sa));
        sa.sa_handler = SIG_DFL;
        for (int sig = 1; sig < 32; sig++)
            sigaction(sig, &sa, NULL);
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        setpgid(0, 0);
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        if (getppid() != parent)
            _exit(1); /* tandem died before the line above */
        if (dup2(devnull, 0) < 0 || dup2(logfd, 1) < 0 || dup2(logfd, 2) < 0 ||
            (status[1] != 3 && dup3(status[1], 3, O_CLOEXEC) < 0))
            goto child_fail;
        status[1] = 3;
#ifdef SYS_close_range
        if (syscall(SYS_close_range, 4u, ~0U, 0) < 0)
#endif
            for (int fd = 4; fd < max_fd; fd++)
                close(fd);
        execv(c->argv[0], c->argv);
    child_fail:
        e = errno;
        if (write(status[1], &e, sizeof(e)) < 0) {
            /* nothing more can be done */
        }
        _exit(127);
    }
    close(status[1]);
    status[1] = -1;
    do {
        n = read(status[0], &err, sizeof(err));
    } while (n < 0 && errno == EINTR);
    close(status[0]);
    close(logfd);
    close(devnull);
    if (n == (ssize_t)sizeof(err)) {
        waitpid(pid, NULL, 0);
        errno = err;
        return tnd_error_sys("cannot run %s", c->argv[0]);
    }
    c->pid = pid;
    c->started = tnd_now_ms();
    tnd_log_debug("started %s (pid %ld)", c->name, (long)pid);
    return 0;
fail:
    for (int i = 0; i < 2; i++)
        if (status[i] >= 0)
            close(status[i]);
    if (logfd >= 0)
        close(logfd);
    if (devnull >= 0)
        close(devnull);
    return -1;
}

/* Free what a child record holds (not the record: it is in an array). */
static void child_clear(child *c)
{
    tnd_str_list_free(&c->argv);
    free(c->name);
    free(c->service);
    free(c->log_path);
}

int tnd_supervisor_add(tnd_supervisor *self, const tnd_agent_spec *spec)
{
    child *c;
    size_t argc = 0;

    TND_GROW(self->children, self->alloc, self->n + 1);
    c = &self->children[self->n];
    memset(c, 0, sizeof(*c));
    c->name = tnd_xstrdup(spec->name);
    c->service = tnd_xstrdup(spec->service);
    c->log_path = tnd_xstrdup(spec->log_path);
    while (spec->argv[argc])
        argc++;
    c->argv = tnd_xcalloc(argc + 1, sizeof(char *));
    for (size_t i = 0; i < argc; i++)
        c->argv[i] = tnd_xstrdup(spec->argv[i]);
    self->n++;
    if (spawn(c) < 0) {
        self->n--;
        child_clear(c);
        return -1;
    }
    return 0;
}

/* The last lines of an agent's log, indented, for an error message.
 * Caller frees. */
static char *log_tail(const char *path)
{
    char *text = NULL;
    size_t len = 0;
    const char *start;
    int lines = 0;
    tnd_buf b;

    if (tnd_fs_read(&text, &len, path, 16 << 20) < 0 || len == 0) {
        free(text);
        return tnd_xstrdup("  (its log is empty)");
    }
    while (len > 0 && text[len - 1] == '\n')
        text[--len] = '\0';
    start = text + len;
    while (start > text && lines < 8)
        if (*--start == '\n')
            lines++;
    if (*start == '\n')
        start++;
    tnd_buf_init(&b, TND_BUF_NOCAP);
    tnd_buf_printf(&b, "  last lines of %s:", path);
    for (const char *p = start; *p;) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        tnd_buf_printf(&b, "\n    %.*s", (int)(n > 300 ? 300 : n), p);
        p += n + (nl ? 1 : 0);
    }
    free(text);
    return tnd_buf_detach(&b, NULL);
}

static void describe_exit(char *buf, size_t size, int status)
{
    if (WIFEXITED(status))
        snprintf(buf, size, "exited with status %d", WEXITSTATUS(status));
    else if (WIFSIGNALED(status))
        snprintf(buf, size, "was killed by signal %d (%s)", WTERMSIG(status),
                 strsignal(WTERMSIG(status)));
    else
        snprintf(buf, size, "stopped (status 0x%x)", status);
}

/* Has the agent exited? Then kill what is left in its process group while
 * its zombie still holds the group's id (so the id cannot have been given
 * to a stranger), and reap it. */
static bool has_exited(child *c)
{
    siginfo_t info;
    pid_t got;
    int rc;

    memset(&info, 0, sizeof(info));
    do
        rc = waitid(P_PID, (id_t)c->pid, &info, WEXITED | WNOHANG | WNOWAIT);
    while (rc < 0 && errno == EINTR);
    if (rc < 0) {
        c->status = 0; /* not ours any more: nothing left to kill */
        return true;
    }
    if (info.si_pid != c->pid)
        return false;
    kill(-c->pid, SIGKILL);
    do
        got = waitpid(c->pid, &c->status, 0);
    while (got < 0 && errno == EINTR);
    return true;
}

/* The running agents' pids, for tnd_reap_strays(). Caller frees. */
static pid_t *running_pids(const tnd_supervisor *self, size_t *n)
{
    pid_t *pids = tnd_xcalloc(self->n + 1, sizeof(pid_t));

    *n = 0;
    for (size_t i = 0; i < self->n; i++)
        if (self->children[i].pid > 0)
            pids[(*n)++] = self->children[i].pid;
    return pids;
}

/* Kill and reap what agents that exited left running. True when nothing
 * is left; the processes ended go to the first agent being swept (agents
 * that die together leave one heap). */
static bool sweep(tnd_supervisor *self)
{
    child *first = NULL;
    size_t nkeep, ended = 0;
    pid_t *keep = running_pids(self, &nkeep);
    int rc = tnd_reap_strays(&ended, keep, nkeep, SWEEP_TICK_MS);

    free(keep);
    for (size_t i = 0; i < self->n && !first; i++)
        if (self->children[i].sweeping)
            first = &self->children[i];
    assert(first);
    first->ended += ended;
    if (rc == TND_ETIMEOUT) {
        if (!first->slow_said)
            tnd_log_warn("agent %s is restarted once what it left is gone: "
                         "%s",
                         first->name, tnd_error_last());
        first->slow_said = true;
        return false;
    }
    if (rc < 0) /* no /proc: nothing more we can do */
        tnd_log_warn("%s", tnd_error_last());
    return true;
}

/* Its leftovers are gone: say so, report the agent gone (its request is
 * handed out again), and restart it after a backoff, or give up on it. */
static int after_exit(child *c, tnd_supervisor_gone_fn gone, void *payload)
{
    char how[128], left[96] = "";
    bool config = WIFEXITED(c->status) && WEXITSTATUS(c->status) == 2;
    long delay = BACKOFF_FIRST_MS;
    char *tail;

    c->sweeping = false;
    describe_exit(how, sizeof(how), c->status);
    c->failures = c->exited - c->started < QUICK_EXIT_MS ? c->failures + 1 : 1;
    if (c->ended)
        snprintf(left, sizeof(left), "; killed %zu process%s it left running",
                 c->ended, c->ended == 1 ? "" : "es");
    if (!config && c->failures < MAX_QUICK_FAILURES) {
        for (int k = 1; k < c->failures && delay < BACKOFF_MAX_MS; k++)
            delay *= 2;
        if (delay > BACKOFF_MAX_MS)
            delay = BACKOFF_MAX_MS;
        c->restart_at = tnd_now_ms() + delay;
        tnd_log_warn("agent %s %s%s; restarting in %.2fs", c->name, how, left,
                     delay / 1000.0);
    } else if (*left) {
        tnd_log_warn("agent %s %s%s", c->name, how, left);
    }
    if (gone) /* before the error is set: it may log */
        gone(c->name, payload);
    if (!config && c->failures < MAX_QUICK_FAILURES)
        return 0;
    tail = log_tail(c->log_path);
    if (config)
        tnd_error_set("agent %s %s: its configuration is wrong\n%s", c->name,
                      how, tail);
    else
        tnd_error_set("agent %s %s, %d times in a row shortly after "
                      "starting; giving up\n%s",
                      c->name, how, c->failures, tail);
    free(tail);
    return -1;
}

int tnd_supervisor_tick(tnd_supervisor *self, tnd_supervisor_gone_fn gone,
                        void *payload)
{
    int64_t now = tnd_now_ms();
    bool sweeping = false;

    for (size_t i = 0; i < self->n; i++) {
        child *c = &self->children[i];

        if (c->pid > 0 && has_exited(c)) {
            c->pid = 0;
            c->sweeping = true;
            c->slow_said = false;
            c->exited = now;
            c->ended = 0;
        }
        sweeping = sweeping || c->sweeping;
    }
    /* adopted orphans that exited (a sandboxed skill's bwrap leaves one
     * each) wait for us: a long-lived server would fill the process
     * table with them */
    if (now >= self->next_zombies) {
        size_t n = 0, nkeep;
        pid_t *keep = running_pids(self, &nkeep);
        if (tnd_reap_zombies(&n, keep, nkeep) < 0)
            tnd_log_debug("%s", tnd_error_last());
        free(keep);
        self->next_zombies = now + ZOMBIES_MS;
    }
    /* what they left dies before anyone gets their requests */
    if (sweeping && sweep(self))
        for (size_t i = 0; i < self->n; i++)
            if (self->children[i].sweeping &&
                after_exit(&self->children[i], gone, payload) < 0)
                return -1;
    for (size_t i = 0; i < self->n; i++) {
        child *c = &self->children[i];

        if (c->pid == 0 && !c->sweeping && c->restart_at &&
            tnd_now_ms() >= c->restart_at) {
            c->restart_at = 0;
            if (spawn(c) < 0)
                return -1;
            tnd_log_info("restarted agent %s", c->name);
        }
    }
    return 0;
}

int tnd_supervisor_kill(tnd_supervisor *self, const char *name)
{
    for (size_t i = 0; i < self->n; i++) {
        child *c = &self->children[i];
        if (c->pid > 0 && !c->sweeping && strcmp(c->name, name) == 0) {
            tnd_log_warn("killing agent %s (pid %d): it stopped answering "
                         "while its process lives",
                         name, (int)c->pid);
            kill(c->pid, SIGKILL);
            return 0;
        }
    }
    return TND_ENOTFOUND;
}

size_t tnd_supervisor_running(const tnd_supervisor *self, const char *service)
{
    size_t n = 0;

    for (size_t i = 0; i < self->n; i++)
        if (self->children[i].pid > 0 &&
            strcmp(self->children[i].service, service) == 0)
            n++;
    return n;
}

/* Wait until a running agent may have exited, or the deadline: 0 then. */
static int wait_any_exit(const tnd_supervisor *self, int64_t deadline)
{
    pid_t *pids = tnd_xcalloc(self->n ? self->n : 1, sizeof(pid_t));
    size_t n = 0;
    int rc;

    for (size_t i = 0; i < self->n; i++)
        if (self->children[i].pid > 0)
            pids[n++] = self->children[i].pid;
    rc = tnd_pid_wait_any(pids, n, deadline);
    free(pids);
    return rc;
}

void tnd_supervisor_destroy(tnd_supervisor **self_p, long grace_ms)
{
    tnd_supervisor *s = self_p ? *self_p : NULL;
    size_t ended = 0;
    int64_t deadline;
    bool left;
    int rc;

    if (!s)
        return;
    for (size_t i = 0; i < s->n; i++)
        if (s->children[i].pid > 0)
            kill(s->children[i].pid, SIGTERM);
    deadline = tnd_now_ms() + grace_ms;
    do {
        left = false;
        for (size_t i = 0; i < s->n; i++) {
            child *c = &s->children[i];
            if (c->pid <= 0)
                continue;
            if (has_exited(c)) /* its group's leftovers killed too */
                c->pid = 0;
            else
                left = true;
        }
        if (left && !wait_any_exit(s, deadline))
            break;
    } while (left);
    for (size_t i = 0; i < s->n; i++) {
        child *c = &s->children[i];
        if (c->pid > 0) {
            tnd_log_warn("agent %s did not stop within %ld ms; killing it",
                         c->name, grace_ms);
            kill(-c->pid, SIGKILL);
            kill(c->pid, SIGKILL);
            waitpid(c->pid, NULL, 0);
        }
    }
    /* no agent is left: every child still here is a leftover */
    rc = tnd_reap_strays(&ended, NULL, 0, SWEEP_STOP_MS);
    if (rc < 0)
        tnd_log_warn("%s", tnd_error_last());
    else if (ended)
        tnd_log_debug("killed %zu process%s the agents left running", ended,
                      ended == 1 ? "" : "es");
    for (size_t i = 0; i < s->n; i++)
        child_clear(&s->children[i]);
    free(s->children);
    free(s);
    *self_p = NULL;
}
