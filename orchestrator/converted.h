/* tnd_converted - the files of a git change as a checkout writes them.
 *
 * git's diff is of the bytes git stores, and a review's base is the
 * commit as a checkout writes it. For most files the two are the same;
 * a file git converts on checkout (`eol=crlf`, core.autocrlf, a
 * clean/smudge filter, `ident`, working-tree-encoding) is not: the
 * diff's lines are not the base's, and a staged change to a file under
 * a smudge filter was rejected, "the diff was not made against this
 * tree", whatever it did. What the user will commit, checked out, is the
 * commit's blobs through the same conversion: so the files the change
 * touches that an attribute or a setting of git's may convert (most
 * changes have none: two git processes say so) are found, the change
 * is applied by git to a scratch index of the base (`git apply
 * --cached`, its objects written to a scratch directory, never the
 * repository's), those files are checked out of that index beside the
 * base, and
 * every file whose checkout differs from its blob, in the base or after
 * the change, is reviewed as that checkout: its edits become one write
 * of the whole file. Git LFS files are checked out as an export's are
 * (lfs.h): one whose object is not on this machine is refused, naming
 * it, as its content is not here to review, and git-lfs never sees it. */
#ifndef TND_CONVERTED_H
#define TND_CONVERTED_H

#include <stddef.h>

#include "proto/code.h"

typedef struct tnd_converted {
    char *path; /* as the diff names it */
    char *text; /* the file as a checkout of the change writes it */
    size_t len;
} tnd_converted;

/* The files of diff (git's own, its "index" lines' blob ids whole or
 * abbreviated) that a checkout writes other than git stores them, into
 * *out (count in *n; none: NULL and 0). repo is the work tree, base the
 * directory its commit was checked out into, index the scratch index
 * file holding that commit's tree (it ends holding the change's), dir a
 * private directory for scratch files (left there: the caller's to
 * remove). A diff git cannot apply to the base (not git's own) finds
 * none: the workspace then says where it does not fit. 0, TND_ECONFIG
 * naming the Git LFS files of the change whose objects are not here,
 * or -1 with the error set (git failed, the disk). */
int tnd_converted_find(tnd_converted **out, size_t *n, const char *repo,
                       const char *base, const char *index, const char *dir,
                       const char *diff);

/* Replace the edits (*edits, *n: a diff's, tnd_unidiff_change) of each
 * converted file by one write of its checkout. TND_ECONFIG, naming the
 * file, when that checkout is no text an edit can carry (binary, not
 * UTF-8: a filter such as git-lfs's smudge); 0 otherwise. */
int tnd_converted_edits(tnd_edit **edits, size_t *n, const tnd_converted *conv,
                        size_t nconv);

/* A patch against the work tree as it is (--diff FILE, named as named
 * says), as edits: TND_ECONFIG when the first hunk of a file git
 * converts on checkout (its work-tree bytes are not what git stores)
 * does not hold in it. Such a patch is git's own (`git diff` is of what
 * git stores), which `git apply` refuses there too: the error names the
 * file and the review that applies it as git does (tandem review, or
 * --staged). 0 otherwise, and when repo is no git work tree. */
int tnd_converted_check_patch(const char *repo, const tnd_edit *edits, size_t n,
                              const char *named);

void tnd_converted_free(tnd_converted *conv, size_t n);

#endif
