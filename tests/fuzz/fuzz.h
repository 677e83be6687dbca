/* What the libFuzzer harnesses share (tests/fuzz/fuzz_*.c).
 *
 * Each harness is one program: LLVMFuzzerTestOneInput hands the parser
 * one input, checks what a caller relies on (with FUZZ_CHECK, which
 * aborts so libFuzzer keeps the input), and frees everything, so that
 * ASan's leak check at exit sees nothing. No harness touches the
 * network; the two that need a file name use a memfd or a private
 * directory under /dev/shm or $TMPDIR. */
#ifndef TND_FUZZ_H
#define TND_FUZZ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/error.h"
#include "common/utf8.h"
#include "common/xalloc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A property the parser's callers rely on; a violation is a crash
 * libFuzzer saves like any other. The message carries tnd_error_last(),
 * which says why when a call that should succeed did not. */
#define FUZZ_CHECK(cond)                                                  \
    do {                                                                  \
        if (!(cond)) {                                                    \
            fprintf(stderr, "%s:%d: check failed: %s (last error: %s)\n", \
                    __FILE__, __LINE__, #cond, tnd_error_last());         \
            abort();                                                      \
        }                                                                 \
    } while (0)

/* The input as a model's answer reaches the agents' parsers: a C string
 * (cut at its first NUL) in which bytes that are not UTF-8 have become
 * U+FFFD, as tnd_llm_complete leaves every answer. Caller frees. */
static inline char *fuzz_answer(const uint8_t *data, size_t size)
{
    char *text = tnd_xstrndup((const char *)data, size);

    tnd_utf8_clean_inplace(&text);
    return text;
}

/* A regular file holding the input, named "/proc/self/fd/N" in path (at
 * least 32 bytes), for parsers that read a path. The descriptor is made
 * once and rewritten on every call. -1 when no memfd can be made. */
static inline int fuzz_file(char *path, size_t path_size, const uint8_t *data,
                            size_t size)
{
    static int fd = -1;

    if (fd < 0 && (fd = memfd_create("fuzz-input", MFD_CLOEXEC)) < 0)
        return -1;
    if (ftruncate(fd, 0) < 0 ||
        (size && pwrite(fd, data, size, 0) != (ssize_t)size))
        return -1;
    snprintf(path, path_size, "/proc/self/fd/%d", fd);
    return 0;
}

#endif
