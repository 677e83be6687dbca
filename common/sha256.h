/* tnd_sha256 - SHA-256 (FIPS 180-4), for naming file contents.
 *
 * The content transfer to agents on other hosts names every file by the
 * SHA-256 of its bytes (proto/tree.h); this is our own implementation so
 * that needs no new library. Not for secrets: it makes no attempt to be
 * constant-time or to wipe its state. */
#ifndef TND_SHA256_H
#define TND_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define TND_SHA256_LEN 32                   /* bytes of a digest */
#define TND_SHA256_HEX (2 * TND_SHA256_LEN) /* hex digits of one */

typedef struct tnd_sha256 {
    uint32_t h[8];
    uint64_t bytes; /* message length so far */
    unsigned char block[64];
    size_t used; /* bytes of block filled */
} tnd_sha256;

/* Start a digest. */
void tnd_sha256_init(tnd_sha256 *s);

/* Add len bytes of data. */
void tnd_sha256_update(tnd_sha256 *s, const void *data, size_t len);

/* The digest into out; s must be initialised again before reuse. */
void tnd_sha256_final(unsigned char out[TND_SHA256_LEN], tnd_sha256 *s);

/* The digest into hex as 64 lowercase hex digits and a NUL; s must be
 * initialised again before reuse. */
void tnd_sha256_final_hex(char hex[TND_SHA256_HEX + 1], tnd_sha256 *s);

/* The digest of len bytes of data as 64 lowercase hex digits and a NUL,
 * into hex. */
void tnd_sha256_hex(char hex[TND_SHA256_HEX + 1], const void *data, size_t len);

/* True when s is 64 lowercase hex digits: the form a digest travels in. */
int tnd_sha256_is_hex(const char *s);

#endif
