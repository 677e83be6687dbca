/* Recording to cassette (see cassette.h). */
#include "agents/cassette.h"

#include <json-c/json.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "agents/prompt.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/utf8.h"
#include "common/xalloc.h"
#include "proto/json.h"

#define MAX_RECORDING (256 << 20)
#define MAX_EXCHANGES 10000

typedef struct line {
    char *role;
    long attempt, call;
    json_object *obj; /* the exchange as it goes into the cassette */
} line;

static int role_rank(const char *role)
{
    return strcmp(role, "coder") == 0 ? 0
           : strncmp(role, "reviewer", 8) == 0 &&
                   (role[8] == '\0' || role[8] == '.')
               ? 1
               : 2;
}

static int by_order(const void *a, const void *b)
{
    const line *x = a, *y = b;

    if (x->attempt != y->attempt)
        return x->attempt < y->attempt ? -1 : 1;
    if (role_rank(x->role) != role_rank(y->role))
        return role_rank(x->role) - role_rank(y->role);
    if (x->call != y->call)
        return x->call < y->call ? -1 : 1;
    return strcmp(x->role, y->role);
}

/* One recorded line as an exchange; -1 when it is not a valid one. The
 * agents write UTF-8 (tnd_json_dump), so a line that is not is damaged:
 * its strings would be written back with U+FFFD, three bytes for one,
 * and a role or answer near its limit would make a cassette the replay
 * refuses whole. */
static int parse_line(line *out, const char *text, size_t len)
{
    json_object *j = NULL, *usage = NULL, *ex;
    char *answer = NULL;
    long prompt = 0, completion = 0;
    bool truncated = false, estimated = false;
    int error = -1;

    memset(out, 0, sizeof(*out));
    if (!tnd_utf8_valid(text, len) || tnd_json_parse(&j, text, len) < 0 ||
        tnd_json_get_str(&out->role, j, "role", 32, TND_JSON_REQUIRED) < 0 ||
        tnd_json_get_int(&out->attempt, j, "attempt", 1, 1000,
                         TND_JSON_REQUIRED) < 0 ||
        tnd_json_get_int(&out->call, j, "call", 1, 100, TND_JSON_REQUIRED) <
            0 ||
        tnd_json_get_str(&answer, j, "answer", 4 << 20, TND_JSON_REQUIRED) <
            0 ||
        tnd_json_get_bool(&truncated, j, "truncated", TND_JSON_OPTIONAL) < 0 ||
        tnd_json_get_bool(&estimated, j, "estimated", TND_JSON_OPTIONAL) < 0 ||
        tnd_json_get_object(&usage, j, "usage", TND_JSON_OPTIONAL) < 0 ||
        (usage && (tnd_json_get_int(&prompt, usage, "prompt_tokens", 0,
                                    100000000, TND_JSON_OPTIONAL) < 0 ||
                   tnd_json_get_int(&completion, usage, "completion_tokens", 0,
                                    100000000, TND_JSON_OPTIONAL) < 0)))
        goto out;
    ex = json_object_new_object();
    json_object_object_add(ex, "role", json_object_new_string(out->role));
    json_object_object_add(ex, "attempt", json_object_new_int64(out->attempt));
    json_object_object_add(ex, "call", json_object_new_int64(out->call));
    json_object_object_add(ex, "answer", json_object_new_string(answer));
    usage = json_object_new_object();
    json_object_object_add(usage, "prompt_tokens",
                           json_object_new_int64(prompt));
    json_object_object_add(usage, "completion_tokens",
                           json_object_new_int64(completion));
    json_object_object_add(ex, "usage", usage);
    /* tandem estimated them (the API reported none): the replay says so
     * too, as the recorded run did */
    if (estimated)
        json_object_object_add(ex, "estimated", json_object_new_boolean(1));
    if (truncated)
        json_object_object_add(ex, "truncated", json_object_new_boolean(1));
    out->obj = ex;
    error = 0;
out:
    if (error < 0)
        free(out->role);
    free(answer);
    json_object_put(j);
    return error;
}

int tnd_cassette_from_recording(const char *partial, const char *out,
                                const char *comment, const char *task,
                                size_t *count, size_t *skipped)
{
    char *text = NULL, *doc;
    size_t len = 0, n = 0, alloc = 0, bad = 0;
    line *lines = NULL;
    json_object *root, *list;
    int error;

    if (count)
        *count = 0;
    if (skipped)
        *skipped = 0;
    error = tnd_fs_read(&text, &len, partial, MAX_RECORDING);
    if (error == TND_ENOTFOUND) {
        /* nothing was asked: an empty cassette is the true record */
        text = tnd_xstrdup("");
        len = 0;
    } else if (error < 0) {
        return -1;
    }
    for (char *p = text; p < text + len;) {
        char *nl = memchr(p, '\n', (size_t)(text + len - p));
        size_t l = nl ? (size_t)(nl - p) : (size_t)(text + len - p);
        line item;
        if (l > 0 && parse_line(&item, p, l) == 0) {
            size_t k;
            for (k = 0; k < n; k++)
                if (strcmp(lines[k].role, item.role) == 0 &&
                    lines[k].attempt == item.attempt &&
                    lines[k].call == item.call)
                    break;
            if (k < n) { /* a retried request: the later answer wins */
                json_object_put(lines[k].obj);
                free(lines[k].role);
                lines[k] = item;
            } else if (n < MAX_EXCHANGES) {
                TND_GROW(lines, alloc, n + 1);
                lines[n++] = item;
            } else {
                json_object_put(item.obj);
                free(item.role);
                bad++;
            }
        } else if (l > 0) {
            bad++;
        }
        p += l + 1;
    }
    free(text);
    if (n > 1)
        qsort(lines, n, sizeof(*lines), by_order);
    root = json_object_new_object();
    list = json_object_new_array();
    json_object_object_add(root, "tandem_cassette", json_object_new_int(1));
    json_object_object_add(root, "comment",
                           json_object_new_string(comment ? comment : ""));
    for (size_t i = 0; i < n; i++) {
        bool first = true;
        for (size_t k = 0; k < i && first; k++)
            first = strcmp(lines[k].role, lines[i].role) != 0;
        /* each role's first prompt holds the task: a replay for another
         * task fails there, naming it, rather than play this one's
         * answers and approve a change nobody asked for */
        if (first && task && *task && tnd_utf8_valid(task, strlen(task))) {
            json_object *expect = json_object_new_array();
            char *said = tnd_xasprintf(TND_PROMPT_TASK, task);
            json_object_array_add(expect, json_object_new_string(said));
            free(said);
            json_object_object_add(lines[i].obj, "expect", expect);
        }
        json_object_array_add(list, lines[i].obj);
    }
    for (size_t i = 0; i < n; i++)
        free(lines[i].role);
    free(lines);
    json_object_object_add(root, "exchanges", list);
    doc = tnd_json_pretty(root);
    json_object_put(root);
    error = tnd_fs_write_atomic(out, doc, strlen(doc));
    free(doc);
    if (error == 0) {
        if (count)
            *count = n;
        if (skipped)
            *skipped = bad;
    }
    return error;
}
