/* tnd_beneath - file operations confined to a directory tree.
 *
 * A path checked once and used later is a race: a build that runs
 * between the check and the write can swap a directory for a symlink to
 * a place outside. These calls resolve a relative path beneath a
 * directory descriptor at the moment of the operation and refuse any
 * symlink on the way (openat2 with RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS;
 * where the kernel has no openat2, a walk that opens each component with
 * O_NOFOLLOW). ".." and absolute paths are refused the same way.
 *
 * Every call returns -1 with the error set, naming rel; a symlink or an
 * escape reads "REL: the path passes through a symbolic link, or leaves
 * the tree". */
#ifndef TND_BENEATH_H
#define TND_BENEATH_H

#include <stdbool.h>
#include <sys/types.h>

/* Open rel beneath rootfd with flags (O_CLOEXEC and O_NOFOLLOW added)
 * and mode. A descriptor, or -1 with the error set. */
int tnd_beneath_open(int rootfd, const char *rel, int flags, mode_t mode);

/* Create the directory rel beneath rootfd and any missing parents.
 * created (may be NULL) is called with each directory made, relative,
 * parents first. 0, or -1 with the error set. */
int tnd_beneath_mkdirs(int rootfd, const char *rel,
                       void (*created)(const char *rel, void *payload),
                       void *payload);

/* Remove rel beneath rootfd: a file, or with dir an empty directory.
 * A missing rel is 0 when missing_ok. 0, or -1 with the error set
 * (errno kept, so ENOTEMPTY can be told apart). */
int tnd_beneath_remove(int rootfd, const char *rel, bool dir, bool missing_ok);

/* For tests: use the component walk even where openat2 exists, as an
 * older kernel would. Not thread-safe; not for production code. */
void tnd_beneath_walk_only(bool on);

#endif
