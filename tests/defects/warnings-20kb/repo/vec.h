/* vec.h - searching arrays of ints. */
#ifndef VEC_H
#define VEC_H

#include <stddef.h>

/* The index of the first x in a[0..n), or -1. */
long vec_find(const int *a, size_t n, int x);

/* How many times x occurs in a[0..n). */
size_t vec_count(const int *a, size_t n, int x);

#endif
