/* The replay backend (see replay.h). */
#include "agents/replay.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/config.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/str.h"
#include "common/xalloc.h"
#include "proto/json.h"

#define MAX_EXCHANGES 10000

typedef struct exchange {
    char *role;
    long attempt;
    long call;
    char **expect; /* NULL-terminated */
    char *answer;
    long prompt_tokens;
    long completion_tokens;
    bool truncated; /* the recorded answer was cut at max_tokens */
    bool estimated; /* usage is tandem's estimate, not the API's */
} exchange;

typedef struct replay {
    char *path;
    exchange *items;
    size_t n;
} replay;

static void replay_close(void *state)
{
    replay *r = state;

    if (!r)
        return;
    for (size_t i = 0; i < r->n; i++) {
        free(r->items[i].role);
        free(r->items[i].answer);
        tnd_str_list_free(&r->items[i].expect);
    }
    free(r->items);
    free(r->path);
    free(r);
}

static int load_exchange(exchange *e, json_object *j)
{
    json_object *expect = NULL, *usage = NULL;

    if (!json_object_is_type(j, json_type_object))
        return tnd_error_set("must be an object");
    if (tnd_json_get_str(&e->role, j, "role", 32, TND_JSON_REQUIRED) < 0 ||
        tnd_json_get_int(&e->attempt, j, "attempt", 1, 1000,
                         TND_JSON_REQUIRED) < 0 ||
        tnd_json_get_int(&e->call, j, "call", 1, 100, TND_JSON_REQUIRED) < 0 ||
        tnd_json_get_str(&e->answer, j, "answer", 4 << 20, TND_JSON_REQUIRED) <
            0 ||
        tnd_json_get_bool(&e->truncated, j, "truncated", TND_JSON_OPTIONAL) <
            0 ||
        tnd_json_get_bool(&e->estimated, j, "estimated", TND_JSON_OPTIONAL) <
            0 ||
        tnd_json_get_array(&expect, j, "expect", 64, TND_JSON_OPTIONAL) < 0 ||
        tnd_json_get_object(&usage, j, "usage", TND_JSON_OPTIONAL) < 0)
        return -1;
    if (usage &&
        (tnd_json_get_int(&e->prompt_tokens, usage, "prompt_tokens", 0,
                          100000000, TND_JSON_OPTIONAL) < 0 ||
         tnd_json_get_int(&e->completion_tokens, usage, "completion_tokens", 0,
                          100000000, TND_JSON_OPTIONAL) < 0))
        return -1;
    e->expect = tnd_xcalloc(expect ? json_object_array_length(expect) + 1 : 1,
                            sizeof(char *));
    for (size_t i = 0; expect && i < json_object_array_length(expect); i++) {
        json_object *s = json_object_array_get_idx(expect, i);
        if (!json_object_is_type(s, json_type_string))
            return tnd_error_set("expect[%zu] must be a string", i);
        e->expect[i] = tnd_xstrdup(json_object_get_string(s));
    }
    return 0;
}

static void *replay_open(const tnd_llm_config *cfg)
{
    replay *r = tnd_xcalloc(1, sizeof(*r));
    json_object *root = NULL, *list = NULL;
    char *text = NULL;
    size_t len = 0;
    long version = 0;

    r->path = tnd_xstrdup(cfg->cassette);
    if (tnd_llm_config_check(cfg, "llm", false) < 0)
        goto fail;
    if (tnd_fs_read(&text, &len, cfg->cassette, TND_REPLAY_MAX_BYTES) < 0)
        goto fail;
    if (tnd_json_parse(&root, text, len) < 0 ||
        tnd_json_get_int(&version, root, "tandem_cassette", 1, 1,
                         TND_JSON_REQUIRED) < 0 ||
        tnd_json_get_array(&list, root, "exchanges", MAX_EXCHANGES,
                           TND_JSON_REQUIRED) < 0)
        goto bad;
    r->items =
        tnd_xcalloc(json_object_array_length(list) + 1, sizeof(*r->items));
    for (size_t i = 0; i < json_object_array_length(list); i++) {
        exchange *e = &r->items[r->n++];
        if (load_exchange(e, json_object_array_get_idx(list, i)) < 0) {
            tnd_error_prefix("exchanges[%zu]", i);
            goto bad;
        }
        for (size_t k = 0; k + 1 < r->n; k++) {
            const exchange *o = &r->items[k];
            if (strcmp(o->role, e->role) == 0 && o->attempt == e->attempt &&
                o->call == e->call) {
                tnd_error_set("exchanges[%zu] repeats %s attempt %ld call "
                              "%ld of exchanges[%zu]",
                              i, e->role, e->attempt, e->call, k);
                goto bad;
            }
        }
    }
    json_object_put(root);
    free(text);
    return r;
bad:
    tnd_error_prefix("cassette %s is not valid", cfg->cassette);
fail:
    json_object_put(root);
    free(text);
    replay_close(r);
    return NULL;
}

/* The role a prompt's answers are under: its own, or, for a quorum
 * member ("reviewer.N") in a cassette that records none for it (one
 * written by hand, or before members were recorded apart), "reviewer". */
static const char *role_of(const replay *r, const char *role)
{
    if (strncmp(role, "reviewer.", 9) != 0)
        return role;
    for (size_t i = 0; i < r->n; i++)
        if (strcmp(r->items[i].role, role) == 0)
            return role;
    return "reviewer";
}

static int replay_complete(void *state, tnd_llm_answer *out,
                           const tnd_llm_call *call, long *retry_after_ms)
{
    const tnd_prompt *p = call->prompt;
    replay *r = state;
    const exchange *e = NULL;
    long last = 0;

    *retry_after_ms = -1;
    for (size_t i = 0; i < r->n; i++) {
        if (strcmp(r->items[i].role, role_of(r, p->role)) != 0)
            continue;
        if (r->items[i].attempt > last)
            last = r->items[i].attempt;
        if (r->items[i].attempt == p->attempt && r->items[i].call == p->call)
            e = &r->items[i];
    }
    if (!e)
        return tnd_error_set(
            "cassette %s has no answer for the %s's call %d of attempt %d "
            "(it records %s attempts up to %ld): the run went further than "
            "the recording; record a new cassette with a live model",
            r->path, p->role, p->call, p->attempt, p->role, last);
    for (char **x = e->expect; *x; x++) {
        if (!strstr(p->user, *x) && !(p->system && strstr(p->system, *x))) {
            char *shown = tnd_str_printable(*x, 80);
            tnd_error_set("cassette %s: the %s's prompt for attempt %d call "
                          "%d should contain \"%s\" and does not: the run "
                          "differs from the recording",
                          r->path, p->role, p->attempt, p->call, shown);
            free(shown);
            return -1;
        }
    }
    out->text = tnd_xstrdup(e->answer);
    out->usage.prompt_tokens = e->prompt_tokens;
    out->usage.completion_tokens = e->completion_tokens;
    out->usage.estimated = e->estimated;
    out->truncated = e->truncated;
    return 0;
}

const tnd_llm_backend tnd_replay_backend = {
    .provider = TND_PROVIDER_REPLAY,
    .base_url = "",
    .key_env = "",
    .open = replay_open,
    .complete = replay_complete,
    .close = replay_close,
};
