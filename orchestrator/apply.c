/* Putting an approved patch into the user's tree (see apply.h).
 *
 * Two appliers, one rule: check the whole patch against the tree as it is
 * now, and write only when every part of it fits. In a git work tree git
 * checks and applies (`git apply --check`, then `git apply`); elsewhere
 * the patch becomes edits (unidiff.c), every edit is worked out in
 * memory on the files as they are, and only then are files written, each
 * resolved beneath the tree's directory (common/beneath.h). */
#include "orchestrator/apply.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/beneath.h"
#include "common/buf.h"
#include "common/diff.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/log.h"
#include "common/str.h"
#include "common/xalloc.h"
#include "orchestrator/git.h"
#include "orchestrator/rundir.h"
#include "orchestrator/unidiff.h"
#include "proto/body.h"
#include "proto/code.h"
#include "proto/json.h"
#include "skills/patch.h"

#define SUBJECT_MAX 72         /* bytes of a commit's first line */
#define BODY_MAX    (16 << 10) /* bytes of the rationale in a commit */
#define GIT_OUT_MAX (64 << 10) /* what git may print for our questions */

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

/* ---- without git: tandem's own strict applier -----------------------------
 */

/* One file of the patch as it will be: now is NULL when it is (to be)
 * absent. */
typedef struct pending {
    const char *path; /* borrowed from the edits */
    bool existed;
    mode_t mode; /* of the file as it was; 0644 for a new one */
    char *now;
    size_t len;
    int dir;    /* staged: its directory, open; -1 before */
    char *temp; /* staged: the new content's file there, by name */
} pending;

static void pending_free(pending *files, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (files[i].temp)
            unlinkat(files[i].dir, files[i].temp, 0);
        if (files[i].dir >= 0)
            close(files[i].dir);
        free(files[i].temp);
        free(files[i].now);
    }
    free(files);
}

/* The pending state of path, read from the tree the first time. */
static int load(pending **out, pending **files, size_t *n, int root,
                const char *path)
{
    pending *p;
    struct stat st;
    int fd, error;

    for (size_t i = 0; i < *n; i++)
        if (strcmp((*files)[i].path, path) == 0) {
            *out = &(*files)[i];
            return 0;
        }
    *files = tnd_xrealloc(*files, *n + 1, sizeof(pending));
    p = &(*files)[(*n)++];
    memset(p, 0, sizeof(*p));
    p->path = path;
    p->dir = -1;
    p->mode = 0644;
    *out = p;
    if (tnd_edit_path_check(path) < 0)
        return -1;
    /* not blocking: a FIFO there hung the apply for ever */
    if ((fd = tnd_beneath_open(root, path, O_RDONLY | O_NONBLOCK | O_NOCTTY,
                               0)) < 0)
        return errno == ENOENT ? (tnd_error_clear(), 0) : -1;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return tnd_error_set("%s is not a regular file in your tree; only "
                             "regular files are patched",
                             path);
    }
    p->mode = st.st_mode & 07777;
    error = tnd_fs_read_fd(&p->now, &p->len, fd, path, TND_BODY_MAX_FILE);
    close(fd);
    p->existed = error == 0;
    return error;
}

/* How many times needle occurs in hay; *at is the first place. */
static size_t occurrences(const char *hay, size_t len, const char *needle,
                          const char **at)
{
    size_t n = 0, nlen = strlen(needle);

    /* none, one or more: counting stops at two (linear however often a
     * long needle repeats) */
    for (const char *p = hay; n < 2 && p && (size_t)(p - hay) + nlen <= len;) {
        const char *hit = memmem(p, len - (size_t)(p - hay), needle, nlen);
        if (!hit)
            break;
        if (n++ == 0)
            *at = hit;
        p = hit + 1;
    }
    return n;
}

/* A deleted file's part of the patch: from its "diff --git" line to the
 * next file's. NULL when the patch has none. */
static char *section_of(const char *diff, const char *path)
{
    char *head = tnd_xasprintf("diff --git a/%s b/%s\n", path, path);
    const char *at = strstr(diff, head), *end;
    char *s = NULL;

    while (at && at != diff && at[-1] != '\n')
        at = strstr(at + 1, head);
    if (at) {
        end = strstr(at + strlen(head), "\ndiff --git ");
        s = end ? tnd_xstrndup(at, (size_t)(end + 1 - at)) : tnd_xstrdup(at);
    }
    free(head);
    return s;
}

/* Work edit e out on the pending files. -1 with the error saying why the
 * patch does not fit the tree as it is. */
static int plan_one(pending **files, size_t *n, int root, const tnd_edit *e,
                    const char *diff)
{
    pending *p;
    const char *at = NULL;
    size_t hits, slen, off;
    tnd_buf b;

    if (load(&p, files, n, root, e->path) < 0)
        return -1;
    switch (e->kind) {
    case TND_EDIT_WRITE:
        if (p->now || p->existed)
            return tnd_error_set("the patch creates %s, which exists now",
                                 e->path);
        p->now = tnd_xstrdup(e->replace ? e->replace : "");
        p->len = strlen(p->now);
        return 0;
    case TND_EDIT_DELETE: {
        /* deleted only when it holds exactly what the patch removes */
        char *want = section_of(diff, e->path);
        tnd_buf got;
        bool same;
        if (!p->now) {
            free(want);
            return tnd_error_set("the patch deletes %s, which does not "
                                 "exist now",
                                 e->path);
        }
        tnd_buf_init(&got, TND_BUF_NOCAP);
        tnd_diff_file_exec(&got, e->path, p->now, p->len,
                           (p->mode & S_IXUSR) != 0, NULL, 0, false);
        same = want && got.len > 0 && strcmp(want, got.data) == 0;
        tnd_buf_free(&got);
        free(want);
        if (!same)
            return tnd_error_set("the patch deletes %s, which has changed "
                                 "since the run started",
                                 e->path);
        free(p->now);
        p->now = NULL;
        p->len = 0;
        return 0;
    }
    case TND_EDIT_REPLACE:
        break;
    }
    if (!p->now)
        return tnd_error_set("the patch changes %s, which does not exist now",
                             e->path);
    slen = strlen(e->search);
    if (slen == 0 && p->len > 0)
        return tnd_error_set("%s: a hunk with no context lines (diff -U0) "
                             "cannot be checked against the file as it is "
                             "now; apply final.diff with git apply",
                             e->path);
    if (slen == 0) { /* lines added to an empty file */
        hits = 1;
        at = p->now;
    } else {
        hits = occurrences(p->now, p->len, e->search, &at);
    }
    /* the same lines in several places: the one where the hunk's header
     * puts them, when they are there (the tree unchanged around it) */
    if (hits > 1 && e->line > 0 &&
        tnd_str_line_start(p->now, p->len, e->line, &off) &&
        p->len - off >= slen && memcmp(p->now + off, e->search, slen) == 0) {
        at = p->now + off;
        hits = 1;
    }
    if (hits != 1)
        return tnd_error_set(
            hits == 0 ? "%s: the lines a hunk changes are no longer there as "
                        "the patch expects (the file changed since the run "
                        "started)"
                      : "%s: the lines a hunk changes occur in more than one "
                        "place now",
            e->path);
    tnd_buf_init(&b, TND_BODY_MAX_FILE);
    if (tnd_buf_append(&b, p->now, (size_t)(at - p->now)) < 0 ||
        tnd_buf_puts(&b, e->replace) < 0 ||
        tnd_buf_append(&b, at + slen, p->len - (size_t)(at - p->now) - slen) <
            0) {
        tnd_buf_free(&b);
        return tnd_error_set("the patch makes %s larger than %d bytes", e->path,
                             TND_BODY_MAX_FILE);
    }
    free(p->now);
    p->now = tnd_buf_detach(&b, &p->len);
    return 0;
}

/* Write (or remove) one planned file. */
/* Directories a staging made, parents first: removed again when the
 * patch is not put in place. */
typedef struct made_dirs {
    char **v;
    size_t n, alloc;
} made_dirs;

static void remember_dir(const char *rel, void *payload)
{
    made_dirs *m = payload;

    TND_GROW(m->v, m->alloc, m->n + 1);
    m->v[m->n++] = tnd_xstrdup(rel);
}

static const char *base_of(const char *path)
{
    const char *slash = strrchr(path, '/');

    return slash ? slash + 1 : path;
}

/* Write p's new content beside it, under a name of its own, in its
 * directory (made if missing; each made is added to made). Nothing is
 * replaced yet. */
static int stage_one(int root, pending *p, made_dirs *made)
{
    char *dir = tnd_fs_dirname(p->path);
    const char *base = base_of(p->path);
    int fd = -1, error = 0;

    if (strcmp(dir, ".") != 0 &&
        tnd_beneath_mkdirs(root, dir, remember_dir, made) < 0)
        error = -1;
    else if ((p->dir = strcmp(dir, ".") == 0
                           ? fcntl(root, F_DUPFD_CLOEXEC, 0)
                           : tnd_beneath_open(root, dir, O_PATH | O_DIRECTORY,
                                              0)) < 0)
        error = p->dir = -1;
    for (int tries = 0; error == 0 && fd < 0 && tries < 100; tries++) {
        free(p->temp);
        p->temp =
            tnd_xasprintf(".%.200s.tandem-%ld-%d", base, (long)getpid(), tries);
        fd = openat(p->dir, p->temp,
                    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                    p->mode);
        if (fd < 0 && errno != EEXIST)
            error = tnd_error_sys("cannot write beside %s", p->path);
    }
    if (fd < 0 && error == 0)
        error = tnd_error_set("cannot write beside %s", p->path);
    if (fd < 0) {
        free(p->temp);
        p->temp = NULL;
    }
    for (size_t off = 0; fd >= 0 && off < p->len && error == 0;) {
        ssize_t w = write(fd, p->now + off, p->len - off);
        if (w < 0 && errno != EINTR)
            error = tnd_error_sys("cannot write %s", p->path);
        else if (w > 0)
            off += (size_t)w;
    }
    /* a file that was there keeps its mode; a new one is made as any
     * other, the umask applied */
    if (fd >= 0 && p->existed && fchmod(fd, p->mode) < 0 && error == 0)
        error = tnd_error_sys("cannot write %s", p->path);
    if (fd >= 0 && close(fd) < 0 && error == 0)
        error = tnd_error_sys("cannot write %s", p->path);
    free(dir);
    return error;
}

/* Put p in place: its staged file over it, or it removed. */
static int commit_one(int root, pending *p)
{
    if (!p->now)
        return tnd_beneath_remove(root, p->path, false, false);
    if (renameat(p->dir, p->temp, p->dir, base_of(p->path)) < 0)
        return tnd_error_sys("cannot put %s in place", p->path);
    free(p->temp);
    p->temp = NULL;
    return 0;
}

/* Apply diff to the tree at repo, all or nothing. 0, or -1 with the error
 * set and the tree untouched (unless a write itself failed: then the
 * error says which file). */
static int apply_own(const char *repo, const char *diff)
{
    tnd_edit *edits = NULL;
    pending *files = NULL;
    made_dirs made = {NULL, 0, 0};
    size_t nedits = 0, n = 0;
    int root, error = -1;

    if ((root = open(repo, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
        return tnd_error_sys("cannot open %s", repo);
    if (tnd_unidiff_edits(&edits, &nedits, diff, strlen(diff)) < 0)
        goto out;
    for (size_t i = 0; i < nedits; i++)
        if (plan_one(&files, &n, root, &edits[i], diff) < 0)
            goto out;
    /* everything fits: each new content written beside its file; only
     * when all are (a full disk fails here) is any put in place, by a
     * rename each, so the tree is either as it was or patched (a file
     * written over in place was left cut short, and the tree half
     * patched, when the disk filled) */
    for (size_t i = 0; i < n; i++)
        if (files[i].now && stage_one(root, &files[i], &made) < 0) {
            tnd_error_prefix("nothing was changed");
            for (size_t k = made.n; k-- > 0;)
                tnd_beneath_remove(root, made.v[k], true, true);
            goto out;
        }
    for (size_t i = 0; i < n; i++)
        if (commit_one(root, &files[i]) < 0) {
            tnd_error_prefix("the tree is partly patched (%zu of %zu files "
                             "in place)",
                             i, n);
            goto out;
        }
    error = 0;
out:
    for (size_t k = 0; k < made.n; k++)
        free(made.v[k]);
    free(made.v);
    pending_free(files, n);
    tnd_edit_list_free(edits, nedits);
    close(root);
    return error;
}

/* ---- with git -------------------------------------------------------------
 */

int tnd_apply_can_commit(const char *repo)
{
    const char *argv[] = {"git", "rev-parse", "--is-inside-work-tree", NULL};
    char *out = NULL;
    int rc = tnd_git_run(&out, NULL, repo, argv, GIT_OUT_MAX);
    bool yes = rc == 0 && out && strncmp(out, "true", 4) == 0;

    free(out);
    if (!yes)
        return tnd_error_config(
            "--commit commits the approved change with git, but %s is %s; "
            "use --apply (it patches any directory) or run in a git work "
            "tree",
            repo,
            rc == TND_ENOTFOUND ? "not usable: git is not installed"
                                : "not in a git work tree");
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

/* argv with "git" and the given words, then "--" and the paths.
 * Caller frees the array. */
static const char **git_argv(const char *const *words, char **paths)
{
    size_t nw = 0, np = 0, k = 0;
    const char **argv;

    while (words[nw])
        nw++;
    while (paths && paths[np])
        np++;
    argv = tnd_xcalloc(nw + np + 3, sizeof(char *));
    argv[k++] = "git";
    for (size_t i = 0; i < nw; i++)
        argv[k++] = words[i];
    if (paths) {
        argv[k++] = "--";
        for (size_t i = 0; i < np; i++)
            argv[k++] = paths[i];
    }
    return argv;
}

static int git(char **out, const char *repo, const char *const *words,
               char **paths)
{
    const char **argv = git_argv(words, paths);
    int rc = tnd_git_run(out, NULL, repo, argv, GIT_OUT_MAX);

    free(argv);
    return rc;
}

/* Uncommitted changes of the user's in the files the patch touches: a
 * commit of them would carry those too. 0 when there are none. */
static int clean_paths(const char *repo, char **paths)
{
    const char *status[] = {"--literal-pathspecs",   "status",
                            "--porcelain",           "-z",
                            "--untracked-files=all", NULL};
    char *out = NULL;
    int rc = git(&out, repo, status, paths);

    if (rc == 0 && out && *out) {
        /* "XY PATH\0": name the first */
        rc = tnd_error_set("%s has changes of yours that are not committed, "
                           "and --commit commits only the patch; commit or "
                           "stash them first, or use --apply",
                           strlen(out) > 3 ? out + 3 : out);
    }
    free(out);
    return rc;
}

/* The user's index, for the paths the commit took, made to agree with
 * the commit (as `git commit --only` leaves it): else `git status` would
 * show the change staged backwards. Whatever else is staged stays. */
static int refresh_index(const char *repo, char **paths)
{
    const char *reset[] = {"--literal-pathspecs", "reset", "-q", NULL};

    if (git(NULL, repo, reset, paths) < 0)
        return tnd_error_set("committed, but git's index was not updated "
                             "for the files the commit took (%s); run "
                             "`git reset -q -- FILES` on them before your "
                             "next commit",
                             tnd_error_last());
    return 0;
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
    const char *write_tree[] = {"git", "write-tree", NULL};
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
        rc =
            tnd_git_run_index(tree, NULL, repo, index, write_tree, GIT_OUT_MAX);
    if (rc == 0 && !*tree)
        rc = tnd_error_set("git wrote no tree of the patch");
    if (rc == 0)
        (*tree)[strcspn(*tree, "\n")] = '\0';
    if (rc < 0) {
        free(*tree);
        *tree = NULL;
    }
    free(index);
    tnd_rundir_destroy(&tmp, false);
    free(runtime);
    free(dir);
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
        if (git(NULL, repo, update, NULL) < 0) {
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

    if ((rc = git(NULL, repo, check, NULL)) == 0)
        rc = git(NULL, repo, apply, NULL);
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
        if (commit_tree_of(&tree, repo, patch_file, prefix, base) < 0) {
            out->why = tnd_xasprintf(
                "git cannot make the commit's files of the patch, so "
                "nothing was changed (%s); a file git converts on checkout "
                "(eol=crlf, a filter in .gitattributes) cannot be committed "
                "by tandem yet: run with --apply and commit it yourself",
                tnd_error_last());
            goto done;
        }
    }
    if ((out->git ? apply_git(repo, patch_file, prefix)
                  : apply_own(repo, diff)) < 0) {
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
