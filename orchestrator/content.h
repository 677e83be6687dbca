/* tnd_content - the orchestrator's side of sending a tree by content
 * (proto/tree.h, PROTOCOL.md "Content").
 *
 * A reviewer that does not share this host's filesystem gets the task's
 * base (the snapshot every attempt starts from) as a manifest of blobs,
 * and each attempt as the files it wrote or deleted. This module makes
 * the manifest of the snapshot (once, when first asked), the change list
 * of the workspace as it stands after a proposal was applied, and finds
 * the bytes of any blob a reviewer asks for: the manifest itself, a base
 * file (read from the snapshot), or a changed file. */
#ifndef TND_CONTENT_H
#define TND_CONTENT_H

#include <stdbool.h>
#include <stddef.h>

#include "proto/tree.h"

typedef struct tnd_content tnd_content;

/* For the snapshot in base_dir; nothing is read yet. mtimes: the stamp
 * has the files' mtimes too (see tnd_content_stamp). */
tnd_content *tnd_content_new(const char *base_dir, bool mtimes);

/* Free; sets *self_p to NULL; safe on NULL. */
void tnd_content_destroy(tnd_content **self_p);

/* The base tree's hash into *out (borrowed), hashing the snapshot on the
 * first call. -1 with the error set: a file cannot be read, the tree is
 * larger than the transfer carries. */
int tnd_content_tree(const char **out, tnd_content *self);

/* What the base's regular files hold besides their bytes and exec bit,
 * which the tree's hash has: a hash of each one's whole mode, and its
 * mtime when made so, made with the tree (NULL before
 * tnd_content_tree). A reviewer on this host uses the workspace in
 * place, a copy of the snapshot with the user's modes and mtimes kept (a
 * read-only file, one others may write, an object file older than its
 * source), and a skill sees them; so a baseline is shared only by trees
 * with the same stamp too (baseline_reuse.c). The mtimes are for a tree
 * taken whole, or git's files with untracked ones brought in
 * (workspace.include_untracked), which hold the user's build outputs:
 * make goes by them,
 * and the same bytes with a stale object newer than its source build
 * otherwise (a shared baseline said what the other tree did). git's
 * files are sources, each checkout or copy of them with its own mtimes,
 * and keying on those would share no baseline between two clones of one
 * commit. Borrowed. */
const char *tnd_content_stamp(const tnd_content *self);

/* What the base's files hold, leaving out the paths in skip
 * (NULL-terminated; may be NULL), into out: a hash of each file's path,
 * kind (file, executable, link) and bytes, hashing the snapshot if
 * tnd_content_tree has not. A resume compares it with the first run's,
 * skip being tandem's own files in the repository (its config, its
 * cassettes). -1 with the error set, as tnd_content_tree. */
int tnd_content_key(char out[TND_SHA256_HEX + 1], tnd_content *self,
                    const char *const *skip);

/* The attempt's changes: each of touched (paths relative to ws_dir) as
 * it is in ws_dir now, written or deleted; files equal to the base are
 * left out. Replaces the previous attempt's. *out and *n are borrowed
 * until the next call. The changed files' blobs are kept to be sent. */
int tnd_content_changes(const tnd_tree_change **out, size_t *n,
                        tnd_content *self, const char *ws_dir,
                        const char *const *touched);

/* The changed files' blobs (those of the last tnd_content_changes), to
 * go with the first request of an attempt. Borrowed. */
const tnd_blob *tnd_content_change_blobs(const tnd_content *self, size_t *n);

/* The blobs a "need" asked for (hashes, NULL-terminated; "HASH:N" for
 * one the agent holds N bytes of), as many as fit in budget bytes of
 * base64, into *out (free with tnd_tree_blobs_free). A blob too large
 * for one request, or one the agent holds a part of, goes as a piece
 * from where the agent is, as large as the budget allows, so every
 * round makes progress.
 * -1 with the error set: a hash that is neither the manifest, a base
 * file nor a changed file ("the reviewer asked for blob H, which is not
 * in tree T"), or a file that cannot be read. */
int tnd_content_fill(tnd_blob **out, size_t *n, tnd_content *self,
                     const char *const *hashes, size_t budget);

/* Bytes of base64 the whole tree would take: how many rounds of
 * TND_TREE_BLOBS_BUDGET a reviewer may need. */
size_t tnd_content_tree_bytes(const tnd_content *self);

/* Blobs and their bytes sent so far by tnd_content_fill. */
size_t tnd_content_sent(const tnd_content *self, size_t *bytes);

#endif
