/* Tests for minmax.h: one line per failure, exit 1 if any. */
#include <stdio.h>

#include "minmax.h"

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
    int flags = 4;

    expect("MAX(3, 4)", MAX(3, 4), 4);
    expect("MIN(3, 4)", MIN(3, 4), 3);
    expect("2 * MAX(3, 4)", 2 * MAX(3, 4), 8);
    expect("MIN(3, 4) + 1", MIN(3, 4) + 1, 4);
    expect("MAX(flags & 4, 2)", MAX(flags & 4, 2), 4);
    expect("MIN(flags | 1, 9)", MIN(flags | 1, 9), 5);
    expect("CLAMP(15, 0, 10)", CLAMP(15, 0, 10), 10);
    expect("CLAMP(-3, 0, 10)", CLAMP(-3, 0, 10), 0);
    expect("CLAMP(7, 0, 10)", CLAMP(7, 0, 10), 7);
    if (failures) {
        printf("test_minmax: %d failed\n", failures);
        return 1;
    }
    printf("test_minmax: all passed\n");
    return 0;
}
