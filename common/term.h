/* tnd_term - whether output to a descriptor may redraw in place.
 *
 * A line redrawn with escape codes ("\r\033[K", cursor up) is for a
 * person at a terminal that understands them: not for a pipe or a file,
 * and not for TERM=dumb (an editor's shell, a CI log viewer), which shows
 * the codes as garbage. */
#ifndef TND_TERM_H
#define TND_TERM_H

#include <stdbool.h>

/* True when fd is a terminal and TERM is set and not "dumb". */
bool tnd_term_can_redraw(int fd);

#endif
