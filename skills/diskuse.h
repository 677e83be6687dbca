/* tnd_diskuse - how much a skill wrote in its workspace, for its
 * limits.disk_mb.
 *
 * RLIMIT_FSIZE bounds one file; nothing bounded their number, so a skill
 * writing ten thousand files of a MiB filled the disk the workspace is
 * on (a bind of a real directory: no tmpfs size, and quotas are the
 * host's). Walking the workspace at every tick would cost a large
 * repository's build dearly, so the filesystem is asked first
 * (statvfs(2), a few microseconds): the workspace is only walked when
 * the filesystem grew by the skill's remaining room since it started.
 * The walk counts the blocks of what the skill changed: every entry
 * whose ctime (which no program can set back) is not before the skill's
 * start, at TND_DISKUSE_ENTRY at least; the filesystem's inodes in use
 * count as that much each in its use too. A skill writes no more than the
 * filesystem grows, so until it grows by the room left after a walk, no walk is
 * needed; space others free meanwhile is taken off that room when it is seen.
 */
#ifndef TND_DISKUSE_H
#define TND_DISKUSE_H

#include <stdbool.h>
#include <time.h>

/* Directories deeper than this are not walked: a tree that deep counts
 * as over any limit (no build makes one; a skill hiding bytes would). */
#define TND_DISKUSE_DEPTH 128

/* The least an entry counts, and an inode the filesystem has in use
 * (one block): an empty file takes no block but an inode, and a skill
 * making millions of them ran the filesystem out of inodes while its
 * bytes stayed under any limit. */
#define TND_DISKUSE_ENTRY 4096ULL

/* The allocated bytes (st_blocks, TND_DISKUSE_ENTRY at least) of the
 * entries beneath dir (dir itself not counted) whose ctime is since or
 * later; symlinks are not
 * followed and other filesystems not entered. Stops once past stop and
 * returns what it counted; returns stop + 1 for a tree deeper than
 * TND_DISKUSE_DEPTH, and for a directory changed since that the walk may
 * not open (its mode closed to its owner: what it holds is hidden).
 * Other entries that vanish or cannot be read on the way are passed
 * over. */
unsigned long long tnd_diskuse_since(const char *dir,
                                     const struct timespec *since,
                                     unsigned long long stop);

/* One skill's watch on its workspace: its limit, the time it started,
 * and where the filesystem was. */
typedef struct tnd_diskuse {
    const char *dir;
    unsigned long long limit; /* bytes; 0: none, nothing is done */
    struct timespec since;
    unsigned long long next; /* the filesystem's used bytes that call
                                for a walk */
    unsigned long long low;  /* the least used bytes seen since */
    unsigned long long own;  /* the skill's bytes at the last walk */
    bool over;
} tnd_diskuse;

/* Start watching dir (borrowed) for a skill that may write limit bytes
 * there (0: none). */
void tnd_diskuse_start(tnd_diskuse *d, const char *dir,
                       unsigned long long limit);

/* Whether the skill has written more than its limit: the filesystem
 * asked, the workspace walked when it grew enough (see the top). Once
 * over, always over. */
bool tnd_diskuse_over(tnd_diskuse *d);

#endif
