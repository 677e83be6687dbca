/* Tests for range.c: one line per failure, exit 1 if any. */
#include <stdio.h>

#include "range.h"

static int failures;

static void expect(const char *what, int got, int want)
{
    if (got != want) {
        printf("[FAIL] clamp %s: got %d, want %d\n", what, got, want);
        failures++;
    }
}

int main(void)
{
    expect("below the range", range_clamp(-5, 0, 10), 0);
    expect("at the lower edge", range_clamp(0, 0, 10), 0);
    expect("inside the range", range_clamp(7, 0, 10), 7);
    expect("at the upper edge", range_clamp(10, 0, 10), 10);
    expect("above the range", range_clamp(15, 0, 10), 10);
    if (failures) {
        printf("test_range: %d failed\n", failures);
        return 1;
    }
    printf("test_range: all passed\n");
    return 0;
}
