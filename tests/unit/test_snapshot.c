/* Unit tests for orchestrator/snapshot: the clean base of a task. Real
 * git repositories are made in a temporary directory; each test takes a
 * snapshot and checks what is in it, what is not, and what it says. */
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

#include "common/error.h"
#include "common/fs.h"
#include "common/rmtree.h"
#include "common/xalloc.h"
#include "orchestrator/snapshot.h"

static char scratch[] = "/tmp/tnd-test-snap-XXXXXX";

#define MAX_BYTES (1 << 20)

static void put(const char *dir, const char *rel, const char *text)
{
    char *full = tnd_fs_join(dir, rel);
    char *parent = tnd_fs_dirname(full);

    assert_int_equal(tnd_fs_mkdirs(parent, 0755), 0);
    assert_int_equal(tnd_fs_write(full, text, strlen(text)), 0);
    free(parent);
    free(full);
}

static bool exists(const char *dir, const char *rel)
{
    char *full = tnd_fs_join(dir, rel);
    bool yes = tnd_fs_exists(full);

    free(full);
    return yes;
}

static void assert_file(const char *dir, const char *rel, const char *expect)
{
    char *full = tnd_fs_join(dir, rel), *text = NULL;

    if (tnd_fs_read(&text, NULL, full, MAX_BYTES) < 0)
        fail_msg("%s should exist: %s", rel, tnd_error_last());
    assert_string_equal(text, expect);
    free(text);
    free(full);
}

static void sh(const char *fmt, ...) TND_PRINTF(1, 2);

static void sh(const char *fmt, ...)
{
    char cmd[4096];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(cmd, sizeof(cmd), fmt, ap);
    va_end(ap);
    if (system(cmd) != 0)
        fail_msg("command failed: %s", cmd);
}

/* A git repository with a commit: a source file, a header, a test
 * script, a symlink, a .gitignore. */
static char *git_repo(const char *name)
{
    char *dir = tnd_fs_join(scratch, name);

    put(dir, "src/lib.c", "int lib(void) { return 1; }\n");
    put(dir, "src/lib.h", "int lib(void);\n");
    put(dir, "run-tests", "#!/bin/sh\nexit 0\n");
    put(dir, ".gitignore", "*.o\nbuild/\n");
    sh("cd '%s' && chmod 755 run-tests && ln -s src/lib.h lib.h && "
       "git init -q && git add -A && "
       "git -c user.name=t -c user.email=t@example.invalid commit -q -m base",
       dir);
    return dir;
}

static tnd_snapshot *take(const char *repo, const char *name,
                          bool include_untracked)
{
    char *dir = tnd_fs_join(scratch, name);
    tnd_snapshot_options o = {.include_untracked = include_untracked,
                              .max_bytes = MAX_BYTES};
    tnd_snapshot *s = tnd_snapshot_new(repo, dir, &o);

    if (!s)
        fail_msg("tnd_snapshot_new: %s", tnd_error_last());
    free(dir);
    return s;
}

static void tracked_files_as_the_working_tree_has_them(void **state)
{
    char *repo = git_repo("r1");
    tnd_snapshot *s;
    const tnd_snapshot_stats *st;
    const char *root;
    char *text, *full, link[64];
    struct stat sb;
    ssize_t n;

    (void)state;
    /* the user's state: an uncommitted change, a deleted file, build
     * outputs (ignored), a new file (untracked), tandem's own files */
    put(repo, "src/lib.c", "int lib(void) { return 2; }\n");
    sh("rm '%s/src/lib.h'", repo);
    put(repo, "src/lib.o",
        "\x7f"
        "ELF");
    put(repo, "build/test_lib", "binary");
    put(repo, "notes.txt", "mine\n");
    put(repo, ".tandem/sessions/x/journal.jsonl", "{}\n");

    s = take(repo, "s1", false);
    root = tnd_snapshot_path(s);
    st = tnd_snapshot_about(s);
    assert_file(root, "src/lib.c", "int lib(void) { return 2; }\n");
    assert_false(exists(root, "src/lib.h"));
    assert_false(exists(root, "src/lib.o"));
    assert_false(exists(root, "build"));
    assert_false(exists(root, "notes.txt"));
    assert_false(exists(root, ".tandem"));
    assert_false(exists(root, ".git"));
    assert_file(root, ".gitignore", "*.o\nbuild/\n");
    /* modes and symlinks as they are */
    full = tnd_fs_join(root, "run-tests");
    assert_int_equal(lstat(full, &sb), 0);
    assert_int_equal(sb.st_mode & 0777, 0755);
    free(full);
    full = tnd_fs_join(root, "lib.h");
    n = readlink(full, link, sizeof(link) - 1);
    free(full);
    assert_true(n > 0);
    link[n] = '\0';
    assert_string_equal(link, "src/lib.h");

    assert_true(st->git);
    assert_int_equal(st->files, 3); /* lib.c, run-tests, .gitignore */
    assert_int_equal(st->untracked, 1);
    assert_false(st->untracked_included);
    assert_int_equal(st->skipped, 0);
    text = tnd_snapshot_describe(s);
    assert_non_null(strstr(text, "3 tracked files"));
    assert_non_null(strstr(text, "1 untracked path left out "
                                 "(workspace.include_untracked: true brings "
                                 "them in)"));
    free(text);
    tnd_snapshot_destroy(&s, 1);
    assert_null(s);
    tnd_snapshot_destroy(&s, 1); /* NULL: fine */

    /* include_untracked: the new file comes in, ignored outputs never */
    s = take(repo, "s1b", true);
    root = tnd_snapshot_path(s);
    assert_file(root, "notes.txt", "mine\n");
    assert_false(exists(root, "src/lib.o"));
    assert_false(exists(root, "build"));
    assert_true(tnd_snapshot_about(s)->untracked_included);
    text = tnd_snapshot_describe(s);
    assert_non_null(strstr(text, "1 untracked (workspace.include_untracked)"));
    free(text);
    tnd_snapshot_destroy(&s, 1);
    free(repo);
}

/* A tracked path whose directory became a symlink leading outside is not
 * followed: nothing outside the repository is read. */
static void a_symlinked_directory_is_not_followed(void **state)
{
    char *repo = git_repo("r2"), *outside = tnd_fs_join(scratch, "outside");
    tnd_snapshot *s;

    (void)state;
    put(outside, "lib.c", "SECRET\n");
    sh("cd '%s' && rm -r src && ln -s '%s' src", repo, outside);
    s = take(repo, "s2", false);
    assert_false(exists(tnd_snapshot_path(s), "src"));
    assert_int_equal(tnd_snapshot_about(s)->skipped, 2);
    assert_file(outside, "lib.c", "SECRET\n");
    tnd_snapshot_destroy(&s, 1);
    free(outside);
    free(repo);
}

static void a_plain_directory_is_taken_whole(void **state)
{
    char *dir = tnd_fs_join(scratch, "plain");
    tnd_snapshot *s;
    char *text;

    (void)state;
    put(dir, "a.c", "a\n");
    put(dir, "out/a.o", "o\n");
    put(dir, ".git/HEAD", "ref: nowhere\n"); /* not a repository */
    put(dir, ".tandem/lessons.json", "{}\n");
    s = take(dir, "s3", false);
    assert_file(tnd_snapshot_path(s), "a.c", "a\n");
    assert_file(tnd_snapshot_path(s), "out/a.o", "o\n");
    assert_false(exists(tnd_snapshot_path(s), ".git"));
    assert_false(exists(tnd_snapshot_path(s), ".tandem"));
    assert_false(tnd_snapshot_about(s)->git);
    assert_int_equal(tnd_snapshot_about(s)->files, 2);
    text = tnd_snapshot_describe(s);
    assert_non_null(strstr(text, "2 files"));
    assert_non_null(strstr(text, "not in a git work tree"));
    free(text);
    tnd_snapshot_destroy(&s, 1);
    free(dir);
}

/* A directory inside a work tree that git does not track (a project in a
 * home directory kept in git) is not taken as empty. */
static void an_untracked_directory_in_a_work_tree_is_taken_whole(void **state)
{
    char *repo = git_repo("r4"), *sub = tnd_fs_join(repo, "project");
    tnd_snapshot *s;

    (void)state;
    put(sub, "main.c", "int main(void) { return 0; }\n");
    s = take(sub, "s4", false);
    assert_file(tnd_snapshot_path(s), "main.c",
                "int main(void) { return 0; }\n");
    assert_false(tnd_snapshot_about(s)->git);
    assert_non_null(
        strstr(tnd_snapshot_about(s)->why_whole, "git tracks none"));
    tnd_snapshot_destroy(&s, 1);

    /* a tracked subdirectory is taken as git has it */
    sh("cd '%s' && git add project && "
       "git -c user.name=t -c user.email=t@example.invalid commit -q -m p",
       repo);
    put(sub, "scratch.txt", "x\n");
    s = take(sub, "s4b", false);
    assert_true(tnd_snapshot_about(s)->git);
    assert_int_equal(tnd_snapshot_about(s)->files, 1);
    assert_false(exists(tnd_snapshot_path(s), "scratch.txt"));
    assert_false(exists(tnd_snapshot_path(s), "src")); /* the parent's */
    tnd_snapshot_destroy(&s, 1);
    free(sub);
    free(repo);
}

/* A new repository (git init, nothing added yet) is not taken whole:
 * what its .gitignore names stays out, as in any git tree (a .env with an
 * API key went to the coder's model). */
static void a_new_repository_leaves_ignored_files_out(void **state)
{
    char *repo = tnd_fs_join(scratch, "r4n");
    tnd_snapshot *s;
    int untracked;

    (void)state;
    put(repo, "main.c", "int main(void) { return 0; }\n");
    put(repo, "src/util.c", "int util;\n");
    put(repo, ".gitignore", ".env\nsecrets/\n");
    put(repo, ".env", "OPENAI_API_KEY=sk-not-for-the-model\n");
    put(repo, "secrets/prod.pem", "key\n");
    sh("cd '%s' && git init -q", repo);
    for (untracked = 0; untracked < 2; untracked++) {
        s = take(repo, untracked ? "s4n-u" : "s4n", untracked);
        assert_file(tnd_snapshot_path(s), "main.c",
                    "int main(void) { return 0; }\n");
        assert_file(tnd_snapshot_path(s), "src/util.c", "int util;\n");
        assert_true(exists(tnd_snapshot_path(s), ".gitignore"));
        assert_false(exists(tnd_snapshot_path(s), ".env"));
        assert_false(exists(tnd_snapshot_path(s), "secrets"));
        assert_int_equal(tnd_snapshot_about(s)->files, 3);
        assert_non_null(
            strstr(tnd_snapshot_about(s)->why_whole, "git tracks none"));
        tnd_snapshot_destroy(&s, 1);
    }
    free(repo);
}

static void the_whole_option_ignores_git(void **state)
{
    char *repo = git_repo("r5"), *dir = tnd_fs_join(scratch, "s5");
    tnd_snapshot_options o = {.whole = true, .max_bytes = MAX_BYTES};
    tnd_snapshot *s;

    (void)state;
    put(repo, "untracked.txt", "u\n");
    s = tnd_snapshot_new(repo, dir, &o);
    assert_non_null(s);
    assert_file(tnd_snapshot_path(s), "untracked.txt", "u\n");
    assert_false(tnd_snapshot_about(s)->git);
    tnd_snapshot_destroy(&s, 1);
    free(dir);
    free(repo);
}

/* An export made for the snapshot is moved into place, not copied (a
 * third of a review's wall time on 30,000 files), and comes out as a copy
 * would: without .git and .tandem, and within the limit. */
static void an_export_is_moved_into_place(void **state)
{
    char *from = tnd_fs_join(scratch, "export7"),
         *dir = tnd_fs_join(scratch, "s7");
    tnd_snapshot_options o = {.whole = true, .adopt = true, .max_bytes = 100};
    tnd_snapshot *s;

    (void)state;
    put(from, "a/b.txt", "b\n");
    put(from, ".tandem/sessions/x", "ours\n");
    put(from, ".git/HEAD", "ref\n");
    s = tnd_snapshot_new(from, dir, &o);
    assert_non_null(s);
    assert_false(tnd_fs_exists(from)); /* moved, not copied */
    assert_file(tnd_snapshot_path(s), "a/b.txt", "b\n");
    {
        char *t = tnd_fs_join(tnd_snapshot_path(s), ".tandem");
        char *g = tnd_fs_join(tnd_snapshot_path(s), ".git");
        assert_false(tnd_fs_exists(t));
        assert_false(tnd_fs_exists(g));
        free(t);
        free(g);
    }
    assert_int_equal(tnd_snapshot_about(s)->files, 1);
    tnd_snapshot_destroy(&s, 1);

    /* over the limit: refused as a copy is, nothing left behind */
    put(from, "big.txt", "0123456789");
    o.max_bytes = 5;
    assert_null(tnd_snapshot_new(from, dir, &o));
    assert_non_null(strstr(tnd_error_last(), "orchestrator.workspace_max_mb"));
    assert_false(tnd_fs_exists(dir));
    free(from);
    free(dir);
}

static void limits_and_refusals(void **state)
{
    char *repo = git_repo("r6"), *dir = tnd_fs_join(scratch, "s6");
    tnd_snapshot_options o = {.max_bytes = 10};
    tnd_snapshot *s;

    (void)state;
    assert_null(tnd_snapshot_new(repo, dir, &o));
    assert_non_null(strstr(tnd_error_last(), "orchestrator.workspace_max_mb"));
    /* told from the sizes before a file is copied, with the total */
    assert_non_null(strstr(tnd_error_last(), " MiB, more than the workspace"));
    assert_false(tnd_fs_exists(dir)); /* no half copy left behind */

    o.max_bytes = MAX_BYTES;
    put(dir, "keep.txt", "mine\n");
    assert_null(tnd_snapshot_new(repo, dir, &o));
    assert_non_null(strstr(tnd_error_last(), "already exists"));
    assert_file(dir, "keep.txt", "mine\n");
    assert_int_equal(tnd_fs_rmtree(dir), 0);

    assert_null(tnd_snapshot_new("/nonexistent/tnd-repo", dir, &o));
    assert_non_null(strstr(tnd_error_last(), "/nonexistent/tnd-repo"));
    assert_false(tnd_fs_exists(dir));

    s = tnd_snapshot_new(repo, dir, &o);
    assert_non_null(s);
    tnd_snapshot_destroy(&s, 0);
    assert_true(tnd_fs_is_dir(dir)); /* kept when asked */
    assert_int_equal(tnd_fs_rmtree(dir), 0);
    free(dir);
    free(repo);
}

/* ---- how many times git runs, and when it is missing or fails -------- */

static char real_git[PATH_MAX];

/* PATH for the snapshot: a directory of its own in front (bin under
 * scratch), or only that directory when alone. */
static char *saved_path;

static void path_with(const char *bin, bool alone)
{
    char *full =
        alone ? tnd_xstrdup(bin) : tnd_xasprintf("%s:%s", bin, saved_path);

    assert_int_equal(setenv("PATH", full, 1), 0);
    free(full);
}

static void path_restore(void)
{
    assert_int_equal(setenv("PATH", saved_path, 1), 0);
    assert_int_equal(unsetenv("LC_ALL"), 0);
}

/* After a test that changed them, even one that failed half-way. */
static int environment_back(void **state)
{
    (void)state;
    path_restore();
    return 0;
}

/* A git in dir/bin that writes its subcommand to dir/log (and LC_ALL,
 * when set) and runs the real one; when refuse_lists, ls-files fails in words
 * git has in no English message (as a translated git's would be). */
static char *counting_git(const char *name, bool refuse_lists)
{
    char *dir = tnd_fs_join(scratch, name);
    char *bin = tnd_fs_join(dir, "bin"), *script;

    script = tnd_xasprintf(
        "#!/bin/sh\necho \"$1${LC_ALL:+ LC_ALL=$LC_ALL}\" >> '%s/log'\n"
        "%sexec '%s' \"$@\"\n",
        dir,
        refuse_lists ? "if [ \"$1\" = ls-files ]; then\n"
                       "  echo 'fatal: kein Git-Repository' >&2; exit 128\n"
                       "fi\n"
                     : "",
        real_git);
    put(bin, "git", script);
    sh("chmod 755 '%s/git'", bin);
    free(script);
    free(dir);
    return bin;
}

/* The subcommands the counting git in name ran, one per line; resets. */
static char *git_runs(const char *name)
{
    char *dir = tnd_fs_join(scratch, name), *log = tnd_fs_join(dir, "log");
    char *text = NULL;

    if (tnd_fs_read(&text, NULL, log, MAX_BYTES) < 0)
        text = tnd_xstrdup("");
    unlink(log);
    free(log);
    free(dir);
    return text;
}

/* Tracked, untracked and ignored files from one run of git, the
 * untracked counted by directory when left out, one by one when in. */
static void one_git_run_lists_tracked_and_untracked(void **state)
{
    char *repo = git_repo("r7"), *bin = counting_git("g7", false), *runs;
    tnd_snapshot *s;
    const tnd_snapshot_stats *st;
    const char *root;

    (void)state;
    put(repo, "notes.txt", "mine\n");
    put(repo, "scratch/a.txt", "a\n");
    put(repo, "scratch/b.txt", "b\n");
    put(repo, "src/lib.o", "obj");           /* ignored */
    put(repo, "build/out", "out");           /* ignored directory */
    put(repo, ".tandem/lessons.json", "{}"); /* tandem's own */
    path_with(bin, false);
    /* git's words are English, whatever the user's language */
    assert_int_equal(setenv("LC_ALL", "fr_FR.UTF-8", 1), 0);
    s = take(repo, "s7", false);
    runs = git_runs("g7");
    assert_string_equal(runs, "ls-files LC_ALL=C\n");
    free(runs);
    st = tnd_snapshot_about(s);
    assert_true(st->git);
    assert_int_equal(st->files, 4); /* lib.c, lib.h, run-tests, .gitignore */
    assert_int_equal(st->untracked, 2); /* notes.txt, scratch/ */
    assert_false(exists(tnd_snapshot_path(s), "notes.txt"));
    tnd_snapshot_destroy(&s, 1);

    s = take(repo, "s7b", true);
    runs = git_runs("g7");
    path_restore();
    assert_string_equal(runs, "ls-files LC_ALL=C\n");
    free(runs);
    st = tnd_snapshot_about(s);
    root = tnd_snapshot_path(s);
    assert_int_equal(st->untracked, 3);
    assert_int_equal(st->files, 4 + 3);
    assert_file(root, "scratch/b.txt", "b\n");
    assert_file(root, "src/lib.c", "int lib(void) { return 1; }\n");
    assert_false(exists(root, "src/lib.o"));
    assert_false(exists(root, "build"));
    assert_false(exists(root, ".tandem"));
    tnd_snapshot_destroy(&s, 1);
    free(bin);
    free(repo);
}

static void without_git_every_file_is_copied(void **state)
{
    char *repo = git_repo("r8"), *bin = tnd_fs_join(scratch, "nogit"), *text;
    tnd_snapshot *s;

    (void)state;
    assert_int_equal(tnd_fs_mkdirs(bin, 0755), 0);
    put(repo, "src/lib.o", "obj");
    path_with(bin, true);
    s = take(repo, "s8", false);
    path_restore();
    assert_false(tnd_snapshot_about(s)->git);
    assert_file(tnd_snapshot_path(s), "src/lib.o", "obj");
    assert_false(exists(tnd_snapshot_path(s), ".git"));
    text = tnd_snapshot_describe(s);
    assert_non_null(
        strstr(text, "git is not installed, so every file is copied"));
    free(text);
    tnd_snapshot_destroy(&s, 1);
    free(bin);
    free(repo);
}

/* A repository's .git directory and a bare repository: git knows them,
 * but they are no work tree, and no project either: taken whole, their
 * config and hooks went to the model and an edit of them was applied
 * there. Refused, naming the fix; git's own words say it is no work
 * tree, and rev-parse once more that it is git's directory. */
static void a_repository_without_a_work_tree_is_refused(void **state)
{
    char *repo = git_repo("r9"), *gitdir = tnd_fs_join(repo, ".git");
    char *bare = tnd_fs_join(scratch, "r9.git"), *bin, *runs;
    char *dir = tnd_fs_join(scratch, "s9");
    tnd_snapshot_options o = {.max_bytes = MAX_BYTES};

    (void)state;
    bin = counting_git("g9", false);
    sh("git clone -q --bare '%s' '%s'", repo, bare);
    path_with(bin, false);
    assert_null(tnd_snapshot_new(gitdir, dir, &o));
    assert_non_null(strstr(tnd_error_last(), "is inside a git repository's "
                                             "own directory (a bare "
                                             "repository, or .git)"));
    assert_false(tnd_fs_exists(dir));
    assert_null(tnd_snapshot_new(bare, dir, &o));
    assert_non_null(strstr(tnd_error_last(), bare));
    runs = git_runs("g9");
    path_restore();
    assert_string_equal(runs, "ls-files LC_ALL=C\nrev-parse\n"
                              "ls-files LC_ALL=C\nrev-parse\n");
    free(runs);
    free(bin);
    free(dir);
    free(bare);
    free(gitdir);
    free(repo);
}

static void a_failure_in_other_words_asks_rev_parse(void **state)
{
    char *repo = git_repo("r10"), *plain = tnd_fs_join(scratch, "plain10");
    char *bin = counting_git("g10", true), *dir = tnd_fs_join(scratch, "s10");
    tnd_snapshot_options o = {.max_bytes = MAX_BYTES};
    tnd_snapshot *s;
    char *runs;

    (void)state;
    put(plain, "a.c", "a\n");
    path_with(bin, false);
    s = take(plain, "s10b", false);
    runs = git_runs("g10");
    assert_string_equal(runs, "ls-files LC_ALL=C\nrev-parse\n");
    free(runs);
    assert_false(tnd_snapshot_about(s)->git);
    assert_non_null(
        strstr(tnd_snapshot_about(s)->why_whole, "not in a git work tree"));
    assert_file(tnd_snapshot_path(s), "a.c", "a\n");
    tnd_snapshot_destroy(&s, 1);

    assert_null(tnd_snapshot_new(repo, dir, &o));
    path_restore();
    assert_non_null(strstr(tnd_error_last(),
                           "cannot take the repository's files: 'git "
                           "ls-files' failed (exit 128): fatal: kein "
                           "Git-Repository"));
    assert_false(tnd_fs_exists(dir));
    free(dir);
    free(bin);
    free(plain);
    free(repo);
}

/* A submodule's files are the superproject's tracked files too: a second
 * run lists them, as --recurse-submodules does not go with --others. */
static void a_submodule_s_files_are_tracked_files(void **state)
{
    char *sub = git_repo("r11sub"), *top = git_repo("r11");
    char *bin = counting_git("g11", false), *runs, *text;
    tnd_snapshot *s;
    const char *root;

    (void)state;
    sh("cd '%s' && git -c protocol.file.allow=always submodule add -q "
       "'%s' dep && git -c user.name=t -c user.email=t@example.invalid "
       "commit -q -m dep",
       top, sub);
    put(top, "dep/new.txt", "in the submodule\n"); /* not the top's */
    put(top, "notes.txt", "mine\n");
    put(top, "dep/src/lib.c", "int lib(void) { return 3; }\n");
    path_with(bin, false);
    s = take(top, "s11", false);
    runs = git_runs("g11");
    path_restore();
    assert_string_equal(runs, "ls-files LC_ALL=C\nls-files\n");
    free(runs);
    root = tnd_snapshot_path(s);
    assert_file(root, "dep/src/lib.c", "int lib(void) { return 3; }\n");
    assert_file(root, "dep/run-tests", "#!/bin/sh\nexit 0\n");
    assert_true(exists(root, ".gitmodules"));
    assert_false(exists(root, "dep/new.txt"));
    assert_false(exists(root, "dep/.git"));
    /* 4 of the top's, .gitmodules, 4 of the submodule's */
    assert_int_equal(tnd_snapshot_about(s)->files, 9);
    assert_int_equal(tnd_snapshot_about(s)->untracked, 1);
    assert_int_equal(tnd_snapshot_about(s)->submodules_empty, 0);
    tnd_snapshot_destroy(&s, 1);
    /* not initialised: its directory is empty, and said (a build that
     * needs it failed with no word of why) */
    sh("cd '%s' && git submodule deinit -q -f dep", top);
    s = take(top, "s11b", false);
    assert_int_equal(tnd_snapshot_about(s)->submodules_empty, 1);
    text = tnd_snapshot_describe(s);
    assert_non_null(strstr(text, "; submodule dep is not initialised, so its "
                                 "directory is empty (git submodule update "
                                 "--init dep)"));
    free(text);
    tnd_snapshot_destroy(&s, 1);
    free(bin);
    free(top);
    free(sub);
}

/* A path in conflict is listed once per stage; it is copied once. */
static void an_unmerged_path_is_copied_once(void **state)
{
    char *repo = git_repo("r12");
    tnd_snapshot *s;
    char *text;

    (void)state;
    sh("cd '%s' && git checkout -q -b other && echo 2 > src/lib.c && "
       "git -c user.name=t -c user.email=t@example.invalid commit -q -am 2 "
       "&& git checkout -q - && echo 3 > src/lib.c && "
       "git -c user.name=t -c user.email=t@example.invalid commit -q -am 3 "
       "&& ! git -c user.name=t -c user.email=t@example.invalid merge -q "
       "other >/dev/null 2>&1",
       repo);
    s = take(repo, "s12", false);
    assert_true(tnd_snapshot_about(s)->git);
    assert_int_equal(tnd_snapshot_about(s)->files, 4);
    text = tnd_snapshot_describe(s);
    assert_non_null(strstr(text, "4 tracked files"));
    free(text);
    tnd_snapshot_destroy(&s, 1);
    free(repo);
}

static int setup(void **state)
{
    FILE *p = popen("command -v git", "r");
    bool found = p && fgets(real_git, sizeof(real_git), p);

    (void)state;
    if (p)
        pclose(p);
    real_git[strcspn(real_git, "\n")] = '\0';
    saved_path = tnd_xstrdup(getenv("PATH") ? getenv("PATH") : "/usr/bin:/bin");
    unsetenv("LC_ALL"); /* the counting git's log says when it is set */
    umask(022);
    return found && mkdtemp(scratch) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    free(saved_path);
    return tnd_fs_rmtree(scratch);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(tracked_files_as_the_working_tree_has_them),
        cmocka_unit_test(a_symlinked_directory_is_not_followed),
        cmocka_unit_test(a_plain_directory_is_taken_whole),
        cmocka_unit_test(an_untracked_directory_in_a_work_tree_is_taken_whole),
        cmocka_unit_test(a_new_repository_leaves_ignored_files_out),
        cmocka_unit_test(the_whole_option_ignores_git),
        cmocka_unit_test(an_export_is_moved_into_place),
        cmocka_unit_test(limits_and_refusals),
        cmocka_unit_test_teardown(one_git_run_lists_tracked_and_untracked,
                                  environment_back),
        cmocka_unit_test_teardown(without_git_every_file_is_copied,
                                  environment_back),
        cmocka_unit_test_teardown(a_repository_without_a_work_tree_is_refused,
                                  environment_back),
        cmocka_unit_test_teardown(a_failure_in_other_words_asks_rev_parse,
                                  environment_back),
        cmocka_unit_test_teardown(a_submodule_s_files_are_tracked_files,
                                  environment_back),
        cmocka_unit_test(an_unmerged_path_is_copied_once),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
