/* base64 encoding and strict decoding (see base64.h). */
#include "common/base64.h"

#include <stdlib.h>

#include "common/error.h"
#include "common/xalloc.h"

static const char alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

size_t tnd_base64_len(size_t len)
{
    return (len + 2) / 3 * 4;
}

char *tnd_base64_encode(const void *data, size_t len)
{
    const unsigned char *p = data;
    char *out = tnd_xmalloc(tnd_base64_len(len) + 1), *o = out;

    for (size_t i = 0; i < len; i += 3) {
        unsigned v = (unsigned)p[i] << 16;
        if (i + 1 < len)
            v |= (unsigned)p[i + 1] << 8;
        if (i + 2 < len)
            v |= p[i + 2];
        *o++ = alphabet[v >> 18 & 63];
        *o++ = alphabet[v >> 12 & 63];
        *o++ = i + 1 < len ? alphabet[v >> 6 & 63] : '=';
        *o++ = i + 2 < len ? alphabet[v & 63] : '=';
    }
    *o = '\0';
    return out;
}

static int value(char c)
{
    if (c >= 'A' && c <= 'Z')
        return c - 'A';
    if (c >= 'a' && c <= 'z')
        return c - 'a' + 26;
    if (c >= '0' && c <= '9')
        return c - '0' + 52;
    return c == '+' ? 62 : c == '/' ? 63 : -1;
}

int tnd_base64_decode(char **out, size_t *out_len, const char *text, size_t len)
{
    char *buf;
    size_t n = 0;

    *out = NULL;
    *out_len = 0;
    if (len % 4)
        return tnd_error_set("base64 text of %zu characters is not a "
                             "multiple of 4 long",
                             len);
    buf = tnd_xmalloc(len / 4 * 3 + 1);
    for (size_t i = 0; i < len; i += 4) {
        int v[4], pad = 0;
        for (int k = 0; k < 4; k++) {
            char c = text[i + k];
            if (c == '=' && i + 4 == len && k >= 2 &&
                (k == 3 || text[i + 3] == '=')) {
                v[k] = 0;
                pad++;
                continue;
            }
            if ((v[k] = value(c)) < 0) {
                free(buf);
                return tnd_error_set("base64 text has a character outside "
                                     "the alphabet at offset %zu",
                                     i + (size_t)k);
            }
        }
        unsigned bits = (unsigned)v[0] << 18 | (unsigned)v[1] << 12 |
                        (unsigned)v[2] << 6 | (unsigned)v[3];
        buf[n++] = (char)(bits >> 16);
        if (pad < 2)
            buf[n++] = (char)(bits >> 8 & 255);
        if (pad < 1)
            buf[n++] = (char)(bits & 255);
    }
    buf[n] = '\0';
    *out = buf;
    *out_len = n;
    return 0;
}
