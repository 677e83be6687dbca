/* Coder context selection (see context.h). */
#include "orchestrator/context.h"

#include <stdbool.h>
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

#define MAX_FILE_BYTES (256 * 1024)
#define MAX_LISTED     20000
#define MAP_MAX_BYTES  (64 * 1024)

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

/* Add one text file to req, as valid UTF-8. */
static void send(tnd_code_request *req, tnd_context_stats *st, const char *path,
                 const char *text, size_t len)
{
    size_t replaced = 0;
    tnd_file *f = &req->files[req->nfiles++];

    f->path = tnd_xstrdup(path);
    f->content = tnd_utf8_clean(text, len, &replaced);
    st->replaced += replaced;
    st->replaced_files += replaced > 0;
}

int tnd_context_build(tnd_code_request *req, const char *root,
                      const tnd_context_options *o, tnd_context_stats *stats)
{
    tnd_context_stats sum = {0};
    char **list = NULL;
    size_t n = 0, used = 0, nc = 0;
    candidate *c;
    tnd_buf map;
    bool *sent;

    if (tnd_fs_list(&list, &n, root, skip, MAX_LISTED) < 0)
        return -1;
    c = tnd_xcalloc(n + 1, sizeof(*c));
    for (size_t i = 0; i < n; i++) {
        char *full = tnd_fs_join(root, list[i]);
        struct stat st;
        if (!excluded(list[i], o->exclude) && stat(full, &st) == 0) {
            c[nc].path = list[i];
            c[nc].size = (size_t)st.st_size;
            c[nc].rank = rank(list[i], o);
            nc++;
        }
        free(full);
    }
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
    for (size_t i = 0; i < nc && req->nfiles < TND_BODY_MAX_FILES; i++) {
        char *full, *text = NULL;
        size_t len = 0;
        if (c[i].size > MAX_FILE_BYTES || used + c[i].size > o->budget)
            continue;
        full = tnd_fs_join(root, c[i].path);
        if (tnd_fs_read(&text, &len, full, MAX_FILE_BYTES) == 0) {
            if (tnd_utf8_is_binary(text, len)) {
                sum.binary++;
            } else if (used + len <= o->budget) {
                send(req, &sum, c[i].path, text, len);
                used += len;
                sent[i] = true;
            }
        }
        free(text);
        free(full);
    }
    tnd_buf_init(&map, MAP_MAX_BYTES);
    for (size_t i = 0; i < nc; i++) {
        if (sent[i])
            continue;
        if (tnd_buf_printf(&map, "%s %zu\n", c[i].path, c[i].size) < 0) {
            tnd_buf_puts(&map, "...\n");
            break;
        }
    }
    tnd_error_clear();
    free(req->repo_map);
    req->repo_map = tnd_buf_detach(&map, NULL);
    free(sent);
    free(c);
    tnd_str_list_free(&list);
    sum.files = req->nfiles;
    sum.bytes = used;
    if (stats)
        *stats = sum;
    return 0;
}
