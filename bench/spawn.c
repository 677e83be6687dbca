/* bench/spawn - what starting a program costs a large, threaded process.
 *
 * tandem serve holds a thread per session and starts git for each; a
 * reviewer with --threads starts every skill. This process grows to
 * HEAP MiB of touched memory and THREADS idle threads, like them, then
 * runs `true` through tnd_proc_run RUNS times: the wall time of each
 * start and the CPU this process spends on it (the children's own is
 * not counted), medians.
 *
 *   build/bench/spawn [HEAP_MIB [THREADS [RUNS]]]
 *
 * Defaults 16 MiB (a busy server's), 32 threads, 201 runs after 5 of
 * warm-up. Prints one line. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "bench/timing.h"
#include "common/error.h"
#include "skills/proc.h"

static void *idle(void *arg)
{
    (void)arg;
    for (;;)
        pause();
    return NULL;
}

int main(int argc, char **argv)
{
    long mib = argc > 1 ? atol(argv[1]) : 16;
    long threads = argc > 2 ? atol(argv[2]) : 32;
    long runs = argc > 3 ? atol(argv[3]) : 201;
    const char *av[] = {"true", NULL};
    tnd_proc_spec spec;
    double *wall, *cpu;
    char *heap;

    if (mib < 0 || threads < 0 || runs < 1 || mib > 4096 || threads > 1024 ||
        runs > 100000) {
        fprintf(stderr, "usage: %s [HEAP_MIB [THREADS [RUNS]]]\n", argv[0]);
        return 2;
    }
    heap = malloc((size_t)mib << 20);
    wall = calloc((size_t)runs, sizeof(double));
    cpu = calloc((size_t)runs, sizeof(double));
    if ((mib && !heap) || !wall || !cpu)
        return 1;
    memset(heap, 1, (size_t)mib << 20); /* touched: page tables to copy */
    for (long i = 0; i < threads; i++) {
        pthread_t t;
        if (pthread_create(&t, NULL, idle, NULL) != 0)
            return 1;
        pthread_detach(t);
    }
    memset(&spec, 0, sizeof(spec));
    spec.argv = av;
    spec.timeout_ms = 10000;
    for (long i = -5; i < runs; i++) {
        tnd_proc_result r;
        double w0 = bench_now_ms(), c0 = bench_cpu_ms(false);
        if (tnd_proc_run(&r, &spec) < 0) {
            fprintf(stderr, "spawn: %s\n", tnd_error_last());
            return 1;
        }
        tnd_proc_result_free(&r);
        if (i >= 0) {
            wall[i] = bench_now_ms() - w0;
            cpu[i] = bench_cpu_ms(false) - c0;
        }
    }
    printf("start of `true` from a process of %ld MiB and %ld threads: "
           "%.3f ms wall, %.3f ms of this process's CPU (medians of %ld)\n",
           mib, threads, bench_median(wall, (size_t)runs),
           bench_median(cpu, (size_t)runs), runs);
    free(wall);
    free(cpu);
    free(heap);
    return 0;
}
