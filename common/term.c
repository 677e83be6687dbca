/* Whether a terminal may be redrawn (see term.h). */
#include "common/term.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

bool tnd_term_can_redraw(int fd)
{
    const char *term = getenv("TERM");

    return isatty(fd) && term && *term && strcmp(term, "dumb") != 0;
}
