/* File and directory helpers (see fs.h). */
#include "common/fs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/fs.h>
#include <poll.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/ioctl.h>
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

static int write_all(int fd, const void *data, size_t len)
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
    if (write_all(fd, data, len) < 0) {
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
    if (write_all(fd, data, len) < 0 || (sync && fsync(fd) < 0)) {
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
    if (fd < 0 || write_all(fd, data, len) < 0 || cut_to(fd, len) < 0) {
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

static bool skipped(const char *name, const char *const *skip)
{
    for (; skip && *skip; skip++)
        if (strcmp(name, *skip) == 0)
            return true;
    return false;
}

/* The bytes of in into out (both at offset 0), the fastest way the
 * filesystem allows: a reflink (FICLONE: the copy shares the blocks until
 * one side writes), else copy_file_range (in the kernel, no user-space
 * buffer), else read and write. */
static int copy_contents(int in, int out)
{
    char chunk[65536];

    if (ioctl(out, FICLONE, in) == 0)
        return 0;
    for (;;) {
        ssize_t n = copy_file_range(in, NULL, out, NULL, 1 << 30, 0);
        if (n == 0)
            return 0;
        if (n > 0)
            continue;
        if (errno == EINTR)
            continue;
        if (errno != EXDEV && errno != ENOSYS && errno != EINVAL &&
            errno != EOPNOTSUPP && errno != EPERM)
            return -1;
        break; /* not here: copy by hand from where it stopped */
    }
    for (;;) {
        ssize_t n = read(in, chunk, sizeof(chunk));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return n < 0 ? -1 : 0;
        if (write_all(out, chunk, (size_t)n) < 0)
            return -1;
    }
}

int tnd_fs_copy_fd(int in, const char *dst, const struct stat *st)
{
    return tnd_fs_copy_fd_at(in, AT_FDCWD, dst, st);
}

int tnd_fs_copy_fd_at(int in, int dirfd, const char *dst, const struct stat *st)
{
    struct timespec times[2];
    int out, error = 0;

    out =
        openat(dirfd, dst, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
               st->st_mode & 07777);
    if (out < 0)
        return tnd_error_sys("cannot create %s", dst);
    if (copy_contents(in, out) < 0) {
        error = tnd_error_sys("cannot copy into %s", dst);
    } else {
        /* open() applied the umask; the copy keeps the original's mode */
        fchmod(out, st->st_mode & 07777);
        times[0] = st->st_atim;
        times[1] = st->st_mtim;
        futimens(out, times);
    }
    if (close(out) < 0 && error == 0)
        error = tnd_error_sys("cannot write %s", dst);
    return error;
}

static int copy_file(const char *src, const char *dst, const struct stat *st)
{
    int in, error;

    if ((in = open(src, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0)
        return tnd_error_sys("cannot read %s", src);
    error = tnd_fs_copy_fd(in, dst, st);
    close(in);
    return error;
}

static int copy_link(const char *src, const char *dst)
{
    char target[PATH_MAX];
    ssize_t n = readlink(src, target, sizeof(target) - 1);

    if (n < 0)
        return tnd_error_sys("cannot read link %s", src);
    target[n] = '\0';
    if (symlink(target, dst) < 0)
        return tnd_error_sys("cannot create link %s", dst);
    return 0;
}

/* The deepest a copied tree may go: each level holds a directory open
 * and a stack frame (2,000 nested directories crashed the copy). */
#define COPY_DEPTH_MAX 256

static int copy_dir(const char *src, const char *dst, const char *const *skip,
                    size_t *budget, mode_t mode, int depth)
{
    DIR *d;
    struct dirent *e;
    int error = 0;

    if (depth > COPY_DEPTH_MAX)
        return tnd_error_set("the tree is more than %d directories deep (at "
                             "%s)",
                             COPY_DEPTH_MAX, src);
    if (mkdir(dst, (mode & 07777) | 0700) < 0)
        return tnd_error_sys("cannot create directory %s", dst);
    if (!(d = opendir(src)))
        return tnd_error_sys("cannot read directory %s", src);
    while (error == 0 && (e = readdir(d)) != NULL) {
        struct stat st;
        char *s, *t;
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 ||
            skipped(e->d_name, skip))
            continue;
        s = tnd_fs_join(src, e->d_name);
        t = tnd_fs_join(dst, e->d_name);
        if (lstat(s, &st) < 0) {
            error = tnd_error_sys("cannot read %s", s);
        } else if (S_ISDIR(st.st_mode)) {
            error = copy_dir(s, t, NULL, budget, st.st_mode, depth + 1);
        } else if (S_ISREG(st.st_mode)) {
            if ((size_t)st.st_size > *budget)
                error = tnd_error_set(
                    "the tree is larger than the copy limit (at %s)", s);
            else {
                *budget -= (size_t)st.st_size;
                error = copy_file(s, t, &st);
            }
        } else if (S_ISLNK(st.st_mode)) {
            error = copy_link(s, t);
        }
        free(s);
        free(t);
    }
    closedir(d);
    return error;
}

int tnd_fs_copytree(const char *src, const char *dst, const char *const *skip,
                    size_t max_bytes)
{
    struct stat st;
    size_t budget = max_bytes;

    if (stat(src, &st) < 0)
        return tnd_error_sys("cannot read %s", src);
    if (!S_ISDIR(st.st_mode))
        return tnd_error_set("%s is not a directory", src);
    if (copy_dir(src, dst, skip, &budget, st.st_mode, 0) < 0) {
        tnd_error_prefix("cannot copy %s to %s", src, dst);
        return -1;
    }
    return 0;
}

/* What a listing collects (LIST_COUNT: files and links, counted, not
 * kept). */
typedef enum list_kind {
    LIST_FILES,
    LIST_LINKS,
    LIST_DIRS,
    LIST_COUNT
} list_kind;

typedef struct list_state {
    char **items;
    size_t n, alloc, max;
    list_kind kind;
} list_state;

/* Add sub to the listing (taking it); -1 past the most it may hold. */
static int list_add(list_state *ls, const char *root, char **sub)
{
    if (ls->n >= ls->max)
        return tnd_error_set("%s holds more than %zu %s", root, ls->max,
                             ls->kind == LIST_DIRS ? "directories" : "files");
    if (ls->kind == LIST_COUNT) {
        ls->n++;
        return 0;
    }
    TND_GROW(ls->items, ls->alloc, ls->n + 2);
    ls->items[ls->n++] = *sub;
    *sub = NULL;
    return 0;
}

static int list_dir(list_state *ls, const char *root, const char *rel,
                    const char *const *skip)
{
    char *dir = rel[0] ? tnd_fs_join(root, rel) : tnd_xstrdup(root);
    DIR *d = opendir(dir);
    struct dirent *e;
    int error = 0;

    if (!d) {
        error = tnd_error_sys("cannot read directory %s", dir);
        free(dir);
        return error;
    }
    while (error == 0 && (e = readdir(d)) != NULL) {
        struct stat st;
        char *path, *sub;
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0 ||
            strcmp(e->d_name, ".git") == 0 ||
            (!rel[0] && skipped(e->d_name, skip)))
            continue;
        sub = rel[0] ? tnd_fs_join(rel, e->d_name) : tnd_xstrdup(e->d_name);
        path = tnd_fs_join(root, sub);
        if (lstat(path, &st) == 0) {
            if (S_ISDIR(st.st_mode)) {
                error = list_dir(ls, root, sub, skip);
                if (error == 0 && ls->kind == LIST_DIRS)
                    error = list_add(ls, root, &sub);
            } else if ((ls->kind != LIST_LINKS && ls->kind != LIST_DIRS &&
                        S_ISREG(st.st_mode)) ||
                       (ls->kind != LIST_FILES && ls->kind != LIST_DIRS &&
                        S_ISLNK(st.st_mode))) {
                error = list_add(ls, root, &sub);
            }
        }
        free(path);
        free(sub);
    }
    closedir(d);
    free(dir);
    return error;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int list(char ***out, size_t *count_out, const char *root,
                const char *const *skip, size_t max_files, list_kind kind)
{
    list_state ls = {NULL, 0, 0, max_files, kind};

    *out = NULL;
    if (list_dir(&ls, root, "", skip) < 0) {
        for (size_t i = 0; i < ls.n; i++)
            free(ls.items[i]);
        free(ls.items);
        return -1;
    }
    TND_GROW(ls.items, ls.alloc, ls.n + 1);
    qsort(ls.items, ls.n, sizeof(char *), cmp_str);
    ls.items[ls.n] = NULL;
    *out = ls.items;
    if (count_out)
        *count_out = ls.n;
    return 0;
}

int tnd_fs_list(char ***out, size_t *count_out, const char *root,
                const char *const *skip, size_t max_files)
{
    return list(out, count_out, root, skip, max_files, LIST_FILES);
}

int tnd_fs_list_links(char ***out, size_t *count_out, const char *root,
                      size_t max_links)
{
    return list(out, count_out, root, NULL, max_links, LIST_LINKS);
}

int tnd_fs_list_dirs(char ***out, size_t *count_out, const char *root,
                     size_t max_dirs)
{
    return list(out, count_out, root, NULL, max_dirs, LIST_DIRS);
}

int tnd_fs_count(size_t *count_out, const char *root, const char *const *skip,
                 size_t max)
{
    list_state ls = {NULL, 0, 0, max + 1, LIST_COUNT};
    int rc = list_dir(&ls, root, "", skip);

    if (rc == 0 || ls.n > max) {
        tnd_error_clear();
        rc = 0;
    }
    *count_out = ls.n;
    return rc;
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
