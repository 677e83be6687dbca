/* tnd_base64 - base64 (RFC 4648, standard alphabet, padded), for file
 * contents carried in JSON bodies. */
#ifndef TND_BASE64_H
#define TND_BASE64_H

#include <stddef.h>

/* The encoded length of len bytes (without a NUL). */
size_t tnd_base64_len(size_t len);

/* len bytes of data encoded, NUL-terminated. Caller frees. */
char *tnd_base64_encode(const void *data, size_t len);

/* Decode len characters of text (padding required, no whitespace) into
 * *out (caller frees; NUL-terminated for convenience) and *out_len. -1
 * with the error set on a character outside the alphabet or a length
 * that is not a multiple of 4. */
int tnd_base64_decode(char **out, size_t *out_len, const char *text,
                      size_t len);

#endif
