/* Tests for vec.c: a line per check ([ ok ] or [FAIL] with the place of
 * the check), then a summary; exit 1 if any check failed. */
#include <stdio.h>

#include "compat.h"
#include "vec.h"

static const int fib[] = {5, 8, 13, 21, 34, 55, 89, 144};
static const int sq[] = {1, 4, 9, 16, 25, 36, 49, 64, 81, 100};
static const int primes[] = {2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37};

typedef struct check {
    const char *name;
    const int *a;
    size_t n;
    int x;
    long want;
    int line;
} check;

#define FIND(arr, x, want)                                                    \
    { #arr, arr, sizeof(arr) / sizeof(arr[0]), x, want, __LINE__ }

static const check checks[] = {
    /* the ends of fib */
    FIND(fib, 5, 0),
    FIND(fib, 144, 7),
    /* inside */
    FIND(fib, 8, 1),
    FIND(fib, 13, 2),
    FIND(fib, 21, 3),
    FIND(fib, 34, 4),
    FIND(fib, 55, 5),
    FIND(fib, 89, 6),
    FIND(sq, 4, 1),
    FIND(sq, 9, 2),
    FIND(sq, 16, 3),
    FIND(sq, 25, 4),
    FIND(sq, 36, 5),
    FIND(sq, 49, 6),
    FIND(sq, 64, 7),
    FIND(sq, 81, 8),
    /* missing */
    FIND(fib, 0, -1),
    FIND(fib, 1, -1),
    FIND(fib, 2, -1),
    FIND(fib, 3, -1),
    FIND(fib, 4, -1),
    FIND(fib, 6, -1),
    FIND(fib, 7, -1),
    FIND(fib, 9, -1),
    FIND(fib, 10, -1),
    FIND(fib, 11, -1),
    FIND(fib, 12, -1),
    FIND(fib, 14, -1),
    FIND(fib, 15, -1),
    FIND(fib, 20, -1),
    FIND(fib, 22, -1),
    FIND(fib, 33, -1),
    FIND(fib, 35, -1),
    FIND(fib, 54, -1),
    FIND(fib, 56, -1),
    FIND(fib, 88, -1),
    FIND(fib, 90, -1),
    FIND(fib, 143, -1),
    FIND(fib, 145, -1),
    FIND(fib, 200, -1),
    FIND(fib, -5, -1),
    FIND(fib, -144, -1),
    FIND(fib, 1000, -1),
    FIND(fib, 99, -1),
    FIND(sq, 0, -1),
    FIND(sq, 2, -1),
    FIND(sq, 3, -1),
    FIND(sq, 5, -1),
    FIND(sq, 8, -1),
    FIND(sq, 10, -1),
    FIND(sq, 15, -1),
    FIND(sq, 17, -1),
    FIND(sq, 24, -1),
    FIND(sq, 26, -1),
    FIND(sq, 35, -1),
    FIND(sq, 37, -1),
    FIND(sq, 48, -1),
    FIND(sq, 50, -1),
    FIND(sq, 63, -1),
    FIND(sq, 65, -1),
    FIND(sq, 80, -1),
    FIND(sq, 82, -1),
    FIND(sq, 99, -1),
    FIND(sq, 101, -1),
    FIND(sq, -1, -1),
    FIND(sq, -100, -1),
    FIND(sq, 121, -1),
    FIND(sq, 144, -1),
    FIND(sq, 1000, -1),
    FIND(primes, 3, 1),
    FIND(primes, 5, 2),
    FIND(primes, 7, 3),
    FIND(primes, 11, 4),
    FIND(primes, 13, 5),
    FIND(primes, 17, 6),
    FIND(primes, 19, 7),
    FIND(primes, 23, 8),
    FIND(primes, 29, 9),
    FIND(primes, 31, 10),
    FIND(primes, 0, -1),
    FIND(primes, 1, -1),
    FIND(primes, 4, -1),
    FIND(primes, 6, -1),
    FIND(primes, 8, -1),
    FIND(primes, 9, -1),
    FIND(primes, 10, -1),
    FIND(primes, 12, -1),
    FIND(primes, 14, -1),
    FIND(primes, 15, -1),
    FIND(primes, 16, -1),
    FIND(primes, 18, -1),
    FIND(primes, 20, -1),
    FIND(primes, 21, -1),
    FIND(primes, 22, -1),
    FIND(primes, 24, -1),
    FIND(primes, 25, -1),
    FIND(primes, 27, -1),
    FIND(primes, 30, -1),
    FIND(primes, 32, -1),
    FIND(primes, 33, -1),
    FIND(primes, 35, -1),
    FIND(primes, 36, -1),
    FIND(primes, 38, -1),
    FIND(primes, 39, -1),
    FIND(primes, -2, -1),
    FIND(primes, -3, -1),
    FIND(primes, 41, -1),
    FIND(primes, 43, -1),
    FIND(primes, 47, -1),
};

int main(void)
{
    size_t n = sizeof(checks) / sizeof(checks[0]);
    int failed = 0;

    compat_open_01("test_vec", 0, 0);
    for (size_t i = 0; i < n; i++) {
        const check *c = &checks[i];
        long got = vec_find(c->a, c->n, c->x);
        if (got == c->want) {
            printf("[ ok ] test_vec.c:%d vec_find(%s, %d) = %ld\n", c->line,
                   c->name, c->x, got);
        } else {
            printf("[FAIL] test_vec.c:%d vec_find(%s, %d) = %ld, expected %ld\n",
                   c->line, c->name, c->x, got, c->want);
            failed++;
        }
    }
    printf("test_vec: %d of %zu checks failed\n", failed, n);
    return failed ? 1 : 0;
}
