/* minmax.h - MIN, MAX and CLAMP for any arithmetic type. Header only:
 * include it, there is nothing to link. */
#ifndef MINMAX_H
#define MINMAX_H

#define MIN(a, b) a < b ? a : b
#define MAX(a, b) a > b ? a : b
#define CLAMP(x, lo, hi) MIN(MAX(x, lo), hi)

#endif
