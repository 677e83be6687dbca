/* date.h - calendar arithmetic for the Gregorian calendar. */
#ifndef DATE_H
#define DATE_H

/* 1 if year is a leap year, else 0. */
int date_is_leap(int year);

/* The number of days in month (1..12) of year; 0 for a bad month. */
int date_days_in_month(int year, int month);

/* The day of the year (1..366) of year-month-day. */
int date_day_of_year(int year, int month, int day);

#endif
