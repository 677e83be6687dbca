/* Whether a terminal may be redrawn, and its width (see term.h). */
#include "common/term.h"

#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

bool tnd_term_can_redraw(int fd)
{
    const char *term = getenv("TERM");

    return isatty(fd) && term && *term && strcmp(term, "dumb") != 0;
}

int tnd_term_width(int fd)
{
    struct winsize ws;
    const char *env = getenv("COLUMNS");
    char *end;
    long n;

    if (ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
        return ws.ws_col;
    if (env && *env) {
        n = strtol(env, &end, 10);
        if (!*end && n >= 1 && n <= 10000)
            return (int)n;
    }
    return 80;
}

/* True for the first byte of a UTF-8 character (not a continuation). */
static bool starts_char(unsigned char c)
{
    return (c & 0xC0) != 0x80;
}

void tnd_term_fit(char *s, int columns)
{
    size_t cols = 0, keep = 0; /* bytes that fit with "..." after them */
    char *p;

    if (columns < 4)
        columns = 4;
    for (p = s; *p; p++) {
        unsigned char c = (unsigned char)*p;
        if (c < 0x20 || c == 0x7F)
            *p = ' ';
        if (!starts_char(c))
            continue;
        if (cols == (size_t)columns - 3)
            keep = (size_t)(p - s);
        if (++cols > (size_t)columns) {
            memcpy(s + keep, "...", 4);
            return;
        }
    }
}
