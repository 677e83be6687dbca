/* Reading a unified diff (see patch.h).
 *
 * One pass over the lines. Inside a hunk the @@ counts say which lines
 * belong to it, so an added line that happens to start with "+++" or
 * "diff --git" is still content; a line the counts do not allow ends the
 * hunk early and is read as a header, so a lying count cannot swallow
 * the rest of the diff. */
#include "skills/patch.h"

#include <stdlib.h>
#include <string.h>

#include "common/diff.h"
#include "common/error.h"
#include "common/xalloc.h"

typedef struct parser {
    tnd_patch *patch;
    size_t alloc;
    tnd_patch_file *cur;
    bool header_open; /* cur came from "diff --git" and has no hunk yet */
    bool in_hunk;
    long old_left, new_left, new_line;
    tnd_patch_line_fn *on_added;
    void *payload;
} parser;

static bool starts(const char *s, size_t n, const char *prefix)
{
    size_t k = strlen(prefix);
    return n >= k && memcmp(s, prefix, k) == 0;
}

static int new_file(parser *P)
{
    tnd_patch *p = P->patch;

    if (p->nfiles == TND_PATCH_MAX_FILES)
        return tnd_error_set("the diff names more than %d files",
                             TND_PATCH_MAX_FILES);
    TND_GROW(p->files, P->alloc, p->nfiles + 1);
    P->cur = &p->files[p->nfiles++];
    memset(P->cur, 0, sizeof(*P->cur));
    P->in_hunk = false;
    P->header_open = false;
    return 0;
}

static void set_paths(tnd_patch_file *f, char *old_path, char *new_path)
{
    if (new_path) {
        free(f->path);
        f->path = new_path;
    }
    if (old_path) {
        free(f->old_path);
        f->old_path = old_path;
    }
    if (!f->path && f->old_path)
        f->path = tnd_xstrdup(f->old_path);
    if (!f->old_path && f->path)
        f->old_path = tnd_xstrdup(f->path);
}

/* "diff --git a/P b/P": the two halves are equal unless renamed, which
 * lets a path hold " b/" itself. */
static int git_header(parser *P, const char *s, size_t n)
{
    size_t half;

    if (new_file(P) < 0)
        return -1;
    P->header_open = true;
    if (n >= 5 && s[0] == '"' && (n - 1) % 2 == 0 && s[(n - 1) / 2] == ' ') {
        /* "a/P" "b/P": quoted names, each as long as the other */
        half = (n - 1) / 2;
        set_paths(P->cur, tnd_diff_path(s, half),
                  tnd_diff_path(s + half + 1, n - half - 1));
        return 0;
    }
    if (n >= 5 && (n - 5) % 2 == 0) {
        half = (n - 5) / 2;
        if (starts(s, n, "a/") && memcmp(s + 2 + half, " b/", 3) == 0 &&
            memcmp(s + 2, s + 5 + half, half) == 0) {
            set_paths(P->cur, tnd_xstrndup(s + 2, half),
                      tnd_xstrndup(s + 2, half));
            return 0;
        }
    }
    for (size_t i = 0; i + 3 <= n; i++)
        if (memcmp(s + i, " b/", 3) == 0) {
            set_paths(P->cur, tnd_diff_path(s, i),
                      tnd_diff_path(s + i + 1, n - i - 1));
            return 0;
        }
    set_paths(P->cur, NULL, tnd_diff_path(s, n));
    return 0;
}

static long number(const char **s, const char *end)
{
    long v = 0;

    while (*s < end && **s >= '0' && **s <= '9') {
        if (v < 100000000L)
            v = v * 10 + (**s - '0');
        (*s)++;
    }
    return v;
}

/* "@@ -a[,b] +c[,d] @@ ...". */
static void hunk_header(parser *P, const char *s, size_t n)
{
    const char *p = s + 3, *end = s + n;
    long old_count = 1, new_start, new_count = 1;

    if (p >= end || *p != '-')
        return;
    p++;
    number(&p, end);
    if (p < end && *p == ',') {
        p++;
        old_count = number(&p, end);
    }
    if (p + 1 >= end || p[0] != ' ' || p[1] != '+')
        return;
    p += 2;
    new_start = number(&p, end);
    if (p < end && *p == ',') {
        p++;
        new_count = number(&p, end);
    }
    if (!P->cur)
        return; /* a hunk without a file header: nothing to attach to */
    P->in_hunk = true;
    P->header_open = false;
    P->old_left = old_count;
    P->new_left = new_count;
    P->new_line = new_start;
    if (!P->cur->first_line)
        P->cur->first_line = new_start > 0 ? new_start : 1;
}

/* A line inside a hunk; false when the counts do not allow it. */
static bool hunk_line(parser *P, const char *s, size_t n, size_t raw)
{
    tnd_patch *p = P->patch;
    tnd_patch_file *f = P->cur;
    char c = n ? s[0] : ' ';

    if (c == '\\')
        return true; /* "\ No newline at end of file" */
    if (c == '+' && P->new_left > 0) {
        f->added++;
        p->added++;
        f->added_bytes += raw - 1; /* without the leading + */
        if (f->added == 1)
            f->first_line = P->new_line;
        if (P->on_added)
            P->on_added(p, (size_t)(f - p->files), P->new_line, s + 1, n - 1,
                        P->payload);
        P->new_line++;
        P->new_left--;
    } else if (c == '-' && P->old_left > 0) {
        f->removed++;
        p->removed++;
        P->old_left--;
    } else if (c == ' ' && P->old_left > 0 && P->new_left > 0) {
        P->old_left--;
        P->new_left--;
        P->new_line++;
    } else {
        return false;
    }
    if (P->old_left == 0 && P->new_left == 0)
        P->in_hunk = false;
    return true;
}

static int header_line(parser *P, const char *s, size_t n, const char *next,
                       size_t next_n)
{
    if (starts(s, n, "diff --git "))
        return git_header(P, s + 11, n - 11);
    if (starts(s, n, "--- ") && starts(next, next_n, "+++ ")) {
        if (!P->header_open && new_file(P) < 0)
            return -1;
        set_paths(P->cur, tnd_diff_path(s + 4, n - 4), NULL);
        return 0;
    }
    if (starts(s, n, "@@ -")) {
        hunk_header(P, s, n);
        return 0;
    }
    if (!P->cur)
        return 0;
    if (starts(s, n, "+++ ")) {
        char *path = tnd_diff_path(s + 4, n - 4);
        if (path)
            set_paths(P->cur, NULL, path);
        else
            P->cur->deleted = true;
    } else if (starts(s, n, "new file mode")) {
        P->cur->created = true;
    } else if (starts(s, n, "deleted file mode")) {
        P->cur->deleted = true;
    } else if (starts(s, n, "rename from ")) {
        set_paths(P->cur, tnd_diff_path(s + 12, n - 12), NULL);
    } else if (starts(s, n, "rename to ")) {
        set_paths(P->cur, NULL, tnd_diff_path(s + 10, n - 10));
    } else if (starts(s, n, "Binary files ") ||
               starts(s, n, "GIT binary patch")) {
        P->cur->binary = true;
    }
    return 0;
}

int tnd_patch_parse(tnd_patch *out, const char *diff, size_t len,
                    tnd_patch_line_fn *on_added, void *payload)
{
    parser P;
    const char *p = diff, *end = diff + len;

    memset(out, 0, sizeof(*out));
    memset(&P, 0, sizeof(P));
    P.patch = out;
    P.on_added = on_added;
    P.payload = payload;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *line_end = nl ? nl : end;
        size_t raw = (size_t)(line_end - p) + (nl ? 1 : 0);
        size_t n = (size_t)(line_end - p);
        const char *next = nl ? nl + 1 : end;
        const char *next_end;
        size_t next_n;

        if (n && p[n - 1] == '\r')
            n--;
        next_end = memchr(next, '\n', (size_t)(end - next));
        next_n = (size_t)((next_end ? next_end : end) - next);
        if (!(P.in_hunk && hunk_line(&P, p, n, raw))) {
            P.in_hunk = false;
            if (header_line(&P, p, n, next, next_n) < 0)
                return -1;
        }
        p = next;
    }
    for (size_t i = 0; i < out->nfiles; i++) {
        tnd_patch_file *f = &out->files[i];
        if (!f->path)
            set_paths(f, NULL, tnd_xstrdup(""));
        if (f->deleted && f->old_path && strcmp(f->path, f->old_path) != 0)
            set_paths(f, NULL, tnd_xstrdup(f->old_path));
    }
    return 0;
}

void tnd_patch_clear(tnd_patch *patch)
{
    for (size_t i = 0; i < patch->nfiles; i++) {
        free(patch->files[i].path);
        free(patch->files[i].old_path);
    }
    free(patch->files);
    memset(patch, 0, sizeof(*patch));
}

const char **tnd_patch_paths(const tnd_patch *patch)
{
    const char **out = tnd_xcalloc(patch->nfiles * 2 + 1, sizeof(char *));
    size_t n = 0;

    for (size_t i = 0; i < patch->nfiles; i++) {
        const tnd_patch_file *f = &patch->files[i];
        if (*f->path)
            out[n++] = f->path;
        if (f->old_path && *f->old_path && strcmp(f->old_path, f->path) != 0)
            out[n++] = f->old_path;
    }
    return out;
}
