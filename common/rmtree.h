/* tnd_fs_rmtree - rm -rf, for trees a build (model-written code) made.
 *
 * Never follows a symbolic link, opens up directories without write or
 * search permission (they are ours to remove), and holds at most 64
 * directories open however deep the tree: below that depth a directory
 * is moved up into the top of the tree and removed on a later pass. */
#ifndef TND_RMTREE_H
#define TND_RMTREE_H

#include <stdatomic.h>

/* rm -rf without following symlinks. A missing path is success. */
int tnd_fs_rmtree(const char *path);

/* rm -rf of name in the directory open as dirfd, never following a
 * symlink, so a tree a build rearranged cannot lead it outside. */
int tnd_fs_rmtree_at(int dirfd, const char *name);

/* As tnd_fs_rmtree_at, stopping between two entries once *stop is set
 * (another thread sets it): then -1 with the error saying so, and what
 * was not removed yet stays. stop may be NULL. */
int tnd_fs_rmtree_at_until(int dirfd, const char *name, const atomic_int *stop);

#endif
