/* File and directory helpers (see fs.h). */
#include "common/fs.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/xalloc.h"

/* What a file that is not a regular one is, for messages. */
static const char *file_kind(mode_t mode)
{
    if (S_ISDIR(mode))
        return "a directory";
    if (S_ISFIFO(mode))
        return "a FIFO";
    if (S_ISCHR(mode))
        return "a character device";
    if (S_ISBLK(mode))
        return "a block device";
    if (S_ISSOCK(mode))
        return "a socket";
    return "of an unknown kind";
}

int tnd_fs_check_regular(const char *path)
{
    struct stat st;

    if (stat(path, &st) < 0) {
        if (errno == ENOENT) {
            tnd_error_set("%s: no such file", path);
            return TND_ENOTFOUND;
        }
        return tnd_error_sys("cannot read %s", path);
    }
    if (!S_ISREG(st.st_mode))
        return tnd_error_set("%s is not a regular file (it is %s)", path,
                             file_kind(st.st_mode));
    return 0;
}

int tnd_fs_read_fd(char **out, size_t *len_out, int fd, const char *name,
                   size_t cap)
{
    tnd_buf buf;
    char chunk[65536];
    int error = 0;
    ssize_t n;

    *out = NULL;
    tnd_buf_init(&buf, cap);
    for (;;) {
        /* at most cap + 1 bytes in all: one more than allowed is enough
         * to know, whatever the other side still has */
        size_t room = cap - buf.len;
        size_t want = room < sizeof(chunk) ? room + 1 : sizeof(chunk);
        n = read(fd, chunk, want);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            /* a non-blocking pipe handed down to us: wait for it */
            struct pollfd p = {.fd = fd, .events = POLLIN};
            if (poll(&p, 1, -1) >= 0 || errno == EINTR)
                continue;
        }
        if (n < 0) {
            error = tnd_error_sys("cannot read %s", name);
            break;
        }
        if (n == 0)
            break;
        if (tnd_buf_append(&buf, chunk, (size_t)n) < 0) {
            error = tnd_error_set("%s is larger than %zu bytes", name, cap);
            break;
        }
    }
    if (error < 0) {
        tnd_buf_free(&buf);
        return error;
    }
    *out = tnd_buf_detach(&buf, len_out);
    return 0;
}

/* fd, just opened (path names it), read as tnd_fs_read reads a file;
 * closed. */
static int read_opened(char **out, size_t *len_out, int fd, const char *path,
                       size_t cap)
{
    struct stat st;
    int error;

    if (fstat(fd, &st) < 0)
        error = tnd_error_sys("cannot read %s", path);
    else if (!S_ISREG(st.st_mode))
        error = tnd_error_set("%s is not a regular file (it is %s)", path,
                              file_kind(st.st_mode));
    else if ((uintmax_t)st.st_size > cap)
        error = tnd_error_set("%s is larger than %zu bytes", path, cap);
    else /* and capped again while reading: the file may be growing */
        error = tnd_fs_read_fd(out, len_out, fd, path, cap);
    close(fd);
    return error;
}

int tnd_fs_read(char **out, size_t *len_out, const char *path, size_t cap)
{
    int fd;

    *out = NULL;
    /* O_NONBLOCK so that opening a FIFO does not wait for a writer (fstat
     * then refuses it); reads from a regular file ignore the flag.
     * O_NOCTTY so that a terminal named by mistake is not adopted. */
    fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT) {
            tnd_error_set("%s: no such file", path);
            return TND_ENOTFOUND;
        }
        return tnd_error_sys("cannot open %s", path);
    }
    return read_opened(out, len_out, fd, path, cap);
}

int tnd_fs_read_at(char **out, size_t *len_out, int dirfd, const char *name,
                   const char *path, size_t cap)
{
    int fd;

    *out = NULL;
    fd = openat(dirfd, name,
                O_RDONLY | O_NONBLOCK | O_NOCTTY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT) {
            tnd_error_set("%s: no such file", path);
            return TND_ENOTFOUND;
        }
        if (errno == ELOOP)
            return tnd_error_set("%s is a symbolic link; it is not followed",
                                 path);
        return tnd_error_sys("cannot open %s", path);
    }
    return read_opened(out, len_out, fd, path, cap);
}

int tnd_fs_write_all(int fd, const void *data, size_t len)
{
    const char *p = data;

    while (len > 0) {
        ssize_t n = write(fd, p, len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

int tnd_fs_write(const char *path, const void *data, size_t len)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

    if (fd < 0)
        return tnd_error_sys("cannot create %s", path);
    if (tnd_fs_write_all(fd, data, len) < 0) {
        tnd_error_sys("cannot write %s", path);
        close(fd);
        return -1;
    }
    if (close(fd) < 0)
        return tnd_error_sys("cannot write %s", path);
    return 0;
}

/* Writes of this process, so two threads (two served sessions saving
 * one repository's lessons) never share a temporary file. */
static atomic_uint writes;

static int replace(const char *path, const void *data, size_t len, bool sync)
{
    char *dir = tnd_fs_dirname(path);
    char *tmp = tnd_xasprintf("%s.tmp.%ld.%u", path, (long)getpid(),
                              atomic_fetch_add(&writes, 1));
    int fd = -1, dfd = -1, error = -1;

    /* made new, never through a link: a name planted beside the file (a
     * directory another user may write in) was opened and truncated, and
     * the data went where the link pointed; one left by a process killed
     * with this pid goes first */
    for (int tries = 0; tries < 2 && fd < 0; tries++) {
        fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                  0644);
        if (fd < 0 && errno == EEXIST && tries == 0)
            unlink(tmp);
    }
    if (fd < 0) {
        tnd_error_sys("cannot create %s", tmp);
        goto out;
    }
    if (tnd_fs_write_all(fd, data, len) < 0 || (sync && fsync(fd) < 0)) {
        tnd_error_sys("cannot write %s", tmp);
        goto out;
    }
    if (close(fd) < 0) {
        fd = -1;
        tnd_error_sys("cannot write %s", tmp);
        goto out;
    }
    fd = -1;
    if (rename(tmp, path) < 0) {
        tnd_error_sys("cannot replace %s", path);
        goto out;
    }
    if (sync && (dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0)
        fsync(dfd);
    error = 0;
out:
    if (fd >= 0)
        close(fd);
    if (dfd >= 0)
        close(dfd);
    if (error < 0)
        unlink(tmp);
    free(tmp);
    free(dir);
    return error;
}

int tnd_fs_write_atomic(const char *path, const void *data, size_t len)
{
    return replace(path, data, len, true);
}

/* path is a regular file (not a symlink) holding exactly data. */
static bool holds(const char *path, const void *data, size_t len)
{
    int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    char block[8192];
    struct stat st;
    size_t at = 0;
    bool same;

    if (fd < 0)
        return false;
    same =
        fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (size_t)st.st_size == len;
    while (same && at < len) {
        size_t want = len - at < sizeof(block) ? len - at : sizeof(block);
        ssize_t n = read(fd, block, want);

        same = n > 0 && memcmp(block, (const char *)data + at, (size_t)n) == 0;
        at += n > 0 ? (size_t)n : 0;
    }
    close(fd);
    return same;
}

/* Cut the file open at fd to len bytes when it is longer. */
static int cut_to(int fd, size_t len)
{
    struct stat st;

    if (fstat(fd, &st) < 0)
        return -1;
    return (size_t)st.st_size > len ? ftruncate(fd, (off_t)len) : 0;
}

/* The spare of path: DIR/.NAME.spare. Caller frees. */
static char *spare_of(const char *path)
{
    const char *slash = strrchr(path, '/');

    if (!slash)
        return tnd_xasprintf(".%s.spare", path);
    return tnd_xasprintf("%.*s/.%s.spare", (int)(slash - path), path,
                         slash + 1);
}

/* A spare that is not a regular file (what a swap took from path's
 * place) is removed, so the next write makes a proper one. */
static void drop_odd_spare(const char *spare)
{
    struct stat st;

    if (lstat(spare, &st) == 0 && !S_ISREG(st.st_mode))
        unlink(spare);
}

int tnd_fs_write_replace(const char *path, const void *data, size_t len)
{
    /* a view rebuilt after every step mostly comes out the same: reading
     * it costs far less than a new file (an inode, a rename) */
    if (holds(path, data, len))
        return 0;
    return tnd_fs_write_swap(path, data, len);
}

int tnd_fs_write_swap(const char *path, const void *data, size_t len)
{
    char *spare;
    int fd, rc;

    /* write the spare, then swap it with path: no inode made or freed
     * (on ext4 allocating one costs more than all the rest, see
     * fs.h); the old text is the next spare */
    spare = spare_of(path);
    fd = open(spare, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
    if (fd < 0 && (errno == ELOOP || errno == EISDIR)) {
        drop_odd_spare(spare); /* never written through */
        fd = open(spare, O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0644);
    }
    /* written over, then cut to length: truncating to 0 first would make
     * ext4 write the file out at its close (auto_da_alloc, meant for
     * programs that replace a file without fsync), an I/O per view */
    if (fd < 0 || tnd_fs_write_all(fd, data, len) < 0 || cut_to(fd, len) < 0) {
        if (fd >= 0)
            close(fd);
        free(spare);
        return replace(path, data, len, false);
    }
    rc = close(fd);
    if (rc == 0)
        rc = renameat2(AT_FDCWD, spare, AT_FDCWD, path, RENAME_EXCHANGE);
    if (rc < 0 && errno == ENOENT) /* the first time: the spare becomes it */
        rc = rename(spare, path);
    else if (rc == 0)
        drop_odd_spare(spare); /* path was a symlink, say: not kept */
    free(spare);
    if (rc < 0) /* a filesystem that cannot swap: a new file each time */
        return replace(path, data, len, false);
    return 0;
}

int tnd_fs_mkdirs(const char *path, mode_t mode)
{
    char *copy = tnd_xstrdup(path);
    size_t len = strlen(copy);
    int error = 0;

    /* the whole path first: it, or all of it but the last part, mostly
     * exists, so that is one mkdir rather than one for each part; on
     * ENOENT back up a part at a time, then make the parts cut off */
    while (mkdir(copy, mode) < 0 && errno != EEXIST) {
        char *slash = strrchr(copy, '/');

        /* ENOTDIR: a file in the way, which the forward pass names */
        if ((errno != ENOENT && errno != ENOTDIR) || !slash || slash == copy) {
            error = tnd_error_sys("cannot create directory %s", copy);
            break;
        }
        *slash = '\0';
    }
    while (error == 0 && strlen(copy) < len) {
        copy[strlen(copy)] = '/';
        if (mkdir(copy, mode) < 0 && errno != EEXIST)
            error = tnd_error_sys("cannot create directory %s", copy);
    }
    if (error == 0 && !tnd_fs_is_dir(path))
        error = tnd_error_set("%s exists and is not a directory", path);
    free(copy);
    return error;
}

bool tnd_fs_exists(const char *path)
{
    struct stat st;

    return lstat(path, &st) == 0;
}

bool tnd_fs_is_dir(const char *path)
{
    struct stat st;

    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

char *tnd_fs_join(const char *a, const char *b)
{
    size_t n = strlen(a), m = strlen(b);
    bool slash = n == 0 || a[n - 1] != '/';
    char *out = tnd_xmalloc(n + slash + m + 1);

    /* copied, not printed: a server joins hundreds of paths a task, and
     * printf's machinery was most of what that cost */
    memcpy(out, a, n);
    if (slash)
        out[n] = '/';
    memcpy(out + n + slash, b, m + 1);
    return out;
}

char *tnd_fs_dirname(const char *path)
{
    const char *slash = strrchr(path, '/');

    if (!slash)
        return tnd_xstrdup(".");
    if (slash == path)
        return tnd_xstrdup("/");
    return tnd_xstrndup(path, (size_t)(slash - path));
}

char *tnd_fs_realpath(const char *path)
{
    char *p = realpath(path, NULL);

    if (!p) {
        tnd_error_sys("cannot resolve %s", path);
        return NULL;
    }
    /* realpath's result comes from malloc; hand it over as is */
    return p;
}

char *tnd_fs_self_dir(void)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

    if (n <= 0)
        return NULL;
    exe[n] = '\0';
    return tnd_fs_dirname(exe);
}

char *tnd_fs_user_tmp(void)
{
    const char *tmp = getenv("TMPDIR");
    bool own = tmp && tmp[0] == '/';
    char *base;
    struct stat st;

    if (!own)
        tmp = "/tmp";
    base = tnd_xasprintf("%s/tandem-%ld", tmp, (long)getuid());
    if (mkdir(base, 0700) < 0 && errno != EEXIST) {
        tnd_error_set("cannot create tandem's runtime directory %s: %s; %s",
                      base, strerror(errno),
                      own ? "set TMPDIR to a directory you may write, or "
                            "unset it for /tmp"
                          : "make /tmp writable, or set TMPDIR to a "
                            "directory you may write");
        free(base);
        return NULL;
    }
    if (lstat(base, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != getuid() ||
        (st.st_mode & 077)) {
        tnd_error_set("%s must be a directory owned by you with mode 0700 "
                      "(it is not; remove it or set TMPDIR)",
                      base);
        free(base);
        return NULL;
    }
    return base;
}

unsigned long long tnd_fs_files_raise(unsigned long long want)
{
    struct rlimit rl;

    if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
        return 0;
    if (rl.rlim_cur == RLIM_INFINITY)
        return ULLONG_MAX;
    if (rl.rlim_cur < want) {
        struct rlimit up = rl;
        up.rlim_cur = rl.rlim_max != RLIM_INFINITY && rl.rlim_max < want
                          ? rl.rlim_max
                          : (rlim_t)want;
        if (setrlimit(RLIMIT_NOFILE, &up) == 0)
            rl = up;
    }
    return rl.rlim_cur;
}

int tnd_fs_lock_new(int dirfd, const char *name)
{
    char pid[32];
    int fd, saved;

    fd = openat(dirfd, name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                0600);
    if (fd < 0)
        return -1;
    if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
        saved = errno;
        close(fd);
        unlinkat(dirfd, name, 0);
        errno = saved;
        return -1;
    }
    snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
    if (write(fd, pid, strlen(pid)) < 0) {
        /* the pid is only for a person looking */
    }
    return fd;
}

/* How many names make_held tries: one is lost only to a sweep that
 * took it between its making and its lock (this process stopped there
 * for longer than a sweep's grace), and that sweep removes it. */
#define HELD_TRIES 20

/* tnd_fs_mkstemps_held (dir false) and tnd_fs_mkdtemp_held (true). */
static int make_held(char *tmpl, int suffix_len, bool dir)
{
    char *orig = tnd_xstrdup(tmpl);
    struct stat held, now;
    int fd = -1, saved;

    for (int tries = 0; tries < HELD_TRIES; tries++) {
        strcpy(tmpl, orig);
        if (dir) {
            if (!mkdtemp(tmpl))
                break;
            fd = open(tmpl, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
            if (fd < 0 && errno == ENOENT)
                continue; /* a sweep removed it already */
            if (fd < 0)
                goto failed;
        } else {
            fd = mkostemps(tmpl, suffix_len, O_CLOEXEC);
        }
        if (fd < 0)
            break;
        if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
            if (errno != EWOULDBLOCK)
                goto failed;
            close(fd); /* a sweep holds it */
            fd = -1;
            continue;
        }
        if (fstat(fd, &held) < 0)
            goto failed;
        /* locked: still at its name, or a sweep removed it first */
        if (lstat(tmpl, &now) == 0 && now.st_dev == held.st_dev &&
            now.st_ino == held.st_ino)
            break;
        close(fd);
        fd = -1;
        errno = EAGAIN;
    }
    free(orig);
    return fd;
failed:
    saved = errno;
    if (fd >= 0)
        close(fd);
    if (dir)
        rmdir(tmpl);
    else
        unlink(tmpl);
    free(orig);
    errno = saved;
    return -1;
}

int tnd_fs_mkstemps_held(char *tmpl, int suffix_len)
{
    return make_held(tmpl, suffix_len, false);
}

int tnd_fs_mkdtemp_held(char *tmpl)
{
    return make_held(tmpl, 0, true);
}

void tnd_fs_std_fds(void)
{
    for (int fd = 0; fd <= 2; fd++) {
        if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF)
            continue;
        /* the lowest free number: this one */
        int got = open("/dev/null", O_RDONLY);
        if (got >= 0 && got != fd)
            close(got); /* someone else's: leave it closed */
    }
}
