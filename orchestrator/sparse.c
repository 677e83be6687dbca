/* The files a sparse checkout leaves out (see sparse.h). */
#include "orchestrator/sparse.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/str.h"
#include "common/xalloc.h"
#include "orchestrator/git.h"
#include "orchestrator/lfs.h"

/* The paths one checkout-index is given at most: each within git's
 * deadline (see git.h) */
#define BATCH_PATHS 2000

#define IGNORE_BITS "--ignore-skip-worktree-bits"

/* The n paths, each NUL-ended, for a --stdin -z (*len bytes) */
static char *list_of(size_t *len, const char *const *paths, size_t n)
{
    tnd_buf b;

    tnd_buf_init(&b, TND_BUF_NOCAP);
    for (size_t i = 0; i < n; i++)
        tnd_buf_append(&b, paths[i], strlen(paths[i]) + 1);
    return tnd_buf_detach(&b, len);
}

/* git checkout-index of the n paths into dir, the paths on its stdin
 * (--stdin -z), never its command line, which the kernel caps (ARG_MAX,
 * a quarter of the stack limit: 256 KiB of paths passed it under a 1
 * MiB limit, and the snapshot failed, "Argument list too long"); older
 * gits (before 2.36) have no --ignore-skip-worktree-bits, and write
 * such a path without it (*bits then NULL, else that option). Git LFS
 * files are written as their pointers (TND_LFS_OFF; lfs.h writes them
 * again). *absent: it failed for a blob this machine does not have (a
 * partial clone's, which git may not fetch: see git.h). */
static int checkout(bool *absent, const char **bits, const char *repo,
                    const char *prefix, const char *const *paths, size_t n)
{
    const char *argv[] = {"git", TND_LFS_OFF, "checkout-index",
                          *bits, prefix,      "--stdin",
                          "-z",  NULL};
    char *why = NULL, *list;
    size_t len = 0;
    int rc;

    if (!*bits)
        memmove(argv + 8, argv + 9,
                (sizeof(argv) / sizeof(*argv) - 9) * sizeof(*argv));
    list = list_of(&len, paths, n);
    rc = tnd_git_try_input(NULL, NULL, &why, repo, list, len, argv, 64 << 10);
    if (rc < 0 && *bits && why && strstr(why, IGNORE_BITS) &&
        strstr(why, "unknown option")) {
        *bits = NULL;
        memmove(argv + 8, argv + 9,
                (sizeof(argv) / sizeof(*argv) - 9) * sizeof(*argv));
        free(why);
        why = NULL;
        rc = tnd_git_try_input(NULL, NULL, &why, repo, list, len, argv,
                               64 << 10);
    }
    /* "could not fetch ID from promisor remote" (the fetch refused);
     * "unable to read sha1 file of PATH" (git 2.44 on, no fetch tried) */
    *absent = rc < 0 && why &&
              (strstr(why, "promisor remote") ||
               strstr(why, "unable to read sha1 file"));
    free(why);
    free(list);
    return rc;
}

/* The n paths under dir removed (what a checkout-index that failed
 * half way wrote: an empty file where a blob was lacking). */
static void remove_written(const char *dir, const char *const *paths, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        char *full = tnd_fs_join(dir, paths[i]);
        struct stat st;
        if (lstat(full, &st) == 0 && !S_ISDIR(st.st_mode))
            unlink(full);
        free(full);
    }
}

int tnd_sparse_take(size_t *files, size_t *bytes, size_t *absent,
                    tnd_lfs_left *lfs, const char *repo, const char *dir,
                    const char *const *paths, size_t n, size_t max_bytes)
{
    const char **missing = tnd_xcalloc(n + 1, sizeof(*missing));
    const char *bits = IGNORE_BITS;
    char *prefix = tnd_xasprintf("--prefix=%s/", dir), *list;
    size_t m = 0, len = 0;
    bool lacking = false;
    int rc = 0;

    *files = *bytes = *absent = 0;
    memset(lfs, 0, sizeof(*lfs));
    for (size_t i = 0; i < n; i++) {
        char *full = tnd_fs_join(dir, paths[i]);
        struct stat st;
        if (lstat(full, &st) < 0)
            missing[m++] = paths[i];
        free(full);
    }
    for (size_t at = 0; at < m && rc == 0;) {
        size_t k = m - at < BATCH_PATHS ? m - at : BATCH_PATHS;
        rc = checkout(&lacking, &bits, repo, prefix, missing + at, k);
        at += k;
    }
    /* a partial clone lacks them (git clone --filter --sparse): none is
     * written, as git's checkout has none, and the run says so */
    if (rc < 0 && lacking) {
        tnd_error_clear();
        remove_written(dir, missing, m);
        *absent = m;
        rc = 0;
        m = 0;
    }
    /* the Git LFS files among them whose objects are here with their
     * content; the rest stay pointers, said (git-lfs failed on them and
     * wrote its log into .git/lfs/logs) */
    if (rc == 0 && m) {
        list = list_of(&len, missing, m);
        rc = tnd_lfs_smudge_paths(lfs, repo, NULL, NULL, NULL, list, len, dir,
                                  bits);
        free(list);
    }
    for (size_t i = 0; i < m && rc == 0; i++) {
        char *full = tnd_fs_join(dir, missing[i]);
        struct stat st;
        if (lstat(full, &st) == 0 && S_ISREG(st.st_mode)) {
            ++*files;
            *bytes += (size_t)st.st_size;
        }
        free(full);
    }
    if (rc == 0 && *bytes > max_bytes)
        rc = tnd_error_set("with them (%zu files, %zu MiB) the files add "
                           "up to more than the workspace limit; raise "
                           "orchestrator.workspace_max_mb",
                           *files, (*bytes + (1 << 20) - 1) >> 20);
    if (rc < 0)
        tnd_error_prefix("cannot take the files outside the sparse checkout");
    free(prefix);
    free(missing);
    return rc;
}
