/* Whole trees (see fs.h): copied, the fastest way the filesystem
 * allows, listed and counted, without following links. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/fs.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/str.h"
#include "common/xalloc.h"

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
        if (tnd_fs_write_all(out, chunk, (size_t)n) < 0)
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
