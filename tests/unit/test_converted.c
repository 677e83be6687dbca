/* Unit tests for orchestrator/converted: a git change's files as a
 * checkout writes them. Each test makes a repository (`* text eol=crlf`:
 * every file is checked out other than git stores it) with a shell
 * script, in a temporary directory. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "common/error.h"
#include "common/fs.h"
#include "common/rmtree.h"
#include "common/xalloc.h"
#include "orchestrator/converted.h"

static char scratch[] = "/tmp/tnd-test-converted-XXXXXX";

/* Many files with long names: 300 of about 1000 bytes, near the
 * longest an edit takes (1024) */
#define NFILES 300

/* The shell's words that make the repository: NFILES files in a
 * directory 1000 bytes deep, committed with LF, checked out with CRLF,
 * each changed; its diff in change.diff, HEAD's tree in base.index and
 * checked out under base/. */
static const char make_repo[] =
    "set -e; cd \"$1\"; git init -q repo; cd repo\n"
    "d=$(printf '%0200d' 0 | tr 0 d)\n"
    "deep=$d/$d/$d/$d/$d\n"
    "mkdir -p \"$deep\"\n"
    "i=0; while [ $i -lt 300 ]; do printf 'a\\nb\\n' >\"$deep/f$i\";"
    " i=$((i + 1)); done\n"
    "printf '* text eol=crlf\\n' >.gitattributes\n"
    "git add -A\n"
    "git -c user.name=t -c user.email=t@example.com commit -qm base\n"
    "rm -r \"$d\"; git checkout -- .\n"
    "for f in \"$deep\"/*; do printf 'a\\r\\nB\\r\\n' >\"$f\"; done\n"
    "git diff >../change.diff\n"
    "GIT_INDEX_FILE=../base.index git read-tree HEAD\n"
    "GIT_INDEX_FILE=../base.index git checkout-index -a --prefix=../base/\n";

static int setup(void **state)
{
    char *cmd;
    int rc;

    (void)state;
    if (!mkdtemp(scratch))
        return -1;
    cmd = tnd_fs_join(scratch, "make.sh");
    rc = tnd_fs_write(cmd, make_repo, strlen(make_repo));
    free(cmd);
    if (rc == 0) {
        cmd =
            tnd_xasprintf("sh %s/make.sh %s >/dev/null 2>&1", scratch, scratch);
        rc = system(cmd) == 0 ? 0 : -1;
        free(cmd);
    }
    return rc;
}

static int teardown(void **state)
{
    (void)state;
    tnd_fs_rmtree(scratch);
    return 0;
}

/* The stack limit (RLIMIT_STACK, whose quarter is what exec takes of
 * arguments) set to limit; the one before into *was. */
static void stack_limit(struct rlimit *was, rlim_t limit)
{
    struct rlimit now;

    assert_int_equal(getrlimit(RLIMIT_STACK, was), 0);
    now = *was;
    now.rlim_cur = limit;
    assert_int_equal(setrlimit(RLIMIT_STACK, &now), 0);
}

/* 300 files of 1000-byte names: their paths, absolute and twice over,
 * were one git hash-object's command line, past what exec takes (a
 * stack limit of 1 MiB here: 256 KiB of arguments; 2 MiB at the usual 8
 * MiB, which longer names pass), and the review failed, "Argument list
 * too long". git reads them on its stdin. */
static void many_long_paths_are_no_command_line(void **state)
{
    char *repo = tnd_fs_join(scratch, "repo"),
         *base = tnd_fs_join(scratch, "base"),
         *index = tnd_fs_join(scratch, "base.index"),
         *dir = tnd_fs_join(scratch, "find"),
         *diffpath = tnd_fs_join(scratch, "change.diff"), *diff = NULL;
    tnd_converted *conv = NULL;
    struct rlimit was;
    size_t len = 0, n = 0;
    int rc;

    (void)state;
    assert_int_equal(tnd_fs_read(&diff, &len, diffpath, 64 << 20), 0);
    assert_int_equal(tnd_fs_mkdirs(dir, 0700), 0);
    stack_limit(&was, 1 << 20);
    rc = tnd_converted_find(&conv, &n, repo, base, index, dir, diff);
    assert_int_equal(setrlimit(RLIMIT_STACK, &was), 0);
    if (rc < 0)
        fail_msg("%s", tnd_error_last());
    assert_int_equal(n, NFILES);
    for (size_t i = 0; i < n; i++) {
        assert_true(strlen(conv[i].path) > 1000);
        assert_string_equal(conv[i].text, "a\r\nB\r\n");
    }
    tnd_converted_free(conv, n);
    free(diff);
    free(diffpath);
    free(dir);
    free(index);
    free(base);
    free(repo);
}

/* The same files as a patch's edits against the work tree: the check
 * that a hunk holds in a file git converts asked git for the ids of
 * them all on one command line, which failed, and was taken for no git
 * work tree: the patch went on unchecked. */
static void a_patchs_many_long_paths_are_checked(void **state)
{
    char *repo = tnd_fs_join(scratch, "repo"), *list, *at;
    tnd_edit *edits = tnd_xcalloc(NFILES, sizeof(*edits));
    struct rlimit was;
    size_t n = 0, got;
    char *cmd = tnd_xasprintf("cd %s && git ls-files -- '*/f*'", repo);
    FILE *p = popen(cmd, "r");
    int rc;

    (void)state;
    assert_non_null(p);
    list = tnd_xcalloc(1 << 20, 1);
    got = fread(list, 1, (1 << 20) - 1, p);
    list[got] = '\0';
    assert_int_equal(pclose(p), 0);
    free(cmd);
    for (at = list; *at && n < NFILES;) {
        char *nl = strchr(at, '\n');

        assert_non_null(nl);
        *nl = '\0';
        edits[n].kind = TND_EDIT_REPLACE;
        edits[n].path = tnd_xstrdup(at);
        edits[n].search = tnd_xstrdup("a\nb\n"); /* the work tree has CRLF */
        edits[n].replace = tnd_xstrdup("a\nB\n");
        edits[n++].line = 1;
        at = nl + 1;
    }
    assert_int_equal(n, NFILES);
    stack_limit(&was, 1 << 20);
    rc = tnd_converted_check_patch(repo, edits, n, "--diff p");
    assert_int_equal(setrlimit(RLIMIT_STACK, &was), 0);
    assert_int_equal(rc, TND_ECONFIG);
    assert_non_null(
        strstr(tnd_error_last(), "is converted by git on checkout"));
    for (size_t i = 0; i < n; i++)
        tnd_edit_clear(&edits[i]);
    free(edits);
    free(list);
    free(repo);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(many_long_paths_are_no_command_line),
        cmocka_unit_test(a_patchs_many_long_paths_are_checked),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
