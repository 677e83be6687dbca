/* Capped growable buffer (see buf.h). */
#include "common/buf.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/xalloc.h"

void tnd_buf_init(tnd_buf *self, size_t cap)
{
    self->data = NULL;
    self->len = 0;
    self->alloc = 0;
    self->cap = cap;
}

static int reserve(tnd_buf *self, size_t extra)
{
    size_t need;

    if (extra > self->cap || self->len > self->cap - extra)
        return tnd_error_set("data exceeds the limit of %zu bytes", self->cap);
    need = self->len + extra + 1;
    if (need > self->alloc) {
        size_t n = self->alloc ? self->alloc : 64;
        while (n < need)
            n *= 2;
        self->data = tnd_xrealloc(self->data, n, 1);
        self->alloc = n;
    }
    return 0;
}

int tnd_buf_append(tnd_buf *self, const void *data, size_t len)
{
    if (reserve(self, len) < 0)
        return -1;
    if (len)
        memcpy(self->data + self->len, data, len);
    self->len += len;
    self->data[self->len] = '\0';
    return 0;
}

int tnd_buf_puts(tnd_buf *self, const char *s)
{
    return tnd_buf_append(self, s, strlen(s));
}

int tnd_buf_printf(tnd_buf *self, const char *fmt, ...)
{
    va_list ap;
    int n;

    va_start(ap, fmt);
    n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    if (n < 0)
        return tnd_error_set("bad format string");
    if (reserve(self, (size_t)n) < 0)
        return -1;
    va_start(ap, fmt);
    vsnprintf(self->data + self->len, (size_t)n + 1, fmt, ap);
    va_end(ap);
    self->len += (size_t)n;
    return 0;
}

const char *tnd_buf_str(const tnd_buf *self)
{
    return self->data ? self->data : "";
}

char *tnd_buf_detach(tnd_buf *self, size_t *len_out)
{
    char *p = self->data ? self->data : tnd_xstrdup("");

    if (len_out)
        *len_out = self->len;
    self->data = NULL;
    self->len = 0;
    self->alloc = 0;
    return p;
}

void tnd_buf_reset(tnd_buf *self)
{
    self->len = 0;
    if (self->data)
        self->data[0] = '\0';
}

void tnd_buf_consume(tnd_buf *self, size_t n)
{
    if (n >= self->len) {
        tnd_buf_reset(self);
        return;
    }
    memmove(self->data, self->data + n, self->len - n + 1);
    self->len -= n;
}

void tnd_buf_free(tnd_buf *self)
{
    free(self->data);
    self->data = NULL;
    self->len = 0;
    self->alloc = 0;
}
