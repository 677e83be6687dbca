/* Where a SEARCH block goes in a file (see search.h). */
#include "orchestrator/search.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/str.h"
#include "common/xalloc.h"

static bool word_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c >= '0' && c <= '9') || c == '_';
}

/* Where a SEARCH may match, by how well the place fits it: 2 at the start
 * of a line's text (nothing but blanks before it: a model that left out
 * the indentation still finds its line), 1 not inside a word (the end of
 * a line: "int n);"), 0 inside one. "timeout = 30" matched inside
 * "connect_timeout = 30", and the edit changed another setting. */
static int fit(const char *text, const char *at, const char *needle)
{
    const char *p = at;

    while (p > text && (p[-1] == ' ' || p[-1] == '\t'))
        p--;
    if (p == text || p[-1] == '\n')
        return 2;
    return word_char(at[-1]) && word_char(needle[0]) ? 0 : 1;
}

/* The places of needle in hay that fit it at least as well as `least`
 * (fit), none, one or two of them (see below), the first in *first. */
static size_t count_fitting(const char *hay, size_t hay_len, const char *needle,
                            int least, const char **first)
{
    size_t n = 0, len = strlen(needle);
    const char *p = hay, *end = hay + hay_len;

    *first = NULL;
    if (len == 0)
        return 0;
    /* overlapping places count: "A B A" is twice in "A B A B A" (counted
     * once, an edit went to the first of two places without a word).
     * Only none, one or more matters: counting stops at two, which keeps
     * a long search over repeated lines linear. memmem, not strstr:
     * glibc 2.36's AVX-512 strstr is quadratic in the worst case (1.8 s
     * for a 40,000-line SEARCH missing from 100,000 repeated lines, 7 s
     * for twice both), where its memmem stays linear */
    while (n < 2 && (p = memmem(p, (size_t)(end - p), needle, len)) != NULL) {
        if (fit(hay, p, needle) >= least) {
            if (!n)
                *first = p;
            n++;
        }
        p++;
    }
    return n;
}

/* The places of needle that fit it best: at a line's start, else out of
 * any word; none inside a word. */
static size_t count_matches(const char *hay, size_t hay_len, const char *needle,
                            const char **first)
{
    size_t n = count_fitting(hay, hay_len, needle, 2, first);

    return n ? n : count_fitting(hay, hay_len, needle, 1, first);
}

/* Length of a line without trailing spaces, tabs and the newline. */
static size_t trimmed_len(const char *line, size_t len)
{
    while (len > 0 && (line[len - 1] == ' ' || line[len - 1] == '\t' ||
                       line[len - 1] == '\r' || line[len - 1] == '\n'))
        len--;
    return len;
}

/* The line at *at of len bytes (its end included) as loose matching
 * compares it: without trailing blanks and the line end; with lead,
 * without leading blanks either (*at moves past them). */
static size_t loose_len(const char **at, size_t len, bool lead)
{
    len = trimmed_len(*at, len);
    while (lead && len > 0 && (**at == ' ' || **at == '\t')) {
        (*at)++;
        len--;
    }
    return len;
}

/* How far a SEARCH got in a text (for the hint when it is not there):
 * the most of its lines, from its first, found in a row, and the text's
 * line (from 0) where they start. */
typedef struct reach {
    size_t lines;
    size_t from;
} reach;

/* One line of a SEARCH text as loose matching compares it. */
typedef struct search_line {
    const char *at; /* its first byte */
    size_t len;     /* without trailing blanks and the line end */
    uint64_t hash;  /* of those len bytes */
} search_line;

/* Line comparisons loose matching made on this thread (see search.h). */
static _Thread_local size_t loose_steps;

size_t tnd_search_loose_steps(void)
{
    return loose_steps;
}

/* FNV-1a: lines that differ almost always differ here, so most
 * comparisons end without reading the lines again. */
static uint64_t line_hash(const char *s, size_t len)
{
    uint64_t h = UINT64_C(14695981039346656037);

    for (size_t i = 0; i < len; i++) {
        h ^= (unsigned char)s[i];
        h *= UINT64_C(1099511628211);
    }
    return h;
}

/* Whether a trimmed line (at, len, hash) is the search line b. */
static bool same_line(const char *at, size_t len, uint64_t hash,
                      const search_line *b)
{
    loose_steps++;
    return len == b->len && hash == b->hash && memcmp(at, b->at, len) == 0;
}

/* The offset in text of the line n lines before the one at off. */
static size_t lines_back(const char *text, size_t off, size_t n)
{
    while (n > 0 && off > 0) {
        off--; /* onto the newline that ends the line before */
        while (off > 0 && text[off - 1] != '\n')
            off--;
        n--;
    }
    return off;
}

/* Match search against text line by line, ignoring trailing whitespace
 * (and, given how_far, leading whitespace too, and how far the search
 * got into *how_far). Returns the number of matches (0, 1, or 2 for
 * "more than one"; places that overlap count); *start and *end span the
 * first one.
 *
 * Linear in the text and the search: each line is hashed once, and the
 * search's lines are found in the text's as Knuth-Morris-Pratt finds a
 * string, lines for characters, so no line is compared more than a few
 * times. Comparing the whole search from every line, as this did, took
 * 34 s of the run loop's thread for a SEARCH of 40,000 lines missing in
 * a file of 100,000 that repeated them. */
static size_t loose_matches(const char *text, const char *search, size_t *start,
                            size_t *end, reach *how_far)
{
    size_t slen = strlen(search), m = tnd_str_count_lines(search, slen);
    bool whole_lines = slen > 0 && search[slen - 1] == '\n';
    bool lead = how_far != NULL;
    search_line *want;
    size_t *fail, n = 0, q = 0, lineno = 0;
    const char *s = search, *line = text;

    if (m == 0)
        return 0;
    want = tnd_xcalloc(m, sizeof(*want));
    fail = tnd_xcalloc(m, sizeof(*fail));
    for (size_t k = 0; k < m; k++) {
        const char *nl = strchr(s, '\n');
        size_t sl = nl ? (size_t)(nl - s + 1) : strlen(s);

        want[k].at = s;
        want[k].len = loose_len(&want[k].at, sl, lead);
        want[k].hash = line_hash(want[k].at, want[k].len);
        s += sl;
    }
    /* fail[k]: the longest proper prefix of want[0..k] that ends it */
    for (size_t k = 1, f = 0; k < m; k++) {
        for (;;) {
            if (same_line(want[k].at, want[k].len, want[k].hash, &want[f])) {
                f++;
                break;
            }
            if (f == 0)
                break;
            f = fail[f - 1];
        }
        fail[k] = f;
    }
    /* q: how many search lines the lines up to this one end with */
    while (*line) {
        const char *nl = strchr(line, '\n');
        size_t tl = nl ? (size_t)(nl - line + 1) : strlen(line);
        const char *at = line;
        size_t len = loose_len(&at, tl, lead);
        uint64_t hash = line_hash(at, len);

        for (;;) {
            if (same_line(at, len, hash, &want[q])) {
                q++;
                if (how_far && q > how_far->lines) {
                    how_far->lines = q;
                    how_far->from = lineno + 1 - q;
                }
                break;
            }
            if (q == 0)
                break;
            q = fail[q - 1];
        }
        if (q == m) {
            if (n == 0) {
                size_t off = (size_t)(line - text);
                *start = lines_back(text, off, m - 1);
                /* a last search line without a newline leaves the
                 * line's end in place, as an exact match would */
                *end = off + (whole_lines ? tl : len);
            }
            if (++n == 2)
                break; /* more than one: that is all it takes */
            q = fail[q - 1];
        }
        line += tl;
        lineno++;
    }
    free(want);
    free(fail);
    return n;
}

/* "line 14: `  return sum / count;`": where the first search line is
 * most alike in text, to help the coder see what it got wrong. */
static char *closest_line(const char *text, const char *search)
{
    const char *nl = strchr(search, '\n');
    size_t want =
        trimmed_len(search, nl ? (size_t)(nl - search) : strlen(search));
    const char *want_start = search;
    size_t best = 0, best_line = 0, lineno = 1;
    const char *best_at = NULL;
    size_t best_len = 0;

    while (want > 0 && (*want_start == ' ' || *want_start == '\t')) {
        want_start++;
        want--;
    }
    for (const char *line = text; *line; lineno++) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        size_t common = 0;
        const char *l = line;
        size_t ll = trimmed_len(line, len);
        while (ll > 0 && (*l == ' ' || *l == '\t')) {
            l++;
            ll--;
        }
        while (common < ll && common < want && l[common] == want_start[common])
            common++;
        if (common > best) {
            best = common;
            best_line = lineno;
            best_at = line;
            best_len = len;
        }
        if (!end)
            break;
        line = end + 1;
    }
    if (!best_at || best < 3)
        return tnd_xstrdup("no line of the file resembles its first line");
    {
        char *shown = tnd_xstrndup(best_at, best_len > 200 ? 200 : best_len);
        char *out =
            tnd_xasprintf("the closest line is %zu: `%s`", best_line, shown);
        free(shown);
        return out;
    }
}

/* Line n (from 0) of text: its start, its length without the line end
 * in *len; NULL past the end. */
static const char *nth_line(const char *text, size_t n, size_t *len)
{
    const char *nl;

    while (n > 0 && (nl = strchr(text, '\n')) != NULL) {
        text = nl + 1;
        n--;
    }
    if (n > 0 || !*text)
        return NULL;
    nl = strchr(text, '\n');
    *len = trimmed_len(text, nl ? (size_t)(nl - text) : strlen(text));
    return text;
}

/* Why search is not in text, for the coder: where it is with other
 * indentation; else the line where its first lines stop being the
 * file's (a SEARCH of 12 lines with one wrong was told only of its
 * first line); else the line most like its first. */
static char *what_is_there(const char *text, const char *search)
{
    reach got = {0, 0};
    size_t start = 0, end, ls, lt;
    const char *s, *t;
    char *out;

    if (loose_matches(text, search, &start, &end, &got) > 0)
        return tnd_xasprintf("it is there with other indentation from line "
                             "%zu on; copy the lines with the file's own "
                             "leading spaces and tabs",
                             tnd_str_count_lines(text, start) + 1);
    if (got.lines == 0)
        return closest_line(text, search);
    s = nth_line(search, got.lines, &ls);
    t = nth_line(text, got.from + got.lines, &lt);
    if (!s)
        return closest_line(text, search); /* not reached: it would match */
    if (!t)
        return tnd_xasprintf("its first %zu line%s %s the file's last, from "
                             "line %zu, and the file ends there",
                             got.lines, got.lines == 1 ? "" : "s",
                             got.lines == 1 ? "is" : "are", got.from + 1);
    out = tnd_xasprintf(
        "its first %zu line%s %s the file's from line %zu, but its line %zu "
        "`%.*s` is not the file's line %zu `%.*s`",
        got.lines, got.lines == 1 ? "" : "s", got.lines == 1 ? "is" : "are",
        got.from + 1, got.lines + 1, (int)(ls > 200 ? 200 : ls), s,
        got.from + got.lines + 1, (int)(lt > 200 ? 200 : lt), t);
    return out;
}

/* Whether search is in text at start, byte for byte, except that a line
 * of text may end in CRLF where search's ends in LF; *end is where the
 * match ends in text. git diff writes a file's lines as git stores them
 * (LF), and a tree checked out with core.autocrlf or eol=crlf holds them
 * as CRLF (every hunk was refused there). */
bool tnd_search_at(const char *text, size_t len, size_t start,
                   const char *search, size_t *end)
{
    size_t j = start;

    for (const char *p = search; *p; p++, j++) {
        if (j < len && text[j] == *p)
            continue;
        if (*p == '\n' && j + 1 < len && text[j] == '\r' && text[j + 1] == '\n')
            j++; /* the CR of a CRLF line end */
        else
            return false;
    }
    *end = j;
    return true;
}

tnd_search_result tnd_search_find(const char *text, size_t len,
                                  const char *search, size_t *start,
                                  size_t *end, char **hint)
{
    const char *at;
    size_t n = count_matches(text, len, search, &at);

    *hint = NULL;
    if (n > 1)
        return TND_SEARCH_MANY;
    if (n == 1) {
        *start = (size_t)(at - text);
        *end = *start + strlen(search);
        return TND_SEARCH_FOUND;
    }
    if ((n = loose_matches(text, search, start, end, NULL)) == 1)
        return TND_SEARCH_FOUND;
    if (n > 1)
        return TND_SEARCH_MANY;
    *hint = what_is_there(text, search);
    return TND_SEARCH_NONE;
}
