/* Monotonic and wall clocks in milliseconds (see clock.h). */
#include "common/clock.h"

#include <stdio.h>
#include <time.h>

int64_t tnd_now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t tnd_wall_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void tnd_clock_iso8601(char *out, size_t size, int64_t wall_ms)
{
    time_t secs = (time_t)(wall_ms / 1000);
    struct tm tm;

    gmtime_r(&secs, &tm);
    snprintf(out, size, "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ",
             tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour,
             tm.tm_min, tm.tm_sec, (int)(wall_ms % 1000));
}

long tnd_clock_remaining(int64_t deadline, long max_wait)
{
    int64_t left = deadline - tnd_now_ms();

    if (left < 0)
        left = 0;
    if (max_wait >= 0 && left > max_wait)
        left = max_wait;
    return (long)left;
}
