/* Unit tests for orchestrator/sparse: the files a sparse checkout
 * leaves out of the working tree, written from git's index. The
 * repository is made with a shell script in a temporary directory. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "common/error.h"
#include "common/fs.h"
#include "common/rmtree.h"
#include "common/xalloc.h"
#include "tests/unit/scratch_repo.h"
#include "orchestrator/sparse.h"

static char scratch[] = "/tmp/tnd-test-sparse-XXXXXX";

/* Many files with long names: 300 of about 1000 bytes */
#define NFILES 300

/* The shell's words that make the repository: NFILES files in a
 * directory 1000 bytes deep, committed, then left out of the working
 * tree (skip-worktree, as a sparse checkout leaves them). */
static const char make_repo[] =
    "set -e; cd \"$1\"; git init -q repo; cd repo\n"
    "d=$(printf '%0200d' 0 | tr 0 d)\n"
    "deep=$d/$d/$d/$d/$d\n"
    "mkdir -p \"$deep\"\n"
    "i=0; while [ $i -lt 300 ]; do printf 'a\\n' >\"$deep/f$i\";"
    " i=$((i + 1)); done\n"
    "git add -A\n"
    "git -c user.name=t -c user.email=t@example.com commit -qm base\n"
    "git ls-files -z | xargs -0 git update-index --skip-worktree --\n"
    "rm -r \"$d\"\n";

static int setup(void **state)
{
    (void)state;
    return scratch_repo_make(scratch, make_repo);
}

static int teardown(void **state)
{
    (void)state;
    tnd_fs_rmtree(scratch);
    return 0;
}

/* 300 files of 1000-byte names left out, under a stack limit of 1 MiB
 * (exec takes 256 KiB of arguments): git checkout-index was given them
 * on its command line in parts of 256 KiB, past what exec takes, and
 * the snapshot failed, "Argument list too long". git reads them on its
 * stdin. */
static void many_long_names_are_written(void **state)
{
    char *repo = tnd_fs_join(scratch, "repo"),
         *dir = tnd_fs_join(scratch, "snap"), *list, *at, *text = NULL;
    char *cmd = tnd_xasprintf("cd %s && git ls-files", repo), *full;
    const char **paths = tnd_xcalloc(NFILES + 1, sizeof(*paths));
    size_t n = 0, got, files = 0, bytes = 0, absent = 0;
    tnd_lfs_left lfs;
    struct rlimit was;
    FILE *p = popen(cmd, "r");
    int rc;

    (void)state;
    assert_non_null(p);
    list = tnd_xcalloc(1 << 20, 1);
    got = fread(list, 1, (1 << 20) - 1, p);
    assert_int_equal(pclose(p), 0);
    for (at = list; at < list + got && n < NFILES;) {
        char *nl = strchr(at, '\n');

        assert_non_null(nl);
        *nl = '\0';
        paths[n++] = at;
        at = nl + 1;
    }
    assert_int_equal(n, NFILES);
    assert_int_equal(tnd_fs_mkdirs(dir, 0700), 0);
    small_stack(&was);
    rc = tnd_sparse_take(&files, &bytes, &absent, &lfs, repo, dir, paths, n,
                         (size_t)1 << 30);
    assert_int_equal(setrlimit(RLIMIT_STACK, &was), 0);
    if (rc < 0)
        fail_msg("%s", tnd_error_last());
    assert_int_equal(files, NFILES);
    assert_int_equal(bytes, 2 * NFILES);
    assert_int_equal(absent, 0);
    assert_int_equal(lfs.n, 0);
    tnd_lfs_left_free(&lfs);
    full = tnd_fs_join(dir, paths[NFILES - 1]);
    assert_int_equal(tnd_fs_read(&text, NULL, full, 4096), 0);
    assert_string_equal(text, "a\n");
    free(text);
    free(full);
    free(paths);
    free(list);
    free(cmd);
    free(dir);
    free(repo);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(many_long_names_are_written),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
