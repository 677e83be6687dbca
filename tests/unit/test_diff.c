/* Unit tests for common/diff: unified diffs in git's format.
 *
 * The fixed expectations below were produced by `diff -u` (GNU diffutils
 * 3.8) on the same inputs, with git's header lines in front. The property
 * tests apply every diff with the small patch applier at the end of this
 * file and check it gives back the new text, and check minimality against
 * a dynamic-programming LCS. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/diff.h"

#define HEAD "diff --git a/f.txt b/f.txt\n--- a/f.txt\n+++ b/f.txt\n"

/* ---- helpers ---------------------------------------------------------- */

/* The diff of f.txt from old to new; NULL means the file is absent and
 * (size_t)-1 means strlen. Caller frees. */
static char *diff_n(const char *old, size_t old_len, const char *new_,
                    size_t new_len)
{
    tnd_buf out;

    if (old_len == (size_t)-1)
        old_len = old ? strlen(old) : 0;
    if (new_len == (size_t)-1)
        new_len = new_ ? strlen(new_) : 0;
    tnd_buf_init(&out, TND_BUF_NOCAP);
    assert_int_equal(tnd_diff_file(&out, "f.txt", old, old_len, new_, new_len),
                     0);
    return tnd_buf_detach(&out, NULL);
}

static char *diff_of(const char *old, const char *new_)
{
    return diff_n(old, (size_t)-1, new_, (size_t)-1);
}

static void assert_diff(const char *old, const char *new_, const char *expected)
{
    char *got = diff_of(old, new_);

    assert_string_equal(got, expected);
    free(got);
}

/* n lines "line 1\n".."line n\n", with line at (1-based, 0 for none)
 * replaced by as + "\n", and likewise at2. Caller frees. */
static char *numbered(int n, int at, const char *as, int at2, const char *as2)
{
    tnd_buf b;

    tnd_buf_init(&b, TND_BUF_NOCAP);
    for (int i = 1; i <= n; i++) {
        if (i == at)
            tnd_buf_printf(&b, "%s\n", as);
        else if (i == at2)
            tnd_buf_printf(&b, "%s\n", as2);
        else
            tnd_buf_printf(&b, "line %d\n", i);
    }
    return tnd_buf_detach(&b, NULL);
}

struct lines {
    const char **p;
    size_t *len;
    size_t n;
};

static void split(struct lines *l, const char *text, size_t len)
{
    size_t i = 0;

    l->p = calloc(len + 1, sizeof(*l->p));
    l->len = calloc(len + 1, sizeof(*l->len));
    l->n = 0;
    while (i < len) {
        const char *nl = memchr(text + i, '\n', len - i);
        size_t n = nl ? (size_t)(nl - (text + i)) + 1 : len - i;

        l->p[l->n] = text + i;
        l->len[l->n++] = n;
        i += n;
    }
}

static void lines_free(struct lines *l)
{
    free(l->p);
    free(l->len);
}

static int line_eq(const struct lines *a, size_t i, const char *p, size_t n)
{
    return i < a->n && a->len[i] == n && memcmp(a->p[i], p, n) == 0;
}

/* Read "-l[,s]" at *p (sign is '-' or '+'); s is 1 when left out. */
static int read_range(const char **p, char sign, long *start, long *count)
{
    char *end;

    if (**p != sign)
        return -1;
    *start = strtol(*p + 1, &end, 10);
    *count = 1;
    if (*end == ',')
        *count = strtol(end + 1, &end, 10);
    *p = end;
    return 0;
}

/* A strict patch applier for one file's diff: every context and removed
 * line must match old, and every @@ header must agree with the lines that
 * follow it. Returns the new text (caller frees), or NULL when the diff
 * does not apply. */
static char *apply(const char *old, size_t old_len, const char *diff,
                   size_t *len_out)
{
    struct lines a;
    tnd_buf out;
    const char *p = diff;
    size_t cur = 0, out_lines = 0;
    char *result = NULL;

    split(&a, old ? old : "", old_len);
    tnd_buf_init(&out, TND_BUF_NOCAP);
    while (*p) {
        const char *eol = strchr(p, '\n');
        long os, oc, ns, nc;

        if (!eol)
            goto out;
        if (strncmp(p, "@@ ", 3) != 0) { /* a header line */
            p = eol + 1;
            continue;
        }
        p += 3;
        if (read_range(&p, '-', &os, &oc) < 0 || *p++ != ' ' ||
            read_range(&p, '+', &ns, &nc) < 0 || strncmp(p, " @@\n", 4))
            goto out;
        p += 4;
        if (oc ? os < 1 : os < 0)
            goto out;
        for (size_t to = (size_t)(oc ? os - 1 : os); cur < to; cur++) {
            if (cur >= a.n)
                goto out;
            tnd_buf_append(&out, a.p[cur], a.len[cur]);
            out_lines++;
        }
        if (out_lines != (size_t)(nc ? ns - 1 : ns))
            goto out;
        while (oc > 0 || nc > 0) {
            char sign = *p;
            const char *text = p + 1;
            size_t n;

            if (!(eol = strchr(p, '\n')))
                goto out;
            n = (size_t)(eol - text) + 1;
            p = eol + 1;
            if (*p == '\\') { /* "\ No newline at end of file" */
                if (strncmp(p, "\\ No newline at end of file\n", 28))
                    goto out;
                p += 28;
                n--;
            }
            if (sign == ' ' || sign == '-') {
                if (!line_eq(&a, cur, text, n) || oc-- <= 0)
                    goto out;
                cur++;
            }
            if (sign == ' ' || sign == '+') {
                if (nc-- <= 0)
                    goto out;
                tnd_buf_append(&out, text, n);
                out_lines++;
            }
            if (sign != ' ' && sign != '-' && sign != '+')
                goto out;
        }
    }
    for (; cur < a.n; cur++)
        tnd_buf_append(&out, a.p[cur], a.len[cur]);
    result = tnd_buf_detach(&out, len_out);
out:
    tnd_buf_free(&out);
    lines_free(&a);
    return result;
}

/* Length of the longest common subsequence of lines, the slow way. */
static size_t lcs(const char *old, size_t old_len, const char *new_,
                  size_t new_len)
{
    struct lines a, b;
    size_t *row, *prev, r;

    split(&a, old ? old : "", old_len);
    split(&b, new_ ? new_ : "", new_len);
    row = calloc(b.n + 1, sizeof(*row));
    prev = calloc(b.n + 1, sizeof(*prev));
    for (size_t i = 1; i <= a.n; i++) {
        for (size_t j = 1; j <= b.n; j++) {
            if (line_eq(&b, j - 1, a.p[i - 1], a.len[i - 1]))
                row[j] = prev[j - 1] + 1;
            else
                row[j] = prev[j] > row[j - 1] ? prev[j] : row[j - 1];
        }
        memcpy(prev, row, (b.n + 1) * sizeof(*row));
    }
    r = prev[b.n];
    free(row);
    free(prev);
    lines_free(&a);
    lines_free(&b);
    return r;
}

static size_t count_lines(const char *text, size_t len)
{
    struct lines l;
    size_t n;

    split(&l, text ? text : "", len);
    n = l.n;
    lines_free(&l);
    return n;
}

/* Diff old against new, apply the result to old, and insist on getting
 * new back. Returns the diff; caller frees. */
static char *round_trip(const char *old, size_t old_len, const char *new_,
                        size_t new_len)
{
    char *d = diff_n(old, old_len, new_, new_len);
    size_t len;
    char *back = apply(old, old_len, d, &len);

    assert_non_null(back);
    assert_int_equal(len, new_len);
    assert_memory_equal(back, new_ ? new_ : "", new_len);
    free(back);
    return d;
}

static uint64_t rng = 0x9e3779b97f4a7c15u;

static unsigned rnd(unsigned n)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (unsigned)(rng % n);
}

/* ---- the header, and files coming and going --------------------------- */

static void creation_adds_every_line(void **state)
{
    (void)state;
    assert_diff(NULL, "one\ntwo\n",
                "diff --git a/f.txt b/f.txt\n"
                "new file mode 100644\n"
                "--- /dev/null\n"
                "+++ b/f.txt\n"
                "@@ -0,0 +1,2 @@\n"
                "+one\n"
                "+two\n");
    assert_diff(NULL, "a\n",
                "diff --git a/f.txt b/f.txt\n"
                "new file mode 100644\n"
                "--- /dev/null\n"
                "+++ b/f.txt\n"
                "@@ -0,0 +1 @@\n"
                "+a\n");
    /* An empty file: git prints the mode line and nothing else. */
    assert_diff(NULL, "",
                "diff --git a/f.txt b/f.txt\n"
                "new file mode 100644\n");
}

static void deletion_removes_every_line(void **state)
{
    (void)state;
    assert_diff("one\ntwo\n", NULL,
                "diff --git a/f.txt b/f.txt\n"
                "deleted file mode 100644\n"
                "--- a/f.txt\n"
                "+++ /dev/null\n"
                "@@ -1,2 +0,0 @@\n"
                "-one\n"
                "-two\n");
    assert_diff("", NULL,
                "diff --git a/f.txt b/f.txt\n"
                "deleted file mode 100644\n");
}

static void emptying_and_filling_a_file(void **state)
{
    (void)state;
    assert_diff("", "a\n", HEAD "@@ -0,0 +1 @@\n+a\n");
    assert_diff("a\nb\n", "", HEAD "@@ -1,2 +0,0 @@\n-a\n-b\n");
}

static void identical_inputs_append_nothing(void **state)
{
    tnd_buf out;

    (void)state;
    tnd_buf_init(&out, TND_BUF_NOCAP);
    assert_int_equal(tnd_diff_file(&out, "f", "a\nb", 3, "a\nb", 3), 0);
    assert_int_equal(tnd_diff_file(&out, "f", NULL, 0, NULL, 0), 0);
    assert_int_equal(tnd_diff_file(&out, "f", "", 0, "", 0), 0);
    assert_int_equal(tnd_diff_file(&out, "f", "a\0b", 3, "a\0b", 3), 0);
    assert_int_equal(out.len, 0);
    tnd_buf_free(&out);
}

/* git's modes: an executable file created or deleted, a mode changed
 * with its bytes or alone; the same bytes and mode, nothing */
static void modes_are_written_as_git_writes_them(void **state)
{
    tnd_buf out;

    (void)state;
    tnd_buf_init(&out, TND_BUF_NOCAP);
    assert_int_equal(
        tnd_diff_file_exec(&out, "x", NULL, 0, false, "a\n", 2, true), 0);
    assert_int_equal(
        tnd_diff_file_exec(&out, "y", "a\n", 2, true, "a\n", 2, false), 0);
    assert_int_equal(
        tnd_diff_file_exec(&out, "z", "a\n", 2, false, "b\n", 2, true), 0);
    assert_int_equal(
        tnd_diff_file_exec(&out, "w", "a\n", 2, true, NULL, 0, false), 0);
    assert_int_equal(
        tnd_diff_file_exec(&out, "v", "a\n", 2, true, "a\n", 2, true), 0);
    assert_string_equal(out.data, "diff --git a/x b/x\n"
                                  "new file mode 100755\n"
                                  "--- /dev/null\n"
                                  "+++ b/x\n"
                                  "@@ -0,0 +1 @@\n"
                                  "+a\n"
                                  "diff --git a/y b/y\n"
                                  "old mode 100755\n"
                                  "new mode 100644\n"
                                  "diff --git a/z b/z\n"
                                  "old mode 100644\n"
                                  "new mode 100755\n"
                                  "--- a/z\n"
                                  "+++ b/z\n"
                                  "@@ -1 +1 @@\n"
                                  "-a\n"
                                  "+b\n"
                                  "diff --git a/w b/w\n"
                                  "deleted file mode 100755\n"
                                  "--- a/w\n"
                                  "+++ /dev/null\n"
                                  "@@ -1 +0,0 @@\n"
                                  "-a\n");
    tnd_buf_free(&out);
}

/* ---- hunks ------------------------------------------------------------ */

static void single_line_change_in_the_middle(void **state)
{
    char *old = numbered(10, 0, NULL, 0, NULL);
    char *new_ = numbered(10, 5, "line five", 0, NULL);

    (void)state;
    assert_diff(old, new_,
                HEAD "@@ -2,7 +2,7 @@\n"
                     " line 2\n"
                     " line 3\n"
                     " line 4\n"
                     "-line 5\n"
                     "+line five\n"
                     " line 6\n"
                     " line 7\n"
                     " line 8\n");
    free(old);
    free(new_);
}

static void changes_at_the_start_and_the_end(void **state)
{
    char *old = numbered(10, 0, NULL, 0, NULL);
    char *first = numbered(10, 1, "first", 0, NULL);
    char *last = numbered(10, 10, "last", 0, NULL);

    (void)state;
    assert_diff(old, first,
                HEAD "@@ -1,4 +1,4 @@\n"
                     "-line 1\n"
                     "+first\n"
                     " line 2\n"
                     " line 3\n"
                     " line 4\n");
    assert_diff(old, last,
                HEAD "@@ -7,4 +7,4 @@\n"
                     " line 7\n"
                     " line 8\n"
                     " line 9\n"
                     "-line 10\n"
                     "+last\n");
    free(old);
    free(first);
    free(last);
}

static void missing_newline_at_end_is_flagged(void **state)
{
    char *ten = numbered(10, 0, NULL, 0, NULL);
    char *other = numbered(10, 10, "line ten", 0, NULL);
    char *eight = numbered(10, 8, "eight", 0, NULL);
    size_t len = strlen(ten), other_len = strlen(other);
    char *d;

    (void)state;
    /* Only the old side lacks it: the last line changes. */
    d = diff_n(ten, len - 1, ten, len);
    assert_string_equal(d, HEAD "@@ -7,4 +7,4 @@\n"
                                " line 7\n"
                                " line 8\n"
                                " line 9\n"
                                "-line 10\n"
                                "\\ No newline at end of file\n"
                                "+line 10\n");
    free(d);
    /* Only the new side lacks it. */
    d = diff_n(ten, len, ten, len - 1);
    assert_string_equal(d, HEAD "@@ -7,4 +7,4 @@\n"
                                " line 7\n"
                                " line 8\n"
                                " line 9\n"
                                "-line 10\n"
                                "+line 10\n"
                                "\\ No newline at end of file\n");
    free(d);
    /* Both lack it, and the last line changes. */
    d = diff_n(ten, len - 1, other, other_len - 1);
    assert_string_equal(d, HEAD "@@ -7,4 +7,4 @@\n"
                                " line 7\n"
                                " line 8\n"
                                " line 9\n"
                                "-line 10\n"
                                "\\ No newline at end of file\n"
                                "+line ten\n"
                                "\\ No newline at end of file\n");
    free(d);
    /* Both lack it, and the last line is context. */
    d = diff_n(ten, len - 1, eight, strlen(eight) - 1);
    assert_string_equal(d, HEAD "@@ -5,6 +5,6 @@\n"
                                " line 5\n"
                                " line 6\n"
                                " line 7\n"
                                "-line 8\n"
                                "+eight\n"
                                " line 9\n"
                                " line 10\n"
                                "\\ No newline at end of file\n");
    free(d);
    free(ten);
    free(other);
    free(eight);
}

static void hunks_merge_within_six_lines_and_split_beyond(void **state)
{
    char *old = numbered(20, 0, NULL, 0, NULL);
    char *gap6 = numbered(20, 2, "two", 9, "nine");
    char *gap7 = numbered(20, 2, "two", 10, "ten");

    (void)state;
    assert_diff(old, gap6,
                HEAD "@@ -1,12 +1,12 @@\n"
                     " line 1\n"
                     "-line 2\n"
                     "+two\n"
                     " line 3\n"
                     " line 4\n"
                     " line 5\n"
                     " line 6\n"
                     " line 7\n"
                     " line 8\n"
                     "-line 9\n"
                     "+nine\n"
                     " line 10\n"
                     " line 11\n"
                     " line 12\n");
    assert_diff(old, gap7,
                HEAD "@@ -1,5 +1,5 @@\n"
                     " line 1\n"
                     "-line 2\n"
                     "+two\n"
                     " line 3\n"
                     " line 4\n"
                     " line 5\n"
                     "@@ -7,7 +7,7 @@\n"
                     " line 7\n"
                     " line 8\n"
                     " line 9\n"
                     "-line 10\n"
                     "+ten\n"
                     " line 11\n"
                     " line 12\n"
                     " line 13\n");
    free(old);
    free(gap6);
    free(gap7);
}

/* Cases where several minimal scripts exist; we pick the one diff -u
 * prints: changes slid as low as identical lines allow. */
static void matches_diff_u_on_ambiguous_inputs(void **state)
{
    (void)state;
    /* The example from Myers' paper, one letter per line. */
    assert_diff("A\nB\nC\nA\nB\nB\nA\n", "C\nB\nA\nB\nA\nC\n",
                HEAD "@@ -1,7 +1,6 @@\n"
                     "-A\n"
                     "-B\n"
                     " C\n"
                     "-A\n"
                     " B\n"
                     "+A\n"
                     " B\n"
                     " A\n"
                     "+C\n");
    assert_diff("a\nb\nc\n", "a\nb\nb\nc\n",
                HEAD "@@ -1,3 +1,4 @@\n"
                     " a\n"
                     " b\n"
                     "+b\n"
                     " c\n");
    assert_diff("a\nb\nb\nc\n", "a\nb\nc\n",
                HEAD "@@ -1,4 +1,3 @@\n"
                     " a\n"
                     " b\n"
                     "-b\n"
                     " c\n");
    assert_diff("c\n", "d\nc\nc\n",
                HEAD "@@ -1 +1,3 @@\n"
                     "+d\n"
                     "+c\n"
                     " c\n");
    /* A removal sits level with an addition when it can. */
    assert_diff("a\na\n", "b\na\n",
                HEAD "@@ -1,2 +1,2 @@\n"
                     "-a\n"
                     "+b\n"
                     " a\n");
    assert_diff("a\na\n", "b\na\nb\n",
                HEAD "@@ -1,2 +1,3 @@\n"
                     "+b\n"
                     " a\n"
                     "-a\n"
                     "+b\n");
    assert_diff("int a(void)\n{\n    return 1;\n}\n\n"
                "int c(void)\n{\n    return 3;\n}\n",
                "int a(void)\n{\n    return 1;\n}\n\n"
                "int b(void)\n{\n    return 2;\n}\n\n"
                "int c(void)\n{\n    return 3;\n}\n",
                HEAD "@@ -3,6 +3,11 @@\n"
                     "     return 1;\n"
                     " }\n"
                     " \n"
                     "+int b(void)\n"
                     "+{\n"
                     "+    return 2;\n"
                     "+}\n"
                     "+\n"
                     " int c(void)\n"
                     " {\n"
                     "     return 3;\n");
}

/* ---- binary, caps, appending ------------------------------------------ */

static void nul_bytes_make_a_binary_diff(void **state)
{
    char *d;

    (void)state;
    d = diff_n("a\0b", 3, "a\0c", 3);
    assert_string_equal(d, "diff --git a/f.txt b/f.txt\n"
                           "Binary files a/f.txt and b/f.txt differ\n");
    free(d);
    d = diff_n("text\n", 5, "a\0c", 3);
    assert_string_equal(d, "diff --git a/f.txt b/f.txt\n"
                           "Binary files a/f.txt and b/f.txt differ\n");
    free(d);
    d = diff_n(NULL, 0, "\0", 1);
    assert_string_equal(d, "diff --git a/f.txt b/f.txt\n"
                           "new file mode 100644\n"
                           "Binary files /dev/null and b/f.txt differ\n");
    free(d);
    d = diff_n("\0", 1, NULL, 0);
    assert_string_equal(d, "diff --git a/f.txt b/f.txt\n"
                           "deleted file mode 100644\n"
                           "Binary files a/f.txt and /dev/null differ\n");
    free(d);
}

static void cap_hit_returns_error_and_keeps_buffer(void **state)
{
    char *old = numbered(30, 0, NULL, 0, NULL);
    char *new_ = numbered(30, 3, "three", 25, "twenty-five");
    char *full = diff_of(old, new_);
    size_t need = strlen("keep\n") + strlen(full);
    tnd_buf out;

    (void)state;
    tnd_buf_init(&out, need - 1);
    assert_int_equal(tnd_buf_puts(&out, "keep\n"), 0);
    assert_int_equal(
        tnd_diff_file(&out, "f.txt", old, strlen(old), new_, strlen(new_)), -1);
    assert_string_equal(tnd_buf_str(&out), "keep\n");
    assert_int_equal(out.len, 5);
    assert_non_null(strstr(tnd_error_last(), "f.txt"));
    assert_non_null(strstr(tnd_error_last(), "limit"));
    tnd_buf_free(&out);

    /* Exactly enough room is enough, and diffs append. */
    tnd_buf_init(&out, need);
    assert_int_equal(tnd_buf_puts(&out, "keep\n"), 0);
    assert_int_equal(
        tnd_diff_file(&out, "f.txt", old, strlen(old), new_, strlen(new_)), 0);
    assert_int_equal(out.len, need);
    assert_string_equal(out.data + 5, full);
    tnd_buf_free(&out);
    free(old);
    free(new_);
    free(full);
}

/* ---- tnd_diff_stat ---------------------------------------------------- */

static void stat_counts_lines_inside_hunks(void **state)
{
    char *d = diff_of("a\nb\nc\n", "a\nB\nc\nd\n");
    size_t added, removed;

    (void)state;
    tnd_diff_stat(d, strlen(d), &added, &removed);
    assert_int_equal(added, 2);
    assert_int_equal(removed, 1);
    tnd_diff_stat(d, strlen(d), NULL, &removed); /* either may be NULL */
    tnd_diff_stat(d, strlen(d), &added, NULL);
    assert_int_equal(added + removed, 3);
    free(d);

    /* Lines whose text starts with "--" or "++" are not headers when
     * they sit inside a hunk; the next file's headers are not lines. */
    const char *two = "diff --git a/x b/x\n"
                      "--- a/x\n"
                      "+++ b/x\n"
                      "@@ -1,2 +1,2 @@\n"
                      "--- old\n"
                      "+++ new\n"
                      " same\n"
                      "diff --git a/y b/y\n"
                      "new file mode 100644\n"
                      "--- /dev/null\n"
                      "+++ b/y\n"
                      "@@ -0,0 +1 @@\n"
                      "+y\n"
                      "\\ No newline at end of file\n"
                      "diff --git a/z b/z\n"
                      "Binary files a/z and b/z differ\n";
    tnd_diff_stat(two, strlen(two), &added, &removed);
    assert_int_equal(added, 2);
    assert_int_equal(removed, 1);
    /* Plain `diff -u` output, one file after another: the @@ counts say
     * where a hunk ends. */
    const char *plain = "--- a/x\n"
                        "+++ b/x\n"
                        "@@ -1,2 +1,2 @@\n"
                        " same\n"
                        "-old\n"
                        "+new\n"
                        "--- a/y\n"
                        "+++ b/y\n"
                        "@@ -1 +1,2 @@\n"
                        " same\n"
                        "+more\n";
    tnd_diff_stat(plain, strlen(plain), &added, &removed);
    assert_int_equal(added, 2);
    assert_int_equal(removed, 1);
    tnd_diff_stat("", 0, &added, &removed);
    assert_int_equal(added + removed, 0);
}

/* ---- properties ------------------------------------------------------- */

/* Random lines from a small alphabet (so there are many ways to match),
 * sometimes without the last newline. */
static void random_text(tnd_buf *b, unsigned max_lines, unsigned alphabet)
{
    unsigned n = rnd(max_lines + 1);

    for (unsigned i = 0; i < n; i++)
        tnd_buf_printf(b, "w%u\n", rnd(alphabet));
    if (b->len && rnd(5) == 0)
        b->data[--b->len] = '\0';
}

/* A copy of text with a few lines inserted, removed or replaced. */
static void mutate(tnd_buf *out, const char *text, size_t len,
                   unsigned alphabet)
{
    struct lines l;

    split(&l, text, len);
    for (size_t i = 0; i <= l.n; i++) {
        unsigned op = rnd(8);

        if (op == 0)
            tnd_buf_printf(out, "w%u\n", rnd(alphabet)); /* insert */
        if (i == l.n)
            break;
        if (op == 1)
            continue; /* remove */
        if (op == 2)
            tnd_buf_printf(out, "w%u\n", rnd(alphabet)); /* replace */
        else
            tnd_buf_append(out, l.p[i], l.len[i]);
    }
    lines_free(&l);
}

static void random_pairs_round_trip_and_are_minimal(void **state)
{
    (void)state;
    rng = 0x2545f4914f6cdd1du;
    for (int iter = 0; iter < 600; iter++) {
        unsigned alphabet = 1 + rnd(8);
        tnd_buf a, b;
        const char *old, *new_;
        size_t added, removed, common;
        char *d;

        tnd_buf_init(&a, TND_BUF_NOCAP);
        tnd_buf_init(&b, TND_BUF_NOCAP);
        random_text(&a, 30, alphabet);
        if (rnd(3) == 0)
            random_text(&b, 30, alphabet);
        else
            mutate(&b, tnd_buf_str(&a), a.len, alphabet);
        old = rnd(20) == 0 && a.len == 0 ? NULL : tnd_buf_str(&a);
        new_ = rnd(20) == 0 && b.len == 0 ? NULL : tnd_buf_str(&b);

        d = round_trip(old, a.len, new_, b.len);
        common = lcs(old, a.len, new_, b.len);
        tnd_diff_stat(d, strlen(d), &added, &removed);
        if (old && new_ && a.len == b.len && !memcmp(old, new_, a.len))
            assert_string_equal(d, "");
        /* Every line not in a longest common subsequence, and no more. */
        assert_int_equal(removed, count_lines(a.data, a.len) - common);
        assert_int_equal(added, count_lines(b.data, b.len) - common);
        free(d);
        tnd_buf_free(&a);
        tnd_buf_free(&b);
    }
}

/* ---- large inputs ----------------------------------------------------- */

static void large_file_with_scattered_changes(void **state)
{
    tnd_buf a, b;
    size_t added, removed, changed = 0, inserted = 0;
    char *d;

    (void)state;
    tnd_buf_init(&a, TND_BUF_NOCAP);
    tnd_buf_init(&b, TND_BUF_NOCAP);
    for (int i = 0; i < 50000; i++) {
        tnd_buf_printf(&a, "line %d of a big file\n", i);
        if (i % 3001 == 500) {
            tnd_buf_printf(&b, "inserted before %d\n", i);
            inserted++;
        }
        if (i % 997 == 0) {
            tnd_buf_printf(&b, "changed %d\n", i);
            changed++;
        } else {
            tnd_buf_printf(&b, "line %d of a big file\n", i);
        }
    }
    d = round_trip(a.data, a.len, b.data, b.len);
    tnd_diff_stat(d, strlen(d), &added, &removed);
    assert_int_equal(removed, changed);
    assert_int_equal(added, changed + inserted);
    free(d);
    tnd_buf_free(&a);
    tnd_buf_free(&b);
}

static void large_files_with_nothing_in_common(void **state)
{
    tnd_buf a, b;
    size_t added, removed;
    char *d;

    (void)state;
    tnd_buf_init(&a, TND_BUF_NOCAP);
    tnd_buf_init(&b, TND_BUF_NOCAP);
    for (int i = 0; i < 20000; i++) {
        tnd_buf_printf(&a, "old %d\n", i);
        tnd_buf_printf(&b, "new %d\n", i);
    }
    d = round_trip(a.data, a.len, b.data, b.len);
    tnd_diff_stat(d, strlen(d), &added, &removed);
    assert_int_equal(removed, 20000);
    assert_int_equal(added, 20000);
    assert_non_null(strstr(d, "@@ -1,20000 +1,20000 @@\n"));
    free(d);
    tnd_buf_free(&a);
    tnd_buf_free(&b);
}

/* Swapping two halves of 5000 identical lines each needs 10000 edits,
 * more than one search may spend: the cost cut-off splits early, and the
 * diff must still be correct. */
static void cost_cut_off_still_gives_a_correct_diff(void **state)
{
    tnd_buf a, b;
    size_t added, removed;
    char *d;

    (void)state;
    tnd_buf_init(&a, TND_BUF_NOCAP);
    tnd_buf_init(&b, TND_BUF_NOCAP);
    for (int i = 0; i < 10000; i++) {
        tnd_buf_puts(&a, i < 5000 ? "x\n" : "y\n");
        tnd_buf_puts(&b, i < 5000 ? "y\n" : "x\n");
    }
    d = round_trip(a.data, a.len, b.data, b.len);
    tnd_diff_stat(d, strlen(d), &added, &removed);
    assert_int_equal(added, removed);
    assert_true(removed >= 5000);
    free(d);
    tnd_buf_free(&a);
    tnd_buf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(creation_adds_every_line),
        cmocka_unit_test(deletion_removes_every_line),
        cmocka_unit_test(emptying_and_filling_a_file),
        cmocka_unit_test(identical_inputs_append_nothing),
        cmocka_unit_test(modes_are_written_as_git_writes_them),
        cmocka_unit_test(single_line_change_in_the_middle),
        cmocka_unit_test(changes_at_the_start_and_the_end),
        cmocka_unit_test(missing_newline_at_end_is_flagged),
        cmocka_unit_test(hunks_merge_within_six_lines_and_split_beyond),
        cmocka_unit_test(matches_diff_u_on_ambiguous_inputs),
        cmocka_unit_test(nul_bytes_make_a_binary_diff),
        cmocka_unit_test(cap_hit_returns_error_and_keeps_buffer),
        cmocka_unit_test(stat_counts_lines_inside_hunks),
        cmocka_unit_test(random_pairs_round_trip_and_are_minimal),
        cmocka_unit_test(large_file_with_scattered_changes),
        cmocka_unit_test(large_files_with_nothing_in_common),
        cmocka_unit_test(cost_cut_off_still_gives_a_correct_diff),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
