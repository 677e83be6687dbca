/* Tests for rec.c on testdata/sample.bin: one line per failure, exit 1
 * if any. A failing record is shown by its name, as the file has it. */
#include <stdio.h>

#include "rec.h"

int main(void)
{
    static const int32_t want[] = {100, 200, -2, 40000, 0};
    rec recs[16];
    int n = rec_read(recs, 16, "testdata/sample.bin"), failures = 0;

    if (n != 5) {
        printf("[FAIL] rec_read read %d records, expected 5\n", n);
        return 1;
    }
    for (int i = 0; i < n; i++) {
        if (recs[i].value != want[i]) {
            printf("[FAIL] record %d (%s): value %ld, expected %ld\n", i,
                   recs[i].name, (long)recs[i].value, (long)want[i]);
            failures++;
        }
    }
    if (failures) {
        printf("test_rec: %d failed\n", failures);
        return 1;
    }
    printf("test_rec: all passed\n");
    return 0;
}
