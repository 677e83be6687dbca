/* tnd_duration - spans of time as people write them: "30d", "12h",
 * "45m", "90s", "2w", or several together ("1d12h"). */
#ifndef TND_DURATION_H
#define TND_DURATION_H

#include <stddef.h>
#include <stdint.h>

/* The longest span taken: 100 years. */
#define TND_DURATION_MAX_MS ((int64_t)36525 * 24 * 3600 * 1000)

/* Parse text, one or more NUMBER UNIT pairs (units s, m, h, d, w; a
 * number is whole and not negative), into milliseconds. -1 with the
 * error saying what is wrong (no unit, an unknown one, not a number,
 * more than TND_DURATION_MAX_MS) without naming the option. */
int tnd_duration_parse(int64_t *out_ms, const char *text);

/* ms in its largest whole unit, rounded down, into out: "41d", "5h",
 * "12m", "30s" (negative spans are "0s"). */
void tnd_duration_format(char *out, size_t size, int64_t ms);

#endif
