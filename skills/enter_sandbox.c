/* A skill's sandbox made inside the holder's (see enter_int.h; steps 2
 * and 3 of enter_main.c's top): namespaces of its own, every mount
 * private, the roots hidden and the covers made (tmpfs of --size bytes
 * at most), the workspace bound back at its own path as the cwd, and
 * what is not the workspace read-only. libc only, as the program is. */
#include "skills/enter_int.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/mount.h>
#include <linux/openat2.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static void loopback_up(void)
{
    struct ifreq ifr;
    int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);

    memset(&ifr, 0, sizeof(ifr));
    strcpy(ifr.ifr_name, "lo");
    if (s < 0 || ioctl(s, SIOCGIFFLAGS, &ifr) < 0 ||
        (ifr.ifr_flags |= IFF_UP, ioctl(s, SIOCSIFFLAGS, &ifr) < 0))
        tnd_enter_die(EXIT_NOT_ENTERED, "cannot bring up the loopback: %s",
                      strerror(errno));
    close(s);
}

/* mkdir -p, on the tmpfs a cover made. */
static void make_dirs(const char *path)
{
    char buf[4096];
    size_t n = strlen(path);

    if (n >= sizeof(buf))
        tnd_enter_die(EXIT_NOT_ENTERED, "path too long: %s", path);
    memcpy(buf, path, n + 1);
    for (char *p = buf + 1;; p++) {
        if (*p != '/' && *p != '\0')
            continue;
        char c = *p;
        *p = '\0';
        if (mkdir(buf, 0755) < 0 && errno != EEXIST)
            tnd_enter_die(EXIT_NOT_ENTERED, "cannot make %s in the sandbox: %s",
                          buf, strerror(errno));
        if (!(*p = c))
            break;
    }
}

/* A tmpfs of size bytes at most on path. */
static void tmpfs(const char *path, const char *mode, unsigned long long size)
{
    char opts[64];

    snprintf(opts, sizeof(opts), "mode=%s,size=%llu", mode, size);
    if (mount("tmpfs", path, "tmpfs", MS_NOSUID | MS_NODEV, opts) < 0)
        tnd_enter_die(EXIT_NOT_ENTERED, "cannot cover %s in the sandbox: %s",
                      path, strerror(errno));
}

/* Whether path is a directory in the sandbox. */
static int is_dir(const char *path)
{
    struct stat st;

    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* The workspace at path, opened with no symlink on the way. */
static int open_workspace(const char *path)
{
    struct open_how how;
    int fd;

    memset(&how, 0, sizeof(how));
    how.flags = O_PATH | O_DIRECTORY | O_CLOEXEC;
    how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
    fd = (int)syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof(how));
    if (fd < 0)
        tnd_enter_die(EXIT_NOT_ENTERED,
                      "cannot open the workspace %s in the sandbox: %s", path,
                      strerror(errno));
    return fd;
}

/* Bind the directory open at fd on path (a directory). */
static void bind_at(int fd, const char *path)
{
    int tree =
        (int)syscall(SYS_open_tree, fd, "",
                     OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);

    if (tree < 0 || syscall(SYS_move_mount, tree, "", AT_FDCWD, path,
                            MOVE_MOUNT_F_EMPTY_PATH) < 0)
        tnd_enter_die(EXIT_NOT_ENTERED, "cannot bind the workspace at %s: %s",
                      path, strerror(errno));
    close(tree);
}

/* Make the mount at path read-only, with flags. */
static void read_only(const char *path, unsigned long flags)
{
    if (mount(NULL, path, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY | flags,
              NULL) < 0)
        tnd_enter_die(EXIT_NOT_ENTERED, "cannot make %s read-only: %s", path,
                      strerror(errno));
}

/* Whether path is dir or lies beneath it (both clean and absolute). */
static int under(const char *path, const char *dir)
{
    size_t n = strlen(dir);

    if (strcmp(dir, "/") == 0)
        return 1;
    return strncmp(path, dir, n) == 0 && (path[n] == '\0' || path[n] == '/');
}

/* Make step i's tmpfs (a --hide) read-only, unless something mounted
 * after it, on it or above, hides it (the path then names that mount, or
 * a directory in it: nothing of the tmpfs is in sight to write). */
static void hide_read_only(const request *r, int i)
{
    if (under(r->steps[i].path, r->workspace))
        return;
    for (int j = i + 1; j < r->nsteps; j++)
        if (r->steps[j].kind != STEP_DIR &&
            under(r->steps[i].path, r->steps[j].path))
            return;
    read_only(r->steps[i].path, MS_NOSUID | MS_NODEV);
}

/* Steps 2 and 3 (see enter_main.c's top). */
void tnd_enter_make_sandbox(const request *r)
{
    int flags = CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC | CLONE_NEWUTS;
    int ws;

    if (!r->network)
        flags |= CLONE_NEWNET;
    if (unshare(flags) < 0)
        tnd_enter_die(EXIT_NOT_ENTERED,
                      "cannot make the skill's namespaces: %s",
                      strerror(errno));
    /* a kernel without cgroup namespaces shows the host's names only */
    if (unshare(CLONE_NEWCGROUP) < 0 && errno != EINVAL)
        tnd_enter_die(EXIT_NOT_ENTERED, "cannot make a cgroup namespace: %s",
                      strerror(errno));
    if (!r->network)
        loopback_up();
    if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
        tnd_enter_die(EXIT_NOT_ENTERED, "cannot make the mounts private: %s",
                      strerror(errno));
    ws = open_workspace(r->workspace);
    for (int i = 0; i < r->nsteps; i++) {
        make_dirs(r->steps[i].path);
        if (r->steps[i].kind != STEP_DIR)
            tmpfs(r->steps[i].path, "0755", r->size);
    }
    if (is_dir("/dev/shm"))
        tmpfs("/dev/shm", "1777", r->size);
    if (is_dir("/dev/pts") &&
        mount("devpts", "/dev/pts", "devpts", MS_NOSUID | MS_NOEXEC,
              "newinstance,ptmxmode=0666,mode=620") < 0)
        tnd_enter_die(EXIT_NOT_ENTERED, "cannot make /dev/pts: %s",
                      strerror(errno));
    make_dirs(r->workspace);
    bind_at(ws, r->workspace);
    close(ws);
    if (chdir(r->workspace) < 0)
        tnd_enter_die(EXIT_NOT_ENTERED, "cannot enter %s in the sandbox: %s",
                      r->workspace, strerror(errno));
    /* what hides the roots holds only the way to the workspace: a file
     * written beside it would be lost with the sandbox (a build's output
     * in ../, say), and is refused instead, as in a bwrap of its own */
    for (int i = 0; i < r->nsteps; i++)
        if (r->steps[i].kind == STEP_HIDE)
            hide_read_only(r, i);
    /* the holder's root and /dev are every skill's: read-only in this
     * one's mount namespace (the holder's own stay as they are), so no
     * skill leaves a file there for another */
    read_only("/", MS_NOSUID | MS_NODEV);
    read_only("/dev", MS_NOSUID | MS_NOEXEC);
}
