/* Fuzz proto/tree: what a reviewer reads of the tree by content (issue
 * 9): a manifest, a request's "blobs" object, a "need" body. The first
 * byte picks which; the rest is the input.
 *
 * A manifest that parses has sorted, distinct, checked paths, nothing
 * beneath a link, and its text hashes to the tree's hash (so it reads
 * back to the same tree). Blobs that decode have hashes for keys and
 * pieces within their blob. A need that decodes lists at least one
 * entry, each a hash or HASH:N. Everything refused says why and leaves
 * nothing behind. */
#include "tests/fuzz/fuzz.h"

#include "common/sha256.h"
#include "common/str.h"
#include "proto/tree.h"

static void manifest(const char *text, size_t len)
{
    tnd_tree *t = tnd_tree_parse(text, len), *back;
    const tnd_tree_entry *e;
    const char *out;
    char hash[TND_SHA256_HEX + 1];
    size_t n, olen;

    if (!t) {
        FUZZ_CHECK(*tnd_error_last());
        return;
    }
    e = tnd_tree_entries(t, &n);
    for (size_t i = 0; i < n; i++) {
        FUZZ_CHECK(tnd_tree_check_path(e[i].path) == 0);
        FUZZ_CHECK(i == 0 || strcmp(e[i - 1].path, e[i].path) < 0);
        FUZZ_CHECK(tnd_tree_find_path(t, e[i].path) == &e[i]);
    }
    out = tnd_tree_text(t, &olen);
    FUZZ_CHECK(olen == len && memcmp(out, text, len) == 0);
    tnd_sha256_hex(hash, out, olen);
    FUZZ_CHECK(strcmp(hash, tnd_tree_hash(t)) == 0);
    FUZZ_CHECK((back = tnd_tree_parse(out, olen)) != NULL);
    FUZZ_CHECK(strcmp(tnd_tree_hash(back), tnd_tree_hash(t)) == 0);
    tnd_tree_destroy(&back);
    tnd_tree_destroy(&t);
}

static void blobs(const char *text, size_t len)
{
    json_object *o = json_tokener_parse(text);
    tnd_blob *b = NULL;
    size_t n = 0;

    (void)len;
    if (!o)
        return;
    if (json_object_is_type(o, json_type_object) &&
        tnd_tree_blobs_from_json(&b, &n, o) == 0)
        for (size_t i = 0; i < n; i++) {
            FUZZ_CHECK(tnd_sha256_is_hex(b[i].hash));
            FUZZ_CHECK(!b[i].total ||
                       (b[i].len > 0 && b[i].offset + b[i].len <= b[i].total));
        }
    tnd_tree_blobs_free(&b, n);
    json_object_put(o);
}

static void need(const char *text, size_t len)
{
    char **list = NULL, *id = NULL, hash[TND_SHA256_HEX + 1];
    int attempt = 0;
    size_t have;

    if (tnd_need_decode(&list, &id, &attempt, text, len) < 0) {
        FUZZ_CHECK(list == NULL && *tnd_error_last());
        free(id);
        return;
    }
    FUZZ_CHECK(list && list[0]);
    for (char **p = list; *p; p++)
        FUZZ_CHECK(tnd_need_entry(hash, &have, *p) == 0);
    tnd_str_list_free(&list);
    free(id);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text;

    if (size < 1)
        return 0;
    text = tnd_xstrndup((const char *)data + 1, size - 1);
    switch (data[0] % 3) {
    case 0:
        manifest(text, strlen(text));
        break;
    case 1:
        blobs(text, strlen(text));
        break;
    default:
        need(text, strlen(text));
        break;
    }
    free(text);
    return 0;
}
