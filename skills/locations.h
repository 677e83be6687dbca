/* tnd_locations - the file:line[:col] places a skill's output points at.
 *
 * Recognised forms, anywhere a word starts on a line:
 *   src/a.c:12:5: error: ...         gcc, clang, cppcheck (default and
 *                                    --template=gcc), most linters
 *   In file included from src/a.c:2: (and gcc's "from b.h:3,")
 *   [src/a.c:12]: (error) ...        cppcheck's classic template
 *   File "x.py", line 12, in f       Python tracebacks
 *   path:line: ...                   grep -n, test runners, make
 * A place is kept only when it names a regular file inside the workspace:
 * relative paths are taken from the workspace, absolute ones must lie
 * under it (they are made relative), and "..", symlinks out of the
 * workspace, line 0 and duplicates are dropped. So a compiler's message
 * about /usr/include/stdio.h or a word like "localhost:8080" costs
 * nothing. */
#ifndef TND_LOCATIONS_H
#define TND_LOCATIONS_H

#include <stddef.h>

#include "proto/audit.h"

/* Find at most max places in text (NUL-terminated) that exist under
 * workspace (an absolute directory), in the order they first appear.
 * *out is NULL when there are none; free with tnd_locations_free.
 * Returns the count. */
size_t tnd_locations_find(tnd_location **out, const char *text,
                          const char *workspace, size_t max);

/* Free n locations and the array; safe on NULL. */
void tnd_locations_free(tnd_location *locations, size_t n);

#endif
