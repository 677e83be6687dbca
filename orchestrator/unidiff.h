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
 * submodules (modes 120000, 160000). A file made executable or not ("new
 * mode", or "new file mode 100755") is a mode change beside the edits
 * (tnd_unidiff_change; tnd_workspace_apply_exec sets it), so the tree
 * audited is the one committed: dropped, a `chmod -x` of a test script
 * the suite runs was approved, and a new executable script was made
 * 0644 and failed to run. Quoted names (git's C
 * quoting) are unquoted, and every name is checked as a code reply's are
 * (tnd_edit_path_check: no backslash, control character, "..", .git/;
 * and UTF-8, as the JSON bodies carrying it are), so a
 * change no edit can carry is refused here, before a session starts. */
#ifndef TND_UNIDIFF_H
#define TND_UNIDIFF_H

#include <stddef.h>

#include "orchestrator/workspace.h"
#include "proto/code.h"

/* Parse len bytes of diff into *edits (count in *n; caller frees with
 * tnd_edit_list_free). 0, or -1 with an error naming the file and hunk.
 * A diff with no file in it is an error too, and so is one holding a
 * NUL byte (not a text diff). */
int tnd_unidiff_edits(tnd_edit **edits, size_t *n, const char *diff,
                      size_t len);

/* As tnd_unidiff_edits, with the modes the change sets into *modes
 * (count in *nmodes; free with tnd_unidiff_exec_free). A change of modes
 * alone is no edit (*n 0) and its modes. */
int tnd_unidiff_change(tnd_edit **edits, size_t *n, tnd_exec_change **modes,
                       size_t *nmodes, const char *diff, size_t len);

void tnd_unidiff_exec_free(tnd_exec_change *modes, size_t n);

#endif
