/* tnd_excerpt - the part of a tool's output worth reading.
 *
 * A build that prints 20 KB of compiler warnings before the one test
 * that failed must not lose that line to a cut by position. An excerpt
 * chooses lines by what they say (as skills/toolline reads them): the
 * lines that name a failure (with a little context), then the last
 * lines, then compiler warnings the change brought, then the first
 * lines. Warnings that the unmodified tree printed too (the baseline)
 * are folded into a count. Pure text in, text out: no I/O, linear in the
 * size of the output. */
#ifndef TND_EXCERPT_H
#define TND_EXCERPT_H

#include <stddef.h>

/* Below this max an excerpt is a single line cut to max bytes, without
 * markers: there is no room to say what was left out. */
#define TND_EXCERPT_MIN 64

typedef struct tnd_excerpt_stats {
    size_t lines_left_out;  /* lines not shown (folded warnings aside) */
    size_t warnings_folded; /* compiler warnings that the baseline has
                               too, left out and counted */
} tnd_excerpt_stats;

/* The part of output worth reading, in at most max bytes counting every
 * marker it holds. Output that fits is returned as it is (less the
 * baseline's warnings, when baseline is given: its warnings are always
 * folded). Otherwise each run of left-out lines becomes one line
 * "[... N lines left out ...]", folded warnings one line at the top
 * "[... N compiler warnings left out: they were there before the change
 * too ...]", and a line longer than 500 bytes is cut with
 * " [... N more bytes of this line left out ...]". Never splits a UTF-8
 * sequence; other bytes pass through as they are. baseline (the same
 * tool's output on the unmodified tree) and stats may be NULL. Caller
 * frees. */
char *tnd_excerpt(const char *output, const char *baseline, size_t max,
                  tnd_excerpt_stats *stats);

#endif
