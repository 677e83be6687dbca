/* tnd_lfs - the Git LFS files of a tree tandem exports, written with
 * their content when their objects are on this machine and as their
 * pointer files when not.
 *
 * A checkout runs git-lfs's smudge filter for each Git LFS file, and
 * git-lfs fetches an object this machine lacks; tandem never fetches
 * (git.h), so its fetch failed, the export with it, and a review of a
 * clone made with GIT_LFS_SKIP_SMUDGE (CI) or `git lfs pull --include`
 * stopped on a file the change did not touch. git-lfs also wrote a log
 * of that failure into the repository's .git/lfs/logs. So git-lfs never
 * sees a file whose object is missing: the tree is checked out with its
 * filter off (TND_LFS_OFF), every such file its pointer, as that clone's
 * own work tree holds it; then the files whose objects are here are
 * checked out again through git-lfs, which reads them from its store. */
#ifndef TND_LFS_H
#define TND_LFS_H

#include <stddef.h>

/* git's options for a checkout that writes each Git LFS file as its
 * pointer, running no git-lfs (its filter driver has no command, and is
 * not required) */
#define TND_LFS_OFF                                                \
    "-c", "filter.lfs.process=", "-c", "filter.lfs.smudge=", "-c", \
        "filter.lfs.required=false"

/* The files left as their pointers named at most (a person's list) */
#define TND_LFS_NAMED 10

typedef struct tnd_lfs_left {
    size_t n;                       /* files left as their pointers */
    char *named[TND_LFS_NAMED + 1]; /* the first of them, NULL-ended */
    char *submodule; /* the path of the first submodule one is in, or NULL:
                        its objects are fetched there */
} tnd_lfs_left;

/* After `git checkout-index -a` of index (a tree of repo) into base with
 * TND_LFS_OFF, the Git LFS files (filter=lfs) whose objects are on this
 * machine written again through git-lfs, with their content; those
 * whose objects are not stay pointers, counted and named in *left
 * (tnd_lfs_left_free). Nothing is written into the repository. 0, or
 * <0 with the error set when git fails (TND_ECONFIG: an object went
 * missing meanwhile, as git.h says). */
int tnd_lfs_smudge(tnd_lfs_left *left, const char *repo, const char *index,
                   const char *base);

/* As tnd_lfs_smudge, of a submodule's tree (gitlinks.h) checked out into
 * base: git runs in dir on the repository git_dir_opt ("--git-dir=PATH")
 * alone, none of the caller's GIT_DIR and the like; the files left as
 * pointers are added to *left, named under the directory under (the
 * submodule's path in the export). */
int tnd_lfs_smudge_alone(tnd_lfs_left *left, const char *git_dir_opt,
                         const char *dir, const char *index, const char *base,
                         const char *under);

/* As tnd_lfs_smudge, of the files paths names alone (len bytes, each
 * NUL-ended), checked out with TND_LFS_OFF into base from index (NULL:
 * the repository's own), whose blobs may be in the directory objects as
 * well as the repository's (repo_objects: tnd_git_run_scratch's; both
 * NULL for the repository's own): a change's files (converted.h), a
 * sparse checkout's (sparse.h). option: one more for checkout-index
 * (--ignore-skip-worktree-bits), or NULL. */
int tnd_lfs_smudge_paths(tnd_lfs_left *left, const char *repo,
                         const char *index, const char *objects,
                         const char *repo_objects, const char *paths,
                         size_t len, const char *base, const char *option);

/* What a person should know of left, or NULL when it is empty: which
 * files the skills see as pointers, and how to have them. Caller frees. */
char *tnd_lfs_note(const tnd_lfs_left *left);

void tnd_lfs_left_free(tnd_lfs_left *left);

#endif
