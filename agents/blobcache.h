/* tnd_blobcache - an agent's private runtime directory, the blobs it was
 * sent, and the workspaces it builds from them.
 *
 * An agent that does not share the orchestrator's filesystem is sent the
 * base tree by content (proto/tree.h): the manifest and each file's
 * bytes, named by SHA-256. The cache keeps them in the agent's own
 * runtime directory (agents/agentdir.h: made at start, removed at exit,
 * and by the next agent when this one was killed), so the tree travels
 * once per agent. Every blob is checked against its
 * hash before it is stored. The cache is bounded: a blob that would take
 * it past its size makes room by removing the least recently used blobs
 * (a blob is used when it is stored or sent again, and when a request's
 * tree names it: tnd_blobcache_missing, tnd_blobcache_hold), never those
 * of the request being served (see tnd_blobcache_lock).
 *
 * For each request the agent builds a fresh workspace in the same
 * directory from the base tree and the attempt's changes, by copying the
 * cached files (never hard links: a skill that writes a file in place
 * would change the cache), and removes it after the reply. */
#ifndef TND_BLOBCACHE_H
#define TND_BLOBCACHE_H

#include <stdbool.h>
#include <stddef.h>

#include "proto/tree.h"

typedef struct tnd_blobcache tnd_blobcache;

/* Make the runtime directory for role ("reviewer", see
 * tnd_agentdir_new) holding at most max_bytes of blobs. NULL with the
 * error set. */
tnd_blobcache *tnd_blobcache_new(const char *role, size_t max_bytes);

/* Remove the directory and everything in it; sets *self_p to NULL; safe
 * on NULL. */
void tnd_blobcache_destroy(tnd_blobcache **self_p);

/* Hold the cache for a sequence of the calls below that must not
 * interleave with another thread's: from storing a request's blobs to
 * building its workspace (a put that finds the cache full removes blobs,
 * which would take them from under a build that found them present).
 * While it is held, a blob used since it was taken is the request's and
 * is never removed to make room: a put that finds no other room fails.
 * The calls themselves do not lock: one thread alone needs none of
 * this (then any blob but the one being stored may make room).
 * tnd_blobcache_drop needs no lock. */
void tnd_blobcache_lock(tnd_blobcache *self);
void tnd_blobcache_unlock(tnd_blobcache *self);

/* The runtime directory (absolute, symlink-free). Borrowed. */
const char *tnd_blobcache_dir(const tnd_blobcache *self);

/* Whether the blob named hash is stored. */
bool tnd_blobcache_has(const tnd_blobcache *self, const char *hash);

/* Check b against its hash (what names it in the error: a path, "the
 * manifest") and store it (one stored already is marked used). -1 with
 * the error set: a wrong blob is refused, and so is one larger than the
 * cache, or than the room the request's own blobs leave. */
int tnd_blobcache_put(tnd_blobcache *self, const tnd_blob *b, const char *what);

/* The manifest stored under hash, parsed. NULL with the error set
 * (TND_ENOTFOUND in *why when not stored, may be NULL). */
tnd_tree *tnd_blobcache_tree(const tnd_blobcache *self, const char *hash);

/* The blobs of tree and of changes that are not stored, without
 * duplicates, as a NULL-terminated list (tnd_str_list_free); NULL when
 * none is missing. Those stored, and the manifest, are marked used, as
 * tnd_blobcache_hold does. */
char **tnd_blobcache_missing(tnd_blobcache *self, const tnd_tree *tree,
                             const tnd_tree_change *changes, size_t n);

/* Mark the stored blobs of tree (its manifest too) and of changes used
 * now: under tnd_blobcache_lock, the blobs stored next cannot make room
 * by removing them. */
void tnd_blobcache_hold(tnd_blobcache *self, const tnd_tree *tree,
                        const tnd_tree_change *changes, size_t n);

/* A new workspace holding tree with changes applied, every blob stored.
 * *out is its absolute path (caller frees, and removes it with
 * tnd_blobcache_drop). -1 with the error set. */
int tnd_blobcache_build(char **out, tnd_blobcache *self, const tnd_tree *tree,
                        const tnd_tree_change *changes, size_t n);

/* Remove a workspace tnd_blobcache_build made. */
void tnd_blobcache_drop(tnd_blobcache *self, char **dir);

/* Blobs stored since the cache was made: for logs and tests. */
size_t tnd_blobcache_received(const tnd_blobcache *self);

#endif
