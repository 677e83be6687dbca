/* Whether a reply answers its request (see answer.h). */
#include "proto/answer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/str.h"
#include "proto/audit.h"
#include "proto/tree.h"
#include "proto/body.h"
#include "proto/code.h"
#include "proto/json.h"

/* The task_id and attempt of an error body, whose message must be one
 * the orchestrator can show (PROTOCOL.md, `error`: at most 16 KiB) and
 * whose usage, when it says one, must read: a message over the limit
 * failed the task as "agent error (without a message)". */
static int error_ids(char **task_id, int *attempt, json_object *obj)
{
    json_object *usage = NULL;
    char *msg = NULL;
    tnd_usage u;
    int rc;

    *task_id = NULL;
    rc = tnd_body_ids(task_id, attempt, obj) < 0 ||
                 tnd_json_get_str(&msg, obj, "error", TND_BODY_MAX_NOTE,
                                  TND_JSON_REQUIRED) < 0 ||
                 tnd_json_get_object(&usage, obj, "usage", TND_JSON_OPTIONAL) <
                     0 ||
                 tnd_usage_from_json(&u, usage) < 0
             ? -1
             : 0;
    free(msg);
    return rc;
}

/* The reply (parsed: obj) decoded as the type the request asks for, its
 * ids in *task_id and *attempt. */
static int decode(char **task_id, int *attempt, const char *want,
                  json_object *obj)
{
    if (strcmp(want, "code_reply") == 0) {
        tnd_code_reply r;
        if (tnd_code_reply_from_json(&r, obj) < 0) {
            tnd_code_reply_clear(&r); /* what it read before the fault */
            return -1;
        }
        *task_id = r.task_id;
        *attempt = r.attempt;
        r.task_id = NULL;
        tnd_code_reply_clear(&r);
        return 0;
    }
    tnd_audit_reply a;
    if (tnd_audit_reply_from_json(&a, obj) < 0) {
        tnd_audit_reply_clear(&a);
        return -1;
    }
    *task_id = a.task_id;
    *attempt = a.attempt;
    a.task_id = NULL;
    tnd_audit_reply_clear(&a);
    return 0;
}

/* body parsed into *obj, its envelope's type into type (32 bytes). */
static int open_any(json_object **obj, char type[32], const char *body,
                    size_t len)
{
    *obj = NULL;
    return tnd_json_parse(obj, body, len) < 0 ||
                   tnd_body_envelope(*obj, type, 32) < 0
               ? -1
               : 0;
}

int tnd_answer_check(const char *request, size_t request_len, const char *reply,
                     size_t reply_len, char *reply_type, size_t type_size,
                     json_object **parsed)
{
    char asked[32], got[32], *want_id = NULL, *got_id = NULL;
    const char *want;
    int want_n = 0, got_n = 0, rc = -1;
    json_object *req = NULL, *obj = NULL;

    if (reply_type && type_size)
        *reply_type = '\0';
    if (parsed)
        *parsed = NULL;
    /* each body parsed once: a reply holds the model's exchanges, and
     * every parse of it was a good part of the server's time an
     * iteration */
    if (open_any(&req, asked, request, request_len) < 0 ||
        tnd_body_ids(&want_id, &want_n, req) < 0) {
        tnd_error_prefix("the request itself");
        goto out;
    }
    if (strcmp(asked, "code") == 0)
        want = "code_reply";
    else if (strcmp(asked, "audit") == 0)
        want = "audit_reply";
    else {
        tnd_error_set("a %s request has no reply type", asked);
        goto out;
    }
    if (open_any(&obj, got, reply, reply_len) < 0) {
        tnd_error_prefix("the reply is not a tandem body");
        goto out;
    }
    if (strcmp(got, "need") == 0 && strcmp(asked, "audit") == 0) {
        /* the reviewer lacks some of the tree's blobs: the caller sends
         * them and asks again (PROTOCOL.md, Content); rare, so decoded
         * from its text */
        char **hashes = NULL;
        int need_rc =
            tnd_need_decode(&hashes, &got_id, &got_n, reply, reply_len);
        tnd_str_list_free(&hashes);
        if (need_rc < 0)
            goto out;
    } else if (strcmp(got, "error") == 0) {
        if (error_ids(&got_id, &got_n, obj) < 0) {
            tnd_error_prefix("the error reply");
            goto out;
        }
    } else if (strcmp(got, want) != 0) {
        tnd_error_set("a %s request was answered with a body of type %s", asked,
                      got);
        goto out;
    } else if (decode(&got_id, &got_n, want, obj) < 0) {
        goto out;
    }
    if (strcmp(got_id, want_id) != 0 || got_n != want_n) {
        tnd_error_set("the reply is for task %s attempt %d, not task %s "
                      "attempt %d",
                      got_id, got_n, want_id, want_n);
        goto out;
    }
    if (reply_type && type_size)
        snprintf(reply_type, type_size, "%s", got);
    if (parsed) {
        *parsed = obj;
        obj = NULL;
    }
    rc = 0;
out:
    json_object_put(req);
    json_object_put(obj);
    free(want_id);
    free(got_id);
    return rc;
}
