/* Trees named by content, changes and blobs on the wire (see tree.h). */
#include "proto/tree.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/base64.h"
#include "common/buf.h"
#include "common/error.h"
#include "common/str.h"
#include "common/xalloc.h"
#include "proto/body.h"
#include "proto/json.h"

struct tnd_tree {
    tnd_tree_entry *entries;
    size_t n;
    char *text;
    size_t text_len;
    char hash[TND_SHA256_HEX + 1];
};

int tnd_tree_check_path(const char *path)
{
    size_t len = strlen(path);
    const char *c = path;

    if (len == 0 || len > TND_BODY_MAX_PATH)
        return tnd_error_set("a path in a tree must be 1..%d bytes, got %zu",
                             TND_BODY_MAX_PATH, len);
    if (strchr(path, '\n') || strchr(path, '\r'))
        return tnd_error_set("path '%s' holds a line break, which a "
                             "manifest cannot carry",
                             path);
    if (path[0] == '/')
        return tnd_error_set("path '%s' is absolute; a tree holds "
                             "relative paths",
                             path);
    while (*c) {
        size_t n = strcspn(c, "/");
        if (n == 0 || (n == 1 && c[0] == '.') ||
            (n == 2 && c[0] == '.' && c[1] == '.'))
            return tnd_error_set("path '%s' has an empty, '.' or '..' "
                                 "component",
                                 path);
        c += n;
        if (*c == '/' && !*++c)
            return tnd_error_set("path '%s' ends in '/'", path);
    }
    return 0;
}

static int cmp_entry(const void *a, const void *b)
{
    return strcmp(((const tnd_tree_entry *)a)->path,
                  ((const tnd_tree_entry *)b)->path);
}

static void free_entries(tnd_tree_entry *e, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(e[i].path);
    free(e);
}

/* -1 with the error set when an entry of the sorted t lies beneath one
 * that is a link: a workspace built from it would write through the
 * link. */
static int check_links(const tnd_tree *t)
{
    char dir[TND_BODY_MAX_PATH + 1];

    for (size_t i = 0; i < t->n; i++) {
        const char *path = t->entries[i].path;
        for (const char *s = strchr(path, '/'); s; s = strchr(s + 1, '/')) {
            const tnd_tree_entry *d;
            memcpy(dir, path, (size_t)(s - path)); /* paths are checked */
            dir[s - path] = '\0';
            d = tnd_tree_find_path(t, dir);
            if (d && d->link)
                return tnd_error_set("path '%s' lies beneath '%.*s', which is "
                                     "a symbolic link",
                                     path, (int)(s - path), path);
        }
    }
    return 0;
}

/* The text and hash of sorted, checked entries. */
static void finish(tnd_tree *t)
{
    tnd_buf b;

    tnd_buf_init(&b, TND_BUF_NOCAP);
    for (size_t i = 0; i < t->n; i++)
        tnd_buf_printf(&b, "%s %zu %s %s\n",
                       t->entries[i].link   ? "lnk"
                       : t->entries[i].exec ? "755"
                                            : "644",
                       t->entries[i].size, t->entries[i].blob,
                       t->entries[i].path);
    t->text = tnd_buf_detach(&b, &t->text_len);
    tnd_sha256_hex(t->hash, t->text, t->text_len);
}

tnd_tree *tnd_tree_new(tnd_tree_entry *entries, size_t n)
{
    tnd_tree *t;

    if (n > TND_TREE_MAX_FILES) {
        tnd_error_set("a tree of %zu files is more than the %d the content "
                      "transfer carries",
                      n, TND_TREE_MAX_FILES);
        free_entries(entries, n);
        return NULL;
    }
    if (n)
        qsort(entries, n, sizeof(*entries), cmp_entry);
    for (size_t i = 0; i < n; i++)
        if (tnd_tree_check_path(entries[i].path) < 0 ||
            !tnd_sha256_is_hex(entries[i].blob) ||
            (i && strcmp(entries[i - 1].path, entries[i].path) == 0)) {
            if (tnd_sha256_is_hex(entries[i].blob) &&
                tnd_tree_check_path(entries[i].path) == 0)
                tnd_error_set("path '%s' appears twice in a tree",
                              entries[i].path);
            free_entries(entries, n);
            return NULL;
        }
    t = tnd_xcalloc(1, sizeof(*t));
    t->entries = entries;
    t->n = n;
    if (check_links(t) < 0) {
        tnd_tree_destroy(&t);
        return NULL;
    }
    /* no bound on the text here: a reviewer that shares this host's
     * filesystem never asks for it (tnd_tree_sendable) */
    finish(t);
    return t;
}

int tnd_tree_sendable(const tnd_tree *self)
{
    if (self->text_len <= TND_TREE_MAX_TEXT)
        return 0;
    return tnd_error_set(
        "a reviewer asked for the manifest of tree %s: %zu files, %zu bytes, "
        "more than the %d MiB one can take (about 100,000 files, fewer with "
        "long paths), so only a reviewer on this host, which works in the "
        "workspace itself, can audit it; run the reviewers here "
        "(agents.reviewer.count), or leave generated and vendored files out "
        "of git, or untracked (workspace.include_untracked: false)",
        self->hash, self->n, self->text_len, TND_TREE_MAX_TEXT >> 20);
}

/* "MODE SIZE BLOB PATH" (line without its newline) into e. */
static int parse_line(tnd_tree_entry *e, const char *line, size_t len)
{
    char mode[4], blob[TND_SHA256_HEX + 1];
    const char *p = line, *end = line + len;
    unsigned long long size = 0;

    if (len < 4 + 2 + TND_SHA256_HEX + 2 || p[3] != ' ')
        return tnd_error_set("not 'MODE SIZE BLOB PATH'");
    memcpy(mode, p, 3);
    mode[3] = '\0';
    if (strcmp(mode, "644") != 0 && strcmp(mode, "755") != 0 &&
        strcmp(mode, "lnk") != 0)
        return tnd_error_set("mode must be 644, 755 or lnk, got '%s'", mode);
    p += 4;
    if (p >= end || *p < '0' || *p > '9' || (*p == '0' && p[1] != ' '))
        return tnd_error_set("size must be a decimal number");
    while (p < end && *p >= '0' && *p <= '9') {
        if (size > 1ULL << 40)
            return tnd_error_set("size is too large");
        size = size * 10 + (unsigned)(*p++ - '0');
    }
    if (p >= end || *p++ != ' ' || end - p < TND_SHA256_HEX + 2)
        return tnd_error_set("not 'MODE SIZE BLOB PATH'");
    memcpy(blob, p, TND_SHA256_HEX);
    blob[TND_SHA256_HEX] = '\0';
    p += TND_SHA256_HEX;
    if (!tnd_sha256_is_hex(blob) || *p++ != ' ')
        return tnd_error_set("blob must be 64 lowercase hex digits");
    if (memchr(p, '\0', (size_t)(end - p)))
        return tnd_error_set("path holds a NUL byte");
    e->path = tnd_xstrndup(p, (size_t)(end - p));
    e->exec = mode[0] == '7';
    e->link = mode[0] == 'l';
    e->size = (size_t)size;
    memcpy(e->blob, blob, sizeof(blob));
    return tnd_tree_check_path(e->path);
}

tnd_tree *tnd_tree_parse(const char *text, size_t len)
{
    tnd_tree_entry *e = NULL;
    size_t n = 0, alloc = 0, lineno = 0;
    tnd_tree *t;

    if (len > TND_TREE_MAX_TEXT) {
        tnd_error_set("a manifest of %zu bytes is over the limit (%d MiB)", len,
                      TND_TREE_MAX_TEXT >> 20);
        return NULL;
    }
    if (len && text[len - 1] != '\n') {
        tnd_error_set("a manifest must end in a newline");
        return NULL;
    }
    for (size_t at = 0; at < len;) {
        const char *nl = memchr(text + at, '\n', len - at);
        size_t ll = (size_t)(nl - (text + at));
        lineno++;
        if (n >= TND_TREE_MAX_FILES) {
            tnd_error_set("more than %d files", TND_TREE_MAX_FILES);
            goto fail;
        }
        TND_GROW(e, alloc, n + 1);
        memset(&e[n], 0, sizeof(*e));
        if (parse_line(&e[n], text + at, ll) < 0 ||
            (n && strcmp(e[n - 1].path, e[n].path) >= 0)) {
            if (e[n].path && n && strcmp(e[n - 1].path, e[n].path) >= 0)
                tnd_error_set("paths must be sorted and unique ('%s' after "
                              "'%s')",
                              e[n].path, e[n - 1].path);
            n++;
            goto fail;
        }
        n++;
        at += ll + 1;
    }
    t = tnd_xcalloc(1, sizeof(*t));
    t->entries = e;
    t->n = n;
    if (check_links(t) < 0) {
        tnd_tree_destroy(&t);
        return NULL;
    }
    finish(t);
    return t;
fail:
    tnd_error_prefix("manifest line %zu", lineno);
    free_entries(e, n);
    return NULL;
}

void tnd_tree_destroy(tnd_tree **self_p)
{
    tnd_tree *t = self_p ? *self_p : NULL;

    if (!t)
        return;
    free_entries(t->entries, t->n);
    free(t->text);
    free(t);
    *self_p = NULL;
}

const char *tnd_tree_hash(const tnd_tree *self)
{
    return self->hash;
}

const char *tnd_tree_text(const tnd_tree *self, size_t *len)
{
    *len = self->text_len;
    return self->text;
}

const tnd_tree_entry *tnd_tree_entries(const tnd_tree *self, size_t *n)
{
    *n = self->n;
    return self->entries;
}

const tnd_tree_entry *tnd_tree_find_blob(const tnd_tree *self, const char *hash)
{
    for (size_t i = 0; i < self->n; i++)
        if (strcmp(self->entries[i].blob, hash) == 0)
            return &self->entries[i];
    return NULL;
}

const tnd_tree_entry *tnd_tree_find_path(const tnd_tree *self, const char *path)
{
    tnd_tree_entry key = {.path = (char *)path};

    return self->n ? bsearch(&key, self->entries, self->n,
                             sizeof(*self->entries), cmp_entry)
                   : NULL;
}

/* ---- changes ------------------------------------------------------------ */

json_object *tnd_tree_changes_to_json(const tnd_tree_change *c, size_t n)
{
    json_object *arr = json_object_new_array();

    for (size_t i = 0; i < n; i++) {
        json_object *o = json_object_new_object();
        json_object_object_add(o, "path", json_object_new_string(c[i].path));
        if (c[i].deleted) {
            json_object_object_add(o, "deleted", json_object_new_boolean(true));
        } else {
            json_object_object_add(o, "blob",
                                   json_object_new_string(c[i].blob));
            json_object_object_add(
                o, "mode", json_object_new_string(c[i].exec ? "755" : "644"));
        }
        json_object_array_add(arr, o);
    }
    return arr;
}

static int change_from_json(tnd_tree_change *c, json_object *o)
{
    char *blob = NULL, *mode = NULL;
    int rc = -1;

    if (!json_object_is_type(o, json_type_object))
        return tnd_error_set("must be an object");
    if (tnd_json_get_str(&c->path, o, "path", TND_BODY_MAX_PATH,
                         TND_JSON_REQUIRED) < 0 ||
        tnd_tree_check_path(c->path) < 0 ||
        tnd_json_get_bool(&c->deleted, o, "deleted", TND_JSON_OPTIONAL) < 0)
        return -1;
    if (c->deleted)
        return 0;
    if (tnd_json_get_str(&blob, o, "blob", TND_SHA256_HEX, TND_JSON_REQUIRED) <
            0 ||
        tnd_json_get_str(&mode, o, "mode", 3, TND_JSON_OPTIONAL) < 0)
        goto out;
    if (!tnd_sha256_is_hex(blob)) {
        tnd_error_set("field 'blob' must be 64 lowercase hex digits");
        goto out;
    }
    if (mode && strcmp(mode, "644") != 0 && strcmp(mode, "755") != 0) {
        tnd_error_set("field 'mode' must be \"644\" or \"755\"");
        goto out;
    }
    memcpy(c->blob, blob, sizeof(c->blob));
    c->exec = mode && mode[0] == '7';
    rc = 0;
out:
    free(blob);
    free(mode);
    return rc;
}

int tnd_tree_changes_from_json(tnd_tree_change **out, size_t *n,
                               json_object *arr)
{
    size_t len = json_object_array_length(arr);

    *out = tnd_xcalloc(len + 1, sizeof(**out));
    *n = 0;
    for (size_t i = 0; i < len; i++) {
        if (change_from_json(&(*out)[(*n)++],
                             json_object_array_get_idx(arr, i)) < 0) {
            tnd_error_prefix("changes[%zu]", i);
            return -1;
        }
    }
    return 0;
}

void tnd_tree_changes_free(tnd_tree_change **c, size_t n)
{
    for (size_t i = 0; *c && i < n; i++)
        free((*c)[i].path);
    free(*c);
    *c = NULL;
}

/* ---- blobs -------------------------------------------------------------- */

json_object *tnd_tree_blobs_to_json(const tnd_blob *b, size_t n)
{
    json_object *o = json_object_new_object();

    for (size_t i = 0; i < n; i++) {
        char *text = tnd_base64_encode(b[i].data, b[i].len);
        json_object *v = json_object_new_string(text);
        if (b[i].total) {
            json_object *piece = json_object_new_object();
            json_object_object_add(piece, "offset",
                                   json_object_new_int64((int64_t)b[i].offset));
            json_object_object_add(piece, "size",
                                   json_object_new_int64((int64_t)b[i].total));
            json_object_object_add(piece, "data", v);
            v = piece;
        }
        json_object_object_add(o, b[i].hash, v);
        free(text);
    }
    return o;
}

int tnd_tree_blobs_from_json(tnd_blob **out, size_t *n, json_object *obj)
{
    size_t alloc = 0;

    *out = NULL;
    *n = 0;
    json_object_object_foreach(obj, key, val)
    {
        tnd_blob *b;
        json_object *data = val;
        long offset = 0, total = 0;
        if (!tnd_sha256_is_hex(key))
            return tnd_error_set("blobs: key '%.80s' is not a SHA-256 in hex",
                                 key);
        if (json_object_is_type(val, json_type_object) &&
            (tnd_json_get_int(&offset, val, "offset", 0, 1L << 40,
                              TND_JSON_REQUIRED) < 0 ||
             tnd_json_get_int(&total, val, "size", 1, 1L << 40,
                              TND_JSON_REQUIRED) < 0 ||
             !json_object_object_get_ex(val, "data", &data))) {
            tnd_error_prefix("blobs.%s: a piece is {offset, size, data}", key);
            return -1;
        }
        if (!json_object_is_type(data, json_type_string))
            return tnd_error_set("blobs.%s must be a base64 string, or a "
                                 "piece {offset, size, data}",
                                 key);
        TND_GROW(*out, alloc, *n + 1);
        b = &(*out)[(*n)++];
        memset(b, 0, sizeof(*b));
        memcpy(b->hash, key, sizeof(b->hash));
        b->offset = (size_t)offset;
        b->total = (size_t)total;
        if (tnd_base64_decode(&b->data, &b->len, json_object_get_string(data),
                              (size_t)json_object_get_string_len(data)) < 0) {
            tnd_error_prefix("blobs.%s", key);
            return -1;
        }
        if (b->total && (b->len == 0 || b->offset + b->len > b->total))
            return tnd_error_set("blobs.%s: a piece of %zu bytes at %zu does "
                                 "not lie within its blob of %zu",
                                 key, b->len, b->offset, b->total);
    }
    return 0;
}

void tnd_tree_blobs_free(tnd_blob **b, size_t n)
{
    for (size_t i = 0; *b && i < n; i++)
        free((*b)[i].data);
    free(*b);
    *b = NULL;
}

int tnd_blob_verify(const tnd_blob *b, const char *what)
{
    char got[TND_SHA256_HEX + 1];

    tnd_sha256_hex(got, b->data, b->len);
    if (strcmp(got, b->hash) == 0)
        return 0;
    return tnd_error_set("blob %s (%s) hashes to %s: it was damaged or "
                         "tampered with on the way, and is refused",
                         b->hash, what, got);
}

/* ---- need --------------------------------------------------------------- */

char *tnd_need_encode(const char *task_id, int attempt,
                      const char *const *hashes, size_t n, size_t *len_out)
{
    json_object *o = tnd_body_new("need", task_id, attempt);
    json_object *arr = json_object_new_array();

    for (size_t i = 0; i < n; i++)
        json_object_array_add(arr, json_object_new_string(hashes[i]));
    json_object_object_add(o, "blobs", arr);
    return tnd_body_finish(o, len_out);
}

int tnd_need_decode(char ***out, char **task_id, int *attempt, const char *body,
                    size_t len)
{
    json_object *o = NULL, *arr = NULL;
    size_t n;
    int rc = -1;

    *out = NULL;
    *task_id = NULL;
    if (tnd_body_open(&o, body, len, "need") < 0)
        return -1;
    if (tnd_body_ids(task_id, attempt, o) < 0 ||
        tnd_json_get_array(&arr, o, "blobs", TND_TREE_MAX_NEED,
                           TND_JSON_REQUIRED) < 0)
        goto out;
    n = json_object_array_length(arr);
    if (n == 0) {
        tnd_error_set("field 'blobs' must list at least one hash");
        goto out;
    }
    *out = tnd_xcalloc(n + 1, sizeof(**out));
    for (size_t i = 0; i < n; i++) {
        json_object *h = json_object_array_get_idx(arr, i);
        char hash[TND_SHA256_HEX + 1];
        size_t have;
        if (!json_object_is_type(h, json_type_string) ||
            tnd_need_entry(hash, &have, json_object_get_string(h)) < 0) {
            tnd_error_set("blobs[%zu] must be a SHA-256 in hex, or HASH:N", i);
            goto out;
        }
        (*out)[i] = tnd_xstrdup(json_object_get_string(h));
    }
    rc = 0;
out:
    if (rc < 0) {
        tnd_str_list_free(out);
        free(*task_id);
        *task_id = NULL;
        tnd_error_prefix("bad need body");
    }
    json_object_put(o);
    return rc;
}

int tnd_need_entry(char hash[TND_SHA256_HEX + 1], size_t *have,
                   const char *entry)
{
    size_t len = strlen(entry);
    unsigned long long n = 0;

    *have = 0;
    if (len < TND_SHA256_HEX)
        return tnd_error_set("'%.80s' is not a hash", entry);
    memcpy(hash, entry, TND_SHA256_HEX);
    hash[TND_SHA256_HEX] = '\0';
    if (!tnd_sha256_is_hex(hash))
        return tnd_error_set("'%.80s' is not a hash", entry);
    if (len == TND_SHA256_HEX)
        return 0;
    if (entry[TND_SHA256_HEX] != ':' || len == TND_SHA256_HEX + 1 ||
        len > TND_SHA256_HEX + 1 + 13)
        return tnd_error_set("'%.80s' is not HASH or HASH:N", entry);
    for (const char *p = entry + TND_SHA256_HEX + 1; *p; p++) {
        if (*p < '0' || *p > '9')
            return tnd_error_set("'%.80s' is not HASH or HASH:N", entry);
        n = n * 10 + (unsigned)(*p - '0');
    }
    *have = (size_t)n;
    return 0;
}
