/* tnd_sparse - the files a sparse checkout leaves out of the working
 * tree, for a task's snapshot.
 *
 * git tracks them (they are in HEAD and the index) but does not write
 * them: `git ls-files -t` tags them S (skip-worktree). A review and
 * `run --commit` export HEAD's whole tree, so a plain run must not do
 * with less: a skill that needs such a file failed there with no word
 * of why. They are written from the index as a checkout would write them
 * (filters and eol applied), by `git checkout-index`. */
#ifndef TND_SPARSE_H
#define TND_SPARSE_H

#include <stddef.h>

#include "orchestrator/lfs.h"

/* Of the n paths (tracked, skip-worktree), those dir does not hold
 * (present in the working tree, the user's own file was copied) written
 * into dir from repo's index. *files and *bytes: what was written; the
 * bytes within max_bytes, or -1 naming orchestrator.workspace_max_mb.
 * In a partial clone, whose git lacks their blobs (and never fetches
 * them here: see git.h), none is written: *absent counts them. A Git
 * LFS file whose object is not on this machine is its pointer, as an
 * export's (lfs.h), counted and named in *lfs (tnd_lfs_left_free, on
 * every path). -1 with the error set when git fails otherwise. */
int tnd_sparse_take(size_t *files, size_t *bytes, size_t *absent,
                    tnd_lfs_left *lfs, const char *repo, const char *dir,
                    const char *const *paths, size_t n, size_t max_bytes);

#endif
