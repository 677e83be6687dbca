/* The critique object's schema check, JSON form and names (see
 * critique_schema.h). */
#include "proto/critique_schema.h"

#include <stdio.h>
#include <stdlib.h>

#include "common/error.h"
#include "common/names.h"
#include "common/xalloc.h"
#include "proto/body.h"
#include "proto/json.h"

/* The names of each enum, in its order; NULL for a value without one. */
static const char *const verdicts[] = {NULL, "approve", "revise"};
static const char *const severities[] = {NULL, "minor", "major", "critical"};
static const char *const issue_types[] = {
    NULL,          "missing", "unsupported", "incorrect",
    "superfluous", "safety",  "style"};
static const char *const criterion_names[] = {"completeness", "correctness",
                                              "safety", "quality"};
static const tnd_names verdict_names = TND_NAMES("verdict", verdicts);
static const tnd_names severity_names = TND_NAMES("severity", severities);
static const tnd_names issue_type_names = TND_NAMES("issue type", issue_types);
static const tnd_names criterion_kinds =
    TND_NAMES("criterion", criterion_names);

const char *tnd_criterion_name(tnd_criterion_kind k)
{
    return k < TND_CRITERIA ? criterion_names[k] : "?";
}

const char *tnd_verdict_name(tnd_verdict v)
{
    return v >= 1 && v <= 2 ? verdicts[v] : "?";
}

const char *tnd_severity_name(tnd_severity s)
{
    return s >= 1 && s <= 3 ? severities[s] : "?";
}

const char *tnd_issue_type_name(tnd_issue_type t)
{
    return t >= 1 && t <= 6 ? issue_types[t] : "?";
}

static int issue_from_json(tnd_issue *is, json_object *j)
{
    int type = 0, sev = 0;

    if (!json_object_is_type(j, json_type_object))
        return tnd_error_set("must be an object");
    if (tnd_json_get_enum(&type, j, "type", &issue_type_names) < 0 ||
        tnd_json_get_enum(&sev, j, "severity", &severity_names) < 0)
        return -1;
    is->type = (tnd_issue_type)type;
    is->severity = (tnd_severity)sev;
    if (tnd_json_get_str(&is->description, j, "description", TND_BODY_MAX_NOTE,
                         TND_JSON_REQUIRED) < 0 ||
        tnd_json_get_str(&is->file, j, "file", TND_BODY_MAX_PATH,
                         TND_JSON_OPTIONAL) < 0 ||
        tnd_json_get_int(&is->line, j, "line", 0, TND_CRITIQUE_MAX_LINE,
                         TND_JSON_OPTIONAL) < 0 ||
        tnd_json_get_str(&is->evidence, j, "evidence", TND_BODY_MAX_NOTE,
                         TND_JSON_OPTIONAL) < 0 ||
        tnd_json_get_str(&is->suggested_fix, j, "suggested_fix",
                         TND_BODY_MAX_NOTE, TND_JSON_OPTIONAL) < 0)
        return -1;
    return 0;
}

/* "criteria": {"correctness": {"score": 0.9, "reason": "..."}, ...};
 * optional as a whole, checked when present. */
static int criteria_from_json(tnd_critique *c, json_object *obj)
{
    json_object *crit = NULL;

    if (tnd_json_get_object(&crit, obj, "criteria", TND_JSON_OPTIONAL) < 0)
        return -1;
    if (!crit)
        return 0;
    json_object_object_foreach(crit, key, val)
    {
        int k;
        if (tnd_names_parse(&k, &criterion_kinds, key) < 0) {
            tnd_error_prefix("criteria");
            return -1;
        }
        if (!json_object_is_type(val, json_type_object) ||
            tnd_json_get_double(&c->criteria[k].score, val, "score", 0, 1,
                                TND_JSON_REQUIRED) < 0 ||
            tnd_json_get_str(&c->criteria[k].reason, val, "reason",
                             TND_BODY_MAX_NOTE, TND_JSON_OPTIONAL) < 0) {
            if (!json_object_is_type(val, json_type_object))
                tnd_error_set("must be an object with score and reason");
            tnd_error_prefix("criteria.%s", criterion_names[k]);
            return -1;
        }
        c->criteria[k].present = true;
    }
    return 0;
}

int tnd_critique_from_json(tnd_critique **out, json_object *obj)
{
    tnd_critique *c = tnd_xcalloc(1, sizeof(*c));
    json_object *issues = NULL;
    int verdict = 0;

    *out = NULL;
    if (!json_object_is_type(obj, json_type_object)) {
        tnd_error_set("the critique must be a JSON object");
        goto fail;
    }
    if (tnd_json_get_enum(&verdict, obj, "verdict", &verdict_names) < 0 ||
        tnd_json_get_double(&c->confidence, obj, "confidence", 0, 1,
                            TND_JSON_REQUIRED) < 0 ||
        tnd_json_get_array(&issues, obj, "issues", TND_BODY_MAX_ISSUES,
                           TND_JSON_REQUIRED) < 0 ||
        tnd_json_get_str(&c->summary, obj, "summary", TND_BODY_MAX_NOTE,
                         TND_JSON_OPTIONAL) < 0 ||
        criteria_from_json(c, obj) < 0)
        goto fail;
    c->verdict = (tnd_verdict)verdict;
    if (!c->summary)
        c->summary = tnd_xstrdup("");
    c->issues =
        tnd_xcalloc(json_object_array_length(issues) + 1, sizeof(*c->issues));
    for (size_t i = 0; i < json_object_array_length(issues); i++) {
        if (issue_from_json(&c->issues[c->nissues++],
                            json_object_array_get_idx(issues, i)) < 0) {
            tnd_error_prefix("issues[%zu]", i);
            goto fail;
        }
    }
    *out = c;
    return 0;
fail:
    tnd_critique_destroy(&c);
    return -1;
}

/* A score (0..1) as JSON with three significant digits: 0.95, not
 * 0.94999999999999996. -0 (which the range takes) is written 0: "-0"
 * reads back as the integer 0, a second text for the same critique. */
static json_object *score_to_json(double v)
{
    char text[32];

    if (v == 0)
        v = 0; /* +0 */
    snprintf(text, sizeof(text), "%.3g", v);
    return json_object_new_double_s(v, text);
}

json_object *tnd_critique_to_json(const tnd_critique *c)
{
    json_object *o = json_object_new_object();
    json_object *issues = json_object_new_array();

    json_object_object_add(
        o, "verdict", json_object_new_string(tnd_verdict_name(c->verdict)));
    json_object_object_add(o, "confidence", score_to_json(c->confidence));
    for (size_t i = 0; i < c->nissues; i++) {
        const tnd_issue *is = &c->issues[i];
        json_object *j = json_object_new_object();
        json_object_object_add(
            j, "type", json_object_new_string(tnd_issue_type_name(is->type)));
        json_object_object_add(
            j, "severity",
            json_object_new_string(tnd_severity_name(is->severity)));
        if (is->file)
            json_object_object_add(j, "file", json_object_new_string(is->file));
        if (is->line > 0)
            json_object_object_add(j, "line", json_object_new_int64(is->line));
        json_object_object_add(j, "description",
                               json_object_new_string(is->description));
        if (is->evidence)
            json_object_object_add(j, "evidence",
                                   json_object_new_string(is->evidence));
        if (is->suggested_fix)
            json_object_object_add(j, "suggested_fix",
                                   json_object_new_string(is->suggested_fix));
        json_object_array_add(issues, j);
    }
    json_object_object_add(o, "issues", issues);
    {
        json_object *crit = NULL;
        for (int k = 0; k < TND_CRITERIA; k++) {
            json_object *one;
            if (!c->criteria[k].present)
                continue;
            if (!crit)
                crit = json_object_new_object();
            one = json_object_new_object();
            json_object_object_add(one, "score",
                                   score_to_json(c->criteria[k].score));
            if (c->criteria[k].reason)
                json_object_object_add(
                    one, "reason",
                    json_object_new_string(c->criteria[k].reason));
            json_object_object_add(crit, criterion_names[k], one);
        }
        if (crit)
            json_object_object_add(o, "criteria", crit);
    }
    json_object_object_add(
        o, "summary", json_object_new_string(c->summary ? c->summary : ""));
    return o;
}

void tnd_critique_destroy(tnd_critique **cp)
{
    tnd_critique *c = cp ? *cp : NULL;

    if (!c)
        return;
    for (size_t i = 0; i < c->nissues; i++) {
        free(c->issues[i].file);
        free(c->issues[i].description);
        free(c->issues[i].evidence);
        free(c->issues[i].suggested_fix);
    }
    for (int k = 0; k < TND_CRITERIA; k++)
        free(c->criteria[k].reason);
    free(c->issues);
    free(c->summary);
    free(c);
    *cp = NULL;
}
