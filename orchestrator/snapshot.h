/* tnd_snapshot - the clean tree every attempt of a task starts from.
 *
 * A task works on the repository's tracked files as they are in the
 * working tree: uncommitted changes included, files deleted in the working
 * tree left out. Untracked files are left out unless the config brings
 * them in (workspace.include_untracked); ignored files never come in. A
 * directory outside a work tree is taken whole, except .git and .tandem;
 * one in a work tree where git tracks none of its files is its untracked
 * files (whole when there are none either). Build outputs in the
 * user's tree are untracked or ignored, so they never reach a workspace.
 *
 * The snapshot copies that set once, into a private directory; each
 * attempt's workspace is made equal to it again (orchestrator/workspace.c,
 * common/mirror.c), so every attempt's checks run on the base plus that
 * attempt's edits and on nothing an earlier build left. The user's tree is only
 * read: paths are opened one component at a time without following symlinks, so
 * a tracked path that now leads through a symlink is not copied. */
#ifndef TND_SNAPSHOT_H
#define TND_SNAPSHOT_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

#include "orchestrator/lfs.h"

typedef struct tnd_snapshot tnd_snapshot;

typedef struct tnd_snapshot_options {
    bool include_untracked; /* untracked, not ignored, files come in */
    bool whole;             /* take the directory whole, git or not (an
                               exported commit) */
    bool adopt;             /* with whole: the directory is this
                               snapshot's to keep (an export made for it),
                               moved into place rather than copied when
                               it can be: on 30,000 files the copy was a
                               third of a review's wall time */
    size_t max_bytes;       /* the files may add up to this much */
} tnd_snapshot_options;

typedef struct tnd_snapshot_stats {
    bool git;                  /* the files are git's tracked ones */
    size_t files;              /* regular files in the snapshot */
    size_t bytes;              /* their size */
    size_t untracked;          /* untracked paths in the working tree (an
                                  untracked directory counts once when
                                  they are left out) */
    bool untracked_included;   /* ...and they are in the snapshot */
    size_t skipped;            /* tracked paths not copied: behind a
                                  symlink, or not a file any more */
    size_t sparse;             /* tracked files outside a sparse
                                  checkout, written from the index (in
                                  files) */
    size_t sparse_absent;      /* ...left out: a partial clone lacks
                                  them */
    tnd_lfs_left lfs;          /* ...Git LFS files of them left as their
                                  pointers, their objects not here */
    size_t submodules_empty;   /* submodules not initialised: their
                                  directories are empty */
    char submodule_empty[256]; /* the first of them */
    char why_whole[300];       /* why the directory was taken whole; "" */
} tnd_snapshot_stats;

/* Take the snapshot of repo into dir (which must not exist; its parent
 * must). NULL with the error set: the files are larger than max_bytes
 * (for git's files, told from their sizes before anything is copied),
 * git fails in a work tree, a file cannot be read. */
tnd_snapshot *tnd_snapshot_new(const char *repo, const char *dir,
                               const tnd_snapshot_options *o);

/* Free; removes the snapshot's directory when remove is true. Sets
 * *self_p to NULL; safe on NULL. */
void tnd_snapshot_destroy(tnd_snapshot **self_p, int remove);

/* The snapshot's directory (absolute). Borrowed. */
const char *tnd_snapshot_path(const tnd_snapshot *self);

/* What the snapshot holds and where it came from. Borrowed. */
const tnd_snapshot_stats *tnd_snapshot_about(const tnd_snapshot *self);

/* What the snapshot holds, as a JSON object for report.json and the
 * journal: source ("git" or "directory"), files, bytes, untracked,
 * include_untracked, skipped, and incremental as given. Caller puts. */
json_object *tnd_snapshot_json(const tnd_snapshot *self, bool incremental);

/* One line for people: "12 tracked files (40 KiB); 3 untracked paths
 * left out (workspace.include_untracked brings them in)". Caller frees. */
char *tnd_snapshot_describe(const tnd_snapshot *self);

#endif
