/* tnd_watch - `tandem watch [ID]`: a live view of running sessions.
 *
 * Subscribes to the event stream of each running session of a repository
 * (or of one session), and shows a line per task: its attempt, what it is
 * doing (coding, applying, auditing, streaming, waiting for a person),
 * how long it has been going and the tokens it has used. On a terminal
 * the lines are redrawn in place; otherwise each event is one plain line.
 * It ends when the sessions it watches end. */
#ifndef TND_WATCH_H
#define TND_WATCH_H

#include <stdbool.h>

typedef struct tnd_watch_options {
    const char *repo;    /* "." when NULL */
    const char *session; /* an id or unique prefix; NULL: all running */
    bool plain;          /* plain lines even on a terminal */
    long timeout_ms;     /* stop after this long (0: when they end) */
} tnd_watch_options;

/* Watch; returns an exit code (0, or 2 for a bad session id). */
int tnd_watch(const tnd_watch_options *opts);

#endif
