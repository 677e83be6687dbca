/* tnd_watch - `tandem watch [ID]`: a live view of running sessions.
 *
 * Subscribes to the event stream of each running session of a repository
 * (or of one session), and shows a line per task: its attempt, what it is
 * doing (coding, "reviewer: test running (6.1 s)", waiting for a
 * person), how long it has been going and the tokens it has used. A
 * session joined late shows its current step from its journal and its
 * now.json. On a terminal the lines are redrawn in place, each cut to
 * the terminal's width (read again at every redraw); otherwise each
 * event is one plain line. It ends when the sessions it watches end, at
 * once when none runs, or, with a timeout, waits that long for one. */
#ifndef TND_WATCH_H
#define TND_WATCH_H

#include <stdbool.h>

typedef struct tnd_watch_options {
    const char *repo;    /* "." when NULL */
    const char *session; /* an id or unique prefix; NULL: all running */
    bool plain;          /* plain lines even on a terminal */
    long timeout_ms;     /* wait this long for a session, and stop after
                            it (0: no wait; stop when they end) */
    bool server;         /* every session the user's tandem serve runs,
                            whatever its repository */
} tnd_watch_options;

/* Watch; returns an exit code (0, 2 for a bad session id, 1 when the
 * repository's .tandem cannot hold sessions). */
int tnd_watch(const tnd_watch_options *opts);

#endif
