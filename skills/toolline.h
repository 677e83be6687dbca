/* tnd_toolline - what one line of a tool's output says.
 *
 * A compiler, a test runner or make prints lines of a few known shapes:
 * a diagnostic ("file:12:3: warning: ..."), the gcc and clang lines that
 * lead up to one ("In function", "In file included from"), the source
 * excerpt and caret under one, a passing test, a summary with a count,
 * a line that names a failure. This module reads one line at a time and
 * says which; what to keep of a whole output is skills/excerpt's
 * business. Pure functions on (line, len): no I/O, no allocation, linear
 * in len. A line is given without its newline; only
 * tnd_toolline_is_failure() also ignores a trailing '\r', the others
 * read the bytes as given. */
#ifndef TND_TOOLLINE_H
#define TND_TOOLLINE_H

#include <stdbool.h>
#include <stddef.h>

/* What kind of compiler diagnostic a line is. */
typedef enum tnd_toolline_severity {
    TND_TOOLLINE_NONE,    /* not a diagnostic */
    TND_TOOLLINE_WARNING, /* "file:12:3: warning: ...", "cc1: warning:" */
    TND_TOOLLINE_ERROR,   /* "error:" or "fatal error:" */
    TND_TOOLLINE_NOTE,    /* "note:" */
    TND_TOOLLINE_PLACE    /* a place and indented text, as in gcc's
                             "f.cc:12:3:   required from here" */
} tnd_toolline_severity;

/* The severity of a compiler diagnostic line: "file:line[:col]: warning:
 * ...", also without line and column ("cc1: warning:", "collect2:
 * error:"). The file name has no blank, so a sentence with a colon in it
 * is none. TND_TOOLLINE_NONE for any other line. */
tnd_toolline_severity tnd_toolline_diagnostic(const char *line, size_t len);

/* Whether the line belongs to the diagnostic after it: gcc's "file.c: In
 * function 'f':", "file.c: At top level:", and the chain "In file
 * included from a.h:3," / "                 from a.c:1:". */
bool tnd_toolline_is_header(const char *line, size_t len);

/* Whether the line is gcc's source excerpt under a diagnostic: "   12 |
 * code", "      |   ^~~~", "  +++ |+#include". */
bool tnd_toolline_is_excerpt(const char *line, size_t len);

/* Whether the line is clang's caret line under a source line: blanks,
 * '^' and '~' only, with at least one '^' or '~'. */
bool tnd_toolline_is_caret(const char *line, size_t len);

/* Whether the line (a trailing '\r' is ignored) names a failure: an
 * error diagnostic, FAIL, "not ok", an assertion, a crash, make's "***",
 * a non-zero exit status, "N failed" with N > 0. A count of zero ("0
 * failed", "Failed: 0") is not a failure, nor a passing test's line ("ok
 * 3 - handles failed reads"). */
bool tnd_toolline_is_failure(const char *line, size_t len);

#endif
