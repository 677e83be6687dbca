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

/* The height of the terminal at fd in lines, asked anew on each call:
 * its TIOCGWINSZ size, else $LINES when it is a number from 1 to 10000,
 * else 24. */
int tnd_term_height(int fd);

/* Make the one-line text s fit in columns columns, in place: control
 * characters (a newline in a task) become spaces, C1 controls (U+0080 to
 * U+009F: U+009B is CSI to xterm) and bytes that are not UTF-8 become
 * '?', and a line too long ends in "..." within the width instead of
 * wrapping. Wide characters (CJK, most emoji) take two columns and
 * combining marks none; s is cut on a character's boundary. Below 4
 * columns the line is cut without "...". */
void tnd_term_fit(char *s, int columns);

#endif
