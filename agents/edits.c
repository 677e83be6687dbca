/* Parser for the coder's edit blocks (see edits.h). Works line by line
 * over the answer; marker lines are recognised by their shape, and
 * everything between markers is taken verbatim. */
#include "agents/edits.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/error.h"
#include "common/log.h"
#include "common/str.h"
#include "common/xalloc.h"

typedef enum marker {
    M_NONE,
    M_SEARCH,     /* <<<<<<< SEARCH */
    M_DIVIDER,    /* ======= */
    M_REPLACE,    /* >>>>>>> REPLACE */
    M_FILE_OPEN,  /* <<<<<<< FILE */
    M_FILE_CLOSE, /* >>>>>>> FILE */
    M_DEL_OPEN,   /* <<<<<<< DELETE */
    M_DEL_CLOSE,  /* >>>>>>> DELETE */
} marker;

typedef struct line {
    const char *start;
    size_t len;  /* without the newline */
    size_t full; /* with it, when there is one */
} line;

static bool keyword(const char *p, size_t n, const char *word)
{
    size_t w = strlen(word);

    while (n > 0 && (*p == ' ' || *p == '\t')) {
        p++;
        n--;
    }
    while (n > 0 && isspace((unsigned char)p[n - 1]))
        n--;
    return n == w && strncmp(p, word, w) == 0;
}

static marker classify(const line *l)
{
    const char *p = l->start;
    size_t n = l->len, run = 0;
    char c;

    while (n > 0 && isspace((unsigned char)p[n - 1]))
        n--;
    if (n < 5)
        return M_NONE;
    c = p[0];
    if (c != '<' && c != '>' && c != '=')
        return M_NONE;
    while (run < n && p[run] == c)
        run++;
    if (run < 5 || run > 9)
        return M_NONE;
    if (c == '=')
        return run == n ? M_DIVIDER : M_NONE;
    if (c == '<') {
        if (keyword(p + run, n - run, "SEARCH"))
            return M_SEARCH;
        if (keyword(p + run, n - run, "FILE"))
            return M_FILE_OPEN;
        if (keyword(p + run, n - run, "DELETE"))
            return M_DEL_OPEN;
        return M_NONE;
    }
    if (keyword(p + run, n - run, "REPLACE"))
        return M_REPLACE;
    if (keyword(p + run, n - run, "FILE"))
        return M_FILE_CLOSE;
    if (keyword(p + run, n - run, "DELETE"))
        return M_DEL_CLOSE;
    return M_NONE;
}

static line *split_lines(const char *text, size_t *count)
{
    line *lines = NULL;
    size_t n = 0, alloc = 0;
    const char *p = text;

    while (*p) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        TND_GROW(lines, alloc, n + 1);
        lines[n].start = p;
        lines[n].len = len > 0 && p[len - 1] == '\r' ? len - 1 : len;
        lines[n].full = nl ? len + 1 : len;
        n++;
        p += nl ? len + 1 : len;
    }
    *count = n;
    return lines;
}

static bool is_fence(const line *l)
{
    const char *p = l->start;
    size_t n = l->len;

    while (n > 0 && (*p == ' ' || *p == '\t')) {
        p++;
        n--;
    }
    return n >= 3 && (strncmp(p, "```", 3) == 0 || strncmp(p, "~~~", 3) == 0);
}

static bool is_blank(const line *l)
{
    for (size_t i = 0; i < l->len; i++)
        if (!isspace((unsigned char)l->start[i]))
            return false;
    return true;
}

static bool is_decoration(char c)
{
    return c == ' ' || c == '*' || c == '`' || c == '"' || c == '\'';
}

/* The path named on a line, with decoration removed: "### `src/a.c`:",
 * "**src/a.c**" and "**File:** src/a.c" all give "src/a.c". Caller
 * frees. */
static char *path_from(const line *l)
{
    char *s = tnd_xstrndup(l->start, l->len);
    char *p;
    size_t n;

    tnd_str_trim(s);
    p = s;
    while (*p == '#')
        p++;
    while (is_decoration(*p))
        p++;
    if (tnd_str_starts_with(p, "File:") || tnd_str_starts_with(p, "file:"))
        p += 5;
    while (is_decoration(*p))
        p++;
    n = strlen(p);
    while (n > 0 && (is_decoration(p[n - 1]) || p[n - 1] == ':'))
        n--;
    p = tnd_xstrndup(p, n);
    free(s);
    return p;
}

/* Text of lines [from, to) verbatim. Caller frees. */
static char *join(const line *lines, size_t from, size_t to)
{
    tnd_buf b;

    tnd_buf_init(&b, TND_BUF_NOCAP);
    for (size_t i = from; i < to; i++) {
        tnd_buf_append(&b, lines[i].start, lines[i].len);
        tnd_buf_puts(&b, "\n");
    }
    return tnd_buf_detach(&b, NULL);
}

int tnd_edits_parse(tnd_edit **edits_out, size_t *count_out,
                    char **rationale_out, const char *answer)
{
    size_t nlines = 0, n = 0, alloc = 0, prose_from = 0;
    line *lines = split_lines(answer, &nlines);
    tnd_edit *edits = NULL;
    char *last_path = NULL;
    tnd_buf rationale;
    int error = 0;

    *edits_out = NULL;
    *count_out = 0;
    *rationale_out = NULL;
    tnd_buf_init(&rationale, 64 * 1024);
    for (size_t i = 0; i < nlines && error == 0; i++) {
        marker m = classify(&lines[i]);
        marker want_close;
        size_t path_line = 0, j, divider = 0, dividers = 0;
        char *path = NULL;
        bool have_path = false;
        tnd_edit *e;

        if (m != M_SEARCH && m != M_FILE_OPEN && m != M_DEL_OPEN) {
            if (m != M_NONE) {
                error = tnd_error_set(
                    "line %zu: '%.*s' appears outside an edit block", i + 1,
                    (int)(lines[i].len > 40 ? 40 : lines[i].len),
                    lines[i].start);
            }
            continue;
        }
        /* the path: the nearest line above that is not blank or a fence,
         * and not already part of what came before */
        for (j = i; j > prose_from;) {
            j--;
            if (is_blank(&lines[j]) || is_fence(&lines[j]))
                continue;
            path_line = j;
            have_path = true;
            break;
        }
        if (have_path) {
            path = path_from(&lines[path_line]);
            if (strpbrk(path, " \t") &&
                ((!memchr(lines[path_line].start, '`', lines[path_line].len) &&
                  !memchr(lines[path_line].start, '"', lines[path_line].len)) ||
                 strpbrk(path, "`\""))) {
                /* a sentence, not a path ("And the helper goes in a
                 * header:" made a file of that name): a name with a
                 * space must be quoted, whole ("Put this in `a.h`:" is
                 * prose quoting a name). Quoted cut, so redacted first:
                 * a key across the cut would leave its head. */
                tnd_log_redact(path);
                error = tnd_error_set(
                    "edit block %zu at line %zu: the line above it, '%.60s', "
                    "reads as prose, not a file path; put the path alone on "
                    "that line (in backticks if it has spaces)",
                    n + 1, i + 1, path);
                free(path);
                break;
            }
        } else if (last_path) {
            path = tnd_xstrdup(last_path);
            path_line = i;
        } else {
            error = tnd_error_set("edit block %zu at line %zu has no file "
                                  "path on the line above it",
                                  n + 1, i + 1);
            break;
        }
        if (tnd_edit_path_check(path) < 0) {
            tnd_error_prefix("edit block %zu at line %zu", n + 1, i + 1);
            free(path);
            error = -1;
            break;
        }
        /* prose between blocks is rationale */
        for (size_t k = prose_from; k < path_line; k++) {
            if (is_fence(&lines[k]))
                continue;
            tnd_buf_append(&rationale, lines[k].start, lines[k].len);
            tnd_buf_puts(&rationale, "\n");
        }
        want_close = m == M_SEARCH      ? M_REPLACE
                     : m == M_FILE_OPEN ? M_FILE_CLOSE
                                        : M_DEL_CLOSE;
        for (j = i + 1; j < nlines; j++) {
            marker k = classify(&lines[j]);
            if (k == M_DIVIDER && m == M_SEARCH && divider) {
                /* which of two is the divider is a guess (a heading's
                 * underline in SEARCH split it at the wrong one) */
                dividers++;
            } else if (k == M_DIVIDER && m == M_SEARCH) {
                divider = j;
            } else if (k == want_close)
                break;
            else if (k == M_SEARCH || k == M_FILE_OPEN || k == M_DEL_OPEN)
                break;
        }
        if (j == nlines || classify(&lines[j]) != want_close) {
            error = tnd_error_set(
                "edit block %zu for %s (line %zu) is not closed by '%s'", n + 1,
                path, i + 1,
                want_close == M_REPLACE      ? ">>>>>>> REPLACE"
                : want_close == M_FILE_CLOSE ? ">>>>>>> FILE"
                                             : ">>>>>>> DELETE");
            free(path);
            break;
        }
        if (dividers) {
            error = tnd_error_set("edit block %zu for %s (line %zu) has more "
                                  "than one '=======' line, so where SEARCH "
                                  "ends is unclear; write the whole file in "
                                  "a FILE block instead",
                                  n + 1, path, i + 1);
            free(path);
            break;
        }
        if (m == M_SEARCH && !divider) {
            error = tnd_error_set("edit block %zu for %s (line %zu) has no "
                                  "'=======' between SEARCH and REPLACE",
                                  n + 1, path, i + 1);
            free(path);
            break;
        }
        if (n >= TND_BODY_MAX_EDITS) {
            error =
                tnd_error_set("more than %d edit blocks", TND_BODY_MAX_EDITS);
            free(path);
            break;
        }
        TND_GROW(edits, alloc, n + 1);
        e = &edits[n++];
        memset(e, 0, sizeof(*e));
        e->path = path;
        if (m == M_SEARCH) {
            e->kind = TND_EDIT_REPLACE;
            e->search = join(lines, i + 1, divider);
            /* an empty SEARCH means "create this file": a REPLACE of
             * nothing, which the workspace takes only where no file is
             * (as a WRITE it replaced a whole existing file) */
            e->replace = join(lines, divider + 1, j);
        } else if (m == M_FILE_OPEN) {
            e->kind = TND_EDIT_WRITE;
            e->search = tnd_xstrdup("");
            e->replace = join(lines, i + 1, j);
        } else {
            e->kind = TND_EDIT_DELETE;
            e->search = tnd_xstrdup("");
            e->replace = tnd_xstrdup("");
        }
        free(last_path);
        last_path = tnd_xstrdup(path);
        i = j;
        prose_from = j + 1;
    }
    if (error == 0 && n == 0)
        error = tnd_error_set("the answer contains no edit blocks (each "
                              "change needs a path line and a '<<<<<<< "
                              "SEARCH' ... '>>>>>>> REPLACE' or '<<<<<<< "
                              "FILE' ... '>>>>>>> FILE' block)");
    if (error == 0) {
        for (size_t k = prose_from; k < nlines; k++) {
            if (is_fence(&lines[k]))
                continue;
            tnd_buf_append(&rationale, lines[k].start, lines[k].len);
            tnd_buf_puts(&rationale, "\n");
        }
        *edits_out = edits;
        *count_out = n;
        *rationale_out = tnd_str_trim(tnd_buf_detach(&rationale, NULL));
    } else {
        tnd_edit_list_free(edits, n);
        tnd_buf_free(&rationale);
    }
    free(last_path);
    free(lines);
    return error;
}
