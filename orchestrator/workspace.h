/* tnd_workspace - the tree one attempt of a task works in.
 *
 * The user's tree is never written: the workspace is a copy of the task's
 * base (see snapshot.h) with the coder's edits applied. Every attempt
 * starts from a tree equal to the base (tnd_workspace_reset), so the
 * checks judge the base plus this attempt's edits and nothing an earlier
 * attempt's build left behind. With incremental on (workspace.incremental,
 * for builds that track their dependencies) a reset only puts back the
 * files the last proposal touched and build outputs stay. Diffs are always
 * against the base itself. Edits are confined to the copy: absolute paths,
 * "..", and paths that pass through a symlink leading outside are
 * refused. */
#ifndef TND_WORKSPACE_H
#define TND_WORKSPACE_H

#include <stdbool.h>
#include <stddef.h>

#include "orchestrator/snapshot.h"
#include "proto/code.h"

typedef struct tnd_workspace tnd_workspace;

/* A workspace in dir (which must not exist yet; its parent must), filled
 * from base, which must outlive it. NULL with the error set. */
tnd_workspace *tnd_workspace_new(const tnd_snapshot *base, const char *dir,
                                 bool incremental);

/* Free; removes the directory when remove is true, and ROOT.trash
 * always. Sets *self_p to NULL; safe on NULL. */
void tnd_workspace_destroy(tnd_workspace **self_p, int remove);

/* Stop removing what resets took out of the tree (they go into ROOT.trash,
 * beside it, and a thread removes them): soon, whatever is left, which
 * tnd_workspace_destroy removes. A run calls it before it stops its
 * agents, which need the broker's heartbeats until they are gone. Safe
 * on NULL. */
void tnd_workspace_stop_removals(tnd_workspace *self);

/* The workspace root (absolute). Borrowed. */
const char *tnd_workspace_path(const tnd_workspace *self);

/* A file's mode as a change sets it: executable or not (git's 100755 and
 * 100644), as a diff under review says it. */
typedef struct tnd_exec_change {
    char *path;
    bool exec;
} tnd_exec_change;

/* Apply a proposal, all or nothing: every edit is checked and computed in
 * memory first, and files are written only when all succeed. On failure
 * nothing changed and the error says which edit failed and why, in words
 * fit to send back to the coder. Call tnd_workspace_reset between
 * proposals. */
int tnd_workspace_apply(tnd_workspace *self, const tnd_edit *edits,
                        size_t count);

/* As tnd_workspace_apply, then each file modes names made executable or
 * not (its other permission bits kept; a read bit gives its execute bit).
 * count may be 0 when nmodes is not: a change of modes alone. A mode for
 * a file the edits leave absent is an error, as an edit's is. */
int tnd_workspace_apply_exec(tnd_workspace *self, const tnd_edit *edits,
                             size_t count, const tnd_exec_change *modes,
                             size_t nmodes);

/* The applied proposal as a unified diff against the base, files in path
 * order. Caller frees. NULL with the error set when it is larger than the
 * protocol allows. "" when the proposal changed nothing. */
char *tnd_workspace_diff(tnd_workspace *self);

/* Paths the applied proposal touched, NULL-terminated, borrowed until the
 * next apply or revert. */
const char *const *tnd_workspace_touched(const tnd_workspace *self);

/* Ready for the next attempt: a tree equal to the base (what any build
 * wrote is gone), or with incremental on, the files the last proposal
 * touched put back. */
int tnd_workspace_reset(tnd_workspace *self);

/* True when rel (relative, no "..") names a regular file inside the
 * workspace, symlinks resolved: how a place an agent reports (a skill's
 * file:line) is checked before it is shown to people or the coder. */
bool tnd_workspace_holds(const tnd_workspace *self, const char *rel);

/* How many lines that file has (a last one without a newline counts),
 * or -1 when it is not one (tnd_workspace_holds) or cannot be read: how
 * a line an agent reports is checked against the file's end. */
long tnd_workspace_lines(const tnd_workspace *self, const char *rel);

/* Whether resets keep build outputs (workspace.incremental). */
bool tnd_workspace_incremental(const tnd_workspace *self);

#endif
