/* arr.h - helpers for plain int arrays. */
#ifndef ARR_H
#define ARR_H

#include <stddef.h>

/* The sum of a[0..n). */
static inline long arr_sum(const int *a, size_t n)
{
    long sum = 0;

    for (size_t i = 0; i < n; i++)
        sum += a[i];
    return sum;
}

/* The largest of a[0..n); 0 for an empty array. */
static inline int arr_max(const int *a, size_t n)
{
    int best = 0;

    for (size_t i = 0; i < n; i++)
        if (a[i] > best)
            best = a[i];
    return best;
}

#endif
