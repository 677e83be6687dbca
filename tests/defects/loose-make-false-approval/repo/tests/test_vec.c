/* Prints a summary of a few vectors; `make test` compares it with
 * expected.txt. */
#include <stdio.h>

#include "vec.h"

static void show(const char *name, const int *xs, size_t n)
{
    vec v = {0};

    for (size_t i = 0; i < n; i++)
        if (vec_push(&v, xs[i]) < 0) {
            printf("%s: out of memory\n", name);
            return;
        }
    printf("%s: len %zu sum %ld max %d\n", name, v.len, vec_sum(&v),
           vec_max(&v));
    vec_free(&v);
}

int main(void)
{
    const int temps[] = {-4, -9, -1, -6};
    const int scores[] = {12, 40, 7, 33, 25};

    show("temps", temps, 4);
    show("scores", scores, 5);
    return 0;
}
