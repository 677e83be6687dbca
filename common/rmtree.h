/* tnd_fs_rmtree - rm -rf, for trees a build (model-written code) made.
 *
 * Never follows a symbolic link, opens up directories without write or
 * search permission (they are ours to remove), and holds at most 64
 * directories open however deep the tree: below that depth a directory
 * is moved up into the top of the tree and removed on a later pass. */
#ifndef TND_RMTREE_H
#define TND_RMTREE_H

/* rm -rf without following symlinks. A missing path is success. */
int tnd_fs_rmtree(const char *path);

/* rm -rf of name in the directory open as dirfd, never following a
 * symlink, so a tree a build rearranged cannot lead it outside. */
int tnd_fs_rmtree_at(int dirfd, const char *name);

#endif
