/* Unit tests for orchestrator/context: which files the coder sees. A
 * repository of known sizes is built in a temporary directory; each test
 * asks for the context under some task, hints and budget, and checks the
 * files sent (in order) and the map of the rest. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/rmtree.h"
#include "orchestrator/context.h"
#include "proto/body.h"
#include "proto/mdp.h"

static char repo[] = "/tmp/tnd-test-context-XXXXXX";
static char outside[] = "/tmp/tnd-test-context-out-XXXXXX";
static char empty[] = "/tmp/tnd-test-context-empty-XXXXXX";

#define KIB 1024

/* The tree: path and size; contents are letters, except the binary. */
static const struct {
    const char *path;
    size_t size;
} tree[] = {
    {"README.md", 100},
    {"src/stats.c", 2000},
    {"src/util.h", 50},
    {"src/medium.c", 5000},
    {"src/edge.c", 256 * KIB}, /* exactly the per-file limit: may go */
    {"src/big.c", 300 * KIB},  /* over it: never goes */
    {"docs/guide.md", 1000},
    {"tests/test_stats.c", 1500},
    {"agents.yaml", 30},
    {"cassettes/coder.jsonl", 40},
    {".git/HEAD", 21},
    {".git/objects/ab/cdef", 60},
    {".tandem/sessions/s1.json", 70},
    {"vendor/lib/.git/config", 80},
};

static const char *const hidden[] = {"agents.yaml", "cassettes/coder.jsonl",
                                     NULL};

/* ---- helpers ------------------------------------------------------------ */

static void put(const char *dir, const char *rel, const char *data, size_t len)
{
    char *full = tnd_fs_join(dir, rel), *parent = tnd_fs_dirname(full);

    assert_int_equal(tnd_fs_mkdirs(parent, 0755), 0);
    assert_int_equal(tnd_fs_write(full, data, len), 0);
    free(parent);
    free(full);
}

static int context(tnd_code_request *req, const char *root, const char *task,
                   const char *hints, const char *const *exclude, size_t budget)
{
    tnd_context_options o = {
        .task = task, .hints = hints, .exclude = exclude, .budget = budget};

    return tnd_context_build(req, root, &o, NULL);
}

static void build(tnd_code_request *req, const char *task, const char *hints,
                  const char *const *exclude, size_t budget)
{
    memset(req, 0, sizeof(*req));
    if (context(req, repo, task, hints, exclude, budget) < 0)
        fail_msg("tnd_context_build: %s", tnd_error_last());
    assert_non_null(req->repo_map);
}

/* The paths sent, in order, one per line. Caller frees. */
static char *sent(const tnd_code_request *req)
{
    tnd_buf b;

    tnd_buf_init(&b, TND_BUF_NOCAP);
    for (size_t i = 0; i < req->nfiles; i++)
        tnd_buf_printf(&b, "%s\n", req->files[i].path);
    return tnd_buf_detach(&b, NULL);
}

static void assert_sent(const tnd_code_request *req, const char *expect)
{
    char *got = sent(req);

    assert_string_equal(got, expect);
    free(got);
}

static size_t bytes_sent(const tnd_code_request *req)
{
    size_t n = 0;

    for (size_t i = 0; i < req->nfiles; i++)
        n += strlen(req->files[i].content);
    return n;
}

/* ---- order -------------------------------------------------------------- */

static void named_files_come_first_then_smaller_ones(void **state)
{
    tnd_code_request req;

    (void)state;
    build(&req, "The mean in src/stats.c is wrong for an empty list",
          "FAIL test_stats.c:12: want 0, got nan\n", hidden, 1024 * KIB);
    assert_sent(&req, "tests/test_stats.c\n" /* named in hints, 1500 */
                      "src/stats.c\n"        /* named in the task, 2000 */
                      "src/util.h\n"         /* then smallest first */
                      "README.md\n"
                      "docs/guide.md\n"
                      "src/medium.c\n"
                      "src/edge.c\n");
    assert_int_equal(strlen(req.files[1].content), 2000);
    assert_int_equal(strlen(req.files[6].content), 256 * KIB);
    /* what does not go is mapped with its size */
    assert_string_equal(req.repo_map, "logo.png 20\n"
                                      "src/big.c 307200\n");
    tnd_code_request_clear(&req);
}

static void
included_globs_come_after_names_and_used_bytes_are_told(void **state)
{
    static char docs[] = "docs/**", medium[] = "src/medium.c";
    char *include[] = {docs, medium, NULL};
    tnd_context_options o = {.task = "fix src/stats.c",
                             .include = include,
                             .exclude = hidden,
                             .budget = 1024 * KIB};
    tnd_code_request req;
    tnd_context_stats st;

    (void)state;
    memset(&req, 0, sizeof(req));
    assert_int_equal(tnd_context_build(&req, repo, &o, &st), 0);
    assert_sent(&req, "src/stats.c\n"   /* named in the task */
                      "docs/guide.md\n" /* included, smallest first */
                      "src/medium.c\n"
                      "src/util.h\n" /* then the rest */
                      "README.md\n"
                      "tests/test_stats.c\n"
                      "src/edge.c\n");
    assert_int_equal(st.bytes, bytes_sent(&req));
    assert_int_equal(st.files, req.nfiles);
    assert_int_equal(st.binary, 1); /* logo.png */
    assert_int_equal(st.replaced, 0);
    tnd_code_request_clear(&req);
}

static void without_names_smaller_files_go_first(void **state)
{
    tnd_code_request req;

    (void)state;
    build(&req, "tidy up", NULL, hidden, 1024 * KIB);
    assert_sent(&req, "src/util.h\n"
                      "README.md\n"
                      "docs/guide.md\n"
                      "tests/test_stats.c\n"
                      "src/stats.c\n"
                      "src/medium.c\n"
                      "src/edge.c\n");
    tnd_code_request_clear(&req);
}

static void a_name_in_the_task_matches_path_or_file_name(void **state)
{
    tnd_code_request req;

    (void)state;
    build(&req, "see guide.md and medium.c", NULL, hidden, 1024 * KIB);
    assert_string_equal(req.files[0].path, "docs/guide.md");
    assert_string_equal(req.files[1].path, "src/medium.c");
    assert_string_equal(req.files[2].path, "src/util.h");
    tnd_code_request_clear(&req);
}

/* ---- what never goes ---------------------------------------------------- */

static void data_and_unnamed_huge_files_are_never_sent(void **state)
{
    tnd_code_request req;

    (void)state;
    build(&req, "logo.png looks wrong", NULL, hidden, 100 * 1024 * KIB);
    for (size_t i = 0; i < req.nfiles; i++) {
        assert_string_not_equal(req.files[i].path, "logo.png");
        assert_string_not_equal(req.files[i].path, "src/big.c");
    }
    assert_string_equal(req.repo_map, "logo.png 20\nsrc/big.c 307200\n");
    tnd_code_request_clear(&req);
}

/* Issue 11: a task naming cJSON.c (80 KB) sent 119 small files and not
 * cJSON.c, without a word. A named file goes whatever its size, when
 * the budget holds it; when it does not, the stats name it and the
 * budget that would have. */
static void a_named_file_goes_whatever_its_size(void **state)
{
    tnd_context_options o = {
        .task = "src/big.c is slow", .exclude = hidden, .budget = 1024 * KIB};
    tnd_code_request req;
    tnd_context_stats st;

    (void)state;
    memset(&req, 0, sizeof(req));
    assert_int_equal(tnd_context_build(&req, repo, &o, &st), 0);
    assert_string_equal(req.files[0].path, "src/big.c");
    assert_int_equal(strlen(req.files[0].content), 300 * KIB);
    assert_int_equal(st.named_out, 0);
    assert_string_equal(st.named, "");
    assert_int_equal(st.named_need, 300 * KIB);

    /* too big for the budget: said, with what would have held it */
    o.task = "src/big.c and src/stats.c";
    o.budget = 64 * KIB;
    assert_int_equal(tnd_context_build(&req, repo, &o, &st), 0);
    assert_string_equal(req.files[0].path, "src/stats.c");
    assert_int_equal(st.named_out, 1);
    assert_string_equal(st.named, "src/big.c (300 KiB)");
    assert_int_equal(st.named_need, 302 * KIB - 48);
    assert_int_equal(st.left_out, 1 /* big.c */ + 1 /* edge.c */);
    tnd_code_request_clear(&req);
}

static void files_left_out_are_counted(void **state)
{
    tnd_context_options o = {.task = "", .exclude = hidden, .budget = 3000};
    tnd_code_request req;
    tnd_context_stats st;

    (void)state;
    memset(&req, 0, sizeof(req));
    assert_int_equal(tnd_context_build(&req, repo, &o, &st), 0);
    /* stats.c, medium.c, edge.c, big.c; logo.png is data */
    assert_int_equal(st.left_out, 4);
    assert_int_equal(st.named_out, 0);
    assert_int_equal(st.map_listed, 5);
    assert_int_equal(st.map_summed, 0);
    assert_int_equal(st.map_bytes, strlen(req.repo_map));
    tnd_code_request_clear(&req);
}

/* Issue 11: the map grew to ~30k tokens on a 2,000-file repository. Past
 * its cap the rest is summed up per top-level directory. */
static void the_map_is_capped_and_sums_up_the_rest(void **state)
{
    char dir[] = "/tmp/tnd-test-context-map-XXXXXX", rel[64];
    tnd_context_options o = {.task = "", .budget = 0, .map_max = 2048};
    tnd_code_request req;
    tnd_context_stats st;

    (void)state;
    assert_non_null(mkdtemp(dir));
    for (int i = 0; i < 2000; i++) {
        snprintf(rel, sizeof(rel), "%s/file%04d.c",
                 i < 1500   ? "src"
                 : i < 1900 ? "tests"
                            : "docs",
                 i);
        put(dir, rel, "x\n", 2);
    }
    put(dir, "Makefile", "all:\n", 5);
    memset(&req, 0, sizeof(req));
    assert_int_equal(tnd_context_build(&req, dir, &o, &st), 0);
    assert_int_equal(req.nfiles, 0);
    assert_true(strlen(req.repo_map) <= 2048);
    assert_int_equal(st.map_bytes, strlen(req.repo_map));
    assert_true(st.map_listed > 50);
    assert_int_equal(st.map_listed + st.map_summed, 2001);
    assert_non_null(strstr(req.repo_map, "Makefile 5\n"));
    /* the directories with most files first */
    assert_non_null(strstr(req.repo_map, "src/ ("));
    assert_true(strstr(req.repo_map, "src/ (") <
                strstr(req.repo_map, "tests/ ("));
    assert_non_null(strstr(req.repo_map, "docs/file1900.c 2\n"));
    assert_non_null(strstr(req.repo_map, "tests/ (400 more files, 0 KiB)\n"));
    tnd_code_request_clear(&req);

    /* the default cap holds about 2,000 tokens */
    o.map_max = 0;
    assert_int_equal(tnd_context_build(&req, dir, &o, &st), 0);
    assert_true(strlen(req.repo_map) <= TND_CONTEXT_MAP_DEFAULT);
    assert_true(strlen(req.repo_map) > TND_CONTEXT_MAP_DEFAULT / 2);
    assert_int_equal(st.map_listed + st.map_summed, 2001);
    tnd_code_request_clear(&req);
    assert_int_equal(tnd_fs_rmtree(dir), 0);
}

/* A tree the snapshot takes (up to 200,000 files) has a context: at
 * 20,001 files every attempt failed with "holds more than 20000 files",
 * after the baseline had passed on the same tree. */
static void a_tree_of_25000_files_has_a_context(void **state)
{
    char dir[] = "/tmp/tnd-test-context-many-XXXXXX", rel[64];
    tnd_context_options o = {.task = "fix d07/f00007.c", .budget = 4 * KIB};
    tnd_code_request req;
    tnd_context_stats st;

    (void)state;
    assert_non_null(mkdtemp(dir));
    for (int i = 0; i < 25000; i++) {
        snprintf(rel, sizeof(rel), "d%02d/f%05d.c", i % 50, i);
        put(dir, rel, "x\n", 2);
    }
    memset(&req, 0, sizeof(req));
    if (tnd_context_build(&req, dir, &o, &st) < 0)
        fail_msg("tnd_context_build: %s", tnd_error_last());
    assert_string_equal(req.files[0].path, "d07/f00007.c");
    assert_int_equal(st.files + st.left_out, 25000);
    assert_true(strlen(req.repo_map) <= TND_CONTEXT_MAP_DEFAULT);
    tnd_code_request_clear(&req);
    assert_int_equal(tnd_fs_rmtree(dir), 0);
}

/* What no budget would send is said as such, and what is sent fits in a
 * request: a named 5 MiB file was "needing context_max_kb: 5121" under
 * a budget of 16384; a 3.9 MiB file with Latin-1 bytes went, and its
 * U+FFFDs made it a field the coder refused; 16 MiB of short lines made
 * a request of 24 MB the broker refused. Each failed the run. */
static void what_cannot_go_in_a_request_is_left_out(void **state)
{
    char dir[] = "/tmp/tnd-test-context-huge-XXXXXX", rel[64];
    tnd_context_options o = {.task = "fix big.c and latin.c",
                             .budget = 16384 * KIB};
    static const char latin[] = "caf\xe9 na\xefve r\xe9sum\xe9 and more "
                                "plain words here ok int x;\n";
    tnd_code_request req;
    tnd_context_stats st;
    size_t len, at;
    char *data = malloc(5 << 20), *body;

    (void)state;
    assert_non_null(mkdtemp(dir));
    memset(data, 'a', 5 << 20);
    for (size_t k = 63; k < (5 << 20); k += 64)
        data[k] = '\n';
    put(dir, "big.c", data, 5 << 20);
    for (at = 0; at + sizeof(latin) - 1 < (3900 * KIB); at += sizeof(latin) - 1)
        memcpy(data + at, latin, sizeof(latin) - 1);
    put(dir, "latin.c", data, at);
    memset(data, '\n', 200 * KIB);
    for (int i = 0; i < 100; i++) {
        snprintf(rel, sizeof(rel), "lines/f%03d.txt", i);
        put(dir, rel, data, 200 * KIB);
    }
    free(data);
    memset(&req, 0, sizeof(req));
    assert_int_equal(tnd_context_build(&req, dir, &o, &st), 0);
    for (size_t i = 0; i < req.nfiles; i++) {
        assert_string_not_equal(req.files[i].path, "big.c");
        assert_string_not_equal(req.files[i].path, "latin.c");
        assert_true(strlen(req.files[i].content) <= TND_BODY_MAX_FILE);
    }
    assert_true(req.nfiles > 0);
    assert_int_equal(st.named_out, 2);
    assert_int_equal(st.named_over, 2);
    assert_int_equal(st.named_need, 0);
    assert_non_null(strstr(st.named, "big.c (5120 KiB, too large to send)"));
    req.task_id = (char *)"t";
    req.task = (char *)o.task;
    body = tnd_code_request_encode(&req, &len);
    assert_true(len <= TND_MDP_MAX_BODY);
    free(body);
    req.task_id = NULL;
    req.task = NULL;
    tnd_code_request_clear(&req);
    assert_int_equal(tnd_fs_rmtree(dir), 0);
}

/* Issue 12: a test's binary data and a Latin-1 comment went into the
 * coder's prompt verbatim, where a JSON API refuses them. Data without a
 * NUL byte is still data; text with a few stray bytes is still text, sent
 * as valid UTF-8 with the bytes counted. */
static void data_is_mapped_and_text_is_sent_as_valid_utf8(void **state)
{
    char dir[] = "/tmp/tnd-test-context-utf8-XXXXXX", data[300];
    tnd_context_options o = {.task = "", .budget = 1024 * KIB};
    tnd_code_request req;
    tnd_context_stats st;

    (void)state;
    assert_non_null(mkdtemp(dir));
    for (size_t i = 0; i < sizeof(data); i++)
        data[i] = (char)(0x80 + i % 0x7F); /* no NUL, hardly any text */
    put(dir, "testdata/sample.dat", data, sizeof(data));
    put(dir, "rec.h", "/* Ren\xE9 M\xFCller */\nint x;\n", 25);
    put(dir, "ok.c", "int y;\n", 7);
    memset(&req, 0, sizeof(req));
    assert_int_equal(tnd_context_build(&req, dir, &o, &st), 0);
    assert_sent(&req, "ok.c\nrec.h\n");
    assert_string_equal(req.files[1].content,
                        "/* Ren\xEF\xBF\xBD M\xEF\xBF\xBDller */\nint x;\n");
    assert_string_equal(req.repo_map, "testdata/sample.dat 300\n");
    assert_int_equal(st.files, 2);
    assert_int_equal(st.bytes, 7 + 25);
    assert_int_equal(st.binary, 1);
    assert_int_equal(st.replaced, 2);
    assert_int_equal(st.replaced_files, 1);
    tnd_code_request_clear(&req);
    assert_int_equal(tnd_fs_rmtree(dir), 0);
}

static void budget_is_respected_and_the_rest_is_mapped(void **state)
{
    tnd_code_request req;

    (void)state;
    build(&req, "", NULL, hidden, 3000);
    assert_sent(&req, "src/util.h\n"
                      "README.md\n"
                      "docs/guide.md\n"
                      "tests/test_stats.c\n");
    assert_int_equal(bytes_sent(&req), 50 + 100 + 1000 + 1500);
    assert_string_equal(req.repo_map, "logo.png 20\n" /* shallow first */
                                      "src/big.c 307200\n"
                                      "src/edge.c 262144\n"
                                      "src/medium.c 5000\n"
                                      "src/stats.c 2000\n");
    tnd_code_request_clear(&req);

    /* a named file too big for the budget does not crowd out others */
    build(&req, "src/medium.c", NULL, hidden, 3000);
    assert_true(bytes_sent(&req) <= 3000);
    assert_non_null(strstr(req.repo_map, "src/medium.c 5000\n"));
    assert_string_equal(req.files[0].path, "src/util.h");
    tnd_code_request_clear(&req);

    /* exactly full */
    build(&req, "", NULL, hidden, 150);
    assert_sent(&req, "src/util.h\nREADME.md\n");
    tnd_code_request_clear(&req);

    build(&req, "", NULL, hidden, 0);
    assert_int_equal(req.nfiles, 0);
    assert_non_null(strstr(req.repo_map, "README.md 100\n"));
    tnd_code_request_clear(&req);
}

static void excluded_and_private_paths_are_neither_sent_nor_listed(void **state)
{
    const char *never[] = {"agents.yaml", "cassettes", ".git",     ".tandem",
                           "HEAD",        "cdef",      "leak.txt", NULL};
    tnd_code_request req;
    char *paths;

    (void)state;
    build(&req, "agents.yaml and leak.txt", NULL, hidden, 100 * 1024 * KIB);
    paths = sent(&req);
    for (const char **p = never; *p; p++) {
        if (strstr(paths, *p) || strstr(req.repo_map, *p))
            fail_msg("%s shows:\nsent:\n%smap:\n%s", *p, paths, req.repo_map);
    }
    free(paths);
    tnd_code_request_clear(&req);

    /* without the exclusions tandem's config would go like any file */
    build(&req, "", NULL, NULL, 100 * 1024 * KIB);
    paths = sent(&req);
    assert_non_null(strstr(paths, "agents.yaml\n"));
    assert_non_null(strstr(paths, "cassettes/coder.jsonl\n"));
    assert_null(strstr(paths, ".git"));
    free(paths);
    tnd_code_request_clear(&req);
}

/* ---- the rest of the contract ------------------------------------------- */

static void contents_are_the_files(void **state)
{
    tnd_code_request req;
    char *full, *text;

    (void)state;
    build(&req, "", NULL, hidden, 1024 * KIB);
    for (size_t i = 0; i < req.nfiles; i++) {
        full = tnd_fs_join(repo, req.files[i].path);
        assert_int_equal(tnd_fs_read(&text, NULL, full, 1024 * KIB), 0);
        assert_string_equal(req.files[i].content, text);
        free(text);
        free(full);
    }
    tnd_code_request_clear(&req);
}

static void building_again_replaces_the_earlier_context(void **state)
{
    tnd_code_request req;

    (void)state;
    build(&req, "", NULL, hidden, 1024 * KIB);
    assert_int_equal(req.nfiles, 7);
    assert_int_equal(context(&req, repo, "src/stats.c", NULL, hidden, 150), 0);
    assert_sent(&req, "src/util.h\nREADME.md\n");
    assert_non_null(strstr(req.repo_map, "src/stats.c 2000\n"));
    tnd_code_request_clear(&req);
}

static void empty_and_missing_trees(void **state)
{
    tnd_code_request req;

    (void)state;
    memset(&req, 0, sizeof(req));
    assert_int_equal(context(&req, empty, "x", NULL, NULL, 1000), 0);
    assert_int_equal(req.nfiles, 0);
    assert_string_equal(req.repo_map, "");
    tnd_code_request_clear(&req);

    assert_int_equal(
        context(&req, "/nonexistent/tnd-tree", "x", NULL, NULL, 1000), -1);
    assert_non_null(strstr(tnd_error_last(), "/nonexistent/tnd-tree"));
    tnd_code_request_clear(&req);
}

/* A file whose name is longer than a request's path may be (a deep tree
 * of long names): it went into the request, which the coder refused
 * ("field 'path' is 4021 bytes"), and every run in that repository
 * failed. It is left out, counted; the rest goes, and decodes. */
static void a_name_no_request_can_carry_is_left_out(void **state)
{
    char dir[] = "/tmp/tnd-test-context-long-XXXXXX", part[201];
    tnd_context_options o = {.task = "fix stats.c", .budget = 64 * KIB};
    tnd_code_request req, back;
    tnd_context_stats st;
    tnd_buf rel;
    size_t len;
    char *body;

    (void)state;
    assert_non_null(mkdtemp(dir));
    memset(part, 'a', sizeof(part) - 1);
    part[sizeof(part) - 1] = '\0';
    tnd_buf_init(&rel, TND_BUF_NOCAP);
    while (rel.len <= TND_BODY_MAX_PATH)
        tnd_buf_printf(&rel, "%s/", part);
    tnd_buf_printf(&rel, "deep.c");
    put(dir, rel.data, "int deep;\n", 10);
    put(dir, "stats.c", "int stats;\n", 11);
    memset(&req, 0, sizeof(req));
    assert_int_equal(tnd_context_build(&req, dir, &o, &st), 0);
    assert_sent(&req, "stats.c\n");
    assert_int_equal(st.left_out, 1);
    req.task_id = (char *)"t";
    req.task = (char *)o.task;
    req.attempt = 1;
    body = tnd_code_request_encode(&req, &len);
    memset(&back, 0, sizeof(back));
    if (tnd_code_request_decode(&back, body, len) < 0)
        fail_msg("the request does not decode: %s", tnd_error_last());
    tnd_code_request_clear(&back);
    free(body);
    req.task_id = NULL;
    req.task = NULL;
    tnd_code_request_clear(&req);
    tnd_buf_free(&rel);
    assert_int_equal(tnd_fs_rmtree(dir), 0);
}

/* ---- fixture ------------------------------------------------------------ */

static int setup(void **state)
{
    static const char png[] = "\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\1";
    char *data, *link;

    (void)state;
    if (!mkdtemp(repo) || !mkdtemp(outside) || !mkdtemp(empty))
        return -1;
    data = malloc(300 * KIB);
    for (size_t i = 0; i < sizeof(tree) / sizeof(tree[0]); i++) {
        for (size_t k = 0; k < tree[i].size; k++)
            data[k] = k % 64 == 63 ? '\n' : (char)('a' + k % 26);
        put(repo, tree[i].path, data, tree[i].size);
    }
    free(data);
    put(repo, "logo.png", png, sizeof(png) - 1);
    put(outside, "secret.txt", "secret\n", 7);
    link = tnd_fs_join(repo, "leak.txt");
    data = tnd_fs_join(outside, "secret.txt");
    if (symlink(data, link) < 0)
        return -1;
    free(data);
    free(link);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    return tnd_fs_rmtree(repo) | tnd_fs_rmtree(outside) | tnd_fs_rmtree(empty);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(named_files_come_first_then_smaller_ones),
        cmocka_unit_test(
            included_globs_come_after_names_and_used_bytes_are_told),
        cmocka_unit_test(without_names_smaller_files_go_first),
        cmocka_unit_test(a_name_in_the_task_matches_path_or_file_name),
        cmocka_unit_test(data_and_unnamed_huge_files_are_never_sent),
        cmocka_unit_test(a_named_file_goes_whatever_its_size),
        cmocka_unit_test(files_left_out_are_counted),
        cmocka_unit_test(the_map_is_capped_and_sums_up_the_rest),
        cmocka_unit_test(a_tree_of_25000_files_has_a_context),
        cmocka_unit_test(what_cannot_go_in_a_request_is_left_out),
        cmocka_unit_test(data_is_mapped_and_text_is_sent_as_valid_utf8),
        cmocka_unit_test(budget_is_respected_and_the_rest_is_mapped),
        cmocka_unit_test(
            excluded_and_private_paths_are_neither_sent_nor_listed),
        cmocka_unit_test(contents_are_the_files),
        cmocka_unit_test(building_again_replaces_the_earlier_context),
        cmocka_unit_test(empty_and_missing_trees),
        cmocka_unit_test(a_name_no_request_can_carry_is_left_out),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
