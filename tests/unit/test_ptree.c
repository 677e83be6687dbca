/* Unit tests for skills/ptree: counting the processes below one, and a
 * user's. Real processes: a shell with children of its own. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

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

static void counts_a_users_processes(void **state)
{
    (void)state;
    /* this test at least */
    assert_true(tnd_ptree_count_user(getuid()) >= 1);
    /* nobody has no processes of this test's making; the count is sane */
    assert_true(tnd_ptree_count_user((uid_t)4000000000U) == 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(counts_every_process_below_one),
        cmocka_unit_test(counts_a_users_processes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
