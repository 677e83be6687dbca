/* Unit tests for orchestrator/snapshot: the clean base of a task. Real
 * git repositories are made in a temporary directory; each test takes a
 * snapshot and checks what is in it, what is not, and what it says. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/error.h"
#include "common/fs.h"
#include "orchestrator/snapshot.h"

static char scratch[] = "/tmp/tnd-test-snap-XXXXXX";

#define MAX_BYTES (1 << 20)

static void put(const char *dir, const char *rel, const char *text)
{
    char *full = tnd_fs_join(dir, rel);
    char *parent = tnd_fs_dirname(full);

    assert_int_equal(tnd_fs_mkdirs(parent, 0755), 0);
    assert_int_equal(tnd_fs_write(full, text, strlen(text)), 0);
    free(parent);
    free(full);
}

static bool exists(const char *dir, const char *rel)
{
    char *full = tnd_fs_join(dir, rel);
    bool yes = tnd_fs_exists(full);

    free(full);
    return yes;
}

static void assert_file(const char *dir, const char *rel, const char *expect)
{
    char *full = tnd_fs_join(dir, rel), *text = NULL;

    if (tnd_fs_read(&text, NULL, full, MAX_BYTES) < 0)
        fail_msg("%s should exist: %s", rel, tnd_error_last());
    assert_string_equal(text, expect);
    free(text);
    free(full);
}

static void sh(const char *fmt, ...) TND_PRINTF(1, 2);

static void sh(const char *fmt, ...)
{
    char cmd[4096];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(cmd, sizeof(cmd), fmt, ap);
    va_end(ap);
    if (system(cmd) != 0)
        fail_msg("command failed: %s", cmd);
}

/* A git repository with a commit: a source file, a header, a test
 * script, a symlink, a .gitignore. */
static char *git_repo(const char *name)
{
    char *dir = tnd_fs_join(scratch, name);

    put(dir, "src/lib.c", "int lib(void) { return 1; }\n");
    put(dir, "src/lib.h", "int lib(void);\n");
    put(dir, "run-tests", "#!/bin/sh\nexit 0\n");
    put(dir, ".gitignore", "*.o\nbuild/\n");
    sh("cd '%s' && chmod 755 run-tests && ln -s src/lib.h lib.h && "
       "git init -q && git add -A && "
       "git -c user.name=t -c user.email=t@example.invalid commit -q -m base",
       dir);
    return dir;
}

static tnd_snapshot *take(const char *repo, const char *name,
                          bool include_untracked)
{
    char *dir = tnd_fs_join(scratch, name);
    tnd_snapshot_options o = {.include_untracked = include_untracked,
                              .max_bytes = MAX_BYTES};
    tnd_snapshot *s = tnd_snapshot_new(repo, dir, &o);

    if (!s)
        fail_msg("tnd_snapshot_new: %s", tnd_error_last());
    free(dir);
    return s;
}

static void tracked_files_as_the_working_tree_has_them(void **state)
{
    char *repo = git_repo("r1");
    tnd_snapshot *s;
    const tnd_snapshot_stats *st;
    const char *root;
    char *text, *full, link[64];
    struct stat sb;
    ssize_t n;

    (void)state;
    /* the user's state: an uncommitted change, a deleted file, build
     * outputs (ignored), a new file (untracked), tandem's own files */
    put(repo, "src/lib.c", "int lib(void) { return 2; }\n");
    sh("rm '%s/src/lib.h'", repo);
    put(repo, "src/lib.o",
        "\x7f"
        "ELF");
    put(repo, "build/test_lib", "binary");
    put(repo, "notes.txt", "mine\n");
    put(repo, ".tandem/sessions/x/journal.jsonl", "{}\n");

    s = take(repo, "s1", false);
    root = tnd_snapshot_path(s);
    st = tnd_snapshot_about(s);
    assert_file(root, "src/lib.c", "int lib(void) { return 2; }\n");
    assert_false(exists(root, "src/lib.h"));
    assert_false(exists(root, "src/lib.o"));
    assert_false(exists(root, "build"));
    assert_false(exists(root, "notes.txt"));
    assert_false(exists(root, ".tandem"));
    assert_false(exists(root, ".git"));
    assert_file(root, ".gitignore", "*.o\nbuild/\n");
    /* modes and symlinks as they are */
    full = tnd_fs_join(root, "run-tests");
    assert_int_equal(lstat(full, &sb), 0);
    assert_int_equal(sb.st_mode & 0777, 0755);
    free(full);
    full = tnd_fs_join(root, "lib.h");
    n = readlink(full, link, sizeof(link) - 1);
    free(full);
    assert_true(n > 0);
    link[n] = '\0';
    assert_string_equal(link, "src/lib.h");

    assert_true(st->git);
    assert_int_equal(st->files, 3); /* lib.c, run-tests, .gitignore */
    assert_int_equal(st->untracked, 1);
    assert_false(st->untracked_included);
    assert_int_equal(st->skipped, 0);
    text = tnd_snapshot_describe(s);
    assert_non_null(strstr(text, "3 tracked files"));
    assert_non_null(strstr(text, "1 untracked path left out "
                                 "(workspace.include_untracked: true brings "
                                 "them in)"));
    free(text);
    tnd_snapshot_destroy(&s, 1);
    assert_null(s);
    tnd_snapshot_destroy(&s, 1); /* NULL: fine */

    /* include_untracked: the new file comes in, ignored outputs never */
    s = take(repo, "s1b", true);
    root = tnd_snapshot_path(s);
    assert_file(root, "notes.txt", "mine\n");
    assert_false(exists(root, "src/lib.o"));
    assert_false(exists(root, "build"));
    assert_true(tnd_snapshot_about(s)->untracked_included);
    text = tnd_snapshot_describe(s);
    assert_non_null(strstr(text, "1 untracked (workspace.include_untracked)"));
    free(text);
    tnd_snapshot_destroy(&s, 1);
    free(repo);
}

/* A tracked path whose directory became a symlink leading outside is not
 * followed: nothing outside the repository is read. */
static void a_symlinked_directory_is_not_followed(void **state)
{
    char *repo = git_repo("r2"), *outside = tnd_fs_join(scratch, "outside");
    tnd_snapshot *s;

    (void)state;
    put(outside, "lib.c", "SECRET\n");
    sh("cd '%s' && rm -r src && ln -s '%s' src", repo, outside);
    s = take(repo, "s2", false);
    assert_false(exists(tnd_snapshot_path(s), "src"));
    assert_int_equal(tnd_snapshot_about(s)->skipped, 2);
    assert_file(outside, "lib.c", "SECRET\n");
    tnd_snapshot_destroy(&s, 1);
    free(outside);
    free(repo);
}

static void a_plain_directory_is_taken_whole(void **state)
{
    char *dir = tnd_fs_join(scratch, "plain");
    tnd_snapshot *s;
    char *text;

    (void)state;
    put(dir, "a.c", "a\n");
    put(dir, "out/a.o", "o\n");
    put(dir, ".git/HEAD", "ref: nowhere\n"); /* not a repository */
    put(dir, ".tandem/lessons.json", "{}\n");
    s = take(dir, "s3", false);
    assert_file(tnd_snapshot_path(s), "a.c", "a\n");
    assert_file(tnd_snapshot_path(s), "out/a.o", "o\n");
    assert_false(exists(tnd_snapshot_path(s), ".git"));
    assert_false(exists(tnd_snapshot_path(s), ".tandem"));
    assert_false(tnd_snapshot_about(s)->git);
    assert_int_equal(tnd_snapshot_about(s)->files, 2);
    text = tnd_snapshot_describe(s);
    assert_non_null(strstr(text, "2 files"));
    assert_non_null(strstr(text, "not in a git work tree"));
    free(text);
    tnd_snapshot_destroy(&s, 1);
    free(dir);
}

/* A directory inside a work tree that git does not track (a project in a
 * home directory kept in git) is not taken as empty. */
static void an_untracked_directory_in_a_work_tree_is_taken_whole(void **state)
{
    char *repo = git_repo("r4"), *sub = tnd_fs_join(repo, "project");
    tnd_snapshot *s;

    (void)state;
    put(sub, "main.c", "int main(void) { return 0; }\n");
    s = take(sub, "s4", false);
    assert_file(tnd_snapshot_path(s), "main.c",
                "int main(void) { return 0; }\n");
    assert_false(tnd_snapshot_about(s)->git);
    assert_non_null(
        strstr(tnd_snapshot_about(s)->why_whole, "git tracks none"));
    tnd_snapshot_destroy(&s, 1);

    /* a tracked subdirectory is taken as git has it */
    sh("cd '%s' && git add project && "
       "git -c user.name=t -c user.email=t@example.invalid commit -q -m p",
       repo);
    put(sub, "scratch.txt", "x\n");
    s = take(sub, "s4b", false);
    assert_true(tnd_snapshot_about(s)->git);
    assert_int_equal(tnd_snapshot_about(s)->files, 1);
    assert_false(exists(tnd_snapshot_path(s), "scratch.txt"));
    assert_false(exists(tnd_snapshot_path(s), "src")); /* the parent's */
    tnd_snapshot_destroy(&s, 1);
    free(sub);
    free(repo);
}

static void the_whole_option_ignores_git(void **state)
{
    char *repo = git_repo("r5"), *dir = tnd_fs_join(scratch, "s5");
    tnd_snapshot_options o = {.whole = true, .max_bytes = MAX_BYTES};
    tnd_snapshot *s;

    (void)state;
    put(repo, "untracked.txt", "u\n");
    s = tnd_snapshot_new(repo, dir, &o);
    assert_non_null(s);
    assert_file(tnd_snapshot_path(s), "untracked.txt", "u\n");
    assert_false(tnd_snapshot_about(s)->git);
    tnd_snapshot_destroy(&s, 1);
    free(dir);
    free(repo);
}

static void limits_and_refusals(void **state)
{
    char *repo = git_repo("r6"), *dir = tnd_fs_join(scratch, "s6");
    tnd_snapshot_options o = {.max_bytes = 10};
    tnd_snapshot *s;

    (void)state;
    assert_null(tnd_snapshot_new(repo, dir, &o));
    assert_non_null(strstr(tnd_error_last(), "orchestrator.workspace_max_mb"));
    /* told from the sizes before a file is copied, with the total */
    assert_non_null(strstr(tnd_error_last(), " MiB, more than the workspace"));
    assert_false(tnd_fs_exists(dir)); /* no half copy left behind */

    o.max_bytes = MAX_BYTES;
    put(dir, "keep.txt", "mine\n");
    assert_null(tnd_snapshot_new(repo, dir, &o));
    assert_non_null(strstr(tnd_error_last(), "already exists"));
    assert_file(dir, "keep.txt", "mine\n");
    assert_int_equal(tnd_fs_rmtree(dir), 0);

    assert_null(tnd_snapshot_new("/nonexistent/tnd-repo", dir, &o));
    assert_non_null(strstr(tnd_error_last(), "/nonexistent/tnd-repo"));
    assert_false(tnd_fs_exists(dir));

    s = tnd_snapshot_new(repo, dir, &o);
    assert_non_null(s);
    tnd_snapshot_destroy(&s, 0);
    assert_true(tnd_fs_is_dir(dir)); /* kept when asked */
    assert_int_equal(tnd_fs_rmtree(dir), 0);
    free(dir);
    free(repo);
}

static int setup(void **state)
{
    (void)state;
    umask(022);
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
        cmocka_unit_test(tracked_files_as_the_working_tree_has_them),
        cmocka_unit_test(a_symlinked_directory_is_not_followed),
        cmocka_unit_test(a_plain_directory_is_taken_whole),
        cmocka_unit_test(an_untracked_directory_in_a_work_tree_is_taken_whole),
        cmocka_unit_test(the_whole_option_ignores_git),
        cmocka_unit_test(limits_and_refusals),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
