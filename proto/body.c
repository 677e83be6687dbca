/* Body envelope, usage and error replies (see body.h). */
#include "proto/body.h"

#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/xalloc.h"
#include "proto/json.h"

void tnd_usage_add(tnd_usage *a, const tnd_usage *b)
{
    a->calls += b->calls;
    a->prompt_tokens += b->prompt_tokens;
    a->completion_tokens += b->completion_tokens;
    a->estimated = a->estimated || b->estimated;
    a->latency_ms += b->latency_ms;
    a->retries += b->retries;
}

json_object *tnd_body_new(const char *type, const char *task_id, int attempt)
{
    json_object *o = json_object_new_object();

    json_object_object_add(o, "tandem", json_object_new_int(TND_BODY_VERSION));
    json_object_object_add(o, "type", json_object_new_string(type));
    json_object_object_add(o, "task_id", json_object_new_string(task_id));
    json_object_object_add(o, "attempt", json_object_new_int(attempt));
    return o;
}

char *tnd_body_finish(json_object *obj, size_t *len_out)
{
    char *s = tnd_json_dump(obj, len_out);

    json_object_put(obj);
    return s;
}

int tnd_body_envelope(json_object *obj, char *type, size_t size)
{
    long version = 0;
    char *t = NULL;

    if (!json_object_is_type(obj, json_type_object))
        return tnd_error_set("body is not a JSON object");
    if (tnd_json_get_int(&version, obj, "tandem", 0, 1000000,
                         TND_JSON_REQUIRED) < 0)
        return tnd_error_set("body has no valid \"tandem\" version field");
    if (version != TND_BODY_VERSION)
        return tnd_error_set("body version %ld is not supported (this "
                             "tandem speaks version %d)",
                             version, TND_BODY_VERSION);
    if (tnd_json_get_str(&t, obj, "type", 31, TND_JSON_REQUIRED) < 0)
        return -1;
    snprintf(type, size, "%s", t);
    free(t);
    return 0;
}

int tnd_body_type(char *out, size_t size, const char *body, size_t len)
{
    json_object *obj = NULL;
    int error;

    if ((error = tnd_json_parse(&obj, body, len)) == 0)
        error = tnd_body_envelope(obj, out, size);
    json_object_put(obj);
    return error;
}

int tnd_body_check(json_object *obj, const char *type)
{
    char got[32];

    if (tnd_body_envelope(obj, got, sizeof(got)) < 0) {
        tnd_error_prefix("bad %s body", type);
        return -1;
    }
    if (strcmp(got, "error") == 0) {
        char *msg = NULL;
        if (tnd_json_get_str(&msg, obj, "error", TND_BODY_MAX_NOTE,
                             TND_JSON_REQUIRED) < 0)
            tnd_error_set("agent error (without a message)");
        else
            tnd_error_set("agent error: %s", msg);
        free(msg);
        return -1;
    }
    if (strcmp(got, type) != 0)
        return tnd_error_set("expected a %s body, got type \"%s\"", type, got);
    return 0;
}

int tnd_body_open(json_object **out, const char *body, size_t len,
                  const char *type)
{
    json_object *obj = NULL;

    *out = NULL;
    if (tnd_json_parse(&obj, body, len) < 0) {
        tnd_error_prefix("bad %s body", type);
        return -1;
    }
    if (tnd_body_check(obj, type) < 0) {
        json_object_put(obj);
        return -1;
    }
    *out = obj;
    return 0;
}

int tnd_body_ids(char **task_id, int *attempt, json_object *obj)
{
    long n = 0;

    if (tnd_json_get_str(task_id, obj, "task_id", TND_BODY_MAX_ID,
                         TND_JSON_REQUIRED) < 0 ||
        tnd_json_get_int(&n, obj, "attempt", 1, TND_BODY_MAX_ATTEMPT,
                         TND_JSON_REQUIRED) < 0)
        return -1;
    *attempt = (int)n;
    return 0;
}

/* The names that differ between the two formats (see tnd_usage_keys). */
static const struct {
    const char *calls, *prompt, *completion;
} usage_names[] = {
    [TND_USAGE_WIRE] = {"calls", "prompt_tokens", "completion_tokens"},
    [TND_USAGE_REPORT] = {"llm_calls", "prompt", "completion"},
};

json_object *tnd_usage_to_json(const tnd_usage *u, tnd_usage_keys keys)
{
    json_object *o = json_object_new_object();

    assert(keys == TND_USAGE_WIRE || keys == TND_USAGE_REPORT);
    json_object_object_add(o, usage_names[keys].calls,
                           json_object_new_int64(u->calls));
    json_object_object_add(o, usage_names[keys].prompt,
                           json_object_new_int64(u->prompt_tokens));
    json_object_object_add(o, usage_names[keys].completion,
                           json_object_new_int64(u->completion_tokens));
    json_object_object_add(o, "estimated",
                           json_object_new_boolean(u->estimated));
    json_object_object_add(o, "latency_ms",
                           json_object_new_int64(u->latency_ms));
    json_object_object_add(o, "retries", json_object_new_int64(u->retries));
    return o;
}

int tnd_usage_from_json(tnd_usage *out, json_object *obj)
{
    const long big = 1000000000L;

    memset(out, 0, sizeof(*out));
    if (!obj)
        return 0;
    if (tnd_json_get_int(&out->calls, obj, usage_names[TND_USAGE_WIRE].calls, 0,
                         big, TND_JSON_OPTIONAL) < 0 ||
        tnd_json_get_int(&out->prompt_tokens, obj,
                         usage_names[TND_USAGE_WIRE].prompt, 0, big,
                         TND_JSON_OPTIONAL) < 0 ||
        tnd_json_get_int(&out->completion_tokens, obj,
                         usage_names[TND_USAGE_WIRE].completion, 0, big,
                         TND_JSON_OPTIONAL) < 0 ||
        tnd_json_get_bool(&out->estimated, obj, "estimated",
                          TND_JSON_OPTIONAL) < 0 ||
        tnd_json_get_int(&out->latency_ms, obj, "latency_ms", 0, big,
                         TND_JSON_OPTIONAL) < 0 ||
        tnd_json_get_int(&out->retries, obj, "retries", 0, big,
                         TND_JSON_OPTIONAL) < 0) {
        tnd_error_prefix("usage");
        return -1;
    }
    return 0;
}

char *tnd_error_reply_encode(const char *task_id, int attempt,
                             const char *message, size_t *len_out)
{
    json_object *o = tnd_body_new("error", task_id ? task_id : "",
                                  attempt > 0 ? attempt : 1);
    size_t n = strlen(message);

    if (n > TND_BODY_MAX_NOTE)
        n = TND_BODY_MAX_NOTE;
    json_object_object_add(o, "error",
                           json_object_new_string_len(message, (int)n));
    return tnd_body_finish(o, len_out);
}
