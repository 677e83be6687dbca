#include "stats.h"

double stats_mean(const int *values, size_t count)
{
    long sum = 0;

    if (count == 0)
        return 0.0;
    for (size_t i = 0; i < count; i++)
        sum += values[i];
    return sum / count;
}

int stats_max(const int *values, size_t count)
{
    int best;

    if (count == 0)
        return 0;
    best = values[0];
    for (size_t i = 1; i < count; i++)
        if (values[i] > best)
            best = values[i];
    return best;
}
