/* Tests for fmt.c: one line per failure, exit 1 if any. */
#include <stdio.h>
#include <string.h>

#include "fmt.h"

static int failures;

static void expect(unsigned long long bytes, const char *want)
{
    char got[32];

    fmt_size(got, sizeof(got), bytes);
    if (strcmp(got, want) != 0) {
        printf("[FAIL] fmt_size(%llu) = \"%s\", expected \"%s\"\n", bytes, got,
               want);
        failures++;
    }
}

int main(void)
{
    expect(0, "0 B");
    expect(512, "512 B");
    expect(1023, "1023 B");
    expect(1024, "1.0 KiB");
    expect(1536, "1.5 KiB");
    expect(1048575, "1024.0 KiB");
    expect(1048576, "1.0 MiB");
    expect(3ULL << 30, "3.0 GiB");
    expect(5ULL << 40, "5120.0 GiB");
    if (failures) {
        printf("test_fmt: %d failed\n", failures);
        return 1;
    }
    printf("test_fmt: all passed\n");
    return 0;
}
