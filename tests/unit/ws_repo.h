/* The repository the unit tests of orchestrator/workspace and of
 * orchestrator/search (through a workspace) apply edits in: made in a
 * temporary directory (with .git, .tandem, symlinks in and out, an
 * executable, a CRLF file and a binary file) and taken as a snapshot,
 * base, once for a group (ws_repo_setup and ws_repo_teardown); each test
 * makes a workspace from it (open_ws) and applies proposals (APPLY).
 * repo_before and outside_before hold what the trees held, for a test
 * that checks they were never written. Included by the test files that
 * need it; static, so each has its own copy. */
#ifndef TND_TEST_WS_REPO_H
#define TND_TEST_WS_REPO_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/rmtree.h"
#include "common/str.h"
#include "orchestrator/snapshot.h"
#include "orchestrator/workspace.h"

static char repo[] = "/tmp/tnd-test-ws-repo-XXXXXX";
static char outside[] = "/tmp/tnd-test-ws-out-XXXXXX";
static char scratch[] = "/tmp/tnd-test-ws-XXXXXX";
static char *repo_before, *outside_before;
static tnd_snapshot *base;

#define MAX_BYTES (1 << 20)

/* A proposal is an array of edits; APPLY(ws, edit, ...) applies one. */
/* clang-format off */
#define EDIT(k, p, s, r) {k, (char *)(p), (char *)(s), (char *)(r), 0}
#define REPLACE(p, s, r) EDIT(TND_EDIT_REPLACE, p, s, r)
#define WRITE(p, text)   EDIT(TND_EDIT_WRITE, p, "", text)
#define DELETE(p)        EDIT(TND_EDIT_DELETE, p, "", "")
#define EDITS(...)       ((const tnd_edit[]){__VA_ARGS__})
#define COUNT(...)       (sizeof(EDITS(__VA_ARGS__)) / sizeof(tnd_edit))
#define APPLY(ws, ...)                                                         \
    tnd_workspace_apply(ws, EDITS(__VA_ARGS__), COUNT(__VA_ARGS__))
/* clang-format on */

static const char stats_c[] = "#include \"stats.h\"\n"
                              "\n"
                              "double stats_mean(const double *v, int n)\n"
                              "{\n"
                              "    double sum = 0;\n"
                              "    for (int i = 0; i < n; i++)\n"
                              "        sum += v[i];\n"
                              "    return sum / n;\n"
                              "}\n"
                              "\n"
                              "double stats_max(const double *v, int n)\n"
                              "{\n"
                              "    double m = v[0];\n"
                              "    for (int i = 1; i < n; i++)\n"
                              "        if (v[i] > m)\n"
                              "            m = v[i];\n"
                              "    return m;\n"
                              "}\n";

static const char legacy_c[] = "int a = 1;   \n"
                               "int b = 2;\t\n"
                               "int c = 3;\n";

static const char binary[] = "\x7f"
                             "ELF\0\0\1abc";

/* ---- helpers ------------------------------------------------------------ */

static inline void put(const char *dir, const char *rel, const char *text,
                       size_t len)
{
    char *full = tnd_fs_join(dir, rel), *parent = tnd_fs_dirname(full);

    assert_int_equal(tnd_fs_mkdirs(parent, 0755), 0);
    assert_int_equal(tnd_fs_write(full, text, len), 0);
    free(parent);
    free(full);
}

/* The file's content, or NULL when it does not exist. Caller frees. */
static inline char *slurp(const char *dir, const char *rel)
{
    char *full = tnd_fs_join(dir, rel), *text = NULL;
    int rc = tnd_fs_read(&text, NULL, full, MAX_BYTES);

    assert_true(rc == 0 || rc == TND_ENOTFOUND);
    free(full);
    return text;
}

static inline void assert_file(const char *dir, const char *rel,
                               const char *expect)
{
    char *text = slurp(dir, rel);

    if (!expect) {
        if (text)
            fail_msg("%s should not exist, holds \"%s\"", rel, text);
        return;
    }
    if (!text)
        fail_msg("%s should exist", rel);
    assert_string_equal(text, expect);
    free(text);
}

static inline struct stat lstat_of(const char *dir, const char *rel)
{
    char *full = tnd_fs_join(dir, rel);
    struct stat st;

    assert_int_equal(lstat(full, &st), 0);
    free(full);
    return st;
}

static inline bool exists(const char *dir, const char *rel)
{
    char *full = tnd_fs_join(dir, rel);
    bool yes = tnd_fs_exists(full);

    free(full);
    return yes;
}

static inline void assert_link(const char *dir, const char *rel,
                               const char *target)
{
    char *full = tnd_fs_join(dir, rel), got[PATH_MAX];
    ssize_t n = readlink(full, got, sizeof(got) - 1);

    assert_true(S_ISLNK(lstat_of(dir, rel).st_mode));
    assert_true(n > 0);
    got[n] = '\0';
    assert_string_equal(got, target);
    free(full);
}

/* A fresh workspace from the repository's snapshot. */
static inline tnd_workspace *open_ws_mode(bool incremental)
{
    static int n;
    char dir[PATH_MAX];
    tnd_workspace *ws;

    snprintf(dir, sizeof(dir), "%s/ws-%d", scratch, ++n);
    ws = tnd_workspace_new(base, dir, incremental);
    if (!ws)
        fail_msg("tnd_workspace_new: %s", tnd_error_last());
    assert_true(tnd_workspace_incremental(ws) == incremental);
    return ws;
}

static inline tnd_workspace *open_ws(void)
{
    return open_ws_mode(false);
}

static inline void assert_error_has(const char *part)
{
    if (!strstr(tnd_error_last(), part))
        fail_msg("error \"%s\" does not say \"%s\"", tnd_error_last(), part);
}

static inline int by_name(const struct dirent **a, const struct dirent **b)
{
    return strcmp((*a)->d_name, (*b)->d_name);
}

/* One line per entry under dir: path, mode, size, a file's mtime and a
 * hash of its content (or the link's target), so any write shows. */
static inline void snapshot_dir(tnd_buf *out, const char *dir, const char *rel)
{
    char *path = rel[0] ? tnd_fs_join(dir, rel) : strdup(dir);
    struct dirent **names;
    int n = scandir(path, &names, NULL, by_name);

    assert_true(n >= 0);
    for (int i = 0; i < n; i++) {
        const char *name = names[i]->d_name;
        char *sub, *full, target[PATH_MAX];
        struct stat st;
        if (!strcmp(name, ".") || !strcmp(name, "..")) {
            free(names[i]);
            continue;
        }
        sub = rel[0] ? tnd_fs_join(rel, name) : strdup(name);
        full = tnd_fs_join(dir, sub);
        assert_int_equal(lstat(full, &st), 0);
        tnd_buf_printf(out, "%s %o %lld", sub, (unsigned)st.st_mode,
                       (long long)st.st_size);
        if (S_ISREG(st.st_mode)) /* a copy keeps these, not a link's */
            tnd_buf_printf(out, " %lld.%09ld", (long long)st.st_mtim.tv_sec,
                           st.st_mtim.tv_nsec);
        if (S_ISLNK(st.st_mode)) {
            ssize_t len = readlink(full, target, sizeof(target) - 1);
            assert_true(len > 0);
            tnd_buf_printf(out, " -> %.*s\n", (int)len, target);
        } else if (S_ISREG(st.st_mode)) {
            char *text = NULL;
            size_t len = 0;
            assert_int_equal(tnd_fs_read(&text, &len, full, MAX_BYTES), 0);
            tnd_buf_printf(
                out, " %016llx\n",
                (unsigned long long)tnd_str_hash(TND_FNV_SEED, text, len));
            free(text);
        } else {
            tnd_buf_puts(out, "\n");
            if (S_ISDIR(st.st_mode))
                snapshot_dir(out, dir, sub);
        }
        free(full);
        free(sub);
        free(names[i]);
    }
    free(names);
    free(path);
}

static inline char *snapshot(const char *dir)
{
    tnd_buf b;

    tnd_buf_init(&b, TND_BUF_NOCAP);
    snapshot_dir(&b, dir, "");
    return tnd_buf_detach(&b, NULL);
}

/* ---- the group's fixture ---------------------------------------------- */

static inline int ws_repo_setup(void **state)
{
    struct timespec mtime[2] = {{1000000000, 123456789},
                                {1000000000, 123456789}};
    char *full, *link;

    (void)state;
    umask(022);
    if (!mkdtemp(repo) || !mkdtemp(outside) || !mkdtemp(scratch))
        return -1;
    put(outside, "secret.txt", "secret\n", 7);
    put(repo, "README.md", "# demo\n", 7);
    put(repo, "src/stats.c", stats_c, strlen(stats_c));
    put(repo, "src/stats.h", "double stats_mean(const double *v, int n);\n",
        strlen("double stats_mean(const double *v, int n);\n"));
    put(repo, "src/legacy.c", legacy_c, strlen(legacy_c));
    put(repo, "src/dup.txt", "same\nsame \n", 11);
    put(repo, "src/rep.txt", "A\nB\nA\nB\nA\n", 10);
    put(repo, "src/win.txt", "one\r\ntwo\r\nthree\r\n", 17);
    put(repo, "run.sh", "#!/bin/sh\necho hi\n", 18);
    put(repo, "data.bin", binary, sizeof(binary) - 1);
    put(repo, "docs/.tandem-notes", "notes\n", 6);
    put(repo, ".git/HEAD", "ref: refs/heads/main\n", 21);
    put(repo, ".git/config", "[core]\n", 7);
    put(repo, ".tandem/sessions/s1.json", "{}\n", 3);

    full = tnd_fs_join(repo, "run.sh");
    chmod(full, 0755);
    free(full);
    full = tnd_fs_join(repo, "src/stats.c");
    utimensat(AT_FDCWD, full, mtime, 0);
    free(full);
    full = tnd_fs_join(repo, "link.txt");
    if (symlink("README.md", full) < 0)
        return -1;
    free(full);
    link = tnd_fs_join(repo, "outside");
    if (symlink(outside, link) < 0)
        return -1;
    free(link);
    repo_before = snapshot(repo);
    outside_before = snapshot(outside);
    {
        char *dir = tnd_fs_join(scratch, "base");
        tnd_snapshot_options so = {.max_bytes = MAX_BYTES};
        base = tnd_snapshot_new(repo, dir, &so);
        free(dir);
        if (!base)
            return -1;
    }
    return 0;
}

static inline int ws_repo_teardown(void **state)
{
    (void)state;
    free(repo_before);
    free(outside_before);
    tnd_snapshot_destroy(&base, 1);
    return tnd_fs_rmtree(repo) | tnd_fs_rmtree(outside) |
           tnd_fs_rmtree(scratch);
}

#endif
