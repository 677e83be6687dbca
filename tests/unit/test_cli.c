/* Unit tests for orchestrator/cli: one command's options parsed against
 * the list it accepts, -h, and what a bad command line is told. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/fs.h"
#include "orchestrator/cli.h"
#include "orchestrator/run.h"

static char errfile[] = "/tmp/tnd-test-cli-XXXXXX";
static int saved_stderr = -1;
static int usages;

static void usage(const char *name, FILE *to)
{
    (void)to;
    assert_string_equal(name, "sessions prune");
    usages++;
}

/* stderr goes to a file while a test runs; what it got, after. */
static void capture(void)
{
    fflush(stderr);
    saved_stderr = dup(STDERR_FILENO);
    assert_non_null(freopen(errfile, "w", stderr));
}

static char *captured(void)
{
    char *text = NULL;

    fflush(stderr);
    dup2(saved_stderr, STDERR_FILENO);
    close(saved_stderr);
    assert_int_equal(tnd_fs_read(&text, NULL, errfile, 4096), 0);
    return text;
}

static int setup(void **state)
{
    int fd = mkstemp(errfile);

    (void)state;
    if (fd < 0)
        return -1;
    close(fd);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    return unlink(errfile);
}

static const int accepts[] = {TND_OPT_REPO, TND_OPT_OLDER_THAN, TND_OPT_DRY_RUN,
                              TND_OPT_VERBOSE, 0};

/* argv for a parse, "prune" then the strings up to NULL, as writable
 * copies (getopt moves them about); the last call's are freed, and
 * args(NULL) only frees them. */
static char **args(const char *first, ...)
{
    static char *v[16];
    const char *s = first;
    va_list ap;
    int n = 1;

    for (int i = 0; v[i]; i++) {
        free(v[i]);
        v[i] = NULL;
    }
    if (!first)
        return NULL; /* only the freeing */
    v[0] = strdup("prune");
    va_start(ap, first);
    for (; s && n < 15; s = va_arg(ap, const char *))
        v[n++] = strdup(s);
    va_end(ap);
    return v;
}

static void accepted_options_come_back_by_id(void **state)
{
    char **argv = args("--repo", "r", "x", "--dry-run", "-v", "--older-than=3d",
                       "y", NULL);
    tnd_cli cli;

    (void)state;
    tnd_cli_start(&cli, "sessions prune", usage, accepts, 8, argv);
    assert_int_equal(tnd_cli_next(&cli), TND_OPT_REPO);
    assert_string_equal(optarg, "r");
    assert_int_equal(tnd_cli_next(&cli), TND_OPT_DRY_RUN);
    assert_int_equal(tnd_cli_next(&cli), TND_OPT_VERBOSE);
    assert_int_equal(tnd_cli_next(&cli), TND_OPT_OLDER_THAN);
    assert_string_equal(optarg, "3d");
    assert_int_equal(tnd_cli_next(&cli), 0);
    /* operands may come anywhere; they end up after the options */
    assert_int_equal(optind, 6);
    assert_string_equal(argv[optind], "x");
    assert_string_equal(argv[optind + 1], "y");
}

/* The operands of a parse, from optind, joined by '|'. */
static const char *operands(char **argv, int argc)
{
    static char joined[256];

    joined[0] = '\0';
    for (int i = optind; i < argc; i++) {
        if (i > optind)
            strcat(joined, "|");
        strcat(joined, argv[i]);
    }
    return joined;
}

static void options_after_the_task_are_honoured(void **state)
{
    /* `tandem run "make the failing test pass" --repo demo1 -q` */
    char **argv = args("make", "it", "pass", "--repo", "demo1", "-v", NULL);
    tnd_cli cli;

    (void)state;
    tnd_cli_start(&cli, "sessions prune", usage, accepts, 7, argv);
    assert_int_equal(tnd_cli_next(&cli), TND_OPT_REPO);
    assert_string_equal(optarg, "demo1");
    assert_int_equal(tnd_cli_next(&cli), TND_OPT_VERBOSE);
    assert_int_equal(tnd_cli_next(&cli), 0);
    assert_string_equal(operands(argv, 7), "make|it|pass");

    /* between the words too; the words keep their order */
    argv = args("a", "-v", "b", "--dry-run", "c", NULL);
    tnd_cli_start(&cli, "sessions prune", usage, accepts, 6, argv);
    assert_int_equal(tnd_cli_next(&cli), TND_OPT_VERBOSE);
    assert_int_equal(tnd_cli_next(&cli), TND_OPT_DRY_RUN);
    assert_int_equal(tnd_cli_next(&cli), 0);
    assert_string_equal(operands(argv, 6), "a|b|c");

    /* whatever POSIXLY_CORRECT says */
    setenv("POSIXLY_CORRECT", "1", 1);
    argv = args("a", "-v", NULL);
    tnd_cli_start(&cli, "sessions prune", usage, accepts, 3, argv);
    assert_int_equal(tnd_cli_next(&cli), TND_OPT_VERBOSE);
    assert_int_equal(tnd_cli_next(&cli), 0);
    assert_string_equal(operands(argv, 3), "a");
    unsetenv("POSIXLY_CORRECT");
}

static void double_dash_ends_the_options(void **state)
{
    /* a word that starts with '-' goes after "--", in its place */
    char **argv = args("fix", "-v", "--", "-v", "--repo", "-", NULL);
    tnd_cli cli;

    (void)state;
    tnd_cli_start(&cli, "sessions prune", usage, accepts, 7, argv);
    assert_int_equal(tnd_cli_next(&cli), TND_OPT_VERBOSE);
    assert_int_equal(tnd_cli_next(&cli), 0);
    assert_string_equal(operands(argv, 7), "fix|-v|--repo|-");

    /* "--" as an option's value is the value */
    argv = args("--repo", "--", "x", NULL);
    tnd_cli_start(&cli, "sessions prune", usage, accepts, 4, argv);
    assert_int_equal(tnd_cli_next(&cli), TND_OPT_REPO);
    assert_string_equal(optarg, "--");
    assert_int_equal(tnd_cli_next(&cli), 0);
    assert_string_equal(operands(argv, 4), "x");

    /* nothing but "--" */
    argv = args("--", NULL);
    tnd_cli_start(&cli, "sessions prune", usage, accepts, 2, argv);
    assert_int_equal(tnd_cli_next(&cli), 0);
    assert_int_equal(optind, 2);
}

static void a_dash_word_after_the_task_is_told_how(void **state)
{
    char **argv = args("fix", "off", "by", "-1", NULL);
    tnd_cli cli;
    char *told;

    (void)state;
    capture();
    tnd_cli_start(&cli, "sessions prune", usage, accepts, 5, argv);
    assert_int_equal(tnd_cli_next(&cli), -1);
    told = captured();
    assert_int_equal(cli.status, TND_EXIT_USAGE);
    assert_string_equal(told, "tandem sessions prune: unknown option '-1'; "
                              "if it is a word, not an option, put -- "
                              "before it\n"
                              "try 'tandem sessions prune --help'\n");
    free(told);
}

static void help_is_every_commands(void **state)
{
    char **argv = args("--dry-run", "--help", NULL);
    tnd_cli cli;

    (void)state;
    usages = 0;
    tnd_cli_start(&cli, "sessions prune", usage, accepts, 3, argv);
    assert_int_equal(tnd_cli_next(&cli), TND_OPT_DRY_RUN);
    assert_int_equal(tnd_cli_next(&cli), -1);
    assert_int_equal(cli.status, TND_EXIT_OK);
    assert_int_equal(usages, 1);
    argv = args("-h", NULL);
    tnd_cli_start(&cli, "sessions prune", usage, accepts, 2, argv);
    assert_int_equal(tnd_cli_next(&cli), -1);
    assert_int_equal(usages, 2);
}

static void what_a_command_does_not_take_is_told(void **state)
{
    static const struct {
        const char *arg, *told;
    } rows[] = {
        /* another command's option is no option of this one */
        {"--diff", "tandem sessions prune: unknown option '--diff'\n"
                   "try 'tandem sessions prune --help'\n"},
        {"-q", "tandem sessions prune: unknown option '-q'\n"
               "try 'tandem sessions prune --help'\n"},
        {"--frob", "tandem sessions prune: unknown option '--frob'\n"
                   "try 'tandem sessions prune --help'\n"},
        {"--older-than", "tandem sessions prune: --older-than needs a value\n"
                         "try 'tandem sessions prune --help'\n"},
        /* a flag it takes, given a value: the flag is named, not
         * "unknown" (as if there were no --dry-run) */
        {"--dry-run=yes", "tandem sessions prune: --dry-run takes no value, "
                          "got '--dry-run=yes'\n"
                          "try 'tandem sessions prune --help'\n"},
        /* a letter refused in a cluster: that letter, in its word */
        {"-xv", "tandem sessions prune: unknown option '-x' in '-xv'; if it "
                "is a word, not an option, put -- before it\n"
                "try 'tandem sessions prune --help'\n"},
        {"-fix", "tandem sessions prune: unknown option '-f' in '-fix'; if "
                 "it is a word, not an option, put -- before it\n"
                 "try 'tandem sessions prune --help'\n"},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        char **argv = args(rows[i].arg, NULL);
        tnd_cli cli;
        char *told;
        capture();
        tnd_cli_start(&cli, "sessions prune", usage, accepts, 2, argv);
        assert_int_equal(tnd_cli_next(&cli), -1);
        told = captured();
        assert_int_equal(cli.status, TND_EXIT_USAGE);
        assert_string_equal(told, rows[i].told);
        free(told);
    }
}

static void errors_point_at_the_help(void **state)
{
    char **argv = args("x", NULL);
    tnd_cli cli;
    char *told;

    (void)state;
    tnd_cli_start(&cli, "show", usage, accepts, 2, argv);
    capture();
    assert_int_equal(tnd_cli_error(&cli, "unexpected argument '%s'", "x"),
                     TND_EXIT_USAGE);
    told = captured();
    assert_string_equal(told, "tandem show: unexpected argument 'x'\n"
                              "try 'tandem show --help'\n");
    free(told);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(accepted_options_come_back_by_id),
        cmocka_unit_test(options_after_the_task_are_honoured),
        cmocka_unit_test(double_dash_ends_the_options),
        cmocka_unit_test(a_dash_word_after_the_task_is_told_how),
        cmocka_unit_test(help_is_every_commands),
        cmocka_unit_test(what_a_command_does_not_take_is_told),
        cmocka_unit_test(errors_point_at_the_help),
    };

    int failed = cmocka_run_group_tests(tests, setup, teardown);

    args(NULL); /* frees the last copies */
    return failed;
}
