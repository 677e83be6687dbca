/* Thread-local error messages (see error.h). Messages are truncated at
 * 2 KiB: an error is a sentence, not a log. */
#include "common/error.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define ERROR_MAX 2048

static _Thread_local char last[ERROR_MAX];
static _Thread_local bool config; /* last was set by tnd_error_config */

/* last = a + ": " + b, truncated to fit (truncation is intended). */
static void set_joined(const char *a, const char *b)
{
    char out[ERROR_MAX];
    size_t n = 0;

    for (; *a && n < sizeof(out) - 1; a++)
        out[n++] = *a;
    if (*b) {
        for (const char *sep = ": "; *sep && n < sizeof(out) - 1; sep++)
            out[n++] = *sep;
        for (; *b && n < sizeof(out) - 1; b++)
            out[n++] = *b;
    }
    out[n] = '\0';
    memcpy(last, out, n + 1);
}

/* Format into a buffer of our own first: an argument may be
 * tnd_error_last() itself ("while doing X: %s"). */
static void set_formatted(const char *fmt, va_list ap)
{
    char msg[ERROR_MAX];

    vsnprintf(msg, sizeof(msg), fmt, ap);
    memcpy(last, msg, sizeof(last));
    config = false;
}

int tnd_error_set(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    set_formatted(fmt, ap);
    va_end(ap);
    return TND_ERROR;
}

int tnd_error_config(const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    set_formatted(fmt, ap);
    va_end(ap);
    config = true;
    return TND_ECONFIG;
}

int tnd_error_sys(const char *fmt, ...)
{
    int saved = errno;
    char msg[ERROR_MAX];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    set_joined(msg, strerror(saved));
    config = false;
    errno = saved;
    return TND_ERROR;
}

void tnd_error_prefix(const char *fmt, ...)
{
    char prefix[ERROR_MAX];
    char old[ERROR_MAX];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(prefix, sizeof(prefix), fmt, ap);
    va_end(ap);
    memcpy(old, last, sizeof(old));
    set_joined(prefix, old);
}

bool tnd_error_is_config(void)
{
    return config;
}

const char *tnd_error_last(void)
{
    return last;
}

void tnd_error_clear(void)
{
    last[0] = '\0';
    config = false;
}
