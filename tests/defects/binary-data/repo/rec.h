/* rec.h - a reader for REC1 files, after the notes of François Dupré.
 *
 * A file is "REC1", a little-endian 16-bit count, then for each record
 * a length byte, that many bytes of name (Latin-1, as the notes are),
 * and a little-endian 32-bit signed value. */
#ifndef REC_H
#define REC_H

#include <stddef.h>
#include <stdint.h>

typedef struct rec {
    char name[256]; /* NUL-terminated */
    int32_t value;
} rec;

/* Read up to max records of the file at path into out; the number read,
 * or -1 when the file cannot be read or is not a REC1 file. */
int rec_read(rec *out, int max, const char *path);

#endif
