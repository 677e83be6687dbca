/* tnd_search - where a SEARCH block goes in a file.
 *
 * A coder's edit names the lines it changes by quoting them (SEARCH);
 * the workspace applies it where those lines are, and only when that
 * place is one. Exact matches come first, where a line's text begins,
 * else out of any word (never inside one: "timeout = 30" went into
 * "connect_timeout = 30"); then the lines with trailing blanks ignored.
 * A diff's hunk is anchored at its line instead (tnd_search_at). Every
 * search is linear in the text and the SEARCH, whatever they hold. */
#ifndef TND_SEARCH_H
#define TND_SEARCH_H

#include <stdbool.h>
#include <stddef.h>

typedef enum tnd_search_result {
    TND_SEARCH_FOUND,
    TND_SEARCH_NONE, /* *hint: the closest line, for the coder */
    TND_SEARCH_MANY, /* more than one place */
} tnd_search_result;

/* The one place search goes in text[0..len): [*start, *end) when
 * FOUND; NONE with *hint set (caller frees: "the closest line is N:
 * `...`" or why none is); MANY. */
tnd_search_result tnd_search_find(const char *text, size_t len,
                                  const char *search, size_t *start,
                                  size_t *end, char **hint);

/* Whether search is in text at start, byte for byte, except that a line
 * of text may end in CRLF where search's ends in LF; *end is where the
 * match ends in text. For a diff's hunk, anchored at its line. */
bool tnd_search_at(const char *text, size_t len, size_t start,
                   const char *search, size_t *end);

/* Line comparisons that matching a SEARCH with trailing blanks ignored
 * has made on the calling thread so far: at most about twice the lines
 * of the file and the search together, whatever they hold. For tests. */
size_t tnd_search_loose_steps(void);

#endif
