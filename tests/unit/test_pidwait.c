/* Unit tests for common/pidwait: a wait for children ends when one of
 * them exits, not on a timer, and at the deadline when none does. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <signal.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/pidwait.h"

/* A child that exits when the write end of its pipe closes. */
static pid_t child_until_closed(int *write_end)
{
    int p[2];
    pid_t pid;
    char c;

    assert_int_equal(pipe(p), 0);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        close(p[1]);
        while (read(p[0], &c, 1) > 0) {
        }
        _exit(0);
    }
    close(p[0]);
    *write_end = p[1];
    return pid;
}

static void ends_when_one_child_exits(void **state)
{
    int w1, w2;
    pid_t pids[2];
    int64_t start;

    (void)state;
    pids[0] = child_until_closed(&w1);
    pids[1] = child_until_closed(&w2);
    close(w2); /* the second one exits */
    start = tnd_now_ms();
    assert_int_equal(tnd_pid_wait_any(pids, 2, start + 30000), 1);
    /* it woke for the exit, well before the deadline */
    assert_true(tnd_now_ms() - start < 20000);
    assert_int_equal(waitpid(pids[1], NULL, 0), pids[1]);
    close(w1);
    assert_int_equal(waitpid(pids[0], NULL, 0), pids[0]);
}

static void a_zombie_is_ready_at_once(void **state)
{
    int w;
    pid_t pid;
    siginfo_t info = {0};

    (void)state;
    pid = child_until_closed(&w);
    close(w);
    assert_int_equal(waitid(P_PID, (id_t)pid, &info, WEXITED | WNOWAIT), 0);
    assert_int_equal(tnd_pid_wait_any(&pid, 1, tnd_now_ms() + 30000), 1);
    assert_int_equal(waitpid(pid, NULL, 0), pid);
}

static void the_deadline_ends_a_wait_for_none(void **state)
{
    int w;
    pid_t pid;

    (void)state;
    pid = child_until_closed(&w);
    assert_int_equal(tnd_pid_wait_any(&pid, 1, tnd_now_ms() + 50), 0);
    assert_int_equal(waitpid(pid, NULL, WNOHANG), 0); /* still running */
    close(w);
    assert_int_equal(waitpid(pid, NULL, 0), pid);
    /* nothing to wait for: look at once */
    assert_int_equal(tnd_pid_wait_any(NULL, 0, tnd_now_ms()), 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(ends_when_one_child_exits),
        cmocka_unit_test(a_zombie_is_ready_at_once),
        cmocka_unit_test(the_deadline_ends_a_wait_for_none),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
