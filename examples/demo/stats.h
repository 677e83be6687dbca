/* stats: small statistics over integer samples. */
#ifndef STATS_H
#define STATS_H

#include <stddef.h>

/* The arithmetic mean of count values; 0.0 when count is 0. */
double stats_mean(const int *values, size_t count);

/* The largest of count values; 0 when count is 0. */
int stats_max(const int *values, size_t count);

#endif
