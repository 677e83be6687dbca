#include "fmt.h"

#include <stdio.h>

static const char *const units[] = {"B", "KiB", "MiB", "GiB"};

int fmt_size(char *buf, size_t size, unsigned long long bytes)
{
    double value = (double)bytes;
    int unit = 0;

    while (value >= 1024 && unit < 3) {
        value /= 1024;
        unit++;
    }
    if (unit == 0)
        return snprintf(buf, size, "%llu B", bytes);
    return snprintf(buf, size, "%.1f %s", value, units[unit]);
}
