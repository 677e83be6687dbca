/* LLM exchanges collected for the reply (see transcript.h). */
#include "agents/transcript.h"

#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/utf8.h"
#include "common/xalloc.h"
#include "proto/json.h"

#define CUT_MARK "\n[... cut by tandem: the text was longer ...]"

void tnd_transcript_init(tnd_transcript *t)
{
    t->list = json_object_new_array();
    t->bytes = 0;
    t->dropped = false;
}

/* text, redacted and then cut, as a JSON string; NULL past the total
 * bound. Redacted first: a key across the cut would leave its head,
 * which redaction would no longer know as a key. */
static json_object *text_json(tnd_transcript *t, const char *text)
{
    char *copy;
    size_t len;
    bool cut;
    json_object *j;

    if (!text)
        return NULL;
    copy = tnd_log_redact(tnd_xstrdup(text));
    len = strlen(copy);
    if ((cut = len > TND_TRANSCRIPT_MAX_TEXT))
        len = tnd_utf8_whole(copy, TND_TRANSCRIPT_MAX_TEXT);
    if (t->bytes + len > TND_TRANSCRIPT_MAX) {
        t->dropped = true;
        free(copy);
        return NULL;
    }
    if (cut) {
        copy = tnd_xrealloc(copy, len + sizeof(CUT_MARK), 1);
        memcpy(copy + len, CUT_MARK, sizeof(CUT_MARK));
    }
    j = json_object_new_string(copy);
    t->bytes += len;
    free(copy);
    return j;
}

void tnd_transcript_exchange(const tnd_prompt *prompt,
                             const tnd_llm_answer *answer, const char *error,
                             void *payload)
{
    tnd_transcript *t = payload;
    json_object *e = json_object_new_object();

    t->dropped = false;
    json_object_object_add(e, "role", json_object_new_string(prompt->role));
    json_object_object_add(e, "attempt", json_object_new_int(prompt->attempt));
    json_object_object_add(e, "call", json_object_new_int(prompt->call));
    json_object_object_add(e, "system", text_json(t, prompt->system));
    json_object_object_add(e, "user", text_json(t, prompt->user));
    if (answer) {
        json_object_object_add(e, "answer", text_json(t, answer->text));
        json_object_object_add(
            e, "usage", tnd_usage_to_json(&answer->usage, TND_USAGE_WIRE));
    } else {
        char *why = tnd_xstrdup(error ? error : "unknown error");
        json_object_object_add(e, "error",
                               json_object_new_string(tnd_log_redact(why)));
        free(why);
    }
    if (t->dropped)
        json_object_object_add(e, "texts_dropped",
                               json_object_new_boolean(true));
    json_object_array_add(t->list, e);
}

char *tnd_transcript_attach(tnd_transcript *t, char *body, size_t *len)
{
    json_object *o = NULL;
    char *out;

    if (json_object_array_length(t->list) == 0 ||
        tnd_json_parse(&o, body, *len) < 0 ||
        !json_object_is_type(o, json_type_object)) {
        json_object_put(o);
        return body;
    }
    json_object_object_add(o, "exchanges", t->list);
    tnd_transcript_init(t);
    out = tnd_json_dump(o, len);
    json_object_put(o);
    free(body);
    return out;
}

void tnd_transcript_clear(tnd_transcript *t)
{
    json_object_put(t->list);
    t->list = NULL;
    t->bytes = 0;
}
