/* tnd_diff - line-based unified diffs in git's format.
 *
 * The orchestrator records every attempt as a patch a person (or `git
 * apply`, or `patch -p1`) can read and apply: attempt-N.diff, final.diff.
 * The algorithm is Myers' O(ND) difference in linear space, with a cost
 * cut-off so a pathological pair of inputs still yields a correct (if not
 * minimal) diff in bounded time. */
#ifndef TND_DIFF_H
#define TND_DIFF_H

#include <stdbool.h>
#include <stddef.h>

#include "common/buf.h"

/* Append to out the diff of one file from old to new, with 3 lines of
 * context, git style:
 *
 *   diff --git a/PATH b/PATH
 *   new file mode 100644          (old == NULL: the file is created)
 *   deleted file mode 100644      (new == NULL: the file is deleted)
 *   --- a/PATH  or  --- /dev/null
 *   +++ b/PATH  or  +++ /dev/null
 *   @@ -l,s +l,s @@
 *   ...
 *   \ No newline at end of file   (after a last line without '\n')
 *
 * NULL means the file is absent (its length must then be 0). Hunks are
 * what `diff -u` prints for the same edit script: ",1" left out, an empty
 * range written "-0,0". An empty file created or deleted gets only the
 * first two lines, as in git. Content with a NUL byte is reported as
 * "Binary files a/PATH and b/PATH differ" (/dev/null for an absent side),
 * after the mode line if any. Identical inputs append nothing. Returns 0,
 * or -1 when out's cap would be crossed (error set; out is left as it
 * was). PATH is printed as given, without git's quoting. */
int tnd_diff_file(tnd_buf *out, const char *path, const char *old_text,
                  size_t old_len, const char *new_text, size_t new_len);

/* As tnd_diff_file, with each side executable or not: git's modes
 * 100755 and 100644 in "new file mode", "deleted file mode", and "old
 * mode"/"new mode" lines when the file's mode changed (the same bytes in
 * another mode are those lines alone, after the "diff --git" line). */
int tnd_diff_file_exec(tnd_buf *out, const char *path, const char *old_text,
                       size_t old_len, bool old_exec, const char *new_text,
                       size_t new_len, bool new_exec);

/* Count the lines a diff adds and removes (lines starting with '+' or '-'
 * inside hunks, not the ---/+++ headers; the @@ counts say where a hunk
 * ends). Works on several files' diffs in a row. Either out pointer may be
 * NULL. */
void tnd_diff_stat(const char *diff, size_t len, size_t *added_out,
                   size_t *removed_out);

/* The path a diff's header names in s[0..n) (what follows "--- " or
 * "+++ ", or one name of "diff --git"): a tab and what follows it (diff
 * -u's time) dropped, git's C quoting undone (tnd_str_git_unquote), and
 * "a/" or "b/" dropped once. NULL for /dev/null. Caller frees. */
char *tnd_diff_path(const char *s, size_t n);

/* Whether the header's name in s[0..n) is dated the epoch (1970-01-01
 * 00:00:00 UTC, in any zone): how `diff -N` marks the side of a file
 * created or deleted, which git apply and patch read as /dev/null. */
bool tnd_diff_epoch(const char *s, size_t n);

#endif
