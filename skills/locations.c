/* Places in a skill's output (see locations.h).
 *
 * Each line is read once. Candidates start at the beginning of a line or
 * after a separator (space, bracket, quote, comma, '='), so every byte
 * is looked at a bounded number of times however the output is shaped.
 * A candidate is checked against the file system only after the cheap
 * tests (syntax, duplicates, a cache of paths already refused), and at
 * most CHECKS_MAX times per output. */
#include "skills/locations.h"

#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/fs.h"
#include "common/xalloc.h"
#include "proto/body.h"

#define CHECKS_MAX  1000
#define REFUSED_MAX 64

typedef struct finder {
    const char *ws;
    size_t ws_len;
    char *ws_real; /* the workspace without symlinks; NULL if unknown */
    size_t ws_real_len;
    tnd_location *locs;
    size_t n, alloc, max;
    size_t checks;
    char *refused[REFUSED_MAX]; /* ring of paths that are not files */
    size_t nrefused;
} finder;

static bool is_separator(char c)
{
    return strchr(" \t([{'\"<`,=", c) != NULL;
}

static bool ends_path(char c)
{
    return c == ':' || c == ' ' || c == '\t' || strchr("\"'()[]<>,;`{}|=", c);
}

static bool ends_number(const char *p, const char *end)
{
    return p == end || strchr(":]),. \t;\"'", *p) != NULL;
}

/* Up to 9 digits at *p; 0 when there are none or too many. */
static long digits(const char **p, const char *end)
{
    const char *s = *p;
    long v = 0;

    while (*p < end && **p >= '0' && **p <= '9') {
        if (*p - s == 9)
            return 0;
        v = v * 10 + (**p - '0');
        (*p)++;
    }
    return v;
}

/* path[0..n) relative to the workspace, or NULL when it cannot name a
 * file inside it. Caller frees. */
static char *relative(const finder *f, const char *path, size_t n)
{
    char *rel;
    const char *c;

    if (n && path[0] == '/') {
        if (n > f->ws_len && !strncmp(path, f->ws, f->ws_len) &&
            path[f->ws_len] == '/') {
            path += f->ws_len + 1;
            n -= f->ws_len + 1;
        } else if (f->ws_real && n > f->ws_real_len &&
                   !strncmp(path, f->ws_real, f->ws_real_len) &&
                   path[f->ws_real_len] == '/') {
            path += f->ws_real_len + 1;
            n -= f->ws_real_len + 1;
        } else {
            return NULL;
        }
    }
    while (n >= 2 && path[0] == '.' && path[1] == '/') {
        path += 2;
        n -= 2;
    }
    if (n == 0 || n > TND_BODY_MAX_PATH)
        return NULL;
    rel = tnd_xstrndup(path, n);
    for (c = rel;;) {
        const char *slash = strchr(c, '/');
        size_t len = slash ? (size_t)(slash - c) : strlen(c);
        if (len == 0 || (len == 1 && c[0] == '.') ||
            (len == 2 && c[0] == '.' && c[1] == '.')) {
            free(rel);
            return NULL;
        }
        if (!slash)
            break;
        c = slash + 1;
    }
    return rel;
}

/* A regular file whose real path lies inside the workspace. */
static bool is_workspace_file(const finder *f, const char *rel)
{
    char *full = tnd_fs_join(f->ws, rel);
    char *real = f->ws_real ? realpath(full, NULL) : NULL;
    struct stat st;
    bool ok = real && strncmp(real, f->ws_real, f->ws_real_len) == 0 &&
              real[f->ws_real_len] == '/' && stat(real, &st) == 0 &&
              S_ISREG(st.st_mode);

    free(real);
    free(full);
    return ok;
}

static void consider(finder *f, const char *path, size_t n, long line, long col)
{
    bool known = false;
    char *rel;

    /* a place the reply could not carry (the orchestrator refuses the
     * whole reply) is no place: "a.c:123456789:" is a tool's number, or
     * a test's words meant to make the audit fail */
    if (line < 1 || line > TND_AUDIT_MAX_LINE || f->n >= f->max ||
        !(rel = relative(f, path, n)))
        return;
    if (col > TND_AUDIT_MAX_COL)
        col = 0;
    for (size_t i = 0; i < f->n; i++) {
        if (strcmp(f->locs[i].file, rel) != 0)
            continue;
        known = true;
        if (f->locs[i].line == line && f->locs[i].col == col) {
            free(rel);
            return;
        }
    }
    for (size_t i = 0; !known && i < f->nrefused && i < REFUSED_MAX; i++)
        if (strcmp(f->refused[i], rel) == 0) {
            free(rel);
            return;
        }
    if (!known) {
        if (f->checks >= CHECKS_MAX) {
            free(rel);
            return;
        }
        f->checks++;
        if (!is_workspace_file(f, rel)) {
            size_t slot = f->nrefused++ % REFUSED_MAX;
            free(f->refused[slot]);
            f->refused[slot] = rel;
            return;
        }
    }
    TND_GROW(f->locs, f->alloc, f->n + 1);
    f->locs[f->n].file = rel;
    f->locs[f->n].line = line;
    f->locs[f->n].col = col;
    f->n++;
}

/* `File "PATH", line N` (after indentation); false when not that form. */
static bool python_frame(finder *f, const char *s, const char *end)
{
    const char *path, *q, *p;
    long line;

    while (s < end && (*s == ' ' || *s == '\t'))
        s++;
    if (end - s < 6 || memcmp(s, "File \"", 6) != 0)
        return false;
    path = s + 6;
    q = memchr(path, '"', (size_t)(end - path));
    if (!q)
        return false;
    p = q + 1;
    if (end - p < 7 || memcmp(p, ", line ", 7) != 0)
        return false;
    p += 7;
    line = digits(&p, end);
    if (line > 0 && ends_number(p, end))
        consider(f, path, (size_t)(q - path), line, 0);
    return true;
}

/* PATH:LINE[:COL] starting at s; at most one place. */
static void path_line(finder *f, const char *s, const char *end)
{
    const char *p = s, *path_end;
    long line, col = 0;

    while (p < end && !ends_path(*p))
        p++;
    if (p == s || p == end || *p != ':')
        return;
    path_end = p++;
    line = digits(&p, end);
    if (!line || !ends_number(p, end))
        return;
    if (p + 1 < end && *p == ':' && p[1] >= '0' && p[1] <= '9') {
        const char *q = p + 1;
        long c = digits(&q, end);
        if (ends_number(q, end))
            col = c;
    }
    consider(f, s, (size_t)(path_end - s), line, col);
}

static void scan_line(finder *f, const char *s, const char *end)
{
    if (python_frame(f, s, end))
        return;
    for (const char *p = s; p < end && f->n < f->max; p++)
        if (p == s || is_separator(p[-1]))
            path_line(f, p, end);
}

size_t tnd_locations_find(tnd_location **out, const char *text,
                          const char *workspace, size_t max)
{
    finder f;
    const char *p = text, *end = text + strlen(text);

    memset(&f, 0, sizeof(f));
    f.ws = workspace;
    f.ws_len = strlen(workspace);
    while (f.ws_len > 1 && workspace[f.ws_len - 1] == '/')
        f.ws_len--;
    f.ws_real = realpath(workspace, NULL);
    f.ws_real_len = f.ws_real ? strlen(f.ws_real) : 0;
    f.max = max;
    while (p < end && f.n < f.max && f.ws_real) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *line_end = nl ? nl : end;
        if (line_end > p && line_end[-1] == '\r')
            line_end--;
        scan_line(&f, p, line_end);
        p = nl ? nl + 1 : end;
    }
    for (size_t i = 0; i < f.nrefused && i < REFUSED_MAX; i++)
        free(f.refused[i]);
    free(f.ws_real);
    *out = f.n ? f.locs : NULL;
    if (!f.n)
        free(f.locs);
    return f.n;
}

void tnd_locations_free(tnd_location *locations, size_t n)
{
    for (size_t i = 0; locations && i < n; i++)
        free(locations[i].file);
    free(locations);
}
