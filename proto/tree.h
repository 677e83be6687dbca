/* tnd_tree - a tree of files named by content, for agents that do not
 * share the orchestrator's filesystem (proto/PROTOCOL.md, "Content").
 *
 * A manifest lists a tree's regular files and symbolic links: path, mode
 * (644 or 755 for a file, lnk for a link), size and blob, the SHA-256 of
 * the file's bytes (a link's: its target's) in lowercase hex. No path
 * lies beneath a link. Its canonical text is one line per entry, sorted
 * by path bytewise:
 *
 *   644 1234 e3b0c442...b855 src/main.c\n
 *
 * and the tree's hash is the SHA-256 of that text. The text is itself a
 * blob: an agent that lacks it asks for it by the tree's hash like any
 * other. An attempt's files are the base tree plus changes (files
 * written or deleted), whose contents travel as blobs too. Blobs go in a
 * request's "blobs" object as base64; an agent that lacks some answers
 * with a "need" body listing their hashes. */
#ifndef TND_TREE_H
#define TND_TREE_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

#include "common/sha256.h"

/* Files one manifest may list, and bytes of a manifest's text. */
#define TND_TREE_MAX_FILES 200000
#define TND_TREE_MAX_TEXT  (9 << 20)
/* Bytes of blobs (base64) one request carries: with the rest of a
 * request they stay under the 16 MiB frame. */
#define TND_TREE_BLOBS_BUDGET (12 << 20)
/* Hashes one "need" body may list. */
#define TND_TREE_MAX_NEED (TND_TREE_MAX_FILES + 1)

typedef struct tnd_tree_entry {
    char *path; /* relative, "/"-separated, no "." or ".." components */
    bool exec;  /* mode 0755; else 0644 */
    bool link;  /* a symbolic link: the blob is its target, size its
                   length */
    size_t size;
    char blob[TND_SHA256_HEX + 1];
} tnd_tree_entry;

typedef struct tnd_tree tnd_tree;

/* A tree of entries (taken, with their paths; entries itself is freed
 * too), sorted here. NULL with the error set when a path is not fit to
 * travel (absolute, "..", a newline) or appears twice, or there are more
 * than TND_TREE_MAX_FILES. Its text may be larger than an agent takes
 * (see tnd_tree_sendable). */
tnd_tree *tnd_tree_new(tnd_tree_entry *entries, size_t n);

/* 0 when the tree's text fits the TND_TREE_MAX_TEXT an agent takes;
 * -1 with the error saying why it cannot be sent, and what to do. */
int tnd_tree_sendable(const tnd_tree *self);

/* The tree whose canonical text is text (len bytes): checked line by
 * line (the error names the line). NULL with the error set. */
tnd_tree *tnd_tree_parse(const char *text, size_t len);

/* Free; sets *self_p to NULL; safe on NULL. */
void tnd_tree_destroy(tnd_tree **self_p);

/* The tree's hash (hex). Borrowed. */
const char *tnd_tree_hash(const tnd_tree *self);

/* The canonical text and its length. Borrowed. */
const char *tnd_tree_text(const tnd_tree *self, size_t *len);

/* The entries, sorted by path. Borrowed. */
const tnd_tree_entry *tnd_tree_entries(const tnd_tree *self, size_t *n);

/* The first entry whose blob is hash; NULL when none. */
const tnd_tree_entry *tnd_tree_find_blob(const tnd_tree *self,
                                         const char *hash);

/* The entry at path; NULL when none. */
const tnd_tree_entry *tnd_tree_find_path(const tnd_tree *self,
                                         const char *path);

/* 0 when path may name a file in a tree; -1 with the error naming it. */
int tnd_tree_check_path(const char *path);

/* One file an attempt wrote or deleted, against the base tree. */
typedef struct tnd_tree_change {
    char *path;
    bool deleted;                  /* then exec and blob mean nothing */
    bool exec;                     /* mode 0755; else 0644 */
    char blob[TND_SHA256_HEX + 1]; /* the new content's hash */
} tnd_tree_change;

/* A request's "changes" (an array) and back: each
 * {"path", "blob", "mode": "644"|"755"} or {"path", "deleted": true}.
 * *out is NULL-safe to free with tnd_tree_changes_free. */
json_object *tnd_tree_changes_to_json(const tnd_tree_change *c, size_t n);
int tnd_tree_changes_from_json(tnd_tree_change **out, size_t *n,
                               json_object *arr);
void tnd_tree_changes_free(tnd_tree_change **c, size_t n);

/* A blob as it travelled: its hash (the key it was sent under) and its
 * bytes, not yet checked against the hash. A blob too large for one
 * request travels in pieces: then total is its whole size and data
 * holds len bytes from offset; total 0 means data is the whole blob. */
typedef struct tnd_blob {
    char hash[TND_SHA256_HEX + 1];
    char *data;
    size_t len;
    size_t offset, total;
} tnd_blob;

/* A request's "blobs" object and back: {hash: base64} for a whole blob,
 * {hash: {"offset": N, "size": TOTAL, "data": base64}} for a piece. Keys
 * must be hashes and values base64; whether the bytes match is the
 * receiver's check (tnd_blob_verify, once a blob is whole). */
json_object *tnd_tree_blobs_to_json(const tnd_blob *b, size_t n);
int tnd_tree_blobs_from_json(tnd_blob **out, size_t *n, json_object *obj);
void tnd_tree_blobs_free(tnd_blob **b, size_t n);

/* 0 when b's bytes hash to b->hash; -1 with "blob HASH (WHAT) hashes to
 * OTHER: ..." where what names it (a path, "the manifest"). */
int tnd_blob_verify(const tnd_blob *b, const char *what);

/* The "need" body an agent answers with when it lacks blobs: the task's
 * ids and the hashes (each may be "HASH:N", see tnd_need_decode). Caller
 * frees. */
char *tnd_need_encode(const char *task_id, int attempt,
                      const char *const *hashes, size_t n, size_t *len_out);

/* Decode a "need" body: *out is a NULL-terminated list (tnd_str_list_free),
 * at least one, each a hash, or "HASH:N" for a blob the agent holds the
 * first N bytes of (it came in pieces; the next piece starts there). -1
 * with the error set. */
int tnd_need_decode(char ***out, char **task_id, int *attempt, const char *body,
                    size_t len);

/* Split a need entry ("HASH" or "HASH:N") into hash and *have (0 when
 * none). -1 with the error set when it is neither. */
int tnd_need_entry(char hash[TND_SHA256_HEX + 1], size_t *have,
                   const char *entry);

#endif
