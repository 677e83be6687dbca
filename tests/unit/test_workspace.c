/* Unit tests for orchestrator/workspace: the tree one attempt works in.
 * A small repository is built in a temporary directory (with .git,
 * .tandem, symlinks in and out, an executable and a binary file) and
 * taken as a snapshot once; each test makes a workspace from it, applies
 * proposals, resets, and the last test checks the original was never
 * written. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/error.h"
#include "common/beneath.h"
#include "common/fs.h"
#include "common/rmtree.h"
#include "common/str.h"
#include "orchestrator/snapshot.h"
#include "orchestrator/search.h"
#include "orchestrator/workspace.h"

static char repo[] = "/tmp/tnd-test-ws-repo-XXXXXX";
static char outside[] = "/tmp/tnd-test-ws-out-XXXXXX";
static char scratch[] = "/tmp/tnd-test-ws-XXXXXX";
static char *repo_before, *outside_before;
static tnd_snapshot *base;

#define MAX_BYTES (1 << 20)

/* A proposal is an array of edits; APPLY(ws, edit, ...) applies one. */
/* clang-format off */
#define EDIT(k, p, s, r) {k, (char *)(p), (char *)(s), (char *)(r), 0}
#define REPLACE(p, s, r) EDIT(TND_EDIT_REPLACE, p, s, r)
#define WRITE(p, text)   EDIT(TND_EDIT_WRITE, p, "", text)
#define DELETE(p)        EDIT(TND_EDIT_DELETE, p, "", "")
#define EDITS(...)       ((const tnd_edit[]){__VA_ARGS__})
#define COUNT(...)       (sizeof(EDITS(__VA_ARGS__)) / sizeof(tnd_edit))
#define APPLY(ws, ...)                                                         \
    tnd_workspace_apply(ws, EDITS(__VA_ARGS__), COUNT(__VA_ARGS__))
/* clang-format on */

static const char stats_c[] = "#include \"stats.h\"\n"
                              "\n"
                              "double stats_mean(const double *v, int n)\n"
                              "{\n"
                              "    double sum = 0;\n"
                              "    for (int i = 0; i < n; i++)\n"
                              "        sum += v[i];\n"
                              "    return sum / n;\n"
                              "}\n"
                              "\n"
                              "double stats_max(const double *v, int n)\n"
                              "{\n"
                              "    double m = v[0];\n"
                              "    for (int i = 1; i < n; i++)\n"
                              "        if (v[i] > m)\n"
                              "            m = v[i];\n"
                              "    return m;\n"
                              "}\n";

static const char legacy_c[] = "int a = 1;   \n"
                               "int b = 2;\t\n"
                               "int c = 3;\n";

static const char binary[] = "\x7f"
                             "ELF\0\0\1abc";

/* ---- helpers ------------------------------------------------------------ */

static void put(const char *dir, const char *rel, const char *text, size_t len)
{
    char *full = tnd_fs_join(dir, rel), *parent = tnd_fs_dirname(full);

    assert_int_equal(tnd_fs_mkdirs(parent, 0755), 0);
    assert_int_equal(tnd_fs_write(full, text, len), 0);
    free(parent);
    free(full);
}

/* The file's content, or NULL when it does not exist. Caller frees. */
static char *slurp(const char *dir, const char *rel)
{
    char *full = tnd_fs_join(dir, rel), *text = NULL;
    int rc = tnd_fs_read(&text, NULL, full, MAX_BYTES);

    assert_true(rc == 0 || rc == TND_ENOTFOUND);
    free(full);
    return text;
}

static void assert_file(const char *dir, const char *rel, const char *expect)
{
    char *text = slurp(dir, rel);

    if (!expect) {
        if (text)
            fail_msg("%s should not exist, holds \"%s\"", rel, text);
        return;
    }
    if (!text)
        fail_msg("%s should exist", rel);
    assert_string_equal(text, expect);
    free(text);
}

static struct stat lstat_of(const char *dir, const char *rel)
{
    char *full = tnd_fs_join(dir, rel);
    struct stat st;

    assert_int_equal(lstat(full, &st), 0);
    free(full);
    return st;
}

static bool exists(const char *dir, const char *rel)
{
    char *full = tnd_fs_join(dir, rel);
    bool yes = tnd_fs_exists(full);

    free(full);
    return yes;
}

static void assert_link(const char *dir, const char *rel, const char *target)
{
    char *full = tnd_fs_join(dir, rel), got[PATH_MAX];
    ssize_t n = readlink(full, got, sizeof(got) - 1);

    assert_true(S_ISLNK(lstat_of(dir, rel).st_mode));
    assert_true(n > 0);
    got[n] = '\0';
    assert_string_equal(got, target);
    free(full);
}

/* A fresh workspace from the repository's snapshot. */
static tnd_workspace *open_ws_mode(bool incremental)
{
    static int n;
    char dir[PATH_MAX];
    tnd_workspace *ws;

    snprintf(dir, sizeof(dir), "%s/ws-%d", scratch, ++n);
    ws = tnd_workspace_new(base, dir, incremental);
    if (!ws)
        fail_msg("tnd_workspace_new: %s", tnd_error_last());
    assert_true(tnd_workspace_incremental(ws) == incremental);
    return ws;
}

static tnd_workspace *open_ws(void)
{
    return open_ws_mode(false);
}

static void assert_error_has(const char *part)
{
    if (!strstr(tnd_error_last(), part))
        fail_msg("error \"%s\" does not say \"%s\"", tnd_error_last(), part);
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
    return strcmp((*a)->d_name, (*b)->d_name);
}

/* One line per entry under dir: path, mode, size, a file's mtime and a
 * hash of its content (or the link's target), so any write shows. */
static void snapshot_dir(tnd_buf *out, const char *dir, const char *rel)
{
    char *path = rel[0] ? tnd_fs_join(dir, rel) : strdup(dir);
    struct dirent **names;
    int n = scandir(path, &names, NULL, by_name);

    assert_true(n >= 0);
    for (int i = 0; i < n; i++) {
        const char *name = names[i]->d_name;
        char *sub, *full, target[PATH_MAX];
        struct stat st;
        if (!strcmp(name, ".") || !strcmp(name, "..")) {
            free(names[i]);
            continue;
        }
        sub = rel[0] ? tnd_fs_join(rel, name) : strdup(name);
        full = tnd_fs_join(dir, sub);
        assert_int_equal(lstat(full, &st), 0);
        tnd_buf_printf(out, "%s %o %lld", sub, (unsigned)st.st_mode,
                       (long long)st.st_size);
        if (S_ISREG(st.st_mode)) /* a copy keeps these, not a link's */
            tnd_buf_printf(out, " %lld.%09ld", (long long)st.st_mtim.tv_sec,
                           st.st_mtim.tv_nsec);
        if (S_ISLNK(st.st_mode)) {
            ssize_t len = readlink(full, target, sizeof(target) - 1);
            assert_true(len > 0);
            tnd_buf_printf(out, " -> %.*s\n", (int)len, target);
        } else if (S_ISREG(st.st_mode)) {
            char *text = NULL;
            size_t len = 0;
            assert_int_equal(tnd_fs_read(&text, &len, full, MAX_BYTES), 0);
            tnd_buf_printf(
                out, " %016llx\n",
                (unsigned long long)tnd_str_hash(TND_FNV_SEED, text, len));
            free(text);
        } else {
            tnd_buf_puts(out, "\n");
            if (S_ISDIR(st.st_mode))
                snapshot_dir(out, dir, sub);
        }
        free(full);
        free(sub);
        free(names[i]);
    }
    free(names);
    free(path);
}

static char *snapshot(const char *dir)
{
    tnd_buf b;

    tnd_buf_init(&b, TND_BUF_NOCAP);
    snapshot_dir(&b, dir, "");
    return tnd_buf_detach(&b, NULL);
}

/* ---- the copy ----------------------------------------------------------- */

static void copy_keeps_content_mode_mtime_and_symlinks(void **state)
{
    tnd_workspace *ws = open_ws();
    const char *root = tnd_workspace_path(ws);
    struct stat orig, copy;

    (void)state;
    assert_true(root[0] == '/');
    assert_non_null(strstr(root, "/ws-"));
    assert_null(tnd_workspace_touched(ws)[0]);

    assert_file(root, "README.md", "# demo\n");
    assert_file(root, "src/stats.c", stats_c);

    orig = lstat_of(repo, "run.sh");
    copy = lstat_of(root, "run.sh");
    assert_int_equal(copy.st_mode & 07777, 0755);
    assert_int_equal(copy.st_mode, orig.st_mode);

    orig = lstat_of(repo, "src/stats.c");
    copy = lstat_of(root, "src/stats.c");
    assert_int_equal(copy.st_mtim.tv_sec, orig.st_mtim.tv_sec);
    assert_int_equal(copy.st_mtim.tv_nsec, orig.st_mtim.tv_nsec);
    assert_int_equal(copy.st_mtim.tv_sec, 1000000000);

    /* symlinks stay symlinks, with the same target */
    assert_link(root, "link.txt", "README.md");
    assert_file(root, "link.txt", "# demo\n");
    assert_link(root, "outside", outside);

    /* neither the repository's history nor tandem's own state */
    assert_false(exists(root, ".git"));
    assert_false(exists(root, ".tandem"));
    /* but a name that only begins alike is copied */
    assert_file(root, "docs/.tandem-notes", "notes\n");

    tnd_workspace_destroy(&ws, 1);
    assert_null(ws);
    tnd_workspace_destroy(&ws, 1); /* NULL: fine */
}

static void destroy_removes_the_copy_only_when_asked(void **state)
{
    tnd_workspace *ws = open_ws();
    char *root = strdup(tnd_workspace_path(ws));

    (void)state;
    tnd_workspace_destroy(&ws, 0);
    assert_true(tnd_fs_is_dir(root));
    assert_int_equal(tnd_fs_rmtree(root), 0);

    ws = open_ws();
    free(root);
    root = strdup(tnd_workspace_path(ws));
    tnd_workspace_destroy(&ws, 1);
    assert_false(tnd_fs_exists(root));
    free(root);
}

static void existing_directory_is_refused_and_left_alone(void **state)
{
    char dir[PATH_MAX];

    (void)state;
    snprintf(dir, sizeof(dir), "%s/already-here", scratch);
    put(dir, "keep.txt", "mine\n", 5);
    assert_null(tnd_workspace_new(base, dir, false));
    assert_error_has(dir);
    assert_file(dir, "keep.txt", "mine\n");
    assert_int_equal(tnd_fs_rmtree(dir), 0);
}

/* ---- applying proposals ------------------------------------------------- */

static void replace_exact_match_and_diff(void **state)
{
    tnd_workspace *ws = open_ws();
    const char *root = tnd_workspace_path(ws);
    const char *const *touched;
    char *diff;

    (void)state;
    assert_int_equal(APPLY(ws, REPLACE("src/stats.c", "    return sum / n;\n",
                                       "    return n > 0 ? sum / n : 0;\n")),
                     0);
    touched = tnd_workspace_touched(ws);
    assert_string_equal(touched[0], "src/stats.c");
    assert_null(touched[1]);
    diff = tnd_workspace_diff(ws);
    assert_string_equal(diff, "diff --git a/src/stats.c b/src/stats.c\n"
                              "--- a/src/stats.c\n"
                              "+++ b/src/stats.c\n"
                              "@@ -5,7 +5,7 @@\n"
                              "     double sum = 0;\n"
                              "     for (int i = 0; i < n; i++)\n"
                              "         sum += v[i];\n"
                              "-    return sum / n;\n"
                              "+    return n > 0 ? sum / n : 0;\n"
                              " }\n"
                              " \n"
                              " double stats_max(const double *v, int n)\n");
    free(diff);
    diff = slurp(root, "src/stats.c");
    assert_non_null(strstr(diff, "return n > 0 ? sum / n : 0;\n}\n"));
    free(diff);
    tnd_workspace_destroy(&ws, 1);
}

static void replace_tolerates_trailing_whitespace(void **state)
{
    tnd_workspace *ws = open_ws();
    const char *root = tnd_workspace_path(ws);

    (void)state;
    assert_int_equal(
        APPLY(ws, REPLACE("src/legacy.c", "int a = 1;\nint b = 2;\n",
                          "int a = 10;\nint b = 20;\n")),
        0);
    assert_file(root, "src/legacy.c", "int a = 10;\nint b = 20;\nint c = 3;\n");
    assert_int_equal(tnd_workspace_reset(ws), 0);
    assert_file(root, "src/legacy.c", legacy_c);

    /* A SEARCH without a final newline replaces up to the end of its
     * last line, and the line break after it stays. */
    assert_int_equal(APPLY(ws, REPLACE("src/legacy.c", "int a = 1;\nint b = 2;",
                                       "int a = 10;\nint b = 20;")),
                     0);
    assert_file(root, "src/legacy.c",
                "int a = 10;\nint b = 20;\t\nint c = 3;\n");
    tnd_workspace_destroy(&ws, 1);
}

static void search_not_found_names_the_closest_line(void **state)
{
    tnd_workspace *ws = open_ws();
    const char *root = tnd_workspace_path(ws);

    (void)state;
    assert_int_equal(
        APPLY(ws, REPLACE("src/stats.c", "    return sum / count;\n",
                          "    return 0;\n")),
        -1);
    assert_error_has("edit 1: the SEARCH text was not found in src/stats.c");
    assert_error_has("the closest line is 8: `    return sum / n;`");
    assert_null(tnd_workspace_touched(ws)[0]);

    assert_int_equal(APPLY(ws, REPLACE("src/stats.c", "zzzz qqqq\n", "x\n")),
                     -1);
    assert_error_has("no line of the file resembles its first line");

    /* a SEARCH right but for one line is told which (it was told of
     * its first line only, which was right) */
    assert_int_equal(APPLY(ws, REPLACE("src/stats.c",
                                       "{\n    double sum = 0;\n"
                                       "    for (int i = 0; i <= n; i++)\n",
                                       "x\n")),
                     -1);
    assert_error_has("its first 2 lines are the file's from line 4, but its "
                     "line 3 `    for (int i = 0; i <= n; i++)` is not the "
                     "file's line 6 `    for (int i = 0; i < n; i++)`");

    /* tabs where the file has spaces */
    assert_int_equal(APPLY(ws, REPLACE("src/stats.c",
                                       "\tdouble sum = 0;\n"
                                       "\tfor (int i = 0; i < n; i++)\n",
                                       "x\n")),
                     -1);
    assert_error_has("it is there with other indentation from line 5 on");
    assert_file(root, "src/stats.c", stats_c);
    tnd_workspace_destroy(&ws, 1);
}

static void ambiguous_search_is_refused(void **state)
{
    tnd_workspace *ws = open_ws();

    (void)state;
    assert_int_equal(
        APPLY(ws, REPLACE("src/stats.c", "(const double *v, int n)\n{\n",
                          "(const double *v, size_t n)\n{\n")),
        -1);
    assert_error_has(
        "edit 1: the SEARCH text matches more than one place in src/stats.c");
    assert_error_has("include more surrounding lines");
    /* loosely (trailing blanks ignored) ambiguous too */
    assert_int_equal(APPLY(ws, REPLACE("src/legacy.c", "int a = 1;\n", "x\n"),
                           REPLACE("src/dup.txt", "same  \n", "other\n")),
                     -1);
    assert_error_has(
        "edit 2: the SEARCH text matches more than one place in src/dup.txt");
    tnd_workspace_destroy(&ws, 1);
}

/* Loose matching (trailing blanks ignored) finds a place that starts
 * inside a near miss, and counts places that overlap. */
static void loose_places_after_a_near_miss_and_overlapping(void **state)
{
    tnd_workspace *ws = open_ws();
    const char *root = tnd_workspace_path(ws);

    (void)state;
    /* "A" matches at line 1, "B" does not at line 2: the place is the
     * one that starts at line 2 */
    assert_int_equal(APPLY(ws, WRITE("near.txt", "A \nA \nB\t\nC\n"),
                           REPLACE("near.txt", "A\nB\n", "X\n")),
                     0);
    assert_file(root, "near.txt", "A \nX\nC\n");
    assert_int_equal(tnd_workspace_reset(ws), 0);
    assert_int_equal(APPLY(ws, WRITE("over.txt", "A \nB\nA\nB \nA\n"),
                           REPLACE("over.txt", "A\nB\nA\n", "X\n")),
                     -1);
    assert_error_has("edit 2: the SEARCH text matches more than one place");
    tnd_workspace_destroy(&ws, 1);
}

/* A SEARCH of many repeated lines that is not in a file of more of them
 * (one model answer can hold both): comparing the whole search from
 * every line of the file took 34 s of the run loop's thread for 40,000
 * lines in 100,000. Matching is linear: the line comparisons stay within
 * twice the lines of the two. */
static void a_long_loose_miss_takes_linear_work(void **state)
{
    size_t lines = 100000, want = 40000, steps;
    tnd_workspace *ws = open_ws();
    tnd_buf file, search;

    (void)state;
    tnd_buf_init(&file, TND_BUF_NOCAP);
    tnd_buf_init(&search, TND_BUF_NOCAP);
    for (size_t i = 0; i < lines; i++)
        tnd_buf_puts(&file, "a\n");
    for (size_t i = 0; i < want; i++)
        tnd_buf_puts(&search, "a\n");
    tnd_buf_puts(&search, "b\n");
    steps = tnd_search_loose_steps();
    assert_int_equal(APPLY(ws, WRITE("big.txt", tnd_buf_str(&file)),
                           REPLACE("big.txt", tnd_buf_str(&search), "c\n")),
                     -1);
    steps = tnd_search_loose_steps() - steps;
    assert_error_has("edit 2: the SEARCH text was not found in big.txt");
    assert_error_has("its first 40000 lines are the file's from line 1, but "
                     "its line 40001 `b` is not the file's line 40001 `a`");
    /* two passes: the match, then the hint's (indentation aside) */
    assert_true(steps <= 4 * (lines + want + 1));
    tnd_buf_free(&file);
    tnd_buf_free(&search);
    tnd_workspace_destroy(&ws, 1);
}

/* Places that overlap count: "A B A" is in "A B A B A" twice (counted
 * once, the edit went to the first without a word). */
static void overlapping_places_are_ambiguous_too(void **state)
{
    tnd_workspace *ws = open_ws();

    (void)state;
    assert_int_equal(APPLY(ws, REPLACE("src/rep.txt", "A\nB\nA\n", "X\n")), -1);
    assert_error_has("matches more than one place in src/rep.txt");
    tnd_workspace_destroy(&ws, 1);
}

/* A coder's lines end in LF; in a CRLF file its replacement's do in
 * CRLF too (the file came back with mixed line ends). */
static void a_crlf_file_stays_crlf(void **state)
{
    tnd_workspace *ws = open_ws();

    (void)state;
    assert_int_equal(APPLY(ws, REPLACE("src/win.txt", "two\n", "TWO\nextra\n")),
                     0);
    assert_file(tnd_workspace_path(ws), "src/win.txt",
                "one\r\nTWO\r\nextra\r\nthree\r\n");
    tnd_workspace_destroy(&ws, 1);
}

/* A coder's SEARCH of a file's last line ends in a newline the file does
 * not have; its replacement's is left out too (the change added a
 * newline at the end of the file nobody asked for). */
static void a_last_line_without_newline_stays_so(void **state)
{
    tnd_workspace *ws = open_ws();

    (void)state;
    assert_int_equal(APPLY(ws, WRITE("src/nonl.c", "int a;\nint b;"),
                           REPLACE("src/nonl.c", "int b;\n", "int c;\n")),
                     0);
    assert_file(tnd_workspace_path(ws), "src/nonl.c", "int a;\nint c;");
    tnd_workspace_destroy(&ws, 1);
    /* one that adds a line keeps the newline between the two */
    ws = open_ws();
    assert_int_equal(
        APPLY(ws, WRITE("src/nonl.c", "int a;\r\nint b;"),
              REPLACE("src/nonl.c", "int b;\n", "int b;\nint c;\n")),
        0);
    assert_file(tnd_workspace_path(ws), "src/nonl.c",
                "int a;\r\nint b;\r\nint c;");
    tnd_workspace_destroy(&ws, 1);
}

static void write_creates_a_file_in_a_new_directory(void **state)
{
    tnd_workspace *ws = open_ws();
    const char *root = tnd_workspace_path(ws);
    struct stat st;
    char *diff;

    (void)state;
    assert_int_equal(APPLY(ws, WRITE("lib/util/clamp.c", "int clamp;\n")), 0);
    assert_file(root, "lib/util/clamp.c", "int clamp;\n");
    st = lstat_of(root, "lib/util/clamp.c");
    assert_true(S_ISREG(st.st_mode));
    assert_int_equal(st.st_mode & 0777, 0644);
    diff = tnd_workspace_diff(ws);
    assert_string_equal(diff, "diff --git a/lib/util/clamp.c "
                              "b/lib/util/clamp.c\n"
                              "new file mode 100644\n"
                              "--- /dev/null\n"
                              "+++ b/lib/util/clamp.c\n"
                              "@@ -0,0 +1 @@\n"
                              "+int clamp;\n");
    free(diff);

    /* revert deletes what the proposal created, directories included */
    assert_int_equal(tnd_workspace_reset(ws), 0);
    assert_file(root, "lib/util/clamp.c", NULL);
    {
        char *lib = tnd_fs_join(root, "lib");
        assert_false(tnd_fs_exists(lib));
        free(lib);
    }
    assert_null(tnd_workspace_touched(ws)[0]);
    tnd_workspace_destroy(&ws, 1);
}

static void write_replaces_a_whole_file(void **state)
{
    tnd_workspace *ws = open_ws();
    const char *root = tnd_workspace_path(ws);

    (void)state;
    assert_int_equal(APPLY(ws, WRITE("run.sh", "#!/bin/sh\necho bye\n")), 0);
    assert_file(root, "run.sh", "#!/bin/sh\necho bye\n");
    assert_int_equal(lstat_of(root, "run.sh").st_mode & 07777, 0755);
    tnd_workspace_destroy(&ws, 1);
}

static void delete_removes_and_revert_restores(void **state)
{
    tnd_workspace *ws = open_ws();
    const char *root = tnd_workspace_path(ws);
    char *diff;

    (void)state;
    assert_int_equal(APPLY(ws, DELETE("run.sh")), 0);
    assert_file(root, "run.sh", NULL);
    diff = tnd_workspace_diff(ws);
    /* git's mode of an executable file */
    assert_string_equal(diff, "diff --git a/run.sh b/run.sh\n"
                              "deleted file mode 100755\n"
                              "--- a/run.sh\n"
                              "+++ /dev/null\n"
                              "@@ -1,2 +0,0 @@\n"
                              "-#!/bin/sh\n"
                              "-echo hi\n");
    free(diff);
    assert_int_equal(tnd_workspace_reset(ws), 0);
    assert_file(root, "run.sh", "#!/bin/sh\necho hi\n");
    assert_int_equal(lstat_of(root, "run.sh").st_mode & 07777, 0755);

    assert_int_equal(APPLY(ws, DELETE("no-such-file.c")), -1);
    assert_error_has("edit 1 deletes no-such-file.c, which does not exist");
    tnd_workspace_destroy(&ws, 1);
}

/* A diff under review sets modes: the workspace holds them (its other
 * permission bits kept), the diff says them as git does, and a reset
 * puts the base's back. A mode for a file the change leaves absent is
 * refused. */
static void modes_are_set_said_and_put_back(void **state)
{
    tnd_workspace *ws = open_ws();
    const char *root = tnd_workspace_path(ws);
    tnd_exec_change modes[] = {{(char *)"run.sh", false},
                               {(char *)"new.sh", true}};
    tnd_edit write = WRITE("new.sh", "#!/bin/sh\n");
    char *diff;

    (void)state;
    assert_int_equal(tnd_workspace_apply_exec(ws, &write, 1, modes, 2), 0);
    assert_int_equal(lstat_of(root, "run.sh").st_mode & 07777, 0644);
    assert_int_equal(lstat_of(root, "new.sh").st_mode & 07777, 0755);
    diff = tnd_workspace_diff(ws);
    assert_string_equal(diff, "diff --git a/new.sh b/new.sh\n"
                              "new file mode 100755\n"
                              "--- /dev/null\n"
                              "+++ b/new.sh\n"
                              "@@ -0,0 +1 @@\n"
                              "+#!/bin/sh\n"
                              "diff --git a/run.sh b/run.sh\n"
                              "old mode 100755\n"
                              "new mode 100644\n");
    free(diff);
    assert_int_equal(tnd_workspace_reset(ws), 0);
    assert_int_equal(lstat_of(root, "run.sh").st_mode & 07777, 0755);
    assert_false(exists(root, "new.sh"));
    /* modes alone; then a mode of a file the change does not leave */
    assert_int_equal(tnd_workspace_apply_exec(ws, NULL, 0, modes, 1), 0);
    assert_int_equal(lstat_of(root, "run.sh").st_mode & 07777, 0644);
    assert_int_equal(tnd_workspace_reset(ws), 0);
    assert_int_equal(tnd_workspace_apply_exec(ws, NULL, 0, modes + 1, 1), -1);
    assert_error_has("new.sh: its mode changes, but the change leaves no "
                     "such file");
    assert_int_equal(tnd_workspace_apply_exec(ws, NULL, 0, NULL, 0), -1);
    tnd_workspace_destroy(&ws, 1);
}

static void several_edits_to_one_file_apply_in_order(void **state)
{
    tnd_workspace *ws = open_ws();
    const char *root = tnd_workspace_path(ws);
    char *text;

    (void)state;
    /* the second edit searches for what the first one wrote */
    assert_int_equal(
        APPLY(ws,
              REPLACE("src/stats.c", "    return sum / n;\n",
                      "    return n ? sum / n : 0;\n"),
              REPLACE("src/stats.c", "    return n ? sum / n : 0;\n",
                      "    return n > 0 ? sum / n : 0.0;\n"),
              REPLACE("src/stats.c", "    double m = v[0];\n",
                      "    double m = n > 0 ? v[0] : 0;\n"),
              WRITE("NEWS", "first\n"), REPLACE("NEWS", "first\n", "second\n")),
        0);
    text = slurp(root, "src/stats.c");
    assert_non_null(strstr(text, "    return n > 0 ? sum / n : 0.0;\n"));
    assert_non_null(strstr(text, "    double m = n > 0 ? v[0] : 0;\n"));
    assert_null(strstr(text, "return sum / n;"));
    free(text);
    assert_file(root, "NEWS", "second\n");
    assert_string_equal(tnd_workspace_touched(ws)[0], "NEWS");
    assert_string_equal(tnd_workspace_touched(ws)[1], "src/stats.c");
    assert_null(tnd_workspace_touched(ws)[2]);

    /* a file deleted and written again in one proposal */
    assert_int_equal(tnd_workspace_reset(ws), 0);
    assert_int_equal(
        APPLY(ws, DELETE("README.md"), WRITE("README.md", "# new\n")), 0);
    assert_file(root, "README.md", "# new\n");
    tnd_workspace_destroy(&ws, 1);
}

static void a_failing_edit_leaves_every_file_as_it_was(void **state)
{
    tnd_workspace *ws = open_ws();
    const char *root = tnd_workspace_path(ws);
    char *before = snapshot(root), *after;

    (void)state;
    assert_int_equal(APPLY(ws, REPLACE("README.md", "# demo\n", "# changed\n"),
                           WRITE("brand/new.c", "x\n"), DELETE("src/stats.h"),
                           REPLACE("src/stats.c", "not in the file\n", "x\n")),
                     -1);
    assert_error_has("edit 4: the SEARCH text was not found in src/stats.c");
    assert_null(tnd_workspace_touched(ws)[0]);
    after = snapshot(root);
    assert_string_equal(after, before);
    free(after);

    /* nothing is applied, so the next proposal needs no revert */
    assert_int_equal(APPLY(ws, REPLACE("README.md", "# demo\n", "# ok\n")), 0);
    assert_file(root, "README.md", "# ok\n");
    free(before);
    tnd_workspace_destroy(&ws, 1);
}

static void edits_cannot_leave_the_workspace(void **state)
{
    tnd_workspace *ws = open_ws();
    char *before = snapshot(outside), *after;

    (void)state;
    assert_int_equal(APPLY(ws, REPLACE("outside/secret.txt", "secret", "x")),
                     -1);
    assert_error_has("edit 1: outside/secret.txt: the path leaves the "
                     "repository through a symbolic link");
    assert_int_equal(APPLY(ws, WRITE("outside/new.txt", "x\n")), -1);
    assert_error_has("leaves the repository through a symbolic link");
    assert_int_equal(APPLY(ws, WRITE("outside/deep/er/new.txt", "x\n")), -1);
    assert_error_has("leaves the repository through a symbolic link");
    assert_int_equal(APPLY(ws, DELETE("outside/secret.txt")), -1);
    assert_error_has("leaves the repository");

    /* paths that are not relative or climb out, and tandem's own dirs */
    assert_int_equal(APPLY(ws, WRITE("../escape.txt", "x\n")), -1);
    assert_error_has("edit 1: '../escape.txt' contains '..'");
    assert_int_equal(APPLY(ws, WRITE("/tmp/abs.txt", "x\n")), -1);
    assert_error_has("is an absolute path");
    assert_int_equal(APPLY(ws, WRITE(".git/config", "x\n")), -1);
    assert_error_has("inside .git");

    after = snapshot(outside);
    assert_string_equal(after, before);
    free(after);
    free(before);
    tnd_workspace_destroy(&ws, 1);
}

/* The places a reviewer reports (file:line) are checked before anyone
 * relies on them: files in the workspace only (issue 10: a location
 * outside it was copied into report.json). */
static void only_files_inside_are_held(void **state)
{
    tnd_workspace *ws = open_ws();

    (void)state;
    assert_true(tnd_workspace_holds(ws, "src/stats.c"));
    assert_true(tnd_workspace_holds(ws, "link.txt")); /* to README.md */
    assert_false(tnd_workspace_holds(ws, "outside/secret.txt"));
    assert_false(tnd_workspace_holds(ws, "src/missing.c"));
    assert_false(tnd_workspace_holds(ws, "src"));
    assert_false(tnd_workspace_holds(ws, "../escape.txt"));
    assert_false(tnd_workspace_holds(ws, "src/../../x"));
    assert_false(tnd_workspace_holds(ws, "src/.."));
    assert_false(tnd_workspace_holds(ws, "/etc/passwd"));
    assert_false(tnd_workspace_holds(ws, ""));
    tnd_workspace_destroy(&ws, 1);
}

/* A file's lines, how a line an agent names is checked against its end:
 * a last line without a newline counts. */
static void a_files_lines_are_counted(void **state)
{
    tnd_workspace *ws = open_ws();

    (void)state;
    assert_int_equal(APPLY(ws, WRITE("open.txt", "a\nb"),
                           WRITE("two.txt", "a\nb\n"), WRITE("empty.txt", "")),
                     0);
    assert_int_equal(tnd_workspace_lines(ws, "README.md"), 1);
    assert_int_equal(tnd_workspace_lines(ws, "open.txt"), 2);
    assert_int_equal(tnd_workspace_lines(ws, "two.txt"), 2);
    assert_int_equal(tnd_workspace_lines(ws, "empty.txt"), 0);
    assert_int_equal(tnd_workspace_lines(ws, "link.txt"), 1);
    assert_int_equal(tnd_workspace_lines(ws, "outside/secret.txt"), -1);
    assert_int_equal(tnd_workspace_lines(ws, "src/missing.c"), -1);
    assert_int_equal(tnd_workspace_lines(ws, "src"), -1);
    tnd_workspace_destroy(&ws, 1);
}

static void symlinks_directories_and_binaries_are_not_edited(void **state)
{
    tnd_workspace *ws = open_ws();

    (void)state;
    assert_int_equal(APPLY(ws, REPLACE("link.txt", "# demo\n", "# x\n")), -1);
    assert_error_has("edit 1: link.txt: is a symbolic link; only regular "
                     "files can be edited");
    assert_int_equal(APPLY(ws, WRITE("link.txt", "x\n")), -1);
    assert_error_has("is a symbolic link");
    assert_int_equal(APPLY(ws, DELETE("link.txt")), -1);
    assert_error_has("is a symbolic link");
    assert_int_equal(APPLY(ws, WRITE("src", "x\n")), -1);
    assert_error_has("src: is a directory");

    assert_int_equal(APPLY(ws, REPLACE("data.bin", "abc", "xyz")), -1);
    assert_error_has("edit 1 changes data.bin, which is a binary file");
    assert_int_equal(APPLY(ws, REPLACE("missing.c", "a\n", "b\n")), -1);
    assert_error_has("edit 1 changes missing.c, which does not exist");
    tnd_workspace_destroy(&ws, 1);
}

/* A file and a directory of one name trade places, as git changes them
 * (a review rejected both ways: "cannot open docs/index.md: Not a
 * directory", "d: is a directory"), and a reset puts them back. */
static void a_file_and_a_directory_trade_places(void **state)
{
    (void)state;
    /* plain, incremental, and where the kernel has no openat2 (as under
     * valgrind, which failed it) */
    for (int round = 0; round < 3; round++) {
        tnd_workspace *ws = open_ws_mode(round == 1);
        const char *root = tnd_workspace_path(ws);
        char *diff, *full;
        struct stat st;

        assert_int_equal(
            APPLY(ws, DELETE("run.sh"), WRITE("run.sh/index.md", "hi\n"),
                  DELETE("docs/.tandem-notes"), WRITE("docs", "a file now\n")),
            0);
        assert_file(root, "run.sh/index.md", "hi\n");
        assert_file(root, "docs", "a file now\n");
        diff = tnd_workspace_diff(ws);
        assert_non_null(strstr(diff, "deleted file mode 100755"));
        assert_non_null(strstr(diff, "+++ b/run.sh/index.md"));
        assert_non_null(strstr(diff, "+++ b/docs\n"));
        free(diff);
        assert_int_equal(tnd_workspace_reset(ws), 0);
        assert_file(root, "run.sh", "#!/bin/sh\necho hi\n");
        full = tnd_fs_join(root, "run.sh");
        assert_int_equal(lstat(full, &st), 0);
        assert_true(S_ISREG(st.st_mode) && (st.st_mode & 0100));
        free(full);
        assert_file(root, "docs/.tandem-notes", "notes\n");
        tnd_workspace_destroy(&ws, 1);
        tnd_beneath_walk_only(round == 1); /* the next round's */
    }
    tnd_beneath_walk_only(false);
}

/* A coder's empty SEARCH creates a file, and only where none is: over an
 * existing file it replaced every line, and the change was approved. */
static void an_empty_search_creates_and_only_creates(void **state)
{
    tnd_workspace *ws = open_ws();

    (void)state;
    assert_int_equal(APPLY(ws, REPLACE("README.md", "", "fixed\n")), -1);
    assert_error_has("edit 1: an empty SEARCH creates a file, and README.md "
                     "exists: copy the lines to change into SEARCH, or "
                     "rewrite the whole file with a FILE block");
    assert_file(tnd_workspace_path(ws), "README.md", "# demo\n");
    assert_int_equal(APPLY(ws, REPLACE("src/fresh.c", "", "int x;\n")), 0);
    assert_file(tnd_workspace_path(ws), "src/fresh.c", "int x;\n");
    tnd_workspace_destroy(&ws, 1);
}

/* A SEARCH matches where a line's text begins, else outside a word, never
 * inside one: "timeout = 30" went into "connect_timeout = 30", and the
 * edit changed another setting; beside a line of its own it was "more
 * than one place". */
static void a_search_does_not_match_inside_a_word(void **state)
{
    tnd_workspace *ws = open_ws();
    const char *root = tnd_workspace_path(ws);

    (void)state;
    assert_int_equal(
        APPLY(ws, WRITE("cfg.ini", "connect_timeout = 30\n"),
              REPLACE("cfg.ini", "timeout = 30\n", "timeout = 60\n")),
        -1);
    assert_error_has("edit 2: the SEARCH text was not found in cfg.ini");
    assert_int_equal(
        APPLY(ws,
              WRITE("cfg.ini", "connect_timeout = 30\n"
                               "timeout = 30\n"),
              REPLACE("cfg.ini", "timeout = 30\n", "timeout = 60\n")),
        0);
    assert_file(root, "cfg.ini", "connect_timeout = 30\ntimeout = 60\n");
    tnd_workspace_destroy(&ws, 1);
}

static void diff_lists_files_in_path_order(void **state)
{
    tnd_workspace *ws = open_ws();
    char *diff;
    const char *readme, *header, *source;

    (void)state;
    assert_int_equal(APPLY(ws,
                           REPLACE("src/stats.h", "int n);\n", "size_t n);\n"),
                           WRITE("src/stats.c", "// gone\n"),
                           REPLACE("README.md", "# demo\n", "# stats\n")),
                     0);
    diff = tnd_workspace_diff(ws);
    readme = strstr(diff, "diff --git a/README.md b/README.md\n");
    source = strstr(diff, "diff --git a/src/stats.c b/src/stats.c\n");
    header = strstr(diff, "diff --git a/src/stats.h b/src/stats.h\n");
    assert_true(readme == diff);
    assert_true(source && source > readme);
    assert_true(header && header > source);
    assert_non_null(strstr(diff, "-# demo\n+# stats\n"));
    free(diff);
    tnd_workspace_destroy(&ws, 1);
}

static void no_op_edits_give_an_empty_diff(void **state)
{
    tnd_workspace *ws = open_ws();
    char *diff;

    (void)state;
    assert_int_equal(APPLY(ws, REPLACE("README.md", "# demo\n", "# demo\n"),
                           WRITE("src/stats.c", stats_c)),
                     0);
    diff = tnd_workspace_diff(ws);
    assert_string_equal(diff, "");
    free(diff);
    tnd_workspace_destroy(&ws, 1);
}

/* The default: every attempt gets the base again, whatever a build wrote
 * or rewrote, so no attempt is judged on another's outputs. */
/* A reset that cannot restore the copy in place (here: a file the base
 * no longer has, changed in the copy) makes a whole new one; the next
 * attempt's edits go into that copy, the one at the workspace's path,
 * not into the old tree moved into the trash. */
static void edits_after_a_whole_new_copy_land_in_it(void **state)
{
    const char *bdir = tnd_snapshot_path(base);
    tnd_workspace *ws;
    const char *root;
    char *gone = tnd_fs_join(bdir, "gone.txt");

    (void)state;
    put(bdir, "gone.txt", "base\n", 5);
    ws = open_ws();
    root = tnd_workspace_path(ws);
    put(root, "gone.txt", "changed by a build\n", 19);
    assert_int_equal(unlink(gone), 0);
    free(gone);
    assert_int_equal(tnd_workspace_reset(ws), 0);
    assert_false(exists(root, "gone.txt"));

    assert_int_equal(APPLY(ws, WRITE("src/after.c", "int after;\n")), 0);
    assert_file(root, "src/after.c", "int after;\n");
    assert_int_equal(tnd_workspace_reset(ws), 0);
    assert_false(exists(root, "src/after.c"));
    tnd_workspace_destroy(&ws, 1);
}

static void reset_gives_a_clean_copy_of_the_base(void **state)
{
    tnd_workspace *ws = open_ws();
    const char *root = tnd_workspace_path(ws);
    char *diff, *before = snapshot(root);

    (void)state;
    assert_int_equal(APPLY(ws,
                           REPLACE("src/stats.c", "    double sum = 0;\n",
                                   "    long double sum = 0;\n"),
                           DELETE("src/stats.h"), WRITE("src/extra.c", "x\n")),
                     0);
    /* what a build does: outputs, a rewritten tracked file, a directory
     * without permissions, a directory turned into a symlink outside */
    put(root, "build/stats.o", "object\n", 7);
    put(root, "README.md", "# regenerated\n", 14);
    put(root, "locked/x", "x\n", 2);
    {
        char *locked = tnd_fs_join(root, "locked");
        char *docs = tnd_fs_join(root, "docs");
        chmod(locked, 0);
        assert_int_equal(tnd_fs_rmtree(docs), 0);
        assert_int_equal(symlink(outside, docs), 0);
        free(locked);
        free(docs);
    }
    assert_int_equal(tnd_workspace_reset(ws), 0);
    assert_null(tnd_workspace_touched(ws)[0]);
    {
        char *after = snapshot(root);
        assert_string_equal(after, before);
        free(after);
    }
    assert_false(exists(root, "build"));
    assert_file(root, "README.md", "# demo\n");
    diff = tnd_workspace_diff(ws);
    assert_string_equal(diff, "");
    free(diff);

    /* and the next proposal applies to it as to the first */
    assert_int_equal(APPLY(ws, REPLACE("README.md", "# demo\n", "# two\n")), 0);
    diff = tnd_workspace_diff(ws);
    assert_non_null(strstr(diff, "+# two"));
    free(diff);
    free(before);
    tnd_workspace_destroy(&ws, 1);
}

/* workspace.incremental: only the touched files go back; build outputs,
 * even a rewritten tracked file, stay, but diffs are still against the
 * base itself. */
static void incremental_reset_puts_back_only_touched_files(void **state)
{
    tnd_workspace *ws = open_ws_mode(true);
    const char *root = tnd_workspace_path(ws);
    char *after, *diff;

    (void)state;
    /* a build output the proposal did not touch stays */
    put(root, "build/stats.o", "object\n", 7);
    put(root, "README.md", "# regenerated\n", 14);
    assert_int_equal(APPLY(ws,
                           REPLACE("src/stats.c", "    double sum = 0;\n",
                                   "    long double sum = 0;\n"),
                           DELETE("src/stats.h"), WRITE("src/extra.c", "x\n")),
                     0);
    put(root, "build/stats2.o", "object\n", 7);
    assert_int_equal(tnd_workspace_reset(ws), 0);
    assert_file(root, "src/stats.c", stats_c);
    assert_file(root, "src/stats.h",
                "double stats_mean(const double *v, int n);\n");
    assert_file(root, "src/extra.c", NULL);
    assert_file(root, "build/stats.o", "object\n");
    assert_file(root, "build/stats2.o", "object\n");
    assert_file(root, "README.md", "# regenerated\n");
    assert_null(tnd_workspace_touched(ws)[0]);
    diff = tnd_workspace_diff(ws);
    assert_string_equal(diff, "");
    free(diff);

    /* the diff is against the base, not the rewritten file */
    assert_int_equal(
        APPLY(ws, REPLACE("README.md", "# regenerated\n", "# two\n")), -1);
    assert_error_has("SEARCH text was not found");
    assert_int_equal(APPLY(ws, REPLACE("README.md", "# demo\n", "# two\n")), 0);
    diff = tnd_workspace_diff(ws);
    assert_non_null(strstr(diff, "-# demo\n+# two\n"));
    free(diff);
    assert_int_equal(tnd_workspace_reset(ws), 0);

    /* resetting with nothing applied is a no-op */
    assert_int_equal(tnd_workspace_reset(ws), 0);
    after = slurp(root, "src/stats.c");
    assert_string_equal(after, stats_c);
    free(after);
    tnd_workspace_destroy(&ws, 1);
}

/* A build that swaps a workspace directory for a symlink to a directory
 * outside cannot make the revert write there: every write resolves its
 * path beneath the workspace at the moment it happens. */
static void a_swapped_directory_cannot_lead_the_revert_outside(void **state)
{
    tnd_workspace *ws = open_ws_mode(true);
    const char *root = tnd_workspace_path(ws);
    char *evil = tnd_fs_join(scratch, "evil");
    char *src = tnd_fs_join(root, "src"), *moved = tnd_fs_join(root, "src.0");

    (void)state;
    put(evil, "stats.c", "outside\n", 8);
    assert_int_equal(APPLY(ws,
                           REPLACE("src/stats.c", "    double sum = 0;\n",
                                   "    long double sum = 0;\n"),
                           DELETE("src/stats.h")),
                     0);
    /* the "build" */
    assert_int_equal(rename(src, moved), 0);
    assert_int_equal(symlink(evil, src), 0);

    assert_int_equal(tnd_workspace_reset(ws), -1);
    assert_error_has("src/stats");
    assert_error_has("symbolic link");
    assert_file(evil, "stats.c", "outside\n");
    assert_file(evil, "stats.h", NULL);
    tnd_workspace_destroy(&ws, 1);
    assert_int_equal(tnd_fs_rmtree(evil), 0);
    free(evil);
    free(src);
    free(moved);
}

/* With incremental on, a build put a directory where the base has a link
 * out of the repository: the base is still read beneath itself, so the
 * file the link leads to never reaches the diff (and the model). */
static void the_base_is_not_read_through_a_link(void **state)
{
    tnd_workspace *ws = open_ws_mode(true);
    const char *root = tnd_workspace_path(ws);
    char *lnk = tnd_fs_join(root, "outside");
    char *diff;

    (void)state;
    /* the "build" */
    assert_int_equal(unlink(lnk), 0);
    assert_int_equal(mkdir(lnk, 0755), 0);
    assert_int_equal(APPLY(ws, WRITE("outside/secret.txt", "mine\n")), -1);
    assert_error_has("outside/secret.txt");
    assert_error_has("symbolic link");
    diff = tnd_workspace_diff(ws);
    assert_true(!diff || !strstr(diff, "secret\n"));
    free(diff);
    assert_file(outside, "secret.txt", "secret\n");
    tnd_workspace_destroy(&ws, 1);
    free(lnk);
}

static void applying_twice_without_revert_is_an_error(void **state)
{
    tnd_workspace *ws = open_ws();
    const char *root = tnd_workspace_path(ws);

    (void)state;
    assert_int_equal(APPLY(ws, REPLACE("README.md", "# demo\n", "# one\n")), 0);
    assert_int_equal(APPLY(ws, REPLACE("README.md", "# one\n", "# two\n")), -1);
    assert_error_has("a proposal is already applied; revert it first");
    assert_file(root, "README.md", "# one\n");
    assert_int_equal(tnd_workspace_reset(ws), 0);
    assert_int_equal(APPLY(ws, REPLACE("README.md", "# demo\n", "# two\n")), 0);
    assert_file(root, "README.md", "# two\n");

    assert_int_equal(tnd_workspace_reset(ws), 0);
    assert_int_equal(tnd_workspace_apply(ws, NULL, 0), -1);
    assert_error_has("the proposal has no edits");
    tnd_workspace_destroy(&ws, 1);
}

/* Runs last: everything above worked on copies. */
static void the_original_repository_is_never_written(void **state)
{
    char *now = snapshot(repo), *out_now = snapshot(outside);

    (void)state;
    assert_string_equal(now, repo_before);
    assert_string_equal(out_now, outside_before);
    free(now);
    free(out_now);
}

/* ---- fixture ------------------------------------------------------------ */

static int setup(void **state)
{
    struct timespec mtime[2] = {{1000000000, 123456789},
                                {1000000000, 123456789}};
    char *full, *link;

    (void)state;
    umask(022);
    if (!mkdtemp(repo) || !mkdtemp(outside) || !mkdtemp(scratch))
        return -1;
    put(outside, "secret.txt", "secret\n", 7);
    put(repo, "README.md", "# demo\n", 7);
    put(repo, "src/stats.c", stats_c, strlen(stats_c));
    put(repo, "src/stats.h", "double stats_mean(const double *v, int n);\n",
        strlen("double stats_mean(const double *v, int n);\n"));
    put(repo, "src/legacy.c", legacy_c, strlen(legacy_c));
    put(repo, "src/dup.txt", "same\nsame \n", 11);
    put(repo, "src/rep.txt", "A\nB\nA\nB\nA\n", 10);
    put(repo, "src/win.txt", "one\r\ntwo\r\nthree\r\n", 17);
    put(repo, "run.sh", "#!/bin/sh\necho hi\n", 18);
    put(repo, "data.bin", binary, sizeof(binary) - 1);
    put(repo, "docs/.tandem-notes", "notes\n", 6);
    put(repo, ".git/HEAD", "ref: refs/heads/main\n", 21);
    put(repo, ".git/config", "[core]\n", 7);
    put(repo, ".tandem/sessions/s1.json", "{}\n", 3);

    full = tnd_fs_join(repo, "run.sh");
    chmod(full, 0755);
    free(full);
    full = tnd_fs_join(repo, "src/stats.c");
    utimensat(AT_FDCWD, full, mtime, 0);
    free(full);
    full = tnd_fs_join(repo, "link.txt");
    if (symlink("README.md", full) < 0)
        return -1;
    free(full);
    link = tnd_fs_join(repo, "outside");
    if (symlink(outside, link) < 0)
        return -1;
    free(link);
    repo_before = snapshot(repo);
    outside_before = snapshot(outside);
    {
        char *dir = tnd_fs_join(scratch, "base");
        tnd_snapshot_options so = {.max_bytes = MAX_BYTES};
        base = tnd_snapshot_new(repo, dir, &so);
        free(dir);
        if (!base)
            return -1;
    }
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    free(repo_before);
    free(outside_before);
    tnd_snapshot_destroy(&base, 1);
    return tnd_fs_rmtree(repo) | tnd_fs_rmtree(outside) |
           tnd_fs_rmtree(scratch);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(copy_keeps_content_mode_mtime_and_symlinks),
        cmocka_unit_test(modes_are_set_said_and_put_back),
        cmocka_unit_test(destroy_removes_the_copy_only_when_asked),
        cmocka_unit_test(existing_directory_is_refused_and_left_alone),
        cmocka_unit_test(replace_exact_match_and_diff),
        cmocka_unit_test(replace_tolerates_trailing_whitespace),
        cmocka_unit_test(search_not_found_names_the_closest_line),
        cmocka_unit_test(ambiguous_search_is_refused),
        cmocka_unit_test(overlapping_places_are_ambiguous_too),
        cmocka_unit_test(loose_places_after_a_near_miss_and_overlapping),
        cmocka_unit_test(a_long_loose_miss_takes_linear_work),
        cmocka_unit_test(a_crlf_file_stays_crlf),
        cmocka_unit_test(a_last_line_without_newline_stays_so),
        cmocka_unit_test(write_creates_a_file_in_a_new_directory),
        cmocka_unit_test(write_replaces_a_whole_file),
        cmocka_unit_test(delete_removes_and_revert_restores),
        cmocka_unit_test(several_edits_to_one_file_apply_in_order),
        cmocka_unit_test(a_failing_edit_leaves_every_file_as_it_was),
        cmocka_unit_test(edits_cannot_leave_the_workspace),
        cmocka_unit_test(a_swapped_directory_cannot_lead_the_revert_outside),
        cmocka_unit_test(only_files_inside_are_held),
        cmocka_unit_test(a_files_lines_are_counted),
        cmocka_unit_test(symlinks_directories_and_binaries_are_not_edited),
        cmocka_unit_test(a_file_and_a_directory_trade_places),
        cmocka_unit_test(an_empty_search_creates_and_only_creates),
        cmocka_unit_test(a_search_does_not_match_inside_a_word),
        cmocka_unit_test(diff_lists_files_in_path_order),
        cmocka_unit_test(no_op_edits_give_an_empty_diff),
        cmocka_unit_test(reset_gives_a_clean_copy_of_the_base),
        cmocka_unit_test(edits_after_a_whole_new_copy_land_in_it),
        cmocka_unit_test(incremental_reset_puts_back_only_touched_files),
        cmocka_unit_test(applying_twice_without_revert_is_an_error),
        cmocka_unit_test(the_base_is_not_read_through_a_link),
        cmocka_unit_test(the_original_repository_is_never_written),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
