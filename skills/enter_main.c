/* tandem-sandbox-enter - run one command inside a sandbox that is
 * already running (skills/holder.h), instead of starting a new one.
 *
 *   tandem-sandbox-enter PID START DIR -- PROGRAM [ARGS...]
 *
 * PID is the host pid of the holder's first process inside its
 * namespaces (bwrap's --info-fd "child-pid"), START its start time
 * (field 22 of /proc/PID/stat): a holder that died, and whose pid now
 * names another process (another task's sandbox, or a host process), is
 * never entered. DIR is the workspace, at its own path inside. PROGRAM
 * is an absolute path as the sandbox sees it.
 *
 * What it does, in order: opens /proc/PID and, through that one
 * directory (so every file read is that process's even if it dies and
 * its pid is reused), checks START and opens its namespaces; refuses
 * unless the user, mount, pid, ipc and uts namespaces differ from its
 * own (net and cgroup may be the host's: network: true, or a kernel
 * without cgroup namespaces); gives up its controlling terminal (a
 * command must not push input into the reviewer's terminal, TIOCSTI);
 * joins the user namespace, then the others (the mount namespace puts
 * root and cwd at the sandbox's root); enters DIR; drops every
 * capability (bounding set, ambient, effective, permitted, inheritable)
 * and sets no_new_privs; then forks, since a pid namespace applies to
 * children only. The child dies with this process (PR_SET_PDEATHSIG) and
 * execs PROGRAM; it stays in this process's process group, so whoever
 * runs this (skills/proc.c) stops the command by signalling the group,
 * as it would any program. This process forwards SIGTERM, SIGINT and
 * SIGHUP to the child, waits for it and exits with its status: its exit
 * code, or 128 + N for a signal N (as bwrap and a shell report it).
 *
 * Its own failures are told on stderr after "tandem-sandbox-enter: ",
 * with exit 125 when the command was never started (the sandbox could
 * not be entered: the caller may run it another way), 126 when PROGRAM
 * could not be executed and 127 when it does not exist. libc only. */
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#define PREFIX "tandem-sandbox-enter: "

/* Exit codes of its own (see the top). */
#define EXIT_NOT_ENTERED 125
#define EXIT_NOT_EXEC    126
#define EXIT_NOT_FOUND   127

/* The namespaces, in the order they are joined: the user namespace
 * first, which gives the capabilities the others need. */
static const struct {
    const char *name;
    int type;
    int required; /* must differ from this process's own */
} spaces[] = {
    {"user", CLONE_NEWUSER, 1},     {"mnt", CLONE_NEWNS, 1},
    {"pid", CLONE_NEWPID, 1},       {"net", CLONE_NEWNET, 0},
    {"ipc", CLONE_NEWIPC, 1},       {"uts", CLONE_NEWUTS, 1},
    {"cgroup", CLONE_NEWCGROUP, 0},
};
#define NSPACES (sizeof(spaces) / sizeof(spaces[0]))

static pid_t child = -1;

static void die(int code, const char *fmt, ...)
{
    va_list ap;

    fputs(PREFIX, stderr);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(code);
}

static void usage(void)
{
    die(EXIT_NOT_ENTERED,
        "usage: tandem-sandbox-enter PID START DIR -- PROGRAM [ARGS...] "
        "(it is run by tandem-reviewer, not by hand)");
}

static long number(const char *s)
{
    char *end;
    long v;

    errno = 0;
    v = strtol(s, &end, 10);
    if (errno || end == s || *end || v <= 0)
        usage();
    return v;
}

/* Field 22 of the stat file open at dirfd, or -1. */
static unsigned long long start_time(int dirfd)
{
    char buf[1024], *p;
    int fd = openat(dirfd, "stat", O_RDONLY | O_CLOEXEC);
    ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);

    if (fd >= 0)
        close(fd);
    if (n <= 0)
        return (unsigned long long)-1;
    buf[n] = '\0';
    /* after the name, which may hold spaces and ')': field 3 on */
    if (!(p = strrchr(buf, ')')))
        return (unsigned long long)-1;
    p++;
    for (int field = 3; field <= 22; field++) {
        p += strspn(p, " ");
        if (field == 22)
            return strtoull(p, NULL, 10);
        p += strcspn(p, " ");
    }
    return (unsigned long long)-1;
}

static void same_file(int fd, const char *own, const char *name, int *same)
{
    struct stat a, b;

    if (fstat(fd, &a) < 0 || stat(own, &b) < 0)
        die(EXIT_NOT_ENTERED, "cannot compare the %s namespace: %s", name,
            strerror(errno));
    *same = a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* Open the holder's namespaces into fds (-1: the same as ours, not to be
 * joined). */
static void open_spaces(long pid, unsigned long long start, int fds[NSPACES])
{
    char path[64];
    int dirfd;

    snprintf(path, sizeof(path), "/proc/%ld", pid);
    if ((dirfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
        die(EXIT_NOT_ENTERED,
            "the sandbox (process %ld) is gone: %s; the skill can run in a "
            "sandbox of its own",
            pid, strerror(errno));
    if (start_time(dirfd) != start)
        die(EXIT_NOT_ENTERED,
            "process %ld is not the sandbox any more (its start time "
            "differs): it ended",
            pid);
    for (size_t i = 0; i < NSPACES; i++) {
        char own[64];
        int same;
        snprintf(path, sizeof(path), "ns/%s", spaces[i].name);
        snprintf(own, sizeof(own), "/proc/self/ns/%s", spaces[i].name);
        if ((fds[i] = openat(dirfd, path, O_RDONLY | O_CLOEXEC)) < 0)
            die(EXIT_NOT_ENTERED,
                "cannot open the %s namespace of the sandbox (process %ld): "
                "%s",
                spaces[i].name, pid, strerror(errno));
        same_file(fds[i], own, spaces[i].name, &same);
        if (same && spaces[i].required)
            die(EXIT_NOT_ENTERED,
                "process %ld is not in a sandbox: its %s namespace is this "
                "host's",
                pid, spaces[i].name);
        if (same) {
            close(fds[i]);
            fds[i] = -1;
        }
    }
    close(dirfd);
}

/* Give up the controlling terminal, if there is one. */
static void leave_terminal(void)
{
    int fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);

    if (fd < 0)
        return; /* none */
    if (ioctl(fd, TIOCNOTTY) < 0)
        die(EXIT_NOT_ENTERED, "cannot give up the terminal: %s",
            strerror(errno));
    close(fd);
}

static void drop_capabilities(void)
{
    struct __user_cap_header_struct hdr = {_LINUX_CAPABILITY_VERSION_3, 0};
    struct __user_cap_data_struct data[2];
    int last = CAP_LAST_CAP;
    FILE *f = fopen("/proc/sys/kernel/cap_last_cap", "re");

    if (f) {
        if (fscanf(f, "%d", &last) != 1)
            last = CAP_LAST_CAP;
        fclose(f);
    }
    for (int cap = 0; cap <= last; cap++)
        if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 && errno != EINVAL)
            die(EXIT_NOT_ENTERED, "cannot drop capability %d: %s", cap,
                strerror(errno));
    if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 &&
        errno != EINVAL)
        die(EXIT_NOT_ENTERED, "cannot clear the ambient capabilities: %s",
            strerror(errno));
    memset(data, 0, sizeof(data));
    if (syscall(SYS_capset, &hdr, data) < 0)
        die(EXIT_NOT_ENTERED, "cannot drop the capabilities: %s",
            strerror(errno));
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
        die(EXIT_NOT_ENTERED, "cannot set no_new_privs: %s", strerror(errno));
}

static void forward(int sig)
{
    if (child > 0)
        kill(child, sig);
}

/* The child: die with this process, then become the command. */
static void run(char **argv, int alive)
{
    struct pollfd p = {alive, POLLIN, 0};

    if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
        _exit(EXIT_NOT_ENTERED);
    /* the parent died before the prctl: its end of the pipe is closed */
    if (poll(&p, 1, 0) != 0)
        _exit(EXIT_NOT_ENTERED);
    close(alive);
    execv(argv[0], argv);
    fprintf(stderr, PREFIX "cannot run '%s': %s\n", argv[0], strerror(errno));
    _exit(errno == ENOENT ? EXIT_NOT_FOUND : EXIT_NOT_EXEC);
}

int main(int argc, char **argv)
{
    int fds[NSPACES], alive[2], status;
    pid_t parent = getppid(), got;
    struct sigaction sa;
    unsigned long long start;
    long pid;

    if (argc < 6 || strcmp(argv[4], "--") != 0 || argv[5][0] != '/')
        usage();
    pid = number(argv[1]);
    start = (unsigned long long)number(argv[2]);
    open_spaces(pid, start, fds);
    leave_terminal();
    for (size_t i = 0; i < NSPACES; i++)
        if (fds[i] >= 0) {
            if (setns(fds[i], spaces[i].type) < 0)
                die(EXIT_NOT_ENTERED,
                    "cannot join the %s namespace of the sandbox: %s",
                    spaces[i].name, strerror(errno));
            close(fds[i]);
        }
    if (chdir(argv[3]) < 0)
        die(EXIT_NOT_ENTERED, "cannot enter %s in the sandbox: %s", argv[3],
            strerror(errno));
    drop_capabilities();
    /* joining a user namespace may clear the death signal the caller
     * set; set it again, and make sure the caller is still there */
    if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || getppid() != parent)
        die(EXIT_NOT_ENTERED, "the program that ran this has ended");
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = forward;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    if (pipe2(alive, O_CLOEXEC) < 0)
        die(EXIT_NOT_ENTERED, "cannot make a pipe: %s", strerror(errno));
    fflush(stderr);
    child = fork();
    if (child < 0)
        die(EXIT_NOT_ENTERED, "cannot fork: %s", strerror(errno));
    if (child == 0) {
        close(alive[1]);
        run(argv + 5, alive[0]);
    }
    close(alive[0]);
    do
        got = waitpid(child, &status, 0);
    while (got < 0 && errno == EINTR);
    if (got < 0)
        die(EXIT_NOT_ENTERED, "cannot wait for '%s': %s", argv[5],
            strerror(errno));
    if (WIFSIGNALED(status))
        return 128 + WTERMSIG(status);
    return WEXITSTATUS(status);
}
