/* The change under review and its base tree (see change.h). */
#include "orchestrator/change.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/str.h"
#include "common/xalloc.h"
#include "orchestrator/git.h"
#include "orchestrator/lfs.h"
#include "orchestrator/rundir.h"
#include "proto/body.h"

/* The filter git says failed ("fatal: PATH: smudge filter NAME failed",
 * or "clean filter 'NAME' failed": one .gitattributes names, required,
 * whose program did not run), or NULL. Caller frees. */
static char *failed_filter(const char *errors)
{
    static const char *const said[] = {"smudge filter ", "clean filter "};

    for (size_t i = 0; i < sizeof(said) / sizeof(*said); i++) {
        const char *at = strstr(errors, said[i]), *end;

        if (!at)
            continue;
        at += strlen(said[i]);
        at += *at == '\'';
        if (!(end = strstr(at, " failed")) || end == at)
            continue;
        end -= end[-1] == '\'';
        return tnd_xasprintf("%.*s", (int)(end - at), at);
    }
    return NULL;
}

/* Run git in dir (with the index file index, or the repository's when
 * NULL); 0 with its stdout in *out (may be NULL) when it exits 0.
 * TND_ECONFIG when git is missing or the change too large (the user's to
 * fix); -1 when git failed (a damaged repository, the disk): the review
 * could not be done (exit 4, which --on-error decides). */
static int git_index(char **out, const char *dir, const char *index,
                     const char *const *argv, size_t cap)
{
    int rc = tnd_git_run_index(out, NULL, dir, index, argv, cap);
    char *filter;

    if (rc == TND_ENOTFOUND)
        return tnd_error_config("%s (tandem review without --diff needs "
                                "git)",
                                tnd_error_last());
    if (rc == TND_ECONFIG) /* a Git LFS object not here (git.c) */
        return rc;
    /* the repository's setting, the user's to fix: exit 4 (a review
     * that could not be done) let --on-error pass take the change in
     * unreviewed */
    if (rc < 0 && (filter = failed_filter(tnd_error_last()))) {
        rc = tnd_error_config("%s; the filter %s, which .gitattributes "
                              "names and git's config (filter.%s) makes "
                              "required, cannot run here: install its "
                              "program, or fix filter.%s in git's config",
                              tnd_error_last(), filter, filter, filter);
        free(filter);
        return rc;
    }
    if (rc < 0 && strstr(tnd_error_last(), "wrote more than"))
        return tnd_error_config("%s; the change is too large to review",
                                tnd_error_last());
    /* a partial clone lacking blobs of the tree (outside a sparse cone):
     * tandem never fetches, and the person can (it was exit 4, a review
     * that could not be done, which --on-error pass lets through) */
    if (rc < 0 && (strstr(tnd_error_last(), "promisor remote") ||
                   strstr(tnd_error_last(), "unable to read sha1 file")))
        return tnd_error_config(
            "%s: this partial clone lacks files of the tree reviewed, and "
            "tandem never fetches; fetch them first (git sparse-checkout "
            "disable, or git fetch with a filter that takes them), then "
            "review again",
            dir ? dir : "the repository");
    return rc < 0 ? -1 : 0;
}

static int git(char **out, const char *dir, const char *const *argv, size_t cap)
{
    return git_index(out, dir, NULL, argv, cap);
}

static int from_file(tnd_change *c, const char *repo, const char *path,
                     const char *label)
{
    char *named = label ? tnd_xstrdup(label) : tnd_xasprintf("--diff %s", path);
    size_t len = 0;
    int rc = 0;

    if (strcmp(path, "-") == 0) {
        if (tnd_fs_read_fd(&c->diff, &len, STDIN_FILENO, "the diff on stdin",
                           TND_BODY_MAX_DIFF) < 0)
            rc = tnd_error_config("%s: %s", named, tnd_error_last());
    } else if (tnd_fs_read(&c->diff, &len, path, TND_BODY_MAX_DIFF) < 0) {
        rc = tnd_error_config("%s: %s", named, tnd_error_last());
    }
    if (rc == 0 && strlen(c->diff) != len)
        rc = tnd_error_config("%s: not a text diff (it holds a NUL byte)",
                              named);
    free(named);
    if (rc < 0)
        return rc;
    c->base = tnd_xstrdup(repo);
    return 0;
}

/* The top of the work tree or not (see change.h): from a subdirectory
 * the skills found no Makefile at the top of the tree exported, and a
 * harmless change was rejected (and a run --commit blamed the config). */
int tnd_change_at_top(const char *repo)
{
    const char *argv[] = {"git", "rev-parse", "--show-toplevel",
                          "--show-prefix", NULL};
    char *out = NULL, *why = NULL, *prefix;
    int rc = 0;

    if (tnd_git_try(&out, NULL, &why, repo, argv, 8192) < 0) {
        /* a bare repository: its diff was of an index that is not
         * there, and its export failed, exit 4 (--on-error pass) */
        bool git_dir = why && strstr(why, "must be run in a work tree") &&
                       tnd_git_in_git_dir(repo);

        free(out);
        free(why);
        if (git_dir)
            return tnd_error_config(TND_GIT_DIR_WORDS, repo);
        tnd_error_clear();
        return 0;
    }
    if ((prefix = strchr(out, '\n')) && *tnd_str_trim(prefix + 1)) {
        *prefix = '\0';
        rc = tnd_error_config(
            "%s is the directory %s of the git work tree %s: git's changes "
            "and HEAD's tree are the whole tree's, so review them (or run "
            "--commit) with --repo %s, and name a subdirectory's agents.yaml "
            "with --config",
            repo, prefix + 1, out, out);
    }
    free(out);
    return rc;
}

/* HEAD's tree, or c->rev's, into a private directory: the base, every
 * file of the commit as a checkout writes it. Through an index of its
 * own, never `git archive`: that leaves out what .gitattributes marks
 * export-ignore (a repository's tests, so a change that broke them was
 * approved by a suite of none) and rewrites export-subst files. A Git
 * LFS file whose object is not on this machine is its pointer file, and
 * the note says so (lfs.h). */
static int export(tnd_change *c, const char *repo, const char *rundir_base)
{
    const char *read_tree[] = {"git", "read-tree", NULL, NULL};
    const char *checkout[] = {"git", TND_LFS_OFF, "checkout-index", "-a", "-f",
                              NULL,  NULL};
    const char *dir;
    char *index, *prefix, *lfs;
    int rc;

    /* a runtime directory: held while this review lives, swept after a
     * review killed outright */
    if (!(c->tmp = tnd_rundir_new(rundir_base, NULL, NULL, 0)))
        return -1;
    dir = tnd_rundir_path(c->tmp);
    index = tnd_fs_join(dir, "base.index");
    c->base = tnd_fs_join(dir, "base");
    prefix = tnd_xasprintf("--prefix=%s/", c->base);
    read_tree[2] = c->rev;
    checkout[10] = prefix;
    rc = tnd_fs_mkdirs(c->base, 0700);
    if (rc == 0)
        rc = git_index(NULL, repo, index, read_tree, 4096);
    if (rc == 0)
        rc = git_index(NULL, repo, index, checkout, 4096);
    if (rc == 0)
        rc = tnd_lfs_smudge(&c->lfs, repo, index, c->base);
    /* checkout-index writes a submodule as an empty directory */
    if (rc == 0)
        rc = tnd_gitlinks_export(&c->note, &c->lfs, repo, index, c->base, dir);
    if (rc == 0 && (lfs = tnd_lfs_note(&c->lfs))) {
        char *was = c->note;

        c->note = was ? tnd_xasprintf("%s; %s", was, lfs) : tnd_xstrdup(lfs);
        free(was);
        free(lfs);
    }
    /* the change's files as a checkout of it writes them, where that is
     * not as git stores them (eol=crlf, a smudge filter) */
    if (rc == 0 && c->diff)
        rc = tnd_converted_find(&c->converted, &c->nconverted, repo, c->base,
                                index, dir, c->diff);
    unlink(index);
    free(index);
    free(prefix);
    return rc;
}

/* In a work tree whose branch has no commit yet (the first commit, a
 * hook's first run), the base is the empty tree: its id (the hash of no
 * entries, in the repository's hash), or NULL when repo is no such work
 * tree. Caller frees. */
static char *unborn_base(const char *repo)
{
    const char *inside[] = {"git", "rev-parse", "--is-inside-work-tree", NULL};
    const char *head[] = {"git", "symbolic-ref", "-q", "HEAD", NULL};
    /* a ref that names a lost commit still resolves here, where
     * show-ref --verify failed on it as on a ref that is not there */
    const char *exists[] = {"git", "rev-parse", "-q", "--verify", NULL, NULL};
    const char *empty[] = {"git",  "hash-object", "-t",
                           "tree", "/dev/null",   NULL};
    char *out = NULL, *ref = NULL, *tree = NULL;
    bool unborn = false;

    /* HEAD names a branch that does not exist yet (a branch whose commit
     * is lost is no first commit) */
    if (tnd_git_run(&out, NULL, repo, inside, 64) == 0 &&
        strcmp(tnd_str_trim(out), "true") == 0 &&
        tnd_git_run(&ref, NULL, repo, head, 4096) == 0) {
        exists[4] = tnd_str_trim(ref);
        unborn = tnd_git_run(NULL, NULL, repo, exists, 4096) < 0;
    }
    if (unborn && tnd_git_run(&tree, NULL, repo, empty, 4096) == 0) {
        tnd_str_trim(tree);
    } else {
        free(tree);
        tree = NULL;
    }
    free(out);
    free(ref);
    return tree;
}

/* Whether git runs this process as a hook of a commit: it sets
 * GIT_INDEX_FILE, the index the commit takes, for pre-commit and
 * pre-merge-commit (even for --amend of the message alone). */
static bool in_commit(void)
{
    return getenv("GIT_INDEX_FILE") != NULL;
}

/* Nothing is staged: a commit of no file when git commits (--amend of
 * the message, --allow-empty), which --allow-empty passes; anywhere else
 * (`pre-commit run --all-files` in CI: a clean checkout stages nothing)
 * nothing was looked at, and that passes nothing. */
static int nothing_staged(tnd_change *c, const char *repo)
{
    if (in_commit()) {
        c->empty = true;
        return tnd_error_config("nothing to review: %s has no staged changes",
                                repo);
    }
    if (getenv("PRE_COMMIT"))
        return tnd_error_config(
            "nothing to review: %s has no staged changes, and the pre-commit "
            "framework runs this hook outside a commit (pre-commit run "
            "--all-files, as in CI), so that passes nothing: to review a "
            "pull request's commits run pre-commit run --from-ref BASE "
            "--to-ref HEAD, which tandem reviews as one change (see "
            "docs/pipelines.md)",
            repo);
    return tnd_error_config("nothing to review: %s has no staged changes "
                            "(and no commit is being made: --allow-empty "
                            "passes that only in a commit's hook)",
                            repo);
}

/* git's diff of the tree from c->rev to the index (cached), to commit
 * to, or else to the work tree, into c->diff: names as they are, not
 * octal-quoted (the parsers undo git's quoting of the rest). Whatever
 * the user's config says, the diff is git's plain format, of the bytes
 * committed: a/ and b/ prefixes (diff.mnemonicPrefix's i/ and w/ read as
 * a rename, and diff.noprefix made a path under a/ another file), no
 * textconv (a converted file is not what is committed), no relative
 * names, blank context lines with their space, and a submodule as its
 * mode line, never diff.submodule=log's prose, which the parser skipped.
 * A submodule's own uncommitted changes are not the superproject's (its
 * "Subproject commit ID-dirty" line read as an edit of a file, and the
 * review was rejected); a new commit recorded for it still shows. */
static int git_diff(tnd_change *c, const char *repo, bool cached,
                    const char *to)
{
    const char *argv[24] = {"git",
                            "-c",
                            "core.quotePath=false",
                            "-c",
                            "diff.suppressBlankEmpty=false",
                            "diff",
                            "--no-ext-diff",
                            "--no-textconv",
                            "--no-color",
                            "--no-renames",
                            "--no-relative",
                            "--submodule=short",
                            "--ignore-submodules=dirty",
                            "--src-prefix=a/",
                            "--dst-prefix=b/",
                            "--binary",
                            "--full-index"};
    size_t n = 17;

    if (cached)
        argv[n++] = "--cached";
    argv[n++] = c->rev;
    if (to)
        argv[n++] = to;
    argv[n++] = "--";
    argv[n] = NULL;
    return git(&c->diff, repo, argv, TND_BODY_MAX_DIFF);
}

/* pre-commit's --from-ref/--to-ref (CI, a pre-push hook): the commits
 * from..to as one change, `git diff from...to` (from the merge base, as
 * pre-commit lists their files) against the merge base's tree. */
static int from_range(tnd_change *c, const char *repo, const char *from,
                      const char *to, const char *rundir_base)
{
    const char *base[] = {"git", "merge-base", from, to, NULL};
    int rc;

    if (from[0] == '-' || to[0] == '-') /* git would take it as an option */
        return tnd_error_config("pre-commit's --from-ref %s --to-ref %s: "
                                "not a commit",
                                from, to);
    /* refs CI gave that name no commits: its to fix, not a review that
     * could not be done (which --on-error pass would let through) */
    if (git(&c->rev, repo, base, 4096) < 0) {
        tnd_error_prefix("pre-commit's --from-ref %s --to-ref %s", from, to);
        return tnd_error_config("%s", tnd_error_last());
    }
    tnd_str_trim(c->rev);
    if ((rc = git_diff(c, repo, false, to)) < 0)
        return rc;
    if (!*c->diff) {
        c->empty = true;
        return tnd_error_config("nothing to review: no changes from %s to %s "
                                "(pre-commit's --from-ref and --to-ref)",
                                from, to);
    }
    return rundir_base ? export(c, repo, rundir_base) : 0;
}

/* How many submodules a message names before "and N more". */
#define DIRTY_SHOWN 5

/* The submodules of repo with changes of their own, which a review of
 * repo's changes leaves out (gitlinks.h), for a message: "submodule lib
 * has changes of its own, which ...: review them in the submodule itself
 * (tandem review --repo REPO/lib)"; NULL when there is none. A review
 * of those alone said "nothing to review: no uncommitted changes", with
 * no word of them. Caller frees. */
static char *dirty_submodules(const char *repo)
{
    char **paths = tnd_gitlinks_dirty(repo), *dir, *word, *out;
    size_t n = 0;
    tnd_buf names;

    if (!paths)
        return NULL;
    while (paths[n])
        n++;
    tnd_buf_init(&names, TND_BUF_NOCAP);
    for (size_t i = 0; i < n && i < DIRTY_SHOWN; i++) {
        char *shown = tnd_str_one_line(paths[i], 100);

        tnd_buf_printf(&names, "%s%s",
                       i == 0                           ? ""
                       : i == n - 1 && n <= DIRTY_SHOWN ? " and "
                                                        : ", ",
                       shown);
        free(shown);
    }
    if (n > DIRTY_SHOWN)
        tnd_buf_printf(&names, " and %zu more", n - DIRTY_SHOWN);
    dir = tnd_fs_join(repo, paths[0]);
    word = tnd_str_shell_word(dir);
    out = tnd_xasprintf("submodule%s %s %s changes of %s own, which a review "
                        "of %s leaves out (a commit of it takes none of "
                        "them): review them in %s (tandem review --repo "
                        "%s%s)",
                        n > 1 ? "s" : "", tnd_buf_str(&names),
                        n > 1 ? "have" : "has", n > 1 ? "their" : "its", repo,
                        n > 1 ? "each submodule" : "the submodule itself", word,
                        n > 1 ? ", and so on" : "");
    free(word);
    free(dir);
    tnd_buf_free(&names);
    tnd_str_list_free(&paths);
    return out;
}

static int from_git(tnd_change *c, const char *repo, bool staged,
                    const char *rev, const char *rundir_base)
{
    const char *parse[] = {"git", "rev-parse", "--verify", NULL, NULL};
    const char *from = getenv("PRE_COMMIT_FROM_REF");
    const char *to = getenv("PRE_COMMIT_TO_REF");
    char *spec, *dirty;
    int rc;

    /* outside a commit, pre-commit's range is the change, not the index */
    if ((rc = tnd_change_at_top(repo)) < 0)
        return rc;
    if (staged && !rev && !in_commit() && from && *from && to && *to)
        return from_range(c, repo, from, to, rundir_base);
    parse[3] = spec = tnd_xasprintf("%s^{commit}", rev ? rev : "HEAD");
    rc = git(&c->rev, repo, parse, 4096);
    free(spec);
    if (rc < 0 && !rev && (c->rev = unborn_base(repo)))
        rc = 0; /* the first commit: every file is new */
    if (rc < 0) {
        tnd_error_prefix("%s is not a git repository with a commit%s%s "
                         "(review a patch with --diff FILE instead)",
                         repo, rev ? " " : "", rev ? rev : "");
        return tnd_error_config("%s", tnd_error_last());
    }
    tnd_str_trim(c->rev);
    if ((rc = git_diff(c, repo, staged, NULL)) < 0)
        return rc;
    if (!*c->diff && staged)
        return nothing_staged(c, repo);
    /* a submodule's own changes are left out of git's diff: said, both
     * when they were all there was and beside a change */
    dirty = staged ? NULL : dirty_submodules(repo);
    if (!*c->diff) {
        c->empty = true;
        rc = tnd_error_config("nothing to review: %s has no uncommitted "
                              "changes%s%s",
                              repo, dirty ? "; its " : "", dirty ? dirty : "");
        free(dirty);
        return rc;
    }
    rc = rundir_base ? export(c, repo, rundir_base) : 0;
    if (rc == 0 && dirty) {
        char *was = c->note;

        c->note = was ? tnd_xasprintf("%s; the %s", was, dirty)
                      : tnd_xasprintf("the %s", dirty);
        free(was);
    }
    free(dirty);
    return rc;
}

int tnd_change_load(tnd_change *c, const char *repo, const char *diff_file,
                    const char *label, bool staged, const char *rev,
                    const char *rundir_base)
{
    int rc;

    memset(c, 0, sizeof(*c));
    if (!diff_file)
        return from_git(c, repo, staged, rev, rundir_base);
    if ((rc = from_file(c, repo, diff_file, label)) < 0 || !rev)
        return rc;
    /* a resumed review of git changes: the same base again */
    free(c->base);
    c->base = NULL;
    c->rev = tnd_xstrdup(rev);
    return rundir_base ? export(c, repo, rundir_base) : 0;
}

int tnd_change_export(tnd_change *c, const char *repo, const char *rev,
                      const char *rundir_base)
{
    memset(c, 0, sizeof(*c));
    if (tnd_change_at_top(repo) < 0)
        return TND_ECONFIG;
    c->rev = rev && *rev ? tnd_xstrdup(rev) : unborn_base(repo);
    if (!c->rev)
        return tnd_error_set("%s has no commit, and is no branch before "
                             "its first one",
                             repo);
    return export(c, repo, rundir_base) < 0 ? -1 : 0;
}

void tnd_change_clear(tnd_change *c)
{
    tnd_rundir_destroy(&c->tmp, false);
    tnd_converted_free(c->converted, c->nconverted);
    tnd_lfs_left_free(&c->lfs);
    free(c->note);
    free(c->diff);
    free(c->base);
    free(c->rev);
    memset(c, 0, sizeof(*c));
}
