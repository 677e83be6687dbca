/* tnd_workspace - the isolated copy of the user's repository a task works
 * in.
 *
 * The user's tree is never written: tandem copies it (working tree as it
 * is now, uncommitted changes included, without .git and .tandem) and
 * applies the coder's edits to the copy. Every attempt starts again from
 * the base: before the next proposal is applied, the files the last one
 * touched are put back, while build outputs stay, so builds remain
 * incremental. Edits are confined to the copy: absolute paths, "..",
 * and paths that pass through a symlink leading outside are refused. */
#ifndef TND_WORKSPACE_H
#define TND_WORKSPACE_H

#include <stddef.h>

#include "proto/code.h"

typedef struct tnd_workspace tnd_workspace;

/* Copy repo into dir (which must not exist yet; its parent must). At most
 * max_bytes of files. NULL with the error set. */
tnd_workspace *tnd_workspace_new(const char *repo, const char *dir,
                                 size_t max_bytes);

/* Free; removes the directory when remove is true. Sets *self_p to NULL;
 * safe on NULL. */
void tnd_workspace_destroy(tnd_workspace **self_p, int remove);

/* The workspace root (absolute). Borrowed. */
const char *tnd_workspace_path(const tnd_workspace *self);

/* Apply a proposal, all or nothing: every edit is checked and computed in
 * memory first, and files are written only when all succeed. On failure
 * nothing changed and the error says which edit failed and why, in words
 * fit to send back to the coder. Call tnd_workspace_revert between
 * proposals. */
int tnd_workspace_apply(tnd_workspace *self, const tnd_edit *edits,
                        size_t count);

/* The applied proposal as a unified diff against the base, files in path
 * order. Caller frees. NULL with the error set when it is larger than the
 * protocol allows. "" when the proposal changed nothing. */
char *tnd_workspace_diff(tnd_workspace *self);

/* Paths the applied proposal touched, NULL-terminated, borrowed until the
 * next apply or revert. */
const char *const *tnd_workspace_touched(const tnd_workspace *self);

/* Put back every file the last proposal touched. */
int tnd_workspace_revert(tnd_workspace *self);

#endif
