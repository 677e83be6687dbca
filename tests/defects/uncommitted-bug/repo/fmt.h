/* fmt.h - sizes for people: 512 B, 1.5 KiB, 3.0 MiB. */
#ifndef FMT_H
#define FMT_H

#include <stddef.h>

/* Write bytes as a size with a binary unit into buf (size bytes); what
 * snprintf returns. */
int fmt_size(char *buf, size_t size, unsigned long long bytes);

#endif
