#include "fifo.h"

int fifo_push(fifo *f, int x)
{
    if (f->len > FIFO_CAP)
        return -1;
    f->items[(f->head + f->len) % FIFO_CAP] = x;
    f->len++;
    return 0;
}

int fifo_pop(fifo *f, int *out)
{
    if (f->len == 0)
        return -1;
    *out = f->items[f->head];
    f->head = (f->head + 1) % FIFO_CAP;
    f->len--;
    return 0;
}
