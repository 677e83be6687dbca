/* Unit tests for orchestrator/patchdir: an approved patch into a tree
 * outside git, as tandem run --apply writes it there. A clean patch
 * applied beside the user's edits; a conflict, a write that fails (a
 * file size limit) and a patch that does not fit leave every file as it
 * was; created and deleted files, repeated lines, a FIFO in the tree.
 *
 * The patches go through tnd_apply_patch, as a run applies them; trees
 * and patches are made as in test_apply.c (apply_trees.h). Each test
 * says what the tree holds afterwards, byte for byte. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/diff.h"
#include "common/fs.h"
#include "orchestrator/apply.h"
#include "tests/unit/apply_trees.h"

/* ---- without git ---------------------------------------------------- */

static void a_clean_patch_applies_outside_git(void **state)
{
    char *dir = plain("plain-clean"), *file, *diff;
    tnd_apply_result r;

    (void)state;
    put(dir, "a.txt", lines10);
    put(dir, "other.txt", "mine\n");
    diff = patch(dir, "a.txt", lines10, changed10, &file);
    /* the user edits a line far from the hunk, and another file */
    put(dir, "a.txt",
        "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\nnine\nTEN\n");
    put(dir, "other.txt", "mine, edited\n");
    assert_int_equal(
        tnd_apply_patch(&r, dir, diff, file, TND_APPLY_TREE, "m", NULL), 0);
    assert_true(r.applied);
    assert_false(r.git);
    assert_null(r.why);
    assert_string_equal(r.paths[0], "a.txt");
    assert_null(r.paths[1]);
    assert_file(dir, "a.txt",
                "one\ntwo\nthree\nfour\nFIVE\nsix\nseven\neight\nnine\nTEN\n");
    assert_file(dir, "other.txt", "mine, edited\n");
    tnd_apply_result_clear(&r);
    free(diff);
    free(file);
    free(dir);
}

static void a_conflict_leaves_the_tree_as_it_was(void **state)
{
    char *dir = plain("plain-conflict"), *file, *diff, *two;
    const char *edited = "one\ntwo\nthree\nfour\nfive, mine\nsix\nseven\n"
                         "eight\nnine\nten\n";
    tnd_buf b;
    tnd_apply_result r;

    (void)state;
    put(dir, "a.txt", lines10);
    put(dir, "b.txt", "bee\n");
    /* two files: b.txt would apply, a.txt does not; neither is written */
    diff = patch(dir, "a.txt", lines10, changed10, &file);
    tnd_buf_init(&b, TND_BUF_NOCAP);
    tnd_buf_puts(&b, diff);
    tnd_diff_file(&b, "b.txt", "bee\n", 4, "BEE\n", 4);
    two = tnd_buf_detach(&b, NULL);
    put(dir, "a.txt", edited);
    assert_int_equal(
        tnd_apply_patch(&r, dir, two, file, TND_APPLY_TREE, "m", NULL), 1);
    assert_false(r.applied);
    assert_non_null(strstr(r.why, "does not apply cleanly"));
    assert_non_null(strstr(r.why, "a.txt"));
    assert_file(dir, "a.txt", edited);
    assert_file(dir, "b.txt", "bee\n");
    tnd_apply_result_clear(&r);
    free(two);
    free(diff);
    free(file);
    free(dir);
}

/* Without git: the same lines in two places go where the hunk's header
 * puts them (refused as "in more than one place" before), and a FIFO
 * where the patch changes a file is refused at once (it hung). */
static void repeated_lines_and_fifos_outside_git(void **state)
{
    static const char rep[] = "A\nB\nA\nB\nA\nB\nA\nB\nA\n";
    static const char rep8[] = "A\nB\nA\nB\nA\nB\nA\nC\nA\n";
    char *dir = plain("plain-repeated"), *file, *diff, *fifo;
    tnd_apply_result r;

    (void)state;
    put(dir, "rep.txt", rep);
    diff = patch(dir, "rep.txt", rep, rep8, &file);
    assert_int_equal(
        tnd_apply_patch(&r, dir, diff, file, TND_APPLY_TREE, "m", NULL), 0);
    assert_true(r.applied);
    assert_file(dir, "rep.txt", rep8);
    tnd_apply_result_clear(&r);
    free(diff);
    free(file);

    put(dir, "pipe", "x\n");
    diff = patch(dir, "pipe", "x\n", "y\n", &file);
    fifo = tnd_fs_join(dir, "pipe");
    assert_int_equal(unlink(fifo), 0);
    assert_int_equal(mkfifo(fifo, 0644), 0);
    alarm(20); /* a hang fails the test */
    assert_int_equal(
        tnd_apply_patch(&r, dir, diff, file, TND_APPLY_TREE, "m", NULL), 1);
    alarm(0);
    assert_false(r.applied);
    assert_non_null(strstr(r.why, "not a regular file"));
    tnd_apply_result_clear(&r);
    free(fifo);
    free(diff);
    free(file);
    free(dir);
}

/* Without git, a write that fails (here the file size limit, as a full
 * disk would) leaves every file as it was: the new contents are written
 * beside the files first (a.txt was changed and b.txt cut short). */
static void a_failed_write_changes_nothing_outside_git(void **state)
{
    char *dir = plain("plain-full"), *file, *diff, *big;
    struct rlimit was, small;
    tnd_buf b;
    tnd_apply_result r;

    (void)state;
    put(dir, "a.txt", lines10);
    put(dir, "b.txt", "bee\n");
    big = tnd_xmalloc(256 * 1024 + 2);
    memset(big, 'x', 256 * 1024);
    strcpy(big + 256 * 1024, "\n");
    tnd_buf_init(&b, TND_BUF_NOCAP);
    free(patch(dir, "a.txt", lines10, changed10, &file));
    tnd_diff_file(&b, "a.txt", lines10, strlen(lines10), changed10,
                  strlen(changed10));
    tnd_diff_file(&b, "b.txt", "bee\n", 4, big, strlen(big));
    diff = tnd_buf_detach(&b, NULL);
    assert_int_equal(getrlimit(RLIMIT_FSIZE, &was), 0);
    small = was;
    small.rlim_cur = 64 * 1024;
    signal(SIGXFSZ, SIG_IGN);
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &small), 0);
    assert_int_equal(
        tnd_apply_patch(&r, dir, diff, file, TND_APPLY_TREE, "m", NULL), 1);
    assert_int_equal(setrlimit(RLIMIT_FSIZE, &was), 0);
    assert_false(r.applied);
    assert_non_null(strstr(r.why, "nothing was changed"));
    assert_file(dir, "a.txt", lines10);
    assert_file(dir, "b.txt", "bee\n");
    sh("test -z \"$(ls -A '%s' | grep tandem)\"", dir); /* no leftover */
    tnd_apply_result_clear(&r);
    free(big);
    free(diff);
    free(file);
    free(dir);
}

static void created_and_deleted_files_outside_git(void **state)
{
    char *dir = plain("plain-files"), *file, *diff;
    tnd_apply_result r;

    (void)state;
    /* created: only where nothing is now, with the umask's mode (a new
     * file was made 0644 whatever the umask) */
    diff = patch(dir, "src/new.c", NULL, "int x;\n", &file);
    {
        mode_t was = umask(077);
        struct stat st;
        char *path = tnd_fs_join(dir, "src/new.c");
        assert_int_equal(
            tnd_apply_patch(&r, dir, diff, file, TND_APPLY_TREE, "m", NULL), 0);
        umask(was);
        assert_int_equal(stat(path, &st), 0);
        assert_int_equal(st.st_mode & 0777, 0600);
        free(path);
    }
    assert_file(dir, "src/new.c", "int x;\n");
    tnd_apply_result_clear(&r);
    put(dir, "src/new.c", "int y;\n");
    assert_int_equal(
        tnd_apply_patch(&r, dir, diff, file, TND_APPLY_TREE, "m", NULL), 1);
    assert_non_null(strstr(r.why, "creates src/new.c, which exists now"));
    assert_file(dir, "src/new.c", "int y;\n");
    tnd_apply_result_clear(&r);
    free(diff);
    free(file);
    /* deleted: only when it holds what the patch removes */
    put(dir, "old.c", "gone\n");
    diff = patch(dir, "old.c", "gone\n", NULL, &file);
    put(dir, "old.c", "gone, but edited\n");
    assert_int_equal(
        tnd_apply_patch(&r, dir, diff, file, TND_APPLY_TREE, "m", NULL), 1);
    assert_non_null(strstr(r.why, "deletes old.c, which has changed"));
    assert_file(dir, "old.c", "gone, but edited\n");
    tnd_apply_result_clear(&r);
    put(dir, "old.c", "gone\n");
    assert_int_equal(
        tnd_apply_patch(&r, dir, diff, file, TND_APPLY_TREE, "m", NULL), 0);
    assert_false(exists(dir, "old.c"));
    tnd_apply_result_clear(&r);
    free(diff);
    free(file);
    /* an executable one too ("deleted file mode 100755": its text was
     * rebuilt as 100644, so it had always "changed since the run") */
    {
        tnd_buf b;
        char *path = tnd_fs_join(dir, "run.sh");
        put(dir, "run.sh", "echo hi\n");
        assert_int_equal(chmod(path, 0755), 0);
        tnd_buf_init(&b, TND_BUF_NOCAP);
        tnd_diff_file_exec(&b, "run.sh", "echo hi\n", 8, true, NULL, 0, false);
        diff = tnd_buf_detach(&b, NULL);
        file = tnd_xasprintf("%s.patch", dir);
        assert_int_equal(tnd_fs_write(file, diff, strlen(diff)), 0);
        assert_int_equal(
            tnd_apply_patch(&r, dir, diff, file, TND_APPLY_TREE, "m", NULL), 0);
        assert_false(exists(dir, "run.sh"));
        tnd_apply_result_clear(&r);
        free(path);
    }
    free(diff);
    free(file);
    free(dir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_clean_patch_applies_outside_git),
        cmocka_unit_test(a_conflict_leaves_the_tree_as_it_was),
        cmocka_unit_test(created_and_deleted_files_outside_git),
        cmocka_unit_test(a_failed_write_changes_nothing_outside_git),
        cmocka_unit_test(repeated_lines_and_fifos_outside_git),
    };
    return cmocka_run_group_tests(tests, apply_setup, apply_teardown);
}
