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
 * it past its size empties it first.
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
 * building its workspace (a put that finds the cache full empties it,
 * which would take blobs from under a build that found them present).
 * The calls themselves do not lock: one thread alone needs none of
 * this. tnd_blobcache_drop needs no lock. */
void tnd_blobcache_lock(tnd_blobcache *self);
void tnd_blobcache_unlock(tnd_blobcache *self);

/* The runtime directory (absolute, symlink-free). Borrowed. */
const char *tnd_blobcache_dir(const tnd_blobcache *self);

/* Whether the blob named hash is stored. */
bool tnd_blobcache_has(const tnd_blobcache *self, const char *hash);

/* Check b against its hash (what names it in the error: a path, "the
 * manifest") and store it. -1 with the error set: a wrong blob is
 * refused, and so is one larger than the cache. */
int tnd_blobcache_put(tnd_blobcache *self, const tnd_blob *b, const char *what);

/* The manifest stored under hash, parsed. NULL with the error set
 * (TND_ENOTFOUND in *why when not stored, may be NULL). */
tnd_tree *tnd_blobcache_tree(const tnd_blobcache *self, const char *hash);

/* The blobs of tree and of changes that are not stored, without
 * duplicates, as a NULL-terminated list (tnd_str_list_free); NULL when
 * none is missing. */
char **tnd_blobcache_missing(const tnd_blobcache *self, const tnd_tree *tree,
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
