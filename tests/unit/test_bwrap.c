/* Unit tests for skills/bwrap: finding bubblewrap, trying it, and the
 * answer kept for the process. The real bwrap is this machine's (the
 * project's package step installs it); stand-ins are small scripts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/error.h"
#include "common/fs.h"
#include "common/rmtree.h"
#include "common/xalloc.h"
#include "skills/bwrap.h"

static char tmpdir[] = "/tmp/tnd-test-bwrap-XXXXXX";

/* An executable script at tmpdir/name; caller frees the path. */
static char *script(const char *name, const char *body)
{
    char *path = tnd_fs_join(tmpdir, name);
    char *text = tnd_xasprintf("#!/bin/sh\n%s\n", body);

    assert_int_equal(tnd_fs_write(path, text, strlen(text)), 0);
    assert_int_equal(chmod(path, 0755), 0);
    free(text);
    return path;
}

static void found_on_path_or_where_tandem_bwrap_says(void **state)
{
    char *out = NULL, *fake = script("my-bwrap", "exit 0");
    char *path = tnd_xasprintf("%s:/usr/bin:/bin", tmpdir);
    const char *old_path = getenv("PATH");
    char *saved = tnd_xstrdup(old_path ? old_path : "/usr/bin:/bin");

    (void)state;
    unsetenv("TANDEM_BWRAP");
    if (tnd_bwrap_find(&out) == 0) {
        assert_true(strstr(out, "/bwrap") != NULL);
        free(out);
    } else {
        assert_string_equal(tnd_error_last(), "bubblewrap (bwrap) is not "
                                              "installed: not found on PATH");
    }
    setenv("TANDEM_BWRAP", fake, 1);
    assert_int_equal(tnd_bwrap_find(&out), 0);
    assert_string_equal(out, fake);
    free(out);
    /* a name is looked up on PATH */
    setenv("PATH", path, 1);
    setenv("TANDEM_BWRAP", "my-bwrap", 1);
    assert_int_equal(tnd_bwrap_find(&out), 0);
    assert_string_equal(out, fake);
    free(out);
    setenv("PATH", "/nowhere", 1);
    assert_int_equal(tnd_bwrap_find(&out), -1);
    assert_null(out);
    assert_string_equal(tnd_error_last(), "bubblewrap (my-bwrap) is not "
                                          "installed: not found on PATH");
    setenv("PATH", saved, 1);
    setenv("TANDEM_BWRAP", "/no/such/bwrap", 1);
    assert_int_equal(tnd_bwrap_find(&out), -1);
    assert_string_equal(tnd_error_last(),
                        "bubblewrap (bwrap) is not installed: /no/such/bwrap "
                        "(from TANDEM_BWRAP) is not an executable file");
    unsetenv("TANDEM_BWRAP");
    free(saved);
    free(path);
    free(fake);
}

/* The probe runs the program as a skill's sandbox would be run; what it
 * prints first is the reason it gives. */
static void the_probe_says_what_bwrap_said(void **state)
{
    char *refusing =
        script("refusing", "echo 'bwrap: No permissions to create new "
                           "namespace' >&2; exit 1");
    char *silent = script("silent", "exit 3");
    char *expect;
    char *real = NULL;

    (void)state;
    assert_int_equal(tnd_bwrap_probe(refusing), -1);
    expect = tnd_xasprintf("bubblewrap (%s) cannot make a sandbox here: "
                           "bwrap: No permissions to create new namespace",
                           refusing);
    assert_string_equal(tnd_error_last(), expect);
    free(expect);
    assert_int_equal(tnd_bwrap_probe(silent), -1);
    expect = tnd_xasprintf("bubblewrap (%s) cannot make a sandbox here: "
                           "exit 3",
                           silent);
    assert_string_equal(tnd_error_last(), expect);
    free(expect);
    unsetenv("TANDEM_BWRAP");
    if (tnd_bwrap_find(&real) == 0 && tnd_bwrap_probe(real) < 0)
        fail_msg("this machine's bwrap: %s", tnd_error_last());
    free(real);
    free(refusing);
    free(silent);
}

/* The first answer is the process's: a later change of TANDEM_BWRAP is
 * not seen, and every caller gets the same reason. */
static void the_answer_is_kept_for_the_process(void **state)
{
    const char *program = (const char *)1;

    (void)state;
    setenv("TANDEM_BWRAP", "/no/such/bwrap", 1);
    assert_int_equal(tnd_bwrap_check(&program), -1);
    assert_null(program);
    assert_string_equal(tnd_error_last(),
                        "bubblewrap (bwrap) is not installed: /no/such/bwrap "
                        "(from TANDEM_BWRAP) is not an executable file");
    unsetenv("TANDEM_BWRAP");
    tnd_error_set("something else");
    assert_int_equal(tnd_bwrap_check(&program), -1);
    assert_non_null(strstr(tnd_error_last(), "/no/such/bwrap"));
    assert_non_null(strstr(TND_BWRAP_FIX, "sandbox: none"));
}

static int setup(void **state)
{
    (void)state;
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
    (void)state;
    return tnd_fs_rmtree(tmpdir);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(found_on_path_or_where_tandem_bwrap_says),
        cmocka_unit_test(the_probe_says_what_bwrap_said),
        cmocka_unit_test(the_answer_is_kept_for_the_process),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
