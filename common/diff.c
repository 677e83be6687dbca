/* Unified diffs in git's format (see diff.h).
 *
 * The pipeline: split both texts into lines; give every distinct line a
 * class number (hash, then a full compare on equal hashes), so the rest of
 * the module compares integers; set aside lines that occur nowhere in the
 * other file (they are changes in every script, and on two unrelated files
 * this leaves nothing to search); run Myers' linear-space divide and
 * conquer on what is left; slide each run of changes along identical
 * neighbours the way GNU diff and git do, so a repeated line is reported
 * where a person expects it; then print hunks with 3 lines of context.
 *
 * Memory is O(N+M). Time is O((N+M)D) for an edit distance D, except that
 * one middle-snake search gives up after max_cost steps and splits at the
 * furthest point it reached: the script stays correct, it may just not be
 * minimal. */
#include "common/diff.h"

#include <assert.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/str.h"
#include "common/xalloc.h"

#define CONTEXT   3        /* lines of context around a change */
#define MIN_COST  4096     /* edit steps one split may take before giving up */
#define MODE      "100644" /* we diff regular files only... */
#define MODE_EXEC "100755" /* ...executable or not */

struct line {
    const char *p;
    size_t len; /* including the '\n', when there is one */
    uint64_t hash;
    long cls; /* equal lines, and only those, share a class */
};

struct side {
    struct line *lines;
    long n;
    char *chg;  /* chg[i]: line i is removed (old) or added (new); chg[-1]
                   and chg[n] exist and stay 0 as sentinels */
    long *kept; /* classes of the lines that occur in the other file */
    long *map;  /* kept[i] is line map[i] */
    long nkept;
};

struct ctx {
    struct side a, b;
    long *fv;  /* furthest x on each diagonal k = x - y, searching forward */
    long *bv;  /* smallest x on each diagonal, searching backward */
    long kofs; /* diagonal k lives at fv[k + kofs], bv[k + kofs] */
    long max_cost;
};

/* A distinct line: its first occurrence and how often it occurs. */
struct cls {
    const struct line *rep;
    long count[2]; /* in old, in new */
};

static uint64_t hash_bytes(const char *p, size_t len)
{
    uint64_t h = 0xcbf29ce484222325u; /* FNV-1a */

    while (len--) {
        h ^= (unsigned char)*p++;
        h *= 0x100000001b3u;
    }
    return h;
}

static void split_lines(struct side *s, const char *text, size_t len)
{
    const char *p = text, *end = text + len, *nl;
    long n = 0;

    for (nl = p; nl < end && (nl = memchr(nl, '\n', end - nl)); nl++)
        n++;
    if (len && text[len - 1] != '\n')
        n++;
    s->lines = tnd_xcalloc(n + 1, sizeof(*s->lines));
    s->chg = (char *)tnd_xcalloc(n + 2, 1) + 1;
    s->kept = tnd_xcalloc(n + 1, sizeof(*s->kept));
    s->map = tnd_xcalloc(n + 1, sizeof(*s->map));
    s->n = n;
    for (n = 0; p < end; n++) {
        nl = memchr(p, '\n', end - p);
        s->lines[n].p = p;
        s->lines[n].len = nl ? (size_t)(nl - p) + 1 : (size_t)(end - p);
        s->lines[n].hash = hash_bytes(p, s->lines[n].len);
        p += s->lines[n].len;
    }
}

static int same_text(const struct line *x, const struct line *y)
{
    return x->hash == y->hash && x->len == y->len &&
           memcmp(x->p, y->p, x->len) == 0;
}

/* Number the distinct lines of both files through an open-addressing
 * table, then keep for the search only lines whose class occurs on both
 * sides; the others are marked changed right away. */
static void classify(struct ctx *c)
{
    struct cls *cls;
    struct side *sides[2] = {&c->a, &c->b};
    size_t total = (size_t)c->a.n + (size_t)c->b.n, size = 16, h;
    long *slots, ncls = 0, i, id;

    while (size < 2 * total)
        size *= 2;
    slots = tnd_xcalloc(size, sizeof(*slots)); /* class + 1; 0 is free */
    cls = tnd_xcalloc(total + 1, sizeof(*cls));
    for (int f = 0; f < 2; f++) {
        for (i = 0; i < sides[f]->n; i++) {
            struct line *l = &sides[f]->lines[i];

            for (h = l->hash & (size - 1);; h = (h + 1) & (size - 1)) {
                if (!slots[h]) { /* first of its kind: a new class */
                    cls[ncls].rep = l;
                    slots[h] = ++ncls;
                }
                if (same_text(cls[slots[h] - 1].rep, l))
                    break;
            }
            l->cls = slots[h] - 1;
            cls[l->cls].count[f]++;
        }
    }
    for (int f = 0; f < 2; f++) {
        struct side *s = sides[f];

        for (i = 0; i < s->n; i++) {
            id = s->lines[i].cls;
            if (cls[id].count[1 - f]) {
                s->kept[s->nkept] = id;
                s->map[s->nkept++] = i;
            } else {
                s->chg[i] = 1;
            }
        }
    }
    free(cls);
    free(slots);
}

/* Find a point (*xs, *ys) on a shortest edit path through the box
 * kept a[x0, x1) x kept b[y0, y1), by running Myers' search from both
 * corners until the paths overlap. Both ranges are non-empty and differ in
 * their first and last lines, so the point is never a corner. After
 * max_cost steps, settle for the furthest point either search reached.
 *
 * Diagonals outside the box are never visited, but a path may run past
 * its right or bottom edge; such a point can never be where the searches
 * first meet (a path through the edge would have met sooner), so only
 * the give-up branch has to pull points back into the box. */
static void find_split(struct ctx *c, long x0, long x1, long y0, long y1,
                       long *xs, long *ys)
{
    const long *A = c->a.kept, *B = c->b.kept;
    long *fv = c->fv + c->kofs, *bv = c->bv + c->kofs;
    long kmin = x0 - y1, kmax = x1 - y0;
    long fmid = x0 - y0, bmid = x1 - y1;
    int odd = (fmid - bmid) % 2 != 0;
    long flo = fmid, fhi = fmid, blo = bmid, bhi = bmid;
    long d, k, x, y, plo, phi;
    long fbest = LONG_MIN, bbest = LONG_MAX, fx = x0, fy = y0, bx = x1, by = y1;

    fv[fmid] = x0;
    bv[bmid] = x1;
    for (d = 1;; d++) {
        /* One more edit forward: reach each diagonal from its neighbours
         * of the previous step, then follow the snake of equal lines. */
        plo = flo;
        phi = fhi;
        flo += flo > kmin ? -1 : 1;
        fhi += fhi < kmax ? 1 : -1;
        for (k = fhi; k >= flo; k -= 2) {
            x = k - 1 >= plo ? fv[k - 1] + 1 : LONG_MIN; /* remove */
            if (k + 1 <= phi && fv[k + 1] > x)
                x = fv[k + 1]; /* add */
            y = x - k;
            while (x < x1 && y < y1 && A[x] == B[y]) {
                x++;
                y++;
            }
            fv[k] = x;
            if (odd && blo <= k && k <= bhi && bv[k] <= x) {
                *xs = x;
                *ys = y;
                return;
            }
        }

        /* One more edit backward, the mirror image. */
        plo = blo;
        phi = bhi;
        blo += blo > kmin ? -1 : 1;
        bhi += bhi < kmax ? 1 : -1;
        for (k = blo; k <= bhi; k += 2) {
            x = k + 1 <= phi ? bv[k + 1] - 1 : LONG_MAX; /* remove */
            if (k - 1 >= plo && bv[k - 1] < x)
                x = bv[k - 1]; /* add */
            y = x - k;
            while (x > x0 && y > y0 && A[x - 1] == B[y - 1]) {
                x--;
                y--;
            }
            bv[k] = x;
            if (!odd && flo <= k && k <= fhi && fv[k] >= x) {
                *xs = x;
                *ys = y;
                return;
            }
        }

        if (d >= c->max_cost)
            break;
    }

    /* Too expensive: take whichever search got further from its corner,
     * measured in lines consumed (x + y). */
    for (k = flo; k <= fhi; k += 2) {
        x = fv[k] < x1 ? fv[k] : x1;
        y = x - k;
        if (y > y1) {
            y = y1;
            x = y1 + k;
        }
        if (x + y > fbest) {
            fbest = x + y;
            fx = x;
            fy = y;
        }
    }
    for (k = blo; k <= bhi; k += 2) {
        x = bv[k] > x0 ? bv[k] : x0;
        y = x - k;
        if (y < y0) {
            y = y0;
            x = y0 + k;
        }
        if (x + y < bbest) {
            bbest = x + y;
            bx = x;
            by = y;
        }
    }
    if (fbest - (x0 + y0) >= (x1 + y1) - bbest) {
        *xs = fx;
        *ys = fy;
    } else {
        *xs = bx;
        *ys = by;
    }
}

static void mark(struct side *s, long from, long to)
{
    while (from < to)
        s->chg[s->map[from++]] = 1;
}

/* Mark the changes between kept a[x0, x1) and kept b[y0, y1). Recurses
 * into the smaller half of each split and loops on the larger, so the
 * stack stays O(log(N+M)) deep. */
static void compare(struct ctx *c, long x0, long x1, long y0, long y1)
{
    const long *A = c->a.kept, *B = c->b.kept;
    long xs, ys;

    for (;;) {
        while (x0 < x1 && y0 < y1 && A[x0] == B[y0]) {
            x0++;
            y0++;
        }
        while (x0 < x1 && y0 < y1 && A[x1 - 1] == B[y1 - 1]) {
            x1--;
            y1--;
        }
        if (x0 == x1 || y0 == y1)
            break;
        find_split(c, x0, x1, y0, y1, &xs, &ys);
        assert(x0 <= xs && xs <= x1 && y0 <= ys && ys <= y1);
        if ((xs == x0 && ys == y0) || (xs == x1 && ys == y1))
            break; /* no progress (cannot happen): all changed is correct */
        if ((xs - x0) + (ys - y0) < (x1 - xs) + (y1 - ys)) {
            compare(c, x0, xs, y0, ys);
            x0 = xs;
            y0 = ys;
        } else {
            compare(c, xs, x1, ys, y1);
            x1 = xs;
            y1 = ys;
        }
    }
    mark(&c->a, x0, x1);
    mark(&c->b, y0, y1);
}

/* Slide each run of changed lines in s as far up as identical lines allow
 * (merging with runs it meets), then as far down, until it stops growing;
 * then move it back up to the lowest place where it sits level with
 * changes in the other file o, if there is one. A run of k changed lines
 * followed by a line equal to its first one says the same as the run one
 * line lower, so the script stays valid and no longer than before; this is
 * the convention GNU diff and git share. j walks o in step with i: o's
 * line j is the unchanged partner of s's line i (or o->n when i is s->n). */
static void compact(struct side *s, const struct side *o)
{
    char *chg = s->chg;
    const char *och = o->chg;
    const struct line *l = s->lines;
    long i = 0, j = 0, start, len, level;

    for (;;) {
        while (i < s->n && !chg[i]) {
            while (och[j])
                j++;
            i++;
            j++;
        }
        if (i == s->n)
            break;
        start = i;
        while (chg[i])
            i++;
        while (och[j])
            j++;
        do {
            len = i - start;
            while (start > 0 && l[start - 1].cls == l[i - 1].cls) {
                chg[--start] = 1;
                chg[--i] = 0;
                while (chg[start - 1])
                    start--;
                do
                    j--;
                while (och[j]);
            }
            level = j > 0 && och[j - 1] ? i : -1;
            while (i < s->n && l[start].cls == l[i].cls) {
                chg[start++] = 0;
                chg[i++] = 1;
                while (chg[i])
                    i++;
                for (j++; och[j]; j++)
                    level = i;
            }
        } while (len != i - start);
        while (level >= 0 && i > level) {
            chg[--start] = 1;
            chg[--i] = 0;
            do
                j--;
            while (och[j]);
        }
    }
}

static void ctx_free(struct ctx *c)
{
    struct side *sides[2] = {&c->a, &c->b};

    for (int f = 0; f < 2; f++) {
        free(sides[f]->lines);
        free(sides[f]->chg ? sides[f]->chg - 1 : NULL);
        free(sides[f]->kept);
        free(sides[f]->map);
    }
    free(c->fv);
    free(c->bv);
}

/* Fill c->a.chg and c->b.chg with an edit script from old to new. */
static void build_script(struct ctx *c, const char *old_text, size_t old_len,
                         const char *new_text, size_t new_len)
{
    long n, m;

    split_lines(&c->a, old_text, old_len);
    split_lines(&c->b, new_text, new_len);
    classify(c);
    n = c->a.nkept;
    m = c->b.nkept;
    /* Diagonals run from -m to n. */
    c->fv = tnd_xcalloc(n + m + 1, sizeof(long));
    c->bv = tnd_xcalloc(n + m + 1, sizeof(long));
    c->kofs = m;
    c->max_cost = MIN_COST;
    while (c->max_cost < (n + m) / c->max_cost)
        c->max_cost *= 2; /* about sqrt(N+M) for huge inputs */
    compare(c, 0, n, 0, m);
    compact(&c->a, &c->b);
    compact(&c->b, &c->a);
}

/* One changed region: old lines [i0, i1) and new lines [j0, j1), with
 * unchanged lines on both sides. */
struct group {
    long i0, i1, j0, j1;
};

/* Find the first change at or after old line i / new line j (a pair of
 * unchanged partners, or the ends); 0 when there is none. */
static int next_group(const struct ctx *c, long i, long j, struct group *g)
{
    const struct side *a = &c->a, *b = &c->b;

    while ((i < a->n || j < b->n) && !a->chg[i] && !b->chg[j]) {
        i++;
        j++;
    }
    if (i == a->n && j == b->n)
        return 0;
    g->i0 = i;
    g->j0 = j;
    while (a->chg[i])
        i++;
    while (b->chg[j])
        j++;
    g->i1 = i;
    g->j1 = j;
    return 1;
}

static int emit_line(tnd_buf *out, char sign, const struct line *l)
{
    if (tnd_buf_append(out, &sign, 1) < 0 ||
        tnd_buf_append(out, l->p, l->len) < 0)
        return -1;
    if (l->p[l->len - 1] != '\n')
        return tnd_buf_puts(out, "\n\\ No newline at end of file\n");
    return 0;
}

/* "-l,s" as GNU diff writes it: ",1" left out, and an empty range named
 * by the line before it. start is 0-based. */
static int emit_range(tnd_buf *out, char sign, long start, long count)
{
    if (count == 0)
        return tnd_buf_printf(out, "%c%ld,0", sign, start);
    if (count == 1)
        return tnd_buf_printf(out, "%c%ld", sign, start + 1);
    return tnd_buf_printf(out, "%c%ld,%ld", sign, start + 1, count);
}

/* Print the changes from first through last (gaps of at most 2 * CONTEXT
 * unchanged lines between them) as one hunk. */
static int emit_hunk(tnd_buf *out, const struct ctx *c,
                     const struct group *first, const struct group *last)
{
    const struct side *a = &c->a, *b = &c->b;
    long lead = first->i0 < CONTEXT ? first->i0 : CONTEXT;
    long trail = a->n - last->i1 < CONTEXT ? a->n - last->i1 : CONTEXT;
    long i = first->i0 - lead, j = first->j0 - lead;
    long iend = last->i1 + trail, jend = last->j1 + trail;

    if (tnd_buf_puts(out, "@@ ") < 0 || emit_range(out, '-', i, iend - i) < 0 ||
        tnd_buf_puts(out, " ") < 0 || emit_range(out, '+', j, jend - j) < 0 ||
        tnd_buf_puts(out, " @@\n") < 0)
        return -1;
    while (i < iend || j < jend) {
        if (!a->chg[i] && !b->chg[j]) {
            if (emit_line(out, ' ', &a->lines[i]) < 0)
                return -1;
            i++;
            j++;
            continue;
        }
        for (; a->chg[i]; i++)
            if (emit_line(out, '-', &a->lines[i]) < 0)
                return -1;
        for (; b->chg[j]; j++)
            if (emit_line(out, '+', &b->lines[j]) < 0)
                return -1;
    }
    return 0;
}

static int emit_hunks(tnd_buf *out, const struct ctx *c)
{
    struct group first, last, g;
    int more = next_group(c, 0, 0, &g);

    while (more) {
        first = last = g;
        while ((more = next_group(c, last.i1, last.j1, &g)) &&
               g.i0 - last.i1 <= 2 * CONTEXT)
            last = g;
        if (emit_hunk(out, c, &first, &last) < 0)
            return -1;
    }
    return 0;
}

/* git's mode of a regular file: executable or not */
static const char *git_mode(bool exec)
{
    return exec ? MODE_EXEC : MODE;
}

static int emit_header(tnd_buf *out, const char *path, int has_old, int has_new,
                       bool old_exec, bool new_exec, int binary, int empty)
{
    if (tnd_buf_printf(out, "diff --git a/%s b/%s\n", path, path) < 0 ||
        (!has_old &&
         tnd_buf_printf(out, "new file mode %s\n", git_mode(new_exec)) < 0) ||
        (!has_new && tnd_buf_printf(out, "deleted file mode %s\n",
                                    git_mode(old_exec)) < 0) ||
        (has_old && has_new && old_exec != new_exec &&
         tnd_buf_printf(out, "old mode %s\nnew mode %s\n", git_mode(old_exec),
                        git_mode(new_exec)) < 0))
        return -1;
    if (binary)
        return tnd_buf_printf(out, "Binary files %s%s and %s%s differ\n",
                              has_old ? "a/" : "/dev/null", has_old ? path : "",
                              has_new ? "b/" : "/dev/null",
                              has_new ? path : "");
    if (empty) /* an empty file created or deleted: git prints no ---/+++ */
        return 0;
    if ((has_old ? tnd_buf_printf(out, "--- a/%s\n", path)
                 : tnd_buf_puts(out, "--- /dev/null\n")) < 0)
        return -1;
    return has_new ? tnd_buf_printf(out, "+++ b/%s\n", path)
                   : tnd_buf_puts(out, "+++ /dev/null\n");
}

int tnd_diff_file(tnd_buf *out, const char *path, const char *old_text,
                  size_t old_len, const char *new_text, size_t new_len)
{
    return tnd_diff_file_exec(out, path, old_text, old_len, false, new_text,
                              new_len, false);
}

int tnd_diff_file_exec(tnd_buf *out, const char *path, const char *old_text,
                       size_t old_len, bool old_exec, const char *new_text,
                       size_t new_len, bool new_exec)
{
    struct ctx c;
    size_t mark_len = out->len;
    bool same;
    int binary, error;

    assert(path != NULL);
    assert(old_text != NULL || old_len == 0);
    assert(new_text != NULL || new_len == 0);
    memset(&c, 0, sizeof(c));
    same = (old_text != NULL) == (new_text != NULL) && old_len == new_len &&
           (old_len == 0 || memcmp(old_text, new_text, old_len) == 0);
    if (same && (!old_text || old_exec == new_exec))
        return 0;
    binary = (old_len && memchr(old_text, '\0', old_len)) ||
             (new_len && memchr(new_text, '\0', new_len));
    /* the same bytes, another mode: git's header and mode lines alone */
    error = emit_header(out, path, old_text != NULL, new_text != NULL, old_exec,
                        new_exec, binary && !same,
                        (old_len == 0 && new_len == 0) || same);
    if (error < 0 || binary || same || (old_len == 0 && new_len == 0))
        goto out;
    build_script(&c, old_text ? old_text : "", old_len,
                 new_text ? new_text : "", new_len);
    error = emit_hunks(out, &c);
out:
    ctx_free(&c);
    if (error < 0) {
        out->len = mark_len; /* leave no half-written diff behind */
        if (out->data)
            out->data[mark_len] = '\0';
        tnd_error_prefix("diff of %s", path);
    }
    return error;
}

/* Read "-l[,s]" (or "+l[,s]") at *p, storing s (1 when left out). */
static int parse_range(const char **p, const char *end, char sign,
                       size_t *count)
{
    const char *q = *p;
    int seen = 0;

    if (q == end || *q++ != sign)
        return -1;
    while (q < end && *q >= '0' && *q <= '9')
        q++, seen = 1;
    *count = 1;
    if (q < end && *q == ',') {
        *count = 0;
        for (q++; q < end && *q >= '0' && *q <= '9'; q++)
            *count = *count * 10 + (size_t)(*q - '0');
    }
    *p = q;
    return seen ? 0 : -1;
}

void tnd_diff_stat(const char *diff, size_t len, size_t *added_out,
                   size_t *removed_out)
{
    const char *p = diff, *end = diff + len, *eol, *q;
    size_t added = 0, removed = 0, old_left = 0, new_left = 0;

    for (; p < end; p = eol) {
        eol = memchr(p, '\n', end - p);
        eol = eol ? eol + 1 : end;
        /* Inside a hunk the @@ counts say how many lines remain, so a
         * removed line that reads "-- x" is not taken for a header. */
        if (*p == ' ' && (old_left || new_left)) {
            old_left -= old_left > 0;
            new_left -= new_left > 0;
        } else if (*p == '-' && old_left) {
            removed++;
            old_left--;
        } else if (*p == '+' && new_left) {
            added++;
            new_left--;
        } else if (*p == '@' && eol - p > 3 && memcmp(p, "@@ ", 3) == 0) {
            q = p + 3;
            if (parse_range(&q, eol, '-', &old_left) < 0 || q == eol ||
                *q++ != ' ' || parse_range(&q, eol, '+', &new_left) < 0)
                old_left = new_left = 0;
        } else if (*p != '\\') {
            old_left = new_left = 0;
        }
    }
    if (added_out)
        *added_out = added;
    if (removed_out)
        *removed_out = removed;
}

/* Days from 1970-01-01 to y-m-d in the proleptic Gregorian calendar
 * (Howard Hinnant's days_from_civil). */
static long days_from_civil(long y, int m, int d)
{
    long era, yoe, doy, doe;

    y -= m <= 2;
    era = (y >= 0 ? y : y - 399) / 400;
    yoe = y - era * 400;
    doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
    doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    return era * 146097 + doe - 719468;
}

/* Whether the text after a header's tab is the epoch, as `diff -N` dates
 * the side of a file that is absent ("1970-01-01 00:00:00.000000000
 * +0000", or the same instant in another zone: "1969-12-31 19:00:00
 * -0500"): "YYYY-MM-DD HH:MM:SS[.FRACTION] [+-]HHMM" whose time is 0. */
static bool epoch(const char *s, size_t n)
{
    int y, mo, d, h, mi, sec, zh, zm, used = 0;
    char text[80], sign;
    const char *p;
    long total;

    if (n >= sizeof(text))
        return false;
    memcpy(text, s, n);
    text[n] = '\0';
    if (sscanf(text, "%4d-%2d-%2d %2d:%2d:%2d%n", &y, &mo, &d, &h, &mi, &sec,
               &used) != 6 ||
        mo < 1 || mo > 12 || d < 1 || d > 31)
        return false;
    p = text + used;
    if (*p == '.')
        while (*++p >= '0' && *p <= '9')
            if (*p != '0')
                return false; /* a fraction of a second past it */
    used = 0;
    if (sscanf(p, " %c%2d%2d%n", &sign, &zh, &zm, &used) != 3 ||
        (sign != '+' && sign != '-') || p[used] != '\0')
        return false;
    total = days_from_civil(y, mo, d) * 86400L + h * 3600L + mi * 60L + sec -
            (sign == '-' ? -1 : 1) * (zh * 3600L + zm * 60L);
    return total == 0;
}

bool tnd_diff_epoch(const char *s, size_t n)
{
    const char *tab = memchr(s, '\t', n);

    return tab && epoch(tab + 1, n - (size_t)(tab + 1 - s));
}

char *tnd_diff_path(const char *s, size_t n)
{
    const char *tab = memchr(s, '\t', n);
    char *name, *path;

    if (tab)
        n = (size_t)(tab - s);
    name = tnd_str_git_unquote(s, n);
    if (strcmp(name, "/dev/null") == 0) {
        free(name);
        return NULL;
    }
    if (strlen(name) > 2 && (name[0] == 'a' || name[0] == 'b') &&
        name[1] == '/') {
        path = tnd_xstrdup(name + 2);
        free(name);
        return path;
    }
    return name;
}
