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

/* The paths one checkout-index is given at most: each within git's
 * deadline (see git.h) */
#define BATCH_PATHS 2000

/* git checkout-index of the n paths into dir, the paths on its stdin
 * (--stdin -z), never its command line, which the kernel caps (ARG_MAX,
 * a quarter of the stack limit: 256 KiB of paths passed it under a 1
 * MiB limit, and the snapshot failed, "Argument list too long"); older
 * gits (before 2.36) have no --ignore-skip-worktree-bits, and write
 * such a path without it. *absent: it failed for a blob this machine
 * does not have (a partial clone's, which git may not fetch: see
 * git.h). */
static int checkout(bool *absent, const char *repo, const char *prefix,
                    const char *const *paths, size_t n)
{
    const char *argv[] = {
        "git",  "checkout-index", "--ignore-skip-worktree-bits",
        prefix, "--stdin",        "-z",
        NULL};
    char *why = NULL, *list;
    size_t len = 0;
    tnd_buf b;
    int rc;

    tnd_buf_init(&b, TND_BUF_NOCAP);
    for (size_t i = 0; i < n; i++)
        tnd_buf_append(&b, paths[i], strlen(paths[i]) + 1);
    list = tnd_buf_detach(&b, &len);
    rc = tnd_git_try_input(NULL, NULL, &why, repo, list, len, argv, 64 << 10);
    if (rc < 0 && why && strstr(why, "ignore-skip-worktree-bits") &&
        strstr(why, "unknown option")) {
        memmove(argv + 2, argv + 3,
                (sizeof(argv) / sizeof(*argv) - 3) * sizeof(*argv));
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
                    const char *repo, const char *dir, const char *const *paths,
                    size_t n, size_t max_bytes)
{
    const char **missing = tnd_xcalloc(n + 1, sizeof(*missing));
    char *prefix = tnd_xasprintf("--prefix=%s/", dir);
    size_t m = 0;
    bool lacking = false;
    int rc = 0;

    *files = *bytes = *absent = 0;
    for (size_t i = 0; i < n; i++) {
        char *full = tnd_fs_join(dir, paths[i]);
        struct stat st;
        if (lstat(full, &st) < 0)
            missing[m++] = paths[i];
        free(full);
    }
    for (size_t at = 0; at < m && rc == 0;) {
        size_t k = m - at < BATCH_PATHS ? m - at : BATCH_PATHS;
        rc = checkout(&lacking, repo, prefix, missing + at, k);
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
