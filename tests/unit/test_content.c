/* Unit tests for orchestrator/content: the snapshot's manifest, an
 * attempt's changes, and the blobs a reviewer asks for. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>

#include "common/error.h"
#include "common/fs.h"
#include "common/rmtree.h"
#include "common/xalloc.h"
#include "orchestrator/content.h"

static char tmp[256];

static void put(const char *dir, const char *rel, const char *text)
{
    char *path = tnd_fs_join(dir, rel), *parent = tnd_fs_dirname(path);

    assert_int_equal(tnd_fs_mkdirs(parent, 0755), 0);
    assert_int_equal(tnd_fs_write(path, text, strlen(text)), 0);
    free(parent);
    free(path);
}

static int setup(void **state)
{
    (void)state;
    const char *t = getenv("TMPDIR");

    snprintf(tmp, sizeof(tmp), "%s/tnd-content-XXXXXX",
             t && t[0] == '/' ? t : "/tmp");
    assert_non_null(mkdtemp(tmp));
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    tnd_fs_rmtree(tmp);
    return 0;
}

static void test_tree_changes_fill(void **state)
{
    char *base = tnd_fs_join(tmp, "base"), *ws = tnd_fs_join(tmp, "ws");
    const char *touched[] = {"a.c", "b.c", "new.c", "same.c", NULL};
    const char *hash, *again;
    const tnd_tree_change *ch;
    tnd_content *c;
    tnd_blob *blobs;
    size_t n, nb;
    char *path;

    (void)state;
    put(base, "a.c", "a\n");
    put(base, "b.c", "b\n");
    put(base, "same.c", "s\n");
    put(base, "dir/x.sh", "#!/bin/sh\n");
    path = tnd_fs_join(base, "dir/x.sh");
    chmod(path, 0755);
    free(path);
    put(ws, "a.c", "A\n");    /* written */
    put(ws, "new.c", "n\n");  /* created; b.c deleted */
    put(ws, "same.c", "s\n"); /* touched, unchanged */
    c = tnd_content_new(base, true);
    assert_int_equal(tnd_content_tree(&hash, c), 0);
    assert_int_equal(tnd_content_tree(&again, c), 0);
    assert_string_equal(hash, again); /* hashed once */
    assert_int_equal(tnd_content_changes(&ch, &n, c, ws, touched), 0);
    assert_int_equal(n, 3);
    assert_string_equal(ch[0].path, "a.c");
    assert_false(ch[0].deleted);
    assert_string_equal(ch[1].path, "b.c");
    assert_true(ch[1].deleted);
    assert_string_equal(ch[2].path, "new.c");
    assert_int_equal(tnd_content_change_blobs(c, &nb)[0].len, 2);
    assert_int_equal(nb, 2);
    {
        /* the manifest, a base file and a changed file can be had */
        char x[TND_SHA256_HEX + 1];
        const char *asked[] = {hash, x, ch[0].blob, NULL};
        tnd_sha256_hex(x, "#!/bin/sh\n", 10);
        assert_int_equal(tnd_content_fill(&blobs, &nb, c, asked, 1 << 20), 0);
        assert_int_equal(nb, 3);
        assert_non_null(strstr(blobs[0].data, "755 10 "));
        assert_memory_equal(blobs[1].data, "#!/bin/sh\n", 10);
        assert_memory_equal(blobs[2].data, "A\n", 2);
        tnd_tree_blobs_free(&blobs, nb);
        /* a budget no piece fits in */
        assert_int_equal(tnd_content_fill(&blobs, &nb, c, asked, 1), -1);
        assert_non_null(strstr(tnd_error_last(), "leaves no room"));
        asked[0] = x;
        asked[1] = NULL;
        assert_int_equal(tnd_content_fill(&blobs, &nb, c, asked, 100), 0);
        assert_int_equal(nb, 1);
        tnd_tree_blobs_free(&blobs, nb);
    }
    {
        /* a blob larger than a round goes in pieces, each from where the
         * agent says it is ("HASH:N") */
        char big[TND_SHA256_HEX + 1], at[TND_SHA256_HEX + 16];
        char *data = malloc(20000);
        const char *asked[] = {big, NULL};
        for (int i = 0; i < 20000; i++)
            data[i] = (char)('a' + i % 26);
        path = tnd_fs_join(base, "big.dat");
        assert_int_equal(tnd_fs_write(path, data, 20000), 0);
        free(path);
        tnd_content_destroy(&c);
        c = tnd_content_new(base, true);
        assert_int_equal(tnd_content_tree(&hash, c), 0);
        tnd_sha256_hex(big, data, 20000);
        assert_int_equal(tnd_content_fill(&blobs, &nb, c, asked, 8192), 0);
        assert_int_equal(nb, 1);
        assert_int_equal(blobs[0].total, 20000);
        assert_int_equal(blobs[0].offset, 0);
        assert_true(blobs[0].len > 4000 && blobs[0].len < 6200);
        assert_memory_equal(blobs[0].data, data, blobs[0].len);
        snprintf(at, sizeof(at), "%s:%zu", big, blobs[0].len);
        tnd_tree_blobs_free(&blobs, nb);
        asked[0] = at;
        assert_int_equal(tnd_content_fill(&blobs, &nb, c, asked, 8192), 0);
        assert_int_equal(blobs[0].offset,
                         strtoul(strchr(at, ':') + 1, NULL, 10));
        assert_memory_equal(blobs[0].data, data + blobs[0].offset,
                            blobs[0].len);
        tnd_tree_blobs_free(&blobs, nb);
        free(data);
    }
    {
        char other[TND_SHA256_HEX + 1];
        const char *asked[] = {other, NULL};
        tnd_sha256_hex(other, "not in the tree", 15);
        assert_int_equal(tnd_content_fill(&blobs, &nb, c, asked, 1 << 20), -1);
        assert_non_null(strstr(tnd_error_last(), "which is not in tree"));
    }
    assert_int_equal(tnd_content_sent(c, NULL), 2);
    tnd_content_destroy(&c);
    assert_null(c);
    free(base);
    free(ws);
}

/* The stamp: the files' whole modes, which the tree's hash leaves out
 * but for the exec bit, and a reviewer using the workspace in place
 * sees. */
static char *stamp_with(const char *base, char tree[TND_SHA256_HEX + 1],
                        bool mtimes)
{
    tnd_content *c = tnd_content_new(base, mtimes);
    const char *hash;
    char *stamp;

    assert_null(tnd_content_stamp(c)); /* not before the tree */
    assert_int_equal(tnd_content_tree(&hash, c), 0);
    snprintf(tree, TND_SHA256_HEX + 1, "%s", hash);
    assert_non_null(tnd_content_stamp(c));
    stamp = tnd_xstrdup(tnd_content_stamp(c));
    tnd_content_destroy(&c);
    return stamp;
}

static char *stamp_of(const char *base, char tree[TND_SHA256_HEX + 1])
{
    return stamp_with(base, tree, true);
}

static void test_stamp(void **state)
{
    static const mode_t modes[] = {0444, 0666, 0600, 0640, 02644, 01644};
    char *base = tnd_fs_join(tmp, "stamped"), *path;
    char tree[TND_SHA256_HEX + 1], again[TND_SHA256_HEX + 1];
    char *first, *second;
    struct stat st;

    (void)state;
    put(base, "config.h", "#define V 1\n");
    put(base, "sub/b.c", "b\n");
    path = tnd_fs_join(base, "config.h");
    assert_int_equal(chmod(path, 0644), 0);
    first = stamp_of(base, tree);
    second = stamp_of(base, again);
    assert_string_equal(first, second); /* the same files: the same stamp */
    free(second);
    /* the same bytes and exec bit, another mode: the same tree, not the
     * same stamp */
    for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
        assert_int_equal(chmod(path, modes[i]), 0);
        second = stamp_of(base, again);
        assert_string_equal(tree, again);
        assert_string_not_equal(first, second);
        free(second);
    }
    assert_int_equal(chmod(path, 0644), 0);
    second = stamp_of(base, again);
    assert_string_equal(first, second);
    free(second);
    /* the same bytes and mode, another mtime (make rebuilds, or does
     * not, by it): not the same stamp; the mtime back, the same again */
    assert_int_equal(stat(path, &st), 0);
    {
        struct timespec times[2];
        char *plain = stamp_with(base, again, false), *plain_then;
        times[0] = st.st_atim;
        times[1] = st.st_mtim;
        times[1].tv_sec -= 3600;
        assert_int_equal(utimensat(AT_FDCWD, path, times, 0), 0);
        second = stamp_of(base, again);
        assert_string_equal(tree, again);
        assert_string_not_equal(first, second);
        free(second);
        /* a stamp made without mtimes (git's files) stays */
        plain_then = stamp_with(base, again, false);
        assert_string_equal(plain, plain_then);
        free(plain_then);
        free(plain);
        times[1] = st.st_mtim;
        assert_int_equal(utimensat(AT_FDCWD, path, times, 0), 0);
        second = stamp_of(base, again);
        assert_string_equal(first, second);
        free(second);
    }
    free(path);
    free(first);
    free(base);
}

/* The key of a tree's files: what they hold and their paths, the paths
 * skipped left out (tandem's own files, for a resume). */
static char *key_of(const char *base, const char *const *skip)
{
    tnd_content *c = tnd_content_new(base, false);
    char key[TND_SHA256_HEX + 1];

    assert_int_equal(tnd_content_key(key, c, skip), 0);
    tnd_content_destroy(&c);
    return tnd_xstrdup(key);
}

static void test_key(void **state)
{
    const char *const skip[] = {"agents.yaml", NULL};
    char *base = tnd_fs_join(tmp, "keyed"), *first, *again;

    (void)state;
    put(base, "a.c", "a\n");
    put(base, "agents.yaml", "version: 1\n");
    first = key_of(base, skip);
    again = key_of(base, skip);
    assert_string_equal(first, again);
    free(again);
    put(base, "agents.yaml", "version: 1 # edited\n"); /* skipped */
    again = key_of(base, skip);
    assert_string_equal(first, again);
    free(again);
    again = key_of(base, NULL); /* not skipped */
    assert_string_not_equal(first, again);
    free(again);
    put(base, "a.c", "A\n"); /* a file's bytes */
    again = key_of(base, skip);
    assert_string_not_equal(first, again);
    free(again);
    put(base, "a.c", "a\n");
    put(base, "b.c", "a\n"); /* a file more */
    again = key_of(base, skip);
    assert_string_not_equal(first, again);
    free(again);
    free(first);
    free(base);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_tree_changes_fill),
        cmocka_unit_test(test_stamp),
        cmocka_unit_test(test_key),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
