/* The manifest of a snapshot, an attempt's changes, and the blobs a
 * reviewer asks for (see content.h). */
#include "orchestrator/content.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/base64.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/log.h"
#include "common/sha256.h"
#include "common/str.h"
#include "common/xalloc.h"
#include "proto/body.h"

struct tnd_content {
    char *base_dir;
    tnd_tree *tree;                 /* NULL until first asked */
    char stamp[TND_SHA256_HEX + 1]; /* the files' modes, with tree */
    bool mtimes;                    /* ...and their mtimes */
    tnd_tree_change *changes;
    size_t nchanges;
    tnd_blob *blobs; /* the changed files' bytes */
    size_t nblobs;
    size_t sent, sent_bytes;
};

tnd_content *tnd_content_new(const char *base_dir, bool mtimes)
{
    tnd_content *c = tnd_xcalloc(1, sizeof(*c));

    c->base_dir = tnd_xstrdup(base_dir);
    c->mtimes = mtimes;
    return c;
}

static void clear_changes(tnd_content *c)
{
    tnd_tree_changes_free(&c->changes, c->nchanges);
    tnd_tree_blobs_free(&c->blobs, c->nblobs);
    c->nchanges = c->nblobs = 0;
}

void tnd_content_destroy(tnd_content **self_p)
{
    tnd_content *c = self_p ? *self_p : NULL;

    if (!c)
        return;
    clear_changes(c);
    tnd_tree_destroy(&c->tree);
    free(c->base_dir);
    free(c);
    *self_p = NULL;
}

/* The bytes and mode of the regular file rel under dir, read without
 * following a symlink at its end; its status into *out when out is not
 * NULL. TND_ENOTFOUND when it is not there. */
static int read_file(char **data, size_t *len, bool *exec, struct stat *out,
                     const char *dir, const char *rel)
{
    char *path = tnd_fs_join(dir, rel);
    struct stat st;
    int rc;

    *data = NULL;
    if (lstat(path, &st) < 0 || !S_ISREG(st.st_mode)) {
        rc = TND_ENOTFOUND;
        tnd_error_set("%s is not a regular file", path);
    } else {
        *exec = (st.st_mode & 0100) != 0;
        if (out)
            *out = st;
        rc = tnd_fs_read(data, len, path, (size_t)1 << 40);
    }
    free(path);
    return rc;
}

/* The target of the symbolic link rel under dir, as its blob's bytes. */
static int read_link(char **data, size_t *len, const char *dir, const char *rel)
{
    char *path = tnd_fs_join(dir, rel), target[TND_BODY_MAX_PATH + 1];
    ssize_t n = readlink(path, target, sizeof(target));

    *data = NULL;
    if (n < 0 || (size_t)n >= sizeof(target)) {
        int rc = n < 0 ? tnd_error_sys("cannot read the link %s", path)
                       : tnd_error_set("the link %s points at a path longer "
                                       "than %d bytes",
                                       path, TND_BODY_MAX_PATH);
        free(path);
        return rc;
    }
    free(path);
    *data = tnd_xstrndup(target, (size_t)n);
    *len = (size_t)n;
    return 0;
}

/* The tree's symbolic links appended to e (n entries, room for nl
 * more). -1 with the error set. */
static int add_links(tnd_tree_entry *e, size_t *n, char **links, size_t nl,
                     const char *dir)
{
    for (size_t i = 0; i < nl; i++) {
        char *data;
        size_t len;
        if (read_link(&data, &len, dir, links[i]) < 0)
            return -1;
        tnd_sha256_hex(e[*n].blob, data, len);
        e[*n].size = len;
        e[*n].link = true;
        e[*n].path = links[i];
        links[i] = NULL;
        (*n)++;
        free(data);
    }
    return 0;
}

/* One file's whole mode (set-id, sticky, and every permission, not
 * only the owner's exec bit the manifest keeps), and its mtime when
 * asked, into the stamp h (see content.h). */
static void stamp_file(tnd_sha256 *h, const char *rel, const struct stat *st,
                       bool mtime)
{
    char mode[64];
    int n = mtime ? snprintf(mode, sizeof(mode), "%o %lld.%09ld ",
                             (unsigned)(st->st_mode & 07777),
                             (long long)st->st_mtim.tv_sec,
                             (long)st->st_mtim.tv_nsec)
                  : snprintf(mode, sizeof(mode), "%o ",
                             (unsigned)(st->st_mode & 07777));

    tnd_sha256_update(h, mode, (size_t)n);
    tnd_sha256_update(h, rel, strlen(rel) + 1); /* with its NUL: no path
                                                   runs into the next */
}

/* Drop from list[0..*n) the paths no manifest can carry (a line break,
 * over 1 KiB), each said once: one such file anywhere in a repository
 * made every session fail (a review: exit 4, which --on-error pass lets
 * through, naming no file). A reviewer on this host works in the
 * workspace, which has them; one elsewhere does without. */
static void leave_out_unsendable(char **list, size_t *n)
{
    size_t k = 0;

    for (size_t i = 0; i < *n; i++) {
        if (tnd_tree_check_path(list[i]) == 0) {
            list[k++] = list[i];
            continue;
        }
        char *shown = tnd_str_one_line(list[i], 200);
        tnd_log_warn("%s: left out of the tree sent to reviewers on other "
                     "hosts (its name is over 1 KiB, or holds a line break); "
                     "rename it to have it there",
                     shown);
        tnd_error_clear();
        free(shown);
        free(list[i]);
    }
    *n = k;
    list[k] = NULL;
}

int tnd_content_tree(const char **out, tnd_content *self)
{
    tnd_tree_entry *e;
    char **files = NULL, **links = NULL;
    size_t n = 0, nl = 0;
    tnd_sha256 stamp;

    if (self->tree) {
        *out = tnd_tree_hash(self->tree);
        return 0;
    }
    if (tnd_fs_list(&files, &n, self->base_dir, NULL, TND_TREE_MAX_FILES) < 0)
        return -1;
    if (tnd_fs_list_links(&links, &nl, self->base_dir, TND_TREE_MAX_FILES) <
        0) {
        tnd_str_list_free(&files);
        return -1;
    }
    leave_out_unsendable(files, &n);
    leave_out_unsendable(links, &nl);
    e = tnd_xcalloc(n + nl + 1, sizeof(*e));
    tnd_sha256_init(&stamp);
    for (size_t i = 0; i < n; i++) {
        struct stat st;
        char *data;
        size_t len;
        if (read_file(&data, &len, &e[i].exec, &st, self->base_dir, files[i]) <
            0) {
            for (size_t k = 0; k < i; k++)
                free(e[k].path);
            free(e);
            tnd_str_list_free(&files);
            tnd_str_list_free(&links);
            return -1;
        }
        tnd_sha256_hex(e[i].blob, data, len);
        stamp_file(&stamp, files[i], &st, self->mtimes);
        e[i].size = len;
        e[i].path = files[i];
        files[i] = NULL;
        free(data);
    }
    free(files); /* the paths moved into e */
    tnd_sha256_final_hex(self->stamp, &stamp);
    if (add_links(e, &n, links, nl, self->base_dir) < 0) {
        for (size_t k = 0; k < n; k++)
            free(e[k].path);
        free(e);
        tnd_str_list_free(&links);
        return -1;
    }
    free(links);
    if (!(self->tree = tnd_tree_new(e, n)))
        return -1;
    tnd_log_info("the base tree is %s (%zu files)", tnd_tree_hash(self->tree),
                 n);
    *out = tnd_tree_hash(self->tree);
    return 0;
}

int tnd_content_changes(const tnd_tree_change **out, size_t *n,
                        tnd_content *self, const char *ws_dir,
                        const char *const *touched)
{
    size_t alloc = 0, balloc = 0;
    const char *hash;

    *out = NULL;
    *n = 0;
    clear_changes(self);
    if (tnd_content_tree(&hash, self) < 0)
        return -1;
    for (size_t i = 0; touched && touched[i]; i++) {
        const tnd_tree_entry *base = tnd_tree_find_path(self->tree, touched[i]);
        tnd_tree_change c;
        char *data;
        size_t len;
        int rc;

        memset(&c, 0, sizeof(c));
        if (tnd_tree_check_path(touched[i]) < 0)
            return -1;
        rc = read_file(&data, &len, &c.exec, NULL, ws_dir, touched[i]);
        if (rc == TND_ENOTFOUND) {
            if (!base)
                continue; /* made and removed again: nothing to send */
            c.deleted = true;
        } else if (rc < 0) {
            return -1;
        } else {
            tnd_sha256_hex(c.blob, data, len);
            if (base && strcmp(base->blob, c.blob) == 0 &&
                base->exec == c.exec) {
                free(data);
                continue;
            }
            TND_GROW(self->blobs, balloc, self->nblobs + 1);
            memcpy(self->blobs[self->nblobs].hash, c.blob, sizeof(c.blob));
            self->blobs[self->nblobs].data = data;
            self->blobs[self->nblobs++].len = len;
        }
        c.path = tnd_xstrdup(touched[i]);
        TND_GROW(self->changes, alloc, self->nchanges + 1);
        self->changes[self->nchanges++] = c;
    }
    *out = self->changes;
    *n = self->nchanges;
    return 0;
}

int tnd_content_key(char out[TND_SHA256_HEX + 1], tnd_content *self,
                    const char *const *skip)
{
    const tnd_tree_entry *e;
    const char *tree;
    size_t n;
    tnd_sha256 h;

    if (tnd_content_tree(&tree, self) < 0)
        return -1;
    e = tnd_tree_entries(self->tree, &n);
    tnd_sha256_init(&h);
    for (size_t i = 0; i < n; i++) {
        bool skipped = false;
        for (size_t k = 0; skip && skip[k] && !skipped; k++)
            skipped = strcmp(skip[k], e[i].path) == 0;
        if (skipped)
            continue;
        tnd_sha256_update(&h, e[i].path, strlen(e[i].path) + 1);
        tnd_sha256_update(&h, e[i].link ? "l" : e[i].exec ? "x" : "f", 1);
        tnd_sha256_update(&h, e[i].blob, sizeof(e[i].blob));
    }
    tnd_sha256_final_hex(out, &h);
    return 0;
}

const char *tnd_content_stamp(const tnd_content *self)
{
    return self->tree ? self->stamp : NULL;
}

const tnd_blob *tnd_content_change_blobs(const tnd_content *self, size_t *n)
{
    *n = self->nblobs;
    return self->blobs;
}

/* The bytes of the blob named hash into b; -1 when none is known. */
static int find(tnd_blob *b, tnd_content *self, const char *hash)
{
    const tnd_tree_entry *e;
    bool exec;

    memset(b, 0, sizeof(*b));
    memcpy(b->hash, hash, sizeof(b->hash));
    if (strcmp(hash, tnd_tree_hash(self->tree)) == 0) {
        size_t len;
        if (tnd_tree_sendable(self->tree) < 0)
            return -1;
        const char *text = tnd_tree_text(self->tree, &len);
        b->data = tnd_xstrndup(text, len);
        b->len = len;
        return 0;
    }
    for (size_t i = 0; i < self->nblobs; i++)
        if (strcmp(self->blobs[i].hash, hash) == 0) {
            b->data = tnd_xmalloc(self->blobs[i].len + 1);
            memcpy(b->data, self->blobs[i].data, self->blobs[i].len);
            b->len = self->blobs[i].len;
            return 0;
        }
    if ((e = tnd_tree_find_blob(self->tree, hash)))
        return (e->link ? read_link(&b->data, &b->len, self->base_dir, e->path)
                        : read_file(&b->data, &b->len, &exec, NULL,
                                    self->base_dir, e->path)) < 0
                   ? -1
                   : 0;
    return tnd_error_set("the reviewer asked for blob %s, which is not in "
                         "tree %s nor among the attempt's changes",
                         hash, tnd_tree_hash(self->tree));
}

int tnd_content_fill(tnd_blob **out, size_t *n, tnd_content *self,
                     const char *const *hashes, size_t budget)
{
    size_t used = 0, alloc = 0;
    const char *tree;

    *out = NULL;
    *n = 0;
    if (tnd_content_tree(&tree, self) < 0)
        return -1;
    for (size_t i = 0; hashes[i]; i++) {
        char hash[TND_SHA256_HEX + 1];
        size_t cost, have;
        tnd_blob b;
        if (tnd_need_entry(hash, &have, hashes[i]) < 0 ||
            find(&b, self, hash) < 0) {
            tnd_tree_blobs_free(out, *n);
            *n = 0;
            return -1;
        }
        cost = tnd_base64_len(b.len) + TND_SHA256_HEX + 8;
        if (*n > 0 && used + cost > budget) {
            free(b.data);
            break; /* the next round brings the rest */
        }
        if (cost > budget || have) {
            /* too large for one request: a piece from where the agent
             * is, as large as the budget allows */
            size_t room, len;
            char *piece;
            if (budget < 4096) {
                tnd_error_set("the request leaves no room for blob %s", hash);
                free(b.data);
                tnd_tree_blobs_free(out, *n);
                *n = 0;
                return -1;
            }
            room = (budget - TND_SHA256_HEX - 64) / 4 * 3;
            if (have >= b.len) {
                tnd_error_set("the reviewer holds %zu bytes of blob %s, "
                              "which has %zu",
                              have, hash, b.len);
                free(b.data);
                tnd_tree_blobs_free(out, *n);
                *n = 0;
                return -1;
            }
            len = b.len - have < room ? b.len - have : room;
            piece = tnd_xmalloc(len + 1);
            memcpy(piece, b.data + have, len);
            b.total = b.len;
            b.offset = have;
            free(b.data);
            b.data = piece;
            b.len = len;
            cost = tnd_base64_len(len) + TND_SHA256_HEX + 64;
            if (*n > 0 && used + cost > budget) {
                free(b.data);
                break;
            }
        }
        used += cost;
        TND_GROW(*out, alloc, *n + 1);
        (*out)[(*n)++] = b;
        self->sent++;
        self->sent_bytes += b.len;
    }
    return 0;
}

size_t tnd_content_tree_bytes(const tnd_content *self)
{
    size_t n, total = 0, len;
    const tnd_tree_entry *e;

    if (!self->tree)
        return 0;
    e = tnd_tree_entries(self->tree, &n);
    for (size_t i = 0; i < n; i++)
        total += tnd_base64_len(e[i].size);
    tnd_tree_text(self->tree, &len);
    return total + tnd_base64_len(len);
}

size_t tnd_content_sent(const tnd_content *self, size_t *bytes)
{
    if (bytes)
        *bytes = self->sent_bytes;
    return self->sent;
}
