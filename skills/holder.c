/* The reviewer's running sandbox, from which each skill's own is made
 * (see holder.h).
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
#include <sys/random.h>
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
/* The enter program's prefix on its own messages, and the variable it
 * takes the nonce from (enter_main.c). */
#define ENTER_PREFIX "tandem-sandbox-enter: "
#define NONCE_VAR    "TANDEM_SANDBOX_NONCE"

/* One running holder. */
typedef struct running {
    pid_t bwrap;              /* our child, reaped in stop() */
    long pid;                 /* the first process inside */
    unsigned long long start; /* its start time (/proc/PID/stat) */
    int hold;                 /* write end of the command's stdin */
    int out;                  /* read end of its stdout */
    int err;                  /* read end of bwrap's stderr */
} running;

struct tnd_holder {
    pthread_mutex_t lock;
    char **roots;        /* absolute, symlink-free, none beneath another */
    char *const *envp;   /* bwrap's; borrowed */
    char *enter;         /* the enter program, once looked for */
    bool looked;         /* for it */
    bool off;            /* no more holders: bwrap each */
    bool told_random;    /* that a nonce could not be made */
    int failed;          /* holders in a row refused, no entry between */
    unsigned generation; /* of the running one, counted from 1 */
    running *run;        /* NULL: none now */
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

/* Read fd into buf (NUL-terminated) until it holds stop, EOF, or
 * deadline; whether stop came. */
static bool read_until(int fd, char *buf, size_t size, char stop,
                       int64_t deadline)
{
    size_t n = 0;

    buf[0] = '\0';
    while (n + 1 < size) {
        struct pollfd p = {fd, POLLIN, 0};
        int64_t left = deadline - tnd_now_ms();
        ssize_t got;
        if (left <= 0 || poll(&p, 1, (int)left) == 0)
            return false;
        got = read(fd, buf + n, size - 1 - n);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return false;
        n += (size_t)got;
        buf[n] = '\0';
        if (memchr(buf, stop, n))
            return true;
    }
    return false;
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

/* Start a holder for roots: NULL with the error set when it cannot be. */
static running *start(const char *bwrap, char *const *roots, char *const *envp)
{
    int in[2] = {-1, -1}, out[2] = {-1, -1}, err[2] = {-1, -1};
    int info[2] = {-1, -1};
    const char *cat_argv[] = {NULL, NULL};
    char *cat = NULL, **argv = NULL, buf[1024], echo[8], *at, *said;
    running *h = NULL;
    pid_t pid = -1;
    long child = 0;
    int64_t deadline;
    bool ready = false;

    /* cat as the holder shows it, from the system's directories only: a
     * PATH entry that is relative or empty would find one in a root */
    if (tnd_sandbox_resolve(&cat, "cat", "/usr/bin:/bin", "/", NULL) < 0)
        return NULL;
    cat_argv[0] = cat;
    argv = tnd_sandbox_holder_argv(bwrap, (const char *const *)roots, INFO_FD,
                                   cat_argv, NULL);
    if (lifted_pipe(in) < 0 || lifted_pipe(out) < 0 || lifted_pipe(err) < 0 ||
        lifted_pipe(info) < 0 ||
        spawn(&pid, argv, envp, in[0], out[1], err[1], info[1]) < 0)
        goto out;
    close_fd(&in[0]);
    close_fd(&out[1]);
    close_fd(&err[1]);
    close_fd(&info[1]);
    deadline = tnd_now_ms() + START_MS;
    /* bwrap's info is one JSON object */
    read_until(info[0], buf, sizeof(buf), '}', deadline);
    if ((at = strstr(buf, "\"child-pid\":")))
        child = strtol(at + strlen("\"child-pid\":"), NULL, 10);
    /* bwrap tells the pid before it builds the sandbox; cat running,
     * and echoing a line, says it is built */
    if (child > 0 && write(in[1], "\n", 1) == 1)
        ready = read_until(out[0], echo, sizeof(echo), '\n', deadline);
    if (!ready) {
        close_fd(&in[1]); /* its command ends, if it started */
        end_bwrap(pid, tnd_now_ms() + STOP_MS);
        said = what_it_said(err[0]);
        tnd_error_set("cannot start the reviewer's sandbox with %s: %s", bwrap,
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

/* End a holder: close its pipe (its command ends, and with it bwrap),
 * wait for bwrap and reap it. */
static void stop(running **h_p)
{
    running *h = *h_p;

    if (!h)
        return;
    *h_p = NULL;
    close_fd(&h->hold);
    if (h->bwrap > 0) /* not reaped yet */
        end_bwrap(h->bwrap, tnd_now_ms() + STOP_MS);
    close_fd(&h->out);
    close_fd(&h->err);
    free(h);
}

/* Whether the holder's bwrap has ended (it is reaped then). */
static bool ended(const running *h)
{
    pid_t got;

    do
        got = waitpid(h->bwrap, NULL, WNOHANG);
    while (got < 0 && errno == EINTR);
    return got != 0;
}

/* The enter program: $TANDEM_SANDBOX_ENTER when set, else
 * tandem-sandbox-enter beside this process's executable; absolute, into
 * *out (caller frees). -1 with the reason when it cannot be run. */
static int find_enter(char **out)
{
    const char *env = getenv("TANDEM_SANDBOX_ENTER");
    char *self, *path;

    *out = NULL;
    if (env && *env)
        path = tnd_xstrdup(env);
    else {
        self = tnd_fs_self_dir();
        path = tnd_xasprintf("%s/tandem-sandbox-enter", self ? self : ".");
        free(self);
    }
    /* absolute: a skill runs it from the workspace */
    if (access(path, X_OK) == 0 && (*out = realpath(path, NULL))) {
        free(path);
        return 0;
    }
    tnd_error_sys("%s cannot be run", path);
    free(path);
    return -1;
}

/* The fix named when skills start a bwrap each. */
#define ENTER_FIX                                                       \
    "fix: install tandem-sandbox-enter beside tandem-reviewer, or set " \
    "TANDEM_SANDBOX_ENTER"

/* No more holders in this process; told once, with why. */
static void turn_off(tnd_holder *self, const char *why)
{
    if (self->off)
        return;
    self->off = true;
    tnd_log_warn("skills start a sandbox each, not one per reviewer: %s "
                 "(%s)",
                 why, ENTER_FIX);
}

tnd_holder *tnd_holder_new(const char *const *roots, char *const *envp)
{
    tnd_holder *h = tnd_xcalloc(1, sizeof(*h));
    size_t n = 0, k = 0;

    pthread_mutex_init(&h->lock, NULL);
    h->envp = envp;
    while (roots && roots[n])
        n++;
    h->roots = tnd_xcalloc(n + 1, sizeof(*h->roots));
    for (size_t i = 0; i < n; i++) {
        char *real = tnd_fs_realpath(roots[i]);
        bool inside = false;
        if (!real || !tnd_sandbox_root_ok(real)) {
            tnd_log_warn("skills in workspaces beneath %s start a sandbox "
                         "each: %s",
                         roots[i],
                         real ? "it is, or holds, a directory every "
                                "sandbox has"
                              : tnd_error_last());
            free(real);
            continue;
        }
        for (size_t j = 0; j < k; j++)
            inside = inside || tnd_sandbox_under(real, h->roots[j]);
        /* one the new root holds is left out */
        for (size_t j = k; j-- > 0 && !inside;)
            if (tnd_sandbox_under(h->roots[j], real)) {
                free(h->roots[j]);
                h->roots[j] = h->roots[--k];
                h->roots[k] = NULL;
            }
        if (inside)
            free(real);
        else
            h->roots[k++] = real;
    }
    return h;
}

void tnd_holder_destroy(tnd_holder **self_p)
{
    tnd_holder *h = *self_p;

    if (!h)
        return;
    *self_p = NULL;
    stop(&h->run);
    tnd_str_list_free(&h->roots);
    free(h->enter);
    pthread_mutex_destroy(&h->lock);
    free(h);
}

/* The root workspace lies beneath, or NULL. */
static const char *root_of(const tnd_holder *self, const char *workspace)
{
    if (workspace[0] != '/' || strstr(workspace, "/./") ||
        strstr(workspace, "/../") || strstr(workspace, "//"))
        return NULL;
    for (char **r = self->roots; *r; r++)
        if (tnd_sandbox_under(workspace, *r) && strcmp(workspace, *r) != 0)
            return *r;
    return NULL;
}

/* A running holder, started if need be; NULL when there is none to be
 * had. Under the lock. */
static running *running_one(tnd_holder *self)
{
    const char *bwrap = NULL;

    if (self->run && ended(self->run)) {
        tnd_log_warn("the reviewer's sandbox (bwrap %ld) ended; starting "
                     "another",
                     (long)self->run->bwrap);
        self->run->bwrap = -1; /* reaped */
        stop(&self->run);
    }
    if (self->run || self->off)
        return self->run;
    if (!self->looked) {
        self->looked = true;
        if (find_enter(&self->enter) < 0) {
            turn_off(self, tnd_error_last());
            return NULL;
        }
    }
    if (tnd_bwrap_check(&bwrap) < 0)
        return NULL; /* the skill says so itself */
    if (!(self->run = start(bwrap, self->roots, self->envp))) {
        tnd_log_warn("%s", tnd_error_last());
        if (++self->failed >= TND_HOLDER_TRIES)
            turn_off(self, tnd_error_last());
        return NULL;
    }
    self->generation++;
    return self->run;
}

/* A fresh nonce into out; false when the kernel gives no randomness
 * (then the skill starts bwrap of its own). */
static bool make_nonce(char out[TND_HOLDER_NONCE_LEN + 1])
{
    unsigned char rnd[TND_HOLDER_NONCE_LEN / 2];

    if (getrandom(rnd, sizeof(rnd), GRND_NONBLOCK) != (ssize_t)sizeof(rnd))
        return false;
    for (size_t i = 0; i < sizeof(rnd); i++)
        snprintf(out + 2 * i, 3, "%02x", rnd[i]);
    return true;
}

char **tnd_holder_argv(tnd_holder *self, const tnd_sandbox_spec *spec,
                       tnd_holder_entry *entry)
{
    char **argv = NULL;
    running *h;

    memset(entry, 0, sizeof(*entry));
    if (!self || !root_of(self, spec->workspace))
        return NULL;
    pthread_mutex_lock(&self->lock);
    if (!make_nonce(entry->nonce)) {
        if (!self->told_random)
            tnd_log_warn("skills start a sandbox each while the kernel "
                         "gives no random bytes (getrandom: %s): an "
                         "entry into the reviewer's needs a nonce",
                         strerror(errno));
        self->told_random = true;
        pthread_mutex_unlock(&self->lock);
        return NULL;
    }
    if ((h = running_one(self))) {
        argv = tnd_sandbox_enter_argv(spec, self->enter, h->pid, h->start,
                                      (const char *const *)self->roots);
        entry->generation = self->generation;
    }
    pthread_mutex_unlock(&self->lock);
    return argv;
}

char **tnd_holder_envp(const tnd_holder_entry *entry, char *const *envp)
{
    char *const *from = envp ? envp : environ;
    size_t n = 0, k = 0;
    char **out;

    while (from[n])
        n++;
    out = tnd_xcalloc(n + 2, sizeof(*out));
    for (size_t i = 0; i < n; i++)
        if (strncmp(from[i], NONCE_VAR "=", strlen(NONCE_VAR "=")) != 0)
            out[k++] = tnd_xstrdup(from[i]);
    out[k] = tnd_xasprintf(NONCE_VAR "=%s", entry->nonce);
    return out;
}

bool tnd_holder_failed(const tnd_holder_entry *entry, char *output, size_t *len,
                       int code)
{
    size_t pre = strlen(ENTER_PREFIX), n = strlen(entry->nonce), cut = n + 2;
    char *at;

    if (code < TND_HOLDER_NOT_ENTERED || code > 127 || !output || n == 0 ||
        *len < pre + cut || strncmp(output, ENTER_PREFIX, pre) != 0)
        return false;
    at = output + pre;
    if (strncmp(at, entry->nonce, n) != 0 || at[n] != ':' || at[n + 1] != ' ')
        return false;
    /* the rest, the terminating NUL with it */
    memmove(at, at + cut, *len - pre - cut + 1);
    *len -= cut;
    return true;
}

void tnd_holder_refused(tnd_holder *self, const tnd_holder_entry *entry,
                        const char *why)
{
    if (!self)
        return;
    pthread_mutex_lock(&self->lock);
    if (entry->generation == self->generation && self->run) {
        stop(&self->run);
        if (++self->failed >= TND_HOLDER_TRIES)
            turn_off(self, why);
    }
    pthread_mutex_unlock(&self->lock);
}

void tnd_holder_entered(tnd_holder *self, const tnd_holder_entry *entry)
{
    if (!self)
        return;
    pthread_mutex_lock(&self->lock);
    if (entry->generation == self->generation)
        self->failed = 0;
    pthread_mutex_unlock(&self->lock);
}
