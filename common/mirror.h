/* tnd_mirror - a copy of a directory that can be made equal to its source
 * again, touching only what changed.
 *
 * Each attempt of a task must run its checks on a tree that equals the
 * base plus that attempt's edits, with nothing an earlier build wrote
 * (issue 12). Removing the tree and copying the base again does that, but
 * costs a file creation per file: about half a millisecond each on some
 * filesystems, a second per attempt for 2,000 files. A mirror remembers
 * what every entry it wrote looks like (inode, size, modification and
 * change times, mode) and a restore removes every entry that is not in
 * the source, and copies again every entry whose identity changed. The
 * change time (ctime) cannot be set from user space and moves on every
 * write, chmod or rename, so an entry whose identity is unchanged holds
 * what was copied. To close the one gap (a write within the same clock
 * tick as the copy, which leaves ctime as it was), a copy or restore
 * returns only once the filesystem's clock has moved past the newest
 * ctime it recorded.
 *
 * The walk opens every directory relative to its parent with O_NOFOLLOW,
 * so a build that replaced a directory with a symlink to somewhere else
 * cannot make a restore read or write there: the symlink is removed and
 * the directory made again. Anything unexpected (an entry that cannot be
 * removed, a clock that does not move) falls back to the whole copy. */
#ifndef TND_MIRROR_H
#define TND_MIRROR_H

#include <stddef.h>

#include "common/trash.h"

typedef struct tnd_mirror tnd_mirror;

/* What a restore did, for tests and the curious. */
typedef struct tnd_mirror_stats {
    size_t kept;    /* entries found as they were written */
    size_t removed; /* entries not in the source, or changed: removed */
    size_t copied;  /* entries written again */
    int full;       /* 1 when it fell back to a whole new copy */
} tnd_mirror_stats;

/* Copy src into dst (which must not exist; its parent must) and remember
 * what was written. src must stay as it is while the mirror lives. NULL
 * with the error set; nothing is left at dst then. */
tnd_mirror *tnd_mirror_new(const char *src, const char *dst);

/* From now on, what a restore removes is moved into trash (borrowed: it
 * must outlive the mirror, or be set to NULL again) and removed on its
 * thread, so a restore costs a rename for a tree a build made, however
 * large; without a trash (NULL) it is removed in place. */
void tnd_mirror_set_trash(tnd_mirror *self, tnd_trash *trash);

/* Free; removes dst when remove is true. Sets *self_p to NULL; safe on
 * NULL. */
void tnd_mirror_destroy(tnd_mirror **self_p, int remove);

/* Make dst equal src again: the same entries, contents, modes and
 * modification times; nothing else. *stats may be NULL. -1 with the
 * error set when even a whole new copy fails. */
int tnd_mirror_restore(tnd_mirror *self, tnd_mirror_stats *stats);

#endif
