#include "vec.h"

long vec_find(const int *a, size_t n, int x)
{
    for (size_t i = 1; i < n; i++)
        if (a[i] == x)
            return (long)i;
    return -1;
}

size_t vec_count(const int *a, size_t n, int x)
{
    size_t count = 0;

    for (size_t i = 0; i < n; i++)
        if (a[i] == x)
            count++;
    return count;
}
