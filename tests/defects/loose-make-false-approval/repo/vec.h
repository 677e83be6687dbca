/* vec.h - a growable vector of ints. */
#ifndef VEC_H
#define VEC_H

#include <stdlib.h>

#include "arr.h"

typedef struct vec {
    int *items;
    size_t len, cap;
} vec;

/* Append x; 0 on success, -1 when out of memory. */
static inline int vec_push(vec *v, int x)
{
    if (v->len == v->cap) {
        size_t cap = v->cap ? v->cap * 2 : 8;
        int *items = realloc(v->items, cap * sizeof(*items));
        if (!items)
            return -1;
        v->items = items;
        v->cap = cap;
    }
    v->items[v->len++] = x;
    return 0;
}

static inline long vec_sum(const vec *v)
{
    return arr_sum(v->items, v->len);
}

static inline int vec_max(const vec *v)
{
    return arr_max(v->items, v->len);
}

static inline void vec_free(vec *v)
{
    free(v->items);
    v->items = NULL;
    v->len = v->cap = 0;
}

#endif
