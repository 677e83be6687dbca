/* An agent's blob cache and the workspaces it builds (see blobcache.h). */
#include "agents/blobcache.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agents/agentdir.h"
#include "common/beneath.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/log.h"
#include "common/str.h"
#include "common/xalloc.h"
#include "proto/body.h"

struct tnd_blobcache {
    tnd_agentdir *dir; /* the runtime directory */
    char *blobs;       /* dir/blobs: one file per blob, named by its hash */
    size_t max_bytes, bytes;
    size_t received;
    pthread_mutex_t lock; /* see tnd_blobcache_lock */
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

void tnd_blobcache_lock(tnd_blobcache *self)
{
    pthread_mutex_lock(&self->lock);
}

void tnd_blobcache_unlock(tnd_blobcache *self)
{
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

/* Empty the cache: the blobs of earlier trees make room. */
static int empty(tnd_blobcache *c)
{
    tnd_log_info("the blob cache is full (%zu of %zu bytes): emptied", c->bytes,
                 c->max_bytes);
    if (tnd_fs_rmtree(c->blobs) < 0 || mkdir(c->blobs, 0700) < 0)
        return tnd_error_sys("cannot empty the blob cache %s", c->blobs);
    c->bytes = 0;
    return 0;
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
 * the whole is checked against its hash before it becomes the blob. */
static int put_piece(tnd_blobcache *c, const tnd_blob *b, const char *what)
{
    char *part = tnd_xasprintf("%s/%s.part", c->blobs, b->hash);
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
    if (have == 0 && c->bytes + b->total > c->max_bytes && empty(c) < 0) {
        rc = -1;
        goto out;
    }
    fd = open(part, O_WRONLY | O_CREAT | O_APPEND | O_NOFOLLOW | O_CLOEXEC,
              0600);
    if (fd < 0 || write(fd, b->data, b->len) != (ssize_t)b->len) {
        rc = tnd_error_sys("cannot store a piece of blob %s", part);
        unlink(part);
        goto out;
    }
    if (have + b->len < b->total)
        goto out;
    /* whole: checked as any blob, then it is one */
    if ((rc = tnd_fs_read(&data, &len, part, b->total + 1)) == 0) {
        memset(&whole, 0, sizeof(whole));
        memcpy(whole.hash, b->hash, sizeof(whole.hash));
        whole.data = data;
        whole.len = len;
        rc = tnd_blob_verify(&whole, what);
    }
    if (rc == 0 && rename(part, path) < 0)
        rc = tnd_error_sys("cannot store blob %s", path);
    if (rc < 0) {
        unlink(part);
    } else {
        c->bytes += len;
        c->received++;
    }
out:
    if (fd >= 0)
        close(fd);
    free(data);
    free(path);
    free(part);
    return rc;
}

int tnd_blobcache_put(tnd_blobcache *self, const tnd_blob *b, const char *what)
{
    char *path, *tmp;
    int rc;

    if (b->total) {
        if (tnd_blobcache_has(self, b->hash))
            return 0;
        return put_piece(self, b, what);
    }
    if (tnd_blob_verify(b, what) < 0)
        return -1;
    if (tnd_blobcache_has(self, b->hash))
        return 0;
    if (b->len > self->max_bytes)
        return tnd_error_set("blob %s (%s) is %zu bytes, more than this "
                             "agent's cache holds (%zu; "
                             "orchestrator.workspace_max_mb)",
                             b->hash, what, b->len, self->max_bytes);
    if (self->bytes + b->len > self->max_bytes && empty(self) < 0)
        return -1;
    path = blob_path(self, b->hash);
    tmp = tnd_xasprintf("%s.new", path);
    /* written whole, then renamed: a blob is there complete or not at all */
    rc = tnd_fs_write(tmp, b->data, b->len);
    if (rc == 0 && rename(tmp, path) < 0)
        rc = tnd_error_sys("cannot store blob %s", path);
    if (rc < 0)
        unlink(tmp);
    else {
        self->bytes += b->len;
        self->received++;
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

static void add_missing(char ***list, size_t *n, size_t *alloc,
                        const tnd_blobcache *c, const char *hash)
{
    size_t have;

    if (tnd_blobcache_has(c, hash))
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

char **tnd_blobcache_missing(const tnd_blobcache *self, const tnd_tree *tree,
                             const tnd_tree_change *changes, size_t n)
{
    char **list = NULL;
    size_t count = 0, alloc = 0, ne;
    const tnd_tree_entry *e = tnd_tree_entries(tree, &ne);

    for (size_t i = 0; i < n; i++)
        if (!changes[i].deleted)
            add_missing(&list, &count, &alloc, self, changes[i].blob);
    for (size_t i = 0; i < ne; i++)
        add_missing(&list, &count, &alloc, self, e[i].blob);
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
                                 : dup(root)) < 0)
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
