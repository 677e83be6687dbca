/* Unit tests for agents/blobcache: the agent's private runtime
 * directory, blobs checked on arrival, what a tree still lacks, and the
 * workspaces built from the cache. */
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

#include "agents/blobcache.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/rmtree.h"
#include "common/str.h"
#include "common/xalloc.h"

static char tmp[256];

static int setup(void **state)
{
    (void)state;
    snprintf(tmp, sizeof(tmp), "%s/tnd-blobcache-XXXXXX",
             getenv("TMPDIR") && getenv("TMPDIR")[0] == '/' ? getenv("TMPDIR")
                                                            : "/tmp");
    assert_non_null(mkdtemp(tmp));
    setenv("TMPDIR", tmp, 1);
    unsetenv("XDG_RUNTIME_DIR");
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    tnd_fs_rmtree(tmp);
    return 0;
}

static tnd_blob blob(const char *text)
{
    tnd_blob b = {.data = (char *)text, .len = strlen(text)};

    tnd_sha256_hex(b.hash, text, b.len);
    return b;
}

static void test_dir(void **state)
{
    tnd_blobcache *c = tnd_blobcache_new("reviewer", 1 << 20);
    struct stat st;
    char *dir;

    (void)state;
    assert_non_null(c);
    dir = tnd_xstrdup(tnd_blobcache_dir(c));
    assert_int_equal(stat(dir, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0700);
    assert_non_null(strstr(dir, "/reviewer-"));
    tnd_blobcache_destroy(&c);
    assert_null(c);
    assert_false(tnd_fs_exists(dir));
    free(dir);
}

static void test_put_checks(void **state)
{
    tnd_blobcache *c = tnd_blobcache_new("reviewer", 1 << 20);
    tnd_blob good = blob("int x;\n"), bad = blob("int x;\n");

    (void)state;
    assert_false(tnd_blobcache_has(c, good.hash));
    assert_int_equal(tnd_blobcache_put(c, &good, "x.c"), 0);
    assert_true(tnd_blobcache_has(c, good.hash));
    assert_int_equal(tnd_blobcache_received(c), 1);
    /* tampered: the bytes are not the ones the hash names */
    bad.data = (char *)"int y;\n";
    tnd_sha256_hex(bad.hash, "other", 5);
    assert_int_equal(tnd_blobcache_put(c, &bad, "src/y.c"), -1);
    assert_non_null(strstr(tnd_error_last(), "src/y.c"));
    assert_non_null(strstr(tnd_error_last(), bad.hash));
    assert_false(tnd_blobcache_has(c, bad.hash));
    /* a name that is not a hash is never a file */
    assert_false(tnd_blobcache_has(c, "../../etc/passwd"));
    tnd_blobcache_destroy(&c);
}

static void test_bounded(void **state)
{
    tnd_blobcache *c = tnd_blobcache_new("reviewer", 10);
    tnd_blob a = blob("123456"), b = blob("abcdef"), big = blob("0123456789x");

    (void)state;
    assert_int_equal(tnd_blobcache_put(c, &a, "a"), 0);
    /* past the bound: the older blob makes room */
    assert_int_equal(tnd_blobcache_put(c, &b, "b"), 0);
    assert_false(tnd_blobcache_has(c, a.hash));
    assert_true(tnd_blobcache_has(c, b.hash));
    assert_int_equal(tnd_blobcache_put(c, &big, "big"), -1);
    assert_non_null(strstr(tnd_error_last(), "more than this agent's cache"));
    tnd_blobcache_destroy(&c);
}

/* A tree of the blobs bs (files f0, f1, ...), the manifest not stored. */
static tnd_tree *tree_with(const tnd_blob *bs, size_t n)
{
    tnd_tree_entry *e = tnd_xcalloc(n, sizeof(*e));

    for (size_t i = 0; i < n; i++) {
        e[i].path = tnd_xasprintf("f%zu", i);
        e[i].size = bs[i].len;
        memcpy(e[i].blob, bs[i].hash, sizeof(bs[i].hash));
    }
    return tnd_tree_new(e, n);
}

/* Full, the cache removes the least recently used blobs, not all: a blob
 * a request's tree names, or one sent again, is used. */
static void test_lru(void **state)
{
    tnd_blobcache *c = tnd_blobcache_new("reviewer", 20);
    tnd_blob a = blob("aaaaaa"), b = blob("bbbbbb"), d = blob("dddddd");
    tnd_blob e = blob("eeeeee"), f = blob("ffffff");
    tnd_tree *t = tree_with(&a, 1);
    char **missing;

    (void)state;
    assert_int_equal(tnd_blobcache_put(c, &a, "a"), 0);
    assert_int_equal(tnd_blobcache_put(c, &b, "b"), 0);
    assert_int_equal(tnd_blobcache_put(c, &d, "d"), 0);
    /* a request on a tree holding a: a is used, b is now the oldest */
    missing = tnd_blobcache_missing(c, t, NULL, 0);
    assert_null(missing);
    assert_int_equal(tnd_blobcache_put(c, &e, "e"), 0);
    assert_true(tnd_blobcache_has(c, a.hash));
    assert_false(tnd_blobcache_has(c, b.hash));
    assert_true(tnd_blobcache_has(c, d.hash));
    assert_true(tnd_blobcache_has(c, e.hash));
    /* d sent again: used; a is the oldest now */
    assert_int_equal(tnd_blobcache_put(c, &d, "d"), 0);
    assert_int_equal(tnd_blobcache_put(c, &f, "f"), 0);
    assert_false(tnd_blobcache_has(c, a.hash));
    assert_true(tnd_blobcache_has(c, d.hash));
    assert_true(tnd_blobcache_has(c, e.hash));
    assert_true(tnd_blobcache_has(c, f.hash));
    assert_int_equal(tnd_blobcache_received(c), 5);
    tnd_tree_destroy(&t);
    tnd_blobcache_destroy(&c);
}

/* Under the lock, what the request uses is never removed to make room:
 * the tree it holds (tnd_blobcache_hold) and the blobs it stored. With
 * nothing else to remove, a put fails saying so; after the unlock the
 * same put makes room. */
static void test_pinned(void **state)
{
    tnd_blobcache *c = tnd_blobcache_new("reviewer", 20);
    tnd_blob a = blob("aaaaaa"), b = blob("bbbbbb"), x = blob("xxxxxx");
    tnd_blob d = blob("dddddd"), e = blob("eeeeee");
    tnd_blob ab[2];
    tnd_tree *t;

    (void)state;
    ab[0] = a;
    ab[1] = b;
    t = tree_with(ab, 2);
    assert_int_equal(tnd_blobcache_put(c, &a, "a"), 0);
    assert_int_equal(tnd_blobcache_put(c, &b, "b"), 0);
    assert_int_equal(tnd_blobcache_put(c, &x, "x"), 0); /* the newest */
    tnd_blobcache_lock(c);
    tnd_blobcache_hold(c, t, NULL, 0);
    /* x is the only one not the request's, newest or not */
    assert_int_equal(tnd_blobcache_put(c, &d, "src/d.c"), 0);
    assert_false(tnd_blobcache_has(c, x.hash));
    assert_true(tnd_blobcache_has(c, a.hash));
    assert_true(tnd_blobcache_has(c, b.hash));
    /* a, b and d are the request's: no room for e */
    assert_int_equal(tnd_blobcache_put(c, &e, "src/e.c"), -1);
    assert_non_null(strstr(tnd_error_last(), "does not fit"));
    assert_non_null(strstr(tnd_error_last(), "src/e.c"));
    assert_non_null(strstr(tnd_error_last(), "workspace_max_mb"));
    assert_false(tnd_blobcache_has(c, e.hash));
    assert_true(tnd_blobcache_has(c, a.hash));
    assert_true(tnd_blobcache_has(c, b.hash));
    assert_true(tnd_blobcache_has(c, d.hash));
    tnd_blobcache_unlock(c);
    /* the next request may take the oldest: a */
    tnd_blobcache_lock(c);
    assert_int_equal(tnd_blobcache_put(c, &e, "src/e.c"), 0);
    tnd_blobcache_unlock(c);
    assert_false(tnd_blobcache_has(c, a.hash));
    assert_true(tnd_blobcache_has(c, b.hash));
    assert_true(tnd_blobcache_has(c, d.hash));
    assert_true(tnd_blobcache_has(c, e.hash));
    tnd_tree_destroy(&t);
    tnd_blobcache_destroy(&c);
}

/* piece n (0 or 1) of blob b of 12 bytes: 8, then 4 */
static tnd_blob piece(const tnd_blob *b, int n)
{
    tnd_blob p = *b;

    p.total = b->len;
    p.offset = n ? 8 : 0;
    p.data = b->data + p.offset;
    p.len = n ? b->len - 8 : 8;
    return p;
}

/* A blob in pieces counts as it arrives; its part is never removed to
 * make room for its own next piece, and a part left behind is removed
 * like a blob when it is the oldest. */
static void test_evict_parts(void **state)
{
    tnd_blobcache *c = tnd_blobcache_new("reviewer", 16);
    tnd_blob w = blob("0123456789ab"), w2 = blob("ABCDEFGHIJKL");
    tnd_blob y = blob("yyyyyy"), z = blob("zzzzzzzzzz"), p;
    tnd_tree *t = tree_with(&w2, 1);
    char **missing;

    (void)state;
    p = piece(&w, 0);
    assert_int_equal(tnd_blobcache_put(c, &p, "w.dat"), 0); /* 8 */
    assert_int_equal(tnd_blobcache_put(c, &y, "y"), 0);     /* 14 */
    /* 18: the part is the oldest, but its own; y makes room */
    p = piece(&w, 1);
    assert_int_equal(tnd_blobcache_put(c, &p, "w.dat"), 0);
    assert_true(tnd_blobcache_has(c, w.hash));
    assert_false(tnd_blobcache_has(c, y.hash));

    /* 12 + 8: w makes room for w2's first piece */
    p = piece(&w2, 0);
    assert_int_equal(tnd_blobcache_put(c, &p, "w2.dat"), 0);
    assert_false(tnd_blobcache_has(c, w.hash));
    assert_int_equal(tnd_blobcache_put(c, &y, "y"), 0); /* 14 */
    /* 24: the part left half way is the oldest and goes */
    assert_int_equal(tnd_blobcache_put(c, &z, "z"), 0);
    missing = tnd_blobcache_missing(c, t, NULL, 0);
    assert_non_null(missing);
    assert_string_equal(missing[0], w2.hash); /* not HASH:8 */
    tnd_str_list_free(&missing);
    assert_true(tnd_blobcache_has(c, y.hash));
    assert_true(tnd_blobcache_has(c, z.hash));
    tnd_tree_destroy(&t);
    tnd_blobcache_destroy(&c);
}

/* Room for a blob as large as the cache, in a cache of many small ones:
 * more than one batch of the oldest is removed. */
static void test_evict_many(void **state)
{
    tnd_blobcache *c = tnd_blobcache_new("reviewer", 200);
    char text[8], big[201];
    tnd_blob b;

    (void)state;
    for (int i = 0; i < 200; i++) {
        snprintf(text, sizeof(text), "%c", 'A' + i % 50);
        if (i >= 50)
            snprintf(text, sizeof(text), "%03d", i); /* 3 bytes */
        b = blob(text);
        if (i < 50 || i >= 150)
            continue; /* 100 blobs of 3 bytes: 300 > 200 */
        assert_int_equal(tnd_blobcache_put(c, &b, text), 0);
    }
    memset(big, 'q', 200);
    big[200] = '\0';
    b = blob(big);
    assert_int_equal(tnd_blobcache_put(c, &b, "big"), 0);
    assert_true(tnd_blobcache_has(c, b.hash));
    for (int i = 50; i < 150; i++) {
        snprintf(text, sizeof(text), "%03d", i);
        b = blob(text);
        assert_false(tnd_blobcache_has(c, b.hash));
    }
    tnd_blobcache_destroy(&c);
}

static tnd_tree *tree_of(tnd_blobcache *c, bool store)
{
    tnd_tree_entry *e = tnd_xcalloc(2, sizeof(*e));
    tnd_blob m = blob("all:\n\t@true\n"), s = blob("int s;\n");
    tnd_tree *t;
    const char *text;
    size_t len;

    e[0].path = tnd_xstrdup("Makefile");
    e[0].size = m.len;
    memcpy(e[0].blob, m.hash, sizeof(m.hash));
    e[1].path = tnd_xstrdup("src/s.c");
    e[1].exec = true;
    e[1].size = s.len;
    memcpy(e[1].blob, s.hash, sizeof(s.hash));
    t = tnd_tree_new(e, 2);
    if (store) {
        tnd_blob mb;
        memset(&mb, 0, sizeof(mb)); /* a whole blob: total 0 */
        assert_int_equal(tnd_blobcache_put(c, &m, "Makefile"), 0);
        assert_int_equal(tnd_blobcache_put(c, &s, "src/s.c"), 0);
        text = tnd_tree_text(t, &len);
        mb.data = (char *)text;
        mb.len = len;
        memcpy(mb.hash, tnd_tree_hash(t), sizeof(mb.hash));
        assert_int_equal(tnd_blobcache_put(c, &mb, "the manifest"), 0);
    }
    return t;
}

static void test_missing(void **state)
{
    tnd_blobcache *c = tnd_blobcache_new("reviewer", 1 << 20);
    tnd_tree *t = tree_of(c, false), *back;
    tnd_tree_change ch = {.path = (char *)"new.c"};
    tnd_blob nb = blob("new\n");
    char **missing;

    (void)state;
    memcpy(ch.blob, nb.hash, sizeof(nb.hash));
    missing = tnd_blobcache_missing(c, t, &ch, 1);
    assert_non_null(missing);
    assert_string_equal(missing[0], nb.hash); /* changes first */
    assert_non_null(missing[2]);
    assert_null(missing[3]);
    tnd_str_list_free(&missing);
    tnd_tree_destroy(&t);
    t = tree_of(c, true);
    assert_int_equal(tnd_blobcache_put(c, &nb, "new.c"), 0);
    assert_null(tnd_blobcache_missing(c, t, &ch, 1));
    back = tnd_blobcache_tree(c, tnd_tree_hash(t));
    assert_non_null(back);
    assert_string_equal(tnd_tree_hash(back), tnd_tree_hash(t));
    tnd_tree_destroy(&back);
    tnd_tree_destroy(&t);
    tnd_blobcache_destroy(&c);
}

static void test_build(void **state)
{
    tnd_blobcache *c = tnd_blobcache_new("reviewer", 1 << 20);
    tnd_tree *t = tree_of(c, true);
    tnd_tree_change ch[2];
    tnd_blob nb = blob("int n;\n");
    char *ws = NULL, *path, *text;
    size_t len;
    struct stat st;

    (void)state;
    memset(ch, 0, sizeof(ch));
    ch[0].path = (char *)"lib/n.c";
    memcpy(ch[0].blob, nb.hash, sizeof(nb.hash));
    ch[1].path = (char *)"src/s.c";
    ch[1].deleted = true;
    assert_int_equal(tnd_blobcache_put(c, &nb, "lib/n.c"), 0);
    assert_int_equal(tnd_blobcache_build(&ws, c, t, ch, 2), 0);
    assert_true(
        strncmp(ws, tnd_blobcache_dir(c), strlen(tnd_blobcache_dir(c))) == 0);
    path = tnd_fs_join(ws, "Makefile");
    assert_int_equal(tnd_fs_read(&text, &len, path, 1024), 0);
    assert_string_equal(text, "all:\n\t@true\n");
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0644);
    free(text);
    free(path);
    path = tnd_fs_join(ws, "lib/n.c");
    assert_true(tnd_fs_exists(path));
    free(path);
    path = tnd_fs_join(ws, "src/s.c");
    assert_false(tnd_fs_exists(path)); /* deleted by the change */
    free(path);
    /* a skill that writes a file in place does not change the cache */
    path = tnd_fs_join(ws, "Makefile");
    assert_int_equal(tnd_fs_write(path, "broken", 6), 0);
    free(path);
    tnd_blobcache_drop(c, &ws);
    assert_null(ws);
    assert_int_equal(tnd_blobcache_build(&ws, c, t, NULL, 0), 0);
    path = tnd_fs_join(ws, "Makefile");
    assert_int_equal(tnd_fs_read(&text, &len, path, 1024), 0);
    assert_string_equal(text, "all:\n\t@true\n");
    free(text);
    free(path);
    path = tnd_fs_join(ws, "src/s.c");
    assert_int_equal(stat(path, &st), 0);
    assert_int_equal(st.st_mode & 0777, 0755);
    free(path);
    tnd_blobcache_drop(c, &ws);
    /* deleting what the base lacks is an error */
    ch[1].path = (char *)"nowhere.c";
    assert_int_equal(tnd_blobcache_build(&ws, c, t, ch, 2), -1);
    assert_non_null(strstr(tnd_error_last(), "nowhere.c"));
    assert_null(ws);
    tnd_tree_destroy(&t);
    tnd_blobcache_destroy(&c);
}

/* A tree's symbolic links are made in the workspace as links, to the
 * targets their blobs hold, after the files. */
static void test_links(void **state)
{
    tnd_blobcache *c = tnd_blobcache_new("reviewer", 1 << 20);
    tnd_tree_entry *e = tnd_xcalloc(2, sizeof(*e));
    tnd_blob f = blob("int f(void);\n"), l = blob("include/f.h");
    tnd_tree *t;
    char *ws = NULL, *path, target[64];
    ssize_t n;

    (void)state;
    e[0].path = tnd_xstrdup("include/f.h");
    e[0].size = f.len;
    memcpy(e[0].blob, f.hash, sizeof(f.hash));
    e[1].path = tnd_xstrdup("lib/f.h");
    e[1].link = true;
    e[1].size = l.len;
    memcpy(e[1].blob, l.hash, sizeof(l.hash));
    assert_non_null(t = tnd_tree_new(e, 2));
    assert_int_equal(tnd_blobcache_put(c, &f, "include/f.h"), 0);
    assert_int_equal(tnd_blobcache_put(c, &l, "lib/f.h"), 0);
    assert_int_equal(tnd_blobcache_build(&ws, c, t, NULL, 0), 0);
    path = tnd_fs_join(ws, "lib/f.h");
    n = readlink(path, target, sizeof(target) - 1);
    assert_int_equal(n, 11);
    target[n] = '\0';
    assert_string_equal(target, "include/f.h");
    free(path);
    tnd_blobcache_drop(c, &ws);
    tnd_tree_destroy(&t);
    tnd_blobcache_destroy(&c);
}

/* A large blob comes in pieces: kept in order, whole only once every
 * byte is there and the whole hashes right; until then "need" says how
 * much is held. */
static void test_pieces(void **state)
{
    tnd_blobcache *c = tnd_blobcache_new("reviewer", 1 << 20);
    const char *text = "0123456789abcdefghij";
    tnd_blob whole = blob(text), p;
    tnd_tree_entry *e = tnd_xcalloc(1, sizeof(*e));
    tnd_tree *t;
    char **missing, want[TND_SHA256_HEX + 8];

    (void)state;
    e[0].path = tnd_xstrdup("big.dat");
    e[0].size = 20;
    memcpy(e[0].blob, whole.hash, sizeof(whole.hash));
    assert_non_null(t = tnd_tree_new(e, 1));
    p = whole;
    p.total = 20;
    p.data = (char *)text;
    p.len = 8;
    assert_int_equal(tnd_blobcache_put(c, &p, "big.dat"), 0);
    assert_false(tnd_blobcache_has(c, whole.hash));
    missing = tnd_blobcache_missing(c, t, NULL, 0);
    snprintf(want, sizeof(want), "%s:8", whole.hash);
    assert_string_equal(missing[0], want);
    tnd_str_list_free(&missing);
    /* out of order: dropped, the part stays as it was */
    p.offset = 12;
    p.data = (char *)text + 12;
    assert_int_equal(tnd_blobcache_put(c, &p, "big.dat"), 0);
    missing = tnd_blobcache_missing(c, t, NULL, 0);
    assert_string_equal(missing[0], want);
    tnd_str_list_free(&missing);
    /* the rest: whole, checked, a blob */
    p.offset = 8;
    p.data = (char *)text + 8;
    p.len = 12;
    assert_int_equal(tnd_blobcache_put(c, &p, "big.dat"), 0);
    assert_true(tnd_blobcache_has(c, whole.hash));
    assert_null(tnd_blobcache_missing(c, t, NULL, 0));
    tnd_tree_destroy(&t);

    /* pieces of other bytes than the hash names: refused when whole */
    p = blob("other bytes");
    memcpy(p.hash, blob("the real ones").hash, sizeof(p.hash));
    p.total = p.len;
    assert_int_equal(tnd_blobcache_put(c, &p, "x.dat"), -1);
    assert_non_null(strstr(tnd_error_last(), "tampered"));
    assert_false(tnd_blobcache_has(c, p.hash));
    tnd_blobcache_destroy(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_dir),        cmocka_unit_test(test_put_checks),
        cmocka_unit_test(test_bounded),    cmocka_unit_test(test_missing),
        cmocka_unit_test(test_build),      cmocka_unit_test(test_links),
        cmocka_unit_test(test_pieces),     cmocka_unit_test(test_lru),
        cmocka_unit_test(test_pinned),     cmocka_unit_test(test_evict_parts),
        cmocka_unit_test(test_evict_many),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
