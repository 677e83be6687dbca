/* Unit tests for skills/patch: reading the proposal's diff. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/diff.h"
#include "skills/patch.h"

/* Added lines seen, as "FILE:LINE:TEXT\n". */
static void collect(const tnd_patch *p, size_t file, long line,
                    const char *text, size_t len, void *payload)
{
    tnd_buf_printf(payload, "%s:%ld:%.*s\n", p->files[file].path, line,
                   (int)len, text);
}

static const char git_diff[] =
    "diff --git a/stats.c b/stats.c\n"
    "index 1111111..2222222 100644\n"
    "--- a/stats.c\n"
    "+++ b/stats.c\n"
    "@@ -8,7 +8,8 @@\n"
    "         return 0.0;\n"
    "     for (size_t i = 0; i < count; i++)\n"
    "         sum += values[i];\n"
    "-    return sum / count;\n"
    "+    /* a comment */\n"
    "+    return (double)sum / (double)count;\n"
    " }\n"
    " \n"
    " int stats_max(const int *values, size_t count)\n"
    "diff --git a/docs/new.md b/docs/new.md\n"
    "new file mode 100644\n"
    "--- /dev/null\n"
    "+++ b/docs/new.md\n"
    "@@ -0,0 +1,2 @@\n"
    "+# New\n"
    "+--- not a header\n"
    "diff --git a/old.txt b/old.txt\n"
    "deleted file mode 100644\n"
    "--- a/old.txt\n"
    "+++ /dev/null\n"
    "@@ -1 +0,0 @@\n"
    "-gone\n"
    "diff --git a/empty b/empty\n"
    "new file mode 100644\n"
    "diff --git a/logo.png b/logo.png\n"
    "new file mode 100644\n"
    "Binary files /dev/null and b/logo.png differ\n"
    "diff --git a/a b.txt b/c.txt\n"
    "similarity index 90%\n"
    "rename from a b.txt\n"
    "rename to c.txt\n";

static void reads_a_git_diff(void **state)
{
    tnd_patch p;
    tnd_buf added;
    const char **paths;

    (void)state;
    tnd_buf_init(&added, TND_BUF_NOCAP);
    assert_int_equal(
        tnd_patch_parse(&p, git_diff, strlen(git_diff), collect, &added), 0);
    assert_int_equal(p.nfiles, 6);
    assert_int_equal(p.added, 4);
    assert_int_equal(p.removed, 2);

    assert_string_equal(p.files[0].path, "stats.c");
    assert_false(p.files[0].created);
    assert_int_equal(p.files[0].added, 2);
    assert_int_equal(p.files[0].removed, 1);
    assert_int_equal(p.files[0].first_line, 11);

    assert_string_equal(p.files[1].path, "docs/new.md");
    assert_true(p.files[1].created);
    assert_int_equal(p.files[1].added_bytes,
                     strlen("# New\n--- not a header\n"));
    assert_int_equal(p.files[1].first_line, 1);

    assert_string_equal(p.files[2].path, "old.txt");
    assert_true(p.files[2].deleted);
    assert_int_equal(p.files[2].removed, 1);

    assert_string_equal(p.files[3].path, "empty");
    assert_true(p.files[3].created);
    assert_int_equal(p.files[3].first_line, 0);

    assert_string_equal(p.files[4].path, "logo.png");
    assert_true(p.files[4].binary);

    assert_string_equal(p.files[5].path, "c.txt");
    assert_string_equal(p.files[5].old_path, "a b.txt");

    assert_string_equal(tnd_buf_str(&added),
                        "stats.c:11:    /* a comment */\n"
                        "stats.c:12:    return (double)sum / (double)count;\n"
                        "docs/new.md:1:# New\n"
                        "docs/new.md:2:--- not a header\n");
    paths = tnd_patch_paths(&p);
    assert_string_equal(paths[0], "stats.c");
    assert_string_equal(paths[5], "c.txt");
    assert_string_equal(paths[6], "a b.txt");
    assert_null(paths[7]);
    free(paths);
    tnd_patch_clear(&p);
    tnd_patch_clear(&p);
    tnd_buf_free(&added);
}

/* What common/diff writes, the patch reads back. */
static void reads_what_tnd_diff_writes(void **state)
{
    tnd_buf d, added;
    tnd_patch p;
    const char *old = "a\nb\nc\nd\ne\nf\ng\nh\n";
    const char *new = "a\nB\nc\nd\ne\nf\ng\nh\nI\n";

    (void)state;
    tnd_buf_init(&d, TND_BUF_NOCAP);
    tnd_buf_init(&added, TND_BUF_NOCAP);
    assert_int_equal(
        tnd_diff_file(&d, "x/y.txt", old, strlen(old), new, strlen(new)), 0);
    assert_int_equal(tnd_patch_parse(&p, d.data, d.len, collect, &added), 0);
    assert_int_equal(p.nfiles, 1);
    assert_string_equal(p.files[0].path, "x/y.txt");
    assert_string_equal(tnd_buf_str(&added), "x/y.txt:2:B\nx/y.txt:9:I\n");
    tnd_patch_clear(&p);
    tnd_buf_free(&d);
    tnd_buf_free(&added);
}

static void plain_diff_u_and_crlf(void **state)
{
    static const char text[] = "--- a/win.txt\t2024-01-01 00:00:00\r\n"
                               "+++ b/win.txt\t2024-01-02 00:00:00\r\n"
                               "@@ -1,2 +1,2 @@\r\n"
                               " same\r\n"
                               "-old\r\n"
                               "+new\r\n";
    tnd_buf added;
    tnd_patch p;

    (void)state;
    tnd_buf_init(&added, TND_BUF_NOCAP);
    assert_int_equal(tnd_patch_parse(&p, text, strlen(text), collect, &added),
                     0);
    assert_int_equal(p.nfiles, 1);
    assert_string_equal(p.files[0].path, "win.txt");
    assert_string_equal(tnd_buf_str(&added), "win.txt:2:new\n");
    assert_int_equal(p.files[0].added_bytes, strlen("new\r\n"));
    tnd_patch_clear(&p);
    tnd_buf_free(&added);
}

/* git's quoted names are unquoted: a forbidden path must not pass as its
 * escaped spelling, and a header alone names its file. */
static void quoted_names(void **state)
{
    static const char text[] =
        "diff --git \"a/secrets/\\303\\274\" \"b/secrets/\\303\\274\"\n"
        "--- \"a/secrets/\\303\\274\"\n"
        "+++ \"b/secrets/\\303\\274\"\n"
        "@@ -1 +1 @@\n"
        "-a\n"
        "+b\n"
        "diff --git \"a/x\\\"y\" \"b/x\\\"y\"\n"
        "new file mode 100644\n"
        "index 0000000..e69de29\n";
    tnd_patch p;

    (void)state;
    assert_int_equal(tnd_patch_parse(&p, text, strlen(text), NULL, NULL), 0);
    assert_int_equal(p.nfiles, 2);
    assert_string_equal(p.files[0].path, "secrets/\xc3\xbc");
    assert_string_equal(p.files[1].path, "x\"y");
    tnd_patch_clear(&p);
}

/* Counts that lie, no headers, garbage: parsed without reading past the
 * text, and a lying hunk cannot swallow the next file. */
static void hostile_diffs(void **state)
{
    static const char lying[] = "diff --git a/a b/a\n"
                                "--- a/a\n"
                                "+++ b/a\n"
                                "@@ -1,100 +1,100 @@\n"
                                "+one\n"
                                "diff --git a/b b/b\n"
                                "--- a/b\n"
                                "+++ b/b\n"
                                "@@ -1 +1 @@\n"
                                "-x\n"
                                "+y\n";
    static const char garbage[] = "@@ -1 +1 @@\n+orphan\n\x01\x02\xff\n+++\n";
    tnd_patch p;

    (void)state;
    assert_int_equal(tnd_patch_parse(&p, lying, strlen(lying), NULL, NULL), 0);
    assert_int_equal(p.nfiles, 2);
    assert_string_equal(p.files[1].path, "b");
    assert_int_equal(p.files[1].added, 1);
    tnd_patch_clear(&p);

    assert_int_equal(tnd_patch_parse(&p, garbage, strlen(garbage), NULL, NULL),
                     0);
    assert_int_equal(p.nfiles, 0);
    tnd_patch_clear(&p);

    assert_int_equal(tnd_patch_parse(&p, "", 0, NULL, NULL), 0);
    assert_int_equal(p.nfiles, 0);
    tnd_patch_clear(&p);

    /* a header cut short at the end of the text */
    assert_int_equal(tnd_patch_parse(&p, "diff --git a/x", 14, NULL, NULL), 0);
    assert_int_equal(p.nfiles, 1);
    tnd_patch_clear(&p);
}

static void too_many_files_is_an_error(void **state)
{
    tnd_buf b;
    tnd_patch p;

    (void)state;
    tnd_buf_init(&b, TND_BUF_NOCAP);
    for (int i = 0; i <= TND_PATCH_MAX_FILES; i++)
        tnd_buf_printf(&b, "diff --git a/f%d b/f%d\n", i, i);
    assert_int_equal(tnd_patch_parse(&p, b.data, b.len, NULL, NULL), -1);
    assert_string_equal(tnd_error_last(), "the diff names more than 10000 "
                                          "files");
    tnd_patch_clear(&p);
    tnd_buf_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(reads_a_git_diff),
        cmocka_unit_test(reads_what_tnd_diff_writes),
        cmocka_unit_test(plain_diff_u_and_crlf),
        cmocka_unit_test(hostile_diffs),
        cmocka_unit_test(quoted_names),
        cmocka_unit_test(too_many_files_is_an_error),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
