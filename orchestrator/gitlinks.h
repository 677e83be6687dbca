/* tnd_gitlinks - the submodules of an exported commit, checked out.
 *
 * `git checkout-index -a` writes a submodule (a gitlink, mode 160000)
 * as an empty directory, so a review's base and `run --commit`'s had
 * none of a submodule's files, and a build that needs them failed on
 * every change. Each submodule's recorded commit is checked out into its
 * directory from the submodule's own repository on this machine (its
 * work tree's .git, else the superproject's modules/NAME), read-only,
 * through an index file of tandem's own, with none of the caller's
 * GIT_DIR and the like (a hook's), and never fetched: git runs
 * with `protocol.allow=never`, so not even a partial clone's lazy fetch
 * reaches the network. A submodule not initialised, or whose commit is
 * not there, stays empty, and the note says which and why. Submodules of
 * submodules likewise, a few levels deep. The submodules with changes of
 * their own, which a review leaves out, are named (tnd_gitlinks_dirty). */
#ifndef TND_GITLINKS_H
#define TND_GITLINKS_H

#include "orchestrator/lfs.h"

/* Check out the submodules of the tree in index (a scratch index file
 * holding the exported commit's tree; only read) into base, where
 * `checkout-index -a` wrote that tree, repo being the work tree it was
 * exported from; dir is a private directory for scratch files. *note
 * (caller frees; NULL when there is nothing to say) names the submodules
 * left empty and why. A submodule's Git LFS files are written as
 * tnd_lfs_smudge writes the top's: those left as their pointers are
 * added to *lfs, named by their paths in the export. 0, or -1 with the
 * error set (git failed otherwise than for a missing submodule, the
 * disk). */
int tnd_gitlinks_export(char **note, tnd_lfs_left *lfs, const char *repo,
                        const char *index, const char *base, const char *dir);

/* The submodules of the work tree repo (its top) whose tracked files
 * have changes of their own, in their own work trees, as git status
 * reports them (the user's submodule.NAME.ignore heard): a review of
 * repo's changes leaves those out, as a commit of repo takes none of
 * them, and says so. Their paths, a NULL-terminated list (free with
 * tnd_str_list_free); NULL when there is none, when repo has no
 * .gitmodules (no git is run), or when git cannot say (a note, never a
 * reason to stop). */
char **tnd_gitlinks_dirty(const char *repo);

#endif
