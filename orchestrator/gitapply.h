/* tnd_gitapply - whether git apply makes of a patch the tree tandem
 * reviewed.
 *
 * `tandem review --diff FILE` reads the patch with its own parser
 * (unidiff.h), but what happens to an approved patch is `git apply`. A
 * reading that differs from git's approves one tree and lets another
 * through: a `diff -ruN` deletion (its "+++" dated 1970) reviewed as an
 * emptied file, a new file's hunk without "---"/"+++" lines reviewed as
 * an empty file, names without a/ and b/ read one level off, a mode
 * spelt 0120000, a context-free insertion placed elsewhere, carriage
 * returns kept in added lines. So after the review's workspace is made,
 * the same patch is applied by git to a scratch copy of the base files
 * it and tandem touch, and each of those files is compared: present or
 * not, a file or a symbolic link, executable or not, and its bytes. */
#ifndef TND_GITAPPLY_H
#define TND_GITAPPLY_H

#include <stddef.h>

/* Apply diff (len bytes) with git apply to a copy of base's files that
 * it or paths (tandem's reading: the files its edits and modes touch,
 * NULL-terminated) name, in a scratch directory made in scratch_parent
 * and removed after, and compare each with the same file in ws. Where
 * they differ and repo (a git work tree, or NULL) gives the files
 * line-end attributes (text, eol, crlf), once more with those: git apply
 * in that tree converts by them (a CRLF checkout's file is read as LF,
 * so `git diff`'s own patch applies there, and was rejected here). 0 when
 * they all agree; 1 when they do not, with *why (caller frees) saying
 * where and how, in words for the person who gave the patch; -1 when the
 * check could not be made (git missing, the disk), error set. */
int tnd_gitapply_same(const char *diff, size_t len, const char *base,
                      const char *ws, const char *const *paths,
                      const char *scratch_parent, const char *repo, char **why);

#endif
