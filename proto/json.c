/* Checked JSON reading (see json.h). */
#include "proto/json.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/error.h"
#include "common/str.h"
#include "common/utf8.h"
#include "common/xalloc.h"

int tnd_json_parse(json_object **out, const char *text, size_t len)
{
    return tnd_json_parse_depth(out, text, len, TND_JSON_MAX_DEPTH);
}

int tnd_json_parse_depth(json_object **out, const char *text, size_t len,
                         int depth)
{
    json_tokener *tok;
    json_object *obj;
    enum json_tokener_error jerr;
    size_t end;

    *out = NULL;
    if (len > (size_t)INT32_MAX)
        return tnd_error_set("JSON text too large (%zu bytes)", len);
    if (!(tok = json_tokener_new_ex(depth)))
        return tnd_error_set("out of memory creating a JSON parser");
    json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
    obj = json_tokener_parse_ex(tok, text, (int)len);
    jerr = json_tokener_get_error(tok);
    end = json_tokener_get_parse_end(tok);
    if (jerr == json_tokener_continue) {
        /* A number or literal at the very end waits for a terminator
         * that a text without NUL never gives: the input ends here. */
        obj = json_tokener_parse_ex(tok, "", 1);
        jerr = json_tokener_get_error(tok) == json_tokener_success
                   ? json_tokener_success
                   : json_tokener_continue;
        end = len;
    }
    if (jerr != json_tokener_success) { /* obj NULL alone is JSON null */
        if (jerr == json_tokener_continue)
            tnd_error_set("JSON text ends early (after %zu bytes)", len);
        else
            tnd_error_set("not valid JSON at byte %zu: %s", end,
                          json_tokener_error_desc(jerr));
        json_object_put(obj);
        json_tokener_free(tok);
        return -1;
    }
    json_tokener_free(tok);
    for (; end < len; end++) {
        char c = text[end];
        if (c != ' ' && c != '\n' && c != '\r' && c != '\t') {
            json_object_put(obj);
            return tnd_error_set("unexpected text after the JSON value at "
                                 "byte %zu",
                                 end);
        }
    }
    *out = obj;
    return 0;
}

/* The field, NULL when missing or null. */
json_object *tnd_json_array(json_object *obj, const char *key)
{
    json_object *v = tnd_json_field(obj, key);

    return json_object_is_type(v, json_type_array) ? v : NULL;
}

json_object *tnd_json_field(json_object *obj, const char *key)
{
    json_object *v = NULL;

    if (!obj || !json_object_is_type(obj, json_type_object))
        return NULL;
    if (!json_object_object_get_ex(obj, key, &v))
        return NULL;
    return json_object_is_type(v, json_type_null) ? NULL : v;
}

static int missing(const char *key, int flags)
{
    if (flags & TND_JSON_OPTIONAL)
        return 1;
    return tnd_error_set("field '%s' is missing", key);
}

/* obj[key] into *v when it has type (what says the type in the error):
 * 0; 1 when it is missing and may be; else the error. */
static int typed_field(json_object **v, json_object *obj, const char *key,
                       int flags, json_type type, const char *what)
{
    if (!(*v = tnd_json_field(obj, key)))
        return missing(key, flags);
    if (!json_object_is_type(*v, type))
        return tnd_error_set("field '%s' must be %s", key, what);
    return 0;
}

int tnd_json_get_str(char **out, json_object *obj, const char *key, size_t max,
                     int flags)
{
    json_object *v;
    const char *s;
    size_t len;
    int rc;

    *out = NULL;
    if ((rc = typed_field(&v, obj, key, flags, json_type_string, "a string")) !=
        0)
        return rc > 0 ? 0 : rc;
    s = json_object_get_string(v);
    len = (size_t)json_object_get_string_len(v);
    if (len > max)
        return tnd_error_set("field '%s' is %zu bytes, more than the limit "
                             "of %zu",
                             key, len, max);
    if (memchr(s, '\0', len) && !(flags & TND_JSON_TEXT))
        return tnd_error_set("field '%s' contains a NUL byte", key);
    *out = memchr(s, '\0', len) ? tnd_utf8_clean(s, len, NULL)
                                : tnd_xstrndup(s, len);
    return 0;
}

int tnd_json_get_enum(int *out, json_object *obj, const char *key,
                      const tnd_names *names)
{
    char *s = NULL, *shown, *list;
    int error;

    if ((error = tnd_json_get_str(&s, obj, key, 64, TND_JSON_REQUIRED)) < 0)
        return error;
    if ((error = tnd_names_parse(out, names, s)) < 0) {
        shown = tnd_str_one_line(s, 60);
        list = tnd_names_list(names);
        tnd_error_set("field '%s' must be one of %s, got \"%s\"", key, list,
                      shown);
        free(list);
        free(shown);
    }
    free(s);
    return error;
}

int tnd_json_get_int(long *out, json_object *obj, const char *key, long min,
                     long max, int flags)
{
    json_object *v = tnd_json_field(obj, key);
    int64_t n;
    int m;

    if (!v)
        return (m = missing(key, flags)) > 0 ? 0 : m;
    if (json_object_is_type(v, json_type_double)) {
        double d = json_object_get_double(v);
        if (d != floor(d) || d < (double)min || d > (double)max)
            return tnd_error_set("field '%s' must be an integer %ld..%ld", key,
                                 min, max);
        *out = (long)d;
        return 0;
    }
    if (!json_object_is_type(v, json_type_int))
        return tnd_error_set("field '%s' must be an integer %ld..%ld", key, min,
                             max);
    n = json_object_get_int64(v);
    if (n < min || n > max)
        return tnd_error_set("field '%s' must be an integer %ld..%ld, got "
                             "%lld",
                             key, min, max, (long long)n);
    *out = (long)n;
    return 0;
}

int tnd_json_get_double(double *out, json_object *obj, const char *key,
                        double min, double max, int flags)
{
    json_object *v = tnd_json_field(obj, key);
    double d;
    int m;

    if (!v)
        return (m = missing(key, flags)) > 0 ? 0 : m;
    if (!json_object_is_type(v, json_type_double) &&
        !json_object_is_type(v, json_type_int))
        return tnd_error_set("field '%s' must be a number %g..%g", key, min,
                             max);
    d = json_object_get_double(v);
    if (!isfinite(d) || d < min || d > max)
        return tnd_error_set("field '%s' must be a number %g..%g, got %g", key,
                             min, max, d);
    *out = d;
    return 0;
}

int tnd_json_get_bool(bool *out, json_object *obj, const char *key, int flags)
{
    json_object *v;
    int rc;

    if ((rc = typed_field(&v, obj, key, flags, json_type_boolean,
                          "true or false")) != 0)
        return rc > 0 ? 0 : rc;
    *out = json_object_get_boolean(v);
    return 0;
}

int tnd_json_get_array(json_object **out, json_object *obj, const char *key,
                       size_t max, int flags)
{
    json_object *v;
    int rc;

    *out = NULL;
    if ((rc = typed_field(&v, obj, key, flags, json_type_array, "a list")) != 0)
        return rc > 0 ? 0 : rc;
    if (json_object_array_length(v) > max)
        return tnd_error_set("field '%s' has %zu items, more than the limit "
                             "of %zu",
                             key, json_object_array_length(v), max);
    *out = v;
    return 0;
}

int tnd_json_get_object(json_object **out, json_object *obj, const char *key,
                        int flags)
{
    json_object *v;
    int rc;

    *out = NULL;
    if ((rc = typed_field(&v, obj, key, flags, json_type_object,
                          "an object")) != 0)
        return rc > 0 ? 0 : rc;
    *out = v;
    return 0;
}

/* obj with every key made valid UTF-8 (values shared), for the rare
 * object whose text is not: keys that differ only in invalid bytes would
 * both come out as U+FFFD, a repeated key. The last value wins, as
 * json-c reads a repeated key. Recursion as deep as obj (a parsed one:
 * TND_JSON_MAX_DEPTH). */
static json_object *clean_keys(json_object *obj)
{
    json_object *copy;

    if (json_object_is_type(obj, json_type_array)) {
        size_t n = json_object_array_length(obj);
        copy = json_object_new_array();
        for (size_t i = 0; i < n; i++)
            json_object_array_add(
                copy, clean_keys(json_object_array_get_idx(obj, i)));
        return copy;
    }
    if (!json_object_is_type(obj, json_type_object))
        return json_object_get(obj);
    copy = json_object_new_object();
    json_object_object_foreach(obj, key, val)
    {
        char *k = tnd_utf8_clean(key, strlen(key), NULL);
        json_object_object_add(copy, k, clean_keys(val));
        free(k);
    }
    return copy;
}

/* json-c writes string bytes as they are; JSON is UTF-8. Outside the
 * strings everything is ASCII (control characters and NUL are escaped),
 * so cleaning the whole text cleans exactly the strings' invalid bytes
 * (U+FFFD each) and nothing else; the keys are cleaned first when there
 * are any. */
static char *valid_text(json_object *obj, int flags, size_t *len_out)
{
    size_t len, replaced = 0;
    const char *s = json_object_to_json_string_length(obj, flags, &len);
    char *out = tnd_utf8_clean(s, len, &replaced);

    if (replaced) {
        json_object *copy = clean_keys(obj);
        free(out);
        s = json_object_to_json_string_length(copy, flags, &len);
        out = tnd_utf8_clean(s, len, NULL);
        json_object_put(copy);
    }
    if (len_out)
        *len_out = strlen(out);
    return out;
}

char *tnd_json_dump(json_object *obj, size_t *len_out)
{
    return valid_text(
        obj, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, len_out);
}

char *tnd_json_pretty(json_object *obj)
{
    char *text = valid_text(obj,
                            JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
                                JSON_C_TO_STRING_NOSLASHESCAPE,
                            NULL);
    size_t len = strlen(text);
    char *out = tnd_xrealloc(text, len + 2, 1);

    /* the newline added in place: printing a large text again ("%s\n")
     * was as costly as making it */
    out[len] = '\n';
    out[len + 1] = '\0';
    return out;
}

const char *tnd_json_str_or(json_object *obj, const char *key,
                            const char *fallback)
{
    json_object *v = tnd_json_field(obj, key);

    return json_object_is_type(v, json_type_string) ? json_object_get_string(v)
                                                    : fallback;
}

long tnd_json_int_or(json_object *obj, const char *key, long fallback)
{
    json_object *v = tnd_json_field(obj, key);

    return v ? (long)json_object_get_int64(v) : fallback;
}

bool tnd_json_bool_or(json_object *obj, const char *key, bool fallback)
{
    json_object *v = tnd_json_field(obj, key);

    return v ? json_object_get_boolean(v) : fallback;
}

json_object *tnd_json_str_or_null(const char *s)
{
    return s ? json_object_new_string(s) : NULL;
}

/* ---- repeated keys ------------------------------------------------------
 *
 * json-c keeps the last of a repeated key and says nothing, so the text
 * is walked again here: a flat scan with a fixed stack (no recursion),
 * the keys collected with the number of their object, sorted, and
 * neighbours compared. */

/* A container the walk is inside. */
typedef struct level {
    bool object;
    bool want_key;          /* an object's next string is a key */
    size_t number;          /* an object's number, in text order from 0 */
    size_t index;           /* an array's current element */
    size_t key_at, key_len; /* an object's current key, raw, for paths */
} level;

typedef struct walk {
    const char *text;
    size_t len, at;
    level stack[TND_JSON_MAX_DEPTH + 1];
    size_t depth;
    size_t objects; /* objects opened so far */
} walk;

enum { WALK_END, WALK_KEY, WALK_OBJECT, WALK_TOO_DEEP };

/* Offset just past the string whose quote is at text[at]; 0 when it is
 * not closed. */
static size_t string_end(const char *text, size_t len, size_t at)
{
    for (at++; at < len; at++) {
        if (text[at] == '\\')
            at++;
        else if (text[at] == '"')
            return at + 1;
    }
    return 0;
}

/* Advance to the next key (*start..*end, quotes included) or object
 * opening. Text that is not JSON cannot take the walk past len or past
 * its stack; an unclosed string ends it. */
static int walk_next(walk *w, size_t *start, size_t *end)
{
    for (; w->at < w->len; w->at++) {
        char c = w->text[w->at];
        level *top = w->depth ? &w->stack[w->depth - 1] : NULL;

        if (c == '"') {
            size_t s = w->at, e = string_end(w->text, w->len, w->at);
            if (!e)
                break;
            if (top && top->object && top->want_key) {
                top->want_key = false;
                top->key_at = s + 1;
                top->key_len = e - s - 2;
                *start = s;
                *end = e;
                w->at = e;
                return WALK_KEY;
            }
            w->at = e - 1; /* the loop steps past the closing quote */
        } else if (c == '{' || c == '[') {
            if (w->depth == sizeof(w->stack) / sizeof(*w->stack))
                return WALK_TOO_DEEP;
            top = &w->stack[w->depth++];
            memset(top, 0, sizeof(*top));
            top->object = c == '{';
            if (top->object) {
                top->want_key = true;
                top->number = w->objects++;
                w->at++;
                return WALK_OBJECT;
            }
        } else if (c == '}' || c == ']') {
            if (w->depth)
                w->depth--;
        } else if (c == ',' && top) {
            if (top->object)
                top->want_key = true;
            else
                top->index++;
        }
    }
    w->at = w->len;
    return WALK_END;
}

/* One key of one object, as json-c stores it. */
typedef struct key_ref {
    size_t object; /* the object's number */
    size_t at;     /* offset of the key's opening quote */
    char *name;    /* unescaped, cut at a NUL */
} key_ref;

static int compare_keys(const void *a, const void *b)
{
    const key_ref *x = a, *y = b;
    int c;

    if (x->object != y->object)
        return x->object < y->object ? -1 : 1;
    if ((c = strcmp(x->name, y->name)) != 0)
        return c;
    return x->at < y->at ? -1 : x->at > y->at;
}

/* The key text[start..end) (with its quotes) decoded by json-c itself,
 * so a key means here what it means to json-c: "verd\u0069ct" is
 * "verdict", a lone surrogate is U+FFFD, and "a\u0000b" is "a" (json-c
 * keys are C strings). Caller frees. */
static char *key_name(json_tokener **tok, const char *text, size_t start,
                      size_t end)
{
    json_object *s;
    char *name;

    if (!memchr(text + start, '\\', end - start))
        return tnd_xstrndup(text + start + 1, end - start - 2);
    if (!*tok && !(*tok = json_tokener_new_ex(1)))
        return tnd_xstrndup(text + start + 1, end - start - 2);
    json_tokener_reset(*tok);
    s = json_tokener_parse_ex(*tok, text + start, (int)(end - start));
    if (json_object_is_type(s, json_type_string))
        name = tnd_xstrdup(json_object_get_string(s));
    else /* not JSON: compare it as written */
        name = tnd_xstrndup(text + start + 1, end - start - 2);
    json_object_put(s);
    return name;
}

/* Where object number `number` sits: "issues[1]", "criteria.safety", or
 * "" for the outermost value. Caller frees. */
static char *object_path(const char *text, size_t len, size_t number)
{
    walk w = {.text = text, .len = len};
    size_t start, end;
    tnd_buf path;
    int ev;

    tnd_buf_init(&path, TND_BUF_NOCAP);
    while ((ev = walk_next(&w, &start, &end)) != WALK_END &&
           ev != WALK_TOO_DEEP) {
        if (ev != WALK_OBJECT || w.objects - 1 != number)
            continue;
        for (size_t d = 0; d + 1 < w.depth; d++) {
            const level *l = &w.stack[d];
            if (!l->object) {
                tnd_buf_printf(&path, "[%zu]", l->index);
            } else {
                char *raw = tnd_xstrndup(text + l->key_at, l->key_len);
                char *shown = tnd_str_printable(raw, 40);
                tnd_buf_printf(&path, "%s%s", d ? "." : "", shown);
                free(shown);
                free(raw);
            }
        }
        break;
    }
    return tnd_buf_detach(&path, NULL);
}

int tnd_json_check_unique_keys(const char *text, size_t len)
{
    walk w = {.text = text, .len = len};
    json_tokener *tok = NULL;
    key_ref *keys = NULL;
    size_t nkeys = 0, alloc = 0, start, end, first = 0, count = 0;
    int ev, error = 0;

    while ((ev = walk_next(&w, &start, &end)) != WALK_END) {
        if (ev == WALK_TOO_DEEP) {
            error = tnd_error_set("JSON nested deeper than %d levels",
                                  TND_JSON_MAX_DEPTH);
            goto out;
        }
        if (ev != WALK_KEY)
            continue;
        TND_GROW(keys, alloc, nkeys + 1);
        keys[nkeys].object = w.stack[w.depth - 1].number;
        keys[nkeys].at = start;
        keys[nkeys].name = key_name(&tok, text, start, end);
        nkeys++;
    }
    if (nkeys > 1)
        qsort(keys, nkeys, sizeof(*keys), compare_keys);
    /* of the repeated keys, the one repeated first in the text */
    for (size_t i = 0, j; i < nkeys; i = j) {
        for (j = i + 1; j < nkeys && keys[j].object == keys[i].object &&
                        strcmp(keys[j].name, keys[i].name) == 0;
             j++)
            ;
        if (j - i > 1 && (!count || keys[i + 1].at < keys[first + 1].at)) {
            first = i;
            count = j - i;
        }
    }
    if (count) {
        char *path = object_path(text, len, keys[first].object);
        char *name = tnd_str_printable(keys[first].name, 64);
        char times[32] = "twice";
        if (count > 2)
            snprintf(times, sizeof(times), "%zu times", count);
        error = tnd_error_set("%s%skey '%s' appears %s", path,
                              *path ? ": " : "", name, times);
        free(name);
        free(path);
    }
out:
    for (size_t i = 0; i < nkeys; i++)
        free(keys[i].name);
    free(keys);
    if (tok)
        json_tokener_free(tok);
    return error;
}
