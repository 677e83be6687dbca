/* The tree by content for the reviewer's requests (see loop.h): every
 * audit request names the base tree by its hash and the attempt's
 * changed files (PROTOCOL.md, Content), with the workspace's path as a
 * hint only a reviewer started by this run may use. A reviewer that
 * lacks blobs answers "need"; the request goes again with them, as many
 * as fit in one frame, round after round. Any reviewer of the service
 * may take each round; each keeps what it was sent, so the tree goes to
 * each agent once. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/log.h"
#include "common/str.h"
#include "common/xalloc.h"
#include "orchestrator/loop.h"
#include "proto/body.h"
#include "proto/tree.h"

/* A frame carries 16 MiB: the blobs get what the rest of the request
 * leaves of 15.5 MiB, at most TND_TREE_BLOBS_BUDGET. */
static size_t blobs_budget(size_t request_len)
{
    size_t room = (31u << 19) > request_len ? (31u << 19) - request_len : 0;

    return room < TND_TREE_BLOBS_BUDGET ? room : TND_TREE_BLOBS_BUDGET;
}

tnd_content *tnd_loop_content(run *r)
{
    if (!r->content) {
        /* keyed on mtimes where build outputs may be: a tree taken
         * whole, or git's files with untracked ones brought in
         * (workspace.include_untracked) */
        const tnd_snapshot_stats *about = tnd_snapshot_about(r->base);
        r->content = tnd_content_new(
            tnd_snapshot_path(r->base),
            !about->git || (about->untracked_included && about->untracked > 0));
    }
    return r->content;
}

/* The tree and, for an attempt (a != NULL), its changes, into ar
 * (borrowed from r->content until the next attempt). */
int tnd_loop_with_content(run *r, tnd_audit_request *ar, const attempt *a)
{
    const char *tree;
    const tnd_tree_change *changes = NULL;
    size_t n = 0;

    if (tnd_content_tree(&tree, tnd_loop_content(r)) < 0 ||
        (a && tnd_content_changes(&changes, &n, r->content,
                                  tnd_workspace_path(r->ws),
                                  tnd_workspace_touched(r->ws)) < 0)) {
        tnd_error_prefix("sending the tree to the reviewer");
        return -1;
    }
    ar->tree = (char *)tree;
    ar->changes = (tnd_tree_change *)changes;
    ar->nchanges = n;
    return 0;
}

/* Rounds of "need" one request may take: enough for the whole tree a
 * few times over (several reviewers may each take a round); a reviewer
 * that asks past that is broken. */
static int max_rounds(const run *r)
{
    return 8 + 2 * (int)(tnd_content_tree_bytes(r->content) /
                         TND_TREE_BLOBS_BUDGET);
}

/* The hashes a "need" reply asks for; NULL when reply is not one (type:
 * its type as the crew found it, so another reply is not parsed again). */
static char **needed(const char *type, const char *reply, size_t len)
{
    char **hashes = NULL, *id = NULL;
    int n;

    if (strcmp(type, "need") != 0 ||
        tnd_need_decode(&hashes, &id, &n, reply, len) < 0)
        return NULL;
    free(id);
    return hashes;
}

/* ar with the blobs hashes name (the first round: the changed files'),
 * encoded. */
char *tnd_loop_encode_round(run *r, tnd_audit_request *ar,
                            const char *const *hashes, size_t *len)
{
    tnd_blob *blobs = NULL;
    size_t nblobs = 0, bare;
    char *body;

    ar->blobs = NULL;
    ar->nblobs = 0;
    body = tnd_audit_request_encode(ar, &bare);
    if (!hashes || !*hashes)
        return *len = bare, body;
    free(body);
    if (tnd_content_fill(&blobs, &nblobs, r->content, hashes,
                         blobs_budget(bare)) < 0)
        return NULL;
    ar->blobs = blobs;
    ar->nblobs = nblobs;
    body = tnd_audit_request_encode(ar, len);
    tnd_tree_blobs_free(&blobs, nblobs);
    ar->blobs = NULL;
    ar->nblobs = 0;
    return body;
}

/* The hashes of the attempt's changed files, NULL-terminated (the
 * array only; the strings are ar's). */
static const char **change_hashes(const tnd_audit_request *ar)
{
    const char **list = tnd_xcalloc(ar->nchanges + 1, sizeof(*list));
    size_t n = 0;

    for (size_t i = 0; i < ar->nchanges; i++)
        if (!ar->changes[i].deleted)
            list[n++] = ar->changes[i].blob;
    return list;
}

/* A need's parse, when its answer replaces it (parsed may be NULL). */
static void put_parsed(json_object **parsed)
{
    if (parsed) {
        json_object_put(*parsed);
        *parsed = NULL;
    }
}

/* While *reply (len *reply_len) is a "need", send ar to service again
 * under key with the blobs it asks for. *reply is replaced by the
 * answer; -1 with the error set when rounds run out or a blob cannot be
 * had. */
int tnd_loop_answer_needs(run *r, const char *service, const char *key,
                          tnd_audit_request *ar, const char *type, char **reply,
                          size_t *reply_len, json_object **parsed)
{
    char **hashes;
    int rounds = 0, rc = 0;

    while (rc == 0 && (hashes = needed(type, *reply, *reply_len))) {
        char round_key[200], *body;
        size_t len, nh = 0;
        while (hashes[nh])
            nh++;
        if (++rounds > max_rounds(r)) {
            tnd_str_list_free(&hashes);
            put_parsed(parsed);
            return tnd_error_set("the %s kept asking for blobs of tree %s "
                                 "after %d rounds (it still lacks %zu): it "
                                 "cannot keep what it is sent; see its log",
                                 service, ar->tree, rounds - 1, nh);
        }
        tnd_log_info("%s: the %s lacks %zu blob%s of tree %s; sending them "
                     "(round %d)",
                     key, service, nh, nh == 1 ? "" : "s", ar->tree, rounds);
        body = tnd_loop_encode_round(r, ar, (const char *const *)hashes, &len);
        tnd_str_list_free(&hashes);
        put_parsed(parsed);
        if (!body)
            return -1;
        free(*reply);
        *reply = NULL;
        snprintf(round_key, sizeof(round_key), "%s+%d", key, rounds);
        rc = tnd_loop_ask(r, service, round_key, body, len, reply, reply_len,
                          parsed);
        type = r->reply_type;
        free(body);
    }
    return rc;
}

/* Send ar to service under key (a request that may ask a model when
 * model: journaled as `asked` for step type of attempt n), the changed
 * files along, and see any "need" through. */
int tnd_loop_ask_content(run *r, int n, const char *type, const char *service,
                         const char *key, bool model, tnd_audit_request *ar,
                         char **reply, size_t *reply_len, json_object **parsed)
{
    const char **first = change_hashes(ar);
    size_t len;
    char *body = tnd_loop_encode_round(r, ar, first, &len);
    int rc;

    free(first);
    if (!body)
        return -1;
    rc = model ? tnd_loop_ask_model(r, n, type, service, key, body, len, reply,
                                    reply_len, parsed)
               : tnd_loop_ask(r, service, key, body, len, reply, reply_len,
                              parsed);
    free(body);
    if (rc == 0 &&
        (rc = tnd_loop_answer_needs(r, service, key, ar, r->reply_type, reply,
                                    reply_len, parsed)) < 0) {
        free(*reply);
        *reply = NULL;
    }
    return rc;
}
