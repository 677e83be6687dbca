/* Unit tests for skills/cgroup: a pids cgroup for one run, joined by a
 * program through skills/proc, its limit refusing forks, killed whole and
 * removed, and made elsewhere when the place found first has gone. A
 * host that gives no pids cgroup (not root, nothing delegated) can only
 * check that tnd_cgroup_new says why. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/error.h"
#include "common/fs.h"
#include "common/xalloc.h"
#include "skills/cgroup.h"
#include "skills/proc.h"

#define ARGV(...) ((const char *const[]){__VA_ARGS__, NULL})

static int refused(int pid, void *payload)
{
    (void)pid;
    return tnd_cgroup_refused(payload);
}

static void a_run_in_a_cgroup_is_held_to_its_limit(void **state)
{
    tnd_cgroup *cg = tnd_cgroup_new(4);
    tnd_proc_spec spec;
    tnd_proc_result res;

    (void)state;
    if (!cg) {
        /* the reason names what is missing */
        assert_non_null(strstr(tnd_error_last(), "pids"));
        skip();
    }
    assert_false(tnd_cgroup_refused(cg));
    /* within the limit: 3 sleeps and the shell */
    memset(&spec, 0, sizeof(spec));
    spec.argv = ARGV("/bin/sh", "-c",
                     "sleep 0.1 & sleep 0.1 & sleep 0.1 & wait; echo done");
    spec.cgroup_join_fd = tnd_cgroup_join_fd(cg);
    spec.timeout_ms = 10000;
    assert_int_equal(tnd_proc_run(&res, &spec), 0);
    assert_int_equal(res.exit_code, 0);
    assert_string_equal(res.output, "done\n");
    assert_false(tnd_cgroup_refused(cg));
    tnd_proc_result_free(&res);
    tnd_cgroup_destroy(&cg);
    assert_null(cg);
    tnd_cgroup_destroy(&cg); /* NULL is fine */

    /* past it: a fork is refused, which the watch sees */
    assert_non_null(cg = tnd_cgroup_new(4));
    spec.argv = ARGV("/bin/sh", "-c",
                     "for i in 1 2 3 4 5 6 7 8; do sleep 30 & done; wait");
    spec.cgroup_join_fd = tnd_cgroup_join_fd(cg);
    spec.watch = refused;
    spec.watch_payload = cg;
    assert_int_equal(tnd_proc_run(&res, &spec), 0);
    assert_true(tnd_cgroup_refused(cg));
    assert_true(res.duration_ms < 10000);
    tnd_proc_result_free(&res);
    tnd_cgroup_destroy(&cg);
}

/* A program that left the run's process group is still in the cgroup:
 * destroying it ends the program too. */
static void destroy_kills_what_left_the_group(void **state)
{
    tnd_cgroup *cg = tnd_cgroup_new(16);
    tnd_proc_spec spec;
    tnd_proc_result res;
    char pidfile[] = "/tmp/tnd-test-cgroup-XXXXXX";
    char *text = NULL;
    size_t len;
    long pid;
    int fd;

    (void)state;
    if (!cg)
        skip();
    assert_true((fd = mkstemp(pidfile)) >= 0);
    close(fd);
    memset(&spec, 0, sizeof(spec));
    {
        char *cmd = tnd_xasprintf("setsid sleep 60 & echo $! > %s", pidfile);
        spec.argv = ARGV("/bin/sh", "-c", cmd);
        spec.cgroup_join_fd = tnd_cgroup_join_fd(cg);
        spec.timeout_ms = 10000;
        assert_int_equal(tnd_proc_run(&res, &spec), 0);
        free(cmd);
    }
    tnd_proc_result_free(&res);
    assert_int_equal(tnd_fs_read(&text, &len, pidfile, 64), 0);
    pid = strtol(text, NULL, 10);
    free(text);
    unlink(pidfile);
    assert_true(pid > 0);
    /* the sleep runs on, in its own session */
    assert_int_equal(kill((pid_t)pid, 0), 0);
    tnd_cgroup_destroy(&cg);
    /* gone, or a zombie about to be reaped by its new parent */
    {
        char path[64];
        FILE *f;
        int c = 'Z';
        snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
        if ((f = fopen(path, "r"))) {
            /* "PID (comm) S ...": the state after the name */
            char line[512];
            if (fgets(line, sizeof(line), f) && strrchr(line, ')'))
                c = strrchr(line, ')')[2];
            fclose(f);
        }
        assert_true(c == 'Z' || c == 'X');
    }
}

/* The directory of cg's cgroup: its cgroup.procs, seen through the
 * descriptor, less the file's name. Caller frees. */
static char *dir_of(const tnd_cgroup *cg)
{
    char link[64], path[4096];
    ssize_t n;

    snprintf(link, sizeof(link), "/proc/self/fd/%d", tnd_cgroup_join_fd(cg));
    n = readlink(link, path, sizeof(path) - 1);
    assert_true(n > 0);
    path[n] = '\0';
    return tnd_fs_dirname(path);
}

/* A program joins by the file that moves only itself where there is one
 * (v1's tasks: cgroup.procs moves a thread group under a lock that waits
 * for an RCU grace period, 5-23 ms of the first skill of every audit),
 * and what it starts is in the cgroup too. */
static void a_program_joins_by_the_cheap_file(void **state)
{
    tnd_cgroup *cg = tnd_cgroup_new(8);
    char link[64], path[4096], *dir, *sub, *name;
    tnd_proc_spec spec;
    tnd_proc_result res;
    ssize_t n;
    bool v2;

    (void)state;
    if (!cg)
        skip();
    snprintf(link, sizeof(link), "/proc/self/fd/%d", tnd_cgroup_join_fd(cg));
    n = readlink(link, path, sizeof(path) - 1);
    assert_true(n > 0);
    path[n] = '\0';
    dir = tnd_fs_dirname(path);
    sub = tnd_xasprintf("%s/cgroup.subtree_control", dir);
    v2 = access(sub, F_OK) == 0;
    assert_string_equal(strrchr(path, '/') + 1, v2 ? "cgroup.procs" : "tasks");
    memset(&spec, 0, sizeof(spec));
    spec.argv = ARGV("/bin/sh", "-c",
                     "cat /proc/self/cgroup; echo; "
                     "/bin/sh -c 'cat /proc/$$/cgroup'");
    spec.cgroup_join_fd = tnd_cgroup_join_fd(cg);
    spec.timeout_ms = 10000;
    assert_int_equal(tnd_proc_run(&res, &spec), 0);
    assert_int_equal(res.exit_code, 0);
    name = strrchr(dir, '/') + 1;
    /* a cat of the shell's and a cat of its child shell's, each in it:
     * what the joined program starts is counted too */
    assert_non_null(strstr(res.output, name));
    assert_non_null(strstr(strstr(res.output, name) + 1, name));
    tnd_proc_result_free(&res);
    tnd_cgroup_destroy(&cg);
    free(sub);
    free(dir);
}

/* This process's cgroup path in the hierarchy whose directory is dir:
 * v2's ("0::PATH") when dir has cgroup.subtree_control, else v1's pids
 * one. Caller frees. */
static char *own_cgroup(const char *dir, bool *v2)
{
    char *sub = tnd_xasprintf("%s/cgroup.subtree_control", dir);
    char line[4096], *out = NULL;
    FILE *f = fopen("/proc/self/cgroup", "r");

    *v2 = access(sub, F_OK) == 0;
    free(sub);
    assert_non_null(f);
    while (!out && fgets(line, sizeof(line), f)) {
        /* "ID:CONTROLLERS:PATH" */
        char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
        line[strcspn(line, "\n")] = '\0';
        if (!c2)
            continue;
        *c2 = '\0';
        if (*v2 ? strcmp(line, "0:") == 0 : strstr(c1 + 1, "pids") != NULL)
            out = tnd_xstrdup(c2 + 1);
    }
    fclose(f);
    assert_non_null(out);
    return out;
}

/* Play this process in the cgroup at PATH/name of its hierarchy: the
 * cgroup file tnd_cgroup reads says so. */
static void move_to(const char *file, bool v2, const char *path,
                    const char *name)
{
    const char *sep = strcmp(path, "/") == 0 ? "" : path;
    char *line = v2 ? tnd_xasprintf("0::%s/%s\n", sep, name)
                    : tnd_xasprintf("1:pids:%s/%s\n", sep, name);

    assert_int_equal(tnd_fs_write(file, line, strlen(line)), 0);
    free(line);
}

/* What a_parent_that_went_is_found_again makes: removed by
 * remove_moved even when the test fails half way. */
static struct {
    char file[64]; /* the cgroup file tnd_cgroup reads */
    char *dir[2];  /* cgroups a and b */
} moved;

/* Remove dir and the (empty) cgroups of ours left in it. */
static void remove_cgroup_dir(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *e;

    while (d && (e = readdir(d)))
        if (strncmp(e->d_name, "tandem-skill-", 13) == 0)
            (void)unlinkat(dirfd(d), e->d_name, AT_REMOVEDIR);
    if (d)
        closedir(d);
    (void)rmdir(dir);
}

static int remove_moved(void **state)
{
    (void)state;
    tnd_cgroup_set_proc_files(NULL, NULL);
    for (int i = 0; i < 2; i++) {
        if (moved.dir[i])
            remove_cgroup_dir(moved.dir[i]);
        free(moved.dir[i]);
    }
    if (moved.file[0])
        unlink(moved.file);
    memset(&moved, 0, sizeof(moved));
    return 0;
}

/* Where cgroups are made is found once per process; when this process
 * has moved to another cgroup and its old one is gone (a service
 * manager restarted the unit's scope), the next run finds it again
 * instead of failing on the old directory. Played with a cgroup file of
 * the test's (tnd_cgroup_set_proc_files) naming two cgroups it makes
 * below this process's own. */
static void a_parent_that_went_is_found_again(void **state)
{
    tnd_cgroup *cg = tnd_cgroup_new(16);
    char a[64], b[64], *root, *path, *dir;
    bool v2;
    int fd;

    (void)state;
    if (!cg)
        skip();
    dir = dir_of(cg);
    root = tnd_fs_dirname(dir); /* this process's own cgroup */
    free(dir);
    tnd_cgroup_destroy(&cg);
    path = own_cgroup(root, &v2);
    snprintf(a, sizeof(a), "tnd-test-cgroup-%d-a", (int)getpid());
    snprintf(b, sizeof(b), "tnd-test-cgroup-%d-b", (int)getpid());
    moved.dir[0] = tnd_xasprintf("%s/%s", root, a);
    moved.dir[1] = tnd_xasprintf("%s/%s", root, b);
    free(root);
    assert_int_equal(mkdir(moved.dir[0], 0755), 0);
    assert_int_equal(mkdir(moved.dir[1], 0755), 0);
    snprintf(moved.file, sizeof(moved.file), "/tmp/tnd-test-cgroup-XXXXXX");
    assert_true((fd = mkstemp(moved.file)) >= 0);
    close(fd);

    move_to(moved.file, v2, path, a);
    tnd_cgroup_set_proc_files(moved.file, NULL);
    assert_non_null(cg = tnd_cgroup_new(16));
    dir = dir_of(cg);
    assert_non_null(strstr(dir, a));
    free(dir);
    tnd_cgroup_destroy(&cg);

    /* moved to b, and a removed: the place found first is gone */
    move_to(moved.file, v2, path, b);
    free(path);
    assert_int_equal(rmdir(moved.dir[0]), 0);
    cg = tnd_cgroup_new(16);
    if (!cg)
        fail_msg("no cgroup after the parent went: %s", tnd_error_last());
    dir = dir_of(cg);
    assert_non_null(strstr(dir, b));
    free(dir);
    tnd_cgroup_destroy(&cg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_run_in_a_cgroup_is_held_to_its_limit),
        cmocka_unit_test(destroy_kills_what_left_the_group),
        cmocka_unit_test(a_program_joins_by_the_cheap_file),
        cmocka_unit_test_teardown(a_parent_that_went_is_found_again,
                                  remove_moved),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
