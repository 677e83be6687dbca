/* Unit tests for common/user: the name an answer is journaled with. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/user.h"

/* The account, else $USER, else the uid: one row per rule. */
static void the_account_then_user_then_the_uid(void **state)
{
    static const struct {
        const char *account, *env_user;
        unsigned uid;
        const char *want;
    } rows[] = {
        {"alice", "bob", 1000, "alice"},
        {NULL, "bob", 1000, "bob"},
        {"", "bob", 1000, "bob"},
        {NULL, NULL, 1000, "1000"},
        {NULL, "", 0, "0"},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        char *got =
            tnd_user_pick(rows[i].account, rows[i].env_user, rows[i].uid);
        if (strcmp(got, rows[i].want) != 0)
            fail_msg("row %zu: '%s', not '%s'", i, got, rows[i].want);
        free(got);
    }
}

/* This process's own user, as the password database names it. */
static void the_effective_user_is_named(void **state)
{
    const struct passwd *pw = getpwuid(geteuid());
    char *got = tnd_user_name();

    (void)state;
    if (pw)
        assert_string_equal(got, pw->pw_name);
    else
        assert_true(*got);
    free(got);
}

/* Another process's uid: its account, or the number when no account has
 * it (never this process's $USER). */
static void a_uid_is_named_by_its_account(void **state)
{
    const struct passwd *pw = getpwuid(0);
    char *got = tnd_user_of_uid(0);
    unsigned nobody = 4000000001u;

    (void)state;
    assert_string_equal(got, pw ? pw->pw_name : "0");
    free(got);
    if (!getpwuid((uid_t)nobody)) {
        setenv("USER", "someone-else", 1);
        got = tnd_user_of_uid(nobody);
        assert_string_equal(got, "4000000001");
        free(got);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(the_account_then_user_then_the_uid),
        cmocka_unit_test(the_effective_user_is_named),
        cmocka_unit_test(a_uid_is_named_by_its_account),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
