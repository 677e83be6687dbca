/* Unit tests for common/mirror: a copy that is made equal to its source
 * again, touching only what changed. Each test does to the copy what a
 * build or a hostile skill could, restores, and compares the two trees
 * entry by entry: type, mode, size, modification time, contents, link
 * targets. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/fs.h"
#include "common/mirror.h"
#include "common/rmtree.h"
#include "common/trash.h"
#include "common/xalloc.h"
#include "tests/unit/deep_chain.h"

static char top[] = "/tmp/tnd-test-mirror-XXXXXX";
static char *src, *dst, *outside;

static void put(const char *root, const char *rel, const char *text)
{
    char *path = tnd_fs_join(root, rel);

    assert_int_equal(tnd_fs_write(path, text, strlen(text)), 0);
    free(path);
}

static char *at(const char *root, const char *rel)
{
    return tnd_fs_join(root, rel);
}

/* One line per entry under dir, sorted: path, type, mode, size, mtime,
 * then the contents or the link target. */
static void describe(tnd_buf *out, const char *root, const char *rel)
{
    char *dir = rel ? tnd_fs_join(root, rel) : tnd_xstrdup(root);
    struct dirent **names;
    int n = scandir(dir, &names, NULL, alphasort);

    assert_true(n >= 0);
    for (int i = 0; i < n; i++) {
        const char *name = names[i]->d_name;
        char *r = rel ? tnd_fs_join(rel, name) : tnd_xstrdup(name);
        char *full = tnd_fs_join(root, r);
        struct stat st;
        if (strcmp(name, ".") && strcmp(name, "..")) {
            assert_int_equal(lstat(full, &st), 0);
            tnd_buf_printf(out, "%s %o", r, (unsigned)st.st_mode);
            if (S_ISREG(st.st_mode)) {
                char *text = NULL;
                assert_int_equal(tnd_fs_read(&text, NULL, full, 1 << 20), 0);
                tnd_buf_printf(
                    out, " %lld %lld.%09ld [%s]", (long long)st.st_size,
                    (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec, text);
                free(text);
            } else if (S_ISLNK(st.st_mode)) {
                char target[512];
                ssize_t k = readlink(full, target, sizeof(target) - 1);
                assert_true(k >= 0);
                target[k] = '\0';
                tnd_buf_printf(out, " -> %s", target);
            }
            tnd_buf_puts(out, "\n");
            if (S_ISDIR(st.st_mode))
                describe(out, root, r);
        }
        free(full);
        free(r);
        free(names[i]);
    }
    free(names);
    free(dir);
}

static void assert_same_trees(const char *a, const char *b)
{
    tnd_buf x, y;

    tnd_buf_init(&x, TND_BUF_NOCAP);
    tnd_buf_init(&y, TND_BUF_NOCAP);
    describe(&x, a, NULL);
    describe(&y, b, NULL);
    assert_string_equal(tnd_buf_str(&x), tnd_buf_str(&y));
    tnd_buf_free(&x);
    tnd_buf_free(&y);
}

static ino_t inode(const char *root, const char *rel)
{
    char *path = at(root, rel);
    struct stat st;

    assert_int_equal(lstat(path, &st), 0);
    free(path);
    return st.st_ino;
}

static int setup(void **state)
{
    (void)state;
    if (!mkdtemp(top))
        return -1;
    src = at(top, "src");
    dst = at(top, "dst");
    outside = at(top, "outside");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    free(src);
    free(dst);
    free(outside);
    return tnd_fs_rmtree(top);
}

/* A fresh source for each test: files, a script, nested and empty
 * directories, a symlink. */
static int fresh(void **state)
{
    char *p;

    (void)state;
    tnd_fs_rmtree(src);
    tnd_fs_rmtree(dst);
    tnd_fs_rmtree(outside);
    p = at(top, "trash");
    tnd_fs_rmtree(p);
    free(p);
    p = at(src, "sub/deep");
    tnd_fs_mkdirs(p, 0755);
    free(p);
    p = at(src, "empty");
    tnd_fs_mkdirs(p, 0755);
    free(p);
    tnd_fs_mkdirs(outside, 0755);
    put(src, "a.c", "int a;\n");
    put(src, "b.c", "int b;\n");
    put(src, "run.sh", "#!/bin/sh\necho hi\n");
    p = at(src, "run.sh");
    chmod(p, 0755);
    free(p);
    put(src, "sub/s.c", "int s;\n");
    put(src, "sub/deep/d.h", "#define D 1\n");
    p = at(src, "link");
    if (symlink("a.c", p) < 0)
        return -1;
    free(p);
    put(outside, "s.c", "outside\n");
    return 0;
}

static void a_new_mirror_is_a_copy(void **state)
{
    tnd_mirror *m = tnd_mirror_new(src, dst);

    (void)state;
    assert_non_null(m);
    assert_same_trees(src, dst);
    /* a copy, not a hard link: writing it leaves the source as it was */
    assert_true(inode(src, "a.c") != inode(dst, "a.c"));
    assert_null(tnd_mirror_new(src, dst)); /* dst exists */
    assert_non_null(strstr(tnd_error_last(), "already exists"));
    tnd_mirror_destroy(&m, 1);
    assert_false(tnd_fs_exists(dst));
    tnd_mirror_destroy(&m, 1); /* NULL-safe */
}

static void an_untouched_copy_is_kept_as_it_is(void **state)
{
    tnd_mirror *m = tnd_mirror_new(src, dst);
    tnd_mirror_stats st;
    ino_t before = inode(dst, "sub/deep/d.h");

    (void)state;
    assert_int_equal(tnd_mirror_restore(m, &st), 0);
    assert_int_equal(st.full, 0);
    assert_int_equal(st.copied, 0);
    assert_int_equal(st.removed, 0);
    assert_int_equal(st.kept, 9); /* every entry */
    assert_int_equal(inode(dst, "sub/deep/d.h"), before);
    assert_same_trees(src, dst);
    tnd_mirror_destroy(&m, 1);
}

/* What a build does: outputs next to the sources, in new directories,
 * a FIFO and a symlink; an edit of a tracked file that keeps its size and
 * puts its modification time back; a chmod; deletions. */
static void build_outputs_and_edits_are_undone(void **state)
{
    tnd_mirror *m = tnd_mirror_new(src, dst);
    tnd_mirror_stats st;
    struct timespec keep[2];
    struct stat old;
    char *p;
    ino_t untouched = inode(dst, "sub/deep/d.h");

    (void)state;
    put(dst, "a.o",
        "\x7f"
        "ELF");
    p = at(dst, "build/obj");
    tnd_fs_mkdirs(p, 0755);
    free(p);
    put(dst, "build/obj/x.o", "obj");
    p = at(dst, "fifo");
    assert_int_equal(mkfifo(p, 0600), 0);
    free(p);
    p = at(dst, "sub/latest");
    assert_int_equal(symlink("/etc/passwd", p), 0);
    free(p);
    /* same size, the old mtime put back: only ctime tells */
    p = at(dst, "b.c");
    assert_int_equal(lstat(p, &old), 0);
    put(dst, "b.c", "int B;\n");
    keep[0] = old.st_atim;
    keep[1] = old.st_mtim;
    assert_int_equal(utimensat(AT_FDCWD, p, keep, 0), 0);
    free(p);
    p = at(dst, "run.sh");
    chmod(p, 0600);
    free(p);
    p = at(dst, "a.c");
    unlink(p);
    free(p);
    p = at(dst, "empty");
    rmdir(p);
    free(p);

    assert_int_equal(tnd_mirror_restore(m, &st), 0);
    assert_int_equal(st.full, 0);
    assert_true(st.removed >= 6);
    assert_int_equal(st.copied, 4); /* b.c, run.sh, a.c, empty */
    assert_same_trees(src, dst);
    assert_int_equal(inode(dst, "sub/deep/d.h"), untouched);
    tnd_mirror_destroy(&m, 1);
}

/* A directory replaced by a symlink to somewhere else: the restore must
 * neither write there nor delete what is there (issue 9 found the old
 * revert doing both), and the directory comes back. So does a file
 * replaced by a directory. */
static void a_symlinked_directory_leads_nowhere(void **state)
{
    tnd_mirror *m = tnd_mirror_new(src, dst);
    tnd_mirror_stats st;
    char *p = at(dst, "sub"), *q;

    (void)state;
    assert_int_equal(tnd_fs_rmtree(p), 0);
    assert_int_equal(symlink(outside, p), 0);
    free(p);
    p = at(dst, "b.c");
    unlink(p);
    assert_int_equal(mkdir(p, 0755), 0);
    free(p);
    put(dst, "b.c/inner", "x");

    assert_int_equal(tnd_mirror_restore(m, &st), 0);
    assert_same_trees(src, dst);
    p = at(outside, "s.c");
    q = NULL;
    assert_int_equal(tnd_fs_read(&q, NULL, p, 100), 0);
    assert_string_equal(q, "outside\n");
    free(q);
    free(p);
    tnd_mirror_destroy(&m, 1);
}

/* A write in the same clock tick as the restore, with the modification
 * time put back, leaves every time as it was; the restore waits the tick
 * out, so even such a write right after it is seen. (Kernels whose
 * timestamps are fine-grained once read never show the race; this test
 * is the fence for those whose ticks are coarse.) */
static void a_write_right_after_a_restore_is_seen(void **state)
{
    tnd_mirror *m = tnd_mirror_new(src, dst);
    char *p = at(dst, "a.c"), text[16];
    struct stat old;

    (void)state;
    assert_int_equal(lstat(p, &old), 0);
    for (int i = 0; i < 50; i++) {
        struct timespec keep[2] = {old.st_atim, old.st_mtim};
        int fd = open(p, O_WRONLY);
        assert_true(fd >= 0);
        assert_int_equal(pwrite(fd, "int z;\n", 7, 0), 7);
        assert_int_equal(futimens(fd, keep), 0);
        close(fd);
        assert_int_equal(tnd_mirror_restore(m, NULL), 0);
        /* only a quick look here, so the next write comes at once */
        fd = open(p, O_RDONLY);
        assert_int_equal(pread(fd, text, sizeof(text), 0), 7);
        close(fd);
        assert_memory_equal(text, "int a;\n", 7);
    }
    assert_same_trees(src, dst);
    free(p);
    tnd_mirror_destroy(&m, 1);
}

static void a_closed_directory_is_opened_again(void **state)
{
    tnd_mirror *m = tnd_mirror_new(src, dst);
    tnd_mirror_stats st;
    char *p = at(dst, "sub");

    (void)state;
    put(dst, "sub/deep/out.o", "o");
    assert_int_equal(chmod(p, 0), 0);
    assert_int_equal(tnd_mirror_restore(m, &st), 0);
    assert_same_trees(src, dst);
    free(p);
    tnd_mirror_destroy(&m, 1);
}

static void a_missing_copy_is_made_whole_again(void **state)
{
    tnd_mirror *m = tnd_mirror_new(src, dst);
    tnd_mirror_stats st;

    (void)state;
    assert_int_equal(tnd_fs_rmtree(dst), 0);
    assert_int_equal(tnd_mirror_restore(m, &st), 0);
    assert_int_equal(st.full, 1);
    assert_int_equal(st.copied, 9);
    assert_same_trees(src, dst);
    tnd_mirror_destroy(&m, 1);
}

/* A chain of depth directories named d under root/rel. */
static void chain(const char *root, const char *rel, int depth)
{
    char *p = at(root, rel);

    deep_chain(AT_FDCWD, p, depth, NULL);
    free(p);
}

/* Levels of a chain of d's under root/rel. */
static int depth_of(const char *root, const char *rel)
{
    char *p = at(root, rel);
    int fd = open(p, O_RDONLY | O_DIRECTORY), n = 0, next;

    free(p);
    if (fd < 0)
        return 0; /* a file */
    while ((next = openat(fd, "d", O_RDONLY | O_DIRECTORY)) >= 0) {
        close(fd);
        fd = next;
        n++;
    }
    close(fd);
    return n;
}

/* What a restore removes goes into the trash, whole: the restore's cost
 * is a rename, however deep the tree a build made (its removal, 10 to
 * 20 s for 30,000 levels, stalled tandem run's heartbeats). The trash is
 * stopped here, so what it was given stays to be seen. */
static void a_restore_moves_what_it_removes_into_the_trash(void **state)
{
    tnd_mirror *m = tnd_mirror_new(src, dst);
    char *bin = at(top, "trash");
    tnd_trash *trash = tnd_trash_new(bin);
    tnd_mirror_stats st;
    char *p;

    (void)state;
    assert_non_null(trash);
    tnd_trash_stop(trash);
    tnd_mirror_set_trash(m, trash);
    chain(dst, "out", 500);
    put(dst, "sub/s.o", "o");
    put(dst, "a.c", "int changed;\n");
    assert_int_equal(tnd_mirror_restore(m, &st), 0);
    assert_int_equal(st.full, 0);
    assert_int_equal(st.removed, 3);
    assert_same_trees(src, dst);
    /* moved, not walked: the chain is whole in the trash */
    assert_int_equal(
        depth_of(bin, "0") + depth_of(bin, "1") + depth_of(bin, "2"), 500);
    /* a whole new copy moves what is at dst there too */
    assert_int_equal(tnd_fs_rmtree(dst), 0);
    put(top, "dst", "a file where the copy was");
    assert_int_equal(tnd_mirror_restore(m, &st), 0);
    p = at(bin, "3");
    assert_true(tnd_fs_exists(p));
    free(p);
    assert_int_equal(st.full, 1);
    assert_same_trees(src, dst);
    tnd_trash_destroy(&trash);
    assert_false(tnd_fs_exists(bin));
    free(bin);
    tnd_mirror_destroy(&m, 1);
}

/* With the trash's thread at work, it ends empty. */
static void the_trash_removes_what_a_restore_moved(void **state)
{
    tnd_mirror *m = tnd_mirror_new(src, dst);
    char *bin = at(top, "trash");
    tnd_trash *trash = tnd_trash_new(bin);
    struct dirent **names;

    (void)state;
    assert_non_null(trash);
    tnd_mirror_set_trash(m, trash);
    chain(dst, "out", 200); /* past rmtree's 64 levels open at once */
    assert_int_equal(tnd_mirror_restore(m, NULL), 0);
    assert_same_trees(src, dst);
    tnd_trash_drain(trash);
    assert_int_equal(scandir(bin, &names, NULL, NULL), 2); /* . and .. */
    free(names[0]);
    free(names[1]);
    free(names);
    tnd_mirror_destroy(&m, 1);
    tnd_trash_destroy(&trash);
    free(bin);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(a_new_mirror_is_a_copy, fresh),
        cmocka_unit_test_setup(an_untouched_copy_is_kept_as_it_is, fresh),
        cmocka_unit_test_setup(build_outputs_and_edits_are_undone, fresh),
        cmocka_unit_test_setup(a_symlinked_directory_leads_nowhere, fresh),
        cmocka_unit_test_setup(a_write_right_after_a_restore_is_seen, fresh),
        cmocka_unit_test_setup(a_closed_directory_is_opened_again, fresh),
        cmocka_unit_test_setup(a_missing_copy_is_made_whole_again, fresh),
        cmocka_unit_test_setup(a_restore_moves_what_it_removes_into_the_trash,
                               fresh),
        cmocka_unit_test_setup(the_trash_removes_what_a_restore_moved, fresh),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
