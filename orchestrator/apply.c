/* Putting an approved patch into the user's tree (see apply.h).
 *
 * Two appliers, one rule: check the whole patch against the tree as it is
 * now, and write only when every part of it fits. In a git work tree git
 * checks and applies (`git apply --check`, then `git apply`); elsewhere
 * tandem's own applier does (patchdir.c). */
#include "orchestrator/apply.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/log.h"
#include "common/str.h"
#include "common/xalloc.h"
#include "orchestrator/git.h"
#include "orchestrator/patchdir.h"
#include "orchestrator/rundir.h"
#include "proto/body.h"
#include "proto/code.h"
#include "proto/json.h"
#include "skills/patch.h"

#define SUBJECT_MAX 72         /* bytes of a commit's first line */
#define BODY_MAX    (16 << 10) /* bytes of the rationale in a commit */
#define GIT_OUT_MAX (64 << 10) /* what git may print for our questions */
/* The bytes of names one git status is given at most (each name's
 * pointer counted too): far under what exec takes of a command line
 * and the environment (ARG_MAX: a quarter of the stack limit, 128 KiB
 * at the least) */
#define STATUS_PART (32 << 10)

/* ---- the message ----------------------------------------------------------
 */

/* The first line of text, trimmed, cut to SUBJECT_MAX at a word (or at
 * the end of the first sentence when that fits). Caller frees. */
static char *subject_of(const char *text)
{
    size_t len = strcspn(text, "\n");
    char *line = tnd_xstrndup(text, len), *dot, *cut;

    tnd_str_trim(line);
    if (strlen(line) <= SUBJECT_MAX)
        return line;
    if ((dot = strstr(line, ". ")) && (size_t)(dot - line) < SUBJECT_MAX) {
        dot[1] = '\0';
        return line;
    }
    line[SUBJECT_MAX - 3] = '\0';
    if ((cut = strrchr(line, ' ')) && cut > line + SUBJECT_MAX / 2)
        *cut = '\0';
    /* never leave half a UTF-8 character before the "..." */
    for (size_t n = strlen(line); n > 0 && (line[n - 1] & 0xC0) == 0x80;)
        line[--n] = '\0';
    if (strlen(line) > 0 && (line[strlen(line) - 1] & 0xC0) == 0xC0)
        line[strlen(line) - 1] = '\0';
    tnd_str_trim(line);
    cut = tnd_xasprintf("%s...", line);
    free(line);
    return cut;
}

char *tnd_apply_message(const char *rationale, const char *task,
                        const char *session)
{
    char *why = tnd_xstrdup(rationale ? rationale : ""), *subject, *body, *msg;

    /* a key the model echoed in its rationale: a commit is pushed, and
     * its message is git's argv while it runs (redacted before the cut,
     * which would leave a secret's head) */
    tnd_log_redact(why);
    tnd_str_trim(why);
    subject = subject_of(*why ? why : task);
    /* the rationale in full, unless the subject already is all of it */
    body = *why && strcmp(why, subject) != 0 ? tnd_str_cut_middle(why, BODY_MAX)
                                             : tnd_xstrdup("");
    msg = tnd_xasprintf("%s\n\n%s%sTandem-Session: %s\n", subject, body,
                        *body ? "\n\n" : "", session);
    free(subject);
    free(body);
    free(why);
    return tnd_log_redact(msg);
}

/* ---- with git -------------------------------------------------------------
 */

/* Whether dir holds nothing but git's and tandem's own (`.git`,
 * `.tandem`): a work tree with no file of the project yet. */
static bool only_git(const char *dir)
{
    DIR *d = opendir(dir);
    const struct dirent *e;
    bool only = d != NULL;

    while (only && (e = readdir(d)))
        only = !strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") ||
               !strcmp(e->d_name, ".git") || !strcmp(e->d_name, ".tandem");
    if (d)
        closedir(d);
    return only;
}

int tnd_apply_can_commit(const char *repo)
{
    const char *argv[] = {"git", "rev-parse", "--is-inside-work-tree", NULL};
    char *out = NULL, *head;
    int rc = tnd_git_run(&out, NULL, repo, argv, GIT_OUT_MAX);
    bool yes = rc == 0 && out && strncmp(out, "true", 4) == 0, unborn;

    free(out);
    if (!yes)
        return tnd_error_config(
            "--commit commits the approved change with git, but %s is %s; "
            "use --apply (it patches any directory) or run in a git work "
            "tree",
            repo,
            rc == TND_ENOTFOUND ? "not usable: git is not installed"
                                : "not in a git work tree");
    /* the run works on HEAD's tree: with no commit yet, an empty one,
     * so the baseline failed for want of the project's files ("make
     * found no Makefile ... fix skills.build"), blaming agents.yaml */
    head = tnd_apply_head(repo);
    unborn = !*head;
    free(head);
    /* an empty work tree is a project started from nothing: its run
     * sees all there is */
    if (unborn && !only_git(repo))
        return tnd_error_config(
            "--commit works on the tree of the commit HEAD names, and HEAD "
            "in %s has no commit yet, so the run would see none of your "
            "files; make a first commit (git add, then git commit), or run "
            "without --commit",
            repo);
    /* the commit needs a name and an address for its author and
     * committer: asked now, not after the tree was changed (a run then
     * left its change in the tree, uncommitted, and the next run was
     * refused for it) */
    for (int k = 0; k < 2; k++) {
        const char *var[] = {
            "git", "var", k ? "GIT_COMMITTER_IDENT" : "GIT_AUTHOR_IDENT", NULL};
        if (tnd_git_run(NULL, NULL, repo, var, GIT_OUT_MAX) < 0)
            return tnd_error_config(
                "--commit needs git to know who commits, and it does not "
                "(%s); set it with git config user.name \"Your Name\" and "
                "git config user.email you@example.com (or --global), or "
                "use --apply",
                k ? "no committer identity" : "no author identity");
    }
    return 0;
}

/* The repository's path prefix of repo (git rev-parse --show-prefix): ""
 * at the top, "sub/" below it. NULL when repo is not in a work tree. */
static char *git_prefix(const char *repo)
{
    const char *argv[] = {"git", "rev-parse", "--show-prefix", NULL};
    char *out = NULL;

    if (tnd_git_run(&out, NULL, repo, argv, GIT_OUT_MAX) < 0) {
        free(out);
        tnd_error_clear();
        return NULL;
    }
    if (!out)
        return tnd_xstrdup("");
    out[strcspn(out, "\n")] = '\0';
    return out;
}

/* argv with "git" and the given words, then "--" and the n paths when
 * paths is not NULL. Caller frees the array. */
static const char **git_argv(const char *const *words, char **paths, size_t n)
{
    size_t nw = 0, k = 0;
    const char **argv;

    while (words[nw])
        nw++;
    argv = tnd_xcalloc(nw + n + 3, sizeof(char *));
    argv[k++] = "git";
    for (size_t i = 0; i < nw; i++)
        argv[k++] = words[i];
    if (paths) {
        argv[k++] = "--";
        for (size_t i = 0; i < n; i++)
            argv[k++] = paths[i];
    }
    return argv;
}

static int git(char **out, const char *repo, const char *const *words,
               char **paths, size_t n)
{
    const char **argv = git_argv(words, paths, n);
    int rc = tnd_git_run(out, NULL, repo, argv, GIT_OUT_MAX);

    free(argv);
    return rc;
}

/* The paths, each ended by a NUL: a list for git's stdin (--stdin -z,
 * --pathspec-from-file=- --pathspec-file-nul), never its command line,
 * which the kernel caps (ARG_MAX: 300 files of long names passed it,
 * and git did not start, "Argument list too long"). Caller frees. */
static char *path_list(size_t *len, char **paths)
{
    tnd_buf b;

    tnd_buf_init(&b, TND_BUF_NOCAP);
    for (size_t i = 0; paths && paths[i]; i++)
        tnd_buf_append(&b, paths[i], strlen(paths[i]) + 1);
    return tnd_buf_detach(&b, len);
}

/* Uncommitted changes of the user's in the files the patch touches: a
 * commit of them would carry those too. 0 when there are none. git
 * status reads no pathspec from its stdin: the names go to it in parts
 * of at most STATUS_PART bytes, one command line each. */
static int clean_paths(const char *repo, char **paths)
{
    const char *status[] = {"--literal-pathspecs",   "status",
                            "--porcelain",           "-z",
                            "--untracked-files=all", NULL};
    char *out = NULL;
    int rc = 0;

    for (size_t at = 0; rc == 0 && paths[at];) {
        size_t n = 0, bytes = 0;

        while (paths[at + n] &&
               (n == 0 || bytes + strlen(paths[at + n]) + 1 + sizeof(char *) <=
                              STATUS_PART))
            bytes += strlen(paths[at + n++]) + 1 + sizeof(char *);
        rc = git(&out, repo, status, paths + at, n);
        at += n;
        if (rc == 0 && out && *out) {
            /* "XY PATH\0": name the first */
            rc = tnd_error_set("%s has changes of yours that are not "
                               "committed, and --commit commits only the "
                               "patch; commit or stash them first, or use "
                               "--apply",
                               strlen(out) > 3 ? out + 3 : out);
        }
        free(out);
        out = NULL;
    }
    return rc;
}

/* The user's index, for the paths the commit took, made to agree with
 * the commit (as `git commit --only` leaves it): else `git status` would
 * show the change staged backwards. Whatever else is staged stays (no
 * path is no reset: git resets the whole index for an empty list). */
static int refresh_index(const char *repo, char **paths)
{
    const char *reset[] = {
        "git", "--literal-pathspecs",    "reset",
        "-q",  "--pathspec-from-file=-", "--pathspec-file-nul",
        NULL};
    size_t len = 0;
    char *list = path_list(&len, paths);
    int rc = len ? tnd_git_run_input(NULL, NULL, repo, NULL, NULL, NULL, list,
                                     len, reset, GIT_OUT_MAX)
                 : 0;

    free(list);
    if (rc < 0)
        return tnd_error_set("committed, but git's index was not updated "
                             "for the files the commit took (%s); run "
                             "`git reset -q -- FILES` on them before your "
                             "next commit",
                             tnd_error_last());
    return 0;
}

/* The tree of the index file index, its id into *tree (caller frees). 0,
 * or -1 with the error set and *tree NULL. */
static int write_tree(char **tree, const char *repo, const char *index)
{
    const char *argv[] = {"git", "write-tree", NULL};
    int rc = tnd_git_run_index(tree, NULL, repo, index, argv, GIT_OUT_MAX);

    if (rc == 0 && !*tree)
        rc = tnd_error_set("git wrote no tree of the patch");
    if (rc == 0)
        (*tree)[strcspn(*tree, "\n")] = '\0';
    if (rc < 0) {
        free(*tree);
        *tree = NULL;
    }
    return rc;
}

/* The commit's tree: the audited patch on the audited commit (base, ""
 * before the first), and nothing else, in *tree. It is built from the
 * patch alone, in an index of its own (git apply --cached, write-tree),
 * never from the files in the tree: an edit of the user's saved after
 * clean_paths looked cannot get in. Built before the tree is touched: a
 * patch git cannot apply to the commit's files (a file checked out
 * converted, eol=crlf say) left the change in the tree, uncommitted, and
 * the next run refused for it. 0, or -1 with the error set. */
static int commit_tree_of(char **tree, const char *repo, const char *patch_file,
                          const char *prefix, const char *base)
{
    char *dir = *prefix ? tnd_xasprintf("--directory=%s", prefix) : NULL;
    const char *read_tree[] = {"git", "read-tree", base, NULL};
    const char *apply[] = {"git",
                           "apply",
                           "--cached",
                           "--whitespace=nowarn",
                           dir ? dir : patch_file,
                           dir ? patch_file : NULL,
                           NULL};
    char *runtime = tnd_rundir_base(), *index = NULL;
    tnd_rundir *tmp = runtime ? tnd_rundir_new(runtime, NULL, NULL, 0) : NULL;
    int rc = tmp ? 0 : -1;

    *tree = NULL;
    if (tmp)
        index = tnd_fs_join(tnd_rundir_path(tmp), "commit.index");
    /* no index file is an empty index: the first commit's */
    if (rc == 0 && *base)
        rc = tnd_git_run_index(NULL, NULL, repo, index, read_tree, GIT_OUT_MAX);
    if (rc == 0)
        rc = tnd_git_run_index(NULL, NULL, repo, index, apply, GIT_OUT_MAX);
    if (rc == 0)
        rc = write_tree(tree, repo, index);
    free(index);
    tnd_rundir_destroy(&tmp, false);
    free(runtime);
    free(dir);
    return rc < 0 ? -1 : 0;
}

/* The paths of patch's files that old is true for (those base holds)
 * or all of them, each ended by a NUL (see path_list). Caller frees. */
static char *patch_list(size_t *len, const tnd_patch *patch, bool old)
{
    tnd_buf b;

    tnd_buf_init(&b, TND_BUF_NOCAP);
    for (size_t i = 0; i < patch->nfiles; i++)
        if (!old || !patch->files[i].created)
            tnd_buf_append(&b, patch->files[i].path,
                           strlen(patch->files[i].path) + 1);
    return tnd_buf_detach(&b, len);
}

/* The commit's tree when git cannot apply the patch to the files as git
 * stores them: a file git converts on checkout (eol=crlf, a clean and
 * smudge filter) is in the patch as checked out, as the workspace had
 * it. The files the patch touches are checked out of base into a
 * directory of tandem's own, patched there (patchdir.c), and added back
 * by git add, which converts them as a commit of the user's would. Still
 * nothing comes from the user's tree. Their names go to git on its
 * stdin (checkout-index --stdin -z, add --pathspec-from-file), literal
 * as ever: a name with glob characters is no pattern, which would take
 * base's other files it matches, absent from the directory, out of the
 * commit. 0, or -1 with the error set. */
static int commit_tree_converted(char **tree, const char *repo,
                                 const char *diff, const tnd_patch *patch,
                                 const char *base)
{
    const char *git_dir[] = {"git", "rev-parse", "--absolute-git-dir", NULL};
    const char *read_tree[] = {"git", "read-tree", base, NULL};
    const char *checkout[] = {
        "git", "checkout-index", "-f", NULL, "--stdin", "-z", NULL};
    const char *add[] = {
        "git", NULL, "--work-tree=.",          "--literal-pathspecs", "add",
        "-f",  "-A", "--pathspec-from-file=-", "--pathspec-file-nul", NULL};
    char *runtime = tnd_rundir_base(), *gd = NULL, *index = NULL, *work = NULL,
         *prefix = NULL, *gd_opt = NULL, *list = NULL;
    tnd_rundir *tmp = runtime ? tnd_rundir_new(runtime, NULL, NULL, 0) : NULL;
    size_t len = 0;
    int rc = tmp ? tnd_git_run(&gd, NULL, repo, git_dir, GIT_OUT_MAX) : -1;

    *tree = NULL;
    if (rc == 0 && !gd)
        rc = tnd_error_set("git did not say where the repository is");
    if (rc == 0) {
        gd[strcspn(gd, "\n")] = '\0';
        index = tnd_fs_join(tnd_rundir_path(tmp), "commit.index");
        work = tnd_fs_join(tnd_rundir_path(tmp), "work");
        rc = tnd_fs_mkdirs(work, 0700);
    }
    /* no index file is an empty index: the first commit's */
    if (rc == 0 && *base)
        rc = tnd_git_run_index(NULL, NULL, repo, index, read_tree, GIT_OUT_MAX);
    if (rc == 0 && *base) {
        checkout[3] = prefix = tnd_xasprintf("--prefix=%s/", work);
        list = patch_list(&len, patch, true);
        if (len) /* not only new files */
            rc = tnd_git_run_input(NULL, NULL, repo, index, NULL, NULL, list,
                                   len, checkout, GIT_OUT_MAX);
        free(list);
    }
    if (rc == 0)
        rc = tnd_patchdir_apply(work, diff);
    if (rc == 0) {
        add[1] = gd_opt = tnd_xasprintf("--git-dir=%s", gd);
        list = patch_list(&len, patch, false);
        /* an empty list is the whole directory to git: never asked */
        rc = len ? tnd_git_run_input(NULL, NULL, work, index, NULL, NULL, list,
                                     len, add, GIT_OUT_MAX)
                 : tnd_error_set("the patch names no file to commit");
        free(list);
    }
    if (rc == 0)
        rc = write_tree(tree, repo, index);
    free(gd);
    free(gd_opt);
    free(prefix);
    free(index);
    free(work);
    tnd_rundir_destroy(&tmp, false);
    free(runtime);
    return rc < 0 ? -1 : 0;
}

/* The commit of tree on base, with message. update-ref moves HEAD only
 * while it still names base, so a commit or a checkout made meanwhile
 * is not built on, and not lost. Sets r->commit; 0, or -1 with the
 * error set. */
static int commit_patch(tnd_apply_result *r, const char *repo, const char *tree,
                        const char *base, const char *message)
{
    const char *commit_tree[] = {"git",   "commit-tree",       tree, "-m",
                                 message, *base ? "-p" : NULL, base, NULL};
    char *reflog = NULL, *subject;
    int rc = tnd_git_run(&r->commit, NULL, repo, commit_tree, GIT_OUT_MAX);

    if (rc == 0 && r->commit) {
        const char *update[] = {"update-ref", "-m", NULL, "HEAD",
                                r->commit,    base, NULL};

        r->commit[strcspn(r->commit, "\n")] = '\0';
        subject = subject_of(message);
        update[2] = reflog = tnd_xasprintf("commit (tandem): %s", subject);
        free(subject);
        if (git(NULL, repo, update, NULL, 0) < 0) {
            rc = tnd_error_set("HEAD moved while the change went in (a "
                               "commit, a checkout or a reset of yours): "
                               "%s",
                               tnd_error_last());
            free(r->commit);
            r->commit = NULL;
        }
    }
    if (rc == 0 && !r->commit)
        rc = tnd_error_set("git made no commit of the patch");
    free(reflog);
    return rc < 0 ? -1 : 0;
}

static int apply_git(const char *repo, const char *patch_file,
                     const char *prefix)
{
    char *dir = *prefix ? tnd_xasprintf("--directory=%s", prefix) : NULL;
    /* exactly the audited patch: no apply.whitespace=fix of the user's
     * config rewriting what the gate saw */
    const char *check[] = {"apply",
                           "--whitespace=nowarn",
                           "--check",
                           dir ? dir : patch_file,
                           dir ? patch_file : NULL,
                           NULL};
    const char *apply[] = {"apply", "--whitespace=nowarn",
                           dir ? dir : patch_file, dir ? patch_file : NULL,
                           NULL};
    int rc;

    if ((rc = git(NULL, repo, check, NULL, 0)) == 0)
        rc = git(NULL, repo, apply, NULL, 0);
    free(dir);
    return rc < 0 ? -1 : 0;
}

/* ---- the whole ------------------------------------------------------------
 */

static char **copy_paths(const tnd_patch *patch)
{
    const char **paths = tnd_patch_paths(patch);
    size_t n = 0;
    char **out;

    while (paths[n])
        n++;
    out = tnd_xcalloc(n + 1, sizeof(char *));
    for (size_t i = 0; i < n; i++)
        out[i] = tnd_xstrdup(paths[i]);
    free(paths);
    return out;
}

char *tnd_apply_head(const char *repo)
{
    const char *argv[] = {"git",      "rev-parse",     "-q",
                          "--verify", "HEAD^{commit}", NULL};
    char *out = NULL;

    if (tnd_git_run(&out, NULL, repo, argv, GIT_OUT_MAX) < 0 || !out) {
        free(out);
        tnd_error_clear();
        return tnd_xstrdup(""); /* no commit yet */
    }
    out[strcspn(out, "\n")] = '\0';
    return out;
}

/* --commit commits onto the commit the change was audited on: HEAD the
 * same as when the run took its snapshot. 0, or -1 with the error set. */
static int same_head(const char *repo, const char *head)
{
    char *now = tnd_apply_head(repo);
    int rc = 0;

    if (strcmp(now, head) != 0)
        rc = tnd_error_set(
            "HEAD moved while the run went on (from %.12s to %.12s: a "
            "checkout, a commit, a rebase or a reset), and the change was "
            "audited on the tree of %.12s; --commit commits only onto the "
            "commit it was audited on, so look at the patch and apply it "
            "yourself, or run again",
            *head ? head : "no commit", *now ? now : "no commit",
            *head ? head : "no commit");
    free(now);
    return rc;
}

int tnd_apply_patch(tnd_apply_result *out, const char *repo, const char *diff,
                    const char *patch_file, tnd_apply_mode mode,
                    const char *message, const char *head)
{
    tnd_patch patch;
    char *prefix = NULL, *base = NULL, *tree = NULL;
    int rc = 1;

    memset(out, 0, sizeof(*out));
    memset(&patch, 0, sizeof(patch));
    out->mode = mode;
    if (tnd_patch_parse(&patch, diff, strlen(diff), NULL, NULL) < 0) {
        out->why = tnd_xstrdup(tnd_error_last());
        goto done;
    }
    out->paths = copy_paths(&patch);
    prefix = git_prefix(repo);
    out->git = prefix != NULL;
    /* what a commit needs, asked before the tree changes: a work tree,
     * an identity, the same HEAD, paths without changes of the user's */
    if (mode == TND_APPLY_COMMIT && (tnd_apply_can_commit(repo) < 0 ||
                                     (head && same_head(repo, head) < 0) ||
                                     clean_paths(repo, out->paths) < 0)) {
        out->why = tnd_xstrdup(tnd_error_last());
        goto done;
    }
    if (mode == TND_APPLY_COMMIT) {
        base = head ? tnd_xstrdup(head) : tnd_apply_head(repo);
        /* git's own apply first; a file git converts on checkout is in
         * the patch as checked out, so that one goes the long way (it
         * was exit 5: run with --apply and commit it yourself) */
        if (commit_tree_of(&tree, repo, patch_file, prefix, base) < 0 &&
            (*prefix ||
             commit_tree_converted(&tree, repo, diff, &patch, base) < 0)) {
            out->why = tnd_xasprintf("git cannot make the commit's files of "
                                     "the patch, so nothing was changed "
                                     "(%s); run with --apply and commit it "
                                     "yourself",
                                     tnd_error_last());
            goto done;
        }
    }
    if ((out->git ? apply_git(repo, patch_file, prefix)
                  : tnd_patchdir_apply(repo, diff)) < 0) {
        out->why = tnd_xasprintf(
            "the patch does not apply cleanly to the tree as it is now "
            "(%s)",
            tnd_error_last());
        goto done;
    }
    out->applied = true;
    if (mode == TND_APPLY_COMMIT) {
        if (commit_patch(out, repo, tree, base, message) < 0) {
            out->why = tnd_xasprintf("applied, but not committed: %s",
                                     tnd_error_last());
            goto done;
        }
        out->committed = true;
        /* done as asked: a stale index is said, not an exit 5 */
        if (refresh_index(repo, out->paths) < 0)
            out->why = tnd_xstrdup(tnd_error_last());
    }
    rc = 0;
done:
    tnd_patch_clear(&patch);
    free(prefix);
    free(base);
    free(tree);
    return rc;
}

/* "stats.c", "stats.c and 2 more files". Caller frees. */
static char *files_line(char **paths)
{
    size_t n = 0;

    while (paths && paths[n])
        n++;
    if (n == 0)
        return tnd_xstrdup("no file");
    return n == 1 ? tnd_xstrdup(paths[0])
                  : tnd_xasprintf("%s and %zu more file%s", paths[0], n - 1,
                                  n == 2 ? "" : "s");
}

void tnd_apply_say(FILE *err, const char *me, const tnd_apply_result *res,
                   int rc, const char *repo, const char *patch_file,
                   int exit_code)
{
    char *what = files_line(res->paths);

    if (res->committed) {
        fprintf(err, "%s: committed the approved change as %.12s: %s\n", me,
                res->commit ? res->commit : "HEAD", what);
        if (res->why)
            fprintf(err, "%s: warning: %s\n", me, res->why);
    } else if (res->applied && rc == 0) {
        fprintf(err, "%s: applied the approved change to %s: %s\n", me, repo,
                what);
    } else if (res->applied) {
        fprintf(err,
                "%s: not committed: %s; the change is in your tree, and the "
                "patch in %s (exit %d)\n",
                me, res->why, patch_file, exit_code);
    } else {
        fprintf(err,
                "%s: not applied: %s; your tree is as it was, and the "
                "approved patch is in %s (exit %d)\n",
                me, res->why, patch_file, exit_code);
    }
    free(what);
}

void tnd_apply_result_clear(tnd_apply_result *out)
{
    free(out->commit);
    free(out->why);
    tnd_str_list_free(&out->paths);
    memset(out, 0, sizeof(*out));
}

json_object *tnd_apply_json(const tnd_apply_result *r)
{
    json_object *o = json_object_new_object();
    json_object *paths = json_object_new_array();

    for (char **p = r->paths; p && *p; p++)
        json_object_array_add(paths, json_object_new_string(*p));
    json_object_object_add(o, "asked",
                           json_object_new_string(r->mode == TND_APPLY_COMMIT
                                                      ? "commit"
                                                      : "apply"));
    json_object_object_add(o, "applied", json_object_new_boolean(r->applied));
    json_object_object_add(o, "committed",
                           json_object_new_boolean(r->committed));
    json_object_object_add(o, "commit", tnd_json_str_or_null(r->commit));
    json_object_object_add(o, "why", tnd_json_str_or_null(r->why));
    json_object_object_add(o, "via",
                           json_object_new_string(r->git ? "git" : "tandem"));
    json_object_object_add(o, "paths", paths);
    return o;
}
