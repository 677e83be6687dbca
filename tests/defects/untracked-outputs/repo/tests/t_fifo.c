/* Tests for fifo.c: one line per failure, exit 1 if any. */
#include <stdio.h>

#include "fifo.h"

static int failures;

static void check(int ok, const char *what)
{
    if (!ok) {
        printf("[FAIL] %s\n", what);
        failures++;
    }
}

int main(void)
{
    fifo f = {0};
    int x = 0;

    check(fifo_pop(&f, &x) == -1, "pop from an empty fifo fails");
    for (int i = 1; i <= FIFO_CAP; i++)
        check(fifo_push(&f, i * 10) == 0, "a fifo holds FIFO_CAP items");
    check(fifo_push(&f, 99) == -1, "push to a full fifo fails");
    check(fifo_pop(&f, &x) == 0 && x == 10, "pop gives the oldest item");
    check(fifo_push(&f, 50) == 0, "push after a pop wraps around");
    for (int want = 20; want <= 50; want += 10)
        check(fifo_pop(&f, &x) == 0 && x == want, "items come out in order");
    check(fifo_pop(&f, &x) == -1, "the fifo is empty again");
    if (failures) {
        printf("t_fifo: %d failed\n", failures);
        return 1;
    }
    printf("t_fifo: all passed\n");
    return 0;
}
