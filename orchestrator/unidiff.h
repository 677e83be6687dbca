/* tnd_unidiff - a unified diff (git diff, diff -u) as workspace edits.
 *
 * `tandem review --diff FILE` audits a patch someone else wrote. Rather
 * than a second patch applier, the patch becomes the edits a coder would
 * have sent: each hunk a REPLACE of its old lines (context and removed)
 * by its new lines (context and added), anchored at the line its header
 * gives (tnd_edit.line: a hunk goes where the diff says, not to another
 * copy of its lines; one with no old lines inserts there), a created
 * file a WRITE, a deleted file a DELETE. tnd_workspace_apply then checks and
 * applies them with the same rules (paths confined to the copy, each search
 * text matching exactly one place, all or nothing). Renames, copies and binary
 * patches are refused with a message saying so, and so are symbolic links and
 * submodules (modes 120000, 160000); other mode changes are ignored, and a diff
 * of mode changes alone is no edit at all (0, with *n 0). Quoted names (git's C
 * quoting) are unquoted, and every name is checked as a code reply's are
 * (tnd_edit_path_check: no backslash, control character, "..", .git/), so a
 * change no edit can carry is refused here, before a session starts. */
#ifndef TND_UNIDIFF_H
#define TND_UNIDIFF_H

#include <stddef.h>

#include "proto/code.h"

/* Parse len bytes of diff into *edits (count in *n; caller frees with
 * tnd_edit_list_free). 0, or -1 with an error naming the file and hunk.
 * A diff with no file in it is an error too, and so is one holding a
 * NUL byte (not a text diff). */
int tnd_unidiff_edits(tnd_edit **edits, size_t *n, const char *diff,
                      size_t len);

#endif
