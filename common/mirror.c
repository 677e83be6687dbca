/* A copy that can be brought back to its source (see mirror.h). */
#include "common/mirror.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/rmtree.h"
#include "common/xalloc.h"

/* How long a copy waits for the filesystem's clock to move past what it
 * wrote (a tick is a few milliseconds; FAT's is two seconds). */
#define CLOCK_WAIT_MS 2500

#define DIR_FLAGS (O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)

/* One entry of the copy, as it was when the mirror wrote it. */
typedef struct entry {
    char *path; /* relative to the root, '/'-separated */
    mode_t mode;
    dev_t dev;
    ino_t ino;
    off_t size;
    struct timespec mtime, ctime;
    bool seen; /* found intact, or written again, in this restore */
} entry;

struct tnd_mirror {
    char *src, *dst;
    entry *v; /* sorted by path: a parent comes before its entries */
    size_t n, alloc;
    struct timespec newest; /* the latest ctime among v */
    bool trusted;           /* false: the clock did not move past newest,
                               so the next restore copies everything */
    tnd_trash *trash;       /* where removed entries go; NULL: removed in
                               place */
};

static int ts_cmp(struct timespec a, struct timespec b)
{
    if (a.tv_sec != b.tv_sec)
        return a.tv_sec < b.tv_sec ? -1 : 1;
    return (a.tv_nsec > b.tv_nsec) - (a.tv_nsec < b.tv_nsec);
}

static void note(tnd_mirror *m, entry *e, const struct stat *st)
{
    e->mode = st->st_mode;
    e->dev = st->st_dev;
    e->ino = st->st_ino;
    e->size = st->st_size;
    e->mtime = st->st_mtim;
    e->ctime = st->st_ctim;
    if (ts_cmp(e->ctime, m->newest) > 0)
        m->newest = e->ctime;
}

/* The entry is still what the mirror wrote. A directory's own times move
 * with what is created in it, so for one only its type and mode count. */
static bool intact(const entry *e, const struct stat *st)
{
    if (e->mode != st->st_mode)
        return false;
    if (S_ISDIR(st->st_mode))
        return true;
    return e->dev == st->st_dev && e->ino == st->st_ino &&
           e->size == st->st_size && ts_cmp(e->mtime, st->st_mtim) == 0 &&
           ts_cmp(e->ctime, st->st_ctim) == 0;
}

static int by_path(const void *a, const void *b)
{
    return strcmp(((const entry *)a)->path, ((const entry *)b)->path);
}

static entry *find(tnd_mirror *m, const char *path)
{
    entry key = {.path = (char *)path};

    return bsearch(&key, m->v, m->n, sizeof(*m->v), by_path);
}

static void forget(tnd_mirror *m)
{
    for (size_t i = 0; i < m->n; i++)
        free(m->v[i].path);
    m->n = 0;
    m->newest = (struct timespec){0, 0};
}

/* rel + "/" + name, to be cut back to mark afterwards. */
static size_t push(tnd_buf *rel, const char *name)
{
    size_t mark = rel->len;

    if (mark)
        tnd_buf_puts(rel, "/");
    tnd_buf_puts(rel, name);
    return mark;
}

static void pop(tnd_buf *rel, size_t mark)
{
    rel->len = mark;
    if (rel->data)
        rel->data[mark] = '\0';
}

/* What walk calls for each entry: name, in the directory open as dir, is
 * at rel below the copy's root. 0 to go on. */
typedef int (*visit_fn)(tnd_mirror *m, int dir, const char *name, tnd_buf *rel,
                        void *payload);

/* Call visit for every entry (but . and ..) of the copy's directory rel,
 * open as fd (taken). Stops at the first error. */
static int walk(tnd_mirror *m, int fd, tnd_buf *rel, visit_fn visit,
                void *payload)
{
    DIR *d = fdopendir(fd);
    struct dirent *de;
    int error = 0;

    if (!d) {
        tnd_error_sys("cannot read %s/%s", m->dst, tnd_buf_str(rel));
        close(fd);
        return -1;
    }
    while (error == 0 && (de = readdir(d)) != NULL) {
        size_t mark;
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
            continue;
        mark = push(rel, de->d_name);
        error = visit(m, dirfd(d), de->d_name, rel, payload);
        pop(rel, mark);
    }
    closedir(d);
    return error;
}

/* walk the subdirectory name of dir, which is at rel. */
static int walk_into(tnd_mirror *m, int dir, const char *name, tnd_buf *rel,
                     visit_fn visit, void *payload)
{
    int sub = openat(dir, name, DIR_FLAGS);

    if (sub < 0)
        return tnd_error_sys("cannot open %s/%s", m->dst, tnd_buf_str(rel));
    return walk(m, sub, rel, visit, payload);
}

/* Remember one entry of the copy, and everything under it. */
static int record_one(tnd_mirror *m, int dir, const char *name, tnd_buf *rel,
                      void *payload)
{
    struct stat st;

    (void)payload;
    if (fstatat(dir, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
        return tnd_error_sys("cannot read %s/%s", m->dst, tnd_buf_str(rel));
    TND_GROW(m->v, m->alloc, m->n + 1);
    memset(&m->v[m->n], 0, sizeof(*m->v));
    m->v[m->n].path = tnd_xstrdup(tnd_buf_str(rel));
    note(m, &m->v[m->n++], &st);
    return S_ISDIR(st.st_mode) ? walk_into(m, dir, name, rel, record_one, NULL)
                               : 0;
}

/* Returns only once a change made from now on gets a ctime later than
 * every one recorded: then an unchanged ctime means unchanged contents.
 * Touching the root directory reads the filesystem's own clock. */
static int wait_for_clock(tnd_mirror *m, int root)
{
    struct timespec nap = {0, 1000000};
    struct stat st;

    for (int waited = 0;; waited++) {
        if (futimens(root, NULL) < 0 || fstat(root, &st) < 0)
            return tnd_error_sys("cannot touch %s", m->dst);
        if (ts_cmp(st.st_ctim, m->newest) > 0)
            return 0;
        if (waited >= CLOCK_WAIT_MS)
            return tnd_error_set("the clock of the filesystem under %s does "
                                 "not move",
                                 m->dst);
        nanosleep(&nap, NULL);
    }
}

/* Remove name, in the directory open as dir: into the trash when there
 * is one and it takes it, else in place. */
static int discard(tnd_mirror *m, int dir, const char *name)
{
    if (m->trash && tnd_trash_put_at(m->trash, dir, name) == 0)
        return 0;
    return tnd_fs_rmtree_at(dir, name);
}

/* A whole new copy of src at dst, remembered. */
static int copy_all(tnd_mirror *m)
{
    tnd_buf rel;
    int root, error;

    forget(m);
    if ((tnd_fs_exists(m->dst) && discard(m, AT_FDCWD, m->dst) < 0) ||
        tnd_fs_copytree(m->src, m->dst, NULL, (size_t)-1) < 0)
        return -1;
    if ((root = open(m->dst, DIR_FLAGS)) < 0)
        return tnd_error_sys("cannot open %s", m->dst);
    tnd_buf_init(&rel, PATH_MAX * 4);
    error = walk(m, fcntl(root, F_DUPFD_CLOEXEC, 0), &rel, record_one, NULL);
    tnd_buf_free(&rel);
    if (error == 0) {
        if (m->n > 1) /* qsort wants a pointer even for none */
            qsort(m->v, m->n, sizeof(*m->v), by_path);
        m->trusted = wait_for_clock(m, root) == 0;
    }
    close(root);
    return error;
}

tnd_mirror *tnd_mirror_new(const char *src, const char *dst)
{
    tnd_mirror *m;

    if (tnd_fs_exists(dst)) {
        tnd_error_set("cannot copy to %s: it already exists", dst);
        return NULL;
    }
    m = tnd_xcalloc(1, sizeof(*m));
    m->src = tnd_xstrdup(src);
    m->dst = tnd_xstrdup(dst);
    if (copy_all(m) < 0) {
        tnd_fs_rmtree(dst);
        tnd_mirror_destroy(&m, 0);
        return NULL;
    }
    return m;
}

void tnd_mirror_set_trash(tnd_mirror *self, tnd_trash *trash)
{
    self->trash = trash;
}

void tnd_mirror_destroy(tnd_mirror **self_p, int remove)
{
    tnd_mirror *m = self_p ? *self_p : NULL;

    if (!m)
        return;
    if (remove)
        tnd_fs_rmtree(m->dst);
    forget(m);
    free(m->v);
    free(m->src);
    free(m->dst);
    free(m);
    *self_p = NULL;
}

/* Keep one entry of the copy when it is intact (a directory: and what is
 * intact under it), else remove it; payload is the tnd_mirror_stats. */
static int sweep_one(tnd_mirror *m, int dir, const char *name, tnd_buf *rel,
                     void *payload)
{
    tnd_mirror_stats *st = payload;
    entry *e = find(m, tnd_buf_str(rel));
    struct stat now;
    int error;

    if (fstatat(dir, name, &now, AT_SYMLINK_NOFOLLOW) < 0)
        return errno == ENOENT ? 0
                               : tnd_error_sys("cannot read %s/%s", m->dst,
                                               tnd_buf_str(rel));
    if (e && S_ISDIR(e->mode) && S_ISDIR(now.st_mode)) {
        /* a build may have closed it to us: the source's mode again */
        if (now.st_mode != e->mode &&
            fchmodat(dir, name, e->mode & 07777, 0) < 0)
            return tnd_error_sys("cannot restore the mode of %s/%s", m->dst,
                                 tnd_buf_str(rel));
        if ((error = walk_into(m, dir, name, rel, sweep_one, st)) != 0)
            return error;
        e->seen = true;
        st->kept++;
        return 0;
    }
    if (e && intact(e, &now)) {
        e->seen = true;
        st->kept++;
        return 0;
    }
    st->removed++;
    return discard(m, dir, name);
}

/* The directory holding path, opened from root one component at a time
 * without following symlinks; *name_out points at path's last component.
 * Every such directory is a recorded one the sweep kept or made again. */
static int open_parent(int root, const char *path, const char **name_out)
{
    const char *p = path, *slash;
    int fd = fcntl(root, F_DUPFD_CLOEXEC, 0);

    while (fd >= 0 && (slash = strchr(p, '/')) != NULL) {
        char part[NAME_MAX + 1];
        size_t len = (size_t)(slash - p);
        int next = -1;
        if (len <= NAME_MAX) {
            memcpy(part, p, len);
            part[len] = '\0';
            next = openat(fd, part, DIR_FLAGS);
        }
        close(fd);
        fd = next;
        p = slash + 1;
    }
    *name_out = p;
    return fd;
}

/* Write e again from the source, and remember it as written. */
static int rewrite(tnd_mirror *m, int root, entry *e)
{
    char *from = tnd_fs_join(m->src, e->path);
    const char *name;
    int parent = open_parent(root, e->path, &name), in = -1, error = 0;
    struct stat st;

    if (parent < 0) {
        error = tnd_error_sys("cannot open the directory of %s/%s", m->dst,
                              e->path);
    } else if (lstat(from, &st) < 0) {
        error = tnd_error_sys("cannot read %s", from);
    } else if (S_ISDIR(st.st_mode)) {
        if (mkdirat(parent, name, 0700) < 0 ||
            fchmodat(parent, name, st.st_mode & 07777, 0) < 0)
            error = tnd_error_sys("cannot create %s/%s", m->dst, e->path);
    } else if (S_ISLNK(st.st_mode)) {
        char target[PATH_MAX];
        ssize_t n = readlink(from, target, sizeof(target) - 1);
        if (n < 0 || (target[n] = '\0', symlinkat(target, parent, name) < 0))
            error = tnd_error_sys("cannot copy the link %s", from);
    } else if ((in = open(from, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0) {
        error = tnd_error_sys("cannot read %s", from);
    } else {
        error = tnd_fs_copy_fd_at(in, parent, name, &st);
    }
    if (error == 0 && fstatat(parent, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
        error = tnd_error_sys("cannot read %s/%s", m->dst, e->path);
    if (error == 0) {
        note(m, e, &st);
        e->seen = true;
    }
    if (in >= 0)
        close(in);
    if (parent >= 0)
        close(parent);
    free(from);
    return error;
}

static int restore(tnd_mirror *m, tnd_mirror_stats *st)
{
    tnd_buf rel;
    int root, error;

    if (!m->trusted)
        return tnd_error_set("the last copy's times cannot be trusted");
    for (size_t i = 0; i < m->n; i++)
        m->v[i].seen = false;
    if ((root = open(m->dst, DIR_FLAGS)) < 0)
        return tnd_error_sys("cannot open %s", m->dst);
    tnd_buf_init(&rel, PATH_MAX * 4);
    error = walk(m, fcntl(root, F_DUPFD_CLOEXEC, 0), &rel, sweep_one, st);
    tnd_buf_free(&rel);
    /* in path order, so a directory is made before what it holds */
    for (size_t i = 0; error == 0 && i < m->n; i++)
        if (!m->v[i].seen && (error = rewrite(m, root, &m->v[i])) == 0)
            st->copied++;
    /* the tree is right either way; only the next restore's shortcut
     * depends on the clock */
    if (error == 0 && wait_for_clock(m, root) < 0)
        m->trusted = false;
    close(root);
    return error;
}

int tnd_mirror_restore(tnd_mirror *self, tnd_mirror_stats *stats)
{
    tnd_mirror_stats st = {0};
    int error = restore(self, &st);

    if (error < 0) {
        /* whatever went wrong, a whole new copy is still right */
        memset(&st, 0, sizeof(st));
        st.full = 1;
        if ((error = copy_all(self)) == 0)
            st.copied = self->n;
    }
    if (stats)
        *stats = st;
    return error;
}
