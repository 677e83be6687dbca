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
static int stores_find(stores *s, const char *repo)
{
    const char *common[] = {"git", "rev-parse", "--git-common-dir", NULL};
    const char *storage[] = {"git",   "config",      "--default", "",
                             "--get", "lfs.storage", NULL};
    const char *env = getenv("GIT_ALTERNATE_OBJECT_DIRECTORIES");
    char *gd = NULL, *where = NULL, *objects, *alts = NULL, *line, *next;
    int rc;

    memset(s, 0, sizeof(*s));
    if ((rc = tnd_git_run(&gd, NULL, repo, common, 64 << 10)) < 0 ||
        (rc = tnd_git_run(&where, NULL, repo, storage, 64 << 10)) < 0) {
        free(gd);
        return rc;
    }
    tnd_str_trim(gd);
    tnd_str_trim(where);
    if (*gd != '/') {
        char *full = tnd_fs_join(repo, gd);

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
    /* git-lfs reads the caller's too (git.c leaves it to git) */
    if (env && *env)
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

/* Whether the file path, written under base as its pointer, is one whose
 * object no store holds: it stays so */
static bool missing(const stores *s, const char *base, const char *path)
{
    char *file = tnd_fs_join(base, path), *text = NULL;
    char oid[OID_HEX + 1];
    long long size = 0;
    struct stat st;
    bool gone = false;

    if (lstat(file, &st) == 0 && S_ISREG(st.st_mode) &&
        st.st_size <= POINTER_MAX &&
        tnd_fs_read(&text, NULL, file, POINTER_MAX) == 0 &&
        pointer(oid, &size, text) && size > 0 && !holds(s->own, oid, size)) {
        gone = !s->unsure;
        for (size_t i = 0; gone && i < s->n; i++)
            gone = !holds(s->borrowed[i], oid, size);
    }
    free(text);
    free(file);
    return gone;
}

int tnd_lfs_smudge(tnd_lfs_left *left, const char *repo, const char *index,
                   const char *base)
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
                              NULL};
    char *out = NULL, *prefix, *paths;
    size_t len = 0, plen = 0;
    stores s;
    tnd_buf again;
    int rc;

    memset(left, 0, sizeof(*left));
    rc = tnd_git_run_index(&out, &len, repo, index, list, LIST_MAX);
    if (rc < 0 || len == 0 || (rc = stores_find(&s, repo)) < 0) {
        free(out);
        return rc;
    }
    tnd_buf_init(&again, TND_BUF_NOCAP);
    for (size_t at = 0; at < len; at += strlen(out + at) + 1) {
        const char *path = out + at;

        if (!missing(&s, base, path))
            tnd_buf_append(&again, path, strlen(path) + 1);
        else if (left->n++ < TND_LFS_NAMED)
            left->named[left->n - 1] = tnd_xstrdup(path);
    }
    paths = tnd_buf_detach(&again, &plen);
    if (plen) {
        checkout[7] = prefix = tnd_xasprintf("--prefix=%s/", base);
        rc = tnd_git_run_smudge(repo, index, paths, plen, checkout);
        free(prefix);
    }
    if (rc < 0)
        tnd_lfs_left_free(left);
    free(paths);
    stores_free(&s);
    free(out);
    return rc;
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
        "fetches (git lfs fetch, or git lfs pull, brings %s): ",
        left->n, left->n == 1 ? "" : "s", left->n == 1 ? "is" : "are each",
        left->n == 1 ? "its" : "their", left->n == 1 ? "its" : "their",
        left->n == 1 ? " is" : "s are", left->n == 1 ? "it" : "them");
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
    memset(left, 0, sizeof(*left));
}
