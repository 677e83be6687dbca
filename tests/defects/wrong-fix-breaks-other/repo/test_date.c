/* Tests for date.c: one line per failure, exit 1 if any. */
#include <stdio.h>

#include "date.h"

static int failures;

static void expect(const char *what, int got, int want)
{
    if (got != want) {
        printf("[FAIL] %s = %d, expected %d\n", what, got, want);
        failures++;
    }
}

int main(void)
{
    expect("date_is_leap(2024)", date_is_leap(2024), 1);
    expect("date_is_leap(2023)", date_is_leap(2023), 0);
    expect("date_is_leap(1900)", date_is_leap(1900), 0);
    expect("date_is_leap(2000)", date_is_leap(2000), 1);
    expect("date_days_in_month(2000, 2)", date_days_in_month(2000, 2), 29);
    expect("date_days_in_month(2023, 4)", date_days_in_month(2023, 4), 30);
    expect("date_days_in_month(2023, 13)", date_days_in_month(2023, 13), 0);
    expect("date_day_of_year(2024, 12, 31)", date_day_of_year(2024, 12, 31),
           366);
    expect("date_day_of_year(2100, 3, 1)", date_day_of_year(2100, 3, 1), 60);
    if (failures) {
        printf("test_date: %d failed\n", failures);
        return 1;
    }
    printf("test_date: all passed\n");
    return 0;
}
