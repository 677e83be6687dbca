/* The submodules of an exported commit, checked out (see gitlinks.h). */
#include "orchestrator/gitlinks.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/error.h"
#include "common/fs.h"
#include "common/str.h"
#include "common/xalloc.h"
#include "orchestrator/git.h"
#include "orchestrator/lfs.h"
#include "proto/code.h"

#define GIT_OUT_MAX (1024 * 1024)
#define DEPTH_MAX   4 /* submodules of submodules, so deep */

/* note += "; " what (what is freed). */
static void say(char **note, char *what)
{
    char *was = *note;

    *note = was ? tnd_xasprintf("%s; %s", was, what) : tnd_xstrdup(what);
    free(was);
    free(what);
}

/* The name .gitmodules (under base) gives the submodule at path, or
 * NULL. Caller frees. */
static char *name_of(const char *base, const char *path, const char *dir)
{
    char *file = tnd_fs_join(base, ".gitmodules"), *out = NULL, *name = NULL;
    const char *argv[] = {"git",
                          "config",
                          "-f",
                          file,
                          "-z",
                          "--get-regexp",
                          "^submodule\\..*\\.path$",
                          NULL};
    size_t len = 0;

    if (tnd_git_run_alone(&out, &len, dir, NULL, argv, GIT_OUT_MAX) < 0)
        tnd_error_clear(); /* no entry, or no such file */
    for (size_t at = 0; out && at < len;) {
        char *entry = out + at, *nl = strchr(entry, '\n');
        size_t klen = nl ? (size_t)(nl - entry) : 0;

        at += strlen(entry) + 1;
        /* "submodule.NAME.path\nVALUE" */
        if (nl && klen > 15 && strcmp(nl + 1, path) == 0) {
            name = tnd_xasprintf("%.*s", (int)(klen - 15), entry + 10);
            break;
        }
    }
    free(out);
    free(file);
    /* a name is a directory under modules/: nothing that leaves it */
    if (name && (tnd_edit_path_check(name) < 0 || strstr(name, ".."))) {
        tnd_error_clear();
        free(name);
        name = NULL;
    }
    return name;
}

/* The git directory of the submodule at path: its work tree's (worktree
 * may be NULL), else modules/NAME under modules. NULL when neither is
 * there: not initialised. Caller frees. */
static char *git_dir_of(const char *worktree, const char *modules,
                        const char *base, const char *path, const char *dir)
{
    const char *argv[] = {"git", "rev-parse", "--absolute-git-dir", NULL};
    char *wt = worktree ? tnd_fs_join(worktree, path) : NULL;
    char *dot = wt ? tnd_fs_join(wt, ".git") : NULL, *gd = NULL, *name;
    struct stat st;

    if (dot && lstat(dot, &st) == 0 &&
        tnd_git_run_alone(&gd, NULL, wt, NULL, argv, 4096) == 0 && gd)
        tnd_str_trim(gd);
    tnd_error_clear();
    free(wt);
    free(dot);
    if (gd && *gd)
        return gd;
    free(gd);
    gd = NULL;
    if (modules && (name = name_of(base, path, dir))) {
        gd = tnd_fs_join(modules, name);
        free(name);
        if (!tnd_fs_is_dir(gd)) {
            free(gd);
            gd = NULL;
        }
    }
    return gd;
}

/* One export's: what it says, where it goes, its scratch directory */
typedef struct exporting {
    char **note;
    tnd_lfs_left *lfs; /* its Git LFS files left as their pointers */
    const char *top;   /* the export's base: the top's tree */
    const char *dir;
} exporting;

static int export_tree(const exporting *ex, const char *worktree,
                       const char *git_dir, const char *modules,
                       const char *index, const char *base, int depth);

/* The submodule at path, commit id, into base/path from its repository.
 * Its Git LFS files are written as the top's are (lfs.h): git-lfs never
 * sees one whose object is not here. */
static int export_one(const exporting *ex, const char *worktree,
                      const char *modules, const char *base, const char *path,
                      const char *id, int depth)
{
    char **note = ex->note;
    const char *dir = ex->dir;
    char *gd = git_dir_of(worktree, modules, base, path, dir), *gd_opt, *index,
         *prefix, *into, *sub_wt, *sub_modules;
    const char *read_tree[] = {
        "git", "-c", "protocol.allow=never", NULL, "read-tree", id, NULL};
    const char *checkout[] = {"git",       "-c", "protocol.allow=never",
                              TND_LFS_OFF, NULL, "checkout-index",
                              "-a",        "-f", NULL,
                              NULL};
    int rc;

    if (!gd) {
        say(note, tnd_xasprintf("submodule %s is not initialised, so its "
                                "directory is empty (git submodule update "
                                "--init %s would fetch it; tandem never "
                                "fetches)",
                                path, path));
        return 0;
    }
    read_tree[3] = checkout[9] = gd_opt = tnd_xasprintf("--git-dir=%s", gd);
    index = tnd_xasprintf("%s/gitlink-%d.index", dir, depth);
    into = tnd_fs_join(base, path);
    checkout[13] = prefix = tnd_xasprintf("--prefix=%s/", into);
    rc = tnd_git_run_alone(NULL, NULL, dir, index, read_tree, GIT_OUT_MAX);
    if (rc < 0) {
        tnd_error_clear();
        say(note, tnd_xasprintf("submodule %s: its commit %.12s is not in its "
                                "repository on this machine, so its "
                                "directory is empty (git submodule update "
                                "would fetch it; tandem never fetches)",
                                path, id));
        rc = 0;
    } else {
        rc = tnd_git_run_alone(NULL, NULL, dir, index, checkout, GIT_OUT_MAX);
        if (rc == 0)
            rc = tnd_lfs_smudge_alone(ex->lfs, gd_opt, dir, index, into,
                                      into + strlen(ex->top) + 1);
        sub_wt = worktree ? tnd_fs_join(worktree, path) : NULL;
        sub_modules = tnd_fs_join(gd, "modules");
        if (rc == 0)
            rc = export_tree(ex, sub_wt, gd, sub_modules, index, into,
                             depth + 1);
        free(sub_wt);
        free(sub_modules);
    }
    unlink(index);
    free(index);
    free(into);
    free(prefix);
    free(gd_opt);
    free(gd);
    return rc;
}

/* The gitlinks of the tree in index, each into base; git_dir is the
 * repository's (NULL: the work tree's, the top). */
static int export_tree(const exporting *ex, const char *worktree,
                       const char *git_dir, const char *modules,
                       const char *index, const char *base, int depth)
{
    char **note = ex->note;
    const char *dir = ex->dir;
    char *gd_opt = git_dir ? tnd_xasprintf("--git-dir=%s", git_dir) : NULL;
    const char *argv[] = {"git",
                          gd_opt ? gd_opt : "ls-files",
                          gd_opt ? "ls-files" : "-s",
                          gd_opt ? "-s" : "-z",
                          gd_opt ? "-z" : NULL,
                          NULL};
    char *gitmodules = tnd_fs_join(base, ".gitmodules"), *out = NULL;
    size_t len = 0;
    int rc = 0;

    /* no .gitmodules, no submodule to find: one stat, no git */
    if (!tnd_fs_exists(gitmodules) || depth >= DEPTH_MAX) {
        if (tnd_fs_exists(gitmodules))
            say(note, tnd_xasprintf("submodules nested more than %d deep are "
                                    "left empty",
                                    DEPTH_MAX));
        free(gitmodules);
        free(gd_opt);
        return 0;
    }
    free(gitmodules);
    /* the top's git as the export's; a submodule's by --git-dir alone */
    if ((git_dir
             ? tnd_git_run_alone(&out, &len, dir, index, argv, 64 * GIT_OUT_MAX)
             : tnd_git_run_index(&out, &len, worktree, index, argv,
                                 64 * GIT_OUT_MAX)) < 0) {
        free(gd_opt);
        return -1;
    }
    /* "160000 ID 0\tPATH\0" */
    for (size_t at = 0; rc == 0 && at < len;) {
        char *entry = out + at, *tab = strchr(entry, '\t'), *sp;

        at += strlen(entry) + 1;
        if (strncmp(entry, "160000 ", 7) != 0 || !tab)
            continue;
        sp = strchr(entry + 7, ' ');
        if (!sp || sp > tab)
            continue;
        *sp = '\0';
        if (tnd_edit_path_check(tab + 1) < 0) {
            tnd_error_clear();
            continue;
        }
        rc = export_one(ex, worktree, modules, base, tab + 1, entry + 7, depth);
    }
    free(out);
    return rc;
}

int tnd_gitlinks_export(char **note, tnd_lfs_left *lfs, const char *repo,
                        const char *index, const char *base, const char *dir)
{
    exporting ex = {note, lfs, base, dir};
    const char *argv[] = {"git", "rev-parse", "--git-path", "modules", NULL};
    char *gitmodules = tnd_fs_join(base, ".gitmodules"), *out = NULL,
         *modules = NULL;
    int rc;

    *note = NULL;
    if (!tnd_fs_exists(gitmodules)) {
        free(gitmodules);
        return 0;
    }
    free(gitmodules);
    if (tnd_git_run(&out, NULL, repo, argv, 4096) < 0 || !out) {
        free(out);
        return -1;
    }
    tnd_str_trim(out);
    modules = out[0] == '/' ? tnd_xstrdup(out) : tnd_fs_join(repo, out);
    rc = export_tree(&ex, repo, NULL, modules, index, base, 0);
    free(out);
    free(modules);
    return rc;
}

char **tnd_gitlinks_dirty(const char *repo)
{
    /* git's own settings say which submodules to look into (a
     * submodule.NAME.ignore the user set is heard); untracked files are
     * left out, as they are of the review */
    const char *argv[] = {
        "git",          "--no-optional-locks", /* the index unwritten */
        "status",       "--porcelain=v2",
        "-z",           "--untracked-files=no",
        "--no-renames", NULL};
    char *gitmodules = tnd_fs_join(repo, ".gitmodules"), *out = NULL, **list;
    size_t len = 0, n = 0, alloc = 0;

    /* no .gitmodules, no submodule: one stat, no git */
    if (!tnd_fs_exists(gitmodules)) {
        free(gitmodules);
        return NULL;
    }
    free(gitmodules);
    if (tnd_git_run(&out, &len, repo, argv, 64 * GIT_OUT_MAX) < 0) {
        tnd_error_clear(); /* a note, never a reason to stop */
        free(out);
        return NULL;
    }
    list = NULL;
    /* "1 XY SUB MH MI MW HH HI PATH\0", SUB "S.M." for a submodule whose
     * tracked files changed in its own work tree */
    for (size_t at = 0; out && at < len;) {
        char *entry = out + at, *p = entry;
        int field = 0;

        at += strlen(entry) + 1;
        if (strncmp(entry, "1 ", 2) != 0)
            continue;
        while (field < 8 && (p = strchr(p, ' ')) != NULL) {
            p++;
            field++;
        }
        if (!p || strncmp(entry + 5, "S", 1) != 0 || entry[7] != 'M')
            continue;
        TND_GROW(list, alloc, n + 2);
        list[n++] = tnd_xstrdup(p);
        list[n] = NULL;
    }
    free(out);
    return list;
}
