/* Workspace copy, confined edit application, diff and revert (see
 * workspace.h). */
#include "orchestrator/workspace.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
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
#include "common/mirror.h"
#include "common/str.h"
#include "common/xalloc.h"
#include "orchestrator/search.h"
#include "proto/body.h"

typedef struct touched {
    char *path;
    char *base; /* content at the base; NULL when it did not exist */
    size_t base_len;
    char *now; /* content after the proposal; NULL when deleted */
    size_t now_len;
    mode_t mode;     /* of the base file, or 0644 */
    mode_t now_mode; /* after the proposal: mode, unless a mode change of
                        a diff under review set the execute bits */
} touched;

struct tnd_workspace {
    char *root;
    int root_fd; /* every write resolves beneath it (common/beneath.h) */
    const tnd_snapshot *base;
    tnd_mirror *copy; /* the tree, made equal to the base on reset */
    tnd_trash *trash; /* ROOT.trash: what a reset removes goes there */
    bool incremental;
    touched *files;
    size_t nfiles, afiles;
    char **paths; /* NULL-terminated view of files[].path */
    char **dirs;  /* directories the proposal created (relative), in
                     creation order, so revert can remove them again */
    size_t ndirs, adirs;
};

tnd_workspace *tnd_workspace_new(const tnd_snapshot *base, const char *dir,
                                 bool incremental)
{
    tnd_workspace *ws;
    tnd_mirror *copy;
    tnd_trash *trash;
    char *root, *trash_dir;

    /* checked first: the cleanup below must only remove our own copy */
    if (tnd_fs_exists(dir)) {
        tnd_error_set("cannot make a workspace in %s: it already exists", dir);
        return NULL;
    }
    if (!(copy = tnd_mirror_new(tnd_snapshot_path(base), dir)))
        return NULL;
    if (!(root = tnd_fs_realpath(dir))) {
        tnd_mirror_destroy(&copy, 1);
        return NULL;
    }
    /* beside the tree, on its filesystem: a reset moves what a build
     * made there, and the trash's thread removes it (see trash.h) */
    trash_dir = tnd_xasprintf("%s.trash", root);
    trash = tnd_trash_new(trash_dir);
    free(trash_dir);
    if (!trash) {
        free(root);
        tnd_mirror_destroy(&copy, 1);
        return NULL;
    }
    ws = tnd_xcalloc(1, sizeof(*ws));
    ws->root_fd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (ws->root_fd < 0) {
        tnd_error_sys("cannot open the workspace %s", root);
        free(root);
        free(ws);
        tnd_mirror_destroy(&copy, 1);
        tnd_trash_destroy(&trash);
        return NULL;
    }
    tnd_mirror_set_trash(copy, trash);
    ws->root = root;
    ws->copy = copy;
    ws->trash = trash;
    ws->base = base;
    ws->incremental = incremental;
    ws->paths = tnd_xcalloc(1, sizeof(char *));
    return ws;
}

static void forget(tnd_workspace *ws)
{
    for (size_t i = 0; i < ws->nfiles; i++) {
        free(ws->files[i].path);
        free(ws->files[i].base);
        free(ws->files[i].now);
    }
    ws->nfiles = 0;
    free(ws->paths);
    ws->paths = tnd_xcalloc(1, sizeof(char *));
}

void tnd_workspace_destroy(tnd_workspace **self_p, int remove)
{
    tnd_workspace *ws = self_p ? *self_p : NULL;

    if (!ws)
        return;
    tnd_mirror_destroy(&ws->copy, remove);
    tnd_trash_destroy(&ws->trash);
    forget(ws);
    for (size_t i = 0; i < ws->ndirs; i++)
        free(ws->dirs[i]);
    free(ws->dirs);
    free(ws->paths);
    free(ws->files);
    free(ws->root);
    close(ws->root_fd);
    free(ws);
    *self_p = NULL;
}

void tnd_workspace_stop_removals(tnd_workspace *self)
{
    if (self)
        tnd_trash_stop(self->trash);
}

const char *tnd_workspace_path(const tnd_workspace *self)
{
    return self->root;
}

const char *const *tnd_workspace_touched(const tnd_workspace *self)
{
    return (const char *const *)self->paths;
}

/* Refuse paths whose existing part leads outside the root through a
 * symlink, and targets that are symlinks or special files. A directory
 * may be there: a change can delete its files and put a file in its
 * place (its write fails if they are not all gone). */
static int confine(const tnd_workspace *ws, const char *rel)
{
    char *full = tnd_fs_join(ws->root, rel);
    char *dir = tnd_fs_dirname(full);
    char *real = NULL;
    size_t rootlen = strlen(ws->root);
    struct stat st;
    int error = 0;

    /* climb to the deepest ancestor that exists */
    while (!tnd_fs_exists(dir) && strlen(dir) > rootlen) {
        char *up = tnd_fs_dirname(dir);
        free(dir);
        dir = up;
    }
    real = realpath(dir, NULL);
    if (!real ||
        (strcmp(real, ws->root) != 0 &&
         (strncmp(real, ws->root, rootlen) != 0 || real[rootlen] != '/')))
        error = tnd_error_set("%s: the path leaves the repository through a "
                              "symbolic link",
                              rel);
    else if (lstat(full, &st) == 0 && !S_ISREG(st.st_mode) &&
             !S_ISDIR(st.st_mode))
        error = tnd_error_set("%s: %s; only regular files can be edited", rel,
                              S_ISLNK(st.st_mode) ? "is a symbolic link"
                                                  : "is not a regular file");
    free(real);
    free(dir);
    free(full);
    return error;
}

static touched *find(tnd_workspace *ws, const char *path)
{
    for (size_t i = 0; i < ws->nfiles; i++)
        if (strcmp(ws->files[i].path, path) == 0)
            return &ws->files[i];
    return NULL;
}

/* t->path as the base has it, into t->base and t->mode: opened beneath
 * the base, through no link. The workspace's own path was confined, but
 * with incremental on a build may have put a directory where the base
 * has a link (lnk -> /elsewhere), and the base read through it put a
 * file of the user's outside the repository into the diff, to the model
 * (a review found it). TND_ENOTFOUND when the base has no such file. */
static int read_base(tnd_workspace *ws, touched *t)
{
    int root =
        open(tnd_snapshot_path(ws->base), O_PATH | O_DIRECTORY | O_CLOEXEC);
    int fd, rc;
    struct stat st;

    if (root < 0)
        return tnd_error_sys("cannot open the base %s",
                             tnd_snapshot_path(ws->base));
    fd = tnd_beneath_open(root, t->path, O_RDONLY | O_NONBLOCK | O_NOCTTY, 0);
    close(root);
    /* a file of the path's name where a directory would be (a change
     * that makes the file docs a directory docs/) is no such file */
    if (fd < 0)
        return errno == ENOENT || errno == ENOTDIR ? TND_ENOTFOUND : -1;
    if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
        close(fd); /* a directory the change makes a file: none there */
        return TND_ENOTFOUND;
    }
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return tnd_error_set("%s: not a regular file in the repository; "
                             "only regular files can be edited",
                             t->path);
    }
    t->mode = st.st_mode & 07777;
    rc = tnd_fs_read_fd(&t->base, &t->base_len, fd, t->path, TND_BODY_MAX_FILE);
    close(fd);
    return rc;
}

/* The pending state of path, loaded from disk the first time. */
static int load(touched **out, tnd_workspace *ws, const char *path)
{
    touched *t = find(ws, path);
    int rc;

    if (t) {
        *out = t;
        return 0;
    }
    if (confine(ws, path) < 0)
        return -1;
    TND_GROW(ws->files, ws->afiles, ws->nfiles + 1);
    t = &ws->files[ws->nfiles++];
    memset(t, 0, sizeof(*t));
    t->path = tnd_xstrdup(path);
    t->mode = 0644;
    /* the base itself, not the workspace: with incremental on a build may
     * have rewritten a tracked file, and the diff must be against the base */
    rc = read_base(ws, t);
    if (rc < 0 && rc != TND_ENOTFOUND) {
        ws->nfiles--;
        free(t->path);
        return -1;
    }
    t->now_mode = t->mode;
    if (t->base) {
        t->now = tnd_xmalloc(t->base_len + 1);
        memcpy(t->now, t->base, t->base_len + 1);
        t->now_len = t->base_len;
    }
    *out = t;
    return 0;
}

static void set_now(touched *t, char *text, size_t len)
{
    free(t->now);
    t->now = text;
    t->now_len = len;
}

/* e's replacement into b. Its lines end in LF (a coder's edit format
 * has no CR; a diff of a CRLF checkout has none either); where the lines
 * it replaces end in CRLF, so do its, or a CRLF file came back with mixed
 * line ends. One whose text has a CR says its own. When the lines it
 * replaces end the file without a newline (the SEARCH's last one matched
 * the file's end), its last newline is left out too: a change of a
 * file's last line added a newline nobody asked for. */
static int put_replacement(tnd_buf *b, const tnd_edit *e, const char *text,
                           size_t start, size_t end, size_t len)
{
    const char *old = text + start;
    size_t old_len = end - start;
    bool at_end = end == len;
    /* a last line with no line end of its own: the one before says */
    bool crlf = !strchr(e->search, '\r') && !strchr(e->replace, '\r') &&
                (memmem(old, old_len, "\r\n", 2) != NULL ||
                 (at_end && !memchr(old, '\n', old_len) && start >= 2 &&
                  memcmp(text + start - 2, "\r\n", 2) == 0));
    size_t slen = strlen(e->search), rlen = strlen(e->replace);

    if (at_end && old_len > 0 && old[old_len - 1] != '\n' && slen > 0 &&
        e->search[slen - 1] == '\n' && rlen > 0 && e->replace[rlen - 1] == '\n')
        rlen--;
    if (!crlf)
        return tnd_buf_append(b, e->replace, rlen);
    for (size_t i = 0; i < rlen; i++)
        if ((e->replace[i] == '\n' && tnd_buf_append(b, "\r\n", 2) < 0) ||
            (e->replace[i] != '\n' && tnd_buf_append(b, &e->replace[i], 1) < 0))
            return -1;
    return 0;
}

static int apply_one(tnd_workspace *ws, const tnd_edit *e, size_t index)
{
    touched *t;
    size_t start = 0, end = 0;
    char *hint = NULL;
    tnd_search_result found;
    tnd_buf b;

    if (tnd_edit_path_check(e->path) < 0 || load(&t, ws, e->path) < 0) {
        tnd_error_prefix("edit %zu", index + 1);
        return -1;
    }
    switch (e->kind) {
    case TND_EDIT_WRITE:
        set_now(t, tnd_xstrdup(e->replace), strlen(e->replace));
        return 0;
    case TND_EDIT_DELETE:
        if (!t->now)
            return tnd_error_set("edit %zu deletes %s, which does not exist",
                                 index + 1, e->path);
        set_now(t, NULL, 0);
        return 0;
    case TND_EDIT_REPLACE:
        break;
    }
    if (e->line == 0 && !*e->search) {
        /* a coder's empty SEARCH: "create this file"; over one that is
         * there it replaced every line, and was approved */
        if (t->now)
            return tnd_error_set("edit %zu: an empty SEARCH creates a file, "
                                 "and %s exists: copy the lines to change "
                                 "into SEARCH, or rewrite the whole file "
                                 "with a FILE block",
                                 index + 1, e->path);
        set_now(t, tnd_xstrdup(e->replace), strlen(e->replace));
        return 0;
    }
    if (!t->now)
        return tnd_error_set("edit %zu changes %s, which does not exist (to "
                             "create a file use a FILE block)",
                             index + 1, e->path);
    if (tnd_str_is_binary(t->now, t->now_len))
        return tnd_error_set("edit %zu changes %s, which is a binary file",
                             index + 1, e->path);
    if (e->line > 0) {
        /* a diff's hunk: there, exactly, or not at all */
        if (!tnd_str_line_start(t->now, t->now_len, e->line, &start) ||
            !tnd_search_at(t->now, t->now_len, start, e->search, &end))
            return tnd_error_set("edit %zu: %s does not hold at line %ld the "
                                 "lines the hunk changes (the diff was not "
                                 "made against this tree)",
                                 index + 1, e->path, e->line);
    } else if ((found = tnd_search_find(t->now, t->now_len, e->search, &start,
                                        &end, &hint)) != TND_SEARCH_FOUND) {
        int error =
            found == TND_SEARCH_MANY
                ? tnd_error_set("edit %zu: the SEARCH text matches more than "
                                "one place in %s; include more surrounding "
                                "lines so it matches one",
                                index + 1, e->path)
                : tnd_error_set("edit %zu: the SEARCH text was not found in "
                                "%s; %s. SEARCH must copy the current lines "
                                "exactly",
                                index + 1, e->path, hint);
        free(hint);
        return error;
    }
    tnd_buf_init(&b, TND_BODY_MAX_FILE);
    if (tnd_buf_append(&b, t->now, start) < 0 ||
        put_replacement(&b, e, t->now, start, end, t->now_len) < 0 ||
        tnd_buf_append(&b, t->now + end, t->now_len - end) < 0) {
        tnd_buf_free(&b);
        return tnd_error_set("edit %zu makes %s larger than %d bytes",
                             index + 1, e->path, TND_BODY_MAX_FILE);
    }
    {
        size_t len;
        char *text = tnd_buf_detach(&b, &len);
        set_now(t, text, len);
    }
    return 0;
}

static void remember_dir(const char *rel, void *payload)
{
    tnd_workspace *ws = payload;

    TND_GROW(ws->dirs, ws->adirs, ws->ndirs + 1);
    ws->dirs[ws->ndirs++] = tnd_xstrdup(rel);
}

/* Write (or, content NULL, delete) a touched file, with mode. Each
 * operation resolves the path beneath the root at the moment it happens,
 * so a build that swapped a directory for a symlink since the file was
 * loaded makes it fail, not write outside. */
static int write_file(tnd_workspace *ws, const touched *t, const char *content,
                      size_t len, mode_t mode)
{
    char *dir = tnd_fs_dirname(t->path);
    int fd = -1, error = 0;

    if (!content) {
        error = tnd_beneath_remove(ws->root_fd, t->path, false, true);
        goto out;
    }
    if (strcmp(dir, ".") != 0 &&
        tnd_beneath_mkdirs(ws->root_fd, dir, remember_dir, ws) < 0) {
        error = -1;
        goto out;
    }
    fd = tnd_beneath_open(ws->root_fd, t->path, O_WRONLY | O_CREAT | O_TRUNC,
                          mode);
    if (fd < 0 && errno == EISDIR)
        error = tnd_error_set("%s: is a directory; only regular files can be "
                              "edited, and a file takes a directory's place "
                              "only when the change deletes every file in it",
                              t->path);
    if (fd < 0) {
        error = -1;
        goto out;
    }
    /* a file that was there keeps its mode through O_TRUNC */
    if (fchmod(fd, mode) < 0) {
        error = tnd_error_sys("cannot set the mode of %s", t->path);
        goto out;
    }
    for (size_t off = 0; off < len;) {
        ssize_t n = write(fd, content + off, len - off);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            error = tnd_error_sys("cannot write %s", t->path);
            goto out;
        }
        off += (size_t)n;
    }
out:
    if (fd >= 0 && close(fd) < 0 && error == 0)
        error = tnd_error_sys("cannot write %s", t->path);
    else if (error < 0 && !strstr(tnd_error_last(), t->path))
        tnd_error_prefix("cannot write %s", t->path);
    free(dir);
    return error;
}

/* Remove the directories above path that its removal left empty, as git
 * does: a file may take the place of one (a change that makes the
 * directory d the file d). One that holds anything stays. */
static void remove_emptied(tnd_workspace *ws, const char *path)
{
    char *dir = tnd_fs_dirname(path);

    while (strcmp(dir, ".") != 0 &&
           tnd_beneath_remove(ws->root_fd, dir, true, true) == 0) {
        char *up = tnd_fs_dirname(dir);
        free(dir);
        dir = up;
    }
    tnd_error_clear();
    free(dir);
}

/* Put back every file the last proposal touched, and remove the
 * directories it made (those a build has since put files in stay): the
 * files the base does not have first, then those directories, then the
 * base's files, so a file and a directory of one name can trade places. */
static int revert(tnd_workspace *self)
{
    int error = 0;

    for (size_t i = 0; i < self->nfiles; i++) {
        const touched *t = &self->files[i];
        if (!t->base && write_file(self, t, NULL, 0, t->mode) < 0)
            error = -1;
    }
    /* newest first, so children go before their parents; a directory a
     * build has since put files in stays */
    while (self->ndirs > 0) {
        char *dir = self->dirs[--self->ndirs];
        if (tnd_beneath_remove(self->root_fd, dir, true, true) < 0 &&
            errno != ENOTEMPTY && errno != EEXIST)
            error = -1;
        free(dir);
    }
    for (size_t i = 0; i < self->nfiles; i++) {
        const touched *t = &self->files[i];
        if (t->base && write_file(self, t, t->base, t->base_len, t->mode) < 0)
            error = -1;
    }
    forget(self);
    return error;
}

static int cmp_touched(const void *a, const void *b)
{
    return strcmp(((const touched *)a)->path, ((const touched *)b)->path);
}

/* The execute bits of path as change says, once the edits are in. */
static int set_exec(tnd_workspace *ws, const tnd_exec_change *change)
{
    touched *t;

    if (load(&t, ws, change->path) < 0)
        return -1;
    if (!t->now)
        return tnd_error_set("%s: its mode changes, but the change leaves "
                             "no such file",
                             change->path);
    t->now_mode = change->exec ? t->mode | (t->mode & 0444) >> 2
                               : t->mode & ~(mode_t)0111;
    return 0;
}

int tnd_workspace_apply(tnd_workspace *self, const tnd_edit *edits,
                        size_t count)
{
    return tnd_workspace_apply_exec(self, edits, count, NULL, 0);
}

int tnd_workspace_apply_exec(tnd_workspace *self, const tnd_edit *edits,
                             size_t count, const tnd_exec_change *modes,
                             size_t nmodes)
{
    if (self->nfiles > 0)
        return tnd_error_set("a proposal is already applied; revert it "
                             "first");
    if (count == 0 && nmodes == 0)
        return tnd_error_set("the proposal has no edits");
    for (size_t i = 0; i < count; i++) {
        if (apply_one(self, &edits[i], i) < 0) {
            forget(self);
            return -1;
        }
    }
    for (size_t i = 0; i < nmodes; i++) {
        if (set_exec(self, &modes[i]) < 0) {
            forget(self);
            return -1;
        }
    }
    if (self->nfiles > 1) /* qsort wants a pointer even for none */
        qsort(self->files, self->nfiles, sizeof(touched), cmp_touched);
    /* deletions first, and the directories they empty, so a file can
     * take a directory's place; then the writes */
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < self->nfiles; i++) {
            touched *t = &self->files[i];
            if ((pass == 0) != !t->now)
                continue;
            if (write_file(self, t, t->now, t->now_len, t->now_mode) < 0) {
                /* files not written yet still hold their base: putting
                 * the base back everywhere is right and simple */
                char *why = tnd_xstrdup(tnd_error_last());
                revert(self);
                tnd_error_set("%s", why);
                free(why);
                return -1;
            }
            if (!t->now)
                remove_emptied(self, t->path);
        }
    free(self->paths);
    self->paths = tnd_xcalloc(self->nfiles + 1, sizeof(char *));
    for (size_t i = 0; i < self->nfiles; i++)
        self->paths[i] = self->files[i].path;
    return 0;
}

char *tnd_workspace_diff(tnd_workspace *self)
{
    tnd_buf b;

    tnd_buf_init(&b, TND_BODY_MAX_DIFF);
    for (size_t i = 0; i < self->nfiles; i++) {
        const touched *t = &self->files[i];
        if (tnd_diff_file_exec(&b, t->path, t->base, t->base_len,
                               (t->mode & 0100) != 0, t->now, t->now_len,
                               (t->now_mode & 0100) != 0) < 0) {
            tnd_buf_free(&b);
            tnd_error_set("the change is larger than %d bytes as a diff",
                          TND_BODY_MAX_DIFF);
            return NULL;
        }
    }
    return tnd_buf_detach(&b, NULL);
}

int tnd_workspace_reset(tnd_workspace *self)
{
    int fd;

    if (self->incremental)
        return revert(self);
    /* the base again, exactly: what the last attempt and its checks wrote
     * is gone, whatever the project's build tracks (see common/mirror.h
     * for why only what changed is written again) */
    forget(self);
    for (size_t i = 0; i < self->ndirs; i++)
        free(self->dirs[i]);
    self->ndirs = 0;
    if (tnd_mirror_restore(self->copy, NULL) < 0) {
        tnd_error_prefix("cannot make a clean workspace for the next attempt");
        return -1;
    }
    /* a restore that made a whole new copy moved the old tree into the
     * trash: the next attempt's edits must go into the new one */
    fd = open(self->root, O_PATH | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return tnd_error_sys("cannot open the workspace %s", self->root);
    close(self->root_fd);
    self->root_fd = fd;
    return 0;
}

/* The real path of rel when it names a regular file inside the
 * workspace (see tnd_workspace_holds), else NULL. Caller frees. */
static char *resolved(const tnd_workspace *self, const char *rel)
{
    char *full, *real;
    size_t n = strlen(self->root);
    struct stat st;

    if (!*rel || *rel == '/' || !strcmp(rel, "..") || !strncmp(rel, "../", 3) ||
        strstr(rel, "/../") || tnd_str_ends_with(rel, "/.."))
        return NULL;
    full = tnd_fs_join(self->root, rel);
    real = realpath(full, NULL);
    free(full);
    if (real && strncmp(real, self->root, n) == 0 && real[n] == '/' &&
        stat(real, &st) == 0 && S_ISREG(st.st_mode))
        return real;
    free(real);
    return NULL;
}

bool tnd_workspace_holds(const tnd_workspace *self, const char *rel)
{
    char *real = resolved(self, rel);

    free(real);
    return real != NULL;
}

long tnd_workspace_lines(const tnd_workspace *self, const char *rel)
{
    char *real = resolved(self, rel);
    FILE *f = real ? fopen(real, "rb") : NULL;
    char chunk[8192];
    long lines = 0;
    size_t got;
    bool open_line = false; /* bytes after the last newline */

    free(real);
    if (!f)
        return -1;
    while ((got = fread(chunk, 1, sizeof(chunk), f)) > 0) {
        for (const char *p = chunk;
             (p = memchr(p, '\n', got - (size_t)(p - chunk))); p++)
            lines++;
        open_line = chunk[got - 1] != '\n';
    }
    if (ferror(f))
        lines = -1;
    else if (open_line)
        lines++;
    fclose(f);
    return lines;
}

bool tnd_workspace_incremental(const tnd_workspace *self)
{
    return self->incremental;
}
