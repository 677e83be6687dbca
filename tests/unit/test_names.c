/* Unit tests for common/names: an enum's names both ways, with a value
 * that has no name, and what an unknown name is told. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/names.h"

/* An enum whose 0 means "none", as tnd_answer_kind's does. */
typedef enum fruit { NO_FRUIT, APPLE, PEAR, PLUM } fruit;

static const char *const fruit_names[] = {NULL, "apple", "pear", "plum"};
static const tnd_names fruits = TND_NAMES("fruit", fruit_names);

static void names_and_values_both_ways(void **state)
{
    int v = -1;

    (void)state;
    assert_int_equal(fruits.count, 4);
    assert_string_equal(tnd_names_name(&fruits, APPLE), "apple");
    assert_string_equal(tnd_names_name(&fruits, PLUM), "plum");
    for (int f = APPLE; f <= PLUM; f++) {
        assert_int_equal(tnd_names_parse(&v, &fruits, fruit_names[f]), 0);
        assert_int_equal(v, f);
    }
    /* values without a name, in the table or outside it */
    assert_string_equal(tnd_names_name(&fruits, NO_FRUIT), "?");
    assert_string_equal(tnd_names_name(&fruits, -1), "?");
    assert_string_equal(tnd_names_name(&fruits, 4), "?");
}

static void an_unknown_name_is_told_with_the_known_ones(void **state)
{
    static const struct {
        const char *name, *error;
    } rows[] = {
        {"banana", "unknown fruit 'banana' (known: apple, pear, plum)"},
        {"Apple", "unknown fruit 'Apple' (known: apple, pear, plum)"},
        {"apple ", "unknown fruit 'apple ' (known: apple, pear, plum)"},
        {"", "unknown fruit '' (known: apple, pear, plum)"},
        {"?", "unknown fruit '?' (known: apple, pear, plum)"},
        /* from a file or a peer: shown on one line, printable, cut */
        {"pe\nar", "unknown fruit 'pe?ar' (known: apple, pear, plum)"},
        {"pe\033ar", "unknown fruit 'pe?ar' (known: apple, pear, plum)"},
        {"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
         "unknown fruit "
         "'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx...' "
         "(known: apple, pear, plum)"},
    };
    int v = PEAR;

    (void)state;
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        assert_int_equal(tnd_names_parse(&v, &fruits, rows[i].name), -1);
        assert_string_equal(tnd_error_last(), rows[i].error);
        assert_int_equal(v, PEAR); /* left as it was */
    }
}

static void the_list_leaves_out_values_without_a_name(void **state)
{
    static const char *const one[] = {"only"};
    static const tnd_names single = TND_NAMES("thing", one);
    char *list = tnd_names_list(&fruits);

    (void)state;
    assert_string_equal(list, "apple, pear, plum");
    free(list);
    list = tnd_names_list(&single);
    assert_string_equal(list, "only");
    free(list);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(names_and_values_both_ways),
        cmocka_unit_test(an_unknown_name_is_told_with_the_known_ones),
        cmocka_unit_test(the_list_leaves_out_values_without_a_name),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
