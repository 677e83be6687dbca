/* range.h - keeping values inside a range. */
#ifndef RANGE_H
#define RANGE_H

/* x limited to lo..hi (lo <= hi): lo below it, hi above it. */
int range_clamp(int x, int lo, int hi);

#endif
