/* Unit tests for skills/diskuse: what a skill wrote in its workspace,
 * against its limits.disk_mb. */
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
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/fs.h"
#include "common/rmtree.h"
#include "skills/diskuse.h"

#define TEMPLATE "/tmp/tnd-test-diskuse-XXXXXX"
static char tmpdir[sizeof(TEMPLATE)];

/* rel, made (with its directories) with size bytes written for real. */
static void put(const char *rel, size_t size)
{
    char path[PATH_MAX], *dir, *data = calloc(1, size ? size : 1);

    snprintf(path, sizeof(path), "%s/%s", tmpdir, rel);
    dir = tnd_fs_dirname(path);
    assert_int_equal(tnd_fs_mkdirs(dir, 0755), 0);
    free(dir);
    memset(data, 'x', size);
    assert_int_equal(tnd_fs_write(path, data, size), 0);
    free(data);
}

static int setup(void **state)
{
    (void)state;
    memcpy(tmpdir, TEMPLATE, sizeof(TEMPLATE));
    assert_non_null(mkdtemp(tmpdir));
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    tnd_fs_rmtree(tmpdir);
    return 0;
}

/* The clock the module stamps its start with, a second back or ahead. */
static struct timespec now_plus(long s)
{
    struct timespec t;

    clock_gettime(CLOCK_REALTIME_COARSE, &t);
    t.tv_sec += s;
    return t;
}

/* Files written since count at their allocated size; older ones, and
 * what a symlink points at, do not; the count stops past its bound. */
static void counts_what_changed_since(void **state)
{
    struct timespec before = now_plus(-2), after;
    char target[PATH_MAX], link[PATH_MAX];
    unsigned long long n;

    (void)state;
    put("old/a", 1 << 20);
    after = now_plus(2);
    put("new/b", 1 << 20);
    put("new/deep/c", 1 << 20);
    snprintf(target, sizeof(target), "%s/old/a", tmpdir);
    snprintf(link, sizeof(link), "%s/new/to-a", tmpdir);
    assert_int_equal(symlink(target, link), 0);
    n = tnd_diskuse_since(tmpdir, &before, 100ULL << 20);
    assert_true(n >= 3ULL << 20 && n < 4ULL << 20);
    assert_int_equal(tnd_diskuse_since(tmpdir, &after, 100ULL << 20), 0);
    /* stopped once past the bound */
    n = tnd_diskuse_since(tmpdir, &before, 1);
    assert_true(n > 1 && n < 3ULL << 20);
}

/* A tree deeper than any build makes counts as over any bound. */
static void a_deep_tree_is_over(void **state)
{
    struct timespec before = now_plus(-2);
    char rel[TND_DISKUSE_DEPTH * 2 + 8] = "";

    (void)state;
    for (int i = 0; i <= TND_DISKUSE_DEPTH; i++)
        strcat(rel, "d/");
    strcat(rel, "f");
    put(rel, 1);
    assert_int_equal(tnd_diskuse_since(tmpdir, &before, 1ULL << 30),
                     (1ULL << 30) + 1);
}

/* A directory the skill closed to its owner (chmod 0) hides what it
 * holds from the walk: it counts as over, not as nothing. Run as a user
 * the mode binds (root reads any directory). */
static void a_closed_directory_is_over(void **state)
{
    struct timespec before = now_plus(-2);
    char dir[PATH_MAX];
    pid_t pid;
    int status;

    (void)state;
    snprintf(dir, sizeof(dir), "%s/closed", tmpdir);
    if (geteuid() == 0)
        assert_int_equal(chown(tmpdir, 65534, 65534), 0);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        static char big[1 << 20];
        int fd;
        if (geteuid() == 0 && (setgid(65534) < 0 || setuid(65534) < 0))
            _exit(2);
        if (mkdir(dir, 0700) < 0)
            _exit(3);
        snprintf(dir + strlen(dir), 8, "/big");
        if ((fd = open(dir, O_WRONLY | O_CREAT, 0600)) < 0 ||
            write(fd, big, sizeof(big)) != (ssize_t)sizeof(big))
            _exit(4);
        close(fd);
        *strrchr(dir, '/') = '\0';
        if (chmod(dir, 0) < 0)
            _exit(5);
        _exit(tnd_diskuse_since(tmpdir, &before, 1 << 20) == (1 << 20) + 1 ? 0
                                                                           : 1);
    }
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
    chmod(dir, 0700);
}

/* The watch: under its limit, nothing; past it, over (and stays so);
 * no limit, never. */
static void the_watch_says_when_over(void **state)
{
    tnd_diskuse d;

    (void)state;
    tnd_diskuse_start(&d, tmpdir, 4ULL << 20);
    put("a", 1 << 20);
    assert_false(tnd_diskuse_over(&d));
    for (int i = 0; i < 6; i++) {
        char rel[16];
        snprintf(rel, sizeof(rel), "many/%d", i);
        put(rel, 1 << 20);
    }
    assert_true(tnd_diskuse_over(&d));
    assert_true(tnd_diskuse_over(&d));
    tnd_diskuse_start(&d, tmpdir, 0);
    put("b", 1 << 20);
    assert_false(tnd_diskuse_over(&d));
}

/* Empty files take no block, only an inode each: many of them are
 * over too, each counted as TND_DISKUSE_ENTRY, before the filesystem
 * runs out of inodes. */
static void many_empty_files_are_over(void **state)
{
    tnd_diskuse d;

    (void)state;
    tnd_diskuse_start(&d, tmpdir, 256 * TND_DISKUSE_ENTRY);
    for (int i = 0; i < 100; i++) {
        char rel[16];
        snprintf(rel, sizeof(rel), "e/%d", i);
        put(rel, 0);
    }
    assert_false(tnd_diskuse_over(&d));
    for (int i = 100; i < 400; i++) {
        char rel[16];
        snprintf(rel, sizeof(rel), "e/%d", i);
        put(rel, 0);
    }
    assert_true(tnd_diskuse_over(&d));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(counts_what_changed_since, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(a_deep_tree_is_over, setup, teardown),
        cmocka_unit_test_setup_teardown(a_closed_directory_is_over, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(the_watch_says_when_over, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(many_empty_files_are_over, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
