/* Unit tests for skills/ptree: counting the tasks (processes and their
 * threads) below one, and a user's. Real processes: a shell with children
 * of its own, a process that starts threads. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "skills/ptree.h"

/* A shell that starts n sleeps, then a pipe of two more under a
 * subshell, and waits: n + 3 processes below it. */
static pid_t start_tree(int n)
{
    char cmd[256];
    pid_t pid;

    snprintf(cmd, sizeof(cmd),
             "i=0; while [ $i -lt %d ]; do sleep 30 & i=$((i + 1)); done; "
             "(sleep 30 | sleep 30) & wait",
             n);
    pid = fork();
    if (pid == 0) {
        setpgid(0, 0); /* so that one kill ends the tree */
        execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
        _exit(127);
    }
    return pid;
}

/* Poll until the tree below pid has want processes (a deadline, no
 * sleeping on a guess). */
static long wait_for(pid_t pid, long want)
{
    int64_t until = tnd_now_ms() + 10000;
    long n;

    while ((n = tnd_ptree_count_below(pid, 1000)) != want &&
           tnd_now_ms() < until) {
        struct timespec nap = {0, 5 * 1000 * 1000};
        nanosleep(&nap, NULL);
    }
    return n;
}

static void counts_every_process_below_one(void **state)
{
    pid_t pid = start_tree(5);

    (void)state;
    assert_true(pid > 0);
    /* 5 sleeps, the subshell and its two */
    assert_int_equal(wait_for(pid, 8), 8);
    /* past the cap, the count stops at cap + 1 */
    assert_int_equal(tnd_ptree_count_below(pid, 3), 4);
    kill(-pid, SIGKILL);
    waitpid(pid, NULL, 0);
    assert_int_equal(tnd_ptree_count_below(pid, 100), 0); /* gone */
}

static void *block(void *payload)
{
    char c;

    /* until the pipe's write end closes */
    while (read(*(int *)payload, &c, 1) > 0)
        ;
    return NULL;
}

/* A process below a process that starts n threads (its main thread
 * and n others: n + 1 tasks) and blocks. */
static pid_t start_threads(int n)
{
    pid_t pid = fork();

    if (pid == 0) {
        static int fds[2];
        pid_t kid;
        setpgid(0, 0);
        if ((kid = fork()) == 0) {
            pthread_attr_t attr;
            if (pipe(fds) < 0)
                _exit(1);
            pthread_attr_init(&attr);
            pthread_attr_setstacksize(&attr, 64 * 1024);
            for (int i = 0; i < n; i++) {
                pthread_t t;
                if (pthread_create(&t, &attr, block, &fds[0]) != 0)
                    _exit(1);
            }
            block(&fds[0]);
            _exit(0);
        }
        waitpid(kid, NULL, 0);
        _exit(0);
    }
    return pid;
}

/* A skill's limit counts threads, as a pids cgroup does: 2,000 threads
 * in one process passed a limit of 64 where only processes counted. */
static void counts_the_threads_of_each_process(void **state)
{
    pid_t pid = start_threads(40);
    long all, capped;

    (void)state;
    assert_true(pid > 0);
    all = wait_for(pid, 41);
    capped = tnd_ptree_count_below(pid, 10);
    kill(-pid, SIGKILL); /* before a failed check leaves it running */
    waitpid(pid, NULL, 0);
    assert_int_equal(all, 41);
    assert_int_equal(capped, 11);
}

static void counts_a_users_processes(void **state)
{
    (void)state;
    /* this test at least */
    assert_true(tnd_ptree_count_user(getuid()) >= 1);
    /* nobody has no processes of this test's making; the count is sane */
    assert_true(tnd_ptree_count_user((uid_t)4000000000U) == 0);
}

/* RLIMIT_NPROC counts a user's threads too: the limit set above the
 * user's count must count them, or a user whose reviewer runs many
 * threads is left less room than the skill's limit. */
static void counts_a_users_threads(void **state)
{
    enum { N = 200 };
    static pthread_t t[N];
    int fds[2];
    long before, after;

    (void)state;
    assert_int_equal(pipe(fds), 0);
    before = tnd_ptree_count_user(getuid());
    for (int i = 0; i < N; i++)
        assert_int_equal(pthread_create(&t[i], NULL, block, &fds[0]), 0);
    after = tnd_ptree_count_user(getuid());
    close(fds[1]);
    for (int i = 0; i < N; i++)
        pthread_join(t[i], NULL);
    close(fds[0]);
    /* the user's other processes come and go; N threads are plain */
    assert_true(after - before >= N - 50);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(counts_every_process_below_one),
        cmocka_unit_test(counts_the_threads_of_each_process),
        cmocka_unit_test(counts_a_users_processes),
        cmocka_unit_test(counts_a_users_threads),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
