/* tnd_patchdir - a unified diff applied to the files of a directory,
 * whole or not at all, without git.
 *
 * tandem run --apply outside a git work tree uses it, and --commit uses
 * it on a private checkout of the files a patch touches. The patch is
 * checked against the files as they are now; only when every part fits
 * is anything written: each new content beside its file first, then a
 * rename each, so a full disk leaves the tree as it was. */
#ifndef TND_PATCHDIR_H
#define TND_PATCHDIR_H

/* Apply diff (NUL-terminated, a/ b/ names) to the files under dir. 0, or
 * -1 with the error set (naming the file and what did not fit). */
int tnd_patchdir_apply(const char *dir, const char *diff);

#endif
