#include "rec.h"

#include <stdio.h>
#include <string.h>

/* A little-endian 32-bit signed value at b. */
static int32_t get_i32(const char *b)
{
    return (int32_t)((uint32_t)b[0] | (uint32_t)b[1] << 8 |
                     (uint32_t)b[2] << 16 | (uint32_t)b[3] << 24);
}

int rec_read(rec *out, int max, const char *path)
{
    char buf[65536];
    size_t len, at = 6;
    int count, n = 0;
    FILE *f = fopen(path, "rb");

    if (!f)
        return -1;
    len = fread(buf, 1, sizeof(buf), f);
    fclose(f);
    if (len < 6 || memcmp(buf, "REC1", 4) != 0)
        return -1;
    count = (unsigned char)buf[4] | (unsigned char)buf[5] << 8;
    while (n < count && n < max) {
        size_t name_len;
        if (at >= len)
            return -1;
        name_len = (unsigned char)buf[at++];
        if (at + name_len + 4 > len)
            return -1;
        memcpy(out[n].name, buf + at, name_len);
        out[n].name[name_len] = '\0';
        at += name_len;
        out[n].value = get_i32(buf + at);
        at += 4;
        n++;
    }
    return n;
}
