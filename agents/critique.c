/* Critique extraction from a model's answer (see critique.h). */
#include "agents/critique.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/error.h"
#include "common/xalloc.h"
#include "proto/json.h"

#define MAX_CANDIDATES 16

/* Copy of text[0..len) with commas that directly precede '}' or ']'
 * (whitespace between) removed, leaving string contents alone. */
static char *drop_trailing_commas(const char *text, size_t len)
{
    char *out = tnd_xmalloc(len + 1);
    size_t o = 0;
    bool in_string = false, escaped = false;

    for (size_t i = 0; i < len; i++) {
        char c = text[i];
        if (in_string) {
            if (escaped)
                escaped = false;
            else if (c == '\\')
                escaped = true;
            else if (c == '"')
                in_string = false;
        } else if (c == '"') {
            in_string = true;
        } else if (c == ',') {
            size_t j = i + 1;
            while (j < len && (text[j] == ' ' || text[j] == '\n' ||
                               text[j] == '\r' || text[j] == '\t'))
                j++;
            if (j < len && (text[j] == '}' || text[j] == ']'))
                continue;
        }
        out[o++] = c;
    }
    out[o] = '\0';
    return out;
}

/* End (exclusive) of the balanced {...} starting at text[start], or 0. */
static size_t balanced_end(const char *text, size_t start)
{
    int depth = 0;
    bool in_string = false, escaped = false;

    for (size_t i = start; text[i]; i++) {
        char c = text[i];
        if (in_string) {
            if (escaped)
                escaped = false;
            else if (c == '\\')
                escaped = true;
            else if (c == '"')
                in_string = false;
            continue;
        }
        if (c == '"')
            in_string = true;
        else if (c == '{')
            depth++;
        else if (c == '}' && --depth == 0)
            return i + 1;
        if (depth > TND_JSON_MAX_DEPTH)
            return 0;
    }
    return 0;
}

typedef struct attempt {
    tnd_critique *found;
    char *best_error; /* schema error of a JSON object, preferred */
    bool saw_json;
    int tries;
} attempt;

/* Beyond the schema, what we ask of a model: every issue shows its
 * proof (a tool excerpt or code as evidence, or a file and line). An
 * issue without it is an opinion, and the re-ask says so. */
static int check_evidence(const tnd_critique *c)
{
    for (size_t i = 0; i < c->nissues; i++) {
        const tnd_issue *is = &c->issues[i];
        if ((!is->evidence || !*is->evidence) && !(is->file && is->line > 0))
            return tnd_error_set("issues[%zu] cites no evidence: give "
                                 "'evidence' (a tool excerpt or the code) or "
                                 "'file' and 'line'",
                                 i);
    }
    return 0;
}

static void try_candidate(attempt *a, const char *text, size_t len)
{
    json_object *obj = NULL;
    char *clean;

    if (a->found || a->tries >= MAX_CANDIDATES || len == 0)
        return;
    a->tries++;
    clean = drop_trailing_commas(text, len);
    if (tnd_json_parse(&obj, clean, strlen(clean)) == 0) {
        a->saw_json = true;
        if (json_object_is_type(obj, json_type_object) &&
            (tnd_critique_from_json(&a->found, obj) < 0 ||
             check_evidence(a->found) < 0)) {
            tnd_critique_destroy(&a->found);
            if (!a->best_error)
                a->best_error = tnd_xstrdup(tnd_error_last());
        }
    }
    json_object_put(obj);
    free(clean);
}

int tnd_critique_parse(tnd_critique **out, const char *answer)
{
    attempt a = {NULL, NULL, false, 0};
    const char *p;
    int scanned = 0;

    *out = NULL;
    try_candidate(&a, answer, strlen(answer));
    /* fenced blocks: ``` or ```json ... ``` */
    for (p = strstr(answer, "```"); p && !a.found;) {
        const char *body = strchr(p + 3, '\n');
        const char *end;
        if (!body)
            break;
        body++;
        end = strstr(body, "```");
        if (!end)
            break;
        try_candidate(&a, body, (size_t)(end - body));
        p = strstr(end + 3, "```");
    }
    /* balanced objects in the prose */
    for (p = strchr(answer, '{');
         p && !a.found && a.tries < MAX_CANDIDATES && scanned++ < 64;
         p = strchr(p + 1, '{')) {
        /* each scan is linear: bounded tries keep the whole thing so */
        size_t end = balanced_end(answer, (size_t)(p - answer));
        if (end)
            try_candidate(&a, p, end - (size_t)(p - answer));
    }
    if (a.found) {
        free(a.best_error);
        *out = a.found;
        return 0;
    }
    if (a.best_error) {
        tnd_error_set("the critique does not match the schema: %s",
                      a.best_error);
        free(a.best_error);
    } else if (a.saw_json) {
        tnd_error_set("the answer holds JSON but no critique object");
    } else {
        tnd_error_set("no JSON critique found in the answer (expected an "
                      "object with verdict, confidence, issues, summary)");
    }
    return -1;
}
