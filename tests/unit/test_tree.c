/* Unit tests for proto/tree: manifests, their canonical text and hash,
 * changes, blobs and the "need" body. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/str.h"
#include "common/xalloc.h"
#include "proto/tree.h"

static tnd_tree_entry entry(const char *path, const char *content, bool exec)
{
    tnd_tree_entry e;

    memset(&e, 0, sizeof(e));
    e.path = tnd_xstrdup(path);
    e.exec = exec;
    e.size = strlen(content);
    tnd_sha256_hex(e.blob, content, strlen(content));
    return e;
}

static tnd_tree *two_files(void)
{
    tnd_tree_entry *e = tnd_xcalloc(2, sizeof(*e));

    e[0] = entry("src/main.c", "int main(void) { return 0; }\n", false);
    e[1] = entry("Makefile", "all:\n", true);
    return tnd_tree_new(e, 2);
}

static void test_text_and_hash(void **state)
{
    tnd_tree *t = two_files(), *back;
    const char *text;
    char hash[TND_SHA256_HEX + 1];
    size_t len, n;

    (void)state;
    assert_non_null(t);
    text = tnd_tree_text(t, &len);
    /* sorted by path, one line each */
    assert_true(strncmp(text, "755 5 ", 6) == 0);
    assert_non_null(strstr(text, " Makefile\n644 29 "));
    assert_true(len > 0 && text[len - 1] == '\n');
    tnd_sha256_hex(hash, text, len);
    assert_string_equal(tnd_tree_hash(t), hash);
    /* the text reads back to the same tree */
    back = tnd_tree_parse(text, len);
    assert_non_null(back);
    assert_string_equal(tnd_tree_hash(back), tnd_tree_hash(t));
    assert_int_equal(tnd_tree_entries(back, &n)[1].size, 29);
    assert_int_equal(n, 2);
    assert_true(tnd_tree_find_path(back, "Makefile")->exec);
    assert_null(tnd_tree_find_path(back, "missing"));
    assert_string_equal(
        tnd_tree_find_blob(back, tnd_tree_find_path(back, "src/main.c")->blob)
            ->path,
        "src/main.c");
    tnd_tree_destroy(&back);
    tnd_tree_destroy(&t);
    assert_null(t);
    tnd_tree_destroy(&t); /* NULL-safe */
}

static void test_empty(void **state)
{
    tnd_tree *t = tnd_tree_new(NULL, 0);
    size_t len;

    (void)state;
    assert_non_null(t);
    tnd_tree_text(t, &len);
    assert_int_equal(len, 0);
    assert_string_equal(
        tnd_tree_hash(t),
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
    tnd_tree_destroy(&t);
}

static void test_bad_paths(void **state)
{
    static const char *const bad[] = {"",     "/etc/passwd", "../up", "a/../b",
                                      "a//b", "a/",          "./a",   "a\nb"};
    tnd_tree_entry *e;

    (void)state;
    for (size_t i = 0; i < sizeof(bad) / sizeof(*bad); i++)
        assert_int_equal(tnd_tree_check_path(bad[i]), -1);
    assert_int_equal(tnd_tree_check_path("a/.b/c..d"), 0);
    e = tnd_xcalloc(2, sizeof(*e));
    e[0] = entry("same", "1", false);
    e[1] = entry("same", "2", false);
    assert_null(tnd_tree_new(e, 2));
    assert_non_null(strstr(tnd_error_last(), "appears twice"));
}

/* A manifest over what an agent takes is still a tree: a reviewer on
 * the orchestrator's host works in the workspace and never asks for it
 * (such a tree failed every run at its first audit, after the whole
 * copy). Only sending it is refused, naming the limit and what a person
 * can do; the reviewer's side refuses to read one as before. */
static void test_manifest_too_large(void **state)
{
    size_t n = 40000, len;
    tnd_tree_entry *e = tnd_xcalloc(n, sizeof(*e));
    char path[256];
    const char *text;
    tnd_tree *t, *small = two_files();

    (void)state;
    for (size_t i = 0; i < n; i++) {
        snprintf(path, sizeof(path), "%0200zu.c", i);
        e[i] = entry(path, "x", false);
    }
    t = tnd_tree_new(e, n);
    assert_non_null(t);
    text = tnd_tree_text(t, &len);
    assert_true(len > TND_TREE_MAX_TEXT);
    assert_int_equal(tnd_tree_sendable(t), -1);
    assert_non_null(strstr(tnd_error_last(), "40000 files"));
    assert_non_null(strstr(tnd_error_last(), "more than the 9 MiB"));
    assert_non_null(strstr(tnd_error_last(), "agents.reviewer.count"));
    assert_null(tnd_tree_parse(text, len));
    assert_int_equal(tnd_tree_sendable(small), 0);
    tnd_tree_destroy(&small);
    tnd_tree_destroy(&t);
}

/* A symbolic link is an entry of its own: mode lnk, its target the
 * blob. */
static void test_links(void **state)
{
    tnd_tree_entry *e = tnd_xcalloc(3, sizeof(*e));
    tnd_tree *t, *back;
    const char *text;
    size_t len;

    (void)state;
    e[0] = entry("include/stats.h", "int f(void);\n", false);
    e[1] = entry("stats.h", "include/stats.h", false);
    e[1].link = true;
    e[2] = entry("lib", "../elsewhere", false);
    e[2].link = true;
    assert_non_null(t = tnd_tree_new(e, 3));
    text = tnd_tree_text(t, &len);
    assert_non_null(strstr(text, "lnk 15 "));
    assert_non_null(strstr(text, " stats.h\n"));
    assert_non_null(back = tnd_tree_parse(text, len));
    assert_true(tnd_tree_find_path(back, "stats.h")->link);
    assert_false(tnd_tree_find_path(back, "include/stats.h")->link);
    assert_string_equal(tnd_tree_hash(back), tnd_tree_hash(t));
    tnd_tree_destroy(&back);
    tnd_tree_destroy(&t);

    e = tnd_xcalloc(2, sizeof(*e));
    e[0] = entry("d", "real", false);
    e[0].link = true;
    e[1] = entry("d/x", "x", false);
    assert_null(tnd_tree_new(e, 2));
    assert_non_null(strstr(tnd_error_last(), "which is a symbolic link"));
}

static void parse_fails(const char *text, const char *why)
{
    tnd_tree *t = tnd_tree_parse(text, strlen(text));

    assert_null(t);
    if (!strstr(tnd_error_last(), why))
        fail_msg("'%s' gave '%s'", text, tnd_error_last());
}

static void test_parse_refuses(void **state)
{
    const char *h =
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
    char text[512];

    (void)state;
    snprintf(text, sizeof(text), "600 0 %s a\n", h);
    parse_fails(text, "mode must be 644, 755 or lnk");
    /* nothing may lie beneath a link: a workspace would write through it */
    snprintf(text, sizeof(text), "lnk 4 %s d\n644 0 %s d/x\n", h, h);
    parse_fails(text, "lies beneath 'd', which is a symbolic link");
    snprintf(text, sizeof(text), "644 0 %s a", h);
    parse_fails(text, "end in a newline");
    snprintf(text, sizeof(text), "644 0 %s b\n644 0 %s a\n", h, h);
    parse_fails(text, "sorted and unique");
    snprintf(text, sizeof(text), "644 0 %s ../a\n", h);
    parse_fails(text, "'..'");
    parse_fails("644 0 XYZ a\n", "line 1");
    snprintf(text, sizeof(text), "644 x %s a\n", h);
    parse_fails(text, "size");
}

static void test_changes_json(void **state)
{
    tnd_tree_change c[2], *back = NULL;
    json_object *j;
    size_t n;

    (void)state;
    memset(c, 0, sizeof(c));
    c[0].path = (char *)"new.c";
    c[0].exec = true;
    tnd_sha256_hex(c[0].blob, "x", 1);
    c[1].path = (char *)"gone.c";
    c[1].deleted = true;
    j = tnd_tree_changes_to_json(c, 2);
    assert_int_equal(tnd_tree_changes_from_json(&back, &n, j), 0);
    assert_int_equal(n, 2);
    assert_string_equal(back[0].path, "new.c");
    assert_true(back[0].exec);
    assert_string_equal(back[0].blob, c[0].blob);
    assert_true(back[1].deleted);
    tnd_tree_changes_free(&back, n);
    json_object_put(j);
    /* an escape is refused */
    j = json_tokener_parse("[{\"path\": \"../x\", \"deleted\": true}]");
    assert_int_equal(tnd_tree_changes_from_json(&back, &n, j), -1);
    assert_non_null(strstr(tnd_error_last(), "changes[0]"));
    tnd_tree_changes_free(&back, n);
    json_object_put(j);
}

static void test_blobs_and_verify(void **state)
{
    tnd_blob b = {.data = (char *)"hello\n", .len = 6}, *back = NULL;
    json_object *j;
    size_t n;

    (void)state;
    tnd_sha256_hex(b.hash, b.data, b.len);
    assert_int_equal(tnd_blob_verify(&b, "a.txt"), 0);
    j = tnd_tree_blobs_to_json(&b, 1);
    assert_int_equal(tnd_tree_blobs_from_json(&back, &n, j), 0);
    assert_int_equal(n, 1);
    assert_int_equal(back[0].len, 6);
    assert_memory_equal(back[0].data, "hello\n", 6);
    /* a piece of a larger blob */
    {
        tnd_blob p = b, *pb = NULL;
        json_object *pj;
        size_t pn;
        char need[TND_SHA256_HEX + 16], hash[TND_SHA256_HEX + 1];
        size_t have;
        p.offset = 10;
        p.total = 100;
        pj = tnd_tree_blobs_to_json(&p, 1);
        assert_int_equal(tnd_tree_blobs_from_json(&pb, &pn, pj), 0);
        assert_int_equal(pb[0].offset, 10);
        assert_int_equal(pb[0].total, 100);
        assert_int_equal(pb[0].len, 6);
        tnd_tree_blobs_free(&pb, pn);
        json_object_put(pj);
        /* a piece past its blob's end */
        pj = json_tokener_parse("{\"e3b0c44298fc1c149afbf4c8996fb92427ae41e4"
                                "649b934ca495991b7852b855\": {\"offset\": "
                                "99, \"size\": 100, \"data\": \"aGVsbG8K\"}}");
        assert_int_equal(tnd_tree_blobs_from_json(&pb, &pn, pj), -1);
        assert_non_null(strstr(tnd_error_last(), "does not lie within"));
        tnd_tree_blobs_free(&pb, pn);
        json_object_put(pj);
        /* need entries: HASH or HASH:N */
        snprintf(need, sizeof(need), "%s:4096", b.hash);
        assert_int_equal(tnd_need_entry(hash, &have, need), 0);
        assert_string_equal(hash, b.hash);
        assert_int_equal(have, 4096);
        assert_int_equal(tnd_need_entry(hash, &have, b.hash), 0);
        assert_int_equal(have, 0);
        snprintf(need, sizeof(need), "%s:x", b.hash);
        assert_int_equal(tnd_need_entry(hash, &have, need), -1);
        snprintf(need, sizeof(need), "%s:", b.hash);
        assert_int_equal(tnd_need_entry(hash, &have, need), -1);
    }
    /* tampered: the same key, other bytes */
    back[0].data[0] = 'j';
    assert_int_equal(tnd_blob_verify(&back[0], "a.txt"), -1);
    assert_non_null(strstr(tnd_error_last(), b.hash));
    assert_non_null(strstr(tnd_error_last(), "a.txt"));
    assert_non_null(strstr(tnd_error_last(), "refused"));
    tnd_tree_blobs_free(&back, n);
    json_object_put(j);
    j = json_tokener_parse("{\"not-a-hash\": \"aGk=\"}");
    assert_int_equal(tnd_tree_blobs_from_json(&back, &n, j), -1);
    tnd_tree_blobs_free(&back, n);
    json_object_put(j);
}

static void test_need(void **state)
{
    char h[TND_SHA256_HEX + 1], **got = NULL, *id = NULL, *body;
    const char *list[1] = {h};
    size_t len;
    int attempt = 0;

    (void)state;
    tnd_sha256_hex(h, "x", 1);
    body = tnd_need_encode("s1", 2, list, 1, &len);
    assert_int_equal(tnd_need_decode(&got, &id, &attempt, body, len), 0);
    assert_string_equal(id, "s1");
    assert_int_equal(attempt, 2);
    assert_string_equal(got[0], h);
    assert_null(got[1]);
    tnd_str_list_free(&got);
    free(id);
    free(body);
    body = tnd_need_encode("s1", 2, list, 0, &len);
    assert_int_equal(tnd_need_decode(&got, &id, &attempt, body, len), -1);
    assert_non_null(strstr(tnd_error_last(), "at least one"));
    free(body);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_text_and_hash),
        cmocka_unit_test(test_links),
        cmocka_unit_test(test_empty),
        cmocka_unit_test(test_bad_paths),
        cmocka_unit_test(test_parse_refuses),
        cmocka_unit_test(test_changes_json),
        cmocka_unit_test(test_blobs_and_verify),
        cmocka_unit_test(test_need),
        cmocka_unit_test(test_manifest_too_large),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
