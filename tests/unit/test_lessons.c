/* Unit tests for orchestrator/lessons: the reflection bank (task types,
 * its file, learning with dedupe and a bound, ranking, effectiveness,
 * forgetting) and the coder request's "lessons" that carry it. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agents/prompt.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/rmtree.h"
#include "common/xalloc.h"
#include "orchestrator/lessons.h"
#include "proto/code.h"
#include "proto/json.h"

static char repo[64];
static char bankdir[128], bankfile[160];

static int setup(void **state)
{
    (void)state;
    strcpy(repo, "/tmp/tnd-test-lessons-XXXXXX");
    if (!mkdtemp(repo))
        return -1;
    snprintf(bankdir, sizeof(bankdir), "%s/.tandem", repo);
    snprintf(bankfile, sizeof(bankfile), "%s/lessons.json", bankdir);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    return tnd_fs_rmtree(repo);
}

static void write_bank(const char *text)
{
    assert_int_equal(tnd_fs_mkdirs(bankdir, 0755), 0);
    assert_int_equal(tnd_fs_write(bankfile, text, strlen(text)), 0);
}

#define NEAR(a, b) assert_true(fabs((a) - (b)) < 1e-9)

/* A lesson in the file's format; extra fields (or overrides: the last of
 * two equal keys wins) go after the usual ones. */
#define LESSON(id, extra)                                                \
    "{\"id\":\"" id "\",\"task_type\":\"fix\",\"mistake\":\"m " id "\"," \
    "\"correction\":\"c\",\"created\":\"2026-01-01T00:00:00.000Z\"" extra "}"
#define BANK(lessons) "{\"tandem_lessons\":1,\"lessons\":[" lessons "]}"

/* ---- task types --------------------------------------------------------- */

static void task_types_come_from_keywords(void **state)
{
    static const struct {
        const char *task, *type;
    } cases[] = {
        {"make the failing test pass", "fix"},
        {"Fix the crash in parse()", "fix"},
        {"the build is BROKEN since yesterday", "fix"},
        {"bug: stats_mean errors on empty input", "fix"},
        {"add tests for the parser", "test"},
        {"improve coverage of stats.c", "test"},
        {"add a --json option", "feature"},
        {"Implement support for UTF-8 names", "feature"},
        {"implement error codes", "feature"},
        {"create a README section on install", "docs"},
        {"refactor the error handling", "refactor"},
        {"rename foo() to bar()", "refactor"},
        {"clean up main.c", "refactor"},
        {"simplify the parser", "refactor"},
        {"update the README", "docs"},
        {"document the config keys", "docs"},
        {"comment the tricky loop", "docs"},
        {"bump the version", "other"},
        {"address the review", "other"}, /* not "add" */
        {"fixture testament prefixes", "other"},
        {"", "other"},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const char *got = tnd_lessons_task_type(cases[i].task);
        if (strcmp(got, cases[i].type) != 0)
            fail_msg("'%s': expected %s, got %s", cases[i].task, cases[i].type,
                     got);
        assert_true(tnd_lessons_task_type_valid(got));
    }
    assert_string_equal(tnd_lessons_task_type(NULL), "other");
    assert_false(tnd_lessons_task_type_valid("chores"));
    assert_false(tnd_lessons_task_type_valid(NULL));
}

static void context_hash_ignores_order_and_repeats(void **state)
{
    const char *ab[] = {"a.c", "b.c", NULL};
    const char *baa[] = {"b.c", "a.c", "a.c", NULL};
    const char *a[] = {"a.c", NULL};
    const char *none[] = {NULL};

    (void)state;
    assert_true(tnd_lessons_context_hash(ab) == tnd_lessons_context_hash(baa));
    assert_true(tnd_lessons_context_hash(ab) != tnd_lessons_context_hash(a));
    assert_true(tnd_lessons_context_hash(NULL) ==
                tnd_lessons_context_hash(none));
    assert_true(tnd_lessons_context_hash(NULL) != tnd_lessons_context_hash(a));
}

/* ---- loading ------------------------------------------------------------ */

static void a_missing_file_is_an_empty_bank(void **state)
{
    tnd_lessons *b = tnd_lessons_open(repo);

    (void)state;
    assert_non_null(b);
    assert_int_equal(tnd_lessons_count(b), 0);
    assert_string_equal(tnd_lessons_path(b), bankfile);
    assert_null(tnd_lessons_at(b, 0));
    tnd_lessons_close(&b);
    assert_null(b);
    tnd_lessons_close(&b); /* twice is fine */
    tnd_lessons_close(NULL);
}

static void expect_refused(const char *text, const char *why)
{
    tnd_lessons *b;

    write_bank(text);
    b = tnd_lessons_open(repo);
    if (b)
        fail_msg("accepted: %.200s", text);
    if (!strstr(tnd_error_last(), bankfile) || !strstr(tnd_error_last(), why))
        fail_msg("for %.200s\nexpected the file and \"%s\" in: %s", text, why,
                 tnd_error_last());
}

static void corrupt_and_hostile_files_are_refused(void **state)
{
    tnd_buf big;
    char *text;

    (void)state;
    expect_refused("not json", "not valid JSON");
    expect_refused("{\"tandem_lessons\":1,\"lessons\":[", "ends early");
    expect_refused("[]", "must hold a JSON object");
    expect_refused("{\"tandem_lessons\":2,\"lessons\":[]}", "version 2");
    expect_refused("{\"lessons\":[]}", "field 'tandem_lessons' is missing");
    expect_refused("{\"tandem_lessons\":1}", "field 'lessons' is missing");
    expect_refused("{\"tandem_lessons\":1,\"lessons\":{}}",
                   "field 'lessons' must be a list");
    expect_refused(BANK("1"), "lessons[0]: must be an object");
    expect_refused(BANK(LESSON("abcd1234", ",\"effectiveness\":7")),
                   "lessons[0]: field 'effectiveness' must be a number 0..1");
    expect_refused(BANK(LESSON("abcd1234", ",\"effectiveness\":\"high\"")),
                   "field 'effectiveness' must be a number");
    expect_refused(BANK(LESSON("abcd1234", ",\"effectiveness\":1e999")),
                   "field 'effectiveness'");
    expect_refused(BANK(LESSON("abcd1234", ",\"times_applied\":-1")),
                   "field 'times_applied' must be an integer");
    expect_refused(BANK(LESSON("XYZ!", "")), "field 'id' must be 4..16");
    expect_refused(BANK(LESSON("abcd1234", "") "," LESSON("abcd1234", "")),
                   "lessons[1]: field 'id': another lesson has id abcd1234");
    expect_refused(BANK(LESSON("abcd1234", ",\"task_type\":\"chores\"")),
                   "field 'task_type' must be fix, test");
    expect_refused(BANK(LESSON("abcd1234", ",\"paths\":[\"../etc/passwd\"]")),
                   "field 'paths': '../etc/passwd' contains '..'");
    expect_refused(BANK(LESSON("abcd1234", ",\"paths\":[\"/etc/passwd\"]")),
                   "absolute path");
    expect_refused(BANK(LESSON("abcd1234", ",\"paths\":[\"a\\u001b[2Jb\"]")),
                   "control character");
    expect_refused(BANK(LESSON("abcd1234", ",\"paths\":[7]")),
                   "field 'paths': item 0 must be a string");
    expect_refused(
        BANK(LESSON("abcd1234", ",\"paths\":[\"1\",\"2\",\"3\",\"4\",\"5\","
                                "\"6\",\"7\",\"8\",\"9\",\"10\",\"11\",\"12\","
                                "\"13\",\"14\",\"15\",\"16\",\"17\",\"18\","
                                "\"19\",\"20\",\"21\"]")),
        "field 'paths' has 21 items");
    expect_refused(BANK(LESSON("abcd1234", ",\"created\":\"yesterday\"")),
                   "field 'created' must be a UTC time");
    expect_refused(BANK(LESSON("abcd1234", ",\"context_hash\":\"xyz\"")),
                   "field 'context_hash'");
    expect_refused(BANK(LESSON("abcd1234", ",\"mistake\":\"\"")),
                   "field 'mistake' is empty");
    expect_refused(BANK(LESSON("abcd1234", ",\"correction\":\"a\\u0000b\"")),
                   "field 'correction' contains a NUL byte");
    expect_refused(BANK(LESSON("abcd1234", ",\"mistake\":null")),
                   "field 'mistake' is missing");

    /* texts over 1 KiB, too deep, too many lessons, too big a file */
    text = tnd_xasprintf(BANK(LESSON("abcd1234", ",\"mistake\":\"%0*d\"")),
                         1025, 0);
    expect_refused(text, "field 'mistake' is 1025 bytes");
    free(text);
    tnd_buf_init(&big, TND_BUF_NOCAP);
    tnd_buf_puts(&big, "{\"tandem_lessons\":1,\"lessons\":");
    for (int i = 0; i < 100; i++)
        tnd_buf_puts(&big, "[");
    for (int i = 0; i < 100; i++)
        tnd_buf_puts(&big, "]");
    tnd_buf_puts(&big, "}");
    expect_refused(tnd_buf_str(&big), "not valid JSON");
    tnd_buf_reset(&big);
    tnd_buf_puts(&big, "{\"tandem_lessons\":1,\"lessons\":[");
    for (int i = 0; i < TND_LESSONS_READ_MAX + 1; i++)
        tnd_buf_printf(&big, "%s{}", i ? "," : "");
    tnd_buf_puts(&big, "]}");
    expect_refused(tnd_buf_str(&big), "field 'lessons' has 1001 items");
    tnd_buf_reset(&big);
    tnd_buf_puts(&big, BANK(LESSON("abcd1234", "")));
    while (big.len <= TND_LESSONS_FILE_MAX)
        tnd_buf_puts(&big, "                                                ");
    expect_refused(tnd_buf_str(&big), "larger than");
    tnd_buf_free(&big);
}

static void a_good_file_loads(void **state)
{
    tnd_lessons *b;
    const tnd_lesson *l;
    const char *paths[] = {"b.c", "src/a.c", NULL};

    (void)state;
    write_bank(BANK(
        LESSON("abcd1234",
               ",\"paths\":[\"src/a.c\",\"b.c\"],"
               "\"times_applied\":3,"
               "\"effectiveness\":0.8,"
               "\"context_hash\":\"0000000000000000\","
               "\"unknown\":{\"x\":1}") "," LESSON("ef01",
                                                   ",\"task_type\":\"docs\"")));
    assert_non_null(b = tnd_lessons_open(repo));
    assert_int_equal(tnd_lessons_count(b), 2);
    l = tnd_lessons_at(b, 0);
    assert_string_equal(l->id, "abcd1234");
    assert_string_equal(l->task_type, "fix");
    assert_string_equal(l->mistake, "m abcd1234");
    assert_string_equal(l->correction, "c");
    assert_int_equal(l->npaths, 2);
    assert_string_equal(l->paths[0], "b.c"); /* sorted */
    assert_string_equal(l->paths[1], "src/a.c");
    assert_null(l->paths[2]);
    /* the hash follows the paths, whatever the file says */
    assert_true(l->context_hash == tnd_lessons_context_hash(paths));
    assert_int_equal(l->times_applied, 3);
    NEAR(l->effectiveness, 0.8);
    assert_string_equal(l->created, "2026-01-01T00:00:00.000Z");
    l = tnd_lessons_at(b, 1);
    assert_string_equal(l->task_type, "docs");
    assert_int_equal(l->npaths, 0);
    assert_int_equal(l->times_applied, 0);
    NEAR(l->effectiveness, 0.5);
    tnd_lessons_close(&b);
}

/* ---- learning ----------------------------------------------------------- */

static void add_updates_a_similar_lesson_instead_of_duplicating(void **state)
{
    tnd_lessons *b = tnd_lessons_open(repo);
    const char *p1[] = {"stats.c", "tests/test_stats.c", NULL};
    const char *p1b[] = {"tests/test_stats.c", "stats.c", "stats.c", NULL};
    const char *p2[] = {"other.c", NULL};
    const tnd_lesson *l, *again;
    char id[TND_LESSON_ID_MAX + 1];

    (void)state;
    assert_int_equal(tnd_lessons_add(&l, b, "fix",
                                     "test_mean fails: expected 2.5, got 2",
                                     "cast before dividing", p1),
                     0);
    assert_int_equal(tnd_lessons_count(b), 1);
    assert_int_equal(strlen(l->id), 8);
    NEAR(l->effectiveness, 0.5);
    assert_int_equal(l->times_applied, 0);
    assert_int_equal(strlen(l->created), 24);
    strcpy(id, l->id);

    /* the same words (numbers aside), the same files in another order */
    assert_int_equal(tnd_lessons_add(&again, b, "fix",
                                     "test_mean fails: expected 3.5, got 3",
                                     "divide as double", p1b),
                     0);
    assert_int_equal(tnd_lessons_count(b), 1);
    assert_ptr_equal(again, l);
    assert_string_equal(again->id, id);
    assert_string_equal(again->correction, "divide as double");
    assert_string_equal(again->mistake, "test_mean fails: expected 3.5, got 3");

    /* a different mistake, other files, another task type: new lessons */
    assert_int_equal(tnd_lessons_add(NULL, b, "fix",
                                     "the header was not included anywhere",
                                     "include stats.h", p1),
                     0);
    assert_int_equal(tnd_lessons_add(NULL, b, "fix",
                                     "test_mean fails: expected 2.5, got 2",
                                     "cast", p2),
                     0);
    assert_int_equal(tnd_lessons_add(NULL, b, "test",
                                     "test_mean fails: expected 2.5, got 2",
                                     "cast", p1),
                     0);
    assert_int_equal(tnd_lessons_learn(b, "fix the crash in main",
                                       "null deref in main", "check argc",
                                       NULL),
                     0);
    assert_int_equal(tnd_lessons_count(b), 5);
    assert_string_equal(tnd_lessons_at(b, 4)->task_type, "fix");
    for (size_t i = 0; i < 5; i++)
        for (size_t j = i + 1; j < 5; j++)
            assert_string_not_equal(tnd_lessons_at(b, i)->id,
                                    tnd_lessons_at(b, j)->id);

    /* refused: nothing changes */
    assert_int_equal(tnd_lessons_add(NULL, b, "chores", "m", "c", NULL), -1);
    assert_non_null(strstr(tnd_error_last(), "unknown task type 'chores'"));
    assert_int_equal(tnd_lessons_add(NULL, b, "fix", "", "c", NULL), -1);
    assert_int_equal(tnd_lessons_add(NULL, b, "fix", "m", NULL, NULL), -1);
    {
        const char *bad[] = {"ok.c", "../outside.c", NULL};
        assert_int_equal(tnd_lessons_add(NULL, b, "fix", "m", "c", bad), -1);
        assert_non_null(strstr(tnd_error_last(), "'..'"));
    }
    assert_int_equal(tnd_lessons_count(b), 5);
    tnd_lessons_close(&b);
}

static void add_cuts_long_texts_and_path_lists(void **state)
{
    tnd_lessons *b = tnd_lessons_open(repo);
    const char *paths[26];
    char names[25][8];
    tnd_buf m;
    const tnd_lesson *l;

    (void)state;
    for (int i = 0; i < 25; i++) {
        snprintf(names[i], sizeof(names[i]), "f%02d.c", i);
        paths[i] = names[i];
    }
    paths[25] = NULL;
    tnd_buf_init(&m, TND_BUF_NOCAP);
    tnd_buf_puts(&m, "x");
    for (int i = 0; i < 1500; i++)
        tnd_buf_puts(&m, "\xc3\xa9"); /* é: 2 bytes */
    assert_int_equal(tnd_lessons_add(&l, b, "other", tnd_buf_str(&m),
                                     tnd_buf_str(&m), paths),
                     0);
    /* cut at 1024 would split an é: it backs up to 1023 */
    assert_int_equal(strlen(l->mistake), 1023);
    assert_int_equal(strlen(l->correction), 1023);
    assert_int_equal(l->npaths, TND_LESSON_PATHS_MAX);
    assert_string_equal(l->paths[19], "f19.c");
    tnd_buf_free(&m);
    tnd_lessons_close(&b);
}

static void a_full_bank_evicts_the_least_effective_oldest_first(void **state)
{
    tnd_lessons *b = tnd_lessons_open(repo);
    const char *pa[] = {"a.c", NULL}, *pb[] = {"b.c", NULL},
               *pc[] = {"c.c", NULL}, *pd[] = {"d.c", NULL},
               *pe[] = {"e.c", NULL};
    const tnd_lesson *l;
    char a[17], bb[17], c[17], d[17], e[17];

    (void)state;
    tnd_lessons_set_max(b, 3);
    assert_int_equal(tnd_lessons_add(&l, b, "fix", "alpha", "x", pa), 0);
    strcpy(a, l->id);
    assert_int_equal(tnd_lessons_add(&l, b, "fix", "bravo", "x", pb), 0);
    strcpy(bb, l->id);
    assert_int_equal(tnd_lessons_add(&l, b, "fix", "charlie", "x", pc), 0);
    strcpy(c, l->id);
    {
        const char *good[] = {bb, NULL}, *bad[] = {a, NULL};
        tnd_lessons_applied(b, good, true); /* b: 0.65 */
        tnd_lessons_applied(b, bad, false); /* a: 0.35 */
    }

    /* full: the least effective (a) goes */
    assert_int_equal(tnd_lessons_add(&l, b, "fix", "delta", "x", pd), 0);
    strcpy(d, l->id);
    assert_int_equal(tnd_lessons_count(b), 3);
    assert_string_equal(tnd_lessons_at(b, 0)->id, bb);
    assert_string_equal(tnd_lessons_at(b, 1)->id, c);
    assert_string_equal(tnd_lessons_at(b, 2)->id, d);

    /* c and d tie at 0.5: the older (c) goes */
    assert_int_equal(tnd_lessons_add(&l, b, "fix", "echo", "x", pe), 0);
    strcpy(e, l->id);
    assert_int_equal(tnd_lessons_count(b), 3);
    assert_string_equal(tnd_lessons_at(b, 0)->id, bb);
    assert_string_equal(tnd_lessons_at(b, 1)->id, d);
    assert_string_equal(tnd_lessons_at(b, 2)->id, e);

    /* an update of a lesson in a full bank evicts nothing */
    assert_int_equal(tnd_lessons_add(NULL, b, "fix", "echo", "y", pe), 0);
    assert_int_equal(tnd_lessons_count(b), 3);

    /* shrinking the bound keeps the most effective */
    tnd_lessons_set_max(b, 1);
    assert_int_equal(tnd_lessons_count(b), 1);
    assert_string_equal(tnd_lessons_at(b, 0)->id, bb);
    tnd_lessons_close(&b);
}

/* ---- using -------------------------------------------------------------- */

static void relevant_ranks_by_type_paths_and_effectiveness(void **state)
{
    tnd_lessons *b = tnd_lessons_open(repo);
    const char *pa[] = {"a.c", NULL}, *pb[] = {"b.c", NULL},
               *pab[] = {"a.c", "b.c", NULL}, *pr[] = {"README.md", NULL};
    const tnd_lesson *l1, *l2, *l3, *l4, *l5, **out = NULL;
    size_t n = 99;

    (void)state;
    assert_int_equal(tnd_lessons_add(&l1, b, "fix", "one", "x", pa), 0);
    assert_int_equal(tnd_lessons_add(&l2, b, "fix", "two", "x", pb), 0);
    assert_int_equal(tnd_lessons_add(&l3, b, "test", "three", "x", pab), 0);
    assert_int_equal(tnd_lessons_add(&l4, b, "docs", "four", "x", pr), 0);
    assert_int_equal(tnd_lessons_add(&l5, b, "fix", "five", "x", pa), 0);
    {
        const char *two[] = {l2->id, NULL}, *five[] = {l5->id, NULL};
        for (int i = 0; i < 3; i++)
            tnd_lessons_applied(b, two, true); /* 0.8285 */
        tnd_lessons_applied(b, five, false);   /* 0.35 */
    }

    /* fix on a.c: l1 0.9, l5 0.87, l2 0.666, l3 0.25; l4 shares nothing */
    assert_int_equal(tnd_lessons_relevant(&out, &n, b, "fix", pa, 0), 0);
    assert_int_equal(n, TND_LESSONS_DEFAULT_K);
    assert_ptr_equal(out[0], l1);
    assert_ptr_equal(out[1], l5);
    assert_ptr_equal(out[2], l2);
    assert_null(out[3]);
    free(out);
    assert_int_equal(tnd_lessons_relevant(&out, &n, b, "fix", pa, 10), 0);
    assert_int_equal(n, 4);
    assert_ptr_equal(out[3], l3);
    free(out);

    /* path overlap alone counts; so does the type alone */
    assert_int_equal(tnd_lessons_relevant(&out, &n, b, "other", pab, 10), 0);
    assert_int_equal(n, 4);
    assert_ptr_equal(out[0], l3); /* Jaccard 1 */
    free(out);
    assert_int_equal(tnd_lessons_relevant(&out, &n, b, "docs", NULL, 0), 0);
    assert_int_equal(n, 1);
    assert_ptr_equal(out[0], l4);
    free(out);

    /* nothing in common: nothing */
    {
        const char *pz[] = {"z.c", NULL};
        assert_int_equal(tnd_lessons_relevant(&out, &n, b, "other", pz, 0), 0);
        assert_int_equal(n, 0);
        assert_non_null(out);
        assert_null(out[0]);
        free(out);
    }
    tnd_lessons_close(&b);
}

static void applied_moves_effectiveness_by_ema(void **state)
{
    tnd_lessons *b = tnd_lessons_open(repo);
    const tnd_lesson *l;
    const char *ids[3] = {NULL, "00000000", NULL};

    (void)state;
    assert_int_equal(tnd_lessons_add(&l, b, "fix", "m", "c", NULL), 0);
    ids[0] = l->id;
    tnd_lessons_applied(b, ids, true);
    NEAR(l->effectiveness, 0.65);
    assert_int_equal(l->times_applied, 1);
    tnd_lessons_applied(b, ids, false);
    NEAR(l->effectiveness, 0.455);
    assert_int_equal(l->times_applied, 2);
    for (int i = 0; i < 100; i++)
        tnd_lessons_applied(b, ids, true);
    assert_true(l->effectiveness <= 1.0 && l->effectiveness > 0.999);
    tnd_lessons_applied(b, NULL, true); /* nothing to do */
    assert_int_equal(l->times_applied, 102);
    tnd_lessons_close(&b);
}

static void find_and_forget_by_unique_prefix(void **state)
{
    tnd_lessons *b;
    const tnd_lesson *l;

    (void)state;
    write_bank(BANK(LESSON("abc12345", "") "," LESSON(
        "abc19999", "") "," LESSON("def00000", "") "," LESSON("abc1", "")));
    assert_non_null(b = tnd_lessons_open(repo));
    assert_int_equal(tnd_lessons_find(&l, b, "abc12"), 0);
    assert_string_equal(l->id, "abc12345");
    assert_int_equal(tnd_lessons_find(&l, b, "DEF"), 0); /* any case */
    assert_string_equal(l->id, "def00000");
    /* an exact id wins over the longer ids it begins */
    assert_int_equal(tnd_lessons_find(&l, b, "abc1"), 0);
    assert_string_equal(l->id, "abc1");
    assert_int_equal(tnd_lessons_find(&l, b, "abc"), -1);
    assert_null(l);
    assert_non_null(strstr(tnd_error_last(), "'abc' is the start of 3"));
    assert_int_equal(tnd_lessons_find(&l, b, "ffff"), TND_ENOTFOUND);
    assert_non_null(strstr(tnd_error_last(), "no lesson has an id starting "
                                             "with 'ffff'"));
    assert_int_equal(tnd_lessons_find(&l, b, "abc1234567890abcdef"),
                     TND_ENOTFOUND);
    assert_int_equal(tnd_lessons_find(&l, b, ""), -1);

    assert_int_equal(tnd_lessons_forget(b, "abc"), -1);
    assert_int_equal(tnd_lessons_forget(b, "zzz"), TND_ENOTFOUND);
    assert_int_equal(tnd_lessons_count(b), 4);
    assert_int_equal(tnd_lessons_forget(b, "de"), 0);
    assert_int_equal(tnd_lessons_count(b), 3);
    assert_int_equal(tnd_lessons_find(&l, b, "def00000"), TND_ENOTFOUND);
    assert_int_equal(tnd_lessons_forget(b, "abc19"), 0);
    assert_int_equal(tnd_lessons_forget(b, "abc1"), 0);
    assert_int_equal(tnd_lessons_count(b), 1);
    assert_string_equal(tnd_lessons_at(b, 0)->id, "abc12345");
    tnd_lessons_close(&b);
}

/* ---- saving ------------------------------------------------------------- */

static size_t entries_in(const char *dir, const char *containing)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    size_t n = 0;

    assert_non_null(d);
    while ((e = readdir(d)))
        n += strstr(e->d_name, containing) != NULL;
    closedir(d);
    return n;
}

static void save_is_atomic_and_round_trips(void **state)
{
    tnd_lessons *b = tnd_lessons_open(repo), *back;
    const char *pa[] = {"src/a.c", "b.c", NULL};
    const tnd_lesson *l, *m;
    json_object *o = NULL;
    char *text = NULL, *ignore;
    size_t len;

    (void)state;
    assert_int_equal(
        tnd_lessons_add(&l, b, "fix", "first \"quoted\"\nline", "fix\tit", pa),
        0);
    {
        const char *ids[] = {l->id, NULL};
        tnd_lessons_applied(b, ids, true);
    }
    assert_int_equal(tnd_lessons_add(NULL, b, "docs", "m2", "c2", NULL), 0);
    assert_int_equal(tnd_lessons_save(b), 0);

    /* complete, valid, no temporary file left, .tandem ignored by git */
    assert_int_equal(tnd_fs_read(&text, &len, bankfile, 1 << 20), 0);
    assert_int_equal(tnd_json_parse(&o, text, len), 0);
    assert_int_equal(
        json_object_get_int(json_object_object_get(o, "tandem_lessons")), 1);
    assert_int_equal(
        json_object_array_length(json_object_object_get(o, "lessons")), 2);
    assert_non_null(strstr(text, "\"effectiveness\": 0.65,") ||
                    strstr(text, "\"effectiveness\": 0.65\n"));
    json_object_put(o);
    free(text);
    assert_int_equal(entries_in(bankdir, ".tmp"), 0);
    ignore = tnd_fs_join(bankdir, ".gitignore");
    assert_true(tnd_fs_exists(ignore));
    free(ignore);

    /* what a crash mid-save leaves beside the bank does not matter */
    {
        char *tmp = tnd_xasprintf("%s.tmp.99999", bankfile);
        assert_int_equal(tnd_fs_write(tmp, "{\"tandem_less", 13), 0);
        free(tmp);
    }
    assert_non_null(back = tnd_lessons_open(repo));
    assert_int_equal(tnd_lessons_count(back), 2);
    l = tnd_lessons_at(b, 0);
    m = tnd_lessons_at(back, 0);
    assert_string_equal(m->id, l->id);
    assert_string_equal(m->task_type, "fix");
    assert_string_equal(m->mistake, "first \"quoted\"\nline");
    assert_string_equal(m->correction, "fix\tit");
    assert_int_equal(m->npaths, 2);
    assert_string_equal(m->paths[0], "b.c");
    assert_string_equal(m->paths[1], "src/a.c");
    assert_true(m->context_hash == l->context_hash);
    assert_string_equal(m->created, l->created);
    assert_int_equal(m->times_applied, 1);
    NEAR(m->effectiveness, 0.65);
    assert_string_equal(tnd_lessons_at(back, 1)->task_type, "docs");

    /* saving again replaces the file whole */
    assert_int_equal(tnd_lessons_forget(back, tnd_lessons_at(back, 1)->id), 0);
    assert_int_equal(tnd_lessons_save(back), 0);
    tnd_lessons_close(&back);
    assert_non_null(back = tnd_lessons_open(repo));
    assert_int_equal(tnd_lessons_count(back), 1);
    tnd_lessons_close(&back);
    tnd_lessons_close(&b);
}

/* Two holders of the bank (a run, and `tandem lessons forget` while it
 * runs; or two runs): each save keeps what the other saved (the run's
 * save of what it loaded at its start brought a forgotten lesson back),
 * and a lesson learned keeps its id through the save. */
static void saves_merge_what_others_saved(void **state)
{
    tnd_lessons *run, *cmd, *back;
    const tnd_lesson *l;
    char learned[TND_LESSON_ID_MAX + 1];

    (void)state;
    write_bank(BANK(LESSON("aaaaaaaa", "") "," LESSON("bbbbbbbb", "")));
    assert_non_null(run = tnd_lessons_open(repo));
    assert_non_null(cmd = tnd_lessons_open(repo));
    assert_int_equal(tnd_lessons_forget(cmd, "aaaaaaaa"), 0);
    assert_int_equal(tnd_lessons_save(cmd), 0);
    assert_int_equal(tnd_lessons_add(&l, run, "docs", "new mistake", "c", NULL),
                     0);
    snprintf(learned, sizeof(learned), "%s", l->id);
    {
        const char *ids[] = {"bbbbbbbb", learned, NULL};
        tnd_lessons_applied(run, ids, true);
    }
    assert_int_equal(tnd_lessons_save(run), 0);
    assert_non_null(back = tnd_lessons_open(repo));
    assert_int_equal(tnd_lessons_count(back), 2);
    assert_int_equal(tnd_lessons_find(&l, back, "aaaaaaaa"), TND_ENOTFOUND);
    assert_int_equal(tnd_lessons_find(&l, back, "bbbbbbbb"), 0);
    assert_int_equal(l->times_applied, 1);
    assert_int_equal(tnd_lessons_find(&l, back, learned), 0);
    assert_int_equal(l->times_applied, 1);
    /* the run's bank is the file's now */
    assert_int_equal(tnd_lessons_count(run), 2);
    tnd_lessons_close(&back);
    tnd_lessons_close(&cmd);
    tnd_lessons_close(&run);
}

/* ---- to the coder ------------------------------------------------------- */

static void render_makes_one_paragraph(void **state)
{
    tnd_lessons *b = tnd_lessons_open(repo);
    const tnd_lesson *l;
    char *text, long_text[TND_LESSON_TEXT_MAX + 1];

    (void)state;
    assert_int_equal(tnd_lessons_add(&l, b, "fix",
                                     "  the cast came\n\n  after the "
                                     "division\t",
                                     "cast\r\nfirst\n", NULL),
                     0);
    text = tnd_lessons_render(l);
    assert_string_equal(text, "Mistake: the cast came after the division "
                              "Correction: cast first");
    free(text);

    memset(long_text, 'x', TND_LESSON_TEXT_MAX);
    long_text[TND_LESSON_TEXT_MAX] = '\0';
    assert_int_equal(tnd_lessons_add(&l, b, "docs", long_text, long_text, NULL),
                     0);
    text = tnd_lessons_render(l);
    assert_true(strlen(text) <= TND_LESSON_RENDER_MAX);
    assert_true(strlen(text) <= TND_CODE_MAX_LESSON);
    assert_non_null(strstr(text, "..."));
    free(text);
    tnd_lessons_close(&b);
}

#define S(lit) ((char[]){lit})

static void the_request_carries_lessons_to_the_prompt(void **state)
{
    char *lessons[] = {S("Mistake: a Correction: b"),
                       S("Mistake: c Correction: d")};
    tnd_code_request r = {.task_id = S("t"),
                          .attempt = 1,
                          .task = S("fix it"),
                          .lessons = lessons,
                          .nlessons = 2};
    tnd_code_request back;
    char *body, *prompt;

    (void)state;
    body = tnd_code_request_encode(&r, NULL);
    assert_int_equal(tnd_code_request_decode(&back, body, strlen(body)), 0);
    assert_int_equal(back.nlessons, 2);
    assert_string_equal(back.lessons[0], lessons[0]);
    assert_string_equal(back.lessons[1], lessons[1]);
    prompt = tnd_prompt_coder_user(&back);
    assert_non_null(strstr(prompt, "## Lessons from earlier tasks in this "
                                   "repository\n"));
    assert_non_null(strstr(prompt, "\n- Mistake: a Correction: b\n- Mistake: "
                                   "c Correction: d\n"));
    assert_true(strstr(prompt, "## Task") < strstr(prompt, "## Lessons"));
    free(prompt);
    tnd_code_request_clear(&back);
    free(body);

    /* none: no field, no heading */
    r.lessons = NULL;
    r.nlessons = 0;
    body = tnd_code_request_encode(&r, NULL);
    assert_null(strstr(body, "lessons"));
    assert_int_equal(tnd_code_request_decode(&back, body, strlen(body)), 0);
    assert_int_equal(back.nlessons, 0);
    assert_null(back.lessons);
    prompt = tnd_prompt_coder_user(&back);
    assert_null(strstr(prompt, "Lessons"));
    free(prompt);
    tnd_code_request_clear(&back);
    free(body);
}

static void expect_bad_request(const char *lessons_json, const char *why)
{
    tnd_code_request back;
    char *body = tnd_xasprintf("{\"tandem\":1,\"type\":\"code\",\"task_id\":"
                               "\"t\",\"attempt\":1,\"task\":\"x\","
                               "\"lessons\":%s}",
                               lessons_json);

    if (tnd_code_request_decode(&back, body, strlen(body)) == 0)
        fail_msg("accepted lessons %.100s", lessons_json);
    if (!strstr(tnd_error_last(), why))
        fail_msg("expected \"%s\" in: %s", why, tnd_error_last());
    tnd_code_request_clear(&back);
    free(body);
}

static void the_request_checks_its_lessons(void **state)
{
    char *big = tnd_xmalloc(TND_CODE_MAX_LESSON + 8), *json;

    (void)state;
    expect_bad_request("[\"1\",\"2\",\"3\",\"4\",\"5\",\"6\"]",
                       "field 'lessons' has 6 items, more than the limit of 5");
    expect_bad_request("{}", "field 'lessons' must be a list");
    expect_bad_request("[\"ok\",7]", "lessons[1] must be a string");
    expect_bad_request("[\"a\\u0000b\"]", "lessons[0] contains a NUL byte");
    memset(big, 'x', TND_CODE_MAX_LESSON + 1);
    big[TND_CODE_MAX_LESSON + 1] = '\0';
    json = tnd_xasprintf("[\"ok\",\"%s\"]", big);
    expect_bad_request(json, "lessons[1] is 2049 bytes, more than the limit "
                             "of 2048");
    free(json);
    /* exactly at the limits is fine */
    big[TND_CODE_MAX_LESSON] = '\0';
    json = tnd_xasprintf("{\"tandem\":1,\"type\":\"code\",\"task_id\":\"t\","
                         "\"attempt\":1,\"task\":\"x\",\"lessons\":[\"%s\","
                         "\"2\",\"3\",\"4\",\"5\"]}",
                         big);
    {
        tnd_code_request back;
        assert_int_equal(tnd_code_request_decode(&back, json, strlen(json)), 0);
        assert_int_equal(back.nlessons, 5);
        tnd_code_request_clear(&back);
    }
    free(json);
    free(big);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(task_types_come_from_keywords),
        cmocka_unit_test(context_hash_ignores_order_and_repeats),
        cmocka_unit_test_setup_teardown(a_missing_file_is_an_empty_bank, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(corrupt_and_hostile_files_are_refused,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(a_good_file_loads, setup, teardown),
        cmocka_unit_test_setup_teardown(
            add_updates_a_similar_lesson_instead_of_duplicating, setup,
            teardown),
        cmocka_unit_test_setup_teardown(add_cuts_long_texts_and_path_lists,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(
            a_full_bank_evicts_the_least_effective_oldest_first, setup,
            teardown),
        cmocka_unit_test_setup_teardown(
            relevant_ranks_by_type_paths_and_effectiveness, setup, teardown),
        cmocka_unit_test_setup_teardown(applied_moves_effectiveness_by_ema,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(find_and_forget_by_unique_prefix, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(saves_merge_what_others_saved, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(save_is_atomic_and_round_trips, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(render_makes_one_paragraph, setup,
                                        teardown),
        cmocka_unit_test(the_request_carries_lessons_to_the_prompt),
        cmocka_unit_test(the_request_checks_its_lessons),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
