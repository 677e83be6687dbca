/* tnd_rundir - a run's private runtime directory, and the sweep of the
 * ones whose run died.
 *
 * $TMPDIR/tandem-UID/NAME holds what a run keeps outside the repository:
 * the snapshot, the workspace, the ipc sockets (NAME is the session id),
 * or the tree a review exports (NAME is review-XXXXXX). The base
 * directory is the user's alone (mode 0700).
 *
 * Who owns a directory: the process holding an flock on NAME/lock (its
 * pid inside, for messages). The kernel drops the lock when the process
 * dies, however it dies (kill -9 included), and a reused pid cannot
 * take it over, so a lock anyone can take means the owner is gone and
 * the directory is a leftover. A directory appears under its name
 * already locked: it is made as .new-XXXXXX, locked, then renamed into
 * place, so a sweep never meets a live run's directory unlocked. A dead
 * one is renamed to .gone-XXXXXX before it is removed, and removed only
 * when that is the directory judged: a run making one of the same name
 * meanwhile keeps its own. */
#ifndef TND_RUNDIR_H
#define TND_RUNDIR_H

#include <stdbool.h>
#include <stddef.h>

typedef struct tnd_rundir tnd_rundir;

/* A review's diff as tandem serve received it: base/submitted-XXXXXX.diff,
 * a file the server removes once it made the session from it, within
 * the same call, and holds (flock, tnd_fs_mkstemps_held) until then.
 * One nobody holds was left by a server killed meanwhile, and a sweep
 * removes it (not in its first TND_RUNDIR_NEW_GRACE_S: see below). */
#define TND_RUNDIR_DIFF_PREFIX "submitted-"
#define TND_RUNDIR_DIFF_SUFFIX ".diff"

/* How much one sweep may do: entries of the base looked at, leftovers
 * removed (the rest wait for the next sweep). */
#define TND_RUNDIR_SWEEP_ENTRIES  1024
#define TND_RUNDIR_SWEEP_REMOVALS 16

/* A directory without a lock file is judged by its age: a .new-XXXXXX
 * that is older than this was left by a run killed while making it (a
 * .gone-XXXXXX, by one killed while removing it). A .new-XXXXXX, a
 * probe-XXXXXX or a diff is not tried for its lock while younger than
 * this: its maker takes the lock a moment after making it (a try that
 * won would make the maker's fail), and a tandem older than the lock
 * had only this minute. Past it, a held lock keeps it, however old... */
#define TND_RUNDIR_NEW_GRACE_S 60
/* ...and a named one (made by a tandem older than the lock file) is
 * removed once this old. */
#define TND_RUNDIR_LOCKLESS_AGE_S (24 * 3600)

/* $TMPDIR/tandem-UID ($TMPDIR when it is an absolute path, else /tmp),
 * created with mode 0700 when missing. NULL with the error set when it
 * cannot be made, or is not a directory of the user's with mode 0700.
 * Caller frees. */
char *tnd_rundir_base(void);

/* How long tnd_rundir_new waits for a process holding a leftover of
 * the same name (a sweep removing it) before it gives up. */
#define TND_RUNDIR_BUSY_WAIT_MS 10000

/* Make base/name and hold it until tnd_rundir_destroy. name is a
 * session id, or NULL for a fresh review-XXXXXX. A leftover of the same
 * name (the session's run was killed; the caller holds the session's
 * lock, so it is no one else's) is removed first; when a live process
 * still holds it after wait_ms, NULL with an error naming its pid.
 * owner (may be NULL) is what a kept directory records as its owner:
 * the session directory. NULL with the error set. */
tnd_rundir *tnd_rundir_new(const char *base, const char *name,
                           const char *owner, long wait_ms);

/* The directory (absolute). Borrowed until tnd_rundir_destroy. */
const char *tnd_rundir_path(const tnd_rundir *self);

/* Remove the directory and let go of it; with keep, leave it, marked
 * kept (file "kept", holding the owner), which sweeps leave alone. Sets
 * *self_p to NULL; safe on NULL. */
void tnd_rundir_destroy(tnd_rundir **self_p, bool keep);

/* What a sweep found. */
typedef struct tnd_rundir_sweep {
    size_t removed; /* leftovers removed (with dry_run: removable) */
    size_t live;    /* held by a live process */
    size_t kept;    /* kept with --keep-workspace */
    size_t young;   /* too young to judge (its lock not tried) */
    size_t failed;  /* could not be removed (logged as a warning) */
    bool more;      /* the bounds stopped it: the rest wait for the
                       next sweep */
} tnd_rundir_sweep;

/* Remove the directories in base whose owner is gone: a lock nobody
 * holds, and not kept; or no lock file and older than the ages above.
 * Only directories of the user's whose name tandem gives (a session id,
 * review-XXXXXX, .new-XXXXXX, .gone-XXXXXX; probe-XXXXXX, whose lock is
 * the directory itself) and the user's diffs above (removed when their
 * own lock is free) are looked at; anything else is left alone, and no
 * symlink is followed. At most max_entries entries are looked at and
 * max_removals removed. Failures never reach the caller: they are
 * counted and logged. With dry_run nothing is removed. */
void tnd_rundir_sweep_dead(tnd_rundir_sweep *out, const char *base,
                           size_t max_entries, size_t max_removals,
                           bool dry_run);

/* Remove base/name when it is a directory kept for owner (a pruned
 * session's kept workspace) that no process holds. 1 when it was (with
 * dry_run: would be) removed, 0 when there is no such directory, -1
 * with the error set. */
int tnd_rundir_remove_kept(const char *base, const char *name,
                           const char *owner, bool dry_run);

#endif
