/* Unit tests for agents/agentdir: an agent's runtime directory made
 * locked and removed; the directories of agents that are gone reclaimed
 * at the next start, and nothing else (a live agent's, one with no lock,
 * a symbolic link, another role's, names that are not an agent's). */
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
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agents/agentdir.h"
#include "common/fs.h"
#include "common/rmtree.h"
#include "common/xalloc.h"

static char tmp[256], base[300];

static int setup(void **state)
{
    static char *outer; /* TMPDIR as the test found it */

    (void)state;
    if (!outer)
        outer = tnd_xstrdup(getenv("TMPDIR") && getenv("TMPDIR")[0] == '/'
                                ? getenv("TMPDIR")
                                : "/tmp");
    snprintf(tmp, sizeof(tmp), "%s/tnd-agentdir-XXXXXX", outer);
    assert_non_null(mkdtemp(tmp));
    setenv("TMPDIR", tmp, 1);
    unsetenv("XDG_RUNTIME_DIR");
    snprintf(base, sizeof(base), "%s/tandem-%ld", tmp, (long)getuid());
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    tnd_fs_rmtree(tmp);
    return 0;
}

/* base/name/rel, for the checks */
static char *at(const char *name, const char *rel)
{
    return rel ? tnd_xasprintf("%s/%s/%s", base, name, rel)
               : tnd_xasprintf("%s/%s", base, name);
}

static bool exists(const char *name, const char *rel)
{
    char *p = at(name, rel);
    bool e = tnd_fs_exists(p);

    free(p);
    return e;
}

/* Make base/name/rel (rel NULL: base/name) with mode. */
static void make_dir(const char *name, const char *rel, mode_t mode)
{
    char *p = at(name, rel);

    assert_int_equal(mkdir(p, mode), 0);
    free(p);
}

/* A directory as an agent leaves it: a lock file (held when fd is given:
 * its owner lives), a blob and a workspace with a read-only directory
 * (as Go's module cache leaves). */
static void leave(const char *name, int *fd)
{
    char *p;
    int lfd;

    make_dir(name, NULL, 0700);
    make_dir(name, "blobs", 0700);
    p = at(name, "blobs/0123");
    assert_int_equal(tnd_fs_write(p, "x", 1), 0);
    free(p);
    make_dir(name, "workspace-abcdef", 0700);
    make_dir(name, "workspace-abcdef/ro", 0500);
    p = at(name, "lock");
    lfd = open(p, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    assert_true(lfd >= 0);
    free(p);
    if (fd) {
        assert_int_equal(flock(lfd, LOCK_EX | LOCK_NB), 0);
        *fd = lfd;
    } else {
        close(lfd);
    }
}

static void test_new(void **state)
{
    tnd_agentdir *a = tnd_agentdir_new("reviewer"), *b;
    struct stat st;
    char *dir, *lock;
    int fd;

    (void)state;
    assert_non_null(a);
    dir = tnd_xstrdup(tnd_agentdir_path(a));
    assert_int_equal(stat(dir, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0700);
    assert_non_null(strstr(dir, "/reviewer-"));
    /* the lock is held: another description cannot take it */
    lock = tnd_fs_join(dir, "lock");
    fd = open(lock, O_RDONLY | O_CLOEXEC);
    assert_true(fd >= 0);
    assert_int_equal(flock(fd, LOCK_EX | LOCK_NB), -1);
    assert_int_equal(errno, EWOULDBLOCK);
    close(fd);
    {
        char *made = tnd_fs_join(dir, "lock.new"); /* renamed to lock */
        assert_false(tnd_fs_exists(made));
        free(made);
    }
    /* a second agent of the role, alive at once: each keeps its own */
    b = tnd_agentdir_new("reviewer");
    assert_non_null(b);
    assert_string_not_equal(tnd_agentdir_path(a), tnd_agentdir_path(b));
    assert_true(tnd_fs_exists(dir));
    tnd_agentdir_destroy(&b);
    tnd_agentdir_destroy(&a);
    assert_null(a);
    assert_false(tnd_fs_exists(dir));
    tnd_agentdir_destroy(&a); /* NULL-safe */
    free(lock);
    free(dir);
}

static void test_reclaim(void **state)
{
    tnd_agentdir *a;
    char *outside, *link;
    int live;

    (void)state;
    free(tnd_fs_user_tmp()); /* the base, as an agent makes it */
    leave("reviewer-dead01", NULL);
    leave("reviewer-Dead02", NULL);
    leave("reviewer-live01", &live);
    leave("coder-dead01", NULL);      /* another role's */
    leave("reviewer-dead0001", NULL); /* not mkdtemp's name */
    leave("reviewer-dea.01", NULL);   /* nor this */
    leave("review-dead01", NULL);     /* a run's, not an agent's */
    leave("reviewer-nolk01", NULL);   /* no lock file: not judged */
    {
        char *p = at("reviewer-nolk01", "lock");
        unlink(p);
        free(p);
    }
    /* a link to a dead-looking directory elsewhere: never followed */
    outside = tnd_xasprintf("%s/outside", tmp);
    assert_int_equal(mkdir(outside, 0700), 0);
    {
        char *p = tnd_xasprintf("%s/lock", outside);
        assert_int_equal(tnd_fs_write(p, "", 0), 0);
        free(p);
    }
    link = at("reviewer-link01", NULL);
    assert_int_equal(symlink(outside, link), 0);

    a = tnd_agentdir_new("reviewer");
    assert_non_null(a);
    assert_false(exists("reviewer-dead01", NULL));
    assert_false(exists("reviewer-Dead02", NULL));
    assert_true(exists("reviewer-live01", "blobs/0123"));
    assert_true(exists("coder-dead01", "lock"));
    assert_true(exists("reviewer-dead0001", "lock"));
    assert_true(exists("reviewer-dea.01", "lock"));
    assert_true(exists("review-dead01", "lock"));
    assert_true(exists("reviewer-nolk01", "blobs/0123"));
    assert_true(tnd_fs_exists(link));
    assert_true(tnd_fs_is_dir(outside));
    {
        char *p = tnd_xasprintf("%s/lock", outside);
        assert_true(tnd_fs_exists(p));
        free(p);
    }
    tnd_agentdir_destroy(&a);

    /* the live one's owner dies: the next start reclaims it */
    close(live);
    a = tnd_agentdir_new("reviewer");
    assert_false(exists("reviewer-live01", NULL));
    assert_true(exists("reviewer-nolk01", NULL));
    tnd_agentdir_destroy(&a);
    free(link);
    free(outside);
}

/* A removal cut short (the owner killed while removing, or a reclaimer
 * killed while reclaiming) keeps its lock file to the end, so the next
 * start finishes it. */
static void test_half_removed(void **state)
{
    tnd_agentdir *a;
    char *p;

    (void)state;
    free(tnd_fs_user_tmp());
    leave("reviewer-half01", NULL);
    p = at("reviewer-half01", "blobs");
    assert_int_equal(tnd_fs_rmtree(p), 0);
    free(p);
    a = tnd_agentdir_new("reviewer");
    assert_false(exists("reviewer-half01", NULL));
    tnd_agentdir_destroy(&a);
}

/* Beyond TND_AGENTDIR_RECLAIM_MAX, the rest waits for the next start. */
static void test_bounded(void **state)
{
    tnd_agentdir *a;
    char name[32];
    int left = 0;

    (void)state;
    free(tnd_fs_user_tmp());
    for (int i = 0; i < TND_AGENTDIR_RECLAIM_MAX + 3; i++) {
        snprintf(name, sizeof(name), "reviewer-many%02d", i);
        leave(name, NULL);
    }
    a = tnd_agentdir_new("reviewer");
    tnd_agentdir_destroy(&a);
    for (int i = 0; i < TND_AGENTDIR_RECLAIM_MAX + 3; i++) {
        snprintf(name, sizeof(name), "reviewer-many%02d", i);
        left += exists(name, NULL);
    }
    assert_int_equal(left, 3);
    a = tnd_agentdir_new("reviewer");
    tnd_agentdir_destroy(&a);
    for (int i = 0; i < TND_AGENTDIR_RECLAIM_MAX + 3; i++) {
        snprintf(name, sizeof(name), "reviewer-many%02d", i);
        assert_false(exists(name, NULL));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_new, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reclaim, setup, teardown),
        cmocka_unit_test_setup_teardown(test_half_removed, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bounded, setup, teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
