/* Trees to apply a patch into, for the unit tests of orchestrator/apply
 * and orchestrator/patchdir (test_apply.c, test_patchdir.c): plain
 * directories and git repositories made under a scratch directory
 * (apply_setup and apply_teardown, a group's), files put and compared
 * byte for byte, shell commands run or read, and the patch of one file
 * as a run writes it (common/diff.h). Included by the test files that
 * need it, after scratch_repo.h if at all (its parameter is named
 * scratch too); static, so each has its own copy. */
#ifndef TND_TEST_APPLY_TREES_H
#define TND_TEST_APPLY_TREES_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/buf.h"
#include "common/diff.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/rmtree.h"
#include "common/xalloc.h"

static char scratch[] = "/tmp/tnd-test-apply-XXXXXX";

#define MAX_BYTES (1 << 20)

static const char *const lines10 = "one\ntwo\nthree\nfour\nfive\nsix\n"
                                   "seven\neight\nnine\nten\n";

static inline void put(const char *dir, const char *rel, const char *text)
{
    char *full = tnd_fs_join(dir, rel);
    char *parent = tnd_fs_dirname(full);

    assert_int_equal(tnd_fs_mkdirs(parent, 0755), 0);
    assert_int_equal(tnd_fs_write(full, text, strlen(text)), 0);
    free(parent);
    free(full);
}

static inline void assert_file(const char *dir, const char *rel,
                               const char *expect)
{
    char *full = tnd_fs_join(dir, rel), *text = NULL;

    if (tnd_fs_read(&text, NULL, full, MAX_BYTES) < 0)
        fail_msg("%s should exist: %s", rel, tnd_error_last());
    assert_string_equal(text, expect);
    free(text);
    free(full);
}

static inline bool exists(const char *dir, const char *rel)
{
    char *full = tnd_fs_join(dir, rel);
    bool yes = tnd_fs_exists(full);

    free(full);
    return yes;
}

static inline void sh(const char *fmt, ...) TND_PRINTF(1, 2);

static inline void sh(const char *fmt, ...)
{
    char cmd[4096];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(cmd, sizeof(cmd), fmt, ap);
    va_end(ap);
    if (system(cmd) != 0)
        fail_msg("command failed: %s", cmd);
}

/* What a command prints, trimmed of its last newline. Caller frees. */
static inline char *sh_out(const char *fmt, ...) TND_PRINTF(1, 2);

static inline char *sh_out(const char *fmt, ...)
{
    char cmd[4096], buf[4096];
    size_t n;
    va_list ap;
    FILE *p;

    va_start(ap, fmt);
    vsnprintf(cmd, sizeof(cmd), fmt, ap);
    va_end(ap);
    assert_non_null(p = popen(cmd, "r"));
    n = fread(buf, 1, sizeof(buf) - 1, p);
    buf[n] = '\0';
    pclose(p);
    if (n && buf[n - 1] == '\n')
        buf[n - 1] = '\0';
    return tnd_xstrdup(buf);
}

/* A fresh directory under the scratch directory. Caller frees. */
static inline char *plain(const char *name)
{
    char *dir = tnd_fs_join(scratch, name);

    assert_int_equal(tnd_fs_mkdirs(dir, 0755), 0);
    return dir;
}

/* A git repository with a.txt (lines10) and b.txt committed. */
static inline char *git_repo(const char *name)
{
    char *dir = plain(name);

    put(dir, "a.txt", lines10);
    put(dir, "b.txt", "bee\n");
    sh("cd '%s' && git init -q && git config user.name t && "
       "git config user.email t@example.invalid && git add -A && "
       "git commit -q -m base",
       dir);
    return dir;
}

/* The patch of one file, as a run writes it; and in patch_file too. */
static inline char *patch(const char *dir, const char *path,
                          const char *old_text, const char *new_text,
                          char **patch_file)
{
    tnd_buf b;
    char *text;

    tnd_buf_init(&b, TND_BUF_NOCAP);
    assert_int_equal(tnd_diff_file(&b, path, old_text,
                                   old_text ? strlen(old_text) : 0, new_text,
                                   new_text ? strlen(new_text) : 0),
                     0);
    text = tnd_buf_detach(&b, NULL);
    *patch_file = tnd_xasprintf("%s.patch", dir);
    assert_int_equal(tnd_fs_write(*patch_file, text, strlen(text)), 0);
    return text;
}

static const char *const changed10 = "one\ntwo\nthree\nfour\nFIVE\nsix\n"
                                     "seven\neight\nnine\nten\n";

static inline int apply_setup(void **state)
{
    (void)state;
    umask(022);
    return mkdtemp(scratch) ? 0 : -1;
}

static inline int apply_teardown(void **state)
{
    (void)state;
    return tnd_fs_rmtree(scratch);
}

#endif
