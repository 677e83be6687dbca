/* Unit tests for common/trust: which directories only this user and root
 * can change, one rule a row, and the walk over a real path. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/error.h"
#include "common/fs.h"
#include "common/rmtree.h"
#include "common/trust.h"
#include "common/xalloc.h"

/* Each rule of tnd_trust_dir, on a made-up status: the user is uid 1000
 * of group 1000. */
static void each_rule_a_row(void **state)
{
    static const struct {
        unsigned uid, gid, mode; /* mode with its file type */
        bool last, acl, private_group;
        const char *want; /* NULL: trusted; else in the error */
    } rows[] = {
        {1000, 1000, S_IFDIR | 0755, true, false, true, NULL},
        {0, 0, S_IFDIR | 0755, false, false, true, NULL},
        {0, 0, S_IFDIR | 0755, true, false, true, NULL},
        {1001, 1000, S_IFDIR | 0755, true, false, true, "belongs to uid 1001"},
        {1001, 1001, S_IFDIR | 0755, false, false, true, "belongs to uid"},
        {1000, 1000, S_IFDIR | 0757, true, false, true, "chmod o-w"},
        {1000, 1000, S_IFDIR | 0757, false, false, true, "chmod o-w"},
        /* /tmp: sticky, anyone may add, nobody move another's */
        {0, 0, S_IFDIR | 01777, false, false, false, NULL},
        {0, 0, S_IFDIR | 01777, true, false, false, "chmod o-w"},
        {1000, 1000, S_IFDIR | 0775, true, false, true, NULL},
        {1000, 1000, S_IFDIR | 0775, false, false, true, NULL},
        {1000, 1000, S_IFDIR | 0775, true, false, false, "not uid 1000's own"},
        {1000, 1002, S_IFDIR | 0775, true, false, true, "group 1002"},
        {1000, 1000, S_IFDIR | 0775, true, true, true, "ACL"},
        {1000, 1000, S_IFDIR | 0755, true, true, true, NULL},
        {1000, 1000, S_IFLNK | 0777, true, false, true, "symbolic link"},
        {1000, 1000, S_IFREG | 0644, true, false, true, "not a directory"},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        tnd_trust_who who = {1000, 1000, rows[i].private_group};
        struct stat st;
        int rc;

        memset(&st, 0, sizeof(st));
        st.st_uid = rows[i].uid;
        st.st_gid = rows[i].gid;
        st.st_mode = rows[i].mode;
        tnd_error_clear();
        rc = tnd_trust_dir("/x/repo", &st, rows[i].last, rows[i].acl, &who);
        if (!rows[i].want && rc != 0)
            fail_msg("row %zu: refused: %s", i, tnd_error_last());
        if (rows[i].want && rc == 0)
            fail_msg("row %zu: trusted, wanted '%s'", i, rows[i].want);
        if (rows[i].want && (!strstr(tnd_error_last(), rows[i].want) ||
                             !strstr(tnd_error_last(), "/x/repo")))
            fail_msg("row %zu: '%s' does not say '%s' and the path", i,
                     tnd_error_last(), rows[i].want);
    }
}

static char scratch[64];

/* A scratch directory of this user's, under a parent that is trusted
 * (the test is skipped where the machine's temporary directory is not). */
static int make_scratch(void **state)
{
    (void)state;
    snprintf(scratch, sizeof(scratch), "/tmp/test_trust-XXXXXX");
    if (!mkdtemp(scratch))
        return -1;
    return chmod(scratch, 0755);
}

static int remove_scratch(void **state)
{
    (void)state;
    return tnd_fs_rmtree(scratch);
}

static char *in_scratch(const char *rel)
{
    return tnd_xasprintf("%s/%s", scratch, rel);
}

/* Whether this process's group is named as its user and lists no other
 * member. */
static bool own_group_only(void)
{
    const struct passwd *pw = getpwuid(geteuid());
    const struct group *gr = getgrgid(getegid());

    if (!pw || !gr || strcmp(gr->gr_name, pw->pw_name) != 0)
        return false;
    for (char **m = gr->gr_mem; *m; m++)
        if (strcmp(*m, pw->pw_name) != 0)
            return false;
    return true;
}

/* The walk: a directory of this user's is trusted; one others may write
 * in is named, whether it is the last or one above it, unless it is
 * sticky and above; a link and a relative path are refused. */
static void the_walk_names_the_directory_at_fault(void **state)
{
    char *a = in_scratch("a"), *inner = in_scratch("a/inner");
    char *link = in_scratch("link"), *via = in_scratch("link/inner");

    (void)state;
    tnd_error_clear();
    if (tnd_trust_path(scratch) < 0)
        skip(); /* this machine's /tmp is not trusted: nothing to learn */
    assert_int_equal(mkdir(a, 0755), 0);
    assert_int_equal(mkdir(inner, 0755), 0);
    assert_int_equal(symlink(a, link), 0);
    assert_int_equal(tnd_trust_path(inner), 0);

    assert_int_equal(chmod(a, 0777), 0);
    assert_int_equal(tnd_trust_path(a), -1);
    assert_non_null(strstr(tnd_error_last(), "others may write in"));
    assert_int_equal(tnd_trust_path(inner), -1);
    assert_non_null(strstr(tnd_error_last(), a));
    assert_null(strstr(tnd_error_last(), "inner"));

    /* sticky: trusted above the last, not as the last */
    assert_int_equal(chmod(a, 01777), 0);
    assert_int_equal(tnd_trust_path(inner), 0);
    assert_int_equal(tnd_trust_path(a), -1);

    /* a group may write: this user's own group only (as the group
     * database lists it), never another */
    assert_int_equal(chmod(a, 0775), 0);
    assert_int_equal(tnd_trust_path(inner), own_group_only() ? 0 : -1);
    if (geteuid() == 0 && getegid() != 65534) {
        assert_int_equal(chown(a, 0, 65534), 0);
        assert_int_equal(tnd_trust_path(inner), -1);
        assert_non_null(strstr(tnd_error_last(), "group 65534 may write in"));
        assert_int_equal(chown(a, 0, getegid()), 0);
    }

    /* a shared primary group ("users", members unlisted) is nobody's
     * own, even as this process's group: only root can take it on */
    const struct group *users = getgrnam("users");
    if (geteuid() == 0 && users && users->gr_mem && !users->gr_mem[0]) {
        gid_t g = users->gr_gid;
        pid_t pid;
        int status;
        assert_int_equal(chown(a, 0, g), 0);
        pid = fork();
        assert_true(pid >= 0);
        if (pid == 0) {
            bool refused = setegid(g) == 0 && tnd_trust_path(inner) == -1 &&
                           strstr(tnd_error_last(), "not uid 0's own group");
            /* the child's copies freed: valgrind counts its leaks too */
            free(via);
            free(link);
            free(inner);
            free(a);
            _exit(refused ? 0 : 1);
        }
        assert_int_equal(waitpid(pid, &status, 0), pid);
        assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        assert_int_equal(chown(a, 0, getegid()), 0);
    }

    assert_int_equal(chmod(a, 0755), 0);
    assert_int_equal(tnd_trust_path(via), -1);
    assert_non_null(strstr(tnd_error_last(), "symbolic link"));
    assert_non_null(strstr(tnd_error_last(), link));

    assert_int_equal(tnd_trust_path("tmp/x"), -1);
    assert_non_null(strstr(tnd_error_last(), "not an absolute path"));
    free(via);
    via = in_scratch("a/../a");
    assert_int_equal(tnd_trust_path(via), -1);
    assert_non_null(strstr(tnd_error_last(), "real path"));
    assert_int_equal(tnd_trust_path("/"), 0);
    free(via);
    free(link);
    free(inner);
    free(a);
}

/* This process's own: its uid and gid. */
static void who_is_this_process(void **state)
{
    tnd_trust_who who;

    (void)state;
    tnd_trust_who_self(&who);
    assert_int_equal(who.uid, geteuid());
    assert_int_equal(who.gid, getegid());
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(each_rule_a_row),
        cmocka_unit_test_setup_teardown(the_walk_names_the_directory_at_fault,
                                        make_scratch, remove_scratch),
        cmocka_unit_test(who_is_this_process),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
