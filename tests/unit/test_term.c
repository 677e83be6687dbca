/* Unit tests for common/term: redraw in place only on a terminal whose
 * TERM is set and not "dumb". The terminal is a real pseudo-terminal. */
#define _XOPEN_SOURCE 600
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "common/term.h"

static void redraw_needs_a_terminal_that_is_not_dumb(void **state)
{
    int master = posix_openpt(O_RDWR | O_NOCTTY), slave, pipefd[2];
    const char *name;

    (void)state;
    assert_true(master >= 0);
    assert_int_equal(grantpt(master), 0);
    assert_int_equal(unlockpt(master), 0);
    assert_non_null(name = ptsname(master));
    slave = open(name, O_RDWR | O_NOCTTY);
    assert_true(slave >= 0);
    assert_int_equal(pipe(pipefd), 0);

    setenv("TERM", "xterm-256color", 1);
    assert_true(tnd_term_can_redraw(slave));
    assert_false(tnd_term_can_redraw(pipefd[1])); /* not a terminal */
    setenv("TERM", "dumb", 1);
    assert_false(tnd_term_can_redraw(slave));
    setenv("TERM", "", 1);
    assert_false(tnd_term_can_redraw(slave));
    unsetenv("TERM");
    assert_false(tnd_term_can_redraw(slave));

    close(pipefd[0]);
    close(pipefd[1]);
    close(slave);
    close(master);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(redraw_needs_a_terminal_that_is_not_dumb),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
