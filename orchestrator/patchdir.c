/* Tandem's own strict applier (see patchdir.h): the patch becomes edits
 * (unidiff.c), every edit is worked out in memory on the files as they
 * are, and only then are files written, each resolved beneath the
 * directory (common/beneath.h). */
#include "orchestrator/patchdir.h"

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
#include "common/str.h"
#include "common/xalloc.h"
#include "orchestrator/unidiff.h"

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
int tnd_patchdir_apply(const char *repo, const char *diff)
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
