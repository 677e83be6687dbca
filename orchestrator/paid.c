/* Model calls no journaled reply accounts for (see paid.h). */
#include "orchestrator/paid.h"

#include <string.h>

#include "common/str.h"
#include "proto/json.h"

/* An `unanswered` record claims at most this many calls: a request goes
 * to a handful of agents before the broker gives up on it, and a
 * hand-edited journal must not make the report absurd. */
#define MAX_CALLS 1000

json_object *tnd_paid_asked_json(int attempt, const char *step,
                                 const char *service)
{
    json_object *f = json_object_new_object();

    json_object_object_add(f, "attempt", json_object_new_int(attempt));
    json_object_object_add(f, "step", json_object_new_string(step));
    json_object_object_add(f, "service", json_object_new_string(service));
    return f;
}

json_object *tnd_paid_unanswered_json(int attempt, const char *step,
                                      const char *service, long calls,
                                      const tnd_usage *known)
{
    json_object *f = tnd_paid_asked_json(attempt, step, service);

    json_object_object_add(f, "calls", json_object_new_int64(calls));
    if (known &&
        (known->calls || known->prompt_tokens || known->completion_tokens))
        json_object_object_add(f, "usage",
                               tnd_usage_to_json(known, TND_USAGE_WIRE));
    return f;
}

bool tnd_paid_error_usage(tnd_usage *out, const char *body, size_t len)
{
    json_object *obj = NULL, *list;
    tnd_usage u;
    bool error = false;

    memset(out, 0, sizeof(*out));
    if (!body || tnd_json_parse(&obj, body, len) < 0 ||
        !json_object_is_type(obj, json_type_object) ||
        strcmp(tnd_json_str_or(obj, "type", ""), "error") != 0)
        goto out;
    error = true;
    if (tnd_json_field(obj, "usage")) {
        if (tnd_usage_from_json(&u, tnd_json_field(obj, "usage")) == 0)
            *out = u;
        goto out;
    }
    list = tnd_json_field(obj, "exchanges");
    if (!json_object_is_type(list, json_type_array))
        goto out;
    for (size_t i = 0; i < json_object_array_length(list); i++) {
        json_object *usage =
            tnd_json_field(json_object_array_get_idx(list, i), "usage");
        /* an exchange that failed has an error and no usage */
        if (usage && tnd_usage_from_json(&u, usage) == 0)
            tnd_usage_add(out, &u);
    }
out:
    json_object_put(obj);
    return error;
}

tnd_role tnd_paid_role(const char *service)
{
    return strcmp(service, "coder") == 0 ? TND_ROLE_CODER : TND_ROLE_REVIEWER;
}

/* Whether the `asked` record at index i (step of attempt) was closed: by
 * the step's reply or an `unanswered` record, before the step was asked
 * again. */
static bool closed(const tnd_journal *j, size_t i, const char *step,
                   int attempt)
{
    for (size_t k = i + 1; k < tnd_journal_count(j); k++) {
        json_object *rec = tnd_journal_record(j, k);
        const char *type = tnd_journal_type(rec);
        if (tnd_json_int_or(rec, "attempt", -1) != attempt)
            continue;
        if (strcmp(type, step) == 0)
            return true;
        if (!tnd_str_eq(tnd_json_str_or(rec, "step", NULL), step))
            continue;
        if (strcmp(type, "unanswered") == 0)
            return true;
        if (strcmp(type, "asked") == 0)
            return false;
    }
    return false;
}

void tnd_paid_count(tnd_paid *out, const tnd_journal *journal, int attempt,
                    tnd_role role)
{
    memset(out, 0, sizeof(*out));
    for (size_t i = 0; i < tnd_journal_count(journal); i++) {
        json_object *rec = tnd_journal_record(journal, i);
        const char *type = tnd_journal_type(rec);
        const char *step = tnd_json_str_or(rec, "step", "");
        bool asked = strcmp(type, "asked") == 0;
        long calls;
        tnd_usage u;

        if ((!asked && strcmp(type, "unanswered") != 0) ||
            tnd_json_int_or(rec, "attempt", -1) != attempt ||
            tnd_paid_role(tnd_json_str_or(rec, "service", "")) != role)
            continue;
        if (asked) {
            if (!closed(journal, i, step, attempt))
                out->unanswered++;
            continue;
        }
        calls = tnd_json_int_or(rec, "calls", 0);
        out->unanswered += calls < 0           ? 0
                           : calls > MAX_CALLS ? MAX_CALLS
                                               : calls;
        if (tnd_usage_from_json(&u, tnd_json_field(rec, "usage")) == 0)
            tnd_usage_add(&out->known, &u);
    }
}
