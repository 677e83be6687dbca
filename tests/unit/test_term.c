/* Unit tests for common/term: redraw in place only on a terminal whose
 * TERM is set and not "dumb"; its width; lines fit to it. The terminal
 * is a real pseudo-terminal. */
#define _XOPEN_SOURCE 600
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
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

/* The window's own size, then $COLUMNS, then 80. */
static void the_width_is_the_window_then_columns_then_80(void **state)
{
    int master = posix_openpt(O_RDWR | O_NOCTTY), slave, pipefd[2];
    struct winsize ws = {.ws_row = 24, .ws_col = 80};

    (void)state;
    assert_true(master >= 0);
    assert_int_equal(grantpt(master), 0);
    assert_int_equal(unlockpt(master), 0);
    slave = open(ptsname(master), O_RDWR | O_NOCTTY);
    assert_true(slave >= 0);
    assert_int_equal(pipe(pipefd), 0);

    setenv("COLUMNS", "132", 1);
    assert_int_equal(ioctl(slave, TIOCSWINSZ, &ws), 0);
    assert_int_equal(tnd_term_width(slave), 80);
    ws.ws_col = 57; /* resized: asked anew */
    assert_int_equal(ioctl(slave, TIOCSWINSZ, &ws), 0);
    assert_int_equal(tnd_term_width(slave), 57);
    assert_int_equal(tnd_term_width(pipefd[1]), 132);
    setenv("COLUMNS", "wide", 1);
    assert_int_equal(tnd_term_width(pipefd[1]), 80);
    setenv("COLUMNS", "0", 1);
    assert_int_equal(tnd_term_width(pipefd[1]), 80);
    unsetenv("COLUMNS");
    assert_int_equal(tnd_term_width(pipefd[1]), 80);

    close(pipefd[0]);
    close(pipefd[1]);
    close(slave);
    close(master);
}

/* A line fits its width: cut with "...", never split inside a
 * character, control characters made spaces. */
static void a_line_is_fit_to_the_width(void **state)
{
    static const struct {
        const char *line;
        int columns;
        const char *want;
    } rows[] = {
        {"short", 10, "short"},
        {"exactly10!", 10, "exactly10!"},
        {"eleven char", 10, "eleven ..."},
        {"tab\there\nnewline", 40, "tab here newline"},
        {"\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", 5,
         "\xc3\xa9\xc3\xa9..."},
        {"\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9", 5,
         "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"},
        /* below 4 columns: cut, no room for "..." (it wrapped) */
        {"abcdefgh", 1, "a"},
        {"abcdefgh", 3, "abc"},
        {"", 80, ""},
        /* wide characters take two columns (a CJK task wrapped) */
        {"\xe4\xb8\xad\xe6\x96\x87\xe4\xb8\xad\xe6\x96\x87", 8,
         "\xe4\xb8\xad\xe6\x96\x87\xe4\xb8\xad\xe6\x96\x87"},
        {"\xe4\xb8\xad\xe6\x96\x87\xe4\xb8\xad\xe6\x96\x87", 7,
         "\xe4\xb8\xad\xe6\x96\x87..."},
        /* C1 controls (U+009B is CSI) and stray bytes are no escapes */
        {"a\xc2\x9b"
         "31mb\x9b"
         "c",
         40, "a??31mb?c"},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        char buf[128];
        snprintf(buf, sizeof(buf), "%s", rows[i].line);
        tnd_term_fit(buf, rows[i].columns);
        if (strcmp(buf, rows[i].want) != 0)
            fail_msg("row %zu: '%s', not '%s'", i, buf, rows[i].want);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(redraw_needs_a_terminal_that_is_not_dumb),
        cmocka_unit_test(the_width_is_the_window_then_columns_then_80),
        cmocka_unit_test(a_line_is_fit_to_the_width),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
