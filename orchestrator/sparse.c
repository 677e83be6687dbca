/* The files a sparse checkout leaves out (see sparse.h). */
#include "orchestrator/sparse.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/error.h"
#include "common/fs.h"
#include "common/str.h"
#include "common/xalloc.h"
#include "orchestrator/git.h"

/* The bytes of paths one checkout-index is given at most: far under
 * the kernel's limit on a command line (ARG_MAX, 2 MiB at least) */
#define BATCH_BYTES (256 << 10)
#define BATCH_PATHS 2000

/* git checkout-index of the n paths into dir; older gits (before 2.36)
 * have no --ignore-skip-worktree-bits, and write such a path without
 * it. *absent: it failed for a blob this machine does not have (a
 * partial clone's, which git may not fetch: see git.h). */
static int checkout(bool *absent, const char *repo, const char *prefix,
                    const char *const *paths, size_t n)
{
    const char **argv = tnd_xcalloc(n + 6, sizeof(*argv));
    char *why = NULL;
    size_t k = 0;
    int rc;

    argv[k++] = "git";
    argv[k++] = "checkout-index";
    argv[k++] = "--ignore-skip-worktree-bits";
    argv[k++] = prefix;
    argv[k++] = "--";
    memcpy(argv + k, paths, n * sizeof(*argv));
    rc = tnd_git_try(NULL, NULL, &why, repo, argv, 64 << 10);
    if (rc < 0 && why && strstr(why, "ignore-skip-worktree-bits") &&
        strstr(why, "unknown option")) {
        memmove(argv + 2, argv + 3, (n + 3) * sizeof(*argv));
        free(why);
        why = NULL;
        rc = tnd_git_try(NULL, NULL, &why, repo, argv, 64 << 10);
    }
    /* "could not fetch ID from promisor remote" (the fetch refused);
     * "unable to read sha1 file of PATH" (git 2.44 on, no fetch tried) */
    *absent = rc < 0 && why &&
              (strstr(why, "promisor remote") ||
               strstr(why, "unable to read sha1 file"));
    free(why);
    free(argv);
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
        size_t k = 0, len = 0;
        while (at + k < m && k < BATCH_PATHS && len < BATCH_BYTES)
            len += strlen(missing[at + k++]) + 1;
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
