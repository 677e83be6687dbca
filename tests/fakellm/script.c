/* Loading and checking fakellm scripts (see script.h). Everything is
 * copied out of the json-c tree into plain structs, so the server threads
 * read steps without touching json-c's reference counts. */
#include "tests/fakellm/script.h"

#include <errno.h>
#include <json-c/json.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/buf.h"
#include "common/xalloc.h"

#define SCRIPT_MAX_BYTES (64u << 20)
#define DEFAULT_CHUNK    16

struct fl_script {
    fl_step *steps;
    size_t count;
};

static int read_file(tnd_buf *out, const char *path)
{
    FILE *f = fopen(path, "rb");
    char block[65536];
    size_t n;
    int error = 0;

    if (!f)
        return tnd_error_sys("cannot open");
    while ((n = fread(block, 1, sizeof(block), f)) > 0)
        if (tnd_buf_append(out, block, n) < 0) {
            error = tnd_error_set("larger than %u bytes", SCRIPT_MAX_BYTES);
            break;
        }
    if (!error && ferror(f))
        error = tnd_error_sys("cannot read");
    fclose(f);
    return error;
}

static json_object *parse(const char *text, size_t len)
{
    json_tokener *tok = json_tokener_new();
    json_object *root;
    enum json_tokener_error jerr;
    size_t end;

    json_tokener_set_flags(tok,
                           JSON_TOKENER_STRICT | JSON_TOKENER_VALIDATE_UTF8);
    /* len + 1 feeds the NUL too, which ends a trailing number. */
    root = json_tokener_parse_ex(tok, text, (int)len + 1);
    jerr = json_tokener_get_error(tok);
    end = json_tokener_get_parse_end(tok);
    if (!root) {
        size_t line = 1;

        for (size_t i = 0; i < end && i < len; i++)
            line += text[i] == '\n';
        tnd_error_set("invalid JSON at line %zu: %s", line,
                      json_tokener_error_desc(jerr));
    } else if (end < len && text[end + strspn(text + end, " \t\r\n")]) {
        tnd_error_set("trailing text after the JSON value");
        json_object_put(root);
        root = NULL;
    }
    json_tokener_free(tok);
    return root;
}

/* A field's value, shortened, for "got ..." in messages. */
static const char *shown(json_object *v)
{
    return json_object_to_json_string_ext(
        v, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
}

static int want_bool(int *out, json_object *v, const char *key)
{
    if (!json_object_is_type(v, json_type_boolean))
        return tnd_error_set("%s must be true or false, got %.60s", key,
                             shown(v));
    *out = json_object_get_boolean(v);
    return 0;
}

static int want_int(long long *out, json_object *v, const char *key,
                    long long min, long long max)
{
    long long n;

    if (!json_object_is_type(v, json_type_int))
        return tnd_error_set("%s must be an integer %lld..%lld, got %.60s", key,
                             min, max, shown(v));
    n = json_object_get_int64(v);
    if (n < min || n > max)
        return tnd_error_set("%s must be %lld..%lld, got %lld", key, min, max,
                             n);
    *out = n;
    return 0;
}

static int want_string(char **out, size_t *len_out, json_object *v,
                       const char *key)
{
    int len;

    if (!json_object_is_type(v, json_type_string))
        return tnd_error_set("%s must be a string, got %.60s", key, shown(v));
    len = json_object_get_string_len(v);
    *out = tnd_xmalloc((size_t)len + 1);
    memcpy(*out, json_object_get_string(v), (size_t)len);
    (*out)[len] = '\0';
    if (len_out)
        *len_out = (size_t)len;
    return 0;
}

static int load_usage(fl_step *step, json_object *v)
{
    int error = 0;

    if (!json_object_is_type(v, json_type_object))
        return tnd_error_set("usage must be an object like "
                             "{\"prompt_tokens\": 10, "
                             "\"completion_tokens\": 5}, got %.60s",
                             shown(v));
    json_object_object_foreach(v, key, val)
    {
        if (!strcmp(key, "prompt_tokens"))
            error = want_int(&step->prompt_tokens, val, "usage.prompt_tokens",
                             0, INT_MAX);
        else if (!strcmp(key, "completion_tokens"))
            error = want_int(&step->completion_tokens, val,
                             "usage.completion_tokens", 0, INT_MAX);
        else
            error = tnd_error_set("usage.%s is not a field (want "
                                  "prompt_tokens or completion_tokens)",
                                  key);
        if (error < 0)
            return error;
    }
    return 0;
}

/* Header names are tokens and values have no line breaks: a script must
 * not be able to split the response head by accident. */
static int load_headers(fl_step *step, json_object *v)
{
    size_t i = 0;

    if (!json_object_is_type(v, json_type_object))
        return tnd_error_set("headers must be an object of strings, got %.60s",
                             shown(v));
    step->headers = tnd_xcalloc((size_t)json_object_object_length(v) + 1,
                                sizeof(fl_header));
    json_object_object_foreach(v, key, val)
    {
        const char *s;

        if (!*key || strspn(key, "abcdefghijklmnopqrstuvwxyz"
                                 "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                                 "!#$%&'*+-.^_`|~") != strlen(key))
            return tnd_error_set("headers: \"%.60s\" is not a valid header "
                                 "name",
                                 key);
        if (!strcasecmp(key, "content-length") ||
            !strcasecmp(key, "transfer-encoding") ||
            !strcasecmp(key, "connection"))
            return tnd_error_set("headers: %s is set by fakellm (use "
                                 "\"close\": true to close)",
                                 key);
        if (!json_object_is_type(val, json_type_string))
            return tnd_error_set("headers.%s must be a string, got %.60s", key,
                                 shown(val));
        s = json_object_get_string(val);
        if ((size_t)json_object_get_string_len(val) != strlen(s) ||
            strpbrk(s, "\r\n"))
            return tnd_error_set("headers.%s must not contain line breaks "
                                 "or NUL",
                                 key);
        step->headers[i].name = tnd_xstrdup(key);
        step->headers[i].value = tnd_xstrdup(s);
        step->nheaders = ++i;
    }
    return 0;
}

/* A string or an array of strings (expect, when) into a NULL-ended list. */
static int load_strings(char ***list, size_t *count, json_object *v,
                        const char *key)
{
    size_t n;

    if (json_object_is_type(v, json_type_string)) {
        *list = tnd_xcalloc(2, sizeof(char *));
        *count = 1;
        return want_string(&(*list)[0], NULL, v, key);
    }
    if (!json_object_is_type(v, json_type_array))
        return tnd_error_set("%s must be a string or an array of "
                             "strings, got %.60s",
                             key, shown(v));
    n = json_object_array_length(v);
    *list = tnd_xcalloc(n + 1, sizeof(char *));
    for (size_t i = 0; i < n; i++) {
        json_object *s = json_object_array_get_idx(v, i);

        if (!json_object_is_type(s, json_type_string))
            return tnd_error_set("%s[%zu] must be a string, got %.60s", key, i,
                                 shown(s));
        (*list)[i] = tnd_xstrdup(json_object_get_string(s));
        *count = i + 1;
    }
    return 0;
}

static int load_field(fl_step *step, const char *key, json_object *v)
{
    long long n = 0;
    int error;

    if (!strcmp(key, "content"))
        return want_string(&step->content, &step->content_len, v, key);
    if (!strcmp(key, "usage"))
        return load_usage(step, v);
    if (!strcmp(key, "no_usage"))
        return want_bool(&step->no_usage, v, key);
    if (!strcmp(key, "hit_max_tokens"))
        return want_bool(&step->hit_max_tokens, v, key);
    if (!strcmp(key, "filtered"))
        return want_bool(&step->filtered, v, key);
    if (!strcmp(key, "status")) {
        error = want_int(&n, v, key, 200, 599);
        step->status = (int)n;
        return error;
    }
    if (!strcmp(key, "headers"))
        return load_headers(step, v);
    if (!strcmp(key, "body"))
        return want_string(&step->body, &step->body_len, v, key);
    if (!strcmp(key, "delay_ms")) {
        error = want_int(&n, v, key, 0, 3600000);
        step->delay_ms = (long)n;
        return error;
    }
    if (!strcmp(key, "stall"))
        return want_bool(&step->stall, v, key);
    if (!strcmp(key, "truncate"))
        return want_bool(&step->truncate, v, key);
    if (!strcmp(key, "hold_open"))
        return want_bool(&step->hold_open, v, key);
    if (!strcmp(key, "garbage"))
        return want_bool(&step->garbage, v, key);
    if (!strcmp(key, "oversize"))
        return want_int(&step->oversize, v, key, 0, 1LL << 40);
    if (!strcmp(key, "chunk_size")) {
        error = want_int(&n, v, key, 1, 1 << 20);
        step->chunk_size = (size_t)n;
        return error;
    }
    if (!strcmp(key, "chunk_delay_ms")) {
        error = want_int(&n, v, key, 0, 600000);
        step->chunk_delay_ms = (long)n;
        return error;
    }
    if (!strcmp(key, "expect"))
        return load_strings(&step->expect, &step->nexpect, v, key);
    if (!strcmp(key, "when"))
        return load_strings(&step->when, &step->nwhen, v, key);
    if (!strcmp(key, "repeat")) {
        error = want_int(&n, v, key, 0, INT_MAX);
        step->repeat = (long)n;
        return error;
    }
    if (!strcmp(key, "close"))
        return want_bool(&step->close, v, key);
    return tnd_error_set("\"%s\" is not a step field (see "
                         "tests/fakellm/README.md)",
                         key);
}

static int load_step(fl_step *step, json_object *v)
{
    int error;

    step->prompt_tokens = step->completion_tokens = -1;
    step->status = 200;
    step->oversize = -1;
    step->chunk_size = DEFAULT_CHUNK;
    step->repeat = 1;
    if (!json_object_is_type(v, json_type_object))
        return tnd_error_set("must be an object, got %.60s", shown(v));
    json_object_object_foreach(v, key, val)
    {
        if (key[0] == '_')
            continue;
        if ((error = load_field(step, key, val)) < 0)
            return error;
    }
    if (!step->content)
        step->content = tnd_xstrdup("");
    return 0;
}

static int load_steps(fl_script *self, json_object *root)
{
    json_object *steps = NULL;
    int error;

    if (!json_object_is_type(root, json_type_object))
        return tnd_error_set("the top level must be an object "
                             "{\"steps\": [...]}");
    json_object_object_foreach(root, key, val)
    {
        (void)val;
        if (key[0] != '_' && strcmp(key, "steps"))
            return tnd_error_set("\"%s\" is not a top-level field (only "
                                 "\"steps\")",
                                 key);
    }
    if (!json_object_object_get_ex(root, "steps", &steps) ||
        !json_object_is_type(steps, json_type_array))
        return tnd_error_set("\"steps\" must be an array of step objects");
    self->count = json_object_array_length(steps);
    self->steps = tnd_xcalloc(self->count + 1, sizeof(fl_step));
    for (size_t i = 0; i < self->count; i++) {
        error = load_step(&self->steps[i], json_object_array_get_idx(steps, i));
        if (error < 0) {
            tnd_error_prefix("steps[%zu]", i);
            return error;
        }
    }
    return 0;
}

fl_script *fl_script_load(const char *path)
{
    fl_script *self = tnd_xcalloc(1, sizeof(*self));
    json_object *root = NULL;
    tnd_buf text;
    int error;

    tnd_buf_init(&text, SCRIPT_MAX_BYTES);
    if ((error = read_file(&text, path)) < 0)
        goto out;
    if (strspn(tnd_buf_str(&text), " \t\r\n") == text.len) {
        error = tnd_error_set("empty file; want {\"steps\": [...]}");
        goto out;
    }
    if (!(root = parse(tnd_buf_str(&text), text.len))) {
        error = -1;
        goto out;
    }
    error = load_steps(self, root);
out:
    json_object_put(root);
    tnd_buf_free(&text);
    if (error < 0) {
        tnd_error_prefix("%s", path);
        fl_script_destroy(&self);
    }
    return self;
}

static void free_step(fl_step *step)
{
    free(step->content);
    free(step->body);
    for (size_t i = 0; i < step->nheaders; i++) {
        free(step->headers[i].name);
        free(step->headers[i].value);
    }
    free(step->headers);
    for (size_t i = 0; i < step->nexpect; i++)
        free(step->expect[i]);
    free(step->expect);
    for (size_t i = 0; i < step->nwhen; i++)
        free(step->when[i]);
    free(step->when);
}

void fl_script_destroy(fl_script **self_p)
{
    if (!self_p || !*self_p)
        return;
    for (size_t i = 0; i < (*self_p)->count; i++)
        free_step(&(*self_p)->steps[i]);
    free((*self_p)->steps);
    free(*self_p);
    *self_p = NULL;
}

size_t fl_script_count(const fl_script *self)
{
    return self->count;
}

const fl_step *fl_script_step(const fl_script *self, size_t i)
{
    return &self->steps[i];
}
