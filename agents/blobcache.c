/* An agent's blob cache and the workspaces it builds (see blobcache.h). */
#include "agents/blobcache.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "agents/agentdir.h"
#include "common/beneath.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/log.h"
#include "common/rmtree.h"
#include "common/str.h"
#include "common/xalloc.h"
#include "proto/body.h"

/* Eviction looks at the blobs this many at a time, oldest first: the
 * memory it takes is fixed, whatever the cache holds. */
#define EVICT_BATCH 64

struct tnd_blobcache {
    tnd_agentdir *dir; /* the runtime directory */
    char *blobs;       /* dir/blobs: one file per blob, named by its hash */
    size_t max_bytes;
    size_t bytes; /* held in blobs/: whole blobs and parts */
    size_t received;
    pthread_mutex_t lock; /* see tnd_blobcache_lock */
    /* A blob's last use is its file's modification time, set from
     * stamp(): later uses, later times. Under the lock, whatever was
     * used since pin_from is the current request's, never evicted. */
    struct timespec last; /* the latest stamp */
    struct timespec pin_from;
    bool pinning;   /* the lock is held */
    bool coarse;    /* the filesystem keeps whole seconds only */
    bool full_said; /* the log said the cache is full */
};

tnd_blobcache *tnd_blobcache_new(const char *role, size_t max_bytes)
{
    tnd_blobcache *c;
    tnd_agentdir *dir = tnd_agentdir_new(role);

    if (!dir)
        return NULL;
    c = tnd_xcalloc(1, sizeof(*c));
    c->dir = dir;
    c->blobs = tnd_fs_join(tnd_agentdir_path(dir), "blobs");
    c->max_bytes = max_bytes;
    pthread_mutex_init(&c->lock, NULL);
    if (mkdir(c->blobs, 0700) < 0) {
        tnd_error_sys("cannot create %s", c->blobs);
        tnd_blobcache_destroy(&c);
    } else {
        /* whether a use stamped now reads back as such (tmpfs, ext4, xfs
         * and btrfs keep nanoseconds) */
        struct timespec probe[2] = {{0, UTIME_OMIT}, {1, 1}};
        struct stat st;
        c->coarse = utimensat(AT_FDCWD, c->blobs, probe, 0) < 0 ||
                    stat(c->blobs, &st) < 0 || st.st_mtim.tv_nsec != 1;
    }
    return c;
}

void tnd_blobcache_destroy(tnd_blobcache **self_p)
{
    tnd_blobcache *c = self_p ? *self_p : NULL;

    if (!c)
        return;
    tnd_agentdir_destroy(&c->dir);
    pthread_mutex_destroy(&c->lock);
    free(c->blobs);
    free(c);
    *self_p = NULL;
}

/* A time later than every one before it: a blob's last use. */
static struct timespec stamp(tnd_blobcache *c)
{
    struct timespec now;

    clock_gettime(CLOCK_REALTIME, &now);
    if (now.tv_sec < c->last.tv_sec ||
        (now.tv_sec == c->last.tv_sec && now.tv_nsec <= c->last.tv_nsec)) {
        now = c->last;
        if (++now.tv_nsec == 1000000000L) {
            now.tv_sec++;
            now.tv_nsec = 0;
        }
    }
    c->last = now;
    return now;
}

void tnd_blobcache_lock(tnd_blobcache *self)
{
    pthread_mutex_lock(&self->lock);
    self->pin_from = stamp(self);
    self->pinning = true;
}

void tnd_blobcache_unlock(tnd_blobcache *self)
{
    self->pinning = false;
    pthread_mutex_unlock(&self->lock);
}

const char *tnd_blobcache_dir(const tnd_blobcache *self)
{
    return tnd_agentdir_path(self->dir);
}

size_t tnd_blobcache_received(const tnd_blobcache *self)
{
    return self->received;
}

static char *blob_path(const tnd_blobcache *c, const char *hash)
{
    return tnd_fs_join(c->blobs, hash);
}

bool tnd_blobcache_has(const tnd_blobcache *self, const char *hash)
{
    char *p;
    bool has;

    if (!tnd_sha256_is_hex(hash))
        return false;
    p = blob_path(self, hash);
    has = access(p, F_OK) == 0;
    free(p);
    return has;
}

/* Mark the file name in blobs/ used now; -1 (errno ENOENT) when it is
 * not there. */
static int touch(tnd_blobcache *c, const char *name)
{
    struct timespec t[2] = {{0, UTIME_OMIT}, stamp(c)};
    char *path = tnd_fs_join(c->blobs, name);
    int rc = utimensat(AT_FDCWD, path, t, AT_SYMLINK_NOFOLLOW);

    free(path);
    return rc;
}

/* Whether a blob last used at t is the current request's. */
static bool pinned(const tnd_blobcache *c, const struct timespec *t)
{
    if (!c->pinning)
        return false;
    if (c->coarse) /* seconds, maybe rounded down: err towards keeping */
        return t->tv_sec + 2 > c->pin_from.tv_sec;
    return t->tv_sec > c->pin_from.tv_sec ||
           (t->tv_sec == c->pin_from.tv_sec &&
            t->tv_nsec >= c->pin_from.tv_nsec);
}

/* Whether name is a blob's ("HASH") or a part's ("HASH.part"), and
 * whether it is hash's. */
static bool blob_name(const char *name, const char *hash, bool *its)
{
    size_t n = strlen(name);

    if (!(n == TND_SHA256_HEX || (n == TND_SHA256_HEX + 5 &&
                                  strcmp(name + TND_SHA256_HEX, ".part") == 0)))
        return false;
    for (size_t i = 0; i < TND_SHA256_HEX; i++)
        if (!strchr("0123456789abcdef", name[i]))
            return false;
    *its = strncmp(name, hash, TND_SHA256_HEX) == 0;
    return true;
}

typedef struct candidate {
    char name[TND_SHA256_HEX + 6];
    struct timespec used;
    size_t size;
} candidate;

static bool older(const struct timespec *a, const struct timespec *b)
{
    return a->tv_sec < b->tv_sec ||
           (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

/* The up to EVICT_BATCH least recently used blobs and parts that may go
 * (not the current request's, not hash's), oldest first, into out. */
static size_t oldest(candidate *out, const tnd_blobcache *c, DIR *d,
                     const char *hash)
{
    struct dirent *e;
    struct stat st;
    size_t n = 0, i;
    bool its;

    rewinddir(d);
    while ((e = readdir(d)) != NULL) {
        if (!blob_name(e->d_name, hash, &its) || its ||
            fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
            !S_ISREG(st.st_mode) || pinned(c, &st.st_mtim))
            continue;
        if (n == EVICT_BATCH && !older(&st.st_mtim, &out[n - 1].used))
            continue;
        i = n < EVICT_BATCH ? n++ : n - 1; /* the newest makes way */
        while (i > 0 && older(&st.st_mtim, &out[i - 1].used)) {
            out[i] = out[i - 1];
            i--;
        }
        snprintf(out[i].name, sizeof(out[i].name), "%s", e->d_name);
        out[i].used = st.st_mtim;
        out[i].size = (size_t)st.st_size;
    }
    return n;
}

/* Make room for len more bytes (of blob hash, what names it) by
 * removing the least recently used blobs and parts, never the current
 * request's (see tnd_blobcache_lock). -1 with the error set when those
 * alone leave no room. */
static int make_room(tnd_blobcache *c, size_t len, const char *hash,
                     const char *what)
{
    candidate batch[EVICT_BATCH];
    size_t n, evicted = 0, freed = 0, before = c->bytes;
    DIR *d;
    int rc = 0;

    if (c->bytes + len <= c->max_bytes)
        return 0;
    if (!(d = opendir(c->blobs)))
        return tnd_error_sys("cannot open the blob cache %s", c->blobs);
    while (rc == 0 && c->bytes + len > c->max_bytes) {
        if ((n = oldest(batch, c, d, hash)) == 0) {
            rc = tnd_error_set(
                "blob %s (%s, %zu bytes) does not fit in this agent's "
                "cache: the blobs the request uses already hold %zu of its "
                "%zu bytes (orchestrator.workspace_max_mb)",
                hash, what, len, c->bytes, c->max_bytes);
            break;
        }
        for (size_t i = 0; i < n && c->bytes + len > c->max_bytes; i++) {
            if (unlinkat(dirfd(d), batch[i].name, 0) < 0 && errno != ENOENT) {
                rc = tnd_error_sys("cannot remove %s/%s from the blob cache",
                                   c->blobs, batch[i].name);
                break;
            }
            c->bytes -= batch[i].size < c->bytes ? batch[i].size : c->bytes;
            freed += batch[i].size;
            evicted++;
        }
    }
    closedir(d);
    if (evicted && !c->full_said)
        tnd_log_info("the blob cache is full (%zu bytes, "
                     "orchestrator.workspace_max_mb): the least recently "
                     "used blobs make room from now on",
                     c->max_bytes);
    c->full_said = c->full_said || evicted;
    if (evicted)
        tnd_log_debug("the blob cache was full (%zu of %zu bytes): removed "
                      "the %zu least recently used (%zu bytes)",
                      before, c->max_bytes, evicted, freed);
    return rc;
}

/* Bytes held of a blob that comes in pieces (HASH.part); 0 when none. */
static size_t part_len(const tnd_blobcache *c, const char *hash)
{
    char *path = tnd_xasprintf("%s/%s.part", c->blobs, hash);
    struct stat st;
    size_t n =
        lstat(path, &st) == 0 && S_ISREG(st.st_mode) ? (size_t)st.st_size : 0;

    free(path);
    return n;
}

/* A piece of a large blob: appended to HASH.part when it starts where
 * the part ends (else dropped: the next "need" says where to start);
 * the whole is checked against its hash before it becomes the blob. The
 * part counts in the cache's bytes, and is evicted as a blob is. */
static int put_piece(tnd_blobcache *c, const tnd_blob *b, const char *what)
{
    char *part = tnd_xasprintf("%s.part", b->hash);
    char *part_path = tnd_fs_join(c->blobs, part);
    char *path = blob_path(c, b->hash), *data = NULL;
    size_t have = part_len(c, b->hash), len = 0;
    tnd_blob whole;
    int fd = -1, rc = 0;

    if (b->total > c->max_bytes) {
        rc = tnd_error_set("blob %s (%s) is %zu bytes, more than this "
                           "agent's cache holds (%zu; "
                           "orchestrator.workspace_max_mb)",
                           b->hash, what, b->total, c->max_bytes);
        goto out;
    }
    if (b->offset != have) /* out of order: what the next need says */
        goto out;
    if ((rc = make_room(c, b->len, b->hash, what)) < 0)
        goto out;
    fd = open(part_path, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC,
              0600);
    if (fd < 0 || write(fd, b->data, b->len) != (ssize_t)b->len) {
        rc = tnd_error_sys("cannot store a piece of blob %s", part_path);
        unlink(part_path);
        c->bytes -= have;
        goto out;
    }
    c->bytes += b->len;
    touch(c, part);
    if (have + b->len < b->total)
        goto out;
    /* whole: checked as any blob, then it is one */
    if ((rc = tnd_fs_read(&data, &len, part_path, b->total + 1)) == 0) {
        memset(&whole, 0, sizeof(whole));
        memcpy(whole.hash, b->hash, sizeof(whole.hash));
        whole.data = data;
        whole.len = len;
        rc = tnd_blob_verify(&whole, what);
    }
    if (rc == 0 && rename(part_path, path) < 0)
        rc = tnd_error_sys("cannot store blob %s", path);
    if (rc < 0) {
        unlink(part_path);
        c->bytes -= have + b->len;
    } else {
        c->received++;
    }
out:
    if (fd >= 0)
        close(fd);
    free(data);
    free(path);
    free(part_path);
    free(part);
    return rc;
}

int tnd_blobcache_put(tnd_blobcache *self, const tnd_blob *b, const char *what)
{
    char *path, *tmp;
    int rc;

    if (b->total) {
        if (touch(self, b->hash) == 0)
            return 0;
        return put_piece(self, b, what);
    }
    if (tnd_blob_verify(b, what) < 0)
        return -1;
    if (touch(self, b->hash) == 0) /* stored already: used now */
        return 0;
    if (b->len > self->max_bytes)
        return tnd_error_set("blob %s (%s) is %zu bytes, more than this "
                             "agent's cache holds (%zu; "
                             "orchestrator.workspace_max_mb)",
                             b->hash, what, b->len, self->max_bytes);
    if (make_room(self, b->len, b->hash, what) < 0)
        return -1;
    path = blob_path(self, b->hash);
    tmp = tnd_xasprintf("%s.new", path);
    /* written whole, then renamed: a blob is there complete or not at all */
    rc = tnd_fs_write(tmp, b->data, b->len);
    if (rc == 0 && rename(tmp, path) < 0)
        rc = tnd_error_sys("cannot store blob %s", path);
    if (rc < 0) {
        unlink(tmp);
    } else {
        self->bytes += b->len;
        self->received++;
        touch(self, b->hash);
    }
    free(tmp);
    free(path);
    return rc;
}

tnd_tree *tnd_blobcache_tree(const tnd_blobcache *self, const char *hash)
{
    char *path = blob_path(self, hash), *text = NULL;
    size_t len = 0;
    tnd_tree *t = NULL;

    if (tnd_fs_read(&text, &len, path, TND_TREE_MAX_TEXT) == 0 &&
        !(t = tnd_tree_parse(text, len)))
        tnd_error_prefix("the manifest of tree %s", hash);
    free(text);
    free(path);
    return t;
}

/* hash is used now: 0 when stored; else, with list, added to it (once,
 * as HASH:N when N bytes of it came in pieces). */
static void use(char ***list, size_t *n, size_t *alloc, tnd_blobcache *c,
                const char *hash)
{
    size_t have;

    if ((tnd_sha256_is_hex(hash) && touch(c, hash) == 0) || !list)
        return;
    for (size_t i = 0; i < *n; i++)
        if (strncmp((*list)[i], hash, TND_SHA256_HEX) == 0)
            return;
    TND_GROW(*list, *alloc, *n + 2);
    have = part_len(c, hash);
    (*list)[(*n)++] =
        have ? tnd_xasprintf("%s:%zu", hash, have) : tnd_xstrdup(hash);
    (*list)[*n] = NULL;
}

/* Mark the stored blobs of tree (its manifest too) and changes used;
 * with list, list those not stored. */
static void use_all(char ***list, tnd_blobcache *c, const tnd_tree *tree,
                    const tnd_tree_change *changes, size_t n)
{
    size_t count = 0, alloc = 0, ne;
    const tnd_tree_entry *e = tnd_tree_entries(tree, &ne);

    for (size_t i = 0; i < n; i++)
        if (!changes[i].deleted)
            use(list, &count, &alloc, c, changes[i].blob);
    for (size_t i = 0; i < ne; i++)
        use(list, &count, &alloc, c, e[i].blob);
    touch(c, tnd_tree_hash(tree));
}

void tnd_blobcache_hold(tnd_blobcache *self, const tnd_tree *tree,
                        const tnd_tree_change *changes, size_t n)
{
    use_all(NULL, self, tree, changes, n);
}

char **tnd_blobcache_missing(tnd_blobcache *self, const tnd_tree *tree,
                             const tnd_tree_change *changes, size_t n)
{
    char **list = NULL;

    use_all(&list, self, tree, changes, n);
    return list;
}

/* Copy blob hash into the workspace open as root at path, with mode. */
static int place(tnd_blobcache *c, int root, const char *path, const char *hash,
                 bool exec)
{
    char *src = blob_path(c, hash), *slash = strrchr(path, '/');
    struct stat st;
    int in, rc = 0;

    if (slash) {
        char *parent = tnd_xstrndup(path, (size_t)(slash - path));
        rc = tnd_beneath_mkdirs(root, parent, NULL, NULL);
        free(parent);
    }
    if (rc == 0 && (in = open(src, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) < 0)
        rc = tnd_error_sys("blob %s for %s is not in the cache %s", hash, path,
                           c->blobs);
    if (rc == 0) {
        memset(&st, 0, sizeof(st));
        st.st_mode = exec ? 0755 : 0644;
        st.st_atim.tv_nsec = UTIME_NOW;
        st.st_mtim.tv_nsec = UTIME_NOW;
        rc = tnd_fs_copy_fd_at(in, root, path, &st);
        close(in);
    }
    free(src);
    return rc;
}

/* Make path, beneath root, a symbolic link to the target blob hash holds.
 * Links are made after every file, and no path of a tree lies beneath a
 * link (tree.h), so nothing is ever written through one. */
static int place_link(tnd_blobcache *c, int root, const char *path,
                      const char *hash)
{
    char *src = blob_path(c, hash), *target = NULL, *slash = strrchr(path, '/');
    char *parent = slash ? tnd_xstrndup(path, (size_t)(slash - path)) : NULL;
    int dir = -1, rc;

    rc = tnd_fs_read(&target, NULL, src, TND_BODY_MAX_PATH + 1);
    if (rc == 0 && parent)
        rc = tnd_beneath_mkdirs(root, parent, NULL, NULL);
    if (rc == 0 && (dir = parent ? tnd_beneath_open(root, parent,
                                                    O_RDONLY | O_DIRECTORY, 0)
                                 : fcntl(root, F_DUPFD_CLOEXEC, 0)) < 0)
        rc = parent ? -1 : tnd_error_sys("cannot open the workspace");
    if (rc == 0 && symlinkat(target, dir, slash ? slash + 1 : path) < 0)
        rc = tnd_error_sys("cannot make the link %s", path);
    if (dir >= 0)
        close(dir);
    free(parent);
    free(target);
    free(src);
    return rc;
}

static const tnd_tree_change *change_at(const tnd_tree_change *changes,
                                        size_t n, const char *path)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(changes[i].path, path) == 0)
            return &changes[i];
    return NULL;
}

int tnd_blobcache_build(char **out, tnd_blobcache *self, const tnd_tree *tree,
                        const tnd_tree_change *changes, size_t n)
{
    char *dir =
        tnd_xasprintf("%s/workspace-XXXXXX", tnd_agentdir_path(self->dir));
    size_t ne;
    const tnd_tree_entry *e = tnd_tree_entries(tree, &ne);
    int root = -1, rc = -1;

    *out = NULL;
    if (!mkdtemp(dir)) {
        tnd_error_sys("cannot make a workspace like %s", dir);
        free(dir);
        return -1;
    }
    if ((root = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
        tnd_error_sys("cannot open %s", dir);
        goto out;
    }
    for (size_t i = 0; i < ne; i++) {
        if (e[i].link || change_at(changes, n, e[i].path))
            continue;
        if (place(self, root, e[i].path, e[i].blob, e[i].exec) < 0)
            goto out;
    }
    for (size_t i = 0; i < n; i++) {
        if (changes[i].deleted) {
            if (!tnd_tree_find_path(tree, changes[i].path)) {
                tnd_error_set("the change deletes %s, which the base tree "
                              "does not hold",
                              changes[i].path);
                goto out;
            }
            continue;
        }
        if (place(self, root, changes[i].path, changes[i].blob,
                  changes[i].exec) < 0)
            goto out;
    }
    for (size_t i = 0; i < ne; i++)
        if (e[i].link && !change_at(changes, n, e[i].path) &&
            place_link(self, root, e[i].path, e[i].blob) < 0)
            goto out;
    rc = 0;
out:
    if (root >= 0)
        close(root);
    if (rc < 0) {
        tnd_error_prefix("building the workspace of tree %s",
                         tnd_tree_hash(tree));
        tnd_blobcache_drop(self, &dir);
    }
    *out = dir;
    return rc;
}

void tnd_blobcache_drop(tnd_blobcache *self, char **dir)
{
    (void)self;
    if (!*dir)
        return;
    if (tnd_fs_rmtree(*dir) < 0)
        tnd_log_warn("cannot remove the workspace: %s", tnd_error_last());
    free(*dir);
    *dir = NULL;
}
