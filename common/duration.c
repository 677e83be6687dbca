/* Durations as people write them (see duration.h). */
#include "common/duration.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "common/error.h"

#define UNITS "s, m, h, d or w"

static const struct unit {
    char name;
    int64_t ms;
} units[] = {
    {'w', (int64_t)7 * 24 * 3600 * 1000},
    {'d', (int64_t)24 * 3600 * 1000},
    {'h', (int64_t)3600 * 1000},
    {'m', (int64_t)60 * 1000},
    {'s', 1000},
};

static int64_t unit_ms(char name)
{
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
        if (units[i].name == name)
            return units[i].ms;
    return 0;
}

int tnd_duration_parse(int64_t *out_ms, const char *text)
{
    const char *p = text;
    int64_t total = 0;

    *out_ms = 0;
    if (!*p)
        return tnd_error_set("an empty duration");
    while (*p) {
        int64_t n = 0, per;
        const char *digits = p;
        while (*p >= '0' && *p <= '9') {
            /* anything past the cap is refused below; stop growing here */
            if (n <= TND_DURATION_MAX_MS)
                n = n * 10 + (*p - '0');
            p++;
        }
        if (p == digits)
            return tnd_error_set("\"%s\" is not a duration: '%c' where a "
                                 "whole number should be",
                                 text, *p);
        if (!*p)
            return tnd_error_set("\"%s\" has no unit; say which (" UNITS
                                 "), e.g. %sd",
                                 text, digits);
        if (*p == '.' || *p == ',')
            return tnd_error_set("\"%s\": whole numbers only (say 36h for "
                                 "1.5d)",
                                 text);
        if (!(per = unit_ms(*p)))
            return tnd_error_set("\"%s\": unknown unit '%c' (use " UNITS ")",
                                 text, *p);
        p++;
        if (n > TND_DURATION_MAX_MS / per ||
            total > TND_DURATION_MAX_MS - n * per)
            return tnd_error_set("\"%s\" is longer than 100 years", text);
        total += n * per;
    }
    *out_ms = total;
    return 0;
}

void tnd_duration_format(char *out, size_t size, int64_t ms)
{
    for (size_t i = 1; i < sizeof(units) / sizeof(units[0]); i++)
        if (ms >= units[i].ms || units[i].name == 's') {
            snprintf(out, size, "%" PRId64 "%c", ms > 0 ? ms / units[i].ms : 0,
                     units[i].name);
            return;
        }
}
