/* A deep chain of directories, for the unit tests of what copies, moves
 * or removes a tree deeper than a path, the stack or the open files go:
 * dir made at at (a directory's descriptor, or AT_FDCWD for a path),
 * then depth directories named d, each in the one before. Made a level
 * at a time through descriptors, so no path grows with the depth.
 * Included by the test files that need it; static, so each has its own
 * copy. */
#ifndef TND_TEST_DEEP_CHAIN_H
#define TND_TEST_DEEP_CHAIN_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

/* What the levels hold besides the next d (level 0 is dir itself). */
typedef struct deep_chain_extras {
    int files;        /* levels 0 .. files - 1 hold an empty file f */
    int closed_every; /* > 0: level k is left mode 0 (closed even to its
                         owner, as a build may leave it) when k %
                         closed_every is closed_every - 1 */
} deep_chain_extras;

/* The chain; extras may be NULL (nothing besides the d's). Fails the
 * test when a level cannot be made. */
static inline void deep_chain(int at, const char *dir, int depth,
                              const deep_chain_extras *extras)
{
    deep_chain_extras none = {0, 0};
    int fd;

    if (!extras)
        extras = &none;
    assert_int_equal(mkdirat(at, dir, 0755), 0);
    fd = openat(at, dir, O_RDONLY | O_DIRECTORY);
    assert_true(fd >= 0);
    for (int i = 0;; i++) {
        int next;
        if (i < extras->files)
            assert_int_equal(mknodat(fd, "f", S_IFREG | 0600, 0), 0);
        if (i == depth)
            break;
        assert_int_equal(mkdirat(fd, "d", 0755), 0);
        next = openat(fd, "d", O_RDONLY | O_DIRECTORY);
        assert_true(next >= 0);
        if (extras->closed_every > 0 &&
            i % extras->closed_every == extras->closed_every - 1)
            assert_int_equal(fchmod(fd, 0), 0);
        close(fd);
        fd = next;
    }
    close(fd);
}

#endif
