/* Unit tests for orchestrator/unidiff: a unified diff (git diff, diff -u)
 * read as the workspace edits a coder would have sent. Every diff is
 * handed over in a heap copy of exactly its length, with no NUL after it,
 * so a read past the end shows under ASan and valgrind. The last test
 * applies a multi-file diff to a real workspace and diffs it back. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/rmtree.h"
#include "common/xalloc.h"
#include "orchestrator/unidiff.h"
#include "orchestrator/snapshot.h"
#include "orchestrator/workspace.h"
#include "proto/body.h"
#include "proto/code.h"

/* ---- helpers ------------------------------------------------------------ */

/* tnd_unidiff_edits on an exact-size copy of len bytes of diff. */
static int parse_len(tnd_edit **edits, size_t *n, const char *diff, size_t len)
{
    char *copy = tnd_xmalloc(len ? len : 1);
    int rc;

    memcpy(copy, diff, len);
    rc = tnd_unidiff_edits(edits, n, copy, len);
    free(copy);
    return rc;
}

/* The edits of a diff that must parse; *n gets their count. */
static tnd_edit *parse_ok(const char *diff, size_t *n)
{
    tnd_edit *edits = NULL;

    if (parse_len(&edits, n, diff, strlen(diff)) != 0)
        fail_msg("tnd_unidiff_edits: %s", tnd_error_last());
    assert_non_null(edits);
    assert_true(*n > 0);
    return edits;
}

/* A diff that must be refused: -1, nothing handed back. */
static void parse_fails(const char *diff)
{
    tnd_edit *edits = (tnd_edit *)&edits; /* not NULL: must be reset */
    size_t n = 99;

    assert_int_equal(parse_len(&edits, &n, diff, strlen(diff)), -1);
    assert_null(edits);
    assert_int_equal(n, 0);
}

static void assert_edit(const tnd_edit *e, tnd_edit_kind kind, const char *path,
                        const char *search, const char *replace)
{
    assert_int_equal(e->kind, kind);
    assert_string_equal(e->path, path);
    assert_string_equal(e->search, search);
    assert_string_equal(e->replace, replace);
}

static void assert_error_has(const char *part)
{
    if (!strstr(tnd_error_last(), part))
        fail_msg("error \"%s\" does not say \"%s\"", tnd_error_last(), part);
}

/* ---- what a diff becomes ------------------------------------------------ */

/* The modes a change sets, beside its edits: made executable with an
 * edit, made not executable alone, an executable file created; a mode
 * git prints for a file whose mode stays is none */
static void modes_come_beside_the_edits(void **state)
{
    static const char diff[] = "diff --git a/a.sh b/a.sh\n"
                               "old mode 100644\n"
                               "new mode 100755\n"
                               "--- a/a.sh\n"
                               "+++ b/a.sh\n"
                               "@@ -1 +1 @@\n"
                               "-a\n"
                               "+A\n"
                               "diff --git a/check.sh b/check.sh\n"
                               "old mode 100755\n"
                               "new mode 100644\n"
                               "diff --git a/new.sh b/new.sh\n"
                               "new file mode 100755\n"
                               "--- /dev/null\n"
                               "+++ b/new.sh\n"
                               "@@ -0,0 +1 @@\n"
                               "+n\n"
                               "diff --git a/plain.txt b/plain.txt\n"
                               "new file mode 100644\n"
                               "--- /dev/null\n"
                               "+++ b/plain.txt\n"
                               "@@ -0,0 +1 @@\n"
                               "+p\n";
    tnd_edit *e = NULL;
    tnd_exec_change *m = NULL;
    size_t n = 0, nm = 0;

    (void)state;
    assert_int_equal(
        tnd_unidiff_change(&e, &n, &m, &nm, diff, sizeof(diff) - 1), 0);
    assert_int_equal(n, 3);
    assert_int_equal(nm, 3);
    assert_string_equal(m[0].path, "a.sh");
    assert_true(m[0].exec);
    assert_string_equal(m[1].path, "check.sh");
    assert_false(m[1].exec);
    assert_string_equal(m[2].path, "new.sh");
    assert_true(m[2].exec);
    tnd_edit_list_free(e, n);
    tnd_unidiff_exec_free(m, nm);
    /* modes alone: no edit, and the modes */
    assert_int_equal(tnd_unidiff_change(&e, &n, &m, &nm, diff + 97, 65), 0);
    assert_int_equal(n, 0);
    assert_int_equal(nm, 1);
    assert_string_equal(m[0].path, "check.sh");
    tnd_edit_list_free(e, n);
    tnd_unidiff_exec_free(m, nm);
}

static void git_hunk_becomes_a_replace(void **state)
{
    static const char diff[] =
        "diff --git a/src/stats.c b/src/stats.c\n"
        "old mode 100644\n"
        "new mode 100755\n"
        "index 1111111..2222222\n"
        "--- a/src/stats.c\n"
        "+++ b/src/stats.c\n"
        "@@ -4,6 +4,7 @@ double stats_mean(const double *v, int n)\n"
        " {\n"
        "     double sum = 0;\n"
        "     for (int i = 0; i < n; i++)\n"
        "-        sum += v[i];\n"
        "+        sum += v[i]; /* no overflow check */\n"
        "+    assert(n > 0);\n"
        "     return sum / n;\n"
        " }\n";
    size_t n;
    tnd_edit *e = parse_ok(diff, &n);

    (void)state;
    assert_int_equal(n, 1);
    assert_edit(&e[0], TND_EDIT_REPLACE, "src/stats.c",
                "{\n"
                "    double sum = 0;\n"
                "    for (int i = 0; i < n; i++)\n"
                "        sum += v[i];\n"
                "    return sum / n;\n"
                "}\n",
                "{\n"
                "    double sum = 0;\n"
                "    for (int i = 0; i < n; i++)\n"
                "        sum += v[i]; /* no overflow check */\n"
                "    assert(n > 0);\n"
                "    return sum / n;\n"
                "}\n");

    /* tnd_edit_clear frees and zeroes, so clearing twice is harmless */
    tnd_edit_clear(&e[0]);
    assert_null(e[0].path);
    assert_null(e[0].search);
    assert_null(e[0].replace);
    tnd_edit_clear(&e[0]);
    free(e);
}

static void plain_diff_u_with_timestamps(void **state)
{
    static const char diff[] =
        "--- a/notes.txt\t2024-05-01 10:00:00.000000000 +0200\n"
        "+++ b/notes.txt\t2024-05-02 11:30:00.123456789 +0200\n"
        "@@ -1,3 +1,3 @@\n"
        " one\n"
        "-two\n"
        "+2\n"
        " three\n";
    size_t n;
    tnd_edit *e = parse_ok(diff, &n);

    (void)state;
    assert_int_equal(n, 1);
    assert_edit(&e[0], TND_EDIT_REPLACE, "notes.txt", "one\ntwo\nthree\n",
                "one\n2\nthree\n");
    tnd_edit_list_free(e, n);
}

/* diff -ruN dates the side of a file that is not there the epoch, in
 * any zone: a file created, a file deleted (it was read as a file of the
 * name "new/..." and as one emptied, and the deletion was approved) */
static void diff_N_epoch_sides_are_no_file(void **state)
{
    static const char diff[] =
        "diff -ruN old/new.c new/new.c\n"
        "--- old/new.c\t1970-01-01 00:00:00.000000000 +0000\n"
        "+++ new/new.c\t2026-11-26 05:45:23.039039149 +0000\n"
        "@@ -0,0 +1 @@\n"
        "+int y;\n"
        "diff -ruN old/gone.h new/gone.h\n"
        "--- old/gone.h\t2026-11-26 05:45:22.956559719 +0100\n"
        "+++ new/gone.h\t1969-12-31 19:00:00 -0500\n"
        "@@ -1 +0,0 @@\n"
        "-/* gone */\n"
        /* a second past the epoch is a date like any other */
        "--- old/kept.h\t1970-01-01 00:00:01 +0000\n"
        "+++ new/kept.h\t1970-01-01 00:00:00.5 +0000\n"
        "@@ -1 +1 @@\n"
        "-a\n"
        "+b\n";
    size_t n;
    tnd_edit *e = parse_ok(diff, &n);

    (void)state;
    assert_int_equal(n, 3);
    assert_int_equal(e[0].kind, TND_EDIT_WRITE);
    assert_string_equal(e[0].path, "new.c");
    assert_string_equal(e[0].replace, "int y;\n");
    assert_int_equal(e[1].kind, TND_EDIT_DELETE);
    assert_string_equal(e[1].path, "gone.h");
    assert_edit(&e[2], TND_EDIT_REPLACE, "kept.h", "a\n", "b\n");
    tnd_edit_list_free(e, n);
}

static void a_and_b_prefixes_are_dropped_once(void **state)
{
    static const char diff[] =
        /* git's prefixes around a top-level directory named "a" */
        "diff --git a/a/x.c b/a/x.c\n"
        "--- a/a/x.c\n"
        "+++ b/a/x.c\n"
        "@@ -1 +1 @@\n"
        "-x\n"
        "+y\n"
        "diff --git a/lib/y.c b/lib/y.c\n"
        "--- a/lib/y.c\n"
        "+++ b/lib/y.c\n"
        "@@ -1 +1 @@\n"
        "-y\n"
        "+z\n"
        /* a name that only begins like a prefix */
        "--- a/ab/z.c\n"
        "+++ b/ab/z.c\n"
        "@@ -1 +1 @@\n"
        "-z\n"
        "+w\n";
    size_t n;
    tnd_edit *e = parse_ok(diff, &n);

    (void)state;
    assert_int_equal(n, 3);
    assert_edit(&e[0], TND_EDIT_REPLACE, "a/x.c", "x\n", "y\n");
    assert_edit(&e[1], TND_EDIT_REPLACE, "lib/y.c", "y\n", "z\n");
    assert_edit(&e[2], TND_EDIT_REPLACE, "ab/z.c", "z\n", "w\n");
    tnd_edit_list_free(e, n);
}

/* A name read whole is src/f.c to tandem and patch -p0, f.c to git
 * apply and patch -p1: such a patch is refused (it was reviewed as
 * tandem read it, then rejected for git's reading), naming the line. */
static void names_without_prefixes_are_refused(void **state)
{
    static const char *const diffs[] = {
        /* svn diff */
        "--- src/f.c\t(revision 12)\n+++ src/f.c\t(working copy)\n"
        "@@ -1 +1 @@\n-x\n+y\n",
        /* git diff --no-prefix */
        "diff --git lib/y.c lib/y.c\n--- lib/y.c\n+++ lib/y.c\n"
        "@@ -1 +1 @@\n-y\n+z\n",
        /* diff -u of one file */
        "--- notes.txt\t2024-05-01 10:00:00 +0200\n"
        "+++ notes.txt\t2024-05-02 11:30:00 +0200\n@@ -1 +1 @@\n-a\n+b\n",
        /* a new file, one side named */
        "--- /dev/null\n+++ new.txt\n@@ -0,0 +1 @@\n+hello\n",
        NULL,
    };

    (void)state;
    for (size_t i = 0; diffs[i]; i++) {
        parse_fails(diffs[i]);
        assert_non_null(strstr(tnd_error_last(), "has no a/ and b/ "
                                                 "directory before it"));
    }
    assert_non_null(strstr(tnd_error_last(), "line 1: the file name "
                                             "'new.txt'"));
}

static void files_and_hunks_keep_their_order(void **state)
{
    static const char diff[] = "diff --git a/Makefile b/Makefile\n"
                               "index 1111111..2222222 100644\n"
                               "--- a/Makefile\n"
                               "+++ b/Makefile\n"
                               "@@ -1,3 +1,3 @@\n"
                               " all:\n"
                               "-\tcc -O0 x.c\n"
                               "+\tcc -O2 x.c\n"
                               " \n"
                               "@@ -20,2 +20,3 @@ clean:\n"
                               " clean:\n"
                               "+\trm -f a.out\n"
                               " \trm -f x.o\n"
                               "@@ -40,2 +41,1 @@ install:\n"
                               " install:\n"
                               "-\tcp x /usr/bin\n"
                               "diff --git a/docs/new.md b/docs/new.md\n"
                               "new file mode 100644\n"
                               "index 0000000..3333333\n"
                               "--- /dev/null\n"
                               "+++ b/docs/new.md\n"
                               "@@ -0,0 +1,2 @@\n"
                               "+# New\n"
                               "+text\n"
                               "diff --git a/old.c b/old.c\n"
                               "deleted file mode 100644\n"
                               "index 4444444..0000000\n"
                               "--- a/old.c\n"
                               "+++ /dev/null\n"
                               "@@ -1,2 +0,0 @@\n"
                               "-int old;\n"
                               "-int older;\n"
                               "diff --git a/x.c b/x.c\n"
                               "index 5555555..6666666 100644\n"
                               "--- a/x.c\n"
                               "+++ b/x.c\n"
                               "@@ -1 +1 @@\n"
                               "-int x;\n"
                               "+long x;\n";
    size_t n;
    tnd_edit *e = parse_ok(diff, &n);

    (void)state;
    assert_int_equal(n, 6);
    assert_edit(&e[0], TND_EDIT_REPLACE, "Makefile", "all:\n\tcc -O0 x.c\n\n",
                "all:\n\tcc -O2 x.c\n\n");
    assert_edit(&e[1], TND_EDIT_REPLACE, "Makefile", "clean:\n\trm -f x.o\n",
                "clean:\n\trm -f a.out\n\trm -f x.o\n");
    assert_edit(&e[2], TND_EDIT_REPLACE, "Makefile",
                "install:\n\tcp x /usr/bin\n", "install:\n");
    assert_edit(&e[3], TND_EDIT_WRITE, "docs/new.md", "", "# New\ntext\n");
    assert_edit(&e[4], TND_EDIT_DELETE, "old.c", "", "");
    assert_edit(&e[5], TND_EDIT_REPLACE, "x.c", "int x;\n", "long x;\n");
    tnd_edit_list_free(e, n);
}

static void created_file_is_a_write(void **state)
{
    static const char git[] = "diff --git a/src/new.c b/src/new.c\n"
                              "new file mode 100644\n"
                              "index 0000000..1111111\n"
                              "--- /dev/null\n"
                              "+++ b/src/new.c\n"
                              "@@ -0,0 +1,3 @@\n"
                              "+int f(void)\n"
                              "+{\n"
                              "+}\n";
    static const char plain[] =
        "--- /dev/null\t1970-01-01 00:00:00.000000000 +0000\n"
        "+++ b/new.txt\t2024-05-02 11:30:00.000000000 +0000\n"
        "@@ -0,0 +1 @@\n"
        "+hello\n";
    size_t n;
    tnd_edit *e = parse_ok(git, &n);

    (void)state;
    assert_int_equal(n, 1);
    assert_edit(&e[0], TND_EDIT_WRITE, "src/new.c", "", "int f(void)\n{\n}\n");
    tnd_edit_list_free(e, n);

    e = parse_ok(plain, &n);
    assert_int_equal(n, 1);
    assert_edit(&e[0], TND_EDIT_WRITE, "new.txt", "", "hello\n");
    tnd_edit_list_free(e, n);
}

static void deleted_file_is_a_delete(void **state)
{
    static const char git[] = "diff --git a/src/gone.c b/src/gone.c\n"
                              "deleted file mode 100644\n"
                              "index 1111111..0000000\n"
                              "--- a/src/gone.c\n"
                              "+++ /dev/null\n"
                              "@@ -1,3 +0,0 @@\n"
                              "-int f(void)\n"
                              "-{\n"
                              "-}\n"
                              "\\ No newline at end of file\n";
    static const char plain[] =
        "--- a/gone.txt\t2024-05-01 10:00:00.000000000 +0000\n"
        "+++ /dev/null\t1970-01-01 00:00:00.000000000 +0000\n"
        "@@ -1 +0,0 @@\n"
        "-bye\n";
    size_t n;
    tnd_edit *e = parse_ok(git, &n);

    (void)state;
    assert_int_equal(n, 1);
    assert_edit(&e[0], TND_EDIT_DELETE, "src/gone.c", "", "");
    tnd_edit_list_free(e, n);

    e = parse_ok(plain, &n);
    assert_int_equal(n, 1);
    assert_edit(&e[0], TND_EDIT_DELETE, "gone.txt", "", "");
    tnd_edit_list_free(e, n);
}

/* ---- "\ No newline at end of file" -------------------------------------- */

static void no_newline_on_the_old_side(void **state)
{
    static const char diff[] = "--- a/f\n"
                               "+++ b/f\n"
                               "@@ -1,2 +1,2 @@\n"
                               " a\n"
                               "-b\n"
                               "\\ No newline at end of file\n"
                               "+b\n";
    size_t n;
    tnd_edit *e = parse_ok(diff, &n);

    (void)state;
    assert_int_equal(n, 1);
    assert_edit(&e[0], TND_EDIT_REPLACE, "f", "a\nb", "a\nb\n");
    tnd_edit_list_free(e, n);
}

static void no_newline_on_the_new_side(void **state)
{
    static const char diff[] = "--- a/f\n"
                               "+++ b/f\n"
                               "@@ -1,2 +1,2 @@\n"
                               " a\n"
                               "-b\n"
                               "+c\n"
                               "\\ No newline at end of file\n"
                               /* a second file, so the marker is not last */
                               "--- a/g\n"
                               "+++ b/g\n"
                               "@@ -1 +1 @@\n"
                               "-g\n"
                               "+G\n";
    static const char created[] = "--- /dev/null\n"
                                  "+++ b/h\n"
                                  "@@ -0,0 +1,2 @@\n"
                                  "+a\n"
                                  "+b\n"
                                  "\\ No newline at end of file\n";
    size_t n;
    tnd_edit *e = parse_ok(diff, &n);

    (void)state;
    assert_int_equal(n, 2);
    assert_edit(&e[0], TND_EDIT_REPLACE, "f", "a\nb\n", "a\nc");
    assert_edit(&e[1], TND_EDIT_REPLACE, "g", "g\n", "G\n");
    tnd_edit_list_free(e, n);

    e = parse_ok(created, &n);
    assert_int_equal(n, 1);
    assert_edit(&e[0], TND_EDIT_WRITE, "h", "", "a\nb");
    tnd_edit_list_free(e, n);
}

static void no_newline_on_both_sides(void **state)
{
    static const char changed[] = "--- a/f\n"
                                  "+++ b/f\n"
                                  "@@ -1,2 +1,2 @@\n"
                                  " a\n"
                                  "-b\n"
                                  "\\ No newline at end of file\n"
                                  "+c\n"
                                  "\\ No newline at end of file\n";
    /* the last line is context: one marker for both sides */
    static const char context[] = "--- a/f\n"
                                  "+++ b/f\n"
                                  "@@ -1,2 +1,2 @@\n"
                                  "-a\n"
                                  "+A\n"
                                  " b\n"
                                  "\\ No newline at end of file\n";
    size_t n;
    tnd_edit *e = parse_ok(changed, &n);

    (void)state;
    assert_int_equal(n, 1);
    assert_edit(&e[0], TND_EDIT_REPLACE, "f", "a\nb", "a\nc");
    tnd_edit_list_free(e, n);

    e = parse_ok(context, &n);
    assert_int_equal(n, 1);
    assert_edit(&e[0], TND_EDIT_REPLACE, "f", "a\nb", "A\nb");
    tnd_edit_list_free(e, n);
}

/* ---- line endings and blank lines --------------------------------------- */

static void crlf_line_endings_are_stripped(void **state)
{
    static const char diff[] = "diff --git a/f b/f\r\n"
                               "index 1111111..2222222 100644\r\n"
                               "--- a/f\r\n"
                               "+++ b/f\r\n"
                               "@@ -1,3 +1,3 @@\r\n"
                               " a\r\n"
                               "-b\r\n"
                               "+B\r\n"
                               "\r\n"
                               "\\ No newline at end of file\r\n"
                               "--- /dev/null\r\n"
                               "+++ b/g\r\n"
                               "@@ -0,0 +1 @@\r\n"
                               "+g\r\n";
    size_t n;
    tnd_edit *e = parse_ok(diff, &n);

    (void)state;
    assert_int_equal(n, 2);
    assert_edit(&e[0], TND_EDIT_REPLACE, "f", "a\nb\n", "a\nB\n");
    assert_edit(&e[1], TND_EDIT_WRITE, "g", "", "g\n");
    tnd_edit_list_free(e, n);
}

/* git's diff of a CRLF file: headers end in LF, the file's lines keep
 * their CR as content (stripped, a review audited the file as LF). */
static void crlf_content_is_kept(void **state)
{
    static const char diff[] = "diff --git a/w.txt b/w.txt\n"
                               "--- a/w.txt\n"
                               "+++ b/w.txt\n"
                               "@@ -1,2 +1,2 @@\n"
                               " hello\r\n"
                               "-world\r\n"
                               "+World\r\n";
    size_t n;
    tnd_edit *e = parse_ok(diff, &n);

    (void)state;
    assert_int_equal(n, 1);
    assert_edit(&e[0], TND_EDIT_REPLACE, "w.txt", "hello\r\nworld\r\n",
                "hello\r\nWorld\r\n");
    tnd_edit_list_free(e, n);
}

static void empty_line_without_space_is_context(void **state)
{
    /* some editors and mailers strip the lone space of an empty context
     * line; the line still counts on both sides */
    static const char diff[] = "--- a/f.c\n"
                               "+++ b/f.c\n"
                               "@@ -1,5 +1,5 @@\n"
                               " int a;\n"
                               "\n"
                               "-int b;\n"
                               "+long b;\n"
                               "\n"
                               " int c;\n";
    size_t n;
    tnd_edit *e = parse_ok(diff, &n);

    (void)state;
    assert_int_equal(n, 1);
    assert_edit(&e[0], TND_EDIT_REPLACE, "f.c", "int a;\n\nint b;\n\nint c;\n",
                "int a;\n\nlong b;\n\nint c;\n");
    tnd_edit_list_free(e, n);
}

/* ---- empty files -------------------------------------------------------- */

static void created_empty_file_without_hunks(void **state)
{
    static const char diff[] = "--- /dev/null\n"
                               "+++ b/empty.txt\n"
                               "--- a/f\n"
                               "+++ b/f\n"
                               "@@ -1 +1 @@\n"
                               "-f\n"
                               "+F\n";
    size_t n;
    tnd_edit *e = parse_ok(diff, &n);

    (void)state;
    assert_int_equal(n, 2);
    assert_edit(&e[0], TND_EDIT_WRITE, "empty.txt", "", "");
    assert_edit(&e[1], TND_EDIT_REPLACE, "f", "f\n", "F\n");
    tnd_edit_list_free(e, n);
}

/* git prints no ---/+++ lines for an empty file created or deleted, only
 * "diff --git", "new file mode" or "deleted file mode", and "index"
 * (common/diff.c writes the same). */
static void git_created_empty_file(void **state)
{
    static const char alone[] = "diff --git a/empty.txt b/empty.txt\n"
                                "new file mode 100644\n"
                                "index 0000000..e69de29\n";
    static const char beside[] = "diff --git a/f b/f\n"
                                 "index 1111111..2222222 100644\n"
                                 "--- a/f\n"
                                 "+++ b/f\n"
                                 "@@ -1 +1 @@\n"
                                 "-f\n"
                                 "+F\n"
                                 "diff --git a/my empty.txt b/my empty.txt\n"
                                 "new file mode 100755\n"
                                 "index 0000000..e69de29\n"
                                 "diff --git a/g b/g\n"
                                 "index 1111111..2222222 100644\n"
                                 "--- a/g\n"
                                 "+++ b/g\n"
                                 "@@ -1 +1 @@\n"
                                 "-g\n"
                                 "+G\n";
    static const char crlf[] = "diff --git a/e b/e\r\n"
                               "new file mode 100644\r\n"
                               "index 0000000..e69de29\r\n";
    size_t n;
    tnd_edit *e = parse_ok(alone, &n);

    (void)state;
    assert_int_equal(n, 1);
    assert_edit(&e[0], TND_EDIT_WRITE, "empty.txt", "", "");
    tnd_edit_list_free(e, n);

    /* in its place among the others; a name with a space */
    e = parse_ok(beside, &n);
    assert_int_equal(n, 3);
    assert_edit(&e[0], TND_EDIT_REPLACE, "f", "f\n", "F\n");
    assert_edit(&e[1], TND_EDIT_WRITE, "my empty.txt", "", "");
    assert_edit(&e[2], TND_EDIT_REPLACE, "g", "g\n", "G\n");
    tnd_edit_list_free(e, n);

    e = parse_ok(crlf, &n);
    assert_int_equal(n, 1);
    assert_edit(&e[0], TND_EDIT_WRITE, "e", "", "");
    tnd_edit_list_free(e, n);
}

static void git_deleted_empty_file(void **state)
{
    static const char diff[] = "diff --git a/f b/f\n"
                               "index 1111111..2222222 100644\n"
                               "--- a/f\n"
                               "+++ b/f\n"
                               "@@ -1 +1 @@\n"
                               "-f\n"
                               "+F\n"
                               "diff --git a/gone.txt b/gone.txt\n"
                               "deleted file mode 100644\n"
                               "index e69de29..0000000\n";
    size_t n;
    tnd_edit *e = parse_ok(diff, &n);

    (void)state;
    assert_int_equal(n, 2);
    assert_edit(&e[0], TND_EDIT_REPLACE, "f", "f\n", "F\n");
    assert_edit(&e[1], TND_EDIT_DELETE, "gone.txt", "", "");
    tnd_edit_list_free(e, n);
}

static void git_header_alone_changes_nothing(void **state)
{
    static const char diff[] = /* a mode change only */
        "diff --git a/run.sh b/run.sh\n"
        "old mode 100644\n"
        "new mode 100755\n"
        /* "new file mode" belongs to the header before it only */
        "diff --git a/f b/f\n"
        "index 1111111..2222222 100644\n"
        "--- a/f\n"
        "+++ b/f\n"
        "@@ -1 +1 @@\n"
        "-f\n"
        "+F\n"
        "new file mode 100644\n";
    size_t n;
    tnd_edit *e = parse_ok(diff, &n);

    (void)state;
    assert_int_equal(n, 1);
    assert_edit(&e[0], TND_EDIT_REPLACE, "f", "f\n", "F\n");
    tnd_edit_list_free(e, n);
}

/* ---- refused diffs ------------------------------------------------------ */

/* A link's or a submodule's "text" is its target or a commit id: not a
 * file a workspace can hold as it is (a new link was audited as a text
 * file). Mode changes alone are no edit, which review calls empty. */
static void links_submodules_and_modes_alone(void **state)
{
    tnd_edit *e = (tnd_edit *)1;
    size_t n = 99;

    (void)state;
    parse_fails("diff --git a/config.txt b/config.txt\n"
                "new file mode 120000\n"
                "index 0000000..1111111\n"
                "--- /dev/null\n"
                "+++ b/config.txt\n"
                "@@ -0,0 +1 @@\n"
                "+/etc/passwd\n"
                "\\ No newline at end of file\n");
    assert_error_has("line 2, config.txt: a symbolic link (new file mode "
                     "120000); only regular files can be reviewed (leave it "
                     "out and review the rest with --diff FILE, or commit it "
                     "with git commit --no-verify)");
    parse_fails("diff --git a/lnk b/lnk\n"
                "index 1111111..2222222 120000\n"
                "--- a/lnk\n"
                "+++ b/lnk\n"
                "@@ -1 +1 @@\n"
                "-a\n"
                "+b\n");
    assert_error_has("a symbolic link");
    parse_fails("diff --git a/lib b/lib\n"
                "index 1111111..2222222 160000\n"
                "--- a/lib\n"
                "+++ b/lib\n"
                "@@ -1 +1 @@\n"
                "-Subproject commit 1111111\n"
                "+Subproject commit 2222222\n");
    assert_error_has("line 2, lib: a submodule (index 1111111..2222222 "
                     "160000)");
    {
        static const char modes[] = "diff --git a/run.sh b/run.sh\n"
                                    "old mode 100644\n"
                                    "new mode 100755\n";
        assert_int_equal(parse_len(&e, &n, modes, sizeof(modes) - 1), 0);
    }
    assert_int_equal(n, 0);
    tnd_edit_list_free(e, n);
    /* a mode line git did not write: no change of modes */
    parse_fails("diff -ur old/stats.c new/stats.c\n"
                "new mode --- old/stats.c\t2024-01-01\n"
                "+++ new/stats.c\n");
    assert_error_has("no file changes found");
}

/* git quotes names with quotes, backslashes, control or non-ASCII bytes
 * (the review said such a change was a rename). */
static void quoted_names_are_unquoted(void **state)
{
    size_t n;
    tnd_edit *e;

    (void)state;
    e = parse_ok("diff --git \"a/\\303\\274.txt\" \"b/\\303\\274.txt\"\n"
                 "--- \"a/\\303\\274.txt\"\n"
                 "+++ \"b/\\303\\274.txt\"\n"
                 "@@ -1 +1 @@\n"
                 "-a\n"
                 "+b\n"
                 "diff --git \"a/say \\\"hi\\\"\" \"b/say \\\"hi\\\"\"\n"
                 "new file mode 100644\n"
                 "index 0000000..e69de29\n",
                 &n);
    assert_int_equal(n, 2);
    assert_edit(&e[0], TND_EDIT_REPLACE, "\xc3\xbc.txt", "a\n", "b\n");
    assert_edit(&e[1], TND_EDIT_WRITE, "say \"hi\"", "", "");
    tnd_edit_list_free(e, n);
}

static void renames_and_copies_are_refused(void **state)
{
    (void)state;
    /* git diff -M, pure rename: no ---/+++ at all */
    parse_fails("diff --git a/old.c b/new.c\n"
                "similarity index 100%\n"
                "rename from old.c\n"
                "rename to new.c\n");
    assert_string_equal(tnd_error_last(),
                        "line 3: renames and copies cannot be reviewed yet "
                        "(make the diff with --no-renames)");

    /* rename with changes, after a good file */
    parse_fails("--- a/f\n"
                "+++ b/f\n"
                "@@ -1 +1 @@\n"
                "-f\n"
                "+F\n"
                "diff --git a/old.c b/new.c\n"
                "similarity index 90%\n"
                "rename from old.c\n"
                "rename to new.c\n"
                "index 1111111..2222222 100644\n"
                "--- a/old.c\n"
                "+++ b/new.c\n"
                "@@ -1 +1 @@\n"
                "-x\n"
                "+y\n");
    assert_string_equal(tnd_error_last(),
                        "line 8: renames and copies cannot be reviewed yet "
                        "(make the diff with --no-renames)");

    parse_fails("diff --git a/a.c b/b.c\n"
                "similarity index 100%\n"
                "copy from a.c\n"
                "copy to b.c\n");
    assert_error_has("line 3: renames and copies cannot be reviewed yet");

    /* no rename lines, but ---/+++ name different files */
    parse_fails("--- a/old.c\n"
                "+++ b/new.c\n"
                "@@ -1 +1 @@\n"
                "-x\n"
                "+y\n");
    assert_error_has("new.c is renamed from old.c; renames cannot be "
                     "reviewed yet (make the diff with --no-renames)");
}

/* Every path is checked as the change is loaded, as a code reply's are:
 * one an edit cannot hold is an error naming it, not a session that
 * fails later (a review that could not be done, which may pass). */
static void paths_an_edit_cannot_hold_are_refused(void **state)
{
    (void)state;
    parse_fails("diff --git a/ok.txt b/ok.txt\n"
                "--- a/ok.txt\n"
                "+++ b/ok.txt\n"
                "@@ -1 +1 @@\n"
                "-a\n"
                "+b\n"
                "diff --git \"a/innocent\\\\name.txt\" "
                "\"b/innocent\\\\name.txt\"\n"
                "new file mode 100644\n"
                "--- /dev/null\n"
                "+++ \"b/innocent\\\\name.txt\"\n"
                "@@ -0,0 +1 @@\n"
                "+x\n");
    assert_string_equal(tnd_error_last(),
                        "'innocent\\name.txt' cannot be reviewed: path "
                        "contains a control character or a backslash; "
                        "rename it, or leave it out of the change");
    /* git's header alone: an empty file created */
    parse_fails("diff --git \"a/tab\\tname\" \"b/tab\\tname\"\n"
                "new file mode 100644\n"
                "index 0000000..e69de29\n");
    assert_error_has("'tab?name' cannot be reviewed");
    parse_fails("--- a/.git/config\n"
                "+++ b/.git/config\n"
                "@@ -1 +1 @@\n"
                "-a\n"
                "+b\n");
    assert_error_has("'.git/config' cannot be reviewed: '.git/config' is "
                     "inside .git");
}

static void binary_changes_are_refused(void **state)
{
    (void)state;
    parse_fails("diff --git a/logo.png b/logo.png\n"
                "index 1111111..2222222 100644\n"
                "Binary files a/logo.png and b/logo.png differ\n");
    assert_string_equal(tnd_error_last(),
                        "line 3, logo.png: a binary change; only text changes "
                        "can be reviewed (leave it out and review the rest "
                        "with --diff FILE, or commit it with git commit "
                        "--no-verify)");

    parse_fails("--- a/f\n"
                "+++ b/f\n"
                "@@ -1 +1 @@\n"
                "-f\n"
                "+F\n"
                "diff --git a/logo.png b/logo.png\n"
                "index 1111111..2222222 100644\n"
                "GIT binary patch\n"
                "literal 5\n"
                "McmZ?wbhEGi00\n"
                "\n"
                "literal 3\n"
                "KcmZ?wbhEGi0\n");
    assert_error_has("line 8, logo.png: a binary change; only text changes "
                     "can be reviewed");
    parse_fails("--- a/f\n"
                "+++ b/f\n"
                "@@ -1 +1 @@\n"
                "-f\n"
                "+F\n"
                "Binary files a/logo.png and b/logo.png differ\n");
    assert_error_has("line 6: a binary change; only text changes can be "
                     "reviewed (leave it out");
}

/* A binary file deleted, as git diff --binary writes it (a review of git
 * changes): a deletion, whatever it held; it was refused as a binary
 * change, and the hook stopped every commit that removed an image. Git's
 * "Binary files ... differ" for one is still refused: git apply cannot
 * apply it. */
static void a_binary_file_deleted_is_a_deletion(void **state)
{
    size_t n;
    tnd_edit *e;

    (void)state;
    e = parse_ok("diff --git a/logo.png b/logo.png\n"
                 "deleted file mode 100644\n"
                 "index 1111111111111111111111111111111111111111.."
                 "0000000000000000000000000000000000000000\n"
                 "GIT binary patch\n"
                 "literal 0\n"
                 "HcmV?d00001\n"
                 "\n"
                 "literal 5\n"
                 "McmZ?wbhEGi00\n"
                 "\n"
                 "--- a/f\n"
                 "+++ b/f\n"
                 "@@ -1 +1 @@\n"
                 "-f\n"
                 "+F\n",
                 &n);
    assert_int_equal(n, 2);
    assert_edit(&e[0], TND_EDIT_DELETE, "logo.png", "", "");
    assert_edit(&e[1], TND_EDIT_REPLACE, "f", "f\n", "F\n");
    tnd_edit_list_free(e, n);

    parse_fails("diff --git a/logo.png b/logo.png\n"
                "deleted file mode 100644\n"
                "index 1111111..0000000\n"
                "Binary files a/logo.png and /dev/null differ\n");
    assert_error_has("line 4, logo.png: a binary change");
}

/* Every hunk is placed where its header says, in the file as the hunks
 * before it left it (the line after +c,0 when it leaves no line): the
 * same lines elsewhere in the file are not this hunk, and a hunk with no
 * old lines (git diff -U0, a file that was empty) inserts there. */
static void hunks_are_placed_by_their_headers(void **state)
{
    size_t n;
    tnd_edit *e;

    (void)state;
    e = parse_ok("--- a/f.c\n"
                 "+++ b/f.c\n"
                 "@@ -3,0 +4,2 @@ int main(void)\n"
                 "+x\n"
                 "+y\n"
                 "@@ -2 +1,0 @@\n"
                 "-b\n"
                 "@@ -5 +4 @@\n"
                 "-e\n"
                 "+E\n"
                 "@@ -8,3 +9,4 @@\n"
                 " A\n"
                 " B\n"
                 "+C\n"
                 " A\n",
                 &n);
    assert_int_equal(n, 4);
    assert_edit(&e[0], TND_EDIT_REPLACE, "f.c", "", "x\ny\n");
    assert_int_equal(e[0].line, 4);
    assert_edit(&e[1], TND_EDIT_REPLACE, "f.c", "b\n", "");
    assert_int_equal(e[1].line, 2);
    assert_edit(&e[2], TND_EDIT_REPLACE, "f.c", "e\n", "E\n");
    assert_int_equal(e[2].line, 4);
    assert_edit(&e[3], TND_EDIT_REPLACE, "f.c", "A\nB\nA\n", "A\nB\nC\nA\n");
    assert_int_equal(e[3].line, 9);
    tnd_edit_list_free(e, n);

    /* lines added to a file that was empty */
    e = parse_ok("diff --git a/__init__.py b/__init__.py\n"
                 "--- a/__init__.py\n"
                 "+++ b/__init__.py\n"
                 "@@ -0,0 +1 @@\n"
                 "+VERSION = 1\n",
                 &n);
    assert_int_equal(n, 1);
    assert_edit(&e[0], TND_EDIT_REPLACE, "__init__.py", "", "VERSION = 1\n");
    assert_int_equal(e[0].line, 1);
    tnd_edit_list_free(e, n);
}

static void hunk_cut_short_is_refused(void **state)
{
    (void)state;
    parse_fails("--- a/f\n"
                "+++ b/f\n"
                "@@ -1,3 +1,3 @@\n"
                " a\n"
                "-b\n"
                "+B\n");
    assert_error_has("hunk 1 of f ends early (the diff is cut short)");

    parse_fails("--- a/f\n"
                "+++ b/f\n"
                "@@ -1 +1 @@\n"
                "-a\n"
                "+A\n"
                "@@ -10,3 +10,3 @@\n"
                " j\n");
    assert_error_has("hunk 2 of f ends early (the diff is cut short)");

    /* a deleted file's hunks are read too */
    parse_fails("--- a/gone\n"
                "+++ /dev/null\n"
                "@@ -1,3 +0,0 @@\n"
                "-a\n");
    assert_error_has("hunk 1 of gone ends early");

    /* cut inside the header */
    parse_fails("--- a/f\n"
                "+++ b/f\n"
                "@@ -1,2 +1,2 @@\n");
    assert_error_has("hunk 1 of f ends early");
}

static void hunk_longer_than_its_header_is_refused(void **state)
{
    (void)state;
    parse_fails("--- a/f\n"
                "+++ b/f\n"
                "@@ -1 +1,2 @@\n"
                "-a\n"
                "-b\n"
                "+A\n"
                "+B\n");
    assert_error_has("hunk 1 of f has more old lines than its header says");

    parse_fails("--- a/f\n"
                "+++ b/f\n"
                "@@ -1,2 +1 @@\n"
                " a\n"
                "+x\n"
                "+y\n"
                " b\n");
    assert_error_has("hunk 1 of f has more new lines than its header says");

    /* a context line feeds both sides */
    parse_fails("--- a/f\n"
                "+++ b/f\n"
                "@@ -1 +1,2 @@\n"
                " a\n"
                " b\n"
                "+c\n");
    assert_error_has("hunk 1 of f has more old lines than its header says");
}

static void unexpected_line_in_a_hunk_is_refused(void **state)
{
    (void)state;
    parse_fails("--- a/f\n"
                "+++ b/f\n"
                "@@ -1,3 +1,3 @@\n"
                " a\n"
                "*b\n"
                " c\n");
    assert_error_has("line 5: hunk 1 of f has a line starting with '*'; is "
                     "the diff complete?");

    /* the next file's header where the hunk should go on */
    parse_fails("--- a/f\n"
                "+++ b/f\n"
                "@@ -1,3 +1,3 @@\n"
                " a\n"
                "-b\n"
                "+B\n"
                "diff --git a/g b/g\n"
                "--- a/g\n"
                "+++ b/g\n");
    assert_error_has("line 7: hunk 1 of f has a line starting with 'd'");
}

static void unreadable_hunk_header_is_refused(void **state)
{
    char header[200];

    (void)state;
    parse_fails("--- a/f\n"
                "+++ b/f\n"
                "@@ bogus @@\n"
                " a\n");
    assert_error_has("line 3: a hunk header of f that cannot be read: "
                     "@@ bogus @@");

    parse_fails("--- a/f\n"
                "+++ b/f\n"
                "@@ -1,99999999 +1,99999999 @@\n"
                " a\n");
    assert_error_has("a hunk header of f that cannot be read");

    /* a place past a long's range, with no new lines (the fuzzer found
     * the line after it overflow) */
    parse_fails("--- a/f\n"
                "+++ b/f\n"
                "@@ -1 +99999999999999999999999999,0 @@\n"
                "-a\n");
    assert_error_has("a hunk header of f that cannot be read");

    /* a header too long to be one; the message quotes 80 bytes of it */
    memset(header, 'x', sizeof(header));
    memcpy(header, "--- a/f\n+++ b/f\n@@ -1 +1 @@ ", 28);
    header[sizeof(header) - 2] = '\n';
    header[sizeof(header) - 1] = '\0';
    parse_fails(header);
    assert_error_has("a hunk header of f that cannot be read: @@ -1 +1 @@ x");
    assert_null(strstr(tnd_error_last(), "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
                                         "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
                                         "xxxxxxxxx"));
}

static void text_that_is_not_a_diff_is_refused(void **state)
{
    static const char *const not_diffs[] = {
        "",
        "hello\nworld\n",
        /* a commit message's --- separator is not a file header */
        "Subject: [PATCH] fix\n\n---\n f | 2 +-\n",
        /* a file header without hunks */
        "--- a/f\n+++ b/f\n",
        /* a --- line with no +++ after it */
        "--- a/f\n@@ -1 +1 @@\n-a\n+b\n",
    };

    (void)state;
    for (size_t i = 0; i < sizeof(not_diffs) / sizeof(not_diffs[0]); i++) {
        parse_fails(not_diffs[i]);
        assert_string_equal(tnd_error_last(),
                            "no file changes found (is it a unified diff?)");
    }

    parse_fails("--- /dev/null\n+++ /dev/null\n");
    assert_error_has("line 2: both sides of a file are /dev/null");
}

static void hunks(tnd_buf *b, size_t files)
{
    for (size_t i = 0; i < files; i++)
        tnd_buf_printf(b,
                       "--- a/f%zu\n"
                       "+++ b/f%zu\n"
                       "@@ -1 +1 @@\n"
                       "-a\n"
                       "+b\n",
                       i, i);
}

static void more_than_the_edit_limit_is_refused(void **state)
{
    tnd_buf b;
    tnd_edit *e;
    size_t n;

    (void)state;
    /* exactly the limit: fine */
    tnd_buf_init(&b, TND_BUF_NOCAP);
    hunks(&b, TND_BODY_MAX_EDITS);
    e = parse_ok(b.data, &n);
    assert_int_equal(n, TND_BODY_MAX_EDITS);
    assert_edit(&e[TND_BODY_MAX_EDITS - 1], TND_EDIT_REPLACE, "f499", "a\n",
                "b\n");
    tnd_edit_list_free(e, n);

    /* one file over */
    tnd_buf_reset(&b);
    hunks(&b, TND_BODY_MAX_EDITS + 1);
    parse_fails(b.data);
    assert_error_has("the diff has more than 500 hunks and files; review it "
                     "in parts");

    /* one hunk over, in one file */
    tnd_buf_reset(&b);
    tnd_buf_puts(&b, "--- a/big\n+++ b/big\n");
    for (int i = 0; i <= TND_BODY_MAX_EDITS; i++)
        tnd_buf_printf(&b, "@@ -%d +%d @@\n-%d\n+x%d\n", i + 1, i + 1, i, i);
    parse_fails(b.data);
    assert_error_has("more than 500 hunks and files");

    /* created and deleted files count as well, empty ones too */
    tnd_buf_reset(&b);
    hunks(&b, TND_BODY_MAX_EDITS);
    tnd_buf_puts(&b, "--- a/gone\n+++ /dev/null\n");
    parse_fails(b.data);
    assert_error_has("more than 500 hunks and files");
    tnd_buf_reset(&b);
    hunks(&b, TND_BODY_MAX_EDITS);
    tnd_buf_puts(&b, "diff --git a/e b/e\nnew file mode 100644\n");
    parse_fails(b.data);
    assert_error_has("more than 500 hunks and files");
    tnd_buf_reset(&b);
    hunks(&b, TND_BODY_MAX_EDITS);
    tnd_buf_puts(&b, "diff --git a/e b/e\ndeleted file mode 100644\n"
                     "diff --git a/f0 b/f0\n");
    parse_fails(b.data);
    assert_error_has("more than 500 hunks and files");
    tnd_buf_free(&b);
}

static void only_len_bytes_are_read(void **state)
{
    static const char two[] = "--- a/f\n"
                              "+++ b/f\n"
                              "@@ -1 +1 @@\n"
                              "-f\n"
                              "+F\n"
                              "--- a/g\n"
                              "+++ b/g\n"
                              "@@ -1 +1 @@\n"
                              "-g\n"
                              "+G\n";
    tnd_edit *e;
    size_t n;

    (void)state;
    /* the length stops the parser, not a NUL */
    assert_int_equal(parse_len(&e, &n, two, strlen(two) / 2), 0);
    assert_int_equal(n, 1);
    assert_edit(&e[0], TND_EDIT_REPLACE, "f", "f\n", "F\n");
    tnd_edit_list_free(e, n);

    /* a last line without its newline */
    assert_int_equal(parse_len(&e, &n, two, strlen(two) - 1), 0);
    assert_int_equal(n, 2);
    assert_edit(&e[1], TND_EDIT_REPLACE, "g", "g\n", "G\n");
    tnd_edit_list_free(e, n);

    /* a "--- " header cut off before its "+++ " line: fewer than four
     * bytes are left, none is read past len (ASan and valgrind watch),
     * and the incomplete header is ignored like any other prose */
    assert_int_equal(parse_len(&e, &n, two,
                               strlen("--- a/f\n+++ b/f\n@@ -1 +1 "
                                      "@@\n-f\n+F\n--- a/g\n+")),
                     0);
    assert_int_equal(n, 1);
    assert_edit(&e[0], TND_EDIT_REPLACE, "f", "f\n", "F\n");
    tnd_edit_list_free(e, n);
}

/* Bytes that are not UTF-8: edits are UTF-8, so a Latin-1 line became
 * U+FFFD and was audited as another line than the one committed. */
static void bytes_that_are_not_utf8_are_refused(void **state)
{
    static const char added[] =
        "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-cafe\n+caf\xe9\n";
    static const char context[] = "--- a/g.c\n+++ b/g.c\n@@ -1,2 +1,2 @@\n"
                                  " /* na\xefve */\n-x\n+y\n";
    tnd_edit *e = (tnd_edit *)&e;
    size_t n = 99;

    (void)state;
    assert_int_equal(parse_len(&e, &n, added, sizeof(added) - 1), -1);
    assert_null(e);
    assert_int_equal(n, 0);
    assert_non_null(strstr(tnd_error_last(), "line 5, b/f: bytes that are "
                                             "not UTF-8"));
    assert_int_equal(parse_len(&e, &n, context, sizeof(context) - 1), -1);
    assert_non_null(strstr(tnd_error_last(), "line 4, b/g.c: bytes that are "
                                             "not UTF-8"));
    assert_non_null(strstr(tnd_error_last(), "git commit --no-verify"));
    /* the header naming the file is the diff's last line, with no
     * newline (and no NUL) after it: the name ends at the diff's end
     * (read past it; found by tests/fuzz/fuzz_unidiff) */
    {
        static const char last[] = "--- a/f\n+++ new/st\xe0n";
        assert_int_equal(parse_len(&e, &n, last, sizeof(last) - 1), -1);
        assert_error_has("\"new/st\\340n\" cannot be reviewed");
    }
    /* a removed line "-- caf\xe9" followed by another is no header */
    {
        static const char sql[] = "--- a/q.sql\n+++ b/q.sql\n@@ -1,2 +0,0 "
                                  "@@\n-- caf\xe9\n-x\n";
        assert_int_equal(parse_len(&e, &n, sql, sizeof(sql) - 1), -1);
        assert_error_has("line 4, b/q.sql: bytes that are not UTF-8");
    }
}

/* A file whose name is not UTF-8 (Latin-1 "lat\xe9.txt"): the refusal
 * names it as git quotes it and says why and what to do; it said "line
 * 1: bytes that are not UTF-8", never which file. As git writes it with
 * core.quotePath=false (as a review of git changes reads it: its bytes
 * as they are, on the "diff --git" line first), and quoted (a patch file
 * of git's default): the name unquoted is no UTF-8 either (it went on
 * to a review, rejected). Valid UTF-8 in the name is shown as it is. */
static void names_that_are_not_utf8_are_refused(void **state)
{
    static const char *const diffs[] = {
        "diff --git a/lat\xe9.txt b/lat\xe9.txt\nnew file mode 100644\n"
        "--- /dev/null\n+++ b/lat\xe9.txt\n@@ -0,0 +1 @@\n+a\n",
        "diff --git \"a/lat\\351.txt\" \"b/lat\\351.txt\"\n"
        "new file mode 100644\n--- /dev/null\n+++ \"b/lat\\351.txt\"\n"
        "@@ -0,0 +1 @@\n+a\n",
        "--- a/lat\xe9.txt\n+++ b/lat\xe9.txt\n@@ -1 +1 @@\n-a\n+b\n",
        "--- \"a/lat\\351.txt\"\n+++ \"b/lat\\351.txt\"\n@@ -1 +1 @@\n"
        "-a\n+b\n",
        "diff --git a/lat\xe9.txt b/lat\xe9.txt\ndeleted file mode 100644\n",
    };

    (void)state;
    for (size_t i = 0; i < sizeof(diffs) / sizeof(*diffs); i++) {
        parse_fails(diffs[i]);
        assert_error_has("\"lat\\351.txt\" cannot be reviewed: its name is "
                         "not UTF-8, and tandem carries file names in JSON "
                         "bodies, which hold UTF-8 only; rename it");
        assert_error_has("git commit --no-verify");
    }
    parse_fails("--- a/d\xc3\xa9j\xe0/x\"y\n+++ b/d\xc3\xa9j\xe0/x\"y\n"
                "@@ -1 +1 @@\n-a\n+b\n");
    assert_error_has("\"d\xc3\xa9j\\340/x\\\"y\" cannot be reviewed");
}

/* A NUL byte in the diff: the edits are C strings, so a hunk line "-f\0oo"
 * would have searched for "f" and a header "a/f\0x" named "f", a change
 * other than the one under review. Found by tests/fuzz/fuzz_unidiff: the
 * first input below became a REPLACE with an empty SEARCH. */
static void a_nul_byte_is_refused(void **state)
{
    static const char fuzzed[] = "--- \n+++ \n@ - +,\n-\0";
    static const char hunk[] = "--- a/f\n+++ b/f\n@@ -1 +1 @@\n-f\0oo\n+F\n";
    static const char header[] =
        "--- a/f\0x\n+++ b/f\0x\n@@ -1 +1 @@\n-f\n+F\n";
    tnd_edit *e = (tnd_edit *)&e;
    size_t n = 99;

    (void)state;
    assert_int_equal(parse_len(&e, &n, fuzzed, sizeof(fuzzed) - 1), -1);
    assert_null(e);
    assert_int_equal(n, 0);
    assert_string_equal(tnd_error_last(), "line 4: a NUL byte; only text "
                                          "changes can be reviewed");
    assert_int_equal(parse_len(&e, &n, hunk, sizeof(hunk) - 1), -1);
    assert_string_equal(tnd_error_last(), "line 4: a NUL byte; only text "
                                          "changes can be reviewed");
    assert_int_equal(parse_len(&e, &n, header, sizeof(header) - 1), -1);
    assert_string_equal(tnd_error_last(), "line 1: a NUL byte; only text "
                                          "changes can be reviewed");
}

/* ---- end to end: the edits applied to a workspace ----------------------- */

static const char calc_before[] = "#include <stdlib.h>\n"
                                  "\n"
                                  "static int add(int a, int b)\n"
                                  "{\n"
                                  "    return a + b;\n"
                                  "}\n"
                                  "\n"
                                  "static int sub(int a, int b)\n"
                                  "{\n"
                                  "    return a - b;\n"
                                  "}\n"
                                  "\n"
                                  "int main(int argc, char **argv)\n"
                                  "{\n"
                                  "    if (argc != 4)\n"
                                  "        return 2;\n"
                                  "    return add(atoi(argv[1]), "
                                  "atoi(argv[3]));\n"
                                  "}\n";

static const char calc_after[] = "#include <stdlib.h>\n"
                                 "\n"
                                 "static int add(int a, int b)\n"
                                 "{\n"
                                 "    return (int)((long)a + b);\n"
                                 "}\n"
                                 "\n"
                                 "static int sub(int a, int b)\n"
                                 "{\n"
                                 "    return a - b;\n"
                                 "}\n"
                                 "\n"
                                 "int main(int argc, char **argv)\n"
                                 "{\n"
                                 "    if (argc != 4) {\n"
                                 "        fputs(\"usage: calc A + B\", "
                                 "stderr);\n"
                                 "        return 2;\n"
                                 "    }\n"
                                 "    return add(atoi(argv[1]), "
                                 "atoi(argv[3]));\n"
                                 "}\n";

/* What `git diff` prints for the change, by hand. */
static const char calc_diff[] =
    "diff --git a/NOTES b/NOTES\n"
    "index 1111111..2222222 100644\n"
    "--- a/NOTES\n"
    "+++ b/NOTES\n"
    "@@ -1 +1 @@\n"
    "-draft\n"
    "\\ No newline at end of file\n"
    "+final\n"
    "diff --git a/docs/EMPTY b/docs/EMPTY\n"
    "new file mode 100644\n"
    "index 0000000..e69de29\n"
    "diff --git a/docs/usage.md b/docs/usage.md\n"
    "new file mode 100644\n"
    "index 0000000..3333333\n"
    "--- /dev/null\n"
    "+++ b/docs/usage.md\n"
    "@@ -0,0 +1,2 @@\n"
    "+# Usage\n"
    "+calc 1 + 2\n"
    "diff --git a/src/calc.c b/src/calc.c\n"
    "index 4444444..5555555 100644\n"
    "--- a/src/calc.c\n"
    "+++ b/src/calc.c\n"
    "@@ -2,7 +2,7 @@\n"
    " \n"
    " static int add(int a, int b)\n"
    " {\n"
    "-    return a + b;\n"
    "+    return (int)((long)a + b);\n"
    " }\n"
    " \n"
    " static int sub(int a, int b)\n"
    "@@ -13,6 +13,8 @@ static int sub(int a, int b)\n"
    " int main(int argc, char **argv)\n"
    " {\n"
    "-    if (argc != 4)\n"
    "+    if (argc != 4) {\n"
    "+        fputs(\"usage: calc A + B\", stderr);\n"
    "         return 2;\n"
    "+    }\n"
    "     return add(atoi(argv[1]), atoi(argv[3]));\n"
    " }\n"
    "diff --git a/src/old.h b/src/old.h\n"
    "deleted file mode 100644\n"
    "index 6666666..0000000\n"
    "--- a/src/old.h\n"
    "+++ /dev/null\n"
    "@@ -1 +0,0 @@\n"
    "-int old(void);\n"
    "diff --git a/src/unused.txt b/src/unused.txt\n"
    "deleted file mode 100644\n"
    "index e69de29..0000000\n";

static void put(const char *dir, const char *rel, const char *text)
{
    char *full = tnd_fs_join(dir, rel), *parent = tnd_fs_dirname(full);

    assert_int_equal(tnd_fs_mkdirs(parent, 0755), 0);
    assert_int_equal(tnd_fs_write(full, text, strlen(text)), 0);
    free(parent);
    free(full);
}

static void assert_file(const char *dir, const char *rel, const char *expect)
{
    char *full = tnd_fs_join(dir, rel), *text = NULL;
    int rc = tnd_fs_read(&text, NULL, full, 1 << 20);

    free(full);
    if (!expect) {
        if (rc != TND_ENOTFOUND)
            fail_msg("%s should not exist", rel);
        return;
    }
    if (rc != 0)
        fail_msg("%s: %s", rel, tnd_error_last());
    assert_string_equal(text, expect);
    free(text);
}

/* The tree after calc_diff. */
static void assert_changed_tree(const char *root)
{
    assert_file(root, "README.md", "# calc\n");
    assert_file(root, "NOTES", "final\n");
    assert_file(root, "docs/usage.md", "# Usage\ncalc 1 + 2\n");
    assert_file(root, "src/calc.c", calc_after);
    assert_file(root, "src/old.h", NULL);
    assert_file(root, "docs/EMPTY", "");
    assert_file(root, "src/unused.txt", NULL);
}

static char *temp_dir(void)
{
    const char *tmp = getenv("TMPDIR");
    char *dir =
        tnd_xasprintf("%s/tnd-test-unidiff-XXXXXX", tmp && *tmp ? tmp : "/tmp");

    if (!mkdtemp(dir))
        fail_msg("mkdtemp %s failed", dir);
    return dir;
}

static void edits_applied_to_a_workspace_diff_back(void **state)
{
    char *repo = temp_dir(), *scratch = temp_dir(), *dir1, *dir2;
    char *diff1 = NULL, *diff2 = NULL;
    tnd_workspace *ws1, *ws2;
    tnd_snapshot *base;
    tnd_snapshot_options so = {.max_bytes = 1 << 20};
    tnd_edit *e;
    size_t n;
    char *base_dir;

    (void)state;
    put(repo, "README.md", "# calc\n");
    put(repo, "NOTES", "draft");
    put(repo, "src/calc.c", calc_before);
    put(repo, "src/old.h", "int old(void);\n");
    put(repo, "src/unused.txt", "");
    dir1 = tnd_fs_join(scratch, "ws-1");
    dir2 = tnd_fs_join(scratch, "ws-2");
    base_dir = tnd_fs_join(scratch, "base");
    base = tnd_snapshot_new(repo, base_dir, &so);
    if (!base)
        fail_msg("tnd_snapshot_new: %s", tnd_error_last());

    /* the hand-written git diff, applied */
    ws1 = tnd_workspace_new(base, dir1, false);
    if (!ws1)
        fail_msg("tnd_workspace_new: %s", tnd_error_last());
    e = parse_ok(calc_diff, &n);
    assert_int_equal(n, 7);
    if (tnd_workspace_apply(ws1, e, n) != 0)
        fail_msg("tnd_workspace_apply: %s", tnd_error_last());
    tnd_edit_list_free(e, n);
    assert_changed_tree(tnd_workspace_path(ws1));

    /* the workspace's own diff says the same change */
    diff1 = tnd_workspace_diff(ws1);
    assert_non_null(diff1);
    assert_non_null(strstr(diff1, "-draft\n"
                                  "\\ No newline at end of file\n"
                                  "+final\n"));
    assert_non_null(strstr(diff1, "--- /dev/null\n"
                                  "+++ b/docs/usage.md\n"));
    assert_non_null(strstr(diff1, "--- a/src/old.h\n"
                                  "+++ /dev/null\n"));
    /* empty files created and deleted: no ---/+++ lines, as git does */
    assert_non_null(strstr(diff1, "diff --git a/docs/EMPTY b/docs/EMPTY\n"
                                  "new file mode 100644\n"
                                  "diff --git"));
    assert_non_null(strstr(diff1, "diff --git a/src/unused.txt "
                                  "b/src/unused.txt\n"
                                  "deleted file mode 100644\n"));
    assert_non_null(strstr(diff1, "+        fputs(\"usage: calc A + B\", "
                                  "stderr);\n"));

    /* and read back, it makes a fresh copy of the tree the same */
    ws2 = tnd_workspace_new(base, dir2, false);
    if (!ws2)
        fail_msg("tnd_workspace_new: %s", tnd_error_last());
    e = parse_ok(diff1, &n);
    if (tnd_workspace_apply(ws2, e, n) != 0)
        fail_msg("tnd_workspace_apply: %s", tnd_error_last());
    tnd_edit_list_free(e, n);
    assert_changed_tree(tnd_workspace_path(ws2));
    diff2 = tnd_workspace_diff(ws2);
    assert_non_null(diff2);
    assert_string_equal(diff2, diff1);

    /* the user's tree was never written */
    assert_file(repo, "NOTES", "draft");
    assert_file(repo, "src/calc.c", calc_before);
    assert_file(repo, "src/old.h", "int old(void);\n");
    assert_file(repo, "docs/usage.md", NULL);
    assert_file(repo, "src/unused.txt", "");
    assert_file(repo, "docs/EMPTY", NULL);

    free(diff1);
    free(diff2);
    tnd_workspace_destroy(&ws1, 1);
    tnd_workspace_destroy(&ws2, 1);
    tnd_snapshot_destroy(&base, 1);
    free(base_dir);
    free(dir1);
    free(dir2);
    assert_int_equal(tnd_fs_rmtree(repo), 0);
    assert_int_equal(tnd_fs_rmtree(scratch), 0);
    free(repo);
    free(scratch);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(git_hunk_becomes_a_replace),
        cmocka_unit_test(plain_diff_u_with_timestamps),
        cmocka_unit_test(diff_N_epoch_sides_are_no_file),
        cmocka_unit_test(a_and_b_prefixes_are_dropped_once),
        cmocka_unit_test(names_without_prefixes_are_refused),
        cmocka_unit_test(files_and_hunks_keep_their_order),
        cmocka_unit_test(created_file_is_a_write),
        cmocka_unit_test(deleted_file_is_a_delete),
        cmocka_unit_test(no_newline_on_the_old_side),
        cmocka_unit_test(no_newline_on_the_new_side),
        cmocka_unit_test(no_newline_on_both_sides),
        cmocka_unit_test(crlf_line_endings_are_stripped),
        cmocka_unit_test(crlf_content_is_kept),
        cmocka_unit_test(empty_line_without_space_is_context),
        cmocka_unit_test(created_empty_file_without_hunks),
        cmocka_unit_test(git_created_empty_file),
        cmocka_unit_test(git_deleted_empty_file),
        cmocka_unit_test(git_header_alone_changes_nothing),
        cmocka_unit_test(renames_and_copies_are_refused),
        cmocka_unit_test(links_submodules_and_modes_alone),
        cmocka_unit_test(quoted_names_are_unquoted),
        cmocka_unit_test(paths_an_edit_cannot_hold_are_refused),
        cmocka_unit_test(binary_changes_are_refused),
        cmocka_unit_test(a_binary_file_deleted_is_a_deletion),
        cmocka_unit_test(hunks_are_placed_by_their_headers),
        cmocka_unit_test(hunk_cut_short_is_refused),
        cmocka_unit_test(hunk_longer_than_its_header_is_refused),
        cmocka_unit_test(unexpected_line_in_a_hunk_is_refused),
        cmocka_unit_test(unreadable_hunk_header_is_refused),
        cmocka_unit_test(text_that_is_not_a_diff_is_refused),
        cmocka_unit_test(more_than_the_edit_limit_is_refused),
        cmocka_unit_test(only_len_bytes_are_read),
        cmocka_unit_test(a_nul_byte_is_refused),
        cmocka_unit_test(modes_come_beside_the_edits),
        cmocka_unit_test(bytes_that_are_not_utf8_are_refused),
        cmocka_unit_test(names_that_are_not_utf8_are_refused),
        cmocka_unit_test(edits_applied_to_a_workspace_diff_back),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
