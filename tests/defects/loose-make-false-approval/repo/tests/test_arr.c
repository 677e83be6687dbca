/* Tests for arr.h: one line per failure, exit 1 if any. */
#include <stdio.h>

#include "arr.h"

static int failures;

static void expect(const char *what, long got, long want)
{
    if (got != want) {
        printf("[FAIL] %s = %ld, expected %ld\n", what, got, want);
        failures++;
    }
}

int main(void)
{
    const int mixed[] = {4, -2, 9, 1};
    const int negative[] = {-7, -3, -12};
    const int one[] = {-5};

    expect("arr_sum(mixed)", arr_sum(mixed, 4), 12);
    expect("arr_sum(empty)", arr_sum(mixed, 0), 0);
    expect("arr_max(mixed)", arr_max(mixed, 4), 9);
    expect("arr_max(negative)", arr_max(negative, 3), -3);
    expect("arr_max(one)", arr_max(one, 1), -5);
    expect("arr_max(empty)", arr_max(mixed, 0), 0);
    if (failures) {
        printf("test_arr: %d failed\n", failures);
        return 1;
    }
    printf("test_arr: all passed\n");
    return 0;
}
