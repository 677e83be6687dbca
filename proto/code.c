/* Coder request and reply bodies (see code.h). */
#include "proto/code.h"

#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/str.h"
#include "common/xalloc.h"
#include "proto/json.h"

static const char *const edit_kind_names[] = {NULL, "replace", "write",
                                              "delete"};
static const tnd_names edit_kinds = TND_NAMES("edit kind", edit_kind_names);

const char *tnd_edit_kind_name(tnd_edit_kind k)
{
    return tnd_names_name(&edit_kinds, (int)k);
}

void tnd_edit_clear(tnd_edit *e)
{
    free(e->path);
    free(e->search);
    free(e->replace);
    memset(e, 0, sizeof(*e));
}

void tnd_edit_list_free(tnd_edit *edits, size_t n)
{
    for (size_t i = 0; edits && i < n; i++)
        tnd_edit_clear(&edits[i]);
    free(edits);
}

int tnd_edit_path_check(const char *path)
{
    const char *p = path;
    size_t n = strlen(path);

    if (n == 0)
        return tnd_error_set("empty path");
    if (n > TND_BODY_MAX_PATH)
        return tnd_error_set("path longer than %d bytes", TND_BODY_MAX_PATH);
    if (path[0] == '/')
        return tnd_error_set("'%s' is an absolute path; paths must be "
                             "relative to the repository root",
                             path);
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)path[i] < 0x20 || path[i] == 0x7f || path[i] == '\\')
            return tnd_error_set("path contains a control character or a "
                                 "backslash");
    while (*p) {
        const char *slash = strchr(p, '/');
        size_t len = slash ? (size_t)(slash - p) : strlen(p);
        if (len == 0 || (len == 1 && p[0] == '.'))
            return tnd_error_set("'%s' has an empty or '.' component", path);
        if (len == 2 && p[0] == '.' && p[1] == '.')
            return tnd_error_set("'%s' contains '..'; edits must stay inside "
                                 "the repository",
                                 path);
        /* any .git: a nested one (sub/.git/hooks) runs code too */
        if ((len == 4 && strncmp(p, ".git", 4) == 0) ||
            (p == path && len == 7 && strncmp(p, ".tandem", 7) == 0))
            return tnd_error_set("'%s' is inside %.*s, which edits may not "
                                 "touch",
                                 path, (int)len, p);
        p += len;
        if (*p == '/')
            p++;
    }
    if (path[n - 1] == '/')
        return tnd_error_set("'%s' names a directory, not a file", path);
    return 0;
}

/* ---- request ------------------------------------------------------------ */

char *tnd_code_request_encode(const tnd_code_request *r, size_t *len_out)
{
    json_object *o = tnd_body_new("code", r->task_id, r->attempt);
    json_object *files = json_object_new_array();

    json_object_object_add(o, "task", json_object_new_string(r->task));
    for (size_t i = 0; i < r->nfiles; i++) {
        json_object *f = json_object_new_object();
        json_object_object_add(f, "path",
                               json_object_new_string(r->files[i].path));
        json_object_object_add(f, "content",
                               json_object_new_string(r->files[i].content));
        json_object_array_add(files, f);
    }
    json_object_object_add(o, "files", files);
    json_object_object_add(
        o, "repo_map", json_object_new_string(r->repo_map ? r->repo_map : ""));
    json_object_object_add(
        o, "feedback", json_object_new_string(r->feedback ? r->feedback : ""));
    if (r->nlessons) {
        json_object *lessons = json_object_new_array();
        for (size_t i = 0; i < r->nlessons; i++)
            json_object_array_add(lessons,
                                  json_object_new_string(r->lessons[i]));
        json_object_object_add(o, "lessons", lessons);
    }
    return tnd_body_finish(o, len_out);
}

static int decode_lessons(tnd_code_request *out, json_object *lessons)
{
    size_t n = json_object_array_length(lessons);

    out->lessons = tnd_xcalloc(n + 1, sizeof(*out->lessons));
    for (size_t i = 0; i < n; i++) {
        json_object *l = json_object_array_get_idx(lessons, i);
        size_t len;
        if (!json_object_is_type(l, json_type_string))
            return tnd_error_set("lessons[%zu] must be a string", i);
        len = (size_t)json_object_get_string_len(l);
        if (len > TND_CODE_MAX_LESSON)
            return tnd_error_set("lessons[%zu] is %zu bytes, more than the "
                                 "limit of %d",
                                 i, len, TND_CODE_MAX_LESSON);
        if (memchr(json_object_get_string(l), '\0', len))
            return tnd_error_set("lessons[%zu] contains a NUL byte", i);
        out->lessons[out->nlessons++] =
            tnd_xstrndup(json_object_get_string(l), len);
    }
    return 0;
}

int tnd_code_request_decode(tnd_code_request *out, const char *body, size_t len)
{
    json_object *o = NULL, *files = NULL, *lessons = NULL;
    int error = -1;

    memset(out, 0, sizeof(*out));
    if (tnd_body_open(&o, body, len, "code") < 0)
        return -1;
    if (tnd_body_ids(&out->task_id, &out->attempt, o) < 0 ||
        tnd_json_get_str(&out->task, o, "task", TND_BODY_MAX_TASK,
                         TND_JSON_REQUIRED) < 0 ||
        tnd_json_get_array(&files, o, "files", TND_BODY_MAX_FILES,
                           TND_JSON_OPTIONAL) < 0 ||
        tnd_json_get_str(&out->repo_map, o, "repo_map", TND_BODY_MAX_TEXT,
                         TND_JSON_OPTIONAL) < 0 ||
        tnd_json_get_str(&out->feedback, o, "feedback", TND_BODY_MAX_TEXT,
                         TND_JSON_OPTIONAL) < 0 ||
        tnd_json_get_array(&lessons, o, "lessons", TND_CODE_MAX_LESSONS,
                           TND_JSON_OPTIONAL) < 0 ||
        (lessons && decode_lessons(out, lessons) < 0))
        goto out;
    if (files) {
        size_t n = json_object_array_length(files);
        out->files = tnd_xcalloc(n, sizeof(*out->files));
        for (size_t i = 0; i < n; i++) {
            json_object *f = json_object_array_get_idx(files, i);
            tnd_file *dst = &out->files[out->nfiles++];
            if (tnd_json_get_str(&dst->path, f, "path", TND_BODY_MAX_PATH,
                                 TND_JSON_REQUIRED) < 0 ||
                tnd_json_get_str(&dst->content, f, "content", TND_BODY_MAX_FILE,
                                 TND_JSON_REQUIRED) < 0) {
                tnd_error_prefix("files[%zu]", i);
                goto out;
            }
        }
    }
    if (!out->repo_map)
        out->repo_map = tnd_xstrdup("");
    if (!out->feedback)
        out->feedback = tnd_xstrdup("");
    error = 0;
out:
    if (error < 0)
        tnd_error_prefix("bad code request");
    json_object_put(o);
    return error;
}

void tnd_code_request_clear(tnd_code_request *r)
{
    for (size_t i = 0; i < r->nfiles; i++) {
        free(r->files[i].path);
        free(r->files[i].content);
    }
    free(r->files);
    free(r->task_id);
    free(r->task);
    free(r->repo_map);
    free(r->feedback);
    for (size_t i = 0; i < r->nlessons; i++)
        free(r->lessons[i]);
    free(r->lessons);
    memset(r, 0, sizeof(*r));
}

/* ---- reply -------------------------------------------------------------- */

char *tnd_code_reply_encode(const tnd_code_reply *r, size_t *len_out)
{
    json_object *o = tnd_body_new("code_reply", r->task_id, r->attempt);
    json_object *edits = json_object_new_array();

    json_object_object_add(
        o, "rationale",
        json_object_new_string(r->rationale ? r->rationale : ""));
    for (size_t i = 0; i < r->nedits; i++) {
        const tnd_edit *e = &r->edits[i];
        json_object *j = json_object_new_object();
        json_object_object_add(
            j, "kind", json_object_new_string(tnd_edit_kind_name(e->kind)));
        json_object_object_add(j, "path", json_object_new_string(e->path));
        if (e->kind == TND_EDIT_REPLACE)
            json_object_object_add(j, "search",
                                   json_object_new_string(e->search));
        if (e->kind == TND_EDIT_REPLACE && e->line > 0)
            json_object_object_add(j, "line", json_object_new_int64(e->line));
        if (e->kind != TND_EDIT_DELETE)
            json_object_object_add(j, "replace",
                                   json_object_new_string(e->replace));
        json_object_array_add(edits, j);
    }
    json_object_object_add(o, "edits", edits);
    json_object_object_add(o, "format_error",
                           tnd_json_str_or_null(r->format_error));
    json_object_object_add(o, "usage",
                           tnd_usage_to_json(&r->usage, TND_USAGE_WIRE));
    return tnd_body_finish(o, len_out);
}

static int decode_edit(tnd_edit *e, json_object *j)
{
    int kind = 0;

    if (tnd_json_get_enum(&kind, j, "kind", &edit_kinds) < 0 ||
        tnd_json_get_str(&e->path, j, "path", TND_BODY_MAX_PATH,
                         TND_JSON_REQUIRED) < 0)
        return -1;
    e->kind = (tnd_edit_kind)kind;
    if (tnd_edit_path_check(e->path) < 0) {
        tnd_error_prefix("field 'path'");
        return -1;
    }
    if (tnd_json_get_str(&e->search, j, "search", TND_BODY_MAX_FILE,
                         e->kind == TND_EDIT_REPLACE ? TND_JSON_REQUIRED
                                                     : TND_JSON_OPTIONAL) < 0 ||
        tnd_json_get_str(&e->replace, j, "replace", TND_BODY_MAX_FILE,
                         e->kind == TND_EDIT_DELETE ? TND_JSON_OPTIONAL
                                                    : TND_JSON_REQUIRED) < 0 ||
        tnd_json_get_int(&e->line, j, "line", 0, TND_EDIT_MAX_LINE,
                         TND_JSON_OPTIONAL) < 0)
        return -1;
    if (!e->search)
        e->search = tnd_xstrdup("");
    if (!e->replace)
        e->replace = tnd_xstrdup("");
    return 0;
}

int tnd_code_reply_from_json(tnd_code_reply *out, json_object *o)
{
    json_object *edits = NULL, *usage = NULL;
    int error = -1;

    memset(out, 0, sizeof(*out));
    if (tnd_body_check(o, "code_reply") < 0)
        return -1;
    if (tnd_body_ids(&out->task_id, &out->attempt, o) < 0 ||
        tnd_json_get_str(&out->rationale, o, "rationale", TND_BODY_MAX_TEXT,
                         TND_JSON_OPTIONAL) < 0 ||
        tnd_json_get_array(&edits, o, "edits", TND_BODY_MAX_EDITS,
                           TND_JSON_REQUIRED) < 0 ||
        tnd_json_get_str(&out->format_error, o, "format_error",
                         TND_BODY_MAX_NOTE, TND_JSON_OPTIONAL) < 0 ||
        tnd_json_get_object(&usage, o, "usage", TND_JSON_OPTIONAL) < 0 ||
        tnd_usage_from_json(&out->usage, usage) < 0)
        goto out;
    if (!out->rationale)
        out->rationale = tnd_xstrdup("");
    out->edits =
        tnd_xcalloc(json_object_array_length(edits) + 1, sizeof(*out->edits));
    for (size_t i = 0; i < json_object_array_length(edits); i++) {
        tnd_edit *e = &out->edits[out->nedits++];
        if (decode_edit(e, json_object_array_get_idx(edits, i)) < 0) {
            tnd_error_prefix("edits[%zu]", i);
            goto out;
        }
    }
    error = 0;
out:
    if (error < 0)
        tnd_error_prefix("bad code reply");
    return error;
}

int tnd_code_reply_decode(tnd_code_reply *out, const char *body, size_t len)
{
    json_object *o = NULL;
    int error;

    memset(out, 0, sizeof(*out));
    if (tnd_json_parse(&o, body, len) < 0) {
        tnd_error_prefix("bad code_reply body");
        return -1;
    }
    error = tnd_code_reply_from_json(out, o);
    json_object_put(o);
    return error;
}

void tnd_code_reply_clear(tnd_code_reply *r)
{
    tnd_edit_list_free(r->edits, r->nedits);
    free(r->task_id);
    free(r->rationale);
    free(r->format_error);
    memset(r, 0, sizeof(*r));
}
