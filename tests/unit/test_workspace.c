/* Unit tests for orchestrator/workspace: the tree one attempt works in.
 * The repository of ws_repo.h is taken as a snapshot once; each test
 * makes a workspace from it, applies proposals, resets, and the last
 * test checks the original was never written. How a SEARCH is placed in
 * a file, and what a coder is told when it is in none or in many, is
 * orchestrator/search's: test_search.c applies those edits. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/beneath.h"
#include "common/error.h"
#include "common/fs.h"
#include "orchestrator/workspace.h"
#include "ws_repo.h"

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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(copy_keeps_content_mode_mtime_and_symlinks),
        cmocka_unit_test(modes_are_set_said_and_put_back),
        cmocka_unit_test(destroy_removes_the_copy_only_when_asked),
        cmocka_unit_test(existing_directory_is_refused_and_left_alone),
        cmocka_unit_test(replace_exact_match_and_diff),
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
        cmocka_unit_test(diff_lists_files_in_path_order),
        cmocka_unit_test(no_op_edits_give_an_empty_diff),
        cmocka_unit_test(reset_gives_a_clean_copy_of_the_base),
        cmocka_unit_test(edits_after_a_whole_new_copy_land_in_it),
        cmocka_unit_test(incremental_reset_puts_back_only_touched_files),
        cmocka_unit_test(applying_twice_without_revert_is_an_error),
        cmocka_unit_test(the_base_is_not_read_through_a_link),
        cmocka_unit_test(the_original_repository_is_never_written),
    };
    return cmocka_run_group_tests(tests, ws_repo_setup, ws_repo_teardown);
}
