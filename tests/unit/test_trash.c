/* Unit tests for common/trash: trees moved aside at once and removed on
 * the trash's own thread, and common/rmtree's removal that stops when
 * told. */
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

#include "common/error.h"
#include "common/fs.h"
#include "common/rmtree.h"
#include "common/trash.h"
#include "tests/unit/deep_chain.h"

static char top[] = "/tmp/tnd-test-trash-XXXXXX";
static char *bin, *work;
static int work_fd = -1;

/* work/NAME: a directory holding a file and a chain of depth d's. */
static void tree(const char *name, int depth)
{
    deep_chain(work_fd, name, depth, &(deep_chain_extras){.files = 1});
}

/* Entries of dir, . and .. left out. */
static int entries(const char *dir)
{
    struct dirent **names;
    int n = scandir(dir, &names, NULL, NULL);

    assert_true(n >= 2);
    for (int i = 0; i < n; i++)
        free(names[i]);
    free(names);
    return n - 2;
}

static int fresh(void **state)
{
    (void)state;
    tnd_fs_rmtree(bin);
    tnd_fs_rmtree(work);
    if (work_fd >= 0)
        close(work_fd);
    if (mkdir(work, 0755) < 0)
        return -1;
    work_fd = open(work, O_RDONLY | O_DIRECTORY);
    return work_fd < 0 ? -1 : 0;
}

static int setup(void **state)
{
    (void)state;
    if (!mkdtemp(top))
        return -1;
    bin = tnd_fs_join(top, "trash");
    work = tnd_fs_join(top, "work");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    if (work_fd >= 0)
        close(work_fd);
    free(bin);
    free(work);
    return tnd_fs_rmtree(top);
}

static void what_is_put_in_is_gone_at_once_and_removed_later(void **state)
{
    tnd_trash *t = tnd_trash_new(bin);

    (void)state;
    assert_non_null(t);
    assert_string_equal(tnd_trash_path(t), bin);
    tree("a", 300);
    tree("b", 3);
    assert_int_equal(tnd_trash_put_at(t, work_fd, "a"), 0);
    assert_int_equal(tnd_trash_put_at(t, work_fd, "b"), 0);
    assert_int_equal(entries(work), 0);
    tnd_trash_drain(t);
    assert_int_equal(entries(bin), 0);
    tnd_trash_destroy(&t);
    assert_false(tnd_fs_exists(bin));
    tnd_trash_destroy(&t); /* NULL-safe */
}

static void a_stopped_trash_keeps_what_it_gets_until_destroyed(void **state)
{
    tnd_trash *t = tnd_trash_new(bin);

    (void)state;
    assert_non_null(t);
    tnd_trash_stop(t);
    tnd_trash_stop(t); /* twice is fine */
    tree("a", 10);
    assert_int_equal(tnd_trash_put_at(t, work_fd, "a"), 0);
    tnd_trash_drain(t); /* returns: nothing will remove it */
    assert_int_equal(entries(bin), 1);
    tnd_trash_destroy(&t);
    assert_false(tnd_fs_exists(bin));
}

static void what_cannot_be_moved_is_an_error(void **state)
{
    tnd_trash *t = tnd_trash_new(bin);

    (void)state;
    assert_non_null(t);
    assert_int_equal(tnd_trash_put_at(t, work_fd, "missing"), -1);
    assert_non_null(strstr(tnd_error_last(), "cannot move missing into"));
    /* and a trash whose directory exists is refused */
    assert_null(tnd_trash_new(bin));
    tnd_trash_destroy(&t);
}

static void a_removal_told_to_stop_leaves_the_rest(void **state)
{
    atomic_int stop;

    (void)state;
    tree("a", 100);
    atomic_init(&stop, 1);
    assert_int_equal(tnd_fs_rmtree_at_until(work_fd, "a", &stop), -1);
    assert_non_null(strstr(tnd_error_last(), "was stopped"));
    assert_int_equal(entries(work), 1);
    atomic_store(&stop, 0);
    assert_int_equal(tnd_fs_rmtree_at_until(work_fd, "a", &stop), 0);
    assert_int_equal(tnd_fs_rmtree_at_until(work_fd, "a", NULL), 0);
    assert_int_equal(entries(work), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(what_is_put_in_is_gone_at_once_and_removed_later,
                               fresh),
        cmocka_unit_test_setup(
            a_stopped_trash_keeps_what_it_gets_until_destroyed, fresh),
        cmocka_unit_test_setup(what_cannot_be_moved_is_an_error, fresh),
        cmocka_unit_test_setup(a_removal_told_to_stop_leaves_the_rest, fresh),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
