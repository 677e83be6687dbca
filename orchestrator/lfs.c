/* Git LFS files of an exported tree (see lfs.h). */
#include "orchestrator/lfs.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/buf.h"
#include "common/fs.h"
#include "common/str.h"
#include "common/xalloc.h"
#include "orchestrator/git.h"

#define POINTER_MAX 1024       /* git-lfs reads no larger file as a pointer */
#define OID_HEX     64         /* a sha256 object id */
#define LIST_MAX    (64 << 20) /* the names git may list */

/* How git reaches the repository whose tree is exported: in dir, with
 * the index file index, as the caller's git finds it (git_dir_opt NULL:
 * the work tree's), or on its own by git_dir_opt, "--git-dir=PATH" (a
 * submodule's, with none of the caller's GIT_DIR and the like:
 * gitlinks.h); objects and repo_objects as tnd_git_run_scratch's, or
 * NULL; paths (plen bytes, each NUL-ended) the files checked out, or
 * NULL: all of the index's; option one more for checkout-index, or
 * NULL */
typedef struct repo_at {
    const char *dir;
    const char *git_dir_opt;
    const char *index;
    const char *objects, *repo_objects;
    const char *paths;
    size_t plen;
    const char *option;
} repo_at;

/* argv with r's --git-dir after "git", if any: free the array alone */
static const char **argv_at(const repo_at *r, const char *const *argv)
{
    size_t n = 0, k = 0;
    const char **with;

    while (argv[n])
        n++;
    with = tnd_xcalloc(n + 2, sizeof(*with));
    with[k++] = argv[0];
    if (r->git_dir_opt)
        with[k++] = r->git_dir_opt;
    memcpy(with + k, argv + 1, n * sizeof(*with));
    return with;
}

/* Run argv on r's repository (tnd_git_run_input, or _alone), input
 * (len bytes, or NULL) on its stdin */
static int git_at(char **out, size_t *len, const repo_at *r, const char *input,
                  size_t input_len, const char *const *argv, size_t cap)
{
    const char **with = argv_at(r, argv);
    int rc =
        r->git_dir_opt
            ? tnd_git_run_alone(out, len, r->dir, r->index, with, cap)
            : tnd_git_run_input(out, len, r->dir, r->index, r->objects,
                                r->repo_objects, input, input_len, with, cap);

    free(with);
    return rc;
}

/* Where git-lfs looks for objects: its store, and the stores of the
 * repositories this one borrows from (git clone --reference, whose
 * objects git-lfs takes from there). unsure: a borrowed store this does
 * not read (a quoted name), so a missing object is left to git-lfs. */
typedef struct stores {
    char *own;
    char **borrowed;
    size_t n;
    bool unsure;
} stores;

static void borrow(stores *s, const char *objects, const char *line)
{
    char *dir, *lfs;

    if (!*line || *line == '#')
        return;
    if (*line == '"') {
        s->unsure = true;
        return;
    }
    /* an alternate names an objects directory, relative to ours or not;
     * git-lfs keeps its store beside it */
    dir = *line == '/' ? tnd_fs_dirname(line) : NULL;
    if (!dir) {
        char *full = tnd_fs_join(objects, line);

        dir = tnd_fs_dirname(full);
        free(full);
    }
    lfs = tnd_fs_join(dir, "lfs/objects");
    free(dir);
    s->borrowed = tnd_xrealloc(s->borrowed, s->n + 1, sizeof(*s->borrowed));
    s->borrowed[s->n++] = lfs;
}

/* The stores of repo, as git-lfs finds them: lfs.storage (relative to
 * the common git directory) or that directory's lfs, and the
 * alternates. */
static int stores_find(stores *s, const repo_at *r)
{
    const char *common[] = {"git", "rev-parse", "--git-common-dir", NULL};
    const char *storage[] = {"git",   "config",      "--default", "",
                             "--get", "lfs.storage", NULL};
    const char *env = getenv("GIT_ALTERNATE_OBJECT_DIRECTORIES");
    char *gd = NULL, *where = NULL, *objects, *alts = NULL, *line, *next;
    int rc;

    memset(s, 0, sizeof(*s));
    if ((rc = git_at(&gd, NULL, r, NULL, 0, common, 64 << 10)) < 0 ||
        (rc = git_at(&where, NULL, r, NULL, 0, storage, 64 << 10)) < 0) {
        free(gd);
        return rc;
    }
    tnd_str_trim(gd);
    tnd_str_trim(where);
    if (*gd != '/') {
        char *full = tnd_fs_join(r->dir, gd);

        free(gd);
        gd = full;
    }
    if (!*where) {
        free(where);
        where = tnd_xstrdup("lfs");
    }
    s->own = *where == '/' ? tnd_fs_join(where, "objects") : NULL;
    if (!s->own) {
        char *dir = tnd_fs_join(gd, where);

        s->own = tnd_fs_join(dir, "objects");
        free(dir);
    }
    objects = tnd_fs_join(gd, "objects");
    line = tnd_fs_join(objects, "info/alternates");
    if (tnd_fs_exists(line) && tnd_fs_read(&alts, NULL, line, 1 << 20) < 0)
        s->unsure = true;
    free(line);
    for (line = alts; line; line = next) {
        if ((next = strchr(line, '\n')))
            *next++ = '\0';
        borrow(s, objects, tnd_str_trim(line));
    }
    /* git-lfs reads the caller's too (git.c leaves it to git, but for
     * a repository on its own or objects of our own) */
    if (!r->git_dir_opt && !r->objects && env && *env)
        s->unsure = true;
    free(alts);
    free(objects);
    free(where);
    free(gd);
    return 0;
}

static void stores_free(stores *s)
{
    free(s->own);
    for (size_t i = 0; i < s->n; i++)
        free(s->borrowed[i]);
    free(s->borrowed);
}

/* The object id and size a Git LFS pointer file's text names; false
 * when text is no pointer git-lfs writes (left to git-lfs, which passes
 * what it cannot read through) */
static bool pointer(char oid[OID_HEX + 1], long long *size, const char *text)
{
    const char *at;
    char *end;

    if (strncmp(text, "version ", 8) != 0 ||
        !(at = strstr(text, "\noid sha256:")))
        return false;
    at += strlen("\noid sha256:");
    if (strspn(at, "0123456789abcdef") != OID_HEX || at[OID_HEX] != '\n')
        return false;
    memcpy(oid, at, OID_HEX);
    oid[OID_HEX] = '\0';
    if (!(at = strstr(text, "\nsize ")) || at[6] < '0' || at[6] > '9')
        return false;
    *size = strtoll(at + 6, &end, 10);
    return *end == '\n' && *size >= 0;
}

/* Whether the store dir holds the object oid of size bytes */
static bool holds(const char *dir, const char *oid, long long size)
{
    char *path = tnd_xasprintf("%s/%.2s/%.2s/%s", dir, oid, oid + 2, oid);
    struct stat st;
    bool yes = stat(path, &st) == 0 && S_ISREG(st.st_mode) &&
               (long long)st.st_size == size;

    free(path);
    return yes;
}

/* Whether the file path under base is a pointer file of an object of
 * some bytes, as git-lfs writes one: its id and size */
static bool pointer_at(char oid[OID_HEX + 1], long long *size, const char *base,
                       const char *path)
{
    char *file = tnd_fs_join(base, path), *text = NULL;
    struct stat st;
    bool is = lstat(file, &st) == 0 && S_ISREG(st.st_mode) &&
              st.st_size <= POINTER_MAX &&
              tnd_fs_read(&text, NULL, file, POINTER_MAX) == 0 &&
              pointer(oid, size, text) && *size > 0;

    tnd_error_clear();
    free(text);
    free(file);
    return is;
}

/* Whether the file path, written under base as its pointer, is one whose
 * object no store holds: it stays so */
static bool missing(const stores *s, const char *base, const char *path)
{
    char oid[OID_HEX + 1];
    long long size = 0;
    bool gone = false;

    if (pointer_at(oid, &size, base, path) && !holds(s->own, oid, size)) {
        gone = !s->unsure;
        for (size_t i = 0; gone && i < s->n; i++)
            gone = !holds(s->borrowed[i], oid, size);
    }
    return gone;
}

/* The Git LFS files (filter=lfs) of r's paths written under base into
 * *out, each NUL-ended (*len bytes; *out the caller's to free). Those
 * checked out as no pointer are none of git-lfs's business (its smudge
 * writes such bytes as they are): git check-attr of the rest alone, and
 * no git process for a change with no pointer file, most of them. */
static int lfs_of(char **out, size_t *len, const repo_at *r, const char *base)
{
    const char *argv[] = {"git", "check-attr", "-z", "--stdin", "filter", NULL};
    char *attrs = NULL, *pointers, oid[OID_HEX + 1];
    size_t alen = 0, n = 0, plen = 0;
    long long size = 0;
    tnd_buf b;
    int rc = 0;

    *out = NULL;
    *len = 0;
    tnd_buf_init(&b, TND_BUF_NOCAP);
    for (size_t at = 0; at < r->plen; at += strlen(r->paths + at) + 1)
        if (pointer_at(oid, &size, base, r->paths + at))
            tnd_buf_append(&b, r->paths + at, strlen(r->paths + at) + 1);
    pointers = tnd_buf_detach(&b, &plen);
    if (plen)
        rc =
            git_at(&attrs, &alen, r, pointers, plen, argv, 3 * plen + LIST_MAX);
    free(pointers);
    /* "PATH\0filter\0VALUE\0" each */
    for (size_t at = 0; rc == 0 && at < alen;) {
        const char *path = attrs + at, *name, *value;

        name = path + strlen(path) + 1;
        if (name >= attrs + alen)
            break;
        value = name + strlen(name) + 1;
        if (value >= attrs + alen)
            break;
        at = (size_t)(value + strlen(value) + 1 - attrs);
        if (strcmp(value, "lfs") != 0)
            continue;
        memmove(attrs + n, path, strlen(path) + 1);
        n += strlen(attrs + n) + 1;
    }
    if (rc == 0) {
        *out = attrs;
        *len = n;
    } else {
        free(attrs);
    }
    return rc;
}

/* tnd_lfs_smudge of r's tree at base, adding to *left, whose names are
 * under the directory under (NULL: the top's) */
static int smudge(tnd_lfs_left *left, const repo_at *r, const char *base,
                  const char *under)
{
    const char *list[] = {"git", "ls-files",           "-z",
                          "--",  ":(attr:filter=lfs)", NULL};
    /* the files given have their objects here: nothing to fetch, so
     * nothing a fetch's include or exclude would leave a pointer */
    const char *checkout[] = {"git",
                              "-c",
                              "lfs.fetchinclude=",
                              "-c",
                              "lfs.fetchexclude=",
                              "checkout-index",
                              "-f",
                              NULL,
                              "--stdin",
                              "-z",
                              NULL,
                              NULL};
    const char **with;
    char *out = NULL, *prefix, *paths;
    size_t len = 0, plen = 0;
    stores s;
    tnd_buf again;
    int rc;

    rc = r->paths ? lfs_of(&out, &len, r, base)
                  : git_at(&out, &len, r, NULL, 0, list, LIST_MAX);
    if (rc < 0 || len == 0 || (rc = stores_find(&s, r)) < 0) {
        free(out);
        return rc;
    }
    tnd_buf_init(&again, TND_BUF_NOCAP);
    for (size_t at = 0; at < len; at += strlen(out + at) + 1) {
        const char *path = out + at;

        if (!missing(&s, base, path))
            tnd_buf_append(&again, path, strlen(path) + 1);
        else {
            if (left->n++ < TND_LFS_NAMED)
                left->named[left->n - 1] =
                    under ? tnd_fs_join(under, path) : tnd_xstrdup(path);
            if (under && !left->submodule)
                left->submodule = tnd_xstrdup(under);
        }
    }
    paths = tnd_buf_detach(&again, &plen);
    if (plen) {
        checkout[7] = prefix = tnd_xasprintf("--prefix=%s/", base);
        checkout[10] = r->option;
        with = argv_at(r, checkout);
        rc = tnd_git_run_smudge(r->dir, r->index, r->objects, r->repo_objects,
                                paths, plen, with, r->git_dir_opt != NULL);
        free(with);
        free(prefix);
    }
    if (rc < 0)
        tnd_lfs_left_free(left);
    free(paths);
    stores_free(&s);
    free(out);
    return rc;
}

int tnd_lfs_smudge(tnd_lfs_left *left, const char *repo, const char *index,
                   const char *base)
{
    repo_at r = {repo, NULL, index, NULL, NULL, NULL, 0, NULL};

    memset(left, 0, sizeof(*left));
    return smudge(left, &r, base, NULL);
}

int tnd_lfs_smudge_alone(tnd_lfs_left *left, const char *git_dir_opt,
                         const char *dir, const char *index, const char *base,
                         const char *under)
{
    repo_at r = {dir, git_dir_opt, index, NULL, NULL, NULL, 0, NULL};

    return smudge(left, &r, base, under);
}

int tnd_lfs_smudge_paths(tnd_lfs_left *left, const char *repo,
                         const char *index, const char *objects,
                         const char *repo_objects, const char *paths,
                         size_t len, const char *base, const char *option)
{
    repo_at r = {repo, NULL, index, objects, repo_objects, paths, len, option};

    memset(left, 0, sizeof(*left));
    return len ? smudge(left, &r, base, NULL) : 0;
}

char *tnd_lfs_note(const tnd_lfs_left *left)
{
    tnd_buf b;

    if (!left->n)
        return NULL;
    tnd_buf_init(&b, TND_BUF_NOCAP);
    tnd_buf_printf(
        &b,
        "%zu Git LFS file%s %s its pointer file, not %s content: "
        "%s object%s not on this machine, and tandem never "
        "fetches (git lfs fetch, or git lfs pull, brings %s",
        left->n, left->n == 1 ? "" : "s", left->n == 1 ? "is" : "are each",
        left->n == 1 ? "its" : "their", left->n == 1 ? "its" : "their",
        left->n == 1 ? " is" : "s are", left->n == 1 ? "it" : "them");
    /* a submodule's objects are its own repository's to fetch */
    if (left->submodule)
        tnd_buf_printf(&b, "; in a submodule, run there: git -C %s lfs fetch",
                       left->submodule);
    tnd_buf_printf(&b, "): ");
    for (size_t i = 0; left->named[i]; i++)
        tnd_buf_printf(&b, "%s%s", i ? ", " : "", left->named[i]);
    if (left->n > TND_LFS_NAMED)
        tnd_buf_printf(&b, " and %zu more", left->n - TND_LFS_NAMED);
    return tnd_buf_detach(&b, NULL);
}

void tnd_lfs_left_free(tnd_lfs_left *left)
{
    for (size_t i = 0; i < TND_LFS_NAMED; i++)
        free(left->named[i]);
    free(left->submodule);
    memset(left, 0, sizeof(*left));
}
