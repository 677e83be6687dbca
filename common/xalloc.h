/* tnd_x* - allocation that cannot fail.
 *
 * Every buffer that grows from outside input is capped (see buf.h), so
 * running out of memory is not an input error but a broken machine; like
 * git's xmalloc, these print "out of memory" and abort rather than make
 * every caller invent a recovery that cannot be tested. */
#ifndef TND_XALLOC_H
#define TND_XALLOC_H

#include <stdarg.h>
#include <stddef.h>

#include "common/error.h"

/* malloc; never NULL. Caller frees. */
void *tnd_xmalloc(size_t size);

/* calloc with overflow check; never NULL. Caller frees. */
void *tnd_xcalloc(size_t count, size_t size);

/* realloc with overflow check on count * size; never NULL. */
void *tnd_xrealloc(void *ptr, size_t count, size_t size);

/* strdup; NULL in gives NULL out. Caller frees. */
char *tnd_xstrdup(const char *s);

/* Copy of the first n bytes (or up to a NUL) plus a NUL. Caller frees. */
char *tnd_xstrndup(const char *s, size_t n);

/* Formatted string. Caller frees. */
char *tnd_xasprintf(const char *fmt, ...) TND_PRINTF(1, 2);

/* va_list version of tnd_xasprintf. Caller frees. */
char *tnd_xvasprintf(const char *fmt, va_list ap);

/* Grow *items (of elem bytes each) so it holds at least need elements;
 * *alloc tracks the capacity. Doubles, so appends are amortised O(1). */
void tnd_xgrow(void **items, size_t *alloc, size_t need, size_t elem);

#define TND_GROW(arr, alloc, need) \
    tnd_xgrow((void **)&(arr), &(alloc), (need), sizeof(*(arr)))

#endif
