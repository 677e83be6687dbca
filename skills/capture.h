/* tnd_capture - what is kept of a program's output: bounded, and still
 * telling.
 *
 * The first half of the cap is kept as it came, then a ring holds the
 * latest bytes; what falls out between them is read once on its way out,
 * line by line, and the lines that name a failure (toolline.h) are kept,
 * up to TND_CAPTURE_MIDDLE_MAX bytes: a test that failed in the middle of
 * 200 KB of warnings is not lost before anyone looks. Memory stays
 * bounded whatever the program writes. A value type: init, add, finish,
 * free. */
#ifndef TND_CAPTURE_H
#define TND_CAPTURE_H

#include <stddef.h>

#include "common/buf.h"

/* Most bytes of failure lines kept from the omitted middle. */
#define TND_CAPTURE_MIDDLE_MAX (8 * 1024)

/* Bytes of a line from the omitted middle that are looked at (and kept
 * when it names a failure); the rest of a longer line is skipped. */
#define TND_CAPTURE_LINE_MAX 1024

typedef struct tnd_capture {
    tnd_buf head; /* the first bytes, up to head.cap */
    char *ring;   /* ring_cap bytes, allocated when head is full */
    size_t ring_cap;
    size_t ring_pos; /* where the next byte goes */
    size_t ring_len;
    size_t total; /* bytes the child wrote */
    /* the line being dropped from the middle: its first bytes */
    char line[TND_CAPTURE_LINE_MAX];
    size_t line_len;
    int line_long;    /* it had more than TND_CAPTURE_LINE_MAX bytes */
    tnd_buf failures; /* dropped lines that name a failure, one per line,
                         up to TND_CAPTURE_MIDDLE_MAX bytes */
    size_t nfailures; /* such lines, kept or not */
    size_t kept;      /* such lines in failures */
} tnd_capture;

/* Start empty, keeping at most cap bytes (cap >= 1) plus the failure
 * lines. */
void tnd_capture_init(tnd_capture *self, size_t cap);

/* Take len bytes the program wrote. */
void tnd_capture_add(tnd_capture *self, const char *data, size_t len);

/* The head, then "\n[... N bytes omitted ...]\n" with the failure lines
 * from the omitted part when anything was, then the tail. Caller frees;
 * *len_out (may be NULL) gets its length. Call once, before free. */
char *tnd_capture_finish(tnd_capture *self, size_t *len_out);

void tnd_capture_free(tnd_capture *self);

#endif
