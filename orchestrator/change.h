/* tnd_change - the change `tandem review` audits, and the tree it
 * applies to.
 *
 * Three sources:
 *   - a patch file (--diff FILE, "-" for stdin): against the repository's
 *     files as they are now;
 *   - git, everything uncommitted (the default): `git diff HEAD` against
 *     HEAD's tree;
 *   - git, staged only (--staged, for a pre-commit hook): `git diff
 *     --cached` against HEAD's tree, i.e. exactly what the commit takes;
 *     outside a commit (git sets GIT_INDEX_FILE for a commit's hooks)
 *     under pre-commit's --from-ref/--to-ref (PRE_COMMIT_FROM_REF,
 *     PRE_COMMIT_TO_REF: CI, a pre-push hook) the commits between them
 *     instead, `git diff FROM...TO` against the merge base's tree.
 * For the git sources HEAD's tree is checked out, as a checkout writes
 * it and through an index file of its own (never git archive, which
 * leaves out export-ignore files), into a runtime directory of its own
 * (rundir.h), so the review sees committed files
 * plus the change and nothing else; untracked files are not part of it. git
 * runs with an argv, no shell, and only reads the repository. */
#ifndef TND_CHANGE_H
#define TND_CHANGE_H

#include <stdbool.h>

#include "orchestrator/converted.h"
#include "orchestrator/gitlinks.h"
#include "orchestrator/lfs.h"
#include "orchestrator/rundir.h"

typedef struct tnd_change {
    char *diff;      /* the change as a unified diff */
    char *base;      /* the tree it applies to: the repository itself, or
                        HEAD exported under tmp */
    char *rev;       /* the commit of the base; NULL for a patch file */
    tnd_rundir *tmp; /* a directory this change owns (removed by clear),
                        or NULL */
    tnd_converted *converted; /* with base exported: the files of the
                                 diff a checkout writes other than git
                                 stores them (converted.h), as a
                                 checkout of the change writes them */
    size_t nconverted;
    char *note;       /* what the user should know of the base exported (a
                         submodule left empty, Git LFS files left as their
                         pointers, and why) and, exported or not, of the
                         change (submodules with changes of their own, left
                         out), or NULL */
    tnd_lfs_left lfs; /* with base exported: the Git LFS files left as
                         their pointers, their objects not here */
    bool empty;       /* git had no changes: tnd_change_load said "nothing
                         to review" (TND_ECONFIG), and --allow-empty may
                         pass that; nothing staged outside a commit (CI)
                         is no such change, only the error */
} tnd_change;

/* Load the change of repo. diff_file: a patch file or "-", else NULL
 * (git). staged: with git, only what is staged. rev (may be NULL: HEAD)
 * is the commit whose tree is the base; with diff_file too (a resumed
 * review of git changes, its diff kept in the session) that commit is
 * exported as the base instead of taking the repository as it is, into a
 * runtime directory made in rundir_base (tnd_rundir_base()); with
 * rundir_base NULL nothing is exported (c->base NULL): the change alone,
 * for a session only made. label (may be
 * NULL: "--diff FILE") is how errors name diff_file. 0, or TND_ECONFIG
 * with an error saying what to fix (not a git repository, an empty change, an
 * unreadable file; c->empty tells the empty change apart), or -1. */
int tnd_change_load(tnd_change *c, const char *repo, const char *diff_file,
                    const char *label, bool staged, const char *rev,
                    const char *rundir_base);

/* No change, only a base: the tree of commit rev (NULL or "": the empty
 * tree, before a branch's first commit) exported as above into a runtime
 * directory made in rundir_base. c->base names it and c->rev the commit;
 * c->diff stays NULL. For `tandem run --commit`, whose audit must be of
 * the tree it commits onto, not the work tree's files. 0, or -1 with the
 * error set. */
int tnd_change_export(tnd_change *c, const char *repo, const char *rev,
                      const char *rundir_base);

/* 0 when repo is the top of its git work tree, or in none (the callers'
 * own git commands say so); TND_ECONFIG, naming the top and saying to
 * give it as --repo, when repo is a directory inside one: git's changes
 * and HEAD's tree are the whole work tree's, which a review of git
 * changes and run --commit audit. */
int tnd_change_at_top(const char *repo);

/* Free, and remove the exported tree. Safe on a zeroed change. */
void tnd_change_clear(tnd_change *c);

#endif
