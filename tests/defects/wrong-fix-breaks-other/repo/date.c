#include "date.h"

int date_is_leap(int year)
{
    return year % 4 == 0;
}

int date_days_in_month(int year, int month)
{
    static const int days[12] = {31, 28, 31, 30, 31, 30,
                                 31, 31, 30, 31, 30, 31};

    if (month < 1 || month > 12)
        return 0;
    if (month == 2 && date_is_leap(year))
        return 29;
    return days[month - 1];
}

int date_day_of_year(int year, int month, int day)
{
    int n = day;

    for (int m = 1; m < month; m++)
        n += date_days_in_month(year, m);
    return n;
}
