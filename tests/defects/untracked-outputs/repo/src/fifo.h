/* fifo.h - a bounded first-in first-out queue of ints. */
#ifndef FIFO_H
#define FIFO_H

#include <stddef.h>

#define FIFO_CAP 4

typedef struct fifo {
    int items[FIFO_CAP];
    size_t head, len;
} fifo;

/* Add x at the back; 0, or -1 when the fifo is full. */
int fifo_push(fifo *f, int x);

/* Take the front item into *out; 0, or -1 when the fifo is empty. */
int fifo_pop(fifo *f, int *out);

#endif
