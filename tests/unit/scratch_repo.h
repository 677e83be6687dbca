/* For the unit tests of what gives git a patch's paths: a scratch
 * directory with a repository a shell script made in it, and exec's
 * room for arguments made small (a quarter of the stack limit), so a
 * command line of every path fails as it would with more or longer
 * names. Included by the test files that need it; static inline, so
 * each has its own copy and may use one of the two. */
#ifndef TND_TEST_SCRATCH_REPO_H
#define TND_TEST_SCRATCH_REPO_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "common/fs.h"
#include "common/xalloc.h"

/* Make scratch (a mkdtemp template, filled in) and run script there as
 * `sh make.sh SCRATCH`, its output dropped. 0, or -1 (a setup's). */
static inline int scratch_repo_make(char *scratch, const char *script)
{
    char *cmd;
    int rc;

    if (!mkdtemp(scratch))
        return -1;
    cmd = tnd_fs_join(scratch, "make.sh");
    rc = tnd_fs_write(cmd, script, strlen(script));
    free(cmd);
    if (rc == 0) {
        cmd =
            tnd_xasprintf("sh %s/make.sh %s >/dev/null 2>&1", scratch, scratch);
        rc = system(cmd) == 0 ? 0 : -1;
        free(cmd);
    }
    return rc;
}

/* The stack limit set to 1 MiB (exec then takes 256 KiB of arguments);
 * the one before into *was, for setrlimit(RLIMIT_STACK, was) after. */
static inline void small_stack(struct rlimit *was)
{
    struct rlimit now;

    assert_int_equal(getrlimit(RLIMIT_STACK, was), 0);
    now = *was;
    now.rlim_cur = 1 << 20;
    assert_int_equal(setrlimit(RLIMIT_STACK, &now), 0);
}

#endif
