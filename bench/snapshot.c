/* bench/snapshot - what taking a task's snapshot costs, git included.
 *
 * Every task of `tandem serve` takes a snapshot of its repository
 * (orchestrator/snapshot.c): git lists the files, then each is copied.
 * This takes RUNS snapshots of REPO, one after another in this one
 * process, and prints the median wall time of one, and the CPU of one:
 * tandem's own (this process: the copy) and git's (the reaped
 * children), the figure that grows with the number of git processes.
 *
 *   build/bench/snapshot REPO [RUNS]
 *
 * REPO is any directory (a fresh clone keeps build outputs out); RUNS
 * defaults to 101. */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#include "bench/timing.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/rmtree.h"
#include "common/xalloc.h"
#include "orchestrator/snapshot.h"

int main(int argc, char **argv)
{
    int runs = argc > 2 ? atoi(argv[2]) : 101;
    tnd_snapshot_options o = {.max_bytes = (size_t)1 << 34};
    char dir[] = "/tmp/tandem-bench-snap-XXXXXX";
    char *base;
    double *t, self, git;
    int rc = 1;

    if (argc < 2 || argc > 3 || runs < 1) {
        fprintf(stderr, "usage: %s REPO [RUNS]\n", argv[0]);
        return 2;
    }
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    base = tnd_fs_join(dir, "snap");
    t = tnd_xcalloc((size_t)runs, sizeof(*t));
    self = bench_usage_ms(RUSAGE_SELF);
    git = bench_usage_ms(RUSAGE_CHILDREN);
    for (int i = 0; i < runs; i++) {
        double t0 = bench_now_ms();
        tnd_snapshot *s = tnd_snapshot_new(argv[1], base, &o);
        t[i] = bench_now_ms() - t0;
        if (!s) {
            fprintf(stderr, "bench/snapshot: %s\n", tnd_error_last());
            goto out;
        }
        if (i == 0) {
            char *text = tnd_snapshot_describe(s);
            printf("%s: %s; %d runs\n", argv[1], text, runs);
            free(text);
        }
        tnd_snapshot_destroy(&s, 1);
    }
    self = (bench_usage_ms(RUSAGE_SELF) - self) / runs;
    git = (bench_usage_ms(RUSAGE_CHILDREN) - git) / runs;
    printf("snapshot, median wall            %8.2f ms\n",
           bench_median(t, (size_t)runs));
    printf("CPU a snapshot: tandem           %8.2f ms\n", self);
    printf("CPU a snapshot: git              %8.2f ms\n", git);
    rc = 0;
out:
    tnd_fs_rmtree(dir);
    free(t);
    free(base);
    return rc;
}
