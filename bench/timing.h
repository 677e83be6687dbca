/* bench/timing.h - the clocks and the median the C benchmarks share.
 *
 * Header-only (each benchmark is one program built from one file):
 * monotonic wall time, this process's CPU (and its reaped children's,
 * when asked), and the median of a sample, all in milliseconds. */
#ifndef TND_BENCH_TIMING_H
#define TND_BENCH_TIMING_H

#include <stdbool.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

static inline double bench_now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static inline double bench_usage_ms(int who)
{
    struct rusage r;

    getrusage(who, &r);
    return (double)(r.ru_utime.tv_sec + r.ru_stime.tv_sec) * 1e3 +
           (double)(r.ru_utime.tv_usec + r.ru_stime.tv_usec) / 1e3;
}

/* CPU of this process so far, and of its reaped children when
 * children is true. */
static inline double bench_cpu_ms(bool children)
{
    return bench_usage_ms(RUSAGE_SELF) +
           (children ? bench_usage_ms(RUSAGE_CHILDREN) : 0.0);
}

static inline int bench_by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

/* The median of v[0..n) (n > 0); sorts v. */
static inline double bench_median(double *v, size_t n)
{
    qsort(v, n, sizeof(*v), bench_by_value);
    return v[n / 2];
}

#endif
