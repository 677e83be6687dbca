/* The part of a tool's output worth reading (see excerpt.h).
 *
 * Three passes, each linear. First the output is split into lines and
 * compiler diagnostics are grouped into blocks as gcc and clang print
 * them: the "In function" and "In file included from" lines before, the
 * diagnostic, then its source excerpt, caret and notes. A warning block
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
#include "common/xalloc.h"

#define LINE_SHOWN  500 /* bytes of one line shown when output is cut */
#define CONTEXT     2   /* lines kept on each side of a failure */
#define ERROR_LINES 12  /* lines of an error's block kept as the failure */
#define TAIL_SHARE  4   /* the tail gets up to 1/TAIL_SHARE of the room */

/* ---- reading one line --------------------------------------------------- */

static bool is_digit(char c)
{
    return c >= '0' && c <= '9';
}

static bool is_word(char c)
{
    return is_digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           c == '_';
}

static char lower(char c)
{
    return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

static bool blank(char c)
{
    return c == ' ' || c == '\t';
}

static size_t strip_cr(const char *s, size_t len)
{
    return len && s[len - 1] == '\r' ? len - 1 : len;
}

static bool starts(const char *s, size_t len, const char *prefix)
{
    size_t n = strlen(prefix);

    return len >= n && !memcmp(s, prefix, n);
}

/* Does s[0..len) hold needle (lower case), ignoring ASCII case? The
 * needles are short, so this stays linear in len. */
static bool has_ci(const char *s, size_t len, const char *needle)
{
    size_t n = strlen(needle);

    for (size_t i = 0; i + n <= len; i++) {
        size_t k = 0;

        while (k < n && lower(s[i + k]) == needle[k])
            k++;
        if (k == n)
            return true;
    }
    return false;
}

static bool word_eq(const char *w, size_t n, const char *word)
{
    return strlen(word) == n && !memcmp(w, word, n);
}

static bool word_eq_ci(const char *w, size_t n, const char *word)
{
    if (strlen(word) != n)
        return false;
    for (size_t i = 0; i < n; i++)
        if (lower(w[i]) != word[i])
            return false;
    return true;
}

static bool all_digits(const char *w, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!is_digit(w[i]))
            return false;
    return n > 0;
}

/* The value of n digits, saturated: only "zero or not" matters. */
static size_t number(const char *w, size_t n)
{
    size_t v = 0;

    for (size_t i = 0; i < n && v < 1000000000; i++)
        v = v * 10 + (size_t)(w[i] - '0');
    return v;
}

enum { SEV_NONE, SEV_WARNING, SEV_ERROR, SEV_NOTE, SEV_PLACE };

/* What a compiler diagnostic line is: "file:line[:col]: warning: ...",
 * also without the place ("cc1: warning:", "collect2: error:").
 * SEV_PLACE is a place followed by indented text, as in gcc's
 * "file.cc:12:3:   required from here". The file name has no blank, so a
 * sentence with a colon in it is not taken for one. */
static int severity(const char *s, size_t len)
{
    static const struct {
        const char *word;
        int sev;
    } words[] = {{"warning:", SEV_WARNING},
                 {"error:", SEV_ERROR},
                 {"fatal error:", SEV_ERROR},
                 {"note:", SEV_NOTE}};
    size_t i = 0, j;
    bool place = false;

    while (i < len && s[i] != ':' && !blank(s[i]))
        i++;
    if (i == 0 || i >= len || s[i] != ':')
        return SEV_NONE;
    i++;
    for (int part = 0; part < 2 && i < len && is_digit(s[i]); part++) {
        for (j = i; j < len && is_digit(s[j]); j++)
            ;
        if (j >= len || s[j] != ':')
            return SEV_NONE;
        i = j + 1;
        place = true;
    }
    if (i >= len || s[i] != ' ')
        return SEV_NONE;
    i++;
    for (size_t k = 0; k < sizeof(words) / sizeof(*words); k++)
        if (starts(s + i, len - i, words[k].word))
            return words[k].sev;
    return place && i < len && s[i] == ' ' ? SEV_PLACE : SEV_NONE;
}

/* A line that belongs to the diagnostic after it: gcc's
 * "file.c: In function 'f':", "file.c: At top level:", and the chain
 * "In file included from a.h:3," / "                 from a.c:1:". */
static bool is_header(const char *s, size_t len)
{
    size_t i = 0;

    if (starts(s, len, "In file included from "))
        return true;
    if (!len || (s[len - 1] != ':' && s[len - 1] != ','))
        return false;
    while (i < len && blank(s[i]))
        i++;
    if (i > 0)
        return starts(s + i, len - i, "from ");
    while (i < len && s[i] != ':' && !blank(s[i]))
        i++;
    return i > 0 && s[len - 1] == ':' &&
           (starts(s + i, len - i, ": In ") || starts(s + i, len - i, ": At "));
}

/* gcc's source excerpt: "   12 | code", "      |   ^~~~", "  +++ |+#include".
 */
static bool is_gcc_excerpt(const char *s, size_t len)
{
    size_t i = 0;

    while (i < len && s[i] == ' ')
        i++;
    while (i < len && (is_digit(s[i]) || s[i] == '+'))
        i++;
    while (i < len && s[i] == ' ')
        i++;
    return i > 0 && i < len && s[i] == '|';
}

/* clang's caret line under a source line: blanks, '^' and '~' only. */
static bool is_caret(const char *s, size_t len)
{
    bool mark = false;

    for (size_t i = 0; i < len; i++) {
        if (s[i] == '^' || s[i] == '~')
            mark = true;
        else if (!blank(s[i]))
            return false;
    }
    return mark;
}

/* "ok 3 - ...", "[ OK ] ...", "PASS: ...": a passing test's line, whatever
 * words its name holds ("ok 3 - handles failed reads"). */
static bool is_passing(const char *s, size_t len)
{
    size_t i = 0, j;

    while (i < len && blank(s[i]))
        i++;
    s += i;
    len -= i;
    if (word_eq(s, len, "ok") || starts(s, len, "ok ") ||
        starts(s, len, "PASS") || starts(s, len, "--- PASS"))
        return true;
    if (!len || s[0] != '[')
        return false;
    for (i = 1; i < len && s[i] == ' '; i++)
        ;
    for (j = i; j < len && is_word(s[j]); j++)
        ;
    if (!word_eq_ci(s + i, j - i, "ok") && !word_eq(s + i, j - i, "PASSED"))
        return false;
    while (j < len && s[j] == ' ')
        j++;
    return j < len && s[j] == ']';
}

/* make's "make: *** [x] Error 1", "make[2]: *** ...", "gmake: ***". */
static bool is_make_failure(const char *s, size_t len)
{
    size_t i = 0;

    while (i < len && (is_word(s[i]) || s[i] == '-' || s[i] == '.'))
        i++;
    if (i == 0)
        return false;
    if (i < len && s[i] == '[') {
        for (i++; i < len && is_digit(s[i]); i++)
            ;
        if (i >= len || s[i] != ']')
            return false;
        i++;
    }
    return starts(s + i, len - i, ": ***");
}

/* TAP: "not ok 3 - ...", unless it is a TODO or a SKIP. */
static bool is_tap_failure(const char *s, size_t len)
{
    size_t i = 0;

    while (i < len && blank(s[i]))
        i++;
    if (!starts(s + i, len - i, "not ok") || (len - i > 6 && !blank(s[i + 6])))
        return false;
    return !has_ci(s, len, "# todo") && !has_ci(s, len, "# skip");
}

typedef struct span {
    size_t s, e; /* a word at [s, e); s == e: none */
} span;

/* Only blanks between a and b? */
static bool adjacent(const char *line, size_t a, size_t b)
{
    for (size_t i = a; i < b; i++)
        if (!blank(line[i]))
            return false;
    return true;
}

/* A count just before the word at w: "0 failed", "1 tests failed".
 * SIZE_MAX when there is none. */
static size_t count_before(const char *line, const span *prev, size_t w)
{
    if (prev[0].e == prev[0].s || !adjacent(line, prev[0].e, w))
        return SIZE_MAX;
    if (all_digits(line + prev[0].s, prev[0].e - prev[0].s))
        return number(line + prev[0].s, prev[0].e - prev[0].s);
    if (prev[1].e > prev[1].s && adjacent(line, prev[1].e, prev[0].s) &&
        all_digits(line + prev[1].s, prev[1].e - prev[1].s))
        return number(line + prev[1].s, prev[1].e - prev[1].s);
    return SIZE_MAX;
}

/* A count just after position e: "Failed: 0", "failed=2", "FAIL:  0".
 * strict: the number must end the line or be followed by ",;)" (so that
 * "FAIL: 0 != 1" is not read as a count of zero); else a blank after it
 * will do too ("failed=0  skipped=0"). SIZE_MAX when there is none. */
static size_t count_after(const char *line, size_t len, size_t e, bool strict)
{
    size_t i = e, j;

    while (i < len && blank(line[i]))
        i++;
    if (i < len && (line[i] == ':' || line[i] == '='))
        i++;
    while (i < len && blank(line[i]))
        i++;
    for (j = i; j < len && is_digit(line[j]); j++)
        ;
    if (j == i)
        return SIZE_MAX;
    if (j == len || strchr(",;)", line[j]) || (!strict && blank(line[j])))
        return number(line + i, j - i);
    return SIZE_MAX;
}

/* The exit status after "exited": "exited with code 2", "exited with
 * status 1"; SIZE_MAX when there is none. */
static size_t exit_after(const char *line, size_t len, size_t e)
{
    static const char *const filler[] = {"with", "code", "status", "exit",
                                         "value"};
    size_t i = e, j;

    for (int words = 0; words < 4; words++) {
        bool skipped = false;

        while (i < len && (blank(line[i]) || line[i] == ':' || line[i] == '='))
            i++;
        if (i < len && line[i] == '-')
            i++;
        for (j = i; j < len && is_word(line[j]); j++)
            ;
        if (all_digits(line + i, j - i))
            return number(line + i, j - i);
        for (size_t k = 0; k < sizeof(filler) / sizeof(*filler); k++)
            if (word_eq_ci(line + i, j - i, filler[k]))
                skipped = true;
        if (!skipped)
            return SIZE_MAX;
        i = j;
    }
    return SIZE_MAX;
}

enum { NEUTRAL, FAILURE };

/* What the word line[s..e) says, given the two words before it. */
static int judge_word(const char *line, size_t len, size_t s, size_t e,
                      const span *prev)
{
    static const char *const upper[] = {
        "FAIL", "FAILED", "FAILURE", "FAILURES", "ERROR", "ERRORS", "FATAL"};
    static const char *const counted[] = {"fail",    "failed",  "fails",
                                          "failing", "failure", "failures",
                                          "error",   "errors"};
    const char *w = line + s;
    size_t n = e - s, count;
    char after = e < len ? line[e] : '\0';
    bool up = false, ci = false;

    if (word_eq(w, n, "Aborted") || word_eq(w, n, "Traceback") ||
        starts(w, n, "Assertion") || (word_eq(w, n, "panic") && after == ':'))
        return FAILURE;
    /* ValueError:, java.lang.NullPointerException */
    if ((after == ':' || after == '\0') &&
        ((n > 5 && !memcmp(w + n - 5, "Error", 5)) ||
         (n > 9 && !memcmp(w + n - 9, "Exception", 9))))
        return FAILURE;
    if ((word_eq_ci(w, n, "status") || word_eq_ci(w, n, "code")) &&
        prev[0].e > prev[0].s &&
        word_eq_ci(line + prev[0].s, prev[0].e - prev[0].s, "exit")) {
        /* ld's "returned 1 exit status" */
        count = SIZE_MAX;
        if (prev[1].e > prev[1].s && adjacent(line, prev[1].e, prev[0].s) &&
            all_digits(line + prev[1].s, prev[1].e - prev[1].s))
            count = number(line + prev[1].s, prev[1].e - prev[1].s);
        if (count == SIZE_MAX)
            count = exit_after(line, len, e);
        return count != SIZE_MAX && count > 0 ? FAILURE : NEUTRAL;
    }
    if (word_eq_ci(w, n, "exited")) {
        count = exit_after(line, len, e);
        return count != SIZE_MAX && count > 0 ? FAILURE : NEUTRAL;
    }
    for (size_t k = 0; k < sizeof(upper) / sizeof(*upper); k++)
        up = up || word_eq(w, n, upper[k]);
    for (size_t k = 0; k < sizeof(counted) / sizeof(*counted); k++)
        ci = ci || word_eq_ci(w, n, counted[k]);
    if (!up && !ci)
        return NEUTRAL;
    /* valgrind's "ERROR SUMMARY: 0 errors": the count decides */
    if (up && starts(line + e, len - e, " SUMMARY"))
        return NEUTRAL;
    count = count_before(line, prev, s);
    /* "error:" and "Failure:" label a failure; "Errors: 0" counts */
    if (count == SIZE_MAX && !up && after == ':' &&
        (word_eq_ci(w, n, "error") || word_eq_ci(w, n, "failure") ||
         word_eq_ci(w, n, "fail")))
        return FAILURE;
    if (count == SIZE_MAX)
        count = count_after(line, len, e, up);
    if (count != SIZE_MAX)
        return count > 0 ? FAILURE : NEUTRAL;
    if (up || word_eq_ci(w, n, "failed") || word_eq_ci(w, n, "fails") ||
        after == ':')
        return FAILURE;
    return NEUTRAL;
}

bool tnd_excerpt_is_failure(const char *line, size_t len)
{
    static const char *const phrases[] = {
        "segmentation fault",   "core dumped",
        "undefined reference",  "fatal error",
        "panicked at",          "warnings being treated as errors",
        "errors while running", "stack smashing detected",
        "non-zero exit",        "non-zero status",
        "nonzero exit",
    };
    span prev[2] = {{0, 0}, {0, 0}};
    size_t i = 0;

    len = strip_cr(line, len);
    if (len < 4) /* shorter than "FAIL": quick, for floods of tiny lines */
        return false;
    switch (severity(line, len)) {
    case SEV_ERROR:
        return true;
    case SEV_WARNING:
    case SEV_NOTE:
        return false;
    default:
        break;
    }
    if (starts(line, len, "[tandem: ") || is_make_failure(line, len) ||
        is_tap_failure(line, len))
        return true;
    if (is_passing(line, len))
        return false;
    for (size_t k = 0; k < sizeof(phrases) / sizeof(*phrases); k++)
        if (has_ci(line, len, phrases[k]))
            return true;
    while (i < len) {
        size_t s;

        if (!is_word(line[i])) {
            i++;
            continue;
        }
        for (s = i; i < len && is_word(line[i]); i++)
            ;
        if (judge_word(line, len, s, i, prev) == FAILURE)
            return true;
        prev[1] = prev[0];
        prev[0] = (span){s, i};
    }
    return false;
}

/* ---- the output as lines and blocks ------------------------------------- */

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
        int sev = severity(s, len);

        if (j + 1 < t->n)
            next = line_at(t, j + 1, &next_len);
        if (sev == SEV_NOTE || sev == SEV_PLACE || is_gcc_excerpt(s, len) ||
            is_caret(s, len)) {
            caret = is_caret(s, len);
            j++;
        } else if (next && len && !sev && is_caret(next, next_len)) {
            caret = true;
            j += 2;
        } else if (caret && len && blank(s[0]) &&
                   !tnd_excerpt_is_failure(s, len)) {
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
        int sev = SEV_NONE;

        for (h = i; h < t->n; h++) {
            s = line_at(t, h, &len);
            if (!is_header(s, len))
                break;
        }
        if (h < t->n) {
            s = line_at(t, h, &len);
            sev = severity(s, len);
        }
        if (sev == SEV_WARNING || sev == SEV_ERROR) {
            size_t end = block_end(t, h);

            TND_GROW(t->blocks, t->balloc, t->nblocks + 1);
            t->blocks[t->nblocks++] = (diag_block){
                i, h, end, sev == SEV_ERROR ? BLOCK_ERROR : BLOCK_WARNING};
            for (; i < end; i++)
                t->lines[i].block = t->nblocks;
            continue;
        }
        /* headers not followed by a diagnostic are plain lines */
        for (h = h < t->n ? h + 1 : h; i < h; i++) {
            s = line_at(t, i, &len);
            t->lines[i].failure = tnd_excerpt_is_failure(s, len);
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
        if (severity(p, clen) == SEV_WARNING) {
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
    for (size_t k = 1; k <= 3 && k <= n; k++) {
        unsigned char c = (unsigned char)s[n - k];
        size_t need;

        if ((c & 0xC0) == 0x80)
            continue;
        if (c < 0xC0)
            return n;
        need = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;
        return need > k ? n - k : n;
    }
    return n;
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
