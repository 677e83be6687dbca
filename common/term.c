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

/* One of the window's sizes at fd: its TIOCGWINSZ size, else the
 * variable env when it is a number from 1 to 10000, else fallback. */
static int size_of(int fd, bool rows, const char *env, int fallback)
{
    struct winsize ws;
    const char *value = getenv(env);
    char *end;
    long n;

    if (ioctl(fd, TIOCGWINSZ, &ws) == 0 && (rows ? ws.ws_row : ws.ws_col) > 0)
        return rows ? ws.ws_row : ws.ws_col;
    if (value && *value) {
        n = strtol(value, &end, 10);
        if (!*end && n >= 1 && n <= 10000)
            return (int)n;
    }
    return fallback;
}

int tnd_term_width(int fd)
{
    return size_of(fd, false, "COLUMNS", 80);
}

int tnd_term_height(int fd)
{
    return size_of(fd, true, "LINES", 24);
}

/* The columns code point u takes: 2 for the wide ones of East Asian
 * scripts and most emoji, 0 for combining marks, else 1. A table of the
 * large blocks, not all of Unicode's: enough that a task in Chinese or
 * with an emoji is not cut too late and wrapped. */
static int columns_of(unsigned long u)
{
    static const unsigned long wide[][2] = {
        {0x1100, 0x115F},   {0x2E80, 0x303E},   {0x3041, 0x33FF},
        {0x3400, 0x4DBF},   {0x4E00, 0x9FFF},   {0xA000, 0xA4CF},
        {0xAC00, 0xD7A3},   {0xF900, 0xFAFF},   {0xFE30, 0xFE4F},
        {0xFF00, 0xFF60},   {0xFFE0, 0xFFE6},   {0x1F300, 0x1F64F},
        {0x1F900, 0x1F9FF}, {0x20000, 0x3FFFD},
    };
    static const unsigned long zero[][2] = {
        {0x0300, 0x036F}, {0x200B, 0x200F}, {0x20D0, 0x20FF},
        {0xFE00, 0xFE0F}, {0xFE20, 0xFE2F},
    };

    for (size_t i = 0; i < sizeof(zero) / sizeof(zero[0]); i++)
        if (u >= zero[i][0] && u <= zero[i][1])
            return 0;
    for (size_t i = 0; i < sizeof(wide) / sizeof(wide[0]); i++)
        if (u >= wide[i][0] && u <= wide[i][1])
            return 2;
    return 1;
}

/* The length of the valid UTF-8 character at p (1..4), its code point in
 * *u; 0 when p does not start one. */
static size_t char_at(const unsigned char *p, unsigned long *u)
{
    size_t n = p[0] < 0x80                    ? 1
               : p[0] >= 0xC2 && p[0] <= 0xDF ? 2
               : p[0] >= 0xE0 && p[0] <= 0xEF ? 3
               : p[0] >= 0xF0 && p[0] <= 0xF4 ? 4
                                              : 0;

    *u = n == 1 ? p[0] : p[0] & (0x7F >> n);
    for (size_t i = 1; i < n; i++) {
        if ((p[i] & 0xC0) != 0x80)
            return 0;
        *u = *u << 6 | (p[i] & 0x3F);
    }
    /* no overlong form, surrogate or code point past U+10FFFF */
    if ((n == 3 && *u < 0x800) || (n == 4 && (*u < 0x10000 || *u > 0x10FFFF)) ||
        (*u >= 0xD800 && *u <= 0xDFFF))
        return 0;
    return n;
}

void tnd_term_fit(char *s, int columns)
{
    size_t cols = 0, keep = 0; /* bytes that fit with "..." after them */
    unsigned char *p = (unsigned char *)s;

    if (columns < 1)
        columns = 1;
    while (*p) {
        unsigned long u;
        size_t n = char_at(p, &u);
        int w;
        if (n == 0) { /* not UTF-8: a stray byte (0x9B is CSI in 8 bits) */
            *p = '?';
            n = 1;
            u = '?';
        } else if (u < 0x20 || u == 0x7F) { /* a newline in a task */
            *p = ' ';
            u = ' ';
        } else if (u >= 0x80 && u <= 0x9F) { /* C1: U+009B is CSI */
            p[0] = p[1] = '?';
            n = 1;
            u = '?';
        }
        w = columns_of(u);
        if (cols + (size_t)w <= (size_t)(columns < 4 ? columns : columns - 3))
            keep = (size_t)((char *)p - s) + n;
        if (cols + (size_t)w > (size_t)columns) {
            /* "..." where the line is cut, if there is room for it */
            if (columns < 4)
                s[keep] = '\0';
            else
                memcpy(s + keep, "...", 4);
            return;
        }
        cols += (size_t)w;
        p += n;
    }
}
