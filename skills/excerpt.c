/* The part of a tool's output worth reading (see excerpt.h).
 *
 * Three passes, each linear. First the output is split into lines and
 * compiler diagnostics are grouped into blocks as gcc and clang print
 * them (skills/toolline says what each line is): the "In function" and
 * "In file included from" lines before, the diagnostic, then its source
 * excerpt, caret and notes. A warning block
 * whose diagnostic line (digits folded, so a shifted line number still
 * matches) is in the baseline is "old" and leaves the picture. Then lines
 * are picked by priority within the byte budget: failures with context,
 * the tail, new warnings, the head. Picking one line changes the number
 * of "left out" markers by -1, 0 or +1 depending only on its neighbours,
 * so the exact size of the result is known at every step and the budget
 * holds markers included. Last, the picked lines are written in their
 * original order. */
#include "skills/excerpt.h"

#include <assert.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/utf8.h"
#include "common/xalloc.h"
#include "skills/toolline.h"

#define LINE_SHOWN  500 /* bytes of one line shown when output is cut */
#define CONTEXT     2   /* lines kept on each side of a failure */
#define ERROR_LINES 12  /* lines of an error's block kept as the failure */
#define TAIL_SHARE  4   /* the tail gets up to 1/TAIL_SHARE of the room */

/* ---- the output as lines and blocks ------------------------------------- */

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static bool blank(char c)
{
    return c == ' ' || c == '\t';
}

static size_t strip_cr(const char *s, size_t len)
{
    return len && s[len - 1] == '\r' ? len - 1 : len;
}

enum { BLOCK_ERROR = 1, BLOCK_WARNING, BLOCK_OLD_WARNING };

typedef struct out_line {
    size_t off;   /* into the output */
    size_t len;   /* bytes without the newline ('\r' included) */
    size_t block; /* index + 1 into the blocks; 0: not in one */
    bool nl;      /* ended with a newline */
    bool failure; /* a failure line outside a diagnostic block */
} out_line;

/* A compiler diagnostic and the lines that go with it. */
typedef struct diag_block {
    size_t first, diag, end; /* line indexes: [first, end) */
    int kind;
} diag_block;

typedef struct parsed {
    const char *s;
    out_line *lines;
    size_t n, alloc;
    diag_block *blocks;
    size_t nblocks, balloc;
} parsed;

static void split(parsed *t, const char *s)
{
    const char *p = s;

    t->s = s;
    while (*p) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);

        TND_GROW(t->lines, t->alloc, t->n + 1);
        t->lines[t->n++] =
            (out_line){.off = (size_t)(p - s), .len = len, .nl = nl != NULL};
        p += len + (nl != NULL);
    }
}

/* The bytes of line i without a trailing '\r'. */
static const char *line_at(const parsed *t, size_t i, size_t *len)
{
    *len = strip_cr(t->s + t->lines[i].off, t->lines[i].len);
    return t->s + t->lines[i].off;
}

/* Where the block of the diagnostic on line d ends: gcc's excerpt lines,
 * clang's source line over its caret (and a fix-it under it), notes and
 * gcc's "required from" places. */
static size_t block_end(const parsed *t, size_t d)
{
    size_t j = d + 1, len, next_len = 0;
    bool caret = false;

    while (j < t->n) {
        const char *s = line_at(t, j, &len), *next = NULL;
        tnd_toolline_severity sev = tnd_toolline_diagnostic(s, len);

        if (j + 1 < t->n)
            next = line_at(t, j + 1, &next_len);
        if (sev == TND_TOOLLINE_NOTE || sev == TND_TOOLLINE_PLACE ||
            tnd_toolline_is_excerpt(s, len) || tnd_toolline_is_caret(s, len)) {
            caret = tnd_toolline_is_caret(s, len);
            j++;
        } else if (next && len && sev == TND_TOOLLINE_NONE &&
                   tnd_toolline_is_caret(next, next_len)) {
            caret = true;
            j += 2;
        } else if (caret && len && blank(s[0]) &&
                   !tnd_toolline_is_failure(s, len)) {
            caret = false; /* clang's fix-it under the caret */
            j++;
        } else {
            break;
        }
    }
    return j;
}

static void group(parsed *t)
{
    size_t i = 0, h, len;

    while (i < t->n) {
        const char *s;
        tnd_toolline_severity sev = TND_TOOLLINE_NONE;

        for (h = i; h < t->n; h++) {
            s = line_at(t, h, &len);
            if (!tnd_toolline_is_header(s, len))
                break;
        }
        if (h < t->n) {
            s = line_at(t, h, &len);
            sev = tnd_toolline_diagnostic(s, len);
        }
        if (sev == TND_TOOLLINE_WARNING || sev == TND_TOOLLINE_ERROR) {
            size_t end = block_end(t, h);

            TND_GROW(t->blocks, t->balloc, t->nblocks + 1);
            t->blocks[t->nblocks++] = (diag_block){
                i, h, end,
                sev == TND_TOOLLINE_ERROR ? BLOCK_ERROR : BLOCK_WARNING};
            for (; i < end; i++)
                t->lines[i].block = t->nblocks;
            continue;
        }
        /* headers not followed by a diagnostic are plain lines */
        for (h = h < t->n ? h + 1 : h; i < h; i++) {
            s = line_at(t, i, &len);
            t->lines[i].failure = tnd_toolline_is_failure(s, len);
        }
    }
}

/* ---- the baseline's warnings -------------------------------------------- */

/* A warning's diagnostic line with each run of digits as one '#', hashed
 * (FNV-1a): line and column numbers may shift between the two runs. */
static uint64_t warning_key(const char *s, size_t len)
{
    uint64_t h = UINT64_C(14695981039346656037);
    bool digits = false;

    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];

        if (is_digit(s[i]) && digits)
            continue;
        digits = is_digit(s[i]);
        h = (h ^ (digits ? '#' : c)) * UINT64_C(1099511628211);
    }
    return h;
}

static int compare_keys(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

    return x < y ? -1 : x > y;
}

/* The sorted keys of the warnings in baseline; *n gets their number.
 * Caller frees. */
static uint64_t *baseline_keys(const char *baseline, size_t *n)
{
    uint64_t *keys = NULL;
    size_t alloc = 0;
    const char *p = baseline;

    *n = 0;
    while (*p) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p), clen;

        clen = strip_cr(p, len);
        if (tnd_toolline_diagnostic(p, clen) == TND_TOOLLINE_WARNING) {
            TND_GROW(keys, alloc, *n + 1);
            keys[(*n)++] = warning_key(p, clen);
        }
        p += len + (nl != NULL);
    }
    if (*n)
        qsort(keys, *n, sizeof(*keys), compare_keys);
    return keys;
}

/* Mark the warnings that the baseline has too; their number. */
static size_t fold_old_warnings(parsed *t, const char *baseline)
{
    size_t nkeys, folded = 0, len;
    uint64_t *keys = baseline_keys(baseline, &nkeys);

    for (size_t b = 0; b < t->nblocks && nkeys; b++) {
        diag_block *bl = &t->blocks[b];
        const char *s = line_at(t, bl->diag, &len);
        uint64_t key = warning_key(s, len);

        if (bl->kind == BLOCK_WARNING &&
            bsearch(&key, keys, nkeys, sizeof(*keys), compare_keys)) {
            bl->kind = BLOCK_OLD_WARNING;
            folded++;
        }
    }
    free(keys);
    return folded;
}

/* ---- picking lines within the budget ------------------------------------ */

/* Length of s[0..len) cut to at most max bytes without splitting a UTF-8
 * sequence. Only a real sequence (a lead byte and its continuation bytes)
 * is kept whole; stray bytes of invalid UTF-8 are cut anywhere, so they
 * never pull the cut further back. */
static size_t utf8_cut(const char *s, size_t len, size_t max)
{
    size_t n = len < max ? len : max;

    if (n == len || ((unsigned char)s[n] & 0xC0) != 0x80)
        return n;
    return tnd_utf8_whole(s, n);
}

#define MARKER      "[... %zu line%s left out ...]\n"
#define LINE_MARKER " [... %zu more bytes of this line left out ...]"
#define NOTICE                                                              \
    "[... %zu compiler warning%s left out: %s there before the change too " \
    "...]\n"

/* The visible lines (old warnings gone), which of them are kept, and the
 * exact size of the result so far. */
typedef struct picker {
    const parsed *t;
    size_t *vis; /* line index of each visible position */
    size_t nvis;
    bool *kept;     /* per visible position */
    size_t used;    /* bytes of the kept lines as they will be shown */
    size_t markers; /* runs of left-out lines: one marker line each */
    size_t marker;  /* bytes of the longest marker line */
    size_t room;    /* bytes the lines and markers may take */
    size_t cap;     /* a line longer than this is cut */
    size_t *undo;   /* positions kept by the current try_keep() */
    size_t nundo, undo_alloc;
} picker;

/* Bytes line i takes in the result when cut at cap; *shown gets the bytes
 * of it shown. */
static size_t line_cost(const parsed *t, size_t i, size_t cap, size_t *shown)
{
    const out_line *l = &t->lines[i];
    size_t n;

    if (l->len <= cap) {
        *shown = l->len;
        return l->len + 1;
    }
    n = utf8_cut(t->s + l->off, l->len, cap);
    *shown = n;
    return n + (size_t)snprintf(NULL, 0, LINE_MARKER, l->len - n) + 1;
}

static void keep(picker *pk, size_t p)
{
    size_t shown;
    bool left, right;

    if (pk->kept[p])
        return;
    pk->kept[p] = true;
    pk->used += line_cost(pk->t, pk->vis[p], pk->cap, &shown);
    /* p was inside a run of left-out lines: that run now ends before it,
     * starts after it, both (one more marker) or neither (one fewer) */
    left = p > 0 && !pk->kept[p - 1];
    right = p + 1 < pk->nvis && !pk->kept[p + 1];
    pk->markers += (size_t)left + (size_t)right;
    pk->markers -= 1;
    TND_GROW(pk->undo, pk->undo_alloc, pk->nundo + 1);
    pk->undo[pk->nundo++] = p;
}

/* Keep the visible lines [a, b) if they all fit, else none of them. */
static bool try_keep(picker *pk, size_t a, size_t b)
{
    size_t used = pk->used, markers = pk->markers;

    if (b > pk->nvis)
        b = pk->nvis;
    pk->nundo = 0;
    for (size_t p = a; p < b; p++)
        keep(pk, p);
    if (pk->used + pk->markers * pk->marker <= pk->room)
        return true;
    for (size_t k = 0; k < pk->nundo; k++)
        pk->kept[pk->undo[k]] = false;
    pk->used = used;
    pk->markers = markers;
    return false;
}

/* A failure: visible lines [a, b), the line naming it at core. */
typedef struct unit {
    size_t a, b, core;
} unit;

static void keep_failure(picker *pk, const unit *u)
{
    size_t a = u->a >= CONTEXT ? u->a - CONTEXT : 0;

    if (!try_keep(pk, a, u->b + CONTEXT) && !try_keep(pk, u->a, u->b))
        try_keep(pk, u->core, u->core + 1);
}

/* The failures in output order; *n gets their number. Caller frees. */
static unit *failures(const parsed *t, const size_t *vpos, size_t *n)
{
    unit *units = NULL;
    size_t alloc = 0;

    *n = 0;
    for (size_t i = 0; i < t->n; i++) {
        const out_line *l = &t->lines[i];
        const diag_block *bl = l->block ? &t->blocks[l->block - 1] : NULL;
        size_t end;

        if (bl && bl->kind == BLOCK_ERROR && bl->first == i) {
            end = bl->end < bl->diag + 1 + ERROR_LINES
                      ? bl->end
                      : bl->diag + 1 + ERROR_LINES;
            TND_GROW(units, alloc, *n + 1);
            units[(*n)++] =
                (unit){vpos[i], vpos[i] + (end - i), vpos[bl->diag]};
        } else if (!bl && l->failure) {
            TND_GROW(units, alloc, *n + 1);
            units[(*n)++] = (unit){vpos[i], vpos[i] + 1, vpos[i]};
        }
    }
    return units;
}

/* Pick by priority: the first failure, the tail, the other failures,
 * the new warnings, the head. The first failure goes before the tail so
 * that a flood of later failures cannot push out the summary at the end,
 * nor the summary the failure that started it all. */
static void pick(picker *pk, const size_t *vpos)
{
    const parsed *t = pk->t;
    size_t nunits, spent = 0, shown;
    unit *units = failures(t, vpos, &nunits);

    if (nunits)
        keep_failure(pk, &units[0]);
    for (size_t p = pk->nvis; p-- > 0;) {
        spent += line_cost(t, pk->vis[p], pk->cap, &shown);
        if (spent > pk->room / TAIL_SHARE || !try_keep(pk, p, p + 1))
            break;
    }
    for (size_t k = 1; k < nunits; k++)
        keep_failure(pk, &units[k]);
    for (size_t b = 0; b < t->nblocks; b++) {
        const diag_block *bl = &t->blocks[b];

        if (bl->kind == BLOCK_WARNING &&
            !try_keep(pk, vpos[bl->first],
                      vpos[bl->first] + bl->end - bl->first))
            try_keep(pk, vpos[bl->diag], vpos[bl->diag] + 1);
    }
    for (size_t p = 0; p < pk->nvis; p++)
        if (!try_keep(pk, p, p + 1))
            break;
    free(units);
}

/* ---- writing the result ------------------------------------------------- */

static void put_marker(tnd_buf *b, size_t run, size_t *left_out)
{
    tnd_buf_printf(b, MARKER, run, run == 1 ? "" : "s");
    *left_out += run;
}

/* The kept lines in their order, each run of the others as one marker. */
static void render(tnd_buf *b, const picker *pk, size_t *left_out)
{
    const parsed *t = pk->t;
    size_t run = 0, shown;
    bool open = false; /* the last line written had no newline */

    for (size_t p = 0; p < pk->nvis; p++) {
        const out_line *l = &t->lines[pk->vis[p]];

        if (!pk->kept[p]) {
            run++;
            continue;
        }
        if (open)
            tnd_buf_puts(b, "\n");
        if (run)
            put_marker(b, run, left_out);
        run = 0;
        line_cost(t, pk->vis[p], pk->cap, &shown);
        tnd_buf_append(b, t->s + l->off, shown);
        if (shown < l->len)
            tnd_buf_printf(b, LINE_MARKER, l->len - shown);
        if (l->nl)
            tnd_buf_puts(b, "\n");
        open = !l->nl;
    }
    if (run) {
        if (open)
            tnd_buf_puts(b, "\n");
        put_marker(b, run, left_out);
    }
}

/* No room for markers: the first failure line (else the last line that
 * is not empty) cut to max bytes. */
static char *tiny(const picker *pk, size_t max)
{
    const parsed *t = pk->t;
    size_t chosen = SIZE_MAX;

    for (size_t p = 0; p < pk->nvis && chosen == SIZE_MAX; p++) {
        const out_line *l = &t->lines[pk->vis[p]];

        if (l->failure ||
            (l->block && t->blocks[l->block - 1].diag == pk->vis[p] &&
             t->blocks[l->block - 1].kind == BLOCK_ERROR))
            chosen = p;
    }
    for (size_t p = pk->nvis; p-- > 0 && chosen == SIZE_MAX;)
        if (t->lines[pk->vis[p]].len)
            chosen = p;
    if (chosen == SIZE_MAX)
        return tnd_xstrdup("");
    return tnd_xstrndup(t->s + t->lines[pk->vis[chosen]].off,
                        utf8_cut(t->s + t->lines[pk->vis[chosen]].off,
                                 t->lines[pk->vis[chosen]].len, max));
}

/* The line saying how many old warnings were folded, appended to b when
 * b is not NULL; its length. */
static size_t put_notice(tnd_buf *b, size_t folded)
{
    const char *s = folded == 1 ? "" : "s";
    const char *were = folded == 1 ? "it was" : "they were";

    if (b)
        tnd_buf_printf(b, NOTICE, folded, s, were);
    return (size_t)snprintf(NULL, 0, NOTICE, folded, s, were);
}

char *tnd_excerpt(const char *output, const char *baseline, size_t max,
                  tnd_excerpt_stats *stats)
{
    parsed t = {0};
    picker pk = {0};
    tnd_excerpt_stats st = {0, 0};
    size_t *vpos, whole = 0, notice = 0;
    tnd_buf b;
    char *line;

    assert(output);
    tnd_buf_init(&b, TND_BUF_NOCAP);
    split(&t, output);
    group(&t);
    if (baseline)
        st.warnings_folded = fold_old_warnings(&t, baseline);
    if (st.warnings_folded)
        notice = put_notice(NULL, st.warnings_folded);

    pk.t = &t;
    pk.vis = tnd_xcalloc(t.n + 1, sizeof(*pk.vis));
    pk.kept = tnd_xcalloc(t.n + 1, sizeof(*pk.kept));
    pk.cap = SIZE_MAX;
    vpos = tnd_xcalloc(t.n + 1, sizeof(*vpos));
    for (size_t i = 0; i < t.n; i++) {
        const out_line *l = &t.lines[i];

        vpos[i] = pk.nvis;
        if (l->block && t.blocks[l->block - 1].kind == BLOCK_OLD_WARNING)
            continue;
        pk.vis[pk.nvis++] = i;
        whole += l->len + l->nl;
    }
    pk.marker = (size_t)snprintf(NULL, 0, MARKER, pk.nvis, "s");

    if (!st.warnings_folded && strlen(output) <= max) {
        tnd_buf_puts(&b, output);
        goto out;
    }
    if (notice + whole <= max) {
        /* it fits once the old warnings are gone: all the rest, uncut */
        for (size_t p = 0; p < pk.nvis; p++)
            pk.kept[p] = true;
    } else if (max < TND_EXCERPT_MIN) {
        line = tiny(&pk, max);
        tnd_buf_puts(&b, line);
        free(line);
        st.lines_left_out = pk.nvis ? pk.nvis - 1 : 0;
        goto out;
    } else {
        /* the notice only when a marker still fits beside it */
        if (notice + pk.marker > max)
            notice = 0;
        pk.room = max - notice;
        pk.cap = pk.room / 3 < LINE_SHOWN ? pk.room / 3 : LINE_SHOWN;
        pk.markers = pk.nvis ? 1 : 0;
        pick(&pk, vpos);
    }
    if (notice)
        put_notice(&b, st.warnings_folded);
    render(&b, &pk, &st.lines_left_out);
out:
    assert(b.len <= max);
    if (stats)
        *stats = st;
    free(t.lines);
    free(t.blocks);
    free(pk.vis);
    free(pk.kept);
    free(pk.undo);
    free(vpos);
    return tnd_buf_detach(&b, NULL);
}
