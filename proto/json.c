/* Checked JSON reading (see json.h). */
#include "proto/json.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/utf8.h"
#include "common/xalloc.h"

int tnd_json_parse(json_object **out, const char *text, size_t len)
{
    json_tokener *tok;
    json_object *obj;
    enum json_tokener_error jerr;
    size_t end;

    *out = NULL;
    if (len > (size_t)INT32_MAX)
        return tnd_error_set("JSON text too large (%zu bytes)", len);
    if (!(tok = json_tokener_new_ex(TND_JSON_MAX_DEPTH)))
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
static json_object *field(json_object *obj, const char *key)
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

int tnd_json_get_str(char **out, json_object *obj, const char *key, size_t max,
                     int flags)
{
    json_object *v = field(obj, key);
    const char *s;
    size_t len;
    int m;

    *out = NULL;
    if (!v)
        return (m = missing(key, flags)) > 0 ? 0 : m;
    if (!json_object_is_type(v, json_type_string))
        return tnd_error_set("field '%s' must be a string", key);
    s = json_object_get_string(v);
    len = (size_t)json_object_get_string_len(v);
    if (len > max)
        return tnd_error_set("field '%s' is %zu bytes, more than the limit "
                             "of %zu",
                             key, len, max);
    if (memchr(s, '\0', len))
        return tnd_error_set("field '%s' contains a NUL byte", key);
    *out = tnd_xstrndup(s, len);
    return 0;
}

int tnd_json_get_int(long *out, json_object *obj, const char *key, long min,
                     long max, int flags)
{
    json_object *v = field(obj, key);
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
    json_object *v = field(obj, key);
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
    json_object *v = field(obj, key);
    int m;

    if (!v)
        return (m = missing(key, flags)) > 0 ? 0 : m;
    if (!json_object_is_type(v, json_type_boolean))
        return tnd_error_set("field '%s' must be true or false", key);
    *out = json_object_get_boolean(v);
    return 0;
}

int tnd_json_get_array(json_object **out, json_object *obj, const char *key,
                       size_t max, int flags)
{
    json_object *v = field(obj, key);
    int m;

    *out = NULL;
    if (!v)
        return (m = missing(key, flags)) > 0 ? 0 : m;
    if (!json_object_is_type(v, json_type_array))
        return tnd_error_set("field '%s' must be a list", key);
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
    json_object *v = field(obj, key);
    int m;

    *out = NULL;
    if (!v)
        return (m = missing(key, flags)) > 0 ? 0 : m;
    if (!json_object_is_type(v, json_type_object))
        return tnd_error_set("field '%s' must be an object", key);
    *out = v;
    return 0;
}

/* json-c writes string bytes as they are; JSON is UTF-8. Outside the
 * strings everything is ASCII, so cleaning the whole text cleans exactly
 * the strings' invalid bytes (U+FFFD each) and nothing else. */
static char *valid_text(const char *s, size_t len, size_t *len_out)
{
    char *out = tnd_utf8_clean(s, len, NULL);

    if (len_out)
        *len_out = strlen(out);
    return out;
}

char *tnd_json_dump(json_object *obj, size_t *len_out)
{
    size_t len;
    const char *s = json_object_to_json_string_length(
        obj, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE, &len);

    return valid_text(s, len, len_out);
}

char *tnd_json_pretty(json_object *obj)
{
    size_t len;
    const char *s = json_object_to_json_string_length(
        obj,
        JSON_C_TO_STRING_PRETTY | JSON_C_TO_STRING_SPACED |
            JSON_C_TO_STRING_NOSLASHESCAPE,
        &len);
    char *text = valid_text(s, len, &len), *out;

    out = tnd_xasprintf("%s\n", text);
    free(text);
    return out;
}

json_object *tnd_json_str_or_null(const char *s)
{
    return s ? json_object_new_string(s) : NULL;
}
