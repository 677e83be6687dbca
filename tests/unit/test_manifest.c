/* Unit tests for skills/manifest: which recorded files a skill changed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/fs.h"
#include "common/rmtree.h"
#include "common/str.h"
#include "skills/manifest.h"

static char tmpdir[] = "/tmp/tnd-test-manifest-XXXXXX";

static void put(const char *rel, const char *text)
{
    char path[PATH_MAX];
    char *dir;

    snprintf(path, sizeof(path), "%s/%s", tmpdir, rel);
    dir = tnd_fs_dirname(path);
    assert_int_equal(tnd_fs_mkdirs(dir, 0755), 0);
    free(dir);
    assert_int_equal(tnd_fs_write(path, text, strlen(text)), 0);
}

/* Set rel's mtime to a fixed past time, so a rewrite is always seen as
 * newer (file systems with coarse timestamps would not tell). */
static void age(const char *rel)
{
    char path[PATH_MAX];
    struct timespec times[2] = {{1000000000, 0}, {1000000000, 0}};

    snprintf(path, sizeof(path), "%s/%s", tmpdir, rel);
    assert_int_equal(utimensat(AT_FDCWD, path, times, AT_SYMLINK_NOFOLLOW), 0);
}

/* The changes since the last look, comma-separated. Caller frees. */
static char *changes(tnd_manifest *m)
{
    char **list;
    size_t n = tnd_manifest_changes(&list, m);
    tnd_buf b;

    tnd_buf_init(&b, TND_BUF_NOCAP);
    for (size_t i = 0; i < n; i++)
        tnd_buf_printf(&b, "%s%s", i ? "," : "", list[i]);
    assert_null(list[n]);
    tnd_str_list_free(&list);
    return tnd_buf_detach(&b, NULL);
}

static void expect_changes(tnd_manifest *m, const char *expected)
{
    char *got = changes(m);

    assert_string_equal(got, expected);
    free(got);
}

static void modified_and_deleted_files_are_reported_once(void **state)
{
    static const char *const files[] = {"a.c", "src/b.c", "src/deep/c.h",
                                        "README", NULL};
    tnd_manifest *m;
    char path[PATH_MAX];

    (void)state;
    for (int i = 0; files[i]; i++) {
        put(files[i], "original\n");
        age(files[i]);
    }
    m = tnd_manifest_new(tmpdir, 100);
    assert_non_null(m);
    assert_int_equal(tnd_manifest_size(m), 4);
    expect_changes(m, "");

    put("src/b.c", "reformatted\n"); /* another size */
    put("README", "Original\n");     /* the same size, a new mtime */
    snprintf(path, sizeof(path), "%s/src/deep/c.h", tmpdir);
    unlink(path);
    put("new.o.txt", "a build output\n"); /* new: not ours to report */
    expect_changes(m, "README,src/b.c,src/deep/c.h");
    expect_changes(m, ""); /* reported once */

    /* a second rewrite of a file is a second change */
    age("src/b.c");
    expect_changes(m, "src/b.c");
    /* a deleted file that comes back is a new file */
    put("src/deep/c.h", "back\n");
    expect_changes(m, "");
    tnd_manifest_destroy(&m);
    assert_null(m);
    tnd_manifest_destroy(&m);
    tnd_manifest_destroy(NULL);
}

/* A skill that rewrites a file in place with the same size and puts its
 * mtime back (touch -r, utimensat), or renames a look-alike over it, must
 * not pass unseen: the ctime and the inode say so. */
static void a_rewrite_that_restores_the_mtime_is_a_change(void **state)
{
    char path[PATH_MAX], other[PATH_MAX];
    tnd_manifest *m;

    (void)state;
    put("test_expected.txt", "expected: 42\n");
    age("test_expected.txt");
    put("b.txt", "bbb\n");
    age("b.txt");
    m = tnd_manifest_new(tmpdir, 100);
    assert_non_null(m);

    put("test_expected.txt", "expected: 41\n");
    age("test_expected.txt"); /* size and mtime as recorded */
    expect_changes(m, "test_expected.txt");
    expect_changes(m, "");

    /* another inode, renamed over it, with its size and mtime */
    put("b.new", "BBB\n");
    age("b.new");
    snprintf(path, sizeof(path), "%s/b.txt", tmpdir);
    snprintf(other, sizeof(other), "%s/b.new", tmpdir);
    assert_int_equal(rename(other, path), 0);
    expect_changes(m, "b.txt");

    /* once more in a row: the record moved on, and so does the clock */
    put("test_expected.txt", "expected: 40\n");
    age("test_expected.txt");
    expect_changes(m, "test_expected.txt");
    tnd_manifest_destroy(&m);
}

static void build_outputs_are_not_changes(void **state)
{
    tnd_manifest *m;
    char path[PATH_MAX];

    (void)state;
    put(".gitignore", "# outputs\n/build/\n*.d\n!keep.d\nlogs/\n");
    put("build/obj/a.d", "a.o: a.c\n");
    put("src/x.d", "x.o: x.c\n");
    put("src/keep.d", "kept\n");
    put("logs/run.txt", "log\n");
    put("sub/logs/run.txt", "log\n");
    put(".git/config", "[core]\n");
    put("sub/.git/HEAD", "ref\n");
    snprintf(path, sizeof(path), "%s/prog", tmpdir);
    assert_int_equal(tnd_fs_write(path,
                                  "\x7f"
                                  "ELF\0\0\0",
                                  7),
                     0);
    age("prog");
    age("src/keep.d");
    m = tnd_manifest_new(tmpdir, 100);
    assert_non_null(m);

    put("build/obj/a.d", "a.o: a.c b.h\n");
    put("src/x.d", "x.o: x.c y.h\n");
    put("logs/run.txt", "more log\n");
    put("sub/logs/run.txt", "more log\n");
    put(".git/config", "[core]\nbare = false\n");
    put("sub/.git/HEAD", "other\n");
    assert_int_equal(tnd_fs_write(path,
                                  "\x7f"
                                  "ELF\0\1\1\1",
                                  8),
                     0);
    put("src/keep.d", "kept, changed\n");
    /* ignored, .git, binary: none of them; a re-included file is */
    expect_changes(m, "src/keep.d");
    tnd_manifest_destroy(&m);
}

/* An empty tree records nothing; a file a skill makes there is a build
 * output, and looking it up searched no array (undefined behaviour, which
 * the sanitizers' run caught through test_reviewer). */
static void an_empty_tree_has_no_changes(void **state)
{
    tnd_manifest *m;

    (void)state;
    m = tnd_manifest_new(tmpdir, 100);
    assert_non_null(m);
    put("made", "by a skill\n");
    expect_changes(m, "");
    tnd_manifest_destroy(&m);
}

static void symlinks_are_not_followed(void **state)
{
    char link[PATH_MAX];
    tnd_manifest *m;

    (void)state;
    snprintf(link, sizeof(link), "%s/outside", tmpdir);
    assert_int_equal(symlink("/etc", link), 0);
    put("in.c", "x\n");
    m = tnd_manifest_new(tmpdir, 100);
    assert_non_null(m);
    assert_int_equal(tnd_manifest_size(m), 1);
    tnd_manifest_destroy(&m);
    unlink(link);
}

static void limits_and_errors(void **state)
{
    char path[PATH_MAX];

    (void)state;
    for (int i = 0; i < 5; i++) {
        snprintf(path, sizeof(path), "f%d", i);
        put(path, "x");
    }
    assert_null(tnd_manifest_new(tmpdir, 4));
    assert_non_null(strstr(tnd_error_last(), "holds more than 4 files"));
    assert_null(tnd_manifest_new("/no/such/dir", 4));
    assert_non_null(strstr(tnd_error_last(), "/no/such/dir"));
}

/* Each test starts from an empty directory. */
static int clean(void **state)
{
    (void)state;
    if (tnd_fs_rmtree(tmpdir) < 0)
        return -1;
    return tnd_fs_mkdirs(tmpdir, 0700);
}

static int setup(void **state)
{
    (void)state;
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    return tnd_fs_rmtree(tmpdir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(modified_and_deleted_files_are_reported_once,
                               clean),
        cmocka_unit_test_setup(a_rewrite_that_restores_the_mtime_is_a_change,
                               clean),
        cmocka_unit_test_setup(build_outputs_are_not_changes, clean),
        cmocka_unit_test_setup(an_empty_tree_has_no_changes, clean),
        cmocka_unit_test_setup(symlinks_are_not_followed, clean),
        cmocka_unit_test_setup(limits_and_errors, clean),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
