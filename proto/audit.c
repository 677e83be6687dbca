/* Reviewer request and reply bodies (see audit.h); the critique they
 * carry is critique_schema.c's. */
#include "proto/audit.h"

#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/xalloc.h"
#include "proto/json.h"

/* The names of each enum, in its order; NULL for a value without one. */
static const char *const skill_statuses[] = {"pass", "fail", "timeout", "error",
                                             "skipped"};
static const char *const isolations[] = {NULL, "bwrap", "none", "unavailable"};
static const tnd_names skill_status_names =
    TND_NAMES("skill status", skill_statuses);
static const tnd_names isolation_names = TND_NAMES("sandbox", isolations);

const char *tnd_skill_status_name(tnd_skill_status s)
{
    return s <= TND_SKILL_SKIPPED ? skill_statuses[s] : "?";
}

const char *tnd_isolation_name(tnd_isolation i)
{
    return i == TND_ISOLATION_UNSAID ? "" : tnd_names_name(&isolation_names, i);
}

int tnd_skill_status_parse(tnd_skill_status *out, const char *name)
{
    return tnd_names_parse((int *)out, &skill_status_names, name);
}

/* ---- request ------------------------------------------------------------ */

static json_object *skills_to_json(const tnd_skill_result *skills, size_t n);
static int skills_from_json(tnd_skill_result **out, size_t *count,
                            json_object *arr);

char *tnd_audit_request_encode(const tnd_audit_request *r, size_t *len_out)
{
    json_object *o = tnd_body_new("audit", r->task_id, r->attempt);

    json_object_object_add(o, "task", json_object_new_string(r->task));
    if (r->workspace)
        json_object_object_add(o, "workspace",
                               json_object_new_string(r->workspace));
    if (r->tree)
        json_object_object_add(o, "tree", json_object_new_string(r->tree));
    if (r->nchanges)
        json_object_object_add(
            o, "changes", tnd_tree_changes_to_json(r->changes, r->nchanges));
    if (r->nblobs)
        json_object_object_add(o, "blobs",
                               tnd_tree_blobs_to_json(r->blobs, r->nblobs));
    json_object_object_add(o, "diff", json_object_new_string(r->diff));
    json_object_object_add(o, "critique", json_object_new_boolean(r->critique));
    if (r->baseline)
        json_object_object_add(o, "baseline", json_object_new_boolean(true));
    if (r->skills)
        json_object_object_add(o, "skills",
                               skills_to_json(r->skills, r->nskills));
    return tnd_body_finish(o, len_out);
}

int tnd_audit_request_decode(tnd_audit_request *out, const char *body,
                             size_t len)
{
    json_object *o = NULL, *skills = NULL, *changes = NULL, *blobs = NULL;
    int error = -1;

    memset(out, 0, sizeof(*out));
    if (tnd_body_open(&o, body, len, "audit") < 0)
        return -1;
    if (tnd_body_ids(&out->task_id, &out->attempt, o) < 0 ||
        tnd_json_get_str(&out->task, o, "task", TND_BODY_MAX_TASK,
                         TND_JSON_REQUIRED) < 0 ||
        tnd_json_get_str(&out->workspace, o, "workspace", 4096,
                         TND_JSON_OPTIONAL) < 0 ||
        tnd_json_get_str(&out->tree, o, "tree", TND_SHA256_HEX,
                         TND_JSON_OPTIONAL) < 0 ||
        tnd_json_get_str(&out->diff, o, "diff", TND_BODY_MAX_DIFF,
                         TND_JSON_REQUIRED) < 0)
        goto out;
    out->critique = true;
    if (tnd_json_get_bool(&out->critique, o, "critique", TND_JSON_OPTIONAL) <
            0 ||
        tnd_json_get_bool(&out->baseline, o, "baseline", TND_JSON_OPTIONAL) <
            0 ||
        tnd_json_get_array(&skills, o, "skills", TND_BODY_MAX_SKILLS,
                           TND_JSON_OPTIONAL) < 0 ||
        (skills && skills_from_json(&out->skills, &out->nskills, skills) < 0) ||
        tnd_json_get_array(&changes, o, "changes", TND_BODY_MAX_EDITS,
                           TND_JSON_OPTIONAL) < 0 ||
        (changes && tnd_tree_changes_from_json(&out->changes, &out->nchanges,
                                               changes) < 0) ||
        tnd_json_get_object(&blobs, o, "blobs", TND_JSON_OPTIONAL) < 0 ||
        (blobs &&
         tnd_tree_blobs_from_json(&out->blobs, &out->nblobs, blobs) < 0))
        goto out;
    if (out->workspace && out->workspace[0] != '/') {
        tnd_error_set("field 'workspace' must be an absolute path");
        goto out;
    }
    if (out->tree && !tnd_sha256_is_hex(out->tree)) {
        tnd_error_set("field 'tree' must be a SHA-256 in lowercase hex");
        goto out;
    }
    if (!out->workspace && !out->tree) {
        tnd_error_set("the request names no tree: it needs 'tree' (or, "
                      "for a reviewer on the orchestrator's host, "
                      "'workspace')");
        goto out;
    }
    error = 0;
out:
    if (error < 0)
        tnd_error_prefix("bad audit request");
    json_object_put(o);
    return error;
}

void tnd_audit_request_clear(tnd_audit_request *r)
{
    free(r->task_id);
    free(r->task);
    free(r->workspace);
    free(r->tree);
    tnd_tree_changes_free(&r->changes, r->nchanges);
    tnd_tree_blobs_free(&r->blobs, r->nblobs);
    free(r->diff);
    for (size_t i = 0; i < r->nskills; i++)
        tnd_skill_result_clear(&r->skills[i]);
    free(r->skills);
    memset(r, 0, sizeof(*r));
}

/* ---- reply -------------------------------------------------------------- */

/* "locations" and "changed", each only when there is one. */
static void evidence_to_json(json_object *j, const tnd_skill_result *s)
{
    if (s->nlocations) {
        json_object *list = json_object_new_array();
        for (size_t i = 0; i < s->nlocations; i++) {
            json_object *l = json_object_new_object();
            json_object_object_add(
                l, "file", json_object_new_string(s->locations[i].file));
            json_object_object_add(l, "line",
                                   json_object_new_int64(s->locations[i].line));
            if (s->locations[i].col > 0)
                json_object_object_add(
                    l, "col", json_object_new_int64(s->locations[i].col));
            json_object_array_add(list, l);
        }
        json_object_object_add(j, "locations", list);
    }
    if (s->nchanged) {
        json_object *list = json_object_new_array();
        for (size_t i = 0; i < s->nchanged; i++)
            json_object_array_add(list, json_object_new_string(s->changed[i]));
        json_object_object_add(j, "changed", list);
    }
}

/* Optional "locations" and "changed" of a skill result. */
static int evidence_from_json(tnd_skill_result *s, json_object *j)
{
    json_object *locs = NULL, *changed = NULL;

    if (tnd_json_get_array(&locs, j, "locations", TND_AUDIT_MAX_LOCATIONS,
                           TND_JSON_OPTIONAL) < 0 ||
        tnd_json_get_array(&changed, j, "changed", TND_AUDIT_MAX_CHANGED,
                           TND_JSON_OPTIONAL) < 0)
        return -1;
    if (locs && json_object_array_length(locs)) {
        size_t n = json_object_array_length(locs);
        s->locations = tnd_xcalloc(n, sizeof(*s->locations));
        for (size_t i = 0; i < n; i++) {
            json_object *l = json_object_array_get_idx(locs, i);
            tnd_location *loc = &s->locations[s->nlocations++];
            if (!json_object_is_type(l, json_type_object)) {
                tnd_error_set("locations[%zu] must be an object", i);
                return -1;
            }
            if (tnd_json_get_str(&loc->file, l, "file", TND_BODY_MAX_PATH,
                                 TND_JSON_REQUIRED) < 0 ||
                tnd_json_get_int(&loc->line, l, "line", 1, TND_AUDIT_MAX_LINE,
                                 TND_JSON_REQUIRED) < 0 ||
                tnd_json_get_int(&loc->col, l, "col", 0, TND_AUDIT_MAX_COL,
                                 TND_JSON_OPTIONAL) < 0) {
                tnd_error_prefix("locations[%zu]", i);
                return -1;
            }
        }
    }
    if (changed && json_object_array_length(changed)) {
        size_t n = json_object_array_length(changed);
        s->changed = tnd_xcalloc(n, sizeof(*s->changed));
        for (size_t i = 0; i < n; i++) {
            json_object *c = json_object_array_get_idx(changed, i);
            const char *path;
            if (!json_object_is_type(c, json_type_string) ||
                !*(path = json_object_get_string(c)) ||
                (size_t)json_object_get_string_len(c) != strlen(path) ||
                strlen(path) > TND_BODY_MAX_PATH) {
                tnd_error_set("changed[%zu] must be a path of 1..%d bytes", i,
                              TND_BODY_MAX_PATH);
                return -1;
            }
            s->changed[s->nchanged++] = tnd_xstrdup(path);
        }
    }
    return 0;
}

json_object *tnd_skill_result_to_json(const tnd_skill_result *s,
                                      tnd_skill_json form)
{
    json_object *j = json_object_new_object();

    json_object_object_add(j, "name", json_object_new_string(s->name));
    json_object_object_add(
        j, "status", json_object_new_string(tnd_skill_status_name(s->status)));
    json_object_object_add(j, "required", json_object_new_boolean(s->required));
    json_object_object_add(j, "exit_code", json_object_new_int(s->exit_code));
    json_object_object_add(j, "duration_ms",
                           json_object_new_int64(s->duration_ms));
    if (s->sandbox != TND_ISOLATION_UNSAID)
        json_object_object_add(
            j, "sandbox",
            json_object_new_string(tnd_isolation_name(s->sandbox)));
    if (s->ended)
        json_object_object_add(j, "ended", json_object_new_string(s->ended));
    if (form == TND_SKILL_JSON_FULL) {
        json_object_object_add(
            j, "command", json_object_new_string(s->command ? s->command : ""));
        json_object_object_add(
            j, "output", json_object_new_string(s->output ? s->output : ""));
        evidence_to_json(j, s);
    }
    return j;
}

static json_object *skills_to_json(const tnd_skill_result *skills, size_t n)
{
    json_object *arr = json_object_new_array();

    for (size_t i = 0; i < n; i++)
        json_object_array_add(
            arr, tnd_skill_result_to_json(&skills[i], TND_SKILL_JSON_FULL));
    return arr;
}

char *tnd_audit_reply_encode(const tnd_audit_reply *r, size_t *len_out)
{
    json_object *o = tnd_body_new("audit_reply", r->task_id, r->attempt);

    json_object_object_add(o, "skills", skills_to_json(r->skills, r->nskills));
    json_object_object_add(
        o, "critique", r->critique ? tnd_critique_to_json(r->critique) : NULL);
    json_object_object_add(o, "critique_error",
                           tnd_json_str_or_null(r->critique_error));
    json_object_object_add(o, "usage",
                           tnd_usage_to_json(&r->usage, TND_USAGE_WIRE));
    return tnd_body_finish(o, len_out);
}

static int skill_from_json(tnd_skill_result *s, json_object *j)
{
    int status = 0, sandbox = TND_ISOLATION_UNSAID;
    long code = 0;

    if (tnd_json_get_str(&s->name, j, "name", 64, TND_JSON_REQUIRED) < 0 ||
        tnd_json_get_enum(&status, j, "status", &skill_status_names) < 0 ||
        tnd_json_get_bool(&s->required, j, "required", TND_JSON_REQUIRED) < 0 ||
        tnd_json_get_int(&code, j, "exit_code", -1000, 1000,
                         TND_JSON_OPTIONAL) < 0 ||
        tnd_json_get_int(&s->duration_ms, j, "duration_ms", 0, 1000000000L,
                         TND_JSON_OPTIONAL) < 0 ||
        tnd_json_get_str(&s->command, j, "command", TND_BODY_MAX_NOTE,
                         TND_JSON_OPTIONAL) < 0 ||
        tnd_json_get_str(&s->output, j, "output", TND_BODY_MAX_OUTPUT,
                         TND_JSON_OPTIONAL) < 0 ||
        (json_object_object_get_ex(j, "sandbox", NULL) &&
         tnd_json_get_enum(&sandbox, j, "sandbox", &isolation_names) < 0) ||
        tnd_json_get_str(&s->ended, j, "ended", TND_AUDIT_MAX_ENDED,
                         TND_JSON_OPTIONAL) < 0 ||
        evidence_from_json(s, j) < 0)
        return -1;
    s->sandbox = (tnd_isolation)sandbox;
    s->status = (tnd_skill_status)status;
    s->exit_code = (int)code;
    if (!s->command)
        s->command = tnd_xstrdup("");
    if (!s->output)
        s->output = tnd_xstrdup("");
    return 0;
}

/* Decodes an array of skill results; on failure *out holds what was read so
 * far (the caller clears it). */
static int skills_from_json(tnd_skill_result **out, size_t *count,
                            json_object *arr)
{
    size_t n = json_object_array_length(arr);

    *out = tnd_xcalloc(n + 1, sizeof(**out));
    *count = 0;
    for (size_t i = 0; i < n; i++) {
        if (skill_from_json(&(*out)[(*count)++],
                            json_object_array_get_idx(arr, i)) < 0) {
            tnd_error_prefix("skills[%zu]", i);
            return -1;
        }
    }
    return 0;
}

int tnd_audit_reply_from_json(tnd_audit_reply *out, json_object *o)
{
    json_object *skills = NULL, *crit = NULL, *usage = NULL;
    int error = -1;

    memset(out, 0, sizeof(*out));
    if (tnd_body_check(o, "audit_reply") < 0)
        return -1;
    if (tnd_body_ids(&out->task_id, &out->attempt, o) < 0 ||
        tnd_json_get_array(&skills, o, "skills", TND_BODY_MAX_SKILLS,
                           TND_JSON_REQUIRED) < 0 ||
        tnd_json_get_object(&crit, o, "critique", TND_JSON_OPTIONAL) < 0 ||
        tnd_json_get_str(&out->critique_error, o, "critique_error",
                         TND_BODY_MAX_NOTE, TND_JSON_OPTIONAL) < 0 ||
        tnd_json_get_object(&usage, o, "usage", TND_JSON_OPTIONAL) < 0 ||
        tnd_usage_from_json(&out->usage, usage) < 0)
        goto out;
    if (skills_from_json(&out->skills, &out->nskills, skills) < 0)
        goto out;
    if (crit && tnd_critique_from_json(&out->critique, crit) < 0) {
        tnd_error_prefix("critique");
        goto out;
    }
    if (!crit && !out->critique_error)
        out->critique_error = tnd_xstrdup("the reviewer sent no critique");
    error = 0;
out:
    if (error < 0)
        tnd_error_prefix("bad audit reply");
    return error;
}

int tnd_audit_reply_decode(tnd_audit_reply *out, const char *body, size_t len)
{
    json_object *o = NULL;
    int error;

    memset(out, 0, sizeof(*out));
    if (tnd_json_parse(&o, body, len) < 0) {
        tnd_error_prefix("bad audit_reply body");
        return -1;
    }
    error = tnd_audit_reply_from_json(out, o);
    json_object_put(o);
    return error;
}

void tnd_skill_result_clear(tnd_skill_result *r)
{
    for (size_t i = 0; i < r->nlocations; i++)
        free(r->locations[i].file);
    free(r->locations);
    for (size_t i = 0; i < r->nchanged; i++)
        free(r->changed[i]);
    free(r->changed);
    free(r->name);
    free(r->command);
    free(r->output);
    free(r->ended);
    memset(r, 0, sizeof(*r));
}

void tnd_audit_reply_clear(tnd_audit_reply *r)
{
    for (size_t i = 0; i < r->nskills; i++)
        tnd_skill_result_clear(&r->skills[i]);
    free(r->skills);
    tnd_critique_destroy(&r->critique);
    free(r->critique_error);
    free(r->task_id);
    memset(r, 0, sizeof(*r));
}
