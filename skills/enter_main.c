/* tandem-sandbox-enter - run one command in a sandbox of its own, made
 * from the reviewer's running sandbox (skills/holder.h) rather than by a
 * bubblewrap start of its own.
 *
 *   tandem-sandbox-enter PID START --size BYTES
 *                        [--hide DIR | --cover DIR | --dir DIR]...
 *                        [--network] --workspace DIR -- PROGRAM [ARGS...]
 *
 * PID is the host pid of the holder's first process inside its
 * namespaces (bwrap's --info-fd "child-pid"), START its start time
 * (field 22 of /proc/PID/stat): a holder that died, and whose pid now
 * names another process, is never entered. PROGRAM is an absolute path
 * as the sandbox sees it.
 *
 * The holder gives two things: its mount namespace's user namespace
 * (whoever joins has every capability there, and nowhere else) and its
 * mount namespace (the system's directories read-only with their
 * secrets covered, a /dev, and the directories where workspaces are,
 * the roots, bound writable). Of everything else the command gets its
 * own, shared with no other command, of this audit or another task:
 *
 *   1. It opens /proc/PID and, through that one directory (so every file
 *      read is that process's even if it dies and its pid is reused),
 *      checks START and opens the mount namespace and the user namespace
 *      that owns it (NS_GET_USERNS: for a user other than root, bwrap
 *      runs its command in a second user namespace inside that one),
 *      refusing either if it is this process's own; gives up its
 *      controlling terminal (TIOCSTI); joins them (root and cwd move to
 *      the sandbox's root).
 *   2. It unshares new mount, pid, ipc, uts and cgroup namespaces, and a
 *      network namespace without --network (its loopback up, nothing
 *      else).
 *   3. In the new mount namespace, every mount private; the workspace
 *      opened (no symlink on the way); then in order each --hide DIR and
 *      --cover DIR gets an empty tmpfs (the roots are hidden, first: no
 *      other workspace stays reachable; /tmp, /var/tmp, a $HOME or
 *      $TMPDIR are covered) and each --dir DIR is made; /dev/shm and
 *      /dev/pts are new; the workspace is bound back at its own path and
 *      becomes the cwd; then each --hide tmpfs still in sight (no later
 *      tmpfs, nor the workspace, on it or above it) becomes read-only, so
 *      nothing is written beside the workspace, and so do the root and
 *      /dev, which are the holder's. Every tmpfs holds --size BYTES at
 *      most: its pages are the host's memory, which no rlimit of the
 *      command's counts.
 *   4. It forks: the child is the init (pid 1) of the new pid namespace.
 *      The init mounts that namespace's /proc (sys, sysrq-trigger, irq
 *      and bus read-only, as bwrap does), makes a user namespace of its
 *      own (the caller's uid and gid, as the host knows them, mapped to
 *      the ones it has there; no keyring shared with another skill) in
 *      which no further user namespace can be made (user.
 *      max_user_namespaces 0 there: in one the command would have every
 *      capability again, and could mount a tmpfs of no size bound),
 *      makes itself undumpable, drops every capability (bounding set,
 *      ambient, effective, permitted, inheritable), sets no_new_privs,
 *      forks the command (descriptors above 2 closed) and reaps every
 *      orphan until the command ends. Then it exits with the command's
 *      status, which ends the namespace: whatever the command left
 *      running is killed.
 *
 * Everything stays in the caller's process group, so whoever runs this
 * (skills/proc.c) stops the command by signalling the group, as it
 * would any program; SIGTERM, SIGINT and SIGHUP sent to this process are
 * passed to the init and from it to the command. This process waits for
 * the init and exits with its status: the command's exit code, or 128 +
 * N for a signal N (as bwrap and a shell report it).
 *
 * Its own failures are told on stderr after "tandem-sandbox-enter: "
 * and, when the caller gave one in $TANDEM_SANDBOX_NONCE, the nonce and
 * ": ": the variable is taken out of the environment and wiped before
 * anything else, so the command never knows it, and a command that
 * prints the same words is not taken for this program (holder.h). Exit
 * 125 when the command was never started (the sandbox could not be
 * entered or made: the caller may run it another way), 126 when PROGRAM
 * could not be executed and 127 when it does not exist. libc only.
 *
 * Steps 2 and 3 are enter_sandbox.c's; what the two share is in
 * enter_int.h. */
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/nsfs.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "skills/enter_int.h"

#define PREFIX "tandem-sandbox-enter: "

/* The variable the reviewer passes the nonce in, and its length at
 * most (hex digits). */
#define NONCE_VAR "TANDEM_SANDBOX_NONCE"
#define NONCE_MAX 64

/* What /proc shows read-only, as bwrap's --proc does. */
static const char *const proc_ro[] = {"/proc/sys", "/proc/sysrq-trigger",
                                      "/proc/irq", "/proc/bus", NULL};

/* The process the signals go to: the init (in this process), the
 * command (in the init). */
static pid_t child = -1;

/* The nonce its own failure lines carry (see the top), or "". */
static char nonce[NONCE_MAX + 1];

/* Tell one failure of its own on stderr: the prefix, the nonce, fmt. */
static void say(const char *fmt, va_list ap)
{
    fputs(PREFIX, stderr);
    if (*nonce)
        fprintf(stderr, "%s: ", nonce);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    fflush(stderr);
}

static void tell(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    say(fmt, ap);
    va_end(ap);
}

void tnd_enter_die(int code, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    say(fmt, ap);
    va_end(ap);
    exit(code);
}

/* Take NONCE_VAR out of the environment (the command never gets it) and
 * wipe it where it was (/proc/PID/environ shows that memory). */
static void take_nonce(void)
{
    extern char **environ;
    size_t len = strlen(NONCE_VAR);
    char **e;

    for (e = environ; e && *e; e++)
        if (strncmp(*e, NONCE_VAR, len) == 0 && (*e)[len] == '=')
            break;
    if (!e || !*e)
        return;
    if (strlen(*e + len + 1) <= NONCE_MAX &&
        strspn(*e + len + 1, "0123456789abcdef") == strlen(*e + len + 1))
        strcpy(nonce, *e + len + 1);
    memset(*e, 0, strlen(*e));
    do
        e[0] = e[1];
    while (*e++);
}

static void usage(void)
{
    tnd_enter_die(
        EXIT_NOT_ENTERED,
        "usage: tandem-sandbox-enter PID START --size BYTES [--hide DIR | "
        "--cover DIR | --dir DIR]... [--network] --workspace DIR -- PROGRAM "
        "[ARGS...] (it is run by tandem-reviewer, not by hand)");
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

/* An absolute path without "." or ".." components: every option's. */
static const char *clean_path(const char *s)
{
    if (!s || s[0] != '/' || strstr(s, "/./") || strstr(s, "/../"))
        usage();
    size_t n = strlen(s);
    if ((n >= 2 && strcmp(s + n - 2, "/.") == 0) ||
        (n >= 3 && strcmp(s + n - 3, "/..") == 0))
        usage();
    return s;
}

static void parse(request *r, int argc, char **argv)
{
    int i;

    memset(r, 0, sizeof(*r));
    if (argc < 3)
        usage();
    r->pid = number(argv[1]);
    r->start = (unsigned long long)number(argv[2]);
    for (i = 3; i < argc && strcmp(argv[i], "--") != 0; i++) {
        const char *opt = argv[i];
        if (strcmp(opt, "--network") == 0) {
            r->network = 1;
            continue;
        }
        if (i + 1 >= argc)
            usage();
        if (strcmp(opt, "--workspace") == 0)
            r->workspace = clean_path(argv[++i]);
        else if (strcmp(opt, "--size") == 0)
            r->size = (unsigned long long)number(argv[++i]);
        else if (r->nsteps < MAX_STEPS && strcmp(opt, "--dir") == 0)
            r->steps[r->nsteps++] = (step){STEP_DIR, clean_path(argv[++i])};
        else if (r->nsteps < MAX_STEPS && strcmp(opt, "--cover") == 0)
            r->steps[r->nsteps++] = (step){STEP_COVER, clean_path(argv[++i])};
        else if (r->nsteps < MAX_STEPS && strcmp(opt, "--hide") == 0)
            r->steps[r->nsteps++] = (step){STEP_HIDE, clean_path(argv[++i])};
        else
            usage();
    }
    if (i + 1 >= argc || !r->workspace || !r->size || argv[i + 1][0] != '/')
        usage();
    r->argv = argv + i + 1;
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

/* Whether fd is the namespace this process has in name (user, mnt). */
static int is_own(int fd, const char *name)
{
    char own[64];
    struct stat a, b;

    snprintf(own, sizeof(own), "/proc/self/ns/%s", name);
    if (fstat(fd, &a) < 0 || stat(own, &b) < 0)
        tnd_enter_die(EXIT_NOT_ENTERED, "cannot compare the %s namespace: %s",
                      name, strerror(errno));
    return a.st_dev == b.st_dev && a.st_ino == b.st_ino;
}

/* Join the holder's mount namespace and, first, the user namespace that
 * owns it. That is not always the one its process is in: bubblewrap run
 * by a user other than root maps that user to 0 in a first user
 * namespace, mounts there (a devpts needs root), and runs its command in
 * a second one inside the first, mapping the user back; capabilities in
 * the second give none over the mounts, which belong to the first. */
static void join(const request *r)
{
    char path[64];
    int dirfd, user, mnt;

    snprintf(path, sizeof(path), "/proc/%ld", r->pid);
    if ((dirfd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
        tnd_enter_die(
            EXIT_NOT_ENTERED,
            "the sandbox (process %ld) is gone: %s; the skill can run in a "
            "sandbox of its own",
            r->pid, strerror(errno));
    if (start_time(dirfd) != r->start)
        tnd_enter_die(EXIT_NOT_ENTERED,
                      "process %ld is not the sandbox any more (its start time "
                      "differs): it ended",
                      r->pid);
    if ((mnt = openat(dirfd, "ns/mnt", O_RDONLY | O_CLOEXEC)) < 0)
        tnd_enter_die(
            EXIT_NOT_ENTERED,
            "cannot open the mount namespace of the sandbox (process %ld): "
            "%s",
            r->pid, strerror(errno));
    close(dirfd);
    if ((user = ioctl(mnt, NS_GET_USERNS)) < 0)
        tnd_enter_die(
            EXIT_NOT_ENTERED,
            "cannot find the user namespace of the sandbox's mounts: %s",
            strerror(errno));
    if (is_own(mnt, "mnt") || is_own(user, "user"))
        tnd_enter_die(
            EXIT_NOT_ENTERED,
            "process %ld is not in a sandbox: its namespaces are this "
            "host's",
            r->pid);
    if (setns(user, CLONE_NEWUSER) < 0 || setns(mnt, CLONE_NEWNS) < 0)
        tnd_enter_die(EXIT_NOT_ENTERED,
                      "cannot join the sandbox's namespaces: %s",
                      strerror(errno));
    close(user);
    close(mnt);
}

/* Give up the controlling terminal, if there is one. */
static void leave_terminal(void)
{
    int fd = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);

    if (fd < 0)
        return; /* none */
    if (ioctl(fd, TIOCNOTTY) < 0)
        tnd_enter_die(EXIT_NOT_ENTERED, "cannot give up the terminal: %s",
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
            tnd_enter_die(EXIT_NOT_ENTERED, "cannot drop capability %d: %s",
                          cap, strerror(errno));
    if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 &&
        errno != EINVAL)
        tnd_enter_die(EXIT_NOT_ENTERED,
                      "cannot clear the ambient capabilities: %s",
                      strerror(errno));
    memset(data, 0, sizeof(data));
    if (syscall(SYS_capset, &hdr, data) < 0)
        tnd_enter_die(EXIT_NOT_ENTERED, "cannot drop the capabilities: %s",
                      strerror(errno));
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
        tnd_enter_die(EXIT_NOT_ENTERED, "cannot set no_new_privs: %s",
                      strerror(errno));
}

/* Write value to the sysctl at path; dies when it cannot. */
static void set_sysctl(const char *path, unsigned long long value)
{
    char text[32];
    int fd = open(path, O_WRONLY | O_CLOEXEC), n;

    n = snprintf(text, sizeof(text), "%llu\n", value);
    if (fd < 0 || write(fd, text, (size_t)n) != n)
        tnd_enter_die(EXIT_NOT_ENTERED, "cannot set %s: %s", path,
                      strerror(errno));
    close(fd);
}

/* The skill's IPC namespace holds size bytes of System V shared memory
 * at most, as each of its tmpfs does: a fresh namespace allows about
 * 2^64, no rlimit counts a segment written and detached, and a skill of
 * memory_mb 128 held 1.5 GiB of the host's memory so (a review found
 * it). Set while the init still has its capabilities over that
 * namespace (the user namespace that made it). */
static void bound_shm(unsigned long long size)
{
    long page = sysconf(_SC_PAGESIZE);

    set_sysctl("/proc/sys/kernel/shmmax", size);
    set_sysctl("/proc/sys/kernel/shmall",
               size / (unsigned long long)(page > 0 ? page : 4096));
}

/* The pid namespace's own /proc, with bwrap's read-only parts, the
 * skill's shared memory bounded to shm bytes. Returns /proc/sys/user
 * opened before /proc/sys is read-only (O_PATH): the sysctls of the
 * init's own user namespace are set through it, once it is in that
 * namespace and can no longer mount. */
static int mount_proc(unsigned long long shm)
{
    const unsigned long fl = MS_NOSUID | MS_NODEV | MS_NOEXEC;
    int user;

    if (mount("proc", "/proc", "proc", fl, NULL) < 0)
        tnd_enter_die(EXIT_NOT_ENTERED, "cannot mount /proc: %s",
                      strerror(errno));
    bound_shm(shm);
    if ((user = open("/proc/sys/user", O_PATH | O_DIRECTORY | O_CLOEXEC)) < 0)
        tnd_enter_die(EXIT_NOT_ENTERED, "cannot open /proc/sys/user: %s",
                      strerror(errno));
    for (int i = 0; proc_ro[i]; i++) {
        const char *p = proc_ro[i];
        if (access(p, F_OK) < 0)
            continue;
        if (mount(p, p, NULL, MS_BIND | MS_REC, NULL) < 0 ||
            mount(NULL, p, NULL, MS_BIND | MS_REMOUNT | MS_RDONLY | fl, NULL) <
                0)
            tnd_enter_die(EXIT_NOT_ENTERED, "cannot make %s read-only: %s", p,
                          strerror(errno));
    }
    return user;
}

static void forward(int sig)
{
    if (child > 0)
        kill(child, sig);
}

static void forward_signals(void)
{
    struct sigaction sa;

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = forward;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
}

/* Die with the parent, and make sure it was still there (its end of the
 * pipe alive is open). */
static void die_with_parent(int alive)
{
    struct pollfd p = {alive, POLLIN, 0};

    if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || poll(&p, 1, 0) != 0)
        _exit(EXIT_NOT_ENTERED);
    close(alive);
}

static void write_file(const char *path, const char *text)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    ssize_t n = fd < 0 ? -1 : write(fd, text, strlen(text));

    if (n != (ssize_t)strlen(text))
        tnd_enter_die(EXIT_NOT_ENTERED, "cannot write %s: %s", path,
                      strerror(errno));
    close(fd);
}

/* A user namespace of the skill's own, mapping only its user and group
 * (as the host knows them: the sandbox's may be 0 in the namespace
 * joined, see join): what belongs to a user namespace (the user keyring
 * above all) is not shared with the other skills, which all joined the
 * holder's. */
static void own_user_namespace(uid_t host_uid, gid_t host_gid)
{
    char map[64];
    uid_t uid = geteuid();
    gid_t gid = getegid();

    if (unshare(CLONE_NEWUSER) < 0)
        tnd_enter_die(EXIT_NOT_ENTERED, "cannot make a user namespace: %s",
                      strerror(errno));
    write_file("/proc/self/setgroups", "deny");
    snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)host_uid, (unsigned)uid);
    write_file("/proc/self/uid_map", map);
    snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)host_gid, (unsigned)gid);
    write_file("/proc/self/gid_map", map);
}

/* No user namespace can be made below the current one (what bwrap's
 * --disable-userns gives): its user.max_user_namespaces, 0. The limit
 * is the namespace's own, and the kernel checks it at every level up
 * whenever one is made; with no capability left the command cannot
 * raise it. user is /proc/sys/user (mount_proc): a sysctl of the user
 * namespaces is looked up in the opener's namespace, so it is opened
 * from here, beneath a directory of the /proc still writable. */
static void no_user_namespaces(int user)
{
    int fd = openat(user, "max_user_namespaces", O_WRONLY | O_CLOEXEC);

    if (fd < 0 || write(fd, "0\n", 2) != 2)
        tnd_enter_die(EXIT_NOT_ENTERED, "cannot forbid user namespaces: %s",
                      strerror(errno));
    close(fd);
    close(user);
}

/* Fork a child that dies with this process, as it checks it was still
 * there when that was set (the write end of a pipe stays open here until
 * this process ends), and that the signals are passed to: they wait,
 * blocked, until `child` names it. The child's pid here; 0 in the child,
 * where they are still blocked. */
static pid_t fork_tied(void)
{
    sigset_t set;
    int alive[2];
    pid_t pid;

    if (pipe2(alive, O_CLOEXEC) < 0)
        tnd_enter_die(EXIT_NOT_ENTERED, "cannot make a pipe: %s",
                      strerror(errno));
    fflush(stderr);
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGHUP);
    sigprocmask(SIG_BLOCK, &set, NULL);
    if ((pid = fork()) < 0)
        tnd_enter_die(EXIT_NOT_ENTERED, "cannot fork: %s", strerror(errno));
    if (pid == 0) {
        close(alive[1]);
        die_with_parent(alive[0]);
        return 0;
    }
    close(alive[0]);
    child = pid;
    /* unblocked, not the mask before: the init's was inherited with
     * them blocked, and would have kept them so */
    sigprocmask(SIG_UNBLOCK, &set, NULL);
    return pid;
}

/* Wait for pid, reaping every other child on the way; its status as an
 * exit code. */
static int reap_until(pid_t pid, const char *what)
{
    int status;

    for (;;) {
        pid_t got = wait(&status);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            tnd_enter_die(EXIT_NOT_ENTERED, "cannot wait for '%s': %s", what,
                          strerror(errno));
        if (got == pid)
            break;
    }
    if (WIFSIGNALED(status))
        return 128 + WTERMSIG(status);
    return WEXITSTATUS(status);
}

/* Step 4: pid 1 of the skill's pid namespace. */
static void init_main(char **argv, uid_t host_uid, gid_t host_gid,
                      unsigned long long shm)
{
    sigset_t none;
    int user = mount_proc(shm);

    own_user_namespace(host_uid, host_gid);
    no_user_namespaces(user);
    /* the command may not trace its init (and reach what it holds) */
    if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
        tnd_enter_die(EXIT_NOT_ENTERED, "cannot make the init undumpable: %s",
                      strerror(errno));
    drop_capabilities();
    forward_signals();
    if (fork_tied() == 0) {
        int err;
        /* the command's signals as a program's are: default, unblocked
         * (a TERM now ends it, as it would after the exec) */
        signal(SIGTERM, SIG_DFL);
        signal(SIGINT, SIG_DFL);
        signal(SIGHUP, SIG_DFL);
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        /* nothing of the enter program's beyond stdin, stdout, stderr
         * (closefrom falls back to /proc/self/fd without close_range) */
        closefrom(3);
        execv(argv[0], argv);
        err = errno;
        tell("cannot run '%s': %s", argv[0], strerror(err));
        _exit(err == ENOENT ? EXIT_NOT_FOUND : EXIT_NOT_EXEC);
    }
    exit(reap_until(child, argv[0]));
}

int main(int argc, char **argv)
{
    pid_t parent = getppid();
    /* the ids the skill runs as (bwrap maps the real ones; the reviewer
     * is never set-id, so they are the same) */
    uid_t uid = geteuid();
    gid_t gid = getegid();
    request r;

    take_nonce();
    parse(&r, argc, argv);
    leave_terminal();
    join(&r);
    tnd_enter_make_sandbox(&r);
    /* joining a user namespace may clear the death signal the caller
     * set; set it again, and make sure the caller is still there */
    if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0 || getppid() != parent)
        tnd_enter_die(EXIT_NOT_ENTERED, "the program that ran this has ended");
    forward_signals();
    if (fork_tied() == 0)
        init_main(r.argv, uid, gid, r.size);
    /* this process keeps its capabilities in the sandbox's user
     * namespace only while it waits; it runs nothing else */
    return reap_until(child, r.argv[0]);
}
