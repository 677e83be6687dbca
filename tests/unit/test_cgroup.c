/* Unit tests for skills/cgroup: a pids cgroup for one run, joined by a
 * program through skills/proc, its limit refusing forks, killed whole and
 * removed. A host that gives no pids cgroup (not root, nothing
 * delegated) can only check that tnd_cgroup_new says why. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
    spec.cgroup_procs_fd = tnd_cgroup_procs_fd(cg);
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
    spec.cgroup_procs_fd = tnd_cgroup_procs_fd(cg);
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
        spec.cgroup_procs_fd = tnd_cgroup_procs_fd(cg);
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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_run_in_a_cgroup_is_held_to_its_limit),
        cmocka_unit_test(destroy_kills_what_left_the_group),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
