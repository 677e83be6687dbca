/* Unit tests for orchestrator/gitapply: a patch under review against
 * what git apply makes of it. Each test lays out a base and the tree the
 * review made (ws) in a temporary directory and asks whether git apply
 * of the patch to the base makes ws. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/rmtree.h"
#include "common/xalloc.h"
#include "orchestrator/gitapply.h"
#include "tests/unit/scratch_repo.h"

static char scratch[] = "/tmp/tnd-test-gitapply-XXXXXX";

static void put(const char *dir, const char *rel, const char *text)
{
    char *full = tnd_fs_join(dir, rel);
    char *parent = tnd_fs_dirname(full);

    assert_int_equal(tnd_fs_mkdirs(parent, 0755), 0);
    assert_int_equal(tnd_fs_write(full, text, strlen(text)), 0);
    free(parent);
    free(full);
}

/* A fresh base and ws, each holding f = "a\nb\nc\n". */
static void trees(char **base, char **ws)
{
    static int n;
    char name[32];

    snprintf(name, sizeof(name), "base%d", n);
    *base = tnd_fs_join(scratch, name);
    snprintf(name, sizeof(name), "ws%d", n++);
    *ws = tnd_fs_join(scratch, name);
    put(*base, "f", "a\nb\nc\n");
    put(*ws, "f", "a\nb\nc\n");
}

/* tnd_gitapply_same of diff with paths (NULL-terminated) as tandem's. */
static int same(const char *diff, const char *base, const char *ws,
                const char *const *paths, char **why)
{
    return tnd_gitapply_same(diff, strlen(diff), base, ws, paths, scratch, NULL,
                             why);
}

static const char change_f[] =
    "--- a/f\n+++ b/f\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n";

static void the_same_reading_passes(void **state)
{
    const char *paths[] = {"f", NULL};
    char *base, *ws, *why = (char *)1;

    (void)state;
    trees(&base, &ws);
    put(ws, "f", "a\nB\nc\n");
    assert_int_equal(same(change_f, base, ws, paths, &why), 0);
    assert_null(why);
    free(base);
    free(ws);
}

/* The user's git settings are not git apply's here: global attributes
 * (`* text eol=crlf`) and `git -c core.autocrlf=true` passed to a hook
 * made git write other bytes than the patch says, rejecting every
 * patch. */
static void the_users_git_settings_are_left_out(void **state)
{
    const char *paths[] = {"f", NULL};
    char *base, *ws, *why = NULL, *home = tnd_fs_join(scratch, "home");
    char *old_home = getenv("HOME") ? tnd_xstrdup(getenv("HOME")) : NULL;

    (void)state;
    put(home, ".config/git/attributes", "* text eol=crlf\n");
    put(home, ".gitconfig", "[core]\n\tautocrlf = true\n");
    setenv("HOME", home, 1);
    unsetenv("XDG_CONFIG_HOME");
    setenv("GIT_CONFIG_PARAMETERS", "'core.autocrlf'='true'", 1);
    setenv("GIT_CONFIG_COUNT", "1", 1);
    setenv("GIT_CONFIG_KEY_0", "core.eol", 1);
    setenv("GIT_CONFIG_VALUE_0", "crlf", 1);
    trees(&base, &ws);
    put(ws, "f", "a\nB\nc\n");
    assert_int_equal(same(change_f, base, ws, paths, &why), 0);
    assert_null(why);
    unsetenv("GIT_CONFIG_PARAMETERS");
    unsetenv("GIT_CONFIG_COUNT");
    unsetenv("GIT_CONFIG_KEY_0");
    unsetenv("GIT_CONFIG_VALUE_0");
    if (old_home)
        setenv("HOME", old_home, 1);
    else
        unsetenv("HOME");
    free(old_home);
    free(home);
    free(base);
    free(ws);
}

/* `git diff > p` in a CRLF checkout (eol=crlf) gives LF lines, which
 * git apply in that tree applies (it reads the file as git stores it)
 * and the review applied, keeping the CRs: rejected as "git apply cannot
 * apply it" when checked without the repository's line-end attributes. */
static void the_repositorys_line_ends_are_read_as_git_apply_there(void **state)
{
    const char *paths[] = {"f", NULL};
    char *base, *ws, *why = NULL, *repo = tnd_fs_join(scratch, "crlf-repo");
    char *cmd = tnd_xasprintf("git init -q '%s'", repo);

    (void)state;
    trees(&base, &ws);
    put(base, "f", "a\r\nb\r\nc\r\n");
    put(ws, "f", "a\r\nB\r\nc\r\n");
    assert_int_equal(system(cmd), 0);
    put(repo, ".gitattributes", "f text eol=crlf\n");
    assert_int_equal(same(change_f, base, ws, paths, &why), 1);
    free(why);
    why = NULL;
    assert_int_equal(tnd_gitapply_same(change_f, strlen(change_f), base, ws,
                                       paths, scratch, repo, &why),
                     0);
    assert_null(why);
    /* those attributes do not make another tree pass */
    put(ws, "f", "a\r\nB\r\nC\r\n");
    assert_int_equal(tnd_gitapply_same(change_f, strlen(change_f), base, ws,
                                       paths, scratch, repo, &why),
                     1);
    assert_string_equal(why, "git apply cannot apply it to the same files: "
                             "error: patch failed: f:1\nerror: f: patch does "
                             "not apply");
    free(why);
    free(cmd);
    free(repo);
    free(base);
    free(ws);
}

/* Many files with long names: 300 of about 1000 bytes, near the
 * longest an edit takes (1024) */
#define NFILES 300

/* 300 files of 1000-byte names in a CRLF checkout, under a stack limit
 * of 1 MiB (exec takes 256 KiB of arguments): the question of their
 * line-end attributes put every name on git check-attr's command line,
 * git did not start ("Argument list too long"), and the patch, which
 * git apply in that tree applies, was rejected. git reads them on its
 * stdin. */
static void many_long_names_are_read_as_git_apply_there(void **state)
{
    char *base, *ws, *why = NULL, *repo = tnd_fs_join(scratch, "many-repo");
    char *cmd = tnd_xasprintf("git init -q '%s'", repo), *diff, deep[1024];
    const char **paths = tnd_xcalloc(NFILES + 1, sizeof(*paths));
    struct rlimit was;
    tnd_buf b;
    size_t len = 0;
    int rc;

    (void)state;
    trees(&base, &ws);
    memset(deep, 'd', sizeof(deep));
    for (size_t i = 200; i < 1000; i += 200)
        deep[i] = '/';
    deep[1000] = '\0';
    tnd_buf_init(&b, TND_BUF_NOCAP);
    for (size_t i = 0; i < NFILES; i++) {
        char *path = tnd_xasprintf("%s/f%zu", deep, i);

        put(base, path, "a\r\nb\r\nc\r\n");
        put(ws, path, "a\r\nB\r\nc\r\n");
        tnd_buf_printf(&b,
                       "--- a/%s\n+++ b/%s\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n",
                       path, path);
        paths[i] = path;
    }
    diff = tnd_buf_detach(&b, &len);
    assert_int_equal(system(cmd), 0);
    put(repo, ".gitattributes", "* text eol=crlf\n");
    small_stack(&was);
    rc = tnd_gitapply_same(diff, len, base, ws, paths, scratch, repo, &why);
    assert_int_equal(setrlimit(RLIMIT_STACK, &was), 0);
    if (rc != 0)
        fail_msg("rejected: %s", why ? why : tnd_error_last());
    assert_null(why);
    for (size_t i = 0; i < NFILES; i++)
        free((char *)paths[i]);
    free(paths);
    free(diff);
    free(cmd);
    free(repo);
    free(base);
    free(ws);
}

static void other_bytes_are_told_with_the_line(void **state)
{
    const char *paths[] = {"f", NULL};
    char *base, *ws, *why = NULL;

    (void)state;
    trees(&base, &ws);
    put(ws, "f", "a\nb\nC\n"); /* the review changed another line */
    assert_int_equal(same(change_f, base, ws, paths, &why), 1);
    assert_string_equal(why, "f: git apply writes other bytes, from line 2 on");
    free(why);
    free(base);
    free(ws);
}

/* a `diff -ruN` deletion, read as a file emptied */
static void a_file_git_deletes_must_be_gone(void **state)
{
    const char diff[] = "--- old/f\t2026-01-01 00:00:00 +0000\n"
                        "+++ new/f\t1970-01-01 00:00:00.000000000 +0000\n"
                        "@@ -1,3 +0,0 @@\n-a\n-b\n-c\n";
    const char *paths[] = {"f", NULL};
    char *base, *ws, *why = NULL;

    (void)state;
    trees(&base, &ws);
    put(ws, "f", "");
    assert_int_equal(same(diff, base, ws, paths, &why), 1);
    assert_string_equal(why, "f: git apply leaves no file there, the review "
                             "had a file");
    free(why);
    free(base);
    free(ws);
}

/* git's own names count too: a file only git's reading touches (a new
 * file's hunk without ---/+++ lines, which the review left empty) */
static void a_file_only_git_writes_is_compared(void **state)
{
    const char diff[] = "diff --git a/n b/n\nnew file mode 100644\n"
                        "--- /dev/null\n+++ b/n\n@@ -0,0 +1 @@\n+x\n";
    char *base, *ws, *why = NULL;

    (void)state;
    trees(&base, &ws);
    assert_int_equal(same(diff, base, ws, NULL, &why), 1);
    assert_string_equal(why, "n: git apply leaves a file there, the review "
                             "had no file");
    free(why);
    free(base);
    free(ws);
}

/* Every file git names counts, not only the first of its list: the
 * names were read up to the first NUL of `--numstat -z`, so a second
 * file only git writes went unchecked. */
static void every_file_only_git_writes_is_compared(void **state)
{
    const char diff[] = "diff --git a/f b/f\n--- a/f\n+++ b/f\n"
                        "@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n"
                        "diff --git a/n b/n\nnew file mode 100644\n"
                        "--- /dev/null\n+++ b/n\n@@ -0,0 +1 @@\n+x\n";
    const char *paths[] = {"f", NULL};
    char *base, *ws, *why = NULL;

    (void)state;
    trees(&base, &ws);
    put(ws, "f", "a\nB\nc\n");
    assert_int_equal(same(diff, base, ws, paths, &why), 1);
    assert_string_equal(why, "n: git apply leaves a file there, the review "
                             "had no file");
    free(why);
    free(base);
    free(ws);
}

static void modes_are_compared(void **state)
{
    const char diff[] =
        "diff --git a/f b/f\nold mode 100644\nnew mode 100755\n";
    const char *paths[] = {"f", NULL};
    char *base, *ws, *why = NULL;

    (void)state;
    trees(&base, &ws);
    assert_int_equal(same(diff, base, ws, paths, &why), 1);
    assert_string_equal(why, "f: git apply leaves an executable file there, "
                             "the review had a file");
    free(why);
    free(base);
    free(ws);
}

static void a_patch_git_cannot_apply_is_told(void **state)
{
    const char *paths[] = {"f", NULL};
    char *base, *ws, *why = NULL;

    (void)state;
    trees(&base, &ws);
    put(base, "f", "x\ny\nz\n");
    put(ws, "f", "a\nB\nc\n");
    assert_int_equal(same(change_f, base, ws, paths, &why), 1);
    assert_non_null(strstr(why, "git apply cannot apply it to the same files: "
                                "error: patch failed: f:1"));
    free(why);
    free(base);
    free(ws);
}

/* a link in the base and a name beneath it: no copy goes through the
 * link, to outside either tree (the copy followed it) */
static void no_copy_goes_through_a_link(void **state)
{
    const char diff[] = "--- a/lnk/x\n+++ b/lnk/x\n@@ -1 +1 @@\n-a\n+b\n";
    const char *paths[] = {"lnk", "lnk/x", NULL};
    char *base, *ws, *why = NULL, *outside = tnd_fs_join(scratch, "outside");
    char *link, *escaped;

    (void)state;
    trees(&base, &ws);
    put(outside, "x", "a\n");
    link = tnd_fs_join(base, "lnk");
    assert_int_equal(symlink(outside, link), 0);
    assert_int_equal(same(diff, base, ws, paths, &why), 1);
    assert_non_null(why);
    escaped = tnd_fs_join(outside, "x");
    {
        char *text = NULL;
        assert_int_equal(tnd_fs_read(&text, NULL, escaped, 100), 0);
        assert_string_equal(text, "a\n"); /* untouched */
        free(text);
    }
    free(escaped);
    free(link);
    free(why);
    free(outside);
    free(base);
    free(ws);
}

/* a name git would read through a path tandem refuses */
static void a_name_out_of_the_tree_is_refused(void **state)
{
    const char diff[] = "--- a/../x\n+++ b/../x\n@@ -1 +1 @@\n-a\n+b\n";
    char *base, *ws, *why = NULL;

    (void)state;
    trees(&base, &ws);
    assert_int_equal(same(diff, base, ws, NULL, &why), 1);
    assert_non_null(why);
    free(why);
    free(base);
    free(ws);
}

static int setup(void **state)
{
    (void)state;
    return mkdtemp(scratch) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    return tnd_fs_rmtree(scratch);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_same_reading_passes),
        cmocka_unit_test(the_users_git_settings_are_left_out),
        cmocka_unit_test(the_repositorys_line_ends_are_read_as_git_apply_there),
        cmocka_unit_test(many_long_names_are_read_as_git_apply_there),
        cmocka_unit_test(other_bytes_are_told_with_the_line),
        cmocka_unit_test(a_file_git_deletes_must_be_gone),
        cmocka_unit_test(a_file_only_git_writes_is_compared),
        cmocka_unit_test(every_file_only_git_writes_is_compared),
        cmocka_unit_test(modes_are_compared),
        cmocka_unit_test(a_patch_git_cannot_apply_is_told),
        cmocka_unit_test(a_name_out_of_the_tree_is_refused),
        cmocka_unit_test(no_copy_goes_through_a_link),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
