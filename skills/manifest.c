/* Workspace manifests (see manifest.h).
 *
 * A walk lstat()s every entry (symlinks are not followed, so a link out
 * of the workspace is never looked through) and skips .git and the
 * directories .gitignore ignores. Records are sorted by path, so a later
 * walk finds each file with a binary search. Only the top-level
 * .gitignore is read, with the common rules: '#' comments, '!' to
 * re-include, a trailing '/' for directories only, a leading or inner
 * '/' to anchor at the root, otherwise a match on any component. */
#include "skills/manifest.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/error.h"
#include "common/fs.h"
#include "common/glob.h"
#include "common/str.h"
#include "common/xalloc.h"

#define DEPTH_MAX        64
#define IGNORE_MAX       (256 * 1024)
#define BINARY_PROBE     8192
#define IGNORE_RULES_MAX 1000
#define CLOCK_WAIT_NAPS  100 /* of 0.5 ms: a tick is 1 to 10 ms */

typedef struct record {
    char *path;
    long long size;
    int64_t mtime_ns;
    int64_t ctime_ns; /* a skill may set the mtime back, never the ctime */
    dev_t dev;        /* a file renamed over it is another inode */
    ino_t ino;
    bool gone; /* reported deleted */
    bool seen; /* found by the current walk */
} record;

typedef struct rule {
    char *pattern;
    bool negate, dir_only, anchored;
} rule;

struct tnd_manifest {
    char *root;
    record *recs;
    size_t n, alloc, max;
    rule *rules;
    size_t nrules, arules;
    bool over;         /* more than max files */
    int64_t newest_ns; /* the latest ctime noted */
};

/* ---- .gitignore --------------------------------------------------------- */

static void add_rule(tnd_manifest *m, char *line)
{
    rule r = {0};
    size_t n;

    tnd_str_trim(line);
    if (!*line || line[0] == '#' || m->nrules >= IGNORE_RULES_MAX)
        return;
    if (line[0] == '!') {
        r.negate = true;
        line++;
    }
    n = strlen(line);
    if (n && line[n - 1] == '/') {
        r.dir_only = true;
        line[--n] = '\0';
    }
    if (line[0] == '/') {
        r.anchored = true;
        line++;
    }
    if (strchr(line, '/'))
        r.anchored = true;
    if (!*line || tnd_glob_check(line) < 0)
        return;
    r.pattern = tnd_xstrdup(line);
    TND_GROW(m->rules, m->arules, m->nrules + 1);
    m->rules[m->nrules++] = r;
}

static void read_ignore(tnd_manifest *m)
{
    char *path = tnd_fs_join(m->root, ".gitignore"), *text = NULL;
    size_t len;

    if (tnd_fs_read(&text, &len, path, IGNORE_MAX) == 0) {
        for (char *line = text, *nl; line && *line; line = nl) {
            nl = strchr(line, '\n');
            if (nl)
                *nl++ = '\0';
            add_rule(m, line);
        }
    }
    free(text);
    free(path);
}

/* Whether rel (a file, or a directory when is_dir) is ignored by the
 * rules alone; the last rule that matches decides. */
static bool ignored(const tnd_manifest *m, const char *rel, bool is_dir)
{
    const char *base = strrchr(rel, '/');
    bool out = false;

    base = base ? base + 1 : rel;
    for (size_t i = 0; i < m->nrules; i++) {
        const rule *r = &m->rules[i];
        bool hit;
        if (r->dir_only && !is_dir)
            continue;
        hit = r->anchored ? tnd_glob_match(r->pattern, rel)
                          : tnd_glob_match_name(r->pattern, base);
        if (hit)
            out = !r->negate;
    }
    return out;
}

/* ---- walking ------------------------------------------------------------ */

typedef void visit_fn(tnd_manifest *m, const char *rel, const struct stat *st,
                      void *payload);

static void walk(tnd_manifest *m, const char *rel, int depth, visit_fn *visit,
                 void *payload)
{
    char *dir = *rel ? tnd_fs_join(m->root, rel) : tnd_xstrdup(m->root);
    DIR *d = opendir(dir);
    struct dirent *e;

    free(dir);
    if (!d)
        return;
    while ((e = readdir(d)) != NULL && !m->over) {
        struct stat st;
        char *child;
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") ||
            !strcmp(e->d_name, ".git"))
            continue;
        if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
            continue;
        child = *rel ? tnd_xasprintf("%s/%s", rel, e->d_name)
                     : tnd_xstrdup(e->d_name);
        if (S_ISDIR(st.st_mode)) {
            if (depth < DEPTH_MAX && !ignored(m, child, true))
                walk(m, child, depth + 1, visit, payload);
        } else if (S_ISREG(st.st_mode) && !ignored(m, child, false)) {
            visit(m, child, &st, payload);
        }
        free(child);
    }
    closedir(d);
}

static int64_t ns(struct timespec ts)
{
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Note st as r's state: what a later walk compares. */
static void note(record *r, const struct stat *st)
{
    r->size = (long long)st->st_size;
    r->mtime_ns = ns(st->st_mtim);
    r->ctime_ns = ns(st->st_ctim);
    r->dev = st->st_dev;
    r->ino = st->st_ino;
}

/* Whether st is still the state noted in r. Size and mtime alone are not
 * enough: a skill can rewrite a file with the same size and put its mtime
 * back (utimensat), but any change to an inode sets its ctime to the
 * clock's time, which no caller can choose. */
static bool same(const record *r, const struct stat *st)
{
    return r->size == (long long)st->st_size &&
           r->mtime_ns == ns(st->st_mtim) && r->ctime_ns == ns(st->st_ctim) &&
           r->dev == st->st_dev && r->ino == st->st_ino;
}

/* Return once a change made from now on gets a ctime later than newest_ns:
 * where file times come from the kernel's coarse clock (before Linux
 * 6.13's fine-grained timestamps), a rewrite within the tick of the last
 * change would otherwise keep its ctime. Only then: a ctime the coarse
 * clock has not reached is fine-grained, and so is every ctime after it
 * of a file whose times were read (Linux's multigrain timestamps), so
 * there is nothing to wait for (waiting for the tick anyway cost every
 * audit 3.5 ms: bench/overhead.py). At most a tick or two; bounded all
 * the same. */
static void wait_past(int64_t newest_ns)
{
    struct timespec now, nap = {0, 500000};

    for (int i = 0; i < CLOCK_WAIT_NAPS; i++) {
        if (clock_gettime(CLOCK_REALTIME_COARSE, &now) < 0 ||
            ns(now) != newest_ns)
            return;
        nanosleep(&nap, NULL);
    }
}

static void record_file(tnd_manifest *m, const char *rel, const struct stat *st,
                        void *payload)
{
    (void)payload;
    if (m->n == m->max) {
        m->over = true;
        return;
    }
    TND_GROW(m->recs, m->alloc, m->n + 1);
    m->recs[m->n].path = tnd_xstrdup(rel);
    note(&m->recs[m->n], st);
    if (m->recs[m->n].ctime_ns > m->newest_ns)
        m->newest_ns = m->recs[m->n].ctime_ns;
    m->recs[m->n].gone = false;
    m->recs[m->n].seen = false;
    m->n++;
}

static int by_path(const void *a, const void *b)
{
    return strcmp(((const record *)a)->path, ((const record *)b)->path);
}

tnd_manifest *tnd_manifest_new(const char *root, size_t max_files)
{
    tnd_manifest *m;

    if (!tnd_fs_is_dir(root)) {
        tnd_error_set("%s is not a directory", root);
        return NULL;
    }
    m = tnd_xcalloc(1, sizeof(*m));
    m->root = tnd_xstrdup(root);
    m->max = max_files;
    read_ignore(m);
    walk(m, "", 0, record_file, NULL);
    if (m->over) {
        tnd_error_set("%s holds more than %zu files", root, max_files);
        tnd_manifest_destroy(&m);
        return NULL;
    }
    if (m->n > 1) /* qsort wants a pointer even for none */
        qsort(m->recs, m->n, sizeof(*m->recs), by_path);
    wait_past(m->newest_ns);
    return m;
}

size_t tnd_manifest_size(const tnd_manifest *self)
{
    return self->n;
}

/* ---- comparing ---------------------------------------------------------- */

typedef struct changes {
    char **list;
    size_t n, alloc;
} changes;

static bool looks_binary(const tnd_manifest *m, const char *rel)
{
    char *path = tnd_fs_join(m->root, rel);
    char probe[BINARY_PROBE];
    /* not blocking: a skill running beside may have put a FIFO there
     * since the lstat that found a file */
    int fd =
        open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
    ssize_t got = fd >= 0 ? read(fd, probe, sizeof(probe)) : -1;

    if (fd >= 0)
        close(fd);
    free(path);
    return got > 0 && tnd_str_is_binary(probe, (size_t)got);
}

static void add_change(changes *c, const char *rel)
{
    TND_GROW(c->list, c->alloc, c->n + 2);
    c->list[c->n++] = tnd_xstrdup(rel);
    c->list[c->n] = NULL;
}

static void compare_file(tnd_manifest *m, const char *rel,
                         const struct stat *st, void *payload)
{
    record key = {.path = (char *)rel};
    /* none recorded (an empty tree): no array to search */
    record *r =
        m->n ? bsearch(&key, m->recs, m->n, sizeof(*m->recs), by_path) : NULL;

    if (!r || r->gone)
        return; /* new since the manifest: a build output */
    r->seen = true;
    if (same(r, st))
        return;
    note(r, st);
    if (r->ctime_ns > m->newest_ns)
        m->newest_ns = r->ctime_ns;
    if (!looks_binary(m, rel))
        add_change(payload, rel);
}

static int by_string(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

size_t tnd_manifest_changes(char ***out, tnd_manifest *self)
{
    changes c = {0};
    int64_t newest = self->newest_ns;

    for (size_t i = 0; i < self->n; i++)
        self->recs[i].seen = false;
    walk(self, "", 0, compare_file, &c);
    for (size_t i = 0; i < self->n; i++) {
        record *r = &self->recs[i];
        if (!r->seen && !r->gone) {
            r->gone = true;
            add_change(&c, r->path);
        }
    }
    if (self->newest_ns > newest)
        wait_past(self->newest_ns);
    if (c.n)
        qsort(c.list, c.n, sizeof(*c.list), by_string);
    else
        c.list = tnd_xcalloc(1, sizeof(char *));
    *out = c.list;
    return c.n;
}

void tnd_manifest_destroy(tnd_manifest **self_p)
{
    tnd_manifest *m = self_p ? *self_p : NULL;

    if (!m)
        return;
    for (size_t i = 0; i < m->n; i++)
        free(m->recs[i].path);
    for (size_t i = 0; i < m->nrules; i++)
        free(m->rules[i].pattern);
    free(m->recs);
    free(m->rules);
    free(m->root);
    free(m);
    *self_p = NULL;
}
