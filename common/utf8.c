/* Valid UTF-8 text from any bytes (see utf8.h). */
#include "common/utf8.h"

#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/xalloc.h"

/* The sequence at p (left > 0 bytes remain): its length when valid, else
 * 0 with *bad set to the length of its maximal subpart (>= 1), the bytes
 * one U+FFFD stands for. A NUL byte counts as invalid: the result is a C
 * string, and a NUL would cut it short without a word. */
static size_t sequence(const unsigned char *p, size_t left, size_t *bad)
{
    unsigned char lo = 0x80, hi = 0xBF;
    size_t need, k;

    *bad = 1;
    if (p[0] == 0)
        return 0;
    if (p[0] < 0x80)
        return 1;
    if (p[0] >= 0xC2 && p[0] <= 0xDF)
        need = 1;
    else if (p[0] >= 0xE0 && p[0] <= 0xEF)
        need = 2;
    else if (p[0] >= 0xF0 && p[0] <= 0xF4)
        need = 3;
    else
        return 0; /* a continuation byte, an overlong C0/C1, or F5..FF */
    /* the second byte's range excludes overlong forms (E0, F0),
     * surrogates (ED) and code points above U+10FFFF (F4) */
    if (p[0] == 0xE0)
        lo = 0xA0;
    else if (p[0] == 0xED)
        hi = 0x9F;
    else if (p[0] == 0xF0)
        lo = 0x90;
    else if (p[0] == 0xF4)
        hi = 0x8F;
    for (k = 1; k <= need; k++) {
        if (k >= left || p[k] < lo || p[k] > hi) {
            *bad = k;
            return 0;
        }
        lo = 0x80;
        hi = 0xBF;
    }
    return need + 1;
}

size_t tnd_utf8_valid_len(const char *s, size_t len)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t i = 0, bad, n;

    while (i < len) {
        /* ASCII runs are the common case: no table, no branches per
         * sequence */
        while (i < len && p[i] > 0 && p[i] < 0x80)
            i++;
        if (i == len)
            break;
        if ((n = sequence(p + i, len - i, &bad)) == 0)
            break;
        i += n;
    }
    return i;
}

bool tnd_utf8_valid(const char *s, size_t len)
{
    return tnd_utf8_valid_len(s, len) == len;
}

char *tnd_utf8_clean(const char *s, size_t len, size_t *replaced)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t i = tnd_utf8_valid_len(s, len), count = 0, bad;
    tnd_buf b;

    if (i == len) {
        if (replaced)
            *replaced = 0;
        return tnd_xstrndup(s, len);
    }
    tnd_buf_init(&b, TND_BUF_NOCAP);
    tnd_buf_append(&b, s, i);
    while (i < len) {
        size_t run = tnd_utf8_valid_len(s + i, len - i);
        tnd_buf_append(&b, s + i, run);
        i += run;
        if (i == len)
            break;
        (void)sequence(p + i, len - i, &bad); /* invalid: the run ended */
        tnd_buf_puts(&b, TND_UTF8_REPLACEMENT);
        count += bad;
        i += bad;
    }
    if (replaced)
        *replaced = count;
    return tnd_buf_detach(&b, NULL);
}

size_t tnd_utf8_clean_inplace(char **s)
{
    size_t len, replaced;
    char *clean;

    if (!s || !*s)
        return 0;
    len = strlen(*s);
    if (tnd_utf8_valid(*s, len))
        return 0;
    clean = tnd_utf8_clean(*s, len, &replaced);
    free(*s);
    *s = clean;
    return replaced;
}

bool tnd_utf8_is_binary(const char *s, size_t len)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t odd = 0, i = 0, bad, n;

    if (memchr(s, '\0', len))
        return true;
    while (i < len) {
        if (p[i] < 0x20 || p[i] == 0x7F) {
            if (!strchr("\t\n\r\f\x1b", p[i]))
                odd++;
            i++;
        } else if ((n = sequence(p + i, len - i, &bad)) > 0) {
            i += n;
        } else {
            odd += bad;
            i += bad;
        }
    }
    return odd * 10 > len;
}

size_t tnd_utf8_whole(const char *s, size_t n)
{
    for (size_t k = 1; k <= 3 && k <= n; k++) {
        unsigned char c = (unsigned char)s[n - k];
        size_t need;

        if ((c & 0xC0) == 0x80)
            continue;
        if (c < 0xC0)
            return n;
        need = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;
        return need > k ? n - k : n;
    }
    return n;
}
