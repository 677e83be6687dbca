/* Unit tests for common/beneath: operations on a path beneath a
 * directory refuse symlinks and escapes on the way, with openat2 and
 * with the component walk older kernels get. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/beneath.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/rmtree.h"

static char tmp[] = "/tmp/tnd-test-beneath-XXXXXX";
static char root[512], outside[512];
static int rootfd = -1;

static void refused(int rc, const char *rel)
{
    assert_int_equal(rc, -1);
    assert_non_null(strstr(tnd_error_last(), rel));
    assert_non_null(strstr(tnd_error_last(), "symbolic link"));
}

static int fresh(void **state)
{
    char path[600];

    (void)state;
    snprintf(root, sizeof(root), "%s/root", tmp);
    snprintf(outside, sizeof(outside), "%s/outside", tmp);
    tnd_fs_rmtree(root);
    tnd_fs_rmtree(outside);
    if (tnd_fs_mkdirs(root, 0755) < 0 || tnd_fs_mkdirs(outside, 0755) < 0)
        return -1;
    snprintf(path, sizeof(path), "%s/dir", root);
    mkdir(path, 0755);
    snprintf(path, sizeof(path), "%s/dir/file", root);
    tnd_fs_write(path, "in\n", 3);
    snprintf(path, sizeof(path), "%s/file", outside);
    tnd_fs_write(path, "out\n", 4);
    snprintf(path, sizeof(path), "%s/link", root); /* a dir link */
    if (symlink(outside, path) < 0)
        return -1;
    snprintf(path, sizeof(path), "%s/dir/flink", root); /* a file link */
    if (symlink("file", path) < 0)
        return -1;
    rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
    return rootfd < 0 ? -1 : 0;
}

static int done(void **state)
{
    (void)state;
    close(rootfd);
    tnd_beneath_walk_only(false);
    return 0;
}

static void outside_is_untouched(void)
{
    char path[600], *text;

    snprintf(path, sizeof(path), "%s/file", outside);
    assert_int_equal(tnd_fs_read(&text, NULL, path, 64), 0);
    assert_string_equal(text, "out\n");
    free(text);
    snprintf(path, sizeof(path), "%s/new", outside);
    assert_false(tnd_fs_exists(path));
}

static void opens_and_creates_beneath(void **state)
{
    int fd;
    char buf[8] = {0};

    (void)state;
    fd = tnd_beneath_open(rootfd, "dir/file", O_RDONLY, 0);
    assert_true(fd >= 0);
    assert_int_equal(read(fd, buf, sizeof(buf) - 1), 3);
    assert_string_equal(buf, "in\n");
    close(fd);
    fd = tnd_beneath_open(rootfd, "dir//new", O_WRONLY | O_CREAT, 0600);
    assert_true(fd >= 0);
    close(fd);
}

static void refuses_links_and_escapes(void **state)
{
    (void)state;
    refused(tnd_beneath_open(rootfd, "link/file", O_RDONLY, 0), "link/file");
    refused(tnd_beneath_open(rootfd, "link/new", O_WRONLY | O_CREAT, 0644),
            "link/new");
    refused(tnd_beneath_open(rootfd, "dir/flink", O_RDONLY, 0), "dir/flink");
    refused(tnd_beneath_open(rootfd, "../outside/file", O_RDONLY, 0),
            "../outside/file");
    refused(tnd_beneath_open(rootfd, "dir/../../outside/file", O_RDONLY, 0),
            "dir/../../outside/file");
    refused(tnd_beneath_open(rootfd, "/etc/passwd", O_RDONLY, 0),
            "/etc/passwd");
    refused(tnd_beneath_mkdirs(rootfd, "link/sub", NULL, NULL), "link/sub");
    refused(tnd_beneath_remove(rootfd, "link/file", false, false), "link/file");
    /* a link on the way is ELOOP; a file on the way is no directory,
     * ENOTDIR, both ways (the walk said ELOOP for both, and a change
     * that makes the file F a directory F/ was refused) */
    assert_int_equal(tnd_beneath_open(rootfd, "link/file", O_RDONLY, 0), -1);
    assert_int_equal(errno, ELOOP);
    assert_int_equal(tnd_beneath_open(rootfd, "dir/file/x", O_RDONLY, 0), -1);
    assert_int_equal(errno, ENOTDIR);
    outside_is_untouched();
}

static void created(const char *rel, void *payload)
{
    char *seen = payload;

    strcat(seen, rel);
    strcat(seen, ";");
}

static void mkdirs_reports_what_it_made(void **state)
{
    char seen[256] = "";

    (void)state;
    assert_int_equal(tnd_beneath_mkdirs(rootfd, "dir/a/b", created, seen), 0);
    assert_string_equal(seen, "dir/a;dir/a/b;");
    seen[0] = '\0';
    assert_int_equal(tnd_beneath_mkdirs(rootfd, "dir/a/b", created, seen), 0);
    assert_string_equal(seen, "");
    /* a file in the way is not a directory to go through */
    assert_int_equal(tnd_beneath_mkdirs(rootfd, "dir/file/x", NULL, NULL), -1);
    assert_string_equal(tnd_error_last(),
                        "dir/file/x: dir/file is a file, not a directory");
}

static void removes_files_and_empty_directories(void **state)
{
    (void)state;
    assert_int_equal(tnd_beneath_mkdirs(rootfd, "d1/d2", NULL, NULL), 0);
    assert_int_equal(tnd_beneath_remove(rootfd, "d1", true, false), -1);
    assert_int_equal(errno, ENOTEMPTY);
    assert_int_equal(tnd_beneath_remove(rootfd, "d1/d2", true, false), 0);
    assert_int_equal(tnd_beneath_remove(rootfd, "d1", true, false), 0);
    assert_int_equal(tnd_beneath_remove(rootfd, "dir/file", false, false), 0);
    assert_int_equal(tnd_beneath_remove(rootfd, "dir/file", false, true), 0);
    assert_int_equal(tnd_beneath_remove(rootfd, "dir/file", false, false), -1);
    assert_int_equal(tnd_beneath_remove(rootfd, "nodir/file", false, true), 0);
    /* the link itself may go: it is an entry beneath the root */
    assert_int_equal(tnd_beneath_remove(rootfd, "link", false, false), 0);
    outside_is_untouched();
}

static int walk(void **state)
{
    tnd_beneath_walk_only(true);
    return fresh(state);
}

#define BOTH(t)                                      \
    cmocka_unit_test_setup_teardown(t, fresh, done), \
        cmocka_unit_test_setup_teardown(t, walk, done)

int main(void)
{
    const struct CMUnitTest tests[] = {
        BOTH(opens_and_creates_beneath),
        BOTH(refuses_links_and_escapes),
        BOTH(mkdirs_reports_what_it_made),
        BOTH(removes_files_and_empty_directories),
    };
    int rc;

    if (!mkdtemp(tmp))
        return 1;
    rc = cmocka_run_group_tests(tests, NULL, NULL);
    tnd_fs_rmtree(tmp);
    return rc;
}
