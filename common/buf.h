/* tnd_buf - a growable byte buffer with a hard cap.
 *
 * Everything read from a peer, a child process or an LLM lands in one of
 * these; the cap turns "the other side sent 4 GB" into an error the caller
 * sees instead of an allocation that takes the machine down. The contents
 * are always NUL-terminated once anything was appended, so text can be
 * used as a C string. A value type: embed it, init it, free it. */
#ifndef TND_BUF_H
#define TND_BUF_H

#include <stddef.h>

#include "common/error.h"

typedef struct tnd_buf {
    char *data;   /* NULL until the first append; NUL-terminated after */
    size_t len;   /* bytes in use, not counting the terminating NUL */
    size_t alloc; /* bytes allocated */
    size_t cap;   /* most bytes len may reach */
} tnd_buf;

#define TND_BUF_NOCAP ((size_t)-1 / 2)

/* Start empty with the given cap (TND_BUF_NOCAP for text we build
 * ourselves). */
void tnd_buf_init(tnd_buf *self, size_t cap);

/* Append len bytes. -1 (nothing appended) when the cap would be crossed. */
int tnd_buf_append(tnd_buf *self, const void *data, size_t len);

/* Append a C string. -1 when the cap would be crossed. */
int tnd_buf_puts(tnd_buf *self, const char *s);

/* Append formatted text. -1 when the cap would be crossed. */
int tnd_buf_printf(tnd_buf *self, const char *fmt, ...) TND_PRINTF(2, 3);

/* The contents as a C string: "" when empty. Borrowed. */
const char *tnd_buf_str(const tnd_buf *self);

/* Hand the contents to the caller (who frees) and leave the buffer empty.
 * Never NULL; *len_out (may be NULL) gets the length. */
char *tnd_buf_detach(tnd_buf *self, size_t *len_out);

/* Drop the contents but keep the memory and the cap. */
void tnd_buf_reset(tnd_buf *self);

/* Drop the first n bytes (all of them when n >= len); the rest moves to
 * the front. */
void tnd_buf_consume(tnd_buf *self, size_t n);

/* Free the memory; the buffer may be reused after tnd_buf_init. */
void tnd_buf_free(tnd_buf *self);

#endif
