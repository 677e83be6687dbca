/* Tests for stats.c: prints one line per failure, exits 1 if any. */
#include <math.h>
#include <stdio.h>

#include "stats.h"

static int failures;

static void expect_near(const char *what, double got, double want)
{
    if (fabs(got - want) > 1e-9) {
        printf("FAIL %s = %f, expected %f\n", what, got, want);
        failures++;
    }
}

static void expect_int(const char *what, int got, int want)
{
    if (got != want) {
        printf("FAIL %s = %d, expected %d\n", what, got, want);
        failures++;
    }
}

int main(void)
{
    const int whole[] = {2, 4, 6};
    const int fraction[] = {1, 2, 3, 4};
    const int negative[] = {-3, -1};

    expect_near("stats_mean({2,4,6})", stats_mean(whole, 3), 4.0);
    expect_near("stats_mean({1,2,3,4})", stats_mean(fraction, 4), 2.5);
    expect_near("stats_mean({-3,-1})", stats_mean(negative, 2), -2.0);
    expect_near("stats_mean({})", stats_mean(NULL, 0), 0.0);
    expect_int("stats_max({2,4,6})", stats_max(whole, 3), 6);
    expect_int("stats_max({-3,-1})", stats_max(negative, 2), -1);
    if (failures) {
        printf("%d test(s) failed\n", failures);
        return 1;
    }
    printf("all tests passed\n");
    return 0;
}
