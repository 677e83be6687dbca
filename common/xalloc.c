/* Allocation wrappers that abort on exhaustion (see xalloc.h). */
#include "common/xalloc.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void oom(size_t size)
{
    fprintf(stderr, "tandem: out of memory (allocating %zu bytes)\n", size);
    abort();
}

void *tnd_xmalloc(size_t size)
{
    void *p = malloc(size ? size : 1);

    if (!p)
        oom(size);
    return p;
}

void *tnd_xcalloc(size_t count, size_t size)
{
    void *p;

    if (size && count > SIZE_MAX / size)
        oom(SIZE_MAX);
    p = calloc(count ? count : 1, size ? size : 1);
    if (!p)
        oom(count * size);
    return p;
}

void *tnd_xrealloc(void *ptr, size_t count, size_t size)
{
    size_t total;
    void *p;

    if (size && count > SIZE_MAX / size)
        oom(SIZE_MAX);
    total = count * size;
    p = realloc(ptr, total ? total : 1);
    if (!p)
        oom(total);
    return p;
}

char *tnd_xstrdup(const char *s)
{
    return s ? tnd_xstrndup(s, strlen(s)) : NULL;
}

char *tnd_xstrndup(const char *s, size_t n)
{
    size_t len = strnlen(s, n);
    char *p = tnd_xmalloc(len + 1);

    memcpy(p, s, len);
    p[len] = '\0';
    return p;
}

char *tnd_xvasprintf(const char *fmt, va_list ap)
{
    va_list copy;
    int n;
    char *p;

    va_copy(copy, ap);
    n = vsnprintf(NULL, 0, fmt, copy);
    va_end(copy);
    if (n < 0)
        oom(0);
    p = tnd_xmalloc((size_t)n + 1);
    vsnprintf(p, (size_t)n + 1, fmt, ap);
    return p;
}

char *tnd_xasprintf(const char *fmt, ...)
{
    va_list ap;
    char *p;

    va_start(ap, fmt);
    p = tnd_xvasprintf(fmt, ap);
    va_end(ap);
    return p;
}

void tnd_xgrow(void **items, size_t *alloc, size_t need, size_t elem)
{
    size_t n = *alloc ? *alloc : 8;

    if (need <= *alloc)
        return;
    while (n < need) {
        if (n > SIZE_MAX / 2)
            oom(SIZE_MAX);
        n *= 2;
    }
    *items = tnd_xrealloc(*items, n, elem);
    *alloc = n;
}
