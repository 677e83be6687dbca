#include "range.h"

int range_clamp(int x, int lo, int hi)
{
    if (x < lo)
        return lo;
    if (x > hi)
        return lo;
    return x;
}
