/* Unit tests for orchestrator/converted: a git change's files as a
 * checkout writes them. Each test makes a repository (`* text eol=crlf`:
 * every file is checked out other than git stores it) with a shell
 * script, in a temporary directory. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/error.h"
#include "common/fs.h"
#include "common/rmtree.h"
#include "common/xalloc.h"
#include "tests/unit/scratch_repo.h"
#include "orchestrator/converted.h"

static char scratch[] = "/tmp/tnd-test-converted-XXXXXX";

/* Many files with long names: 300 of about 1000 bytes, near the
 * longest an edit takes (1024) */
#define NFILES 300

/* The shell's words that make the repository: NFILES files in a
 * directory 1000 bytes deep, committed with LF, checked out with CRLF,
 * each changed; its diff in change.diff, HEAD's tree in base.index and
 * checked out under base/. */
static const char make_repo[] =
    "set -e; cd \"$1\"; git init -q repo; cd repo\n"
    "d=$(printf '%0200d' 0 | tr 0 d)\n"
    "deep=$d/$d/$d/$d/$d\n"
    "mkdir -p \"$deep\"\n"
    "i=0; while [ $i -lt 300 ]; do printf 'a\\nb\\n' >\"$deep/f$i\";"
    " i=$((i + 1)); done\n"
    "printf '* text eol=crlf\\n' >.gitattributes\n"
    "git add -A\n"
    "git -c user.name=t -c user.email=t@example.com commit -qm base\n"
    "rm -r \"$d\"; git checkout -- .\n"
    "for f in \"$deep\"/*; do printf 'a\\r\\nB\\r\\n' >\"$f\"; done\n"
    "git diff >../change.diff\n"
    "GIT_INDEX_FILE=../base.index git read-tree HEAD\n"
    "GIT_INDEX_FILE=../base.index git checkout-index -a --prefix=../base/\n";

static int setup(void **state)
{
    (void)state;
    return scratch_repo_make(scratch, make_repo);
}

static int teardown(void **state)
{
    (void)state;
    tnd_fs_rmtree(scratch);
    return 0;
}

/* 300 files of 1000-byte names: their paths, absolute and twice over,
 * were one git hash-object's command line, past what exec takes (a
 * stack limit of 1 MiB here: 256 KiB of arguments; 2 MiB at the usual 8
 * MiB, which longer names pass), and the review failed, "Argument list
 * too long". git reads them on its stdin. */
static void many_long_paths_are_no_command_line(void **state)
{
    char *repo = tnd_fs_join(scratch, "repo"),
         *base = tnd_fs_join(scratch, "base"),
         *index = tnd_fs_join(scratch, "base.index"),
         *dir = tnd_fs_join(scratch, "find"),
         *diffpath = tnd_fs_join(scratch, "change.diff"), *diff = NULL;
    tnd_converted *conv = NULL;
    struct rlimit was;
    size_t len = 0, n = 0;
    int rc;

    (void)state;
    assert_int_equal(tnd_fs_read(&diff, &len, diffpath, 64 << 20), 0);
    assert_int_equal(tnd_fs_mkdirs(dir, 0700), 0);
    small_stack(&was);
    rc = tnd_converted_find(&conv, &n, repo, base, index, dir, diff);
    assert_int_equal(setrlimit(RLIMIT_STACK, &was), 0);
    if (rc < 0)
        fail_msg("%s", tnd_error_last());
    assert_int_equal(n, NFILES);
    for (size_t i = 0; i < n; i++) {
        assert_true(strlen(conv[i].path) > 1000);
        assert_string_equal(conv[i].text, "a\r\nB\r\n");
    }
    tnd_converted_free(conv, n);
    free(diff);
    free(diffpath);
    free(dir);
    free(index);
    free(base);
    free(repo);
}

/* The same files as a patch's edits against the work tree: the check
 * that a hunk holds in a file git converts asked git for the ids of
 * them all on one command line, which failed, and was taken for no git
 * work tree: the patch went on unchecked. */
static void a_patchs_many_long_paths_are_checked(void **state)
{
    char *repo = tnd_fs_join(scratch, "repo"), *list, *at;
    tnd_edit *edits = tnd_xcalloc(NFILES, sizeof(*edits));
    struct rlimit was;
    size_t n = 0, got;
    char *cmd = tnd_xasprintf("cd %s && git ls-files -- '*/f*'", repo);
    FILE *p = popen(cmd, "r");
    int rc;

    (void)state;
    assert_non_null(p);
    list = tnd_xcalloc(1 << 20, 1);
    got = fread(list, 1, (1 << 20) - 1, p);
    list[got] = '\0';
    assert_int_equal(pclose(p), 0);
    free(cmd);
    for (at = list; *at && n < NFILES;) {
        char *nl = strchr(at, '\n');

        assert_non_null(nl);
        *nl = '\0';
        edits[n].kind = TND_EDIT_REPLACE;
        edits[n].path = tnd_xstrdup(at);
        edits[n].search = tnd_xstrdup("a\nb\n"); /* the work tree has CRLF */
        edits[n].replace = tnd_xstrdup("a\nB\n");
        edits[n++].line = 1;
        at = nl + 1;
    }
    assert_int_equal(n, NFILES);
    small_stack(&was);
    rc = tnd_converted_check_patch(repo, edits, n, "--diff p");
    assert_int_equal(setrlimit(RLIMIT_STACK, &was), 0);
    assert_int_equal(rc, TND_ECONFIG);
    assert_non_null(
        strstr(tnd_error_last(), "is converted by git on checkout"));
    for (size_t i = 0; i < n; i++)
        tnd_edit_clear(&edits[i]);
    free(edits);
    free(list);
    free(repo);
}

/* ---- which files are looked at: attributes and settings ------------ */

/* One repository, NAME under scratch, holding f.txt (before, committed
 * with the attributes attrs and the settings config: `git config`
 * arguments, one setting a line), changed to after in the work tree;
 * late: .gitattributes holds attrs only in the change. */
static const char make_case[] =
    "set -e; cd \"$1\"; git init -q \"$2\"; cd \"$2\"\n"
    "printf '%s' \"$5\" | while read -r k v; do git config \"$k\" \"$v\"; "
    "done\n"
    "[ \"$7\" = late ] || [ -z \"$3\" ] || printf '%s\\n' \"$3\" "
    ">.gitattributes\n"
    "printf \"$4\" >f.txt; git add -A\n"
    "git -c user.name=t -c user.email=t@example.com commit -qm base\n"
    "rm f.txt; git checkout -- f.txt; printf \"$6\" >f.txt\n"
    "[ \"$7\" != late ] || printf '%s\\n' \"$3\" >.gitattributes\n"
    "git add -N .; git diff >../$2.diff\n"
    "GIT_INDEX_FILE=../$2.index git read-tree HEAD\n"
    "GIT_INDEX_FILE=../$2.index git checkout-index -a --prefix=../$2.base/\n";

/* A git that writes its command into scratch/git.log, then runs. */
static const char logging_git[] =
    "#!/bin/sh\n"
    "echo \"$1\" >>\"$(dirname \"$0\")/git.log\"\n"
    "exec %s \"$@\"\n";

typedef struct attr_case {
    const char *name, *attrs, *config, *before, *after;
    bool late;
    const char *want; /* f.txt as a checkout of the change writes it, or
                         NULL: as git stores it (not converted) */
    size_t processes; /* git processes the find runs */
} attr_case;

/* Files converted, or not, as git's checkout of them: a file no
 * attribute or setting converts takes two git processes (its
 * attributes, git's settings), where it took four. */
static const attr_case attr_cases[] = {
    {"none", "", "", "a\nb\n", "a\nB\n", false, NULL, 2},
    {"eolcrlf", "* text eol=crlf", "", "a\nb\n", "a\nB\n", false, "a\r\nB\r\n",
     6},
    {"autocrlf", "", "core.autocrlf true\n", "a\nb\n", "a\nB\n", false,
     "a\r\nB\r\n", 5},
    {"autocrlf-binary", "f.txt -text", "core.autocrlf true\n", "a\nb\n",
     "a\nB\n", false, NULL, 5},
    {"coreeol", "* text", "core.eol crlf\n", "a\nb\n", "a\nB\n", false,
     "a\r\nB\r\n", 6},
    {"coreeol-input", "* text", "core.eol crlf\ncore.autocrlf input\n",
     "a\nb\n", "a\nB\n", false, NULL, 2},
    {"coreeol-alone", "", "core.eol crlf\n", "a\nb\n", "a\nB\n", false, NULL,
     2},
    {"auto-crlf", "* text=auto eol=crlf", "", "a\nb\n", "a\nB\n", false,
     "a\r\nB\r\n", 6},
    {"eollf", "* eol=lf", "core.eol crlf\n", "a\nb\n", "a\nB\n", false, NULL,
     2},
    {"filter", "f.txt filter=up",
     "filter.up.clean tr A-Z a-z\nfilter.up.smudge tr a-z A-Z\n", "a\nb\n",
     "a\nc\n", false, "A\nC\n", 6},
    {"ident", "f.txt ident", "", "$Id$\nb\n", "$Id$\nB\n", false, "$Id: ", 6},
    {"late", "* text eol=crlf", "", "a\nb\n", "a\nB\n", true, "a\r\nB\r\n", 4},
    /* check-attr says "unset" and "unspecified" for values so spelt too,
     * which git's checkout takes as values: text=unset is no action, so
     * eol=crlf converts; a filter driver may be named "unset" */
    {"text-literal", "f.txt text=unset eol=crlf", "", "a\nb\n", "a\nB\n", false,
     "a\r\nB\r\n", 6},
    {"crlf-literal", "f.txt crlf=unset eol=crlf", "", "a\nb\n", "a\nB\n", false,
     "a\r\nB\r\n", 6},
    {"text-literal-crlf", "f.txt text=unset crlf", "core.eol crlf\n", "a\nb\n",
     "a\nB\n", false, "a\r\nB\r\n", 6},
    {"filter-unset", "f.txt filter=unset",
     "filter.unset.clean tr A-Z a-z\nfilter.unset.smudge tr a-z A-Z\n",
     "a\nb\n", "a\nc\n", false, "A\nC\n", 6},
    {"filter-unspecified", "f.txt filter=unspecified",
     "filter.unspecified.smudge tr a-z A-Z\n", "a\nb\n", "a\nc\n", false,
     "A\nC\n", 6},
    /* -text is binary whatever core.eol says; with eol=crlf it is still
     * binary, but check-attr cannot tell it from text=unset: looked at */
    {"binary", "f.txt -text", "core.eol crlf\n", "a\nb\n", "a\nB\n", false,
     NULL, 2},
    {"binary-eol", "f.txt -text eol=crlf", "", "a\nb\n", "a\nB\n", false, NULL,
     6},
};

static void files_are_looked_at_as_git_checks_them_out(void **state)
{
    char *bin = tnd_fs_join(scratch, "bin"), *log = tnd_fs_join(bin, "git.log");
    char *git = tnd_fs_join(bin, "git"), *script, *real = NULL, *path;
    const char *was_path = getenv("PATH");
    FILE *p = popen("command -v git", "r");
    char line[4096];

    (void)state;
    assert_non_null(p);
    assert_non_null(fgets(line, sizeof(line), p));
    pclose(p);
    line[strcspn(line, "\n")] = '\0';
    real = tnd_xstrdup(line);
    script = tnd_xasprintf(logging_git, real);
    assert_int_equal(tnd_fs_mkdirs(bin, 0700), 0);
    assert_int_equal(tnd_fs_write(git, script, strlen(script)), 0);
    assert_int_equal(chmod(git, 0700), 0);
    path = tnd_xasprintf("%s:%s", bin, was_path);
    free(script);
    script = tnd_fs_join(scratch, "case.sh");
    assert_int_equal(tnd_fs_write(script, make_case, strlen(make_case)), 0);
    for (size_t c = 0; c < sizeof(attr_cases) / sizeof(*attr_cases); c++) {
        const attr_case *t = &attr_cases[c];
        char *cmd =
            tnd_xasprintf("sh %s %s %s '%s' '%s' '%s' '%s' %s >/dev/null 2>&1",
                          script, scratch, t->name, t->attrs, t->before,
                          t->config, t->after, t->late ? "late" : "early");
        char *repo = tnd_fs_join(scratch, t->name),
             *base = tnd_xasprintf("%s.base", repo),
             *index = tnd_xasprintf("%s.index", repo),
             *dir = tnd_xasprintf("%s.find", repo),
             *diffpath = tnd_xasprintf("%s.diff", repo), *diff = NULL,
             *calls = NULL;
        tnd_converted *conv = NULL;
        size_t n = 0, len = 0, ncalls = 0;
        const char *f = NULL;

        assert_int_equal(system(cmd), 0);
        assert_int_equal(tnd_fs_read(&diff, &len, diffpath, 1 << 20), 0);
        assert_int_equal(tnd_fs_mkdirs(dir, 0700), 0);
        unlink(log);
        setenv("PATH", path, 1);
        if (tnd_converted_find(&conv, &n, repo, base, index, dir, diff) < 0)
            fail_msg("%s: %s", t->name, tnd_error_last());
        setenv("PATH", was_path, 1);
        for (size_t i = 0; i < n; i++)
            if (strcmp(conv[i].path, "f.txt") == 0)
                f = conv[i].text;
        if (!t->want != !f || (f && strncmp(f, t->want, strlen(t->want)) != 0))
            fail_msg("%s: f.txt is %s, not %s", t->name, f ? f : "as stored",
                     t->want ? t->want : "as stored");
        if (tnd_fs_read(&calls, &len, log, 1 << 20) == 0)
            for (const char *c2 = calls; (c2 = strchr(c2, '\n')); c2++)
                ncalls++;
        if (ncalls != t->processes)
            fail_msg("%s: %zu git processes, not %zu:\n%s", t->name, ncalls,
                     t->processes, calls ? calls : "");
        tnd_error_clear();
        tnd_converted_free(conv, n);
        free(calls);
        free(diff);
        free(diffpath);
        free(dir);
        free(index);
        free(base);
        free(repo);
        free(cmd);
    }
    free(script);
    free(path);
    free(real);
    free(git);
    free(log);
    free(bin);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(many_long_paths_are_no_command_line),
        cmocka_unit_test(a_patchs_many_long_paths_are_checked),
        cmocka_unit_test(files_are_looked_at_as_git_checks_them_out),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
