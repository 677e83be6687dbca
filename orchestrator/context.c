/* Coder context selection (see context.h). */
#include "orchestrator/context.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/buf.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/glob.h"
#include "common/str.h"
#include "common/utf8.h"
#include "common/xalloc.h"
#include "proto/body.h"
#include "proto/mdp.h"
#include "proto/tree.h"

#define MAX_FILE_BYTES (256 * 1024) /* unless named */
/* the files a tree may hold: as many as the snapshot takes and the
 * reviewer's tree holds (20,000 failed every attempt of a tree the
 * baseline had passed on) */
#define MAX_LISTED   TND_TREE_MAX_FILES
#define MAP_DIRS_MAX 64 /* directories the map sums up, at most */
/* the files' part of the request's JSON, at most: the rest of a body
 * (task, feedback, map, lessons) has room in what one may be. A
 * context_max_kb of 16 MiB of short lines made a request of 24 MB the
 * broker refused, and the run failed. */
#define FILES_JSON_MAX (TND_MDP_MAX_BODY - (4 << 20))

typedef struct candidate {
    char *path;
    size_t size;
    int rank; /* 0: named by the task or hints; 1: matching
                 agents.coder.context_include; 2: the rest */
} candidate;

static const char *const skip[] = {".git", ".tandem", NULL};

static bool mentioned(const char *path, const char *text)
{
    const char *base = strrchr(path, '/');

    if (!text)
        return false;
    base = base ? base + 1 : path;
    if (strstr(text, path))
        return true;
    return strlen(base) >= 3 && strstr(text, base) != NULL;
}

static int by_rank_then_size(const void *a, const void *b)
{
    const candidate *x = a, *y = b;

    if (x->rank != y->rank)
        return x->rank - y->rank;
    if (x->size != y->size)
        return x->size < y->size ? -1 : 1;
    return strcmp(x->path, y->path);
}

static bool excluded(const char *path, const char *const *exclude)
{
    for (; exclude && *exclude; exclude++)
        if (strcmp(path, *exclude) == 0)
            return true;
    return false;
}

static int rank(const char *path, const tnd_context_options *o)
{
    if (mentioned(path, o->task) || mentioned(path, o->hints))
        return 0;
    if (o->include && tnd_glob_match_any(o->include, path))
        return 1;
    return 2;
}

/* The bytes s takes in the request's JSON, quotes included (json-c
 * writes \" \\ \n and the like in two, other control characters in
 * six). */
static size_t json_len(const char *s)
{
    size_t n = 2;

    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        n += c == '"' || c == '\\' || c == '\b' || c == '\f' || c == '\n' ||
                     c == '\r' || c == '\t'
                 ? 2
             : c < 0x20 ? 6
                        : 1;
    }
    return n;
}

/* Add one text file to req, as valid UTF-8, when it fits: with what the
 * replacements add (three bytes for one) within what one file may be,
 * and its JSON within *room (taken from it). false when it does not. */
static bool send(tnd_code_request *req, tnd_context_stats *st, const char *path,
                 const char *text, size_t len, size_t *room)
{
    size_t replaced = 0, need;
    char *clean = tnd_utf8_clean(text, len, &replaced);
    tnd_file *f;

    need = json_len(path) + json_len(clean) + 32;
    if (strlen(clean) > TND_BODY_MAX_FILE || need > *room) {
        free(clean);
        return false;
    }
    *room -= need;
    f = &req->files[req->nfiles++];
    f->path = tnd_xstrdup(path);
    f->content = clean;
    st->replaced += replaced;
    st->replaced_files += replaced > 0;
    return true;
}

/* Name a named file that did not go, while there is room; one that no
 * budget would send (over the most a file in a request may be) says so. */
static void note_named(tnd_context_stats *st, const candidate *c, bool never)
{
    size_t len = strlen(st->named);
    char one[sizeof(st->named)];

    snprintf(one, sizeof(one), "%s%s (%zu KiB%s)", len ? ", " : "", c->path,
             (c->size + 1023) / 1024, never ? ", too large to send" : "");
    st->named_over += never;
    if (len + strlen(one) < sizeof(st->named) - 5)
        memcpy(st->named + len, one, strlen(one) + 1);
    else if (!strstr(st->named, ", ..."))
        memcpy(st->named + len, ", ...", 6);
    st->named_out++;
}

/* The top-level directory of a path, "." for a file at the top. */
static size_t top_len(const char *path)
{
    const char *slash = strchr(path, '/');

    return slash ? (size_t)(slash - path) : 0;
}

typedef struct dir_sum {
    const char *path; /* a path in the directory (borrowed) */
    size_t len;       /* of its top-level directory; 0 for "." */
    size_t files, bytes;
} dir_sum;

static int by_files(const void *a, const void *b)
{
    const dir_sum *x = a, *y = b;

    if (x->files != y->files)
        return x->files > y->files ? -1 : 1;
    return strncmp(x->path, y->path, x->len < y->len ? x->len : y->len);
}

/* Sum up the unsent files from c[from] on, per top-level directory, into
 * map: the directories with most files first, while they fit. */
static void sum_up(tnd_buf *map, const candidate *c, const bool *sent,
                   size_t from, size_t nc, tnd_context_stats *st)
{
    dir_sum d[MAP_DIRS_MAX];
    size_t nd = 0, other = 0, shown = 0;

    for (size_t i = from; i < nc; i++) {
        size_t len = top_len(c[i].path), k;
        if (sent[i])
            continue;
        for (k = 0; k < nd; k++)
            if (d[k].len == len && strncmp(d[k].path, c[i].path, len) == 0)
                break;
        if (k == nd && nd == MAP_DIRS_MAX) {
            other++;
            continue;
        }
        if (k == nd)
            d[nd++] = (dir_sum){.path = c[i].path, .len = len};
        d[k].files++;
        d[k].bytes += c[i].size;
    }
    if (nd > 1) /* qsort wants a pointer even for none */
        qsort(d, nd, sizeof(*d), by_files);
    for (size_t k = 0; k < nd; k++) {
        int rc = d[k].len
                     ? tnd_buf_printf(map,
                                      "%.*s/ (%zu more files, %zu "
                                      "KiB)\n",
                                      (int)d[k].len, d[k].path, d[k].files,
                                      d[k].bytes / 1024)
                     : tnd_buf_printf(map, "./ (%zu more files, %zu KiB)\n",
                                      d[k].files, d[k].bytes / 1024);
        if (rc < 0) {
            for (; k < nd; k++)
                other += d[k].files;
            break;
        }
        shown += d[k].files;
    }
    st->map_summed = shown;
    if (other)
        (void)tnd_buf_printf(map, "... and %zu more\n", other);
}

static size_t depth(const char *path)
{
    size_t d = 0;

    for (; *path; path++)
        d += *path == '/';
    return d;
}

/* The map's order: what is named first, then shallow paths (a Makefile,
 * a README) before deep ones, then by path, so a directory's files stay
 * together. */
static int by_rank_then_depth(const void *a, const void *b)
{
    const candidate *x = a, *y = b;
    size_t dx = depth(x->path), dy = depth(y->path);

    if (x->rank != y->rank)
        return x->rank - y->rank;
    if (dx != dy)
        return dx < dy ? -1 : 1;
    return strcmp(x->path, y->path);
}

/* The map of what was not sent (c is reordered): by name while it fits
 * in three quarters of the cap, then summed up per directory in the
 * rest. */
static char *make_map(candidate *c, bool *sent, size_t nc, size_t cap,
                      tnd_context_stats *st)
{
    tnd_buf map;
    size_t i = 0, k = 0;

    /* only the unsent, in the map's order */
    for (i = 0; i < nc; i++)
        if (!sent[i])
            c[k++] = c[i];
    nc = k;
    memset(sent, 0, nc * sizeof(*sent));
    if (nc > 1) /* qsort wants a pointer even for none */
        qsort(c, nc, sizeof(*c), by_rank_then_depth);
    tnd_buf_init(&map, cap - cap / 4);
    i = 0;
    for (; i < nc; i++) {
        if (sent[i])
            continue;
        if (tnd_buf_printf(&map, "%s %zu\n", c[i].path, c[i].size) < 0)
            break;
        st->map_listed++;
    }
    map.cap = cap; /* the last quarter sums up the rest */
    if (i < nc)
        sum_up(&map, c, sent, i, nc, st);
    tnd_error_clear();
    st->map_bytes = map.len;
    return tnd_buf_detach(&map, NULL);
}

int tnd_context_build(tnd_code_request *req, const char *root,
                      const tnd_context_options *o, tnd_context_stats *stats)
{
    tnd_context_stats sum = {0};
    char **list = NULL;
    size_t n = 0, used = 0, nc = 0, room = FILES_JSON_MAX;
    candidate *c;
    bool *sent;

    if (tnd_fs_list(&list, &n, root, skip, MAX_LISTED) < 0)
        return -1;
    c = tnd_xcalloc(n + 1, sizeof(*c));
    for (size_t i = 0; i < n; i++) {
        char *full;
        struct stat st;
        /* a name no request may carry: the coder refused the request
         * ("field 'path' is N bytes") and every run here failed */
        if (strlen(list[i]) > TND_BODY_MAX_PATH) {
            sum.left_out++;
            continue;
        }
        full = tnd_fs_join(root, list[i]);
        if (!excluded(list[i], o->exclude) && stat(full, &st) == 0) {
            c[nc].path = list[i];
            c[nc].size = (size_t)st.st_size;
            c[nc].rank = rank(list[i], o);
            nc++;
        }
        free(full);
    }
    if (nc > 1) /* qsort wants a pointer even for none */
        qsort(c, nc, sizeof(*c), by_rank_then_size);
    sent = tnd_xcalloc(nc + 1, sizeof(bool));
    /* replace an earlier call's files, as repo_map is replaced below */
    for (size_t i = 0; i < req->nfiles; i++) {
        free(req->files[i].path);
        free(req->files[i].content);
    }
    free(req->files);
    req->nfiles = 0;
    req->files = tnd_xcalloc(nc + 1, sizeof(*req->files));
    for (size_t i = 0; i < nc; i++) {
        size_t max = c[i].rank == 0 ? TND_BODY_MAX_FILE : MAX_FILE_BYTES;
        char *full, *text = NULL;
        size_t len = 0;
        bool data = false, never = c[i].size > max;
        if (!never && used + c[i].size <= o->budget &&
            req->nfiles < TND_BODY_MAX_FILES) {
            full = tnd_fs_join(root, c[i].path);
            if (tnd_fs_read(&text, &len, full, max) == 0) {
                if ((data = tnd_utf8_is_binary(text, len))) {
                    sum.binary++;
                } else if (used + len <= o->budget) {
                    /* not when its U+FFFDs take it over the most a file
                     * may be, or its JSON the request over a body's */
                    sent[i] = send(req, &sum, c[i].path, text, len, &room);
                    never = !sent[i];
                    used += sent[i] ? len : 0;
                }
            }
            free(text);
            free(full);
        }
        if (c[i].rank == 0 && !data && !never)
            sum.named_need += c[i].size;
        if (sent[i] || data)
            continue;
        sum.left_out++;
        if (c[i].rank == 0)
            note_named(&sum, &c[i], never);
    }
    tnd_error_clear();
    free(req->repo_map);
    req->repo_map = make_map(
        c, sent, nc, o->map_max ? o->map_max : TND_CONTEXT_MAP_DEFAULT, &sum);
    free(sent);
    free(c);
    tnd_str_list_free(&list);
    sum.files = req->nfiles;
    sum.bytes = used;
    if (stats)
        *stats = sum;
    return 0;
}
