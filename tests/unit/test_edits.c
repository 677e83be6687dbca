/* Unit tests for agents/edits: reading SEARCH/REPLACE, FILE and DELETE
 * blocks out of the coder model's answer.
 *
 * Each good case is a whole answer, the edits it must give and the
 * rationale left over; each bad case an answer and the exact error. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents/edits.h"
#include "common/buf.h"
#include "common/clock.h"
#include "common/error.h"
#include "common/log.h"

#define MAX_WANT 4

typedef struct want_edit {
    tnd_edit_kind kind;
    const char *path, *search, *replace;
} want_edit;

typedef struct good_case {
    const char *what;
    const char *answer;
    const char *rationale;
    want_edit edits[MAX_WANT]; /* up to the first with kind 0 */
} good_case;

/* clang-format off */
#define REPLACE(path, s, r)  {TND_EDIT_REPLACE, path, s, r}
#define WRITE(path, content) {TND_EDIT_WRITE, path, "", content}
#define DELETE(path)         {TND_EDIT_DELETE, path, "", ""}
/* clang-format on */

static const good_case good_cases[] = {
    {"one block",
     "src/a.c\n"
     "<<<<<<< SEARCH\n"
     "int x = 1;\n"
     "=======\n"
     "int x = 2;\n"
     ">>>>>>> REPLACE\n",
     "",
     {REPLACE("src/a.c", "int x = 1;\n", "int x = 2;\n")}},
    {"several files, prose before, between and after",
     "I fixed the off-by-one.\n"
     "\n"
     "src/a.c\n"
     "<<<<<<< SEARCH\n"
     "for (i = 0; i <= n; i++)\n"
     "=======\n"
     "for (i = 0; i < n; i++)\n"
     ">>>>>>> REPLACE\n"
     "\n"
     "And the header needed the new prototype:\n"
     "\n"
     "include/a.h\n"
     "<<<<<<< SEARCH\n"
     "int a(void);\n"
     "=======\n"
     "int a(void);\n"
     "int b(int n);\n"
     ">>>>>>> REPLACE\n"
     "\n"
     "Both compile cleanly.\n",
     "I fixed the off-by-one.\n"
     "\n"
     "\n"
     "And the header needed the new prototype:\n"
     "\n"
     "\n"
     "Both compile cleanly.",
     {REPLACE("src/a.c", "for (i = 0; i <= n; i++)\n",
              "for (i = 0; i < n; i++)\n"),
      REPLACE("include/a.h", "int a(void);\n",
              "int a(void);\nint b(int n);\n")}},
    {"fenced, path above the fence, fences left out of the rationale",
     "Here is the change.\n"
     "\n"
     "src/a.c\n"
     "```c\n"
     "<<<<<<< SEARCH\n"
     "old\n"
     "=======\n"
     "new\n"
     ">>>>>>> REPLACE\n"
     "```\n"
     "Done.\n",
     "Here is the change.\n\nDone.",
     {REPLACE("src/a.c", "old\n", "new\n")}},
    {"fenced without a language, path inside the fence",
     "```\n"
     "src/a.py\n"
     "<<<<<<< SEARCH\n"
     "old\n"
     "=======\n"
     "new\n"
     ">>>>>>> REPLACE\n"
     "```\n",
     "",
     {REPLACE("src/a.py", "old\n", "new\n")}},
    {"tilde fence, path inside",
     "~~~python\n"
     "src/a.py\n"
     "<<<<<<< SEARCH\n"
     "old\n"
     "=======\n"
     "new\n"
     ">>>>>>> REPLACE\n"
     "~~~\n",
     "",
     {REPLACE("src/a.py", "old\n", "new\n")}},
    {"decorated paths",
     "### `src/a.c`\n"
     "<<<<<<< SEARCH\n"
     "a\n"
     "=======\n"
     "A\n"
     ">>>>>>> REPLACE\n"
     "**src/b.c**\n"
     "<<<<<<< SEARCH\n"
     "b\n"
     "=======\n"
     "B\n"
     ">>>>>>> REPLACE\n"
     "File: src/c.c\n"
     "<<<<<<< SEARCH\n"
     "c\n"
     "=======\n"
     "C\n"
     ">>>>>>> REPLACE\n"
     "  src/d.c:  \n"
     "<<<<<<< SEARCH\n"
     "d\n"
     "=======\n"
     "D\n"
     ">>>>>>> REPLACE\n",
     "",
     {REPLACE("src/a.c", "a\n", "A\n"), REPLACE("src/b.c", "b\n", "B\n"),
      REPLACE("src/c.c", "c\n", "C\n"), REPLACE("src/d.c", "d\n", "D\n")}},
    {"more decorations",
     "`src/a.c`:\n"
     "<<<<<<< SEARCH\n"
     "a\n"
     "=======\n"
     "A\n"
     ">>>>>>> REPLACE\n"
     "## file: \"src/b.c\"\n"
     "<<<<<<< SEARCH\n"
     "b\n"
     "=======\n"
     "B\n"
     ">>>>>>> REPLACE\n"
     /* bold around "File:" too (these gave "File: src/c.c") */
     "**File: src/c.c**\n"
     "<<<<<<< SEARCH\n"
     "c\n"
     "=======\n"
     "C\n"
     ">>>>>>> REPLACE\n"
     "**File:** `src/d.c`\n"
     "<<<<<<< DELETE\n"
     ">>>>>>> DELETE\n",
     "",
     {REPLACE("src/a.c", "a\n", "A\n"), REPLACE("src/b.c", "b\n", "B\n"),
      REPLACE("src/c.c", "c\n", "C\n"), DELETE("src/d.c")}},
    {"second block of the same file without a path line",
     "src/a.c\n"
     "<<<<<<< SEARCH\n"
     "one\n"
     "=======\n"
     "1\n"
     ">>>>>>> REPLACE\n"
     "<<<<<<< SEARCH\n"
     "two\n"
     "=======\n"
     "2\n"
     ">>>>>>> REPLACE\n",
     "",
     {REPLACE("src/a.c", "one\n", "1\n"), REPLACE("src/a.c", "two\n", "2\n")}},
    {"same file again in its own fence, path not repeated",
     "src/a.c\n"
     "```c\n"
     "<<<<<<< SEARCH\n"
     "one\n"
     "=======\n"
     "1\n"
     ">>>>>>> REPLACE\n"
     "```\n"
     "\n"
     "```c\n"
     "<<<<<<< SEARCH\n"
     "two\n"
     "=======\n"
     "2\n"
     ">>>>>>> REPLACE\n"
     "```\n"
     "src/b.c\n"
     "```c\n"
     "<<<<<<< SEARCH\n"
     "three\n"
     "=======\n"
     "3\n"
     ">>>>>>> REPLACE\n"
     "```\n",
     "",
     {REPLACE("src/a.c", "one\n", "1\n"), REPLACE("src/a.c", "two\n", "2\n"),
      REPLACE("src/b.c", "three\n", "3\n")}},
    {"marker lengths 5 and 9, trailing blanks on markers",
     "a.c\n"
     "<<<<< SEARCH  \n"
     "x\n"
     "=====\t\n"
     "y\n"
     ">>>>> REPLACE \n"
     "b.c\n"
     "<<<<<<<<< SEARCH\n"
     "x\n"
     "=========\n"
     "y\n"
     ">>>>>>>>>REPLACE\n",
     "",
     {REPLACE("a.c", "x\n", "y\n"), REPLACE("b.c", "x\n", "y\n")}},
    {"CRLF line endings",
     "Fix.\r\n"
     "src/a.c\r\n"
     "<<<<<<< SEARCH\r\n"
     "a\r\n"
     "b\r\n"
     "=======\r\n"
     "c\r\n"
     ">>>>>>> REPLACE\r\n",
     "Fix.",
     {REPLACE("src/a.c", "a\nb\n", "c\n")}},
    /* an empty SEARCH is a REPLACE of nothing, which the workspace takes
     * only where no file is (a WRITE replaced a whole existing file) */
    {"empty SEARCH creates the file; empty REPLACE removes the text",
     "src/new.c\n"
     "<<<<<<< SEARCH\n"
     "=======\n"
     "int main(void) { return 0; }\n"
     ">>>>>>> REPLACE\n"
     "src/old.c\n"
     "<<<<<<< SEARCH\n"
     "dead code\n"
     "=======\n"
     ">>>>>>> REPLACE\n",
     "",
     {REPLACE("src/new.c", "", "int main(void) { return 0; }\n"),
      REPLACE("src/old.c", "dead code\n", "")}},
    {"FILE and DELETE blocks",
     "Rewrite one file, drop another.\n"
     "docs/README.md\n"
     "<<<<<<< FILE\n"
     "# Title\n"
     "=======\n"
     "text\n"
     ">>>>>>> FILE\n"
     "src/gone.c\n"
     "<<<<<<< DELETE\n"
     ">>>>>>> DELETE\n"
     "empty.txt\n"
     "<<<<<<< FILE\n"
     ">>>>>>> FILE\n",
     "Rewrite one file, drop another.",
     {WRITE("docs/README.md", "# Title\n=======\ntext\n"), DELETE("src/gone.c"),
      WRITE("empty.txt", "")}},
    {"lines that only contain a marker are not markers",
     "src/a.py\n"
     "<<<<<<< SEARCH\n"
     "x = '=======' \n"
     "  =======\n"
     "======= not a divider\n"
     "==========\n"
     "====\n"
     "=======\n"
     "print('>>>>>>> REPLACE')\n"
     " >>>>>>> REPLACE\n"
     "<<<< SEARCH\n"
     ">>>>>>> REPLACED\n"
     ">>>>>>> REPLACE\n",
     "",
     {REPLACE("src/a.py",
              "x = '=======' \n  =======\n======= not a divider\n"
              "==========\n====\n",
              "print('>>>>>>> REPLACE')\n >>>>>>> REPLACE\n<<<< SEARCH\n"
              ">>>>>>> REPLACED\n")}},
    {"no newline at the end",
     "a.txt\n<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE",
     "",
     {REPLACE("a.txt", "x\n", "y\n")}},
};

static void assert_parses_to(const good_case *c)
{
    tnd_edit *edits = NULL;
    size_t n = 0, want = 0;
    char *rationale = NULL;

    if (tnd_edits_parse(&edits, &n, &rationale, c->answer) != 0)
        fail_msg("%s: %s", c->what, tnd_error_last());
    while (want < MAX_WANT && c->edits[want].kind)
        want++;
    if (n != want)
        fail_msg("%s: %zu edits, expected %zu", c->what, n, want);
    for (size_t i = 0; i < n; i++) {
        const want_edit *w = &c->edits[i];
        if (edits[i].kind != w->kind || strcmp(edits[i].path, w->path) ||
            strcmp(edits[i].search, w->search) ||
            strcmp(edits[i].replace, w->replace))
            fail_msg("%s: edit %zu is %s %s\n--\n%s--\n%s--\nexpected %s "
                     "%s\n--\n%s--\n%s--",
                     c->what, i, tnd_edit_kind_name(edits[i].kind),
                     edits[i].path, edits[i].search, edits[i].replace,
                     tnd_edit_kind_name(w->kind), w->path, w->search,
                     w->replace);
    }
    if (strcmp(rationale, c->rationale) != 0)
        fail_msg("%s: rationale\n[%s]\nexpected\n[%s]", c->what, rationale,
                 c->rationale);
    tnd_edit_list_free(edits, n);
    free(rationale);
}

static void answers_parse_to_their_edits(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(good_cases) / sizeof(*good_cases); i++)
        assert_parses_to(&good_cases[i]);
}

static void usage_example(void **state)
{
    const char *answer = "The average divided by n - 1.\n"
                         "\n"
                         "src/stats.c\n"
                         "```c\n"
                         "<<<<<<< SEARCH\n"
                         "    return sum / (n - 1);\n"
                         "=======\n"
                         "    return sum / n;\n"
                         ">>>>>>> REPLACE\n"
                         "```\n";
    tnd_edit *edits;
    size_t n;
    char *rationale;

    (void)state;
    assert_int_equal(tnd_edits_parse(&edits, &n, &rationale, answer), 0);
    assert_int_equal(n, 1);
    assert_int_equal(edits[0].kind, TND_EDIT_REPLACE);
    assert_string_equal(edits[0].path, "src/stats.c");
    assert_string_equal(edits[0].search, "    return sum / (n - 1);\n");
    assert_string_equal(edits[0].replace, "    return sum / n;\n");
    assert_string_equal(rationale, "The average divided by n - 1.");
    tnd_edit_list_free(edits, n);
    free(rationale);
    tnd_edit_list_free(NULL, 0);
}

/* ---- errors ---------------------------------------------------------------
 */

typedef struct bad_case {
    const char *answer;
    const char *error; /* the whole of tnd_error_last() */
} bad_case;

#define NO_BLOCKS                                                            \
    "the answer contains no edit blocks (each change needs a path line and " \
    "a '<<<<<<< SEARCH' ... '>>>>>>> REPLACE' or '<<<<<<< FILE' ... "        \
    "'>>>>>>> FILE' block)"

static const bad_case bad_cases[] = {
    {"", NO_BLOCKS},
    {"I could not find the bug, sorry.\n", NO_BLOCKS},
    {"```diff\n-a\n+b\n```\n", NO_BLOCKS},
    {"a.c\n<<<< SEARCH\nx\n====\ny\n>>>> REPLACE\n", NO_BLOCKS},
    {"a.c\n<<<<<<<<<< SEARCH\nx\n==========\ny\n>>>>>>>>>> REPLACE\n",
     NO_BLOCKS},
    {"src/a.c\n<<<<<<< SEARCH\nx\n=======\ny\n",
     "edit block 1 for src/a.c (line 2) is not closed by '>>>>>>> REPLACE'"},
    {"src/a.c\n<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> FILE\n",
     "edit block 1 for src/a.c (line 2) is not closed by '>>>>>>> REPLACE'"},
    {"a.c\n<<<<<<< FILE\nx\n",
     "edit block 1 for a.c (line 2) is not closed by '>>>>>>> FILE'"},
    {"a.c\n<<<<<<< DELETE\n",
     "edit block 1 for a.c (line 2) is not closed by '>>>>>>> DELETE'"},
    {"a.c\n<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n"
     "b.c\n<<<<<<< SEARCH\nx\n"
     "c.c\n<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n",
     "edit block 2 for b.c (line 8) is not closed by '>>>>>>> REPLACE'"},
    {"src/a.c\n<<<<<<< SEARCH\nx\ny\n>>>>>>> REPLACE\n",
     "edit block 1 for src/a.c (line 2) has no '=======' between SEARCH and "
     "REPLACE"},
    {"<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n",
     "edit block 1 at line 1 has no file path on the line above it"},
    {"```\n\n<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n```\n",
     "edit block 1 at line 3 has no file path on the line above it"},
    {"/etc/passwd\n<<<<<<< FILE\nroot::0:0::/:/bin/sh\n>>>>>>> FILE\n",
     "edit block 1 at line 2: '/etc/passwd' is an absolute path; paths must "
     "be relative to the repository root"},
    {"a.c\n<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n"
     "`../outside.c`\n<<<<<<< DELETE\n>>>>>>> DELETE\n",
     "edit block 2 at line 8: '../outside.c' contains '..'; edits must stay "
     "inside the repository"},
    {"src/../../x.c\n<<<<<<< FILE\n>>>>>>> FILE\n",
     "edit block 1 at line 2: 'src/../../x.c' contains '..'; edits must stay "
     "inside the repository"},
    {".git/config\n<<<<<<< FILE\n>>>>>>> FILE\n",
     "edit block 1 at line 2: '.git/config' is inside .git, which edits may "
     "not touch"},
    /* two dividers: which ends SEARCH is a guess (an underline in the
     * file's text split it at the wrong one, and the file was corrupted
     * with no error) */
    {"a.txt\n<<<<<<< SEARCH\nx\n=======\ny\n=======\nz\n>>>>>>> REPLACE\n",
     "edit block 1 for a.txt (line 2) has more than one '=======' line, so "
     "where SEARCH ends is unclear; write the whole file in a FILE block "
     "instead"},
    /* prose above a block is no path (it made a file of that name) */
    {"And the new helper goes in a header:\n<<<<<<< FILE\nint x;\n"
     ">>>>>>> FILE\n",
     "edit block 1 at line 2: the line above it, 'And the new helper goes in "
     "a header', reads as prose, not a file path; put the path alone on that "
     "line (in backticks if it has spaces)"},
    /* nor is prose that quotes a name in it: it made a file named
     * "Put this in `helper.h" */
    {"Put this in `helper.h`:\n<<<<<<< FILE\nint x;\n>>>>>>> FILE\n",
     "edit block 1 at line 2: the line above it, 'Put this in `helper.h', "
     "reads as prose, not a file path; put the path alone on that line (in "
     "backticks if it has spaces)"},
    {"Done.\n>>>>>>> REPLACE\n",
     "line 2: '>>>>>>> REPLACE' appears outside an edit block"},
    {"a.c\n<<<<<<< SEARCH\nx\n=======\ny\n>>>>>>> REPLACE\n"
     ">>>>>>> REPLACE\n",
     "line 7: '>>>>>>> REPLACE' appears outside an edit block"},
};

static void bad_answers_are_errors_naming_block_and_line(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof(bad_cases) / sizeof(*bad_cases); i++) {
        tnd_edit *edits = (tnd_edit *)1;
        size_t n = 99;
        char *rationale = (char *)1;
        if (tnd_edits_parse(&edits, &n, &rationale, bad_cases[i].answer) != -1)
            fail_msg("case %zu parsed:\n%s", i, bad_cases[i].answer);
        if (strcmp(tnd_error_last(), bad_cases[i].error) != 0)
            fail_msg("case %zu:\n%s\nexpected: %s\ngot:      %s", i,
                     bad_cases[i].answer, bad_cases[i].error, tnd_error_last());
        assert_null(edits);
        assert_int_equal(n, 0);
        assert_null(rationale);
    }
}

/* n one-line blocks, a path each. Caller frees. */
static char *blocks(size_t n)
{
    tnd_buf b;

    tnd_buf_init(&b, TND_BUF_NOCAP);
    for (size_t i = 0; i < n; i++)
        tnd_buf_printf(&b,
                       "f%zu.txt\n<<<<<<< SEARCH\nold\n=======\nnew\n"
                       ">>>>>>> REPLACE\n",
                       i);
    return tnd_buf_detach(&b, NULL);
}

/* The prose line quoted in an error is cut at 60 bytes; a key across the
 * cut is redacted whole first, so the error (a format_error the journal
 * keeps) holds no head of it. */
static void a_quoted_line_never_holds_part_of_a_key(void **state)
{
    const char *answer = "The call sends the key it was given, which is "
                         "sk-edits-Zq8vN3xT5bL1mR7wK2pH9cF4yD6 in here:\n"
                         "<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\n";
    tnd_edit *edits = NULL;
    size_t n = 0;
    char *rationale = NULL;

    (void)state;
    tnd_log_secret("sk-edits-Zq8vN3xT5bL1mR7wK2pH9cF4yD6");
    assert_int_equal(tnd_edits_parse(&edits, &n, &rationale, answer), -1);
    assert_non_null(strstr(tnd_error_last(), "'The call sends the key it was "
                                             "given, which is [redacted] in ', "
                                             "reads as prose"));
    assert_null(strstr(tnd_error_last(), "sk-edits"));
}

static void at_most_500_blocks(void **state)
{
    char *answer = blocks(TND_BODY_MAX_EDITS);
    tnd_edit *edits;
    size_t n;
    char *rationale;

    (void)state;
    assert_int_equal(tnd_edits_parse(&edits, &n, &rationale, answer), 0);
    assert_int_equal(n, 500);
    assert_string_equal(edits[499].path, "f499.txt");
    tnd_edit_list_free(edits, n);
    free(rationale);
    free(answer);

    answer = blocks(TND_BODY_MAX_EDITS + 1);
    assert_int_equal(tnd_edits_parse(&edits, &n, &rationale, answer), -1);
    assert_string_equal(tnd_error_last(), "more than 500 edit blocks");
    assert_null(edits);
    free(answer);
}

static void a_megabyte_answer_parses_quickly(void **state)
{
    size_t big = 1 << 20;
    int64_t start = tnd_now_ms();
    tnd_edit *edits;
    size_t n;
    char *rationale;
    tnd_buf b;
    char *answer;

    (void)state;
    /* one block whose replacement is a megabyte of short lines */
    tnd_buf_init(&b, TND_BUF_NOCAP);
    tnd_buf_puts(&b, "big.txt\n<<<<<<< FILE\n");
    while (b.len < big)
        tnd_buf_puts(&b, "0123456789abcdef0123456789abcdef\n");
    tnd_buf_puts(&b, ">>>>>>> FILE\n");
    answer = tnd_buf_detach(&b, NULL);
    assert_int_equal(tnd_edits_parse(&edits, &n, &rationale, answer), 0);
    assert_int_equal(n, 1);
    assert_int_equal(strlen(edits[0].replace),
                     strlen(answer) - strlen("big.txt\n<<<<<<< FILE\n") -
                         strlen(">>>>>>> FILE\n"));
    tnd_edit_list_free(edits, n);
    free(rationale);
    free(answer);

    /* a megabyte of prose, then one block: the rationale stays bounded */
    tnd_buf_init(&b, TND_BUF_NOCAP);
    while (b.len < big)
        tnd_buf_puts(&b, "This line is part of a very long explanation.\n");
    tnd_buf_puts(&b, "a.c\n<<<<<<< DELETE\n>>>>>>> DELETE\n");
    answer = tnd_buf_detach(&b, NULL);
    assert_int_equal(tnd_edits_parse(&edits, &n, &rationale, answer), 0);
    assert_int_equal(n, 1);
    assert_true(strlen(rationale) <= 64 * 1024);
    assert_memory_equal(rationale, answer, strlen(rationale));
    tnd_edit_list_free(edits, n);
    free(rationale);
    free(answer);

    /* a megabyte of one line without a newline, and of marker-ish runs */
    answer = malloc(big + 1);
    memset(answer, '<', big);
    answer[big] = '\0';
    assert_int_equal(tnd_edits_parse(&edits, &n, &rationale, answer), -1);
    for (size_t i = 0; i + 16 < big; i += 16)
        memcpy(answer + i, "x\n<<<<<< SEARCH\n", 16);
    assert_int_equal(tnd_edits_parse(&edits, &n, &rationale, answer), -1);
    assert_string_equal(tnd_error_last(), "edit block 1 for x (line 2) is "
                                          "not closed by '>>>>>>> REPLACE'");
    free(answer);

    /* a hang guard, wide enough for a loaded machine under valgrind */
    assert_in_range(tnd_now_ms() - start, 0, 30000);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(usage_example),
        cmocka_unit_test(answers_parse_to_their_edits),
        cmocka_unit_test(bad_answers_are_errors_naming_block_and_line),
        cmocka_unit_test(a_quoted_line_never_holds_part_of_a_key),
        cmocka_unit_test(at_most_500_blocks),
        cmocka_unit_test(a_megabyte_answer_parses_quickly),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
