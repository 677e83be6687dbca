/* Unit tests for skills/reap: a process killed while it ran a program
 * leaves orphans behind, and the reaper (this test, like tandem) ends
 * them, whatever group or session they moved to. Real processes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/error.h"
#include "skills/proc.h"
#include "skills/reap.h"

static char tmpdir[] = "/tmp/tnd-test-reap-XXXXXX";

#define ARGV(...) ((const char *const[]){__VA_ARGS__, NULL})

/* tmpdir/name; borrowed from a static buffer (one at a time). */
static const char *file(const char *name)
{
    static char path[PATH_MAX];

    snprintf(path, sizeof(path), "%s/%s", tmpdir, name);
    return path;
}

/* Poll (with a deadline) until tmpdir/name exists, then the pid in it.
 * Every script writes NAME.new and renames it: a file written in place
 * could be seen before the pid is in it (under valgrind it was). */
static pid_t wait_for_pid(const char *name)
{
    int64_t deadline = tnd_now_ms() + 5000;
    FILE *f;
    int pid = 0;

    while (access(file(name), F_OK) != 0) {
        assert_true(tnd_now_ms() < deadline);
        nanosleep(&(struct timespec){0, 5000000}, NULL);
    }
    assert_non_null(f = fopen(file(name), "r"));
    assert_int_equal(fscanf(f, "%d", &pid), 1);
    fclose(f);
    unlink(file(name));
    assert_true(pid > 0);
    return (pid_t)pid;
}

static int exists(pid_t pid)
{
    return kill(pid, 0) == 0 || errno != ESRCH;
}

/* Poll (with a deadline) until pid runs sleep: the shell that wrote its
 * pid file has exec'd, so the mv it ran is gone. Counted before that, the
 * mv made an exact count one more under load (CI under memcheck). */
static void wait_until_sleeping(pid_t pid)
{
    int64_t deadline = tnd_now_ms() + 5000;
    char path[64], comm[32] = "";

    snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
    for (;;) {
        FILE *f = fopen(path, "r");
        if (f) {
            if (!fgets(comm, sizeof(comm), f))
                comm[0] = '\0';
            fclose(f);
        }
        if (strcmp(comm, "sleep\n") == 0)
            return;
        assert_true(tnd_now_ms() < deadline);
        nanosleep(&(struct timespec){0, 2000000}, NULL);
    }
}

/* A process that runs script with tnd_proc_run() in tmpdir, as an agent
 * runs a skill in a workspace, and waits for it. */
static pid_t start_runner(const char *script)
{
    pid_t runner = fork();

    assert_true(runner >= 0);
    if (runner == 0) {
        tnd_proc_result res;
        tnd_proc_spec spec = {.argv = ARGV("sh", "-c", script), .cwd = tmpdir};

        tnd_proc_run(&res, &spec);
        _exit(0);
    }
    return runner;
}

static void kill_runner(pid_t runner)
{
    assert_int_equal(kill(runner, SIGKILL), 0);
    assert_int_equal(waitpid(runner, NULL, 0), runner);
}

static void no_children_nothing_to_do(void **state)
{
    size_t ended = 99;

    (void)state;
    assert_int_equal(tnd_reap_strays(&ended, NULL, 0, 1000), 0);
    assert_int_equal(ended, 0);
}

/* The brief of issue 10: sh -c 'sleep 60 & sleep 60' run by a process
 * that is killed outright. The program dies with it (PR_SET_PDEATHSIG);
 * its background sleep, and one that left for a session of its own, are
 * orphaned to us, and the reaper ends all of them. */
static void what_a_killed_runner_left_is_ended(void **state)
{
    const char *script = "sleep 60 & echo $! > in-group.new && "
                         "mv in-group.new in-group; "
                         "setsid sh -c 'echo $$ > escaped.new && "
                         "mv escaped.new escaped && exec sleep 60' & "
                         "echo $$ > program.new && mv program.new program; "
                         "exec sleep 60";
    pid_t runner, program, in_group, escaped;
    size_t ended = 0;

    (void)state;
    runner = start_runner(script);
    program = wait_for_pid("program"); /* also its process group */
    in_group = wait_for_pid("in-group");
    escaped = wait_for_pid("escaped"); /* written after its setsid() */
    assert_int_equal(getsid(escaped), escaped);
    wait_until_sleeping(program);
    wait_until_sleeping(in_group);
    wait_until_sleeping(escaped);
    kill_runner(runner);

    assert_int_equal(tnd_reap_strays(&ended, NULL, 0, 5000), 0);
    assert_int_equal(ended, 3);
    assert_false(exists(program));
    assert_false(exists(in_group));
    assert_false(exists(escaped));
    assert_int_equal(kill(-program, 0), -1);
    assert_int_equal(errno, ESRCH);
}

/* Each generation in a session of its own, so no group kill reaches the
 * next one: they are ended one generation after the other as each is
 * orphaned to us. */
static void every_generation_is_ended(void **state)
{
    const char *script = "setsid sh -c 'setsid sh -c \"echo \\$\\$ > "
                         "deepest.new && mv deepest.new deepest && "
                         "exec sleep 60\" & wait' & wait";
    pid_t runner, deepest;
    size_t ended = 0;

    (void)state;
    runner = start_runner(script);
    deepest = wait_for_pid("deepest");
    wait_until_sleeping(deepest);
    kill_runner(runner);

    assert_int_equal(tnd_reap_strays(&ended, NULL, 0, 5000), 0);
    /* the program (dead with the runner), the sh between, the sleep */
    assert_int_equal(ended, 3);
    assert_false(exists(deepest));
}

/* Children the caller keeps (tandem's live agents) are left alone, and a
 * stray in the caller's own process group is killed alone. */
static void kept_children_and_our_group_are_spared(void **state)
{
    pid_t keep, stray;
    size_t ended = 0;

    (void)state;
    keep = fork();
    assert_true(keep >= 0);
    if (keep == 0) {
        setpgid(0, 0);
        pause();
        _exit(0);
    }
    stray = fork();
    assert_true(stray >= 0);
    if (stray == 0) {
        pause(); /* in our process group */
        _exit(0);
    }
    assert_int_equal(tnd_reap_strays(&ended, &keep, 1, 5000), 0);
    assert_int_equal(ended, 1);
    assert_false(exists(stray));
    assert_true(exists(keep));
    assert_int_equal(waitpid(keep, NULL, WNOHANG), 0);
    kill(keep, SIGKILL);
    assert_int_equal(waitpid(keep, NULL, 0), keep);
}

/* A program another thread runs with tnd_proc_run() is that thread's,
 * not a leftover: tandem serve's session threads run git while the hub
 * sweeps after an agent died. */
static void *run_sleep(void *arg)
{
    tnd_proc_result *res = arg;
    tnd_proc_spec spec = {.argv = ARGV("sh", "-c",
                                       "echo $$ > running.new && "
                                       "mv running.new running; "
                                       "exec sleep 1"),
                          .cwd = tmpdir};

    tnd_proc_run(res, &spec);
    return NULL;
}

static void programs_of_other_threads_are_spared(void **state)
{
    tnd_proc_result res;
    pthread_t t;
    size_t ended = 1;

    (void)state;
    memset(&res, 0, sizeof(res));
    assert_int_equal(pthread_create(&t, NULL, run_sleep, &res), 0);
    wait_for_pid("running");
    assert_int_equal(tnd_reap_strays(&ended, NULL, 0, 5000), 0);
    assert_int_equal(ended, 0);
    pthread_join(t, NULL);
    assert_int_equal(res.status, TND_PROC_EXITED);
    assert_int_equal(res.exit_code, 0);
    tnd_proc_result_free(&res);
}

/* Exited children nobody waits for are reaped, the kept one and the
 * live one left alone: what bwrap leaves a long-lived server. */
static void only_exited_strays_are_reaped(void **state)
{
    pid_t dead, kept, alive;
    size_t n = 9;
    siginfo_t info;

    (void)state;
    assert_true((dead = fork()) >= 0);
    if (dead == 0)
        _exit(0);
    assert_true((kept = fork()) >= 0);
    if (kept == 0)
        _exit(0);
    assert_true((alive = fork()) >= 0);
    if (alive == 0) {
        pause();
        _exit(0);
    }
    /* both exited, not reaped */
    memset(&info, 0, sizeof(info));
    assert_int_equal(waitid(P_PID, (id_t)dead, &info, WEXITED | WNOWAIT), 0);
    assert_int_equal(waitid(P_PID, (id_t)kept, &info, WEXITED | WNOWAIT), 0);
    assert_int_equal(tnd_reap_zombies(&n, &kept, 1), 0);
    assert_true(n >= 1); /* an earlier test's leftovers may be among them */
    errno = 0;
    assert_int_equal(waitpid(dead, NULL, WNOHANG), -1); /* reaped */
    assert_int_equal(errno, ECHILD);
    assert_int_equal(waitpid(kept, NULL, WNOHANG), kept); /* still ours */
    assert_int_equal(waitpid(alive, NULL, WNOHANG), 0);
    kill(alive, SIGKILL);
    assert_int_equal(waitpid(alive, NULL, 0), alive);
}

static int setup(void **state)
{
    (void)state;
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    return rmdir(tmpdir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(no_children_nothing_to_do),
        cmocka_unit_test(what_a_killed_runner_left_is_ended),
        cmocka_unit_test(every_generation_is_ended),
        cmocka_unit_test(kept_children_and_our_group_are_spared),
        cmocka_unit_test(programs_of_other_threads_are_spared),
        cmocka_unit_test(only_exited_strays_are_reaped),
    };

    /* Be what tandem is: the parent of our orphaned descendants. */
    if (tnd_reap_adopt() < 0) {
        fprintf(stderr, "%s\n", tnd_error_last());
        return 1;
    }
    return cmocka_run_group_tests(tests, setup, teardown);
}
