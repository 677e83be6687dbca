/* tnd_term - whether output to a descriptor may redraw in place, and
 * lines that fit its width.
 *
 * A line redrawn with escape codes ("\r\033[K", cursor up) is for a
 * person at a terminal that understands them: not for a pipe or a file,
 * and not for TERM=dumb (an editor's shell, a CI log viewer), which shows
 * the codes as garbage. A redrawn line must also fit the terminal's
 * width: a line that wraps cannot be cleared with "\r\033[K", and every
 * redraw then scrolls the screen. */
#ifndef TND_TERM_H
#define TND_TERM_H

#include <stdbool.h>

/* True when fd is a terminal and TERM is set and not "dumb". */
bool tnd_term_can_redraw(int fd);

/* The width of the terminal at fd in columns, asked anew on each call
 * (so a resized window is followed): its TIOCGWINSZ size, else $COLUMNS
 * when it is a number from 1 to 10000, else 80. */
int tnd_term_width(int fd);

/* Make the one-line text s fit in columns columns, in place: control
 * characters (a newline in a task) become spaces, and a line too long
 * ends in "..." within the width instead of wrapping. One column per
 * character (code point); s is cut on a character's boundary. columns
 * below 4 count as 4. */
void tnd_term_fit(char *s, int columns);

#endif
