/* Unit tests for orchestrator/apply: an approved patch into the user's
 * tree. Trees are made in a temporary directory, plain and under git
 * (apply_trees.h); patches are made as the run makes them
 * (common/diff.h). Each test says what the tree holds afterwards, byte
 * for byte, and, with git, what is committed and what is still staged.
 * A tree outside git, which orchestrator/patchdir writes, is in
 * test_patchdir.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/diff.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/rmtree.h"
#include "common/xalloc.h"
#include "orchestrator/apply.h"
#include "tests/unit/scratch_repo.h"
#include "tests/unit/apply_trees.h"

/* ---- the message ---------------------------------------------------- */

static void the_message_is_the_rationale(void **state)
{
    char *m;

    (void)state;
    m = tnd_apply_message("Cast before dividing.\nThe fraction was lost.",
                          "fix it", "S1");
    assert_string_equal(m, "Cast before dividing.\n\nCast before dividing.\n"
                           "The fraction was lost.\n\nTandem-Session: S1\n");
    free(m);
    /* a rationale of one short line is the subject and nothing more */
    m = tnd_apply_message("  Cast before dividing.  ", "fix it", "S1");
    assert_string_equal(m, "Cast before dividing.\n\nTandem-Session: S1\n");
    free(m);
    /* no rationale: the task */
    m = tnd_apply_message("", "make the failing test pass", "S2");
    assert_string_equal(m, "make the failing test pass\n\n"
                           "Tandem-Session: S2\n");
    free(m);
    m = tnd_apply_message(NULL, "task", "S3");
    assert_string_equal(m, "task\n\nTandem-Session: S3\n");
    free(m);
}

static void a_long_first_line_is_cut_for_the_subject(void **state)
{
    const char *sentence = "The cast came after the division. So the "
                           "fraction was already gone and the mean of 1 and "
                           "2 came out as 1 instead of 1.5.";
    const char *words = "The cast came after the integer division so the "
                        "fraction was already gone and the mean came out "
                        "wrong";
    char *m, *nl;

    (void)state;
    m = tnd_apply_message(sentence, "t", "S");
    nl = strchr(m, '\n');
    assert_int_equal(nl - m, strlen("The cast came after the division."));
    assert_non_null(strstr(m, sentence)); /* the whole of it in the body */
    free(m);
    m = tnd_apply_message(words, "t", "S");
    nl = strchr(m, '\n');
    assert_true(nl - m <= 72);
    assert_memory_equal(nl - 3, "...", 3);
    assert_true(nl[-4] != ' ');
    assert_non_null(strstr(m, words));
    free(m);
}

/* ---- without git ---------------------------------------------------- */

static void commit_outside_git_is_refused(void **state)
{
    char *dir = plain("plain-commit"), *file, *diff;
    tnd_apply_result r;

    (void)state;
    assert_int_equal(tnd_apply_can_commit(dir), TND_ECONFIG);
    assert_non_null(strstr(tnd_error_last(), "not in a git work tree"));
    assert_non_null(strstr(tnd_error_last(), "--apply"));
    put(dir, "a.txt", lines10);
    diff = patch(dir, "a.txt", lines10, changed10, &file);
    assert_int_equal(
        tnd_apply_patch(&r, dir, diff, file, TND_APPLY_COMMIT, "m", NULL), 1);
    assert_false(r.applied);
    assert_file(dir, "a.txt", lines10);
    tnd_apply_result_clear(&r);
    free(diff);
    free(file);
    free(dir);
}

/* ---- with git ------------------------------------------------------- */

/* No commit yet: the run would work on an empty tree, so one whose work
 * tree holds files is refused, naming the fix; an empty one is a project
 * started from nothing, and is committed as the first commit. */
static void no_commit_yet_is_refused_only_with_files(void **state)
{
    char *dir = plain("unborn");

    (void)state;
    sh("cd '%s' && git init -q && git config user.name t && "
       "git config user.email t@example.invalid",
       dir);
    assert_int_equal(tnd_apply_can_commit(dir), 0);
    put(dir, "a.txt", lines10);
    assert_int_equal(tnd_apply_can_commit(dir), TND_ECONFIG);
    assert_non_null(strstr(tnd_error_last(), "has no commit yet"));
    assert_non_null(strstr(tnd_error_last(), "make a first commit"));
    free(dir);
}

static void git_applies_only_what_fits(void **state)
{
    char *dir = git_repo("git-apply"), *file, *diff;
    const char *edited = "one\ntwo\nthree\nfour\nfive, mine\nsix\nseven\n"
                         "eight\nnine\nten\n";
    tnd_apply_result r;

    (void)state;
    assert_int_equal(tnd_apply_can_commit(dir), 0);
    diff = patch(dir, "a.txt", lines10, changed10, &file);
    put(dir, "a.txt", edited);
    assert_int_equal(
        tnd_apply_patch(&r, dir, diff, file, TND_APPLY_TREE, "m", NULL), 1);
    assert_true(r.git);
    assert_false(r.applied);
    assert_non_null(strstr(r.why, "git apply"));
    assert_file(dir, "a.txt", edited);
    tnd_apply_result_clear(&r);
    put(dir, "a.txt", lines10);
    put(dir, "b.txt", "bee, mine\n");
    assert_int_equal(
        tnd_apply_patch(&r, dir, diff, file, TND_APPLY_TREE, "m", NULL), 0);
    assert_true(r.applied);
    assert_false(r.committed);
    assert_file(dir, "a.txt", changed10);
    assert_file(dir, "b.txt", "bee, mine\n");
    tnd_apply_result_clear(&r);
    free(diff);
    free(file);
    free(dir);
}

/* The user's apply.whitespace=fix does not rewrite the audited patch
 * (a trailing blank the gate saw was taken out). */
static void git_applies_the_patch_as_it_was_audited(void **state)
{
    char *dir = git_repo("git-whitespace"), *file, *diff;
    const char *blank = "one\ntwo\nthree\nfour\nFIVE  \nsix\nseven\n"
                        "eight\nnine\nten\n";
    tnd_apply_result r;

    (void)state;
    sh("cd '%s' && git config apply.whitespace fix", dir);
    diff = patch(dir, "a.txt", lines10, blank, &file);
    assert_int_equal(
        tnd_apply_patch(&r, dir, diff, file, TND_APPLY_TREE, "m", NULL), 0);
    assert_true(r.git);
    assert_true(r.applied);
    assert_file(dir, "a.txt", blank);
    tnd_apply_result_clear(&r);
    free(diff);
    free(file);
    free(dir);
}

static void a_commit_holds_the_patch_and_nothing_else(void **state)
{
    char *dir = git_repo("git-commit"), *file, *diff, *out;
    tnd_apply_result r;

    (void)state;
    diff = patch(dir, "a.txt", lines10, changed10, &file);
    /* the user has something staged, and something not */
    put(dir, "b.txt", "bee, staged\n");
    sh("cd '%s' && git add b.txt", dir);
    put(dir, "c.txt", "untracked\n");
    assert_int_equal(tnd_apply_patch(&r, dir, diff, file, TND_APPLY_COMMIT,
                                     "Shout five\n\nTandem-Session: S\n", NULL),
                     0);
    assert_true(r.applied);
    assert_true(r.committed);
    assert_non_null(r.commit);
    assert_int_equal(strlen(r.commit), 40);
    out = sh_out("cd '%s' && git show --name-only --format=%%s HEAD", dir);
    assert_string_equal(out, "Shout five\n\na.txt");
    free(out);
    out = sh_out("cd '%s' && git status --porcelain", dir);
    assert_string_equal(out, "M  b.txt\n?? c.txt");
    free(out);
    tnd_apply_result_clear(&r);
    free(diff);
    free(file);
    free(dir);
}

static void a_commit_of_a_file_with_changes_of_yours_is_refused(void **state)
{
    char *dir = git_repo("git-dirty"), *file, *diff, *out;
    const char *mine = "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\n"
                       "nine\nten, mine\n";
    tnd_apply_result r;

    (void)state;
    diff = patch(dir, "a.txt", lines10, changed10, &file);
    put(dir, "a.txt", mine); /* would apply, but would be committed too */
    assert_int_equal(
        tnd_apply_patch(&r, dir, diff, file, TND_APPLY_COMMIT, "m", NULL), 1);
    assert_false(r.applied);
    assert_non_null(strstr(r.why, "a.txt has changes of yours"));
    assert_file(dir, "a.txt", mine);
    out = sh_out("cd '%s' && git log --format=%%s", dir);
    assert_string_equal(out, "base");
    free(out);
    tnd_apply_result_clear(&r);
    free(diff);
    free(file);
    free(dir);
}

static void a_commit_onto_a_moved_head_is_refused(void **state)
{
    char *dir = git_repo("git-moved"), *file, *diff, *out, *head;
    tnd_apply_result r;

    (void)state;
    diff = patch(dir, "a.txt", lines10, changed10, &file);
    head = tnd_apply_head(dir); /* when the run took its snapshot */
    assert_int_equal(strlen(head), 40);
    /* then another branch, whose tree nobody audited */
    sh("cd '%s' && git checkout -q -b other && echo b >b.txt && git add b.txt "
       "&& git commit -q -m other",
       dir);
    assert_int_equal(
        tnd_apply_patch(&r, dir, diff, file, TND_APPLY_COMMIT, "m", head), 1);
    assert_false(r.applied);
    assert_non_null(strstr(r.why, "HEAD moved while the run went on"));
    assert_file(dir, "a.txt", lines10);
    out = sh_out("cd '%s' && git log --format=%%s", dir);
    assert_string_equal(out, "other\nbase");
    free(out);
    tnd_apply_result_clear(&r);
    /* the same commit under another branch's name is the same base */
    sh("cd '%s' && git checkout -q -b again HEAD~", dir);
    assert_int_equal(
        tnd_apply_patch(&r, dir, diff, file, TND_APPLY_COMMIT, "m", head), 0);
    assert_true(r.committed);
    tnd_apply_result_clear(&r);
    free(head);
    free(diff);
    free(file);
    free(dir);
}

static void a_created_file_is_committed_from_a_subdirectory(void **state)
{
    char *top = git_repo("git-sub"), *dir = tnd_fs_join(top, "sub"), *file,
         *diff, *out;
    tnd_apply_result r;

    (void)state;
    put(dir, "kept.txt", "kept\n");
    sh("cd '%s' && git add -A && git commit -q -m sub", top);
    diff = patch(dir, "new.txt", NULL, "new\n", &file);
    assert_int_equal(
        tnd_apply_patch(&r, dir, diff, file, TND_APPLY_COMMIT, "Add new", NULL),
        0);
    assert_file(dir, "new.txt", "new\n");
    out = sh_out("cd '%s' && git show --name-only --format=%%s HEAD", top);
    assert_string_equal(out, "Add new\n\nsub/new.txt");
    free(out);
    tnd_apply_result_clear(&r);
    free(diff);
    free(file);
    free(dir);
    free(top);
}

/* Many files with long names: 300 of about 1000 bytes, near the
 * longest an edit takes (1024) */
#define NFILES 300

/* The shell's words that make the repository "$1/git-many": NFILES
 * files in a directory 1000 bytes deep, and g1.txt and g*.txt at the
 * top, committed with LF and checked out with CRLF (`* text
 * eol=crlf`), so that the patch of the checkout goes the long way
 * (commit_tree_converted). */
static const char make_many[] =
    "set -e; cd \"$1\"; git init -q git-many; cd git-many\n"
    "git config user.name t; git config user.email t@example.invalid\n"
    "d=$(printf '%0200d' 0 | tr 0 d)\n"
    "deep=$d/$d/$d/$d/$d\n"
    "mkdir -p \"$deep\"\n"
    "i=0; while [ $i -lt 300 ]; do printf 'a\\nb\\n' >\"$deep/f$i\";"
    " i=$((i + 1)); done\n"
    "printf 'a\\nb\\n' >g1.txt; printf 'a\\nb\\n' >'g*.txt'\n"
    "printf '* text eol=crlf\\n' >.gitattributes\n"
    "git add -A; git commit -qm base\n"
    "rm -r \"$d\" g1.txt 'g*.txt'; git checkout -- .\n";

/* 300 files of 1000-byte names committed under a stack limit of 1 MiB
 * (exec takes 256 KiB of arguments): the look for changes of the
 * user's in them (git status), the checkout of them and the git add of
 * them (a patch of files git converts), and the index brought up to
 * date (git reset) each put every name on one command line, and git
 * did not start ("Argument list too long"). git reads them on its
 * stdin, or in parts (git status); g*.txt is a name, not a pattern
 * (g1.txt, not in the patch, stays as it was). */
static void a_commit_of_many_long_names_is_made(void **state)
{
    char *script = tnd_fs_join(scratch, "make-many.sh"), *file, *diff, *out;
    char *dir = tnd_fs_join(scratch, "git-many"), deep[1024];
    const char *before = "a\r\nb\r\n", *after = "a\r\nB\r\n";
    struct rlimit was;
    tnd_apply_result r;
    tnd_buf b;
    int rc;

    (void)state;
    assert_int_equal(tnd_fs_write(script, make_many, strlen(make_many)), 0);
    sh("sh '%s' '%s' >/dev/null 2>&1", script, scratch);
    /* the script's $deep: five names of 200 bytes */
    memset(deep, 'd', sizeof(deep));
    for (size_t i = 200; i < 1000; i += 201)
        deep[i] = '/';
    deep[1004] = '\0';
    tnd_buf_init(&b, TND_BUF_NOCAP);
    for (size_t i = 0; i <= NFILES; i++) {
        char *path = i < NFILES ? tnd_xasprintf("%s/f%zu", deep, i)
                                : tnd_xstrdup("g*.txt");

        assert_int_equal(tnd_diff_file(&b, path, before, strlen(before), after,
                                       strlen(after)),
                         0);
        free(path);
    }
    diff = tnd_buf_detach(&b, NULL);
    file = tnd_xasprintf("%s.patch", dir);
    assert_int_equal(tnd_fs_write(file, diff, strlen(diff)), 0);
    /* a change of the user's in the last file is seen (git status is
     * given the names in parts) */
    put(dir, "g*.txt", "mine\r\n");
    small_stack(&was);
    rc = tnd_apply_patch(&r, dir, diff, file, TND_APPLY_COMMIT, "Many", NULL);
    assert_int_equal(setrlimit(RLIMIT_STACK, &was), 0);
    assert_int_equal(rc, 1);
    if (!r.why || !strstr(r.why, "g*.txt has changes of yours"))
        fail_msg("not refused: %s", r.why ? r.why : "");
    tnd_apply_result_clear(&r);
    sh("cd '%s' && git checkout -- 'g*.txt'", dir);
    small_stack(&was);
    rc = tnd_apply_patch(&r, dir, diff, file, TND_APPLY_COMMIT, "Many", NULL);
    assert_int_equal(setrlimit(RLIMIT_STACK, &was), 0);
    if (rc != 0 || !r.committed || r.why)
        fail_msg("not committed: %s", r.why ? r.why : "");
    out = sh_out("cd '%s' && git show --format= --name-only HEAD | wc -l", dir);
    assert_string_equal(out, "301");
    free(out);
    out = sh_out("cd '%s' && git show HEAD:'g*.txt' HEAD:g1.txt "
                 "HEAD:\"$(git ls-files | grep f299)\" | od -c | head -1",
                 dir);
    assert_string_equal(out, "0000000   a  \\n   B  \\n   a  \\n   b  \\n   a  "
                             "\\n   B  \\n");
    free(out);
    out = sh_out("cd '%s' && git status --porcelain", dir);
    assert_string_equal(out, "");
    free(out);
    tnd_apply_result_clear(&r);
    free(file);
    free(diff);
    free(dir);
    free(script);
}

/* A git first on PATH that, once the patch is in the tree (`git apply`,
 * not --check, not --cached), runs the script DIR/meanwhile: the user,
 * between tandem's look at the tree and its commit. Returns the PATH
 * to restore (caller frees). */
static char *git_with_meanwhile(const char *dir, const char *meanwhile)
{
    char *bin = tnd_fs_join(dir, ".bin"), *real, *path, *old;
    char *wrapper;

    real = sh_out("command -v git");
    assert_true(*real == '/');
    wrapper =
        tnd_xasprintf("#!/bin/sh\n"
                      "'%s' \"$@\" || exit $?\n"
                      "case \" $* \" in *' --check '* | *' --cached '*) ;;\n"
                      "*' apply '*) sh '%s/meanwhile' ;; esac\n",
                      real, dir);
    put(dir, "meanwhile", meanwhile);
    put(bin, "git", wrapper);
    sh("chmod +x '%s/git'", bin);
    old = tnd_xstrdup(getenv("PATH"));
    path = tnd_xasprintf("%s:%s", bin, old);
    setenv("PATH", path, 1);
    free(path);
    free(wrapper);
    free(real);
    free(bin);
    return old;
}

/* The demo's change committed in dir (head as tnd_apply_head said, or
 * NULL) with meanwhile run between the apply and the commit; PATH as it
 * was after. tnd_apply_patch's return. */
static int commit_meanwhile(tnd_apply_result *r, const char *dir,
                            const char *meanwhile, const char *head)
{
    char *file, *diff = patch(dir, "a.txt", lines10, changed10, &file);
    char *path = git_with_meanwhile(dir, meanwhile);
    int rc =
        tnd_apply_patch(r, dir, diff, file, TND_APPLY_COMMIT, "Shout", head);

    setenv("PATH", path, 1);
    free(path);
    free(diff);
    free(file);
    return rc;
}

/* An edit the user saves after tandem looked at the patch's files, and
 * before the commit, stays theirs: the commit is built from the patch,
 * never from the tree. `git commit --only` took it into the commit. */
static void an_edit_made_before_the_commit_stays_out_of_it(void **state)
{
    char *dir = git_repo("git-window"), *out;
    const char *mine = "one\ntwo\nthree\nfour\nFIVE\nsix\nseven\neight\n"
                       "nine\nten\neleven, mine\n";
    tnd_apply_result r;

    (void)state;
    assert_int_equal(
        commit_meanwhile(&r, dir, "echo 'eleven, mine' >>a.txt\n", NULL), 0);
    assert_true(r.committed);
    assert_null(r.why);
    out = sh_out("cd '%s' && git show HEAD:a.txt", dir);
    assert_string_equal(out, "one\ntwo\nthree\nfour\nFIVE\nsix\nseven\n"
                             "eight\nnine\nten");
    free(out);
    assert_file(dir, "a.txt", mine);
    out = sh_out("cd '%s' && git status --porcelain", dir);
    assert_string_equal(out, " M a.txt\n?? .bin/\n?? meanwhile");
    free(out);
    tnd_apply_result_clear(&r);
    free(dir);
}

/* A commit of the user's made after tandem checked HEAD, and before its
 * own: HEAD is not moved from under it, and the change is not committed
 * onto a tree nobody audited (exit 5, applied but not committed). */
static void a_commit_made_before_tandems_is_not_built_on(void **state)
{
    char *dir = git_repo("git-window-head"), *out;
    char *head = tnd_apply_head(dir);
    tnd_apply_result r;

    (void)state;
    assert_int_equal(commit_meanwhile(&r, dir,
                                      "git commit -q --allow-empty -m mine\n",
                                      head),
                     1);
    assert_true(r.applied);
    assert_false(r.committed);
    assert_null(r.commit);
    assert_non_null(strstr(r.why, "HEAD moved while the change went in"));
    assert_file(dir, "a.txt", changed10);
    out = sh_out("cd '%s' && git log --format=%%s", dir);
    assert_string_equal(out, "mine\nbase");
    free(out);
    tnd_apply_result_clear(&r);
    free(head);
    free(dir);
}

/* git's index held by someone else when the commit is made: the commit
 * stands, and the user is told how to bring the index up to date. */
static void a_commit_with_the_index_locked_says_so(void **state)
{
    char *dir = git_repo("git-window-lock"), *out;
    tnd_apply_result r;

    (void)state;
    assert_int_equal(commit_meanwhile(&r, dir, "touch .git/index.lock\n", NULL),
                     0);
    assert_true(r.committed);
    assert_non_null(r.why);
    assert_non_null(strstr(r.why, "committed, but git's index was not "
                                  "updated"));
    assert_non_null(strstr(r.why, "git reset -q -- FILES"));
    out = sh_out("cd '%s' && git log --format=%%s", dir);
    assert_string_equal(out, "Shout\nbase");
    free(out);
    tnd_apply_result_clear(&r);
    free(dir);
}

static void the_report_says_what_was_done(void **state)
{
    char *paths[] = {(char *)"a.txt", NULL};
    tnd_apply_result r = {.mode = TND_APPLY_COMMIT,
                          .git = true,
                          .applied = true,
                          .why = (char *)"applied, but not committed: x",
                          .paths = paths};
    json_object *o = tnd_apply_json(&r);

    (void)state;
    assert_string_equal(
        json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN),
        "{\"asked\":\"commit\",\"applied\":true,\"committed\":"
        "false,\"commit\":null,\"why\":\"applied, but not "
        "committed: x\",\"via\":\"git\",\"paths\":[\"a.txt\"]}");
    json_object_put(o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_message_is_the_rationale),
        cmocka_unit_test(a_long_first_line_is_cut_for_the_subject),
        cmocka_unit_test(commit_outside_git_is_refused),
        cmocka_unit_test(no_commit_yet_is_refused_only_with_files),
        cmocka_unit_test(git_applies_only_what_fits),
        cmocka_unit_test(git_applies_the_patch_as_it_was_audited),
        cmocka_unit_test(a_commit_holds_the_patch_and_nothing_else),
        cmocka_unit_test(a_commit_of_a_file_with_changes_of_yours_is_refused),
        cmocka_unit_test(a_commit_onto_a_moved_head_is_refused),
        cmocka_unit_test(a_created_file_is_committed_from_a_subdirectory),
        cmocka_unit_test(a_commit_of_many_long_names_is_made),
        cmocka_unit_test(an_edit_made_before_the_commit_stays_out_of_it),
        cmocka_unit_test(a_commit_made_before_tandems_is_not_built_on),
        cmocka_unit_test(a_commit_with_the_index_locked_says_so),
        cmocka_unit_test(the_report_says_what_was_done),
    };
    return cmocka_run_group_tests(tests, apply_setup, apply_teardown);
}
