/* Checking a YAML document against field tables (see yamlwalk.h).
 *
 * libyaml builds the document tree; the walk visits only the keys of the
 * mappings it is given and the values the tables describe, reporting each
 * problem with the line and column libyaml recorded for the node. */
#include "common/yamlwalk.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/buf.h"
#include "common/fs.h"
#include "common/names.h"
#include "common/str.h"
#include "common/xalloc.h"

#define ERRORS_MAX 20
/* The report ends up in tnd_error_last(), which keeps 2 KiB: stop while
 * the lines so far and the "too many errors" line still fit whole. */
#define ERRORS_TEXT_MAX 2000

struct tnd_yw {
    const char *name; /* the file, for messages */
    const char *dir;  /* base for relative TND_YW_PATH values */
    yaml_document_t doc;
    tnd_buf errors; /* the report, one line per problem */
    int nerrors;    /* ERRORS_MAX + 1 once the report is full */
    size_t copied;  /* bytes string lists took (TND_YW_COPY_MAX) */
};

/* After the first document: nothing more, or an error naming what
 * follows (a second document would be read by nobody). */
static int second_document(yaml_parser_t *parser, const char *name)
{
    yaml_document_t next;
    const yaml_node_t *root;
    int error = 0;

    if (!yaml_parser_load(parser, &next))
        return tnd_error_set("%s:%lu:%lu: not valid YAML: %s", name,
                             (unsigned long)parser->problem_mark.line + 1,
                             (unsigned long)parser->problem_mark.column + 1,
                             parser->problem ? parser->problem
                                             : "syntax error");
    if ((root = yaml_document_get_root_node(&next)))
        error = tnd_error_set("%s:%lu:%lu: a second YAML document; tandem "
                              "reads one, so put every key in it",
                              name, (unsigned long)root->start_mark.line + 1,
                              (unsigned long)root->start_mark.column + 1);
    yaml_document_delete(&next);
    return error;
}

/* Refuse a document whose lists and mappings nest deeper than
 * TND_YW_DEPTH_MAX, counted from libyaml's events before any tree is
 * built. Events, not a scan of our own, so brackets in quotes, block
 * scalars and comments are text and block nesting counts too. The
 * scanner's work per token grows with the flow levels open, so a
 * megabyte of "[" took minutes to load; here it stops at level 65. A
 * syntax error is left for the load to report with its context. */
static int check_depth(const char *text, size_t len, const char *name)
{
    yaml_parser_t parser;
    yaml_event_t event;
    int depth = 0, error = 0;
    bool done = false;

    if (!yaml_parser_initialize(&parser))
        return tnd_error_set("%s: cannot start the YAML parser", name);
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    while (!done && error == 0 && yaml_parser_parse(&parser, &event)) {
        switch (event.type) {
        case YAML_SEQUENCE_START_EVENT:
        case YAML_MAPPING_START_EVENT:
            if (++depth > TND_YW_DEPTH_MAX)
                error = tnd_error_config(
                    "%s:%lu:%lu: lists and mappings nested more than %d "
                    "levels deep; tandem reads nothing that deep, so "
                    "flatten it",
                    name, (unsigned long)event.start_mark.line + 1,
                    (unsigned long)event.start_mark.column + 1,
                    TND_YW_DEPTH_MAX);
            break;
        case YAML_SEQUENCE_END_EVENT:
        case YAML_MAPPING_END_EVENT:
            depth--;
            break;
        case YAML_STREAM_END_EVENT:
            done = true;
            break;
        default:
            break;
        }
        yaml_event_delete(&event);
    }
    yaml_parser_delete(&parser);
    return error;
}

int tnd_yw_parse(tnd_yw **out, const char *text, size_t len, const char *name,
                 const char *dir)
{
    yaml_parser_t parser;
    tnd_yw *self;
    int error = 0;

    *out = NULL;
    if ((error = check_depth(text, len, name)) < 0)
        return error;
    if (!yaml_parser_initialize(&parser))
        return tnd_error_set("%s: cannot start the YAML parser", name);
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    self = tnd_xcalloc(1, sizeof(*self));
    if (!yaml_parser_load(&parser, &self->doc)) {
        tnd_error_set("%s:%lu:%lu: not valid YAML: %s%s%s", name,
                      (unsigned long)parser.problem_mark.line + 1,
                      (unsigned long)parser.problem_mark.column + 1,
                      parser.problem ? parser.problem : "syntax error",
                      parser.context ? " " : "",
                      parser.context ? parser.context : "");
        free(self);
        error = TND_ECONFIG;
        goto out;
    }
    if (second_document(&parser, name) < 0) {
        yaml_document_delete(&self->doc);
        free(self);
        error = TND_ECONFIG;
        goto out;
    }
    self->name = name;
    self->dir = dir;
    tnd_buf_init(&self->errors, 64 * 1024);
    *out = self;
out:
    yaml_parser_delete(&parser);
    return error;
}

void tnd_yw_destroy(tnd_yw **self_p)
{
    tnd_yw *self = self_p ? *self_p : NULL;

    if (!self)
        return;
    yaml_document_delete(&self->doc);
    tnd_buf_free(&self->errors);
    free(self);
    *self_p = NULL;
}

const yaml_node_t *tnd_yw_root(tnd_yw *self)
{
    return yaml_document_get_root_node(&self->doc);
}

/* ---- reporting ---------------------------------------------------------- */

void tnd_yw_report(tnd_yw *self, const yaml_node_t *node, const char *fmt, ...)
{
    char msg[1024];
    size_t before = self->errors.len;
    va_list ap;

    if (self->nerrors > ERRORS_MAX)
        return;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    /* one problem, one line, whatever key or value the message quotes */
    for (char *p = msg; *p; p++)
        if (((unsigned char)*p < 0x20 && *p != '\t') || *p == 0x7f)
            *p = '?';
    if (node)
        tnd_buf_printf(&self->errors, "%s:%lu:%lu: %s\n", self->name,
                       (unsigned long)node->start_mark.line + 1,
                       (unsigned long)node->start_mark.column + 1, msg);
    else
        tnd_buf_printf(&self->errors, "%s: %s\n", self->name, msg);
    if (++self->nerrors > ERRORS_MAX ||
        self->errors.len + strlen(self->name) + 40 > ERRORS_TEXT_MAX) {
        /* this one is over the limit: say so instead */
        self->errors.len = before;
        self->errors.data[before] = '\0';
        tnd_buf_printf(&self->errors, "%s: too many errors; stopping here\n",
                       self->name);
        self->nerrors = ERRORS_MAX + 1;
    }
}

bool tnd_yw_stopped(const tnd_yw *self)
{
    return self->nerrors > ERRORS_MAX;
}

int tnd_yw_finish(tnd_yw *self)
{
    if (!self->nerrors)
        return 0;
    /* drop the final newline so the message prints as one block */
    if (self->errors.len && self->errors.data[self->errors.len - 1] == '\n')
        self->errors.data[--self->errors.len] = '\0';
    tnd_error_set("%s", tnd_buf_str(&self->errors));
    return TND_ECONFIG;
}

const char *tnd_yw_kind(const yaml_node_t *node)
{
    switch (node->type) {
    case YAML_MAPPING_NODE:
        return "a mapping";
    case YAML_SEQUENCE_NODE:
        return "a list";
    default:
        return "a value";
    }
}

const char *tnd_yw_scalar(const yaml_node_t *node)
{
    return (const char *)node->data.scalar.value;
}

bool tnd_yw_is_null(const yaml_node_t *node)
{
    const char *s;

    if (node->type != YAML_SCALAR_NODE ||
        node->data.scalar.style != YAML_PLAIN_SCALAR_STYLE)
        return false;
    s = tnd_yw_scalar(node);
    return !*s || strcmp(s, "~") == 0 || strcmp(s, "null") == 0;
}

/* Levenshtein distance, for "did you mean". */
static size_t distance(const char *a, const char *b)
{
    size_t n = strlen(a), m = strlen(b), prev[64], cur[64];

    if (n >= 63 || m >= 63)
        return 99;
    for (size_t j = 0; j <= m; j++)
        prev[j] = j;
    for (size_t i = 1; i <= n; i++) {
        cur[0] = i;
        for (size_t j = 1; j <= m; j++) {
            size_t sub = prev[j - 1] + (a[i - 1] != b[j - 1]);
            size_t del = prev[j] + 1, ins = cur[j - 1] + 1;
            cur[j] =
                sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
        }
        memcpy(prev, cur, (m + 1) * sizeof(size_t));
    }
    return prev[m];
}

static void unknown_key(tnd_yw *self, const yaml_node_t *key, const char *where,
                        const tnd_yw_field *fields, const char *const *extra)
{
    const char *k = tnd_yw_scalar(key), *best = NULL;
    size_t best_d = 3;
    tnd_buf known;

    tnd_buf_init(&known, 4096);
    for (const tnd_yw_field *f = fields; f && f->key; f++) {
        size_t d = distance(k, f->key);
        if (d < best_d) {
            best_d = d;
            best = f->key;
        }
        tnd_buf_printf(&known, "%s%s", known.len ? ", " : "", f->key);
    }
    for (const char *const *e = extra; e && *e; e++) {
        size_t d = distance(k, *e);
        if (d < best_d) {
            best_d = d;
            best = *e;
        }
        tnd_buf_printf(&known, "%s%s", known.len ? ", " : "", *e);
    }
    if (best)
        tnd_yw_report(self, key, "unknown key '%s' in %s (did you mean '%s'?)",
                      k, where, best);
    else
        tnd_yw_report(self, key, "unknown key '%s' in %s (known keys: %s)", k,
                      where, tnd_buf_str(&known));
    tnd_buf_free(&known);
}

/* ---- values ------------------------------------------------------------- */

static bool parse_long(const char *s, long *out)
{
    char *end;

    errno = 0;
    *out = strtol(s, &end, 10);
    return *s && !*end && errno == 0;
}

static bool parse_double(const char *s, double *out)
{
    char *end;

    errno = 0;
    *out = strtod(s, &end);
    return *s && !*end && errno == 0 && isfinite(*out);
}

char *tnd_yw_quoted(const yaml_node_t *node)
{
    char *p = tnd_str_printable(tnd_yw_scalar(node), 60);
    char *q = tnd_xasprintf("\"%s\"", p);
    free(p);
    return q;
}

static void set_number(tnd_yw *self, const tnd_yw_field *f, const char *path,
                       const yaml_node_t *v, char *base)
{
    char *shown;

    if (v->type != YAML_SCALAR_NODE || tnd_yw_is_null(v)) {
        tnd_yw_report(self, v, "%s must be %s %.15g..%.15g, got %s", path,
                      f->type == TND_YW_DOUBLE ? "a number" : "an integer",
                      f->min, f->max,
                      v->type == YAML_SCALAR_NODE ? "nothing" : tnd_yw_kind(v));
        return;
    }
    shown = tnd_yw_quoted(v);
    if (f->type == TND_YW_DOUBLE) {
        double d;
        if (!parse_double(tnd_yw_scalar(v), &d) || d < f->min || d > f->max)
            tnd_yw_report(self, v, "%s must be a number %g..%g, got %s", path,
                          f->min, f->max, shown);
        else
            *(double *)(base + f->offset) = d;
    } else {
        long n;
        if (!parse_long(tnd_yw_scalar(v), &n) || n < (long)f->min ||
            n > (long)f->max)
            tnd_yw_report(self, v, "%s must be an integer %.15g..%.15g, got %s",
                          path, f->min, f->max, shown);
        else if (f->type == TND_YW_KB)
            *(size_t *)(base + f->offset) = (size_t)n * 1024;
        else if (f->type == TND_YW_MB)
            *(size_t *)(base + f->offset) = (size_t)n * 1024 * 1024;
        else if (f->type == TND_YW_LONG)
            *(long *)(base + f->offset) = n;
        else
            *(int *)(base + f->offset) = (int)n;
    }
    free(shown);
}

static void set_bool(tnd_yw *self, const char *path, const yaml_node_t *v,
                     bool *out)
{
    static const char *const yes[] = {"true", "yes", "on", NULL};
    static const char *const no[] = {"false", "no", "off", NULL};

    if (v->type == YAML_SCALAR_NODE) {
        for (int i = 0; yes[i]; i++) {
            if (strcmp(tnd_yw_scalar(v), yes[i]) == 0) {
                *out = true;
                return;
            }
            if (strcmp(tnd_yw_scalar(v), no[i]) == 0) {
                *out = false;
                return;
            }
        }
    }
    if (v->type == YAML_SCALAR_NODE) {
        char *shown = tnd_yw_quoted(v);
        tnd_yw_report(self, v, "%s must be true or false, got %s", path, shown);
        free(shown);
    } else {
        tnd_yw_report(self, v, "%s must be true or false, got %s", path,
                      tnd_yw_kind(v));
    }
}

bool tnd_yw_in_choices(const char *s, const char *choices)
{
    size_t n = strlen(s);

    for (const char *p = choices; *p;) {
        const char *bar = strchr(p, '|');
        size_t len = bar ? (size_t)(bar - p) : strlen(p);
        if (len == n && strncmp(p, s, n) == 0)
            return true;
        p += len + (bar ? 1 : 0);
    }
    return false;
}

/* v's text into *s (a null is ""), or false after reporting why it has
 * none: not a scalar, or a NUL byte inside. */
static bool scalar_text(tnd_yw *self, const char *path, const yaml_node_t *v,
                        const char **s)
{
    if (v->type != YAML_SCALAR_NODE) {
        tnd_yw_report(self, v, "%s must be a string, got %s", path,
                      tnd_yw_kind(v));
        return false;
    }
    *s = tnd_yw_is_null(v) ? "" : tnd_yw_scalar(v);
    /* a null (~, null) is "" by choice; only a real value can hide a NUL */
    if (!tnd_yw_is_null(v) && strlen(*s) != v->data.scalar.length) {
        tnd_yw_report(self, v, "%s contains a NUL byte", path);
        return false;
    }
    return true;
}

static void report_choices(tnd_yw *self, const char *path, const yaml_node_t *v,
                           const char *list)
{
    char *shown = tnd_yw_quoted(v);

    tnd_yw_report(self, v, "%s must be one of %s; got %s", path, list, shown);
    free(shown);
}

static void set_enum(tnd_yw *self, const tnd_yw_field *f, const char *path,
                     const yaml_node_t *v, char *base)
{
    const char *s;
    char *list;

    if (!scalar_text(self, path, v, &s) ||
        tnd_names_parse((int *)(base + f->offset), f->sub, s) == 0)
        return;
    list = tnd_names_list(f->sub);
    report_choices(self, path, v, list);
    free(list);
}

static void set_string(tnd_yw *self, const tnd_yw_field *f, const char *path,
                       const yaml_node_t *v, char *base)
{
    char **slot = (char **)(base + f->offset);
    const char *s;

    if (!scalar_text(self, path, v, &s))
        return;
    if (f->choices && !tnd_yw_in_choices(s, f->choices)) {
        tnd_buf list;
        tnd_buf_init(&list, 1024);
        for (const char *p = f->choices; *p; p++) {
            if (*p == '|')
                tnd_buf_puts(&list, ", ");
            else
                tnd_buf_append(&list, p, 1);
        }
        report_choices(self, path, v, tnd_buf_str(&list));
        tnd_buf_free(&list);
        return;
    }
    free(*slot);
    if (f->type == TND_YW_PATH && *s && s[0] != '/')
        *slot = tnd_fs_join(self->dir, s);
    else
        *slot = tnd_xstrdup(s);
}

const char *tnd_yw_dir(const tnd_yw *self)
{
    return self->dir;
}

char **tnd_yw_string_list(tnd_yw *self, const char *path, const yaml_node_t *v)
{
    yaml_node_item_t *it;
    size_t n = 0, i = 0, at = 0;
    char **out;

    if (tnd_yw_is_null(v))
        return tnd_xcalloc(1, sizeof(char *));
    if (v->type != YAML_SEQUENCE_NODE) {
        tnd_yw_report(self, v, "%s must be a list, got %s", path,
                      tnd_yw_kind(v));
        return NULL;
    }
    for (it = v->data.sequence.items.start; it < v->data.sequence.items.top;
         it++)
        n++;
    if (n > TND_YW_ITEMS_MAX) {
        tnd_yw_report(self, v,
                      "%s has %zu items, more than the %d tandem "
                      "reads; shorten it (YAML aliases repeat what they name)",
                      path, n, TND_YW_ITEMS_MAX);
        return NULL;
    }
    out = tnd_xcalloc(n + 1, sizeof(char *));
    for (it = v->data.sequence.items.start; it < v->data.sequence.items.top;
         it++, at++) {
        const yaml_node_t *item = tnd_yw_node(self, *it);
        size_t len;
        if (!item || item->type != YAML_SCALAR_NODE || tnd_yw_is_null(item)) {
            /* named by its place in the list, not among the good ones */
            tnd_yw_report(self, item ? item : v, "%s[%zu] must be a string",
                          path, at);
            continue;
        }
        len = strlen(tnd_yw_scalar(item));
        if (len > TND_YW_COPY_MAX - self->copied) {
            tnd_yw_report(self, item,
                          "%s[%zu]: the lists of %s hold more "
                          "than %zu MiB of text; shorten them (YAML aliases "
                          "repeat what they name)",
                          path, at, self->name, TND_YW_COPY_MAX >> 20);
            tnd_str_list_free(&out);
            return NULL;
        }
        self->copied += len;
        out[i++] = tnd_xstrdup(tnd_yw_scalar(item));
    }
    return out;
}

/* ---- mappings ----------------------------------------------------------- */

const yaml_node_t *tnd_yw_node(tnd_yw *self, int id)
{
    return yaml_document_get_node(&self->doc, id);
}

bool tnd_yw_check_key(tnd_yw *self, const yaml_node_t *map,
                      const yaml_node_pair_t *pair, const char *where)
{
    const yaml_node_t *k = tnd_yw_node(self, pair->key);

    if (!k || k->type != YAML_SCALAR_NODE) {
        tnd_yw_report(self, k ? k : map, "keys in %s must be plain names",
                      where);
        return false;
    }
    /* past the cap, said once: each key is compared with those before */
    if (pair - map->data.mapping.pairs.start >= TND_YW_KEYS_MAX) {
        if (pair - map->data.mapping.pairs.start == TND_YW_KEYS_MAX)
            tnd_yw_report(self, k,
                          "%s has more than %d keys; tandem reads "
                          "no more",
                          where, TND_YW_KEYS_MAX);
        return false;
    }
    for (const yaml_node_pair_t *q = map->data.mapping.pairs.start; q < pair;
         q++) {
        const yaml_node_t *qk = tnd_yw_node(self, q->key);
        if (qk && qk->type == YAML_SCALAR_NODE &&
            strcmp(tnd_yw_scalar(qk), tnd_yw_scalar(k)) == 0) {
            tnd_yw_report(self, k, "duplicate key '%s' in %s", tnd_yw_scalar(k),
                          where);
            return false;
        }
    }
    return true;
}

static bool header_name_ok(const char *s)
{
    static const char extra[] = "!#$%&'*+-.^_`|~";

    if (!*s || strlen(s) > 100)
        return false;
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && !strchr(extra, *s))
            return false;
    return true;
}

/* headers: {Name: value, ...}: names are HTTP tokens, values one line,
 * so nothing in the config can smuggle in a second header. */
static void set_headers(tnd_yw *self, const char *path, const yaml_node_t *map,
                        char ***out)
{
    size_t n = 0;
    char **list;

    if (tnd_yw_is_null(map)) {
        tnd_str_list_free(out);
        *out = tnd_xcalloc(1, sizeof(char *));
        return;
    }
    if (map->type != YAML_MAPPING_NODE) {
        tnd_yw_report(self, map,
                      "%s must be a mapping of header names to values, got %s",
                      path, tnd_yw_kind(map));
        return;
    }
    list = tnd_xcalloc(33, sizeof(char *));
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start;
         p < map->data.mapping.pairs.top; p++) {
        const yaml_node_t *k, *v;
        if (!tnd_yw_check_key(self, map, p, path))
            continue;
        k = tnd_yw_node(self, p->key);
        v = tnd_yw_node(self, p->value);
        if (n == 32) {
            tnd_yw_report(self, k, "%s: at most 32 headers", path);
            break;
        }
        if (!header_name_ok(tnd_yw_scalar(k))) {
            tnd_yw_report(self, k, "%s: '%s' is not a valid HTTP header name",
                          path, tnd_yw_scalar(k));
            continue;
        }
        if (v->type != YAML_SCALAR_NODE || tnd_yw_is_null(v) ||
            strpbrk(tnd_yw_scalar(v), "\r\n") != NULL ||
            strlen(tnd_yw_scalar(v)) != v->data.scalar.length) {
            tnd_yw_report(self, v, "%s.%s must be a one-line string", path,
                          tnd_yw_scalar(k));
            continue;
        }
        list[n++] = tnd_xasprintf("%s: %s", tnd_yw_scalar(k), tnd_yw_scalar(v));
    }
    tnd_str_list_free(out);
    *out = list;
}

static void set_field(tnd_yw *self, const tnd_yw_field *f, const char *path,
                      const yaml_node_t *v, char *base)
{
    switch (f->type) {
    case TND_YW_INT:
    case TND_YW_LONG:
    case TND_YW_DOUBLE:
    case TND_YW_KB:
    case TND_YW_MB:
        set_number(self, f, path, v, base);
        break;
    case TND_YW_HEADERS:
        set_headers(self, path, v, (char ***)(base + f->offset));
        break;
    case TND_YW_BOOL:
        set_bool(self, path, v, (bool *)(base + f->offset));
        break;
    case TND_YW_STRING:
    case TND_YW_PATH:
        set_string(self, f, path, v, base);
        break;
    case TND_YW_ENUM:
        set_enum(self, f, path, v, base);
        break;
    case TND_YW_NAMES: {
        char **names = tnd_yw_string_list(self, path, v);
        if (names) {
            tnd_str_list_free((char ***)(base + f->offset));
            *(char ***)(base + f->offset) = names;
        }
        break;
    }
    case TND_YW_SECTION:
        tnd_yw_walk(self, path, v, f->sub, NULL, base + f->offset);
        break;
    case TND_YW_CUSTOM:
        f->set(self, f, path, v, base);
        break;
    }
}

void tnd_yw_walk(tnd_yw *self, const char *path, const yaml_node_t *map,
                 const tnd_yw_field *fields, const char *const *extra,
                 char *base)
{
    const char *where = path[0] ? path : "the top level";

    if (tnd_yw_is_null(map))
        return;
    if (map->type != YAML_MAPPING_NODE) {
        tnd_yw_report(self, map, "%s must be a mapping of keys, got %s", where,
                      tnd_yw_kind(map));
        return;
    }
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start;
         p < map->data.mapping.pairs.top && !tnd_yw_stopped(self); p++) {
        const yaml_node_t *k, *v;
        const tnd_yw_field *f;
        bool is_extra = false;
        if (!tnd_yw_check_key(self, map, p, where))
            continue;
        k = tnd_yw_node(self, p->key);
        v = tnd_yw_node(self, p->value);
        for (const char *const *e = extra; e && *e; e++)
            if (strcmp(tnd_yw_scalar(k), *e) == 0)
                is_extra = true;
        if (is_extra)
            continue;
        for (f = fields; f->key; f++)
            if (strcmp(f->key, tnd_yw_scalar(k)) == 0)
                break;
        if (!f->key) {
            unknown_key(self, k, where, fields, extra);
            continue;
        }
        char *sub = path[0] ? tnd_xasprintf("%s.%s", path, f->key)
                            : tnd_xstrdup(f->key);
        set_field(self, f, sub, v, base);
        free(sub);
    }
}

/* ---- lookups ------------------------------------------------------------ */

/* The first pair of map whose key is the scalar key, or NULL. */
static const yaml_node_pair_t *find_pair(tnd_yw *self, const yaml_node_t *map,
                                         const char *key)
{
    if (!map || map->type != YAML_MAPPING_NODE)
        return NULL;
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start;
         p < map->data.mapping.pairs.top; p++) {
        const yaml_node_t *k = tnd_yw_node(self, p->key);
        if (k && k->type == YAML_SCALAR_NODE &&
            strcmp(tnd_yw_scalar(k), key) == 0)
            return p;
    }
    return NULL;
}

const yaml_node_t *tnd_yw_key_node(tnd_yw *self, const yaml_node_t *map,
                                   const char *key)
{
    const yaml_node_pair_t *p = find_pair(self, map, key);

    return p ? tnd_yw_node(self, p->key) : NULL;
}

const yaml_node_t *tnd_yw_lookup(tnd_yw *self, const yaml_node_t *map,
                                 const char *key)
{
    const yaml_node_pair_t *p = find_pair(self, map, key);

    return p ? tnd_yw_node(self, p->value) : NULL;
}

const yaml_node_t *tnd_yw_item_named(tnd_yw *self, const yaml_node_t *list,
                                     const char *name)
{
    if (list->type != YAML_SEQUENCE_NODE)
        return list;
    for (yaml_node_item_t *it = list->data.sequence.items.start;
         it < list->data.sequence.items.top; it++) {
        const yaml_node_t *item = tnd_yw_node(self, *it);
        if (item && item->type == YAML_SCALAR_NODE &&
            strcmp(tnd_yw_scalar(item), name) == 0)
            return item;
    }
    return list;
}

const yaml_node_t *tnd_yw_item_at(tnd_yw *self, const yaml_node_t *seq,
                                  size_t n)
{
    if (!seq || seq->type != YAML_SEQUENCE_NODE ||
        (size_t)(seq->data.sequence.items.top -
                 seq->data.sequence.items.start) <= n)
        return NULL;
    return tnd_yw_node(self, seq->data.sequence.items.start[n]);
}
