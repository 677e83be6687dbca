/* The clean base of a task (see snapshot.h). */
#include "orchestrator/snapshot.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/error.h"
#include "common/fs.h"
#include "common/log.h"
#include "common/rmtree.h"
#include "common/str.h"
#include "common/xalloc.h"
#include "orchestrator/git.h"
#include "orchestrator/sparse.h"
#include "proto/tree.h"

/* Each of git's lists of paths (tracked, untracked): at most this many
 * bytes and entries */
#define LIST_CAP  (64 << 20)
#define MAX_FILES TND_TREE_MAX_FILES
/* How far a directory taken whole is counted, to say how many files it
 * holds (past it: "more than") */
#define COUNT_CAP ((size_t)MAX_FILES * 5)
/* The one listing of both: the two lists, and the tags of `-t -s` at
 * most ("H 100644 <64 hex digits> 0\t" on a tracked path, "? " on an
 * untracked one) */
#define BOTH_CAP ((size_t)2 * LIST_CAP + (size_t)MAX_FILES * (76 + 2))

struct tnd_snapshot {
    char *dir;
    tnd_snapshot_stats info;
};

static const char *const skip[] = {".git", ".tandem", NULL};

/* ---- git's lists ---------------------------------------------------------
 */

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* tandem's own state is never part of a task's tree. */
static bool ours(const char *path)
{
    return strncmp(path, ".tandem", 7) == 0 &&
           (path[7] == '\0' || path[7] == '/');
}

/* One of git's lists: paths borrowed from the buffer git wrote. */
typedef struct pathlist {
    const char **at;
    size_t n, alloc;
    size_t bytes; /* as `git ls-files -z` alone writes them */
} pathlist;

/* path (plen bytes, NUL-terminated) into l unless it is tandem's own;
 * -1 past LIST_CAP or MAX_FILES, in the words a list of its own had. */
static int push(pathlist *l, const char *path, size_t plen)
{
    l->bytes += plen + 1;
    if (l->bytes > LIST_CAP)
        return tnd_error_set("'git ls-files' wrote more than %d bytes",
                             LIST_CAP);
    if (plen == 0 || ours(path))
        return 0;
    if (l->n >= MAX_FILES)
        return tnd_error_set("git lists more than %d files; tandem works "
                             "on smaller trees",
                             MAX_FILES);
    TND_GROW(l->at, l->alloc, l->n + 1);
    l->at[l->n++] = path;
    return 0;
}

/* Sorted, without duplicates (an unmerged path is listed once per
 * stage). */
static void sort_unique(pathlist *l)
{
    size_t kept = 0;

    if (l->n)
        qsort(l->at, l->n, sizeof(*l->at), cmp_str);
    for (size_t i = 0; i < l->n; i++)
        if (kept == 0 || strcmp(l->at[kept - 1], l->at[i]) != 0)
            l->at[kept++] = l->at[i];
    l->n = kept;
}

/* The NUL-separated paths of `git ls-files -z` into l. */
static int split(pathlist *l, const char *buf, size_t len)
{
    int rc = 0;

    for (size_t at = 0; at < len && rc == 0;) {
        size_t plen = strnlen(buf + at, len - at);
        rc = push(l, buf + at, plen);
        at += plen + 1;
    }
    return rc;
}

/* Both lists from `git ls-files -z -t -s --cached --others`: an untracked
 * path is "? PATH", a tracked one "TAG MODE OID STAGE\tPATH" (TAG H, S
 * or M). *gitlink: a tracked path is a submodule (mode 160000). */
static int split_both(pathlist *tracked, pathlist *others, pathlist *sparse,
                      bool *gitlink, const char *buf, size_t len)
{
    int rc = 0;

    *gitlink = false;
    for (size_t at = 0; at < len && rc == 0;) {
        const char *p = buf + at, *tab;
        size_t plen = strnlen(p, len - at);
        at += plen + 1;
        if (plen == 0)
            continue;
        if (plen < 2 || p[1] != ' ' ||
            (p[0] != '?' && !(tab = memchr(p, '\t', plen))))
            return tnd_error_set("'git ls-files -t -s' wrote \"%.80s\", "
                                 "which tandem does not understand; "
                                 "report it with the output of "
                                 "'git --version'",
                                 p);
        if (p[0] == '?') {
            rc = push(others, p + 2, plen - 2);
        } else {
            if (strncmp(p + 2, "160000 ", 7) == 0)
                *gitlink = true;
            rc = push(tracked, tab + 1, plen - (size_t)(tab + 1 - p));
            /* skip-worktree: outside a sparse checkout */
            if (rc == 0 && p[0] == 'S' && tracked->n &&
                tracked->at[tracked->n - 1] == tab + 1) {
                TND_GROW(sparse->at, sparse->alloc, sparse->n + 1);
                sparse->at[sparse->n++] = tab + 1;
            }
        }
    }
    return rc;
}

/* What git wrote, and its lists of the paths in it. */
typedef struct git_lists {
    char *both; /* ls-files --cached --others */
    char *deep; /* ls-files --cached --recurse-submodules, when there is
                   a submodule */
    pathlist tracked, others;
    pathlist sparse; /* tracked, outside a sparse checkout */
} git_lists;

static void git_lists_free(git_lists *g)
{
    free(g->tracked.at);
    free(g->others.at);
    free(g->sparse.at);
    free(g->deep);
    free(g->both);
}

/* Whether repo is in a git work tree, after git ls-files failed there
 * saying why (in English: see tnd_git_try). git's own words when they
 * say it is not; otherwise `git rev-parse`, as before the lists were
 * taken in one run: a failure in other words (another git's, a
 * repository git refuses for its owner) must not be taken for an answer.
 * The error of the lists is kept. */
static bool in_work_tree(const char *repo, const char *why)
{
    const char *argv[] = {"git", "rev-parse", "--is-inside-work-tree", NULL};
    char *out = NULL, *saved;
    bool yes;

    if (strstr(why, "not a git repository") ||
        strstr(why, "must be run in a work tree"))
        return false;
    saved = tnd_xstrdup(tnd_error_last());
    yes = tnd_git_run(&out, NULL, repo, argv, 4096) == 0 &&
          strncmp(out, "true", 4) == 0;
    tnd_error_set("%s", saved);
    free(saved);
    free(out);
    return yes;
}

/* The submodules not initialised: `ls-files --recurse-submodules` lists
 * such a one's own path (an empty directory), an initialised one's
 * files. Counted in info, the first named, for the run to say: a build
 * that needs one failed with no word of why. */
static void empty_submodules(tnd_snapshot_stats *info, const pathlist *deep,
                             const char *both, size_t len)
{
    info->submodules_empty = 0;
    for (size_t at = 0; at < len;) {
        const char *p = both + at, *tab, *path;
        size_t plen = strnlen(p, len - at);

        at += plen + 1;
        if (plen < 9 || strncmp(p + 2, "160000 ", 7) != 0 ||
            !(tab = memchr(p, '\t', plen)))
            continue;
        path = tab + 1;
        if (!bsearch(&path, deep->at, deep->n, sizeof(*deep->at), cmp_str))
            continue;
        if (info->submodules_empty++ == 0)
            snprintf(info->submodule_empty, sizeof(info->submodule_empty), "%s",
                     path);
    }
}

/* git's lists of repo's tracked and untracked paths (the untracked
 * collapsed into their directories when collapse), sorted: 1; 0 when
 * git is not installed or repo is not in a work tree (why_whole says
 * which); -1. One git run, which --others makes fail outside a work
 * tree; a second only when there is a submodule, as --recurse-submodules
 * does not go with --others. */
static int list_files(git_lists *g, const char *repo, bool collapse,
                      tnd_snapshot_stats *info)
{
    const char *both[] = {"git",
                          "ls-files",
                          "-z",
                          "-t",
                          "-s",
                          "--cached",
                          "--others",
                          "--exclude-standard",
                          collapse ? "--directory" : NULL,
                          NULL};
    const char *deep[] = {
        "git", "ls-files", "-z", "--cached", "--recurse-submodules", NULL};
    char *why = NULL;
    size_t len = 0, both_len;
    bool gitlink;
    int rc = tnd_git_try(&g->both, &len, &why, repo, both, BOTH_CAP);

    /* a bare repository's files taken whole went to the model, and an
     * edit of its hooks or config was applied there */
    if (rc < 0 && why && strstr(why, "must be run in a work tree") &&
        tnd_git_in_git_dir(repo)) {
        free(why);
        return tnd_error_config(TND_GIT_DIR_WORDS, repo);
    }
    if (rc == TND_ENOTFOUND || (rc < 0 && why && !in_work_tree(repo, why))) {
        snprintf(info->why_whole, sizeof(info->why_whole), "%s",
                 rc == TND_ENOTFOUND
                     ? "git is not installed, so every file is copied"
                     : "not in a git work tree, so every file is copied");
        free(why);
        tnd_error_clear();
        return 0;
    }
    free(why);
    if (rc < 0 || split_both(&g->tracked, &g->others, &g->sparse, &gitlink,
                             g->both, len) < 0)
        return -1;
    both_len = len;
    if (gitlink) {
        g->tracked.n = g->tracked.bytes = 0;
        if (tnd_git_run(&g->deep, &len, repo, deep, LIST_CAP) < 0 ||
            split(&g->tracked, g->deep, len) < 0)
            return -1;
    }
    sort_unique(&g->tracked);
    sort_unique(&g->others);
    if (gitlink)
        empty_submodules(info, &g->tracked, g->both, both_len);
    return 1;
}

/* ---- copying one path at a time, without following symlinks ------------
 */

typedef struct copier {
    int root;   /* the repository */
    int dir_fd; /* the directory of the last path copied... */
    char *dir;  /* ...relative to root ("" for root itself) */
    char *made; /* the last destination directory made, relative */
    const char *dst;
    size_t budget;
    tnd_snapshot_stats *info;
} copier;

static bool bad_component(const char *s, size_t n)
{
    return n == 0 || (n == 1 && s[0] == '.') ||
           (n == 2 && s[0] == '.' && s[1] == '.');
}

/* The directory rel (relative to the root) opened component by
 * component with O_NOFOLLOW; -1 with errno when it is missing, leads
 * through a symlink (ELOOP, ENOTDIR) or cannot be opened. Borrowed. */
static int open_dir(copier *c, const char *rel)
{
    int fd = c->root;

    if (c->dir && strcmp(c->dir, rel) == 0)
        return c->dir_fd;
    if (c->dir_fd >= 0 && c->dir_fd != c->root)
        close(c->dir_fd);
    free(c->dir);
    c->dir = NULL;
    c->dir_fd = -1;
    for (const char *p = rel; *p;) {
        const char *slash = strchr(p, '/');
        size_t n = slash ? (size_t)(slash - p) : strlen(p);
        char name[NAME_MAX + 1];
        int next;
        if (bad_component(p, n) || n > NAME_MAX) {
            errno = EINVAL;
            next = -1;
        } else {
            memcpy(name, p, n);
            name[n] = '\0';
            next = openat(fd, name,
                          O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
        }
        if (fd != c->root) {
            int saved = errno;
            close(fd);
            errno = saved;
        }
        if (next < 0)
            return -1;
        fd = next;
        p += n;
        if (*p == '/')
            p++;
    }
    c->dir = tnd_xstrdup(rel);
    c->dir_fd = fd;
    return fd;
}

/* The destination's directory for rel's parent, made once. */
static int make_parent(copier *c, const char *parent)
{
    char *full;
    int rc;

    if (!*parent || (c->made && strcmp(c->made, parent) == 0))
        return 0;
    full = tnd_fs_join(c->dst, parent);
    rc = tnd_fs_mkdirs(full, 0755);
    free(full);
    if (rc == 0) {
        free(c->made);
        c->made = tnd_xstrdup(parent);
    }
    return rc;
}

static void skipped(copier *c, const char *path, const char *why)
{
    /* a few by name; the description gives the count */
    if (c->info->skipped++ < 5)
        tnd_log_warn("%s is not copied into the workspace: %s", path, why);
}

static int copy_path(copier *c, const char *path)
{
    const char *slash = strrchr(path, '/');
    char *parent =
        slash ? tnd_xstrndup(path, (size_t)(slash - path)) : tnd_xstrdup("");
    const char *leaf = slash ? slash + 1 : path;
    char *target = NULL;
    struct stat st;
    int dfd, fd, rc = 0;

    if (bad_component(leaf, strlen(leaf))) {
        skipped(c, path, "not a plain relative path");
        goto out;
    }
    if ((dfd = open_dir(c, parent)) < 0) {
        if (errno != ENOENT)
            skipped(c, path, "a directory on its way is a symbolic link");
        goto out; /* deleted in the working tree: the change is the user's */
    }
    if (fstatat(dfd, leaf, &st, AT_SYMLINK_NOFOLLOW) < 0) {
        if (errno != ENOENT)
            rc = tnd_error_sys("cannot read %s", path);
        goto out;
    }
    if (S_ISLNK(st.st_mode)) {
        char link[PATH_MAX];
        ssize_t n = readlinkat(dfd, leaf, link, sizeof(link) - 1);
        if (n < 0) {
            rc = tnd_error_sys("cannot read the link %s", path);
            goto out;
        }
        link[n] = '\0';
        target = tnd_fs_join(c->dst, path);
        if ((rc = make_parent(c, parent)) == 0 && symlink(link, target) < 0)
            rc = tnd_error_sys("cannot create the link %s", target);
        goto out;
    }
    if (!S_ISREG(st.st_mode)) {
        /* a submodule git does not recurse into, or a path that is a
         * directory now */
        if (!S_ISDIR(st.st_mode))
            skipped(c, path, "not a regular file");
        goto out;
    }
    if ((size_t)st.st_size > c->budget) {
        rc = tnd_error_set("the repository's files add up to more than the "
                           "workspace limit (at %s); raise "
                           "orchestrator.workspace_max_mb",
                           path);
        goto out;
    }
    /* O_NONBLOCK: should it have become a FIFO since fstatat, no hang */
    fd = openat(dfd, leaf, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        rc = tnd_error_sys("cannot read %s", path);
        if (fd >= 0)
            close(fd);
        goto out;
    }
    target = tnd_fs_join(c->dst, path);
    if ((rc = make_parent(c, parent)) == 0)
        rc = tnd_fs_copy_fd(fd, target, &st);
    close(fd);
    if (rc == 0) {
        c->budget -= (size_t)st.st_size;
        c->info->files++;
        c->info->bytes += (size_t)st.st_size;
    }
out:
    free(target);
    free(parent);
    return rc;
}

/* Whether the n paths' files fit in max_bytes, from their sizes alone,
 * before anything is copied: a tree that does not fit fails at once,
 * not after copying most of it. A path that cannot be looked at counts
 * 0 here; copy_path says what is wrong with it. */
static int check_size(const char *repo, const char **paths, size_t n,
                      size_t max_bytes)
{
    int root = open(repo, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    size_t total = 0, files = 0;
    struct stat st;

    if (root < 0)
        return tnd_error_sys("cannot open %s", repo);
    for (size_t i = 0; i < n; i++)
        if (fstatat(root, paths[i], &st, AT_SYMLINK_NOFOLLOW) == 0 &&
            S_ISREG(st.st_mode)) {
            total += (size_t)st.st_size;
            files++;
        }
    close(root);
    if (total > max_bytes)
        return tnd_error_set("the repository's %zu files add up to %zu MiB, "
                             "more than the workspace limit of %zu MiB; "
                             "raise orchestrator.workspace_max_mb",
                             files, (total + (1 << 20) - 1) >> 20,
                             max_bytes >> 20);
    return 0;
}

static int copy_list(const char *repo, const char *dst, const char **paths,
                     size_t n, size_t max_bytes, tnd_snapshot_stats *info)
{
    copier c = {.dir_fd = -1, .dst = dst, .budget = max_bytes, .info = info};
    int rc = 0;

    c.root = open(repo, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (c.root < 0)
        return tnd_error_sys("cannot open %s", repo);
    for (size_t i = 0; i < n && rc == 0; i++)
        rc = copy_path(&c, paths[i]);
    if (c.dir_fd >= 0 && c.dir_fd != c.root)
        close(c.dir_fd);
    close(c.root);
    free(c.dir);
    free(c.made);
    return rc;
}

/* ---- the two ways -------------------------------------------------------
 */

/* The files of l (within max bytes, checked first) copied into dir,
 * which is made. 0, or -1 with the error set. */
static int take_list(const char *repo, const char *dir, const pathlist *l,
                     size_t max, tnd_snapshot_stats *info)
{
    if (check_size(repo, l->at, l->n, max) < 0)
        return -1;
    if (mkdir(dir, 0700) < 0)
        return tnd_error_sys("cannot create directory %s", dir);
    return copy_list(repo, dir, l->at, l->n, max, info);
}

/* 1 when the tracked files were copied; 0 when the caller takes the
 * directory whole (why_whole says why); -1. */
static int from_git(const char *repo, const char *dir,
                    const tnd_snapshot_options *o, tnd_snapshot_stats *info)
{
    git_lists g;
    int rc;

    memset(&g, 0, sizeof(g));
    if ((rc = list_files(&g, repo, !o->include_untracked, info)) <= 0)
        goto out;
    if (g.tracked.n == 0 && !o->include_untracked) {
        /* the untracked files one by one, not their directories */
        git_lists_free(&g);
        memset(&g, 0, sizeof(g));
        if ((rc = list_files(&g, repo, false, info)) <= 0)
            goto out;
    }
    if (g.tracked.n == 0 && g.others.n == 0) {
        snprintf(info->why_whole, sizeof(info->why_whole),
                 "git tracks none of its files, so every file is copied");
        rc = 0;
        goto out;
    }
    if (g.tracked.n == 0) {
        /* a new repository (git init, nothing added yet): its files
         * but not those its .gitignore names (a .env with a key went to
         * the model) */
        snprintf(info->why_whole, sizeof(info->why_whole),
                 "git tracks none of its files, so the untracked ones are "
                 "copied (not those .gitignore names)");
        rc = take_list(repo, dir, &g.others, o->max_bytes, info);
        rc = rc < 0 ? rc : 1;
        goto out;
    }
    if (o->include_untracked && g.tracked.n + g.others.n > MAX_FILES) {
        /* each list is within the limit, but both are copied */
        rc = tnd_error_set("git lists %zu tracked and %zu untracked files, "
                           "more than the %d a task's tree may hold; add "
                           "the generated ones to .gitignore, or leave the "
                           "untracked ones out (workspace.include_untracked: "
                           "false)",
                           g.tracked.n, g.others.n, MAX_FILES);
        goto out;
    }
    info->git = true;
    info->untracked = g.others.n;
    info->untracked_included = o->include_untracked;
    rc = take_list(repo, dir, &g.tracked, o->max_bytes, info);
    if (rc == 0 && g.sparse.n) {
        size_t files, bytes;
        rc = tnd_sparse_take(&files, &bytes, &info->sparse_absent, &info->lfs,
                             repo, dir, g.sparse.at, g.sparse.n,
                             o->max_bytes - info->bytes);
        info->files += files;
        info->bytes += bytes;
        info->sparse = files;
    }
    if (rc == 0 && o->include_untracked)
        rc = copy_list(repo, dir, g.others.at, g.others.n,
                       o->max_bytes - info->bytes, info);
    rc = rc < 0 ? rc : 1;
out:
    if (rc < 0)
        tnd_error_prefix("cannot take the repository's files");
    git_lists_free(&g);
    return rc;
}

/* repo moved to dir, without the entries a copy skips: 0; 1 when it
 * cannot be moved (another file system: it is copied instead). */
static int adopt(const char *repo, const char *dir)
{
    int rc = 0;

    if (rename(repo, dir) < 0)
        return 1;
    for (size_t i = 0; rc == 0 && skip[i]; i++) {
        char *path = tnd_fs_join(dir, skip[i]);
        rc = tnd_fs_rmtree(path);
        free(path);
    }
    return rc;
}

/* Whether the tree at root (the directory taken whole: repo, or dir once
 * an export is moved there) has files and links enough for a task, as
 * the reviewers' tree is made of them (orchestrator/content.c): refused
 * before anything is copied. A plain directory of 200,000 to 1,000,000
 * files was copied whole, then failed at the first audit. */
static int count_whole(const char *root, const char *repo,
                       const tnd_snapshot_stats *info)
{
    size_t n;

    if (tnd_fs_count(&n, root, skip, COUNT_CAP) < 0)
        return -1;
    if (n <= MAX_FILES)
        return 0;
    return tnd_error_set(
        "%s holds %s%zu files and symbolic links (%s), "
        "more than the %d a task's tree may hold; give "
        "--repo the smaller directory the task is about, "
        "or make it a git work tree, where only the files "
        "git tracks are taken (leave generated and vendored "
        "ones untracked)",
        repo, n > COUNT_CAP ? "more than " : "", n > COUNT_CAP ? COUNT_CAP : n,
        info->why_whole[0] ? info->why_whole : "every file is copied",
        MAX_FILES);
}

static int whole(const char *repo, const char *dir,
                 const tnd_snapshot_options *o, tnd_snapshot_stats *info)
{
    char **list = NULL;
    size_t n = 0;
    int moved;

    moved = o->adopt ? adopt(repo, dir) : 1;
    if (moved >= 0 && count_whole(moved == 0 ? dir : repo, repo, info) < 0)
        return -1;
    if (moved < 0 ||
        (moved > 0 && tnd_fs_copytree(repo, dir, skip, o->max_bytes) < 0))
        goto limit;
    if (tnd_fs_list(&list, &n, dir, NULL, MAX_FILES) == 0) {
        info->files = n;
        for (size_t i = 0; i < n; i++) {
            char *full = tnd_fs_join(dir, list[i]);
            struct stat st;
            if (lstat(full, &st) == 0)
                info->bytes += (size_t)st.st_size;
            free(full);
        }
    } else if (moved == 0) {
        return -1; /* the limit below is not known to hold */
    }
    tnd_str_list_free(&list);
    /* what the copy checks as it goes, for a tree moved whole */
    if (moved == 0 && info->bytes > o->max_bytes) {
        tnd_error_set("the tree is larger than the copy limit (%zu bytes)",
                      info->bytes);
        goto limit;
    }
    tnd_error_clear();
    return 0;
limit:
    /* name the setting, as a git tree's copy does (a review said only
     * "the copy limit") */
    if (strstr(tnd_error_last(), "larger than the copy limit"))
        tnd_error_prefix("the files add up to more than the workspace "
                         "limit; raise orchestrator.workspace_max_mb");
    return -1;
}

tnd_snapshot *tnd_snapshot_new(const char *repo, const char *dir,
                               const tnd_snapshot_options *o)
{
    tnd_snapshot *s;
    tnd_snapshot_stats info;
    int rc = 0;

    memset(&info, 0, sizeof(info));
    /* checked first: the cleanup below must only remove our own copy */
    if (tnd_fs_exists(dir)) {
        tnd_error_set("cannot take a snapshot into %s: it already exists", dir);
        return NULL;
    }
    if (o->whole)
        snprintf(info.why_whole, sizeof(info.why_whole), "an exported tree");
    else
        rc = from_git(repo, dir, o, &info);
    if (rc == 0)
        rc = whole(repo, dir, o, &info);
    if (rc < 0) {
        tnd_lfs_left_free(&info.lfs);
        tnd_fs_rmtree(dir);
        return NULL;
    }
    s = tnd_xcalloc(1, sizeof(*s));
    if (!(s->dir = tnd_fs_realpath(dir))) {
        tnd_lfs_left_free(&info.lfs);
        tnd_fs_rmtree(dir);
        free(s);
        return NULL;
    }
    s->info = info;
    return s;
}

void tnd_snapshot_destroy(tnd_snapshot **self_p, int remove)
{
    tnd_snapshot *s = self_p ? *self_p : NULL;

    if (!s)
        return;
    if (remove)
        tnd_fs_rmtree(s->dir);
    tnd_lfs_left_free(&s->info.lfs);
    free(s->dir);
    free(s);
    *self_p = NULL;
}

const char *tnd_snapshot_path(const tnd_snapshot *self)
{
    return self->dir;
}

const tnd_snapshot_stats *tnd_snapshot_about(const tnd_snapshot *self)
{
    return &self->info;
}

char *tnd_snapshot_describe(const tnd_snapshot *self)
{
    const tnd_snapshot_stats *i = &self->info;
    char size[32], *text, *with;

    if (i->bytes >= 10u << 20)
        snprintf(size, sizeof(size), "%zu MiB", i->bytes >> 20);
    else if (i->bytes >= 10u << 10)
        snprintf(size, sizeof(size), "%zu KiB", i->bytes >> 10);
    else
        snprintf(size, sizeof(size), "%zu bytes", i->bytes);
    if (!i->git)
        return tnd_xasprintf("%zu files (%s): %s", i->files, size,
                             i->why_whole);
    if (i->untracked_included)
        text = tnd_xasprintf("%zu files (%s): tracked, and %zu untracked "
                             "(workspace.include_untracked)",
                             i->files, size, i->untracked);
    else if (i->untracked)
        text = tnd_xasprintf("%zu tracked files (%s); %zu untracked path%s "
                             "left out (workspace.include_untracked: true "
                             "brings them in)",
                             i->files, size, i->untracked,
                             i->untracked == 1 ? "" : "s");
    else
        text = tnd_xasprintf("%zu tracked files (%s)", i->files, size);
    if (i->skipped) {
        with = tnd_xasprintf("%s; %zu tracked path%s not copied (behind a "
                             "symbolic link, or not a file)",
                             text, i->skipped, i->skipped == 1 ? "" : "s");
        free(text);
        text = with;
    }
    if (i->sparse) {
        with = tnd_xasprintf("%s; %zu outside the sparse checkout, written "
                             "from git's index",
                             text, i->sparse);
        free(text);
        text = with;
    }
    if (i->sparse_absent) {
        with = tnd_xasprintf("%s; %zu outside the sparse checkout left out: "
                             "this partial clone does not have them, and "
                             "tandem never fetches (git sparse-checkout add "
                             "their directories to fetch them)",
                             text, i->sparse_absent);
        free(text);
        text = with;
    }
    if (i->submodules_empty == 1) {
        with = tnd_xasprintf("%s; submodule %s is not initialised, so its "
                             "directory is empty (git submodule update "
                             "--init %s)",
                             text, i->submodule_empty, i->submodule_empty);
        free(text);
        text = with;
    } else if (i->submodules_empty > 1) {
        with = tnd_xasprintf("%s; %zu submodules are not initialised, so "
                             "their directories are empty (%s and more: git "
                             "submodule update --init)",
                             text, i->submodules_empty, i->submodule_empty);
        free(text);
        text = with;
    }
    return text;
}

json_object *tnd_snapshot_json(const tnd_snapshot *self, bool incremental)
{
    const tnd_snapshot_stats *i = &self->info;
    json_object *w = json_object_new_object();

    json_object_object_add(
        w, "source", json_object_new_string(i->git ? "git" : "directory"));
    json_object_object_add(w, "files",
                           json_object_new_int64((int64_t)i->files));
    json_object_object_add(w, "bytes",
                           json_object_new_int64((int64_t)i->bytes));
    json_object_object_add(w, "untracked",
                           json_object_new_int64((int64_t)i->untracked));
    json_object_object_add(w, "include_untracked",
                           json_object_new_boolean(i->untracked_included));
    json_object_object_add(w, "skipped",
                           json_object_new_int64((int64_t)i->skipped));
    json_object_object_add(w, "incremental",
                           json_object_new_boolean(incremental));
    return w;
}
