/* Unit tests for skills/holder: what tells the enter program's own
 * failure from a command's output (only its nonce does), the
 * environment that carries the nonce, and the skills that never enter a
 * holder. Starting one is tested in
 * tests/integration/test_sandbox_enter.sh. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "common/str.h"
#include "skills/holder.h"

#define NONCE "0123456789abcdef0123456789abcdef"

/* tnd_holder_failed on a text, its length kept in step as a run's is. */
static bool failed(const tnd_holder_entry *e, char *text, int code)
{
    size_t len = text ? strlen(text) : 0;
    bool yes = tnd_holder_failed(e, text, &len, code);

    if (text)
        assert_int_equal(len, strlen(text));
    return yes;
}

static tnd_holder_entry entry_with(const char *nonce)
{
    tnd_holder_entry e;

    memset(&e, 0, sizeof(e));
    e.generation = 1;
    strcpy(e.nonce, nonce);
    return e;
}

/* A command that prints the enter program's words and exits 125 is not
 * taken for it: it would be run again, with a second time budget, and
 * would stop the holder. */
static void a_failure_needs_the_nonce(void **state)
{
    tnd_holder_entry e = entry_with(NONCE);
    char faked[] = "tandem-sandbox-enter: cannot join the sandbox's "
                   "namespaces: faked\n";
    char other[] = "tandem-sandbox-enter: fedcba9876543210fedcba9876543210: "
                   "cannot join\n";
    char cut[] = "tandem-sandbox-enter: 0123456789abcdef: cannot join\n";
    char real[] = "tandem-sandbox-enter: " NONCE ": cannot join the "
                  "sandbox's namespaces: x\nmore\n";

    (void)state;
    assert_false(failed(&e, faked, 125));
    assert_false(failed(&e, other, 125));
    assert_false(failed(&e, cut, 125));
    assert_false(failed(&e, NULL, 125));
    /* its own words, but an exit code it never uses for them */
    assert_false(failed(&e, real, 1));
    assert_false(failed(&e, real, 128));
    assert_true(failed(&e, real, 125));
    /* the nonce is taken out: the line reads as the program's own */
    assert_string_equal(real, "tandem-sandbox-enter: cannot join the "
                              "sandbox's namespaces: x\nmore\n");
}

static void exec_failures_count_too(void **state)
{
    tnd_holder_entry e = entry_with(NONCE);
    char a[] = "tandem-sandbox-enter: " NONCE ": cannot run '/x': No such\n";
    char b[] = "tandem-sandbox-enter: " NONCE ": cannot run '/x': denied\n";

    (void)state;
    assert_true(failed(&e, a, 127));
    assert_true(failed(&e, b, 126));
}

/* An entry that never was (no nonce) matches nothing. */
static void no_nonce_no_failure(void **state)
{
    tnd_holder_entry e = entry_with("");
    char line[] = "tandem-sandbox-enter: : cannot join\n";

    (void)state;
    assert_false(failed(&e, line, 125));
}

/* The enter program's environment: the caller's, with this entry's
 * nonce, once, whatever the caller's held under that name. */
static void the_environment_carries_the_nonce(void **state)
{
    tnd_holder_entry e = entry_with(NONCE);
    char path[] = "PATH=/usr/bin", planted[] = "TANDEM_SANDBOX_NONCE=planted",
         home[] = "HOME=/h";
    char *in[] = {path, planted, home, NULL};
    char **out = tnd_holder_envp(&e, in);
    int nonces = 0;
    size_t n = 0;

    (void)state;
    for (; out[n]; n++)
        if (strncmp(out[n], "TANDEM_SANDBOX_NONCE=", 21) == 0) {
            nonces++;
            assert_string_equal(out[n] + 21, NONCE);
        }
    assert_int_equal(nonces, 1);
    assert_int_equal(n, 3);
    assert_string_equal(out[0], "PATH=/usr/bin");
    assert_string_equal(out[1], "HOME=/h");
    tnd_str_list_free(&out);
}

/* No holder, or a workspace beneath none of its roots: the skill starts
 * bwrap of its own, and nothing is started for it. */
static void some_skills_never_enter(void **state)
{
    const char *roots[] = {"/nonexistent-root-of-tandem", NULL};
    const char *argv[] = {"/bin/true", NULL};
    tnd_sandbox_spec spec;
    tnd_holder_entry e;
    tnd_holder *h;

    (void)state;
    memset(&spec, 0, sizeof(spec));
    spec.bwrap = "/usr/bin/bwrap";
    spec.workspace = "/srv/elsewhere/ws";
    spec.argv = argv;
    assert_null(tnd_holder_argv(NULL, &spec, &e));
    assert_int_equal(e.generation, 0);
    /* the root does not exist: left out with a warning */
    h = tnd_holder_new(roots, NULL);
    assert_null(tnd_holder_argv(h, &spec, &e));
    spec.workspace = "/nonexistent-root-of-tandem/ws";
    assert_null(tnd_holder_argv(h, &spec, &e));
    /* nothing to refuse or count */
    tnd_holder_refused(h, &e, "no");
    tnd_holder_entered(h, &e);
    tnd_holder_destroy(&h);
    assert_null(h);
    tnd_holder_destroy(&h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(a_failure_needs_the_nonce),
        cmocka_unit_test(exec_failures_count_too),
        cmocka_unit_test(no_nonce_no_failure),
        cmocka_unit_test(the_environment_carries_the_nonce),
        cmocka_unit_test(some_skills_never_enter),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
