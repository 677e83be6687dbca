/* bench/workspace - what a clean tree per attempt costs.
 *
 * Every attempt's checks run on a fresh copy of the task's base (issue
 * 12: reusing the tree let stale build outputs approve a broken change).
 * This measures it on a generated git repository: the snapshot (git
 * ls-files, then a copy of each tracked file), a reset to the base after
 * a proposal of three files and a build that wrote an object file for
 * every fourth source (the default: the tree equals the base again, see
 * common/mirror.h), and the opt-in incremental reset (the proposal's
 * files put back, build outputs kept), each the median of several runs
 * in this one process.
 *
 *   build/bench/workspace [FILES [KIB_PER_FILE [RUNS]]]
 *
 * Defaults: 2000 files of 8 KiB (16 MiB, a mid-sized C project), 11
 * runs. Prints one line per figure. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "bench/timing.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/rmtree.h"
#include "common/xalloc.h"
#include "orchestrator/snapshot.h"
#include "orchestrator/workspace.h"

/* A git repository of files × kib KiB in dir/repo: sources in 20
 * directories, committed. */
static int make_repo(const char *dir, int files, int kib)
{
    char *repo = tnd_fs_join(dir, "repo"), *cmd;
    char *data = tnd_xmalloc((size_t)kib * 1024);
    int rc = -1;

    for (size_t i = 0; i < (size_t)kib * 1024; i++)
        data[i] = i % 64 == 63 ? '\n' : (char)('a' + i % 26);
    for (int i = 0; i < files; i++) {
        char rel[64], *path, *parent;
        snprintf(rel, sizeof(rel), "src/d%02d/f%05d.c", i % 20, i);
        path = tnd_fs_join(repo, rel);
        parent = tnd_fs_dirname(path);
        if (tnd_fs_mkdirs(parent, 0755) < 0 ||
            tnd_fs_write(path, data, (size_t)kib * 1024) < 0) {
            free(parent);
            free(path);
            goto out;
        }
        free(parent);
        free(path);
    }
    cmd = tnd_xasprintf("cd '%s' && git init -q && git add -A && "
                        "git -c user.name=b -c user.email=b@example.invalid "
                        "commit -qm bench",
                        repo);
    rc = system(cmd) == 0 ? 0 : tnd_error_set("git failed in %s", repo);
    free(cmd);
out:
    free(data);
    free(repo);
    return rc;
}

/* What a build leaves: an object file for every fourth source. */
static int build_outputs(tnd_workspace *ws, int files)
{
    for (int i = 0; i < files; i += 4) {
        char rel[64], *path;
        int rc;
        snprintf(rel, sizeof(rel), "src/d%02d/f%05d.o", i % 20, i);
        path = tnd_fs_join(tnd_workspace_path(ws), rel);
        rc = tnd_fs_write(path,
                          "\x7f"
                          "ELF",
                          4);
        free(path);
        if (rc < 0)
            return -1;
    }
    return 0;
}

/* A proposal that touches three files, as a coder's would. */
static int apply_small_change(tnd_workspace *ws)
{
    static char p1[] = "src/d00/f00000.c", p2[] = "src/d01/f00001.c",
                p3[] = "src/new.c", body[] = "int changed;\n";
    tnd_edit e[3];

    memset(e, 0, sizeof(e));
    e[0].kind = e[1].kind = e[2].kind = TND_EDIT_WRITE;
    e[0].path = p1;
    e[1].path = p2;
    e[2].path = p3;
    e[0].replace = e[1].replace = e[2].replace = body;
    return tnd_workspace_apply(ws, e, 3);
}

static int measure(const char *dir, int files, int runs, bool incremental,
                   double *out)
{
    tnd_snapshot_options o = {.max_bytes = (size_t)1 << 34};
    char *base = tnd_fs_join(dir, incremental ? "base-i" : "base-f");
    char *wdir = tnd_fs_join(dir, incremental ? "ws-i" : "ws-f");
    char *repo = tnd_fs_join(dir, "repo");
    tnd_snapshot *s = tnd_snapshot_new(repo, base, &o);
    tnd_workspace *ws = s ? tnd_workspace_new(s, wdir, incremental) : NULL;
    double *t = tnd_xcalloc((size_t)runs, sizeof(*t));
    int rc = -1;

    if (!ws)
        goto out;
    for (int i = 0; i < runs; i++) {
        double t0;
        if (apply_small_change(ws) < 0 || build_outputs(ws, files) < 0)
            goto out;
        t0 = bench_now_ms();
        if (tnd_workspace_reset(ws) < 0)
            goto out;
        t[i] = bench_now_ms() - t0;
    }
    *out = bench_median(t, (size_t)runs);
    rc = 0;
out:
    tnd_workspace_destroy(&ws, 1);
    tnd_snapshot_destroy(&s, 1);
    free(t);
    free(repo);
    free(wdir);
    free(base);
    return rc;
}

static int snapshot_time(const char *dir, int runs, double *out)
{
    tnd_snapshot_options o = {.max_bytes = (size_t)1 << 34};
    char *repo = tnd_fs_join(dir, "repo"), *base = tnd_fs_join(dir, "snap");
    double *t = tnd_xcalloc((size_t)runs, sizeof(*t));
    int rc = 0;

    for (int i = 0; i < runs && rc == 0; i++) {
        double t0 = bench_now_ms();
        tnd_snapshot *s = tnd_snapshot_new(repo, base, &o);
        t[i] = bench_now_ms() - t0;
        if (!s)
            rc = -1;
        tnd_snapshot_destroy(&s, 1);
    }
    if (rc == 0)
        *out = bench_median(t, (size_t)runs);
    free(t);
    free(base);
    free(repo);
    return rc;
}

int main(int argc, char **argv)
{
    int files = argc > 1 ? atoi(argv[1]) : 2000;
    int kib = argc > 2 ? atoi(argv[2]) : 8;
    int runs = argc > 3 ? atoi(argv[3]) : 11;
    char dir[] = "/tmp/tandem-bench-ws-XXXXXX";
    double snap = 0, fresh = 0, incr = 0;
    int rc = 1;

    if (files < 1 || kib < 1 || runs < 1 || argc > 4) {
        fprintf(stderr, "usage: %s [FILES [KIB_PER_FILE [RUNS]]]\n", argv[0]);
        return 2;
    }
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    if (make_repo(dir, files, kib) < 0 || snapshot_time(dir, runs, &snap) < 0 ||
        measure(dir, files, runs, false, &fresh) < 0 ||
        measure(dir, files, runs, true, &incr) < 0) {
        fprintf(stderr, "bench/workspace: %s\n", tnd_error_last());
        goto out;
    }
    printf("tree: %d files x %d KiB = %.1f MiB; medians of %d runs\n", files,
           kib, files * (double)kib / 1024, runs);
    printf("snapshot (git ls-files + copy)   %8.1f ms\n", snap);
    printf("reset to the base (default)      %8.1f ms\n", fresh);
    printf("reset, incremental (opt-in)      %8.1f ms\n", incr);
    rc = 0;
out:
    tnd_fs_rmtree(dir);
    return rc;
}
