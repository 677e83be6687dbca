/* tnd_clock - time in milliseconds. */
#ifndef TND_CLOCK_H
#define TND_CLOCK_H

#include <stddef.h>
#include <stdint.h>

/* Monotonic milliseconds: for deadlines and durations, never for dates. */
int64_t tnd_now_ms(void);

/* Wall-clock milliseconds since the epoch: for timestamps people read. */
int64_t tnd_wall_ms(void);

/* Format a wall-clock time as UTC ISO 8601 with milliseconds
 * ("2026-11-22T01:44:28.123Z") into out (at least 32 bytes). */
void tnd_clock_iso8601(char *out, size_t size, int64_t wall_ms);

/* Milliseconds left until deadline (a tnd_now_ms() value), clamped to
 * 0..max_wait; max_wait < 0 means no clamp. */
long tnd_clock_remaining(int64_t deadline, long max_wait);

#endif
