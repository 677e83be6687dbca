/* tnd_yw - walk a YAML document against field tables, errors as FILE:LINE:COL.
 *
 * A schema is a set of field tables, one per mapping: each row names a
 * key, the type of value it takes, its limits and where the value goes
 * (an offset into the struct being filled). tnd_yw_walk() checks every
 * key of a mapping against its table, stores each valid value and
 * reports everything else. The walk follows the tables, never the
 * document generically, so an alias bomb cannot make it expensive.
 *
 * Problems are collected rather than returned: each is one line
 * "NAME:LINE:COL: message" with the position libyaml recorded for the
 * node, and tnd_yw_finish() hands them all over as one error. After 20,
 * or when the next would no longer fit whole in tnd_error_last(), a last
 * line "NAME: too many errors; stopping here" ends the report and the
 * walk stops (see tnd_yw_stopped).
 *
 * In messages a value is named by its path from the top, "gate.max_tokens"
 * or "agents.coder.llm.headers"; the top level itself is "the top level".
 */
#ifndef TND_YAMLWALK_H
#define TND_YAMLWALK_H

#include <stdbool.h>
#include <stddef.h>
#include <yaml.h>

#include "common/error.h"
#include "common/names.h"

typedef struct tnd_yw tnd_yw;
typedef struct tnd_yw_field tnd_yw_field;

/* What a field accepts, and how it stores it at base + offset. A null
 * value (empty, ~ or null) counts as nothing, noted where it is allowed.
 * Strings and lists are malloc'd and replace (and free) what was there,
 * so that must be malloc'd too, or NULL. */
typedef enum tnd_yw_type {
    TND_YW_INT,     /* integer min..max; int */
    TND_YW_LONG,    /* integer min..max; long */
    TND_YW_DOUBLE,  /* finite number min..max; double */
    TND_YW_BOOL,    /* true, yes, on or false, no, off; bool */
    TND_YW_STRING,  /* scalar without NUL bytes, one of choices when set;
                       char *, null stored as "" */
    TND_YW_PATH,    /* as TND_YW_STRING; a relative path is joined to the
                       walker's dir */
    TND_YW_ENUM,    /* one of the names (common/names.h); an enum of int
                       size, the value the name stands for */
    TND_YW_KB,      /* integer KiB min..max; size_t bytes */
    TND_YW_MB,      /* integer MiB min..max; size_t bytes */
    TND_YW_NAMES,   /* list of strings; char **, NULL-terminated, null
                       stored as an empty list */
    TND_YW_HEADERS, /* mapping of at most 32 HTTP header names to one-line
                       values; char **, NULL-terminated "Name: value",
                       null stored as an empty list */
    TND_YW_SECTION, /* mapping described by sub, filling the struct at
                       offset; null leaves it as it was */
    TND_YW_CUSTOM,  /* anything: set checks and stores it */
} tnd_yw_type;

/* Check v and store it for the TND_YW_CUSTOM field f of the struct at
 * base (usually at base + f->offset), reporting what is wrong; path names
 * v in messages. */
typedef void tnd_yw_set_fn(tnd_yw *w, const tnd_yw_field *f, const char *path,
                           const yaml_node_t *v, char *base);

/* One key of a mapping. A table is an array of these ending with a row
 * whose key is NULL. */
struct tnd_yw_field {
    const char *key;
    tnd_yw_type type;
    size_t offset;       /* of the value in the struct filled */
    double min, max;     /* INT, LONG, DOUBLE, KB, MB: inclusive */
    const char *choices; /* STRING, PATH: "a|b|c"; NULL: any */
    const void *sub;     /* SECTION: the nested mapping's table (a
                            tnd_yw_field array); ENUM: the values'
                            names (a tnd_names) */
    tnd_yw_set_fn *set;  /* CUSTOM */
};

/* Lists and mappings inside each other, at most: tandem's own files need
 * a handful of levels, and libyaml's time per token grows with the depth
 * (a megabyte of "[" took minutes), so deeper is refused unread. */
#define TND_YW_DEPTH_MAX 64

/* Keys in one mapping, items in one list of strings, and the bytes all
 * such lists may copy out of a document, at most. A file is at most a
 * megabyte, but YAML aliases repeat what they name: 160,000 aliases of a
 * 400 KB string in one list asked for 64 GB, and 55,000 skills took 12 s
 * of duplicate-key checks. tandem's own files need far less. */
#define TND_YW_KEYS_MAX  1024
#define TND_YW_ITEMS_MAX 4096
#define TND_YW_COPY_MAX  ((size_t)8 << 20)

/* Parse text (the first document in it) for walking; name is used in
 * messages and dir as the base of relative paths, both borrowed until
 * tnd_yw_destroy. TND_ECONFIG with "NAME:LINE:COL: not valid YAML: ..."
 * in tnd_error_last() when it does not parse, or "NAME:LINE:COL: lists
 * and mappings nested more than 64 levels deep; ..." at the 65th level
 * (checked first, in time linear in len), -1 when libyaml cannot
 * start. */
int tnd_yw_parse(tnd_yw **out, const char *text, size_t len, const char *name,
                 const char *dir);

/* Free the document and the report; sets *self_p to NULL. Safe on NULL. */
void tnd_yw_destroy(tnd_yw **self_p);

/* The document's top node; NULL for an empty document. Borrowed, as are
 * all nodes, until tnd_yw_destroy. */
const yaml_node_t *tnd_yw_root(tnd_yw *self);

/* Walk the mapping map against fields, storing into the struct at base;
 * path names map in messages ("" for the top level). Keys listed in extra
 * (NULL-terminated, may be NULL) are skipped for the caller to handle; an
 * unknown key is reported with the nearest known or extra key ("did you
 * mean"), or all of them. map is a node, not NULL; a null value there
 * leaves base as it was. */
void tnd_yw_walk(tnd_yw *self, const char *path, const yaml_node_t *map,
                 const tnd_yw_field *fields, const char *const *extra,
                 char *base);

/* Add "NAME:LINE:COL: message" at node to the report, or "NAME: message"
 * when node is NULL; control characters in the message (a line break in
 * a quoted key) become '?', so each problem stays one line. Dropped once
 * the walk has stopped. */
void tnd_yw_report(tnd_yw *self, const yaml_node_t *node, const char *fmt, ...)
    TND_PRINTF(3, 4);

/* True once the report is full: further reports are dropped, and walks
 * stop early. */
bool tnd_yw_stopped(const tnd_yw *self);

/* 0 when nothing was reported; else TND_ECONFIG with the report, one line
 * per problem, in tnd_error_last(). */
int tnd_yw_finish(tnd_yw *self);

/* The node with this id (a sequence item or the key or value of a
 * mapping pair), or NULL. */
const yaml_node_t *tnd_yw_node(tnd_yw *self, int id);

/* The value of map[key], or NULL (also when map is NULL or not a
 * mapping). */
const yaml_node_t *tnd_yw_lookup(tnd_yw *self, const yaml_node_t *map,
                                 const char *key);

/* The key node of map[key], or NULL: where to point at a key that should
 * not be there. */
const yaml_node_t *tnd_yw_key_node(tnd_yw *self, const yaml_node_t *map,
                                   const char *key);

/* The n-th item of a sequence node, or NULL. */
const yaml_node_t *tnd_yw_item_at(tnd_yw *self, const yaml_node_t *seq,
                                  size_t n);

/* The item of a list that is name, else the list itself. */
const yaml_node_t *tnd_yw_item_named(tnd_yw *self, const yaml_node_t *list,
                                     const char *name);

/* Whether the key of pair (one of map's) is a scalar no earlier pair of
 * map has; reports "keys in WHERE must be plain names" or "duplicate key
 * 'K' in WHERE" when not. Quadratic, so walks stop at the error cap: a
 * mapping has only a few valid keys, and every other key is an error. */
bool tnd_yw_check_key(tnd_yw *self, const yaml_node_t *map,
                      const yaml_node_pair_t *pair, const char *where);

/* The strings of a sequence, as TND_YW_NAMES stores them (caller frees
 * with tnd_str_list_free); items that are not strings are reported and
 * left out. NULL, after reporting, when v is not a list. */
/* The directory relative paths in the file are taken from. Borrowed. */
const char *tnd_yw_dir(const tnd_yw *self);

char **tnd_yw_string_list(tnd_yw *self, const char *path, const yaml_node_t *v);

/* A scalar's text. Borrowed. */
const char *tnd_yw_scalar(const yaml_node_t *node);

/* Whether node is a plain empty, ~ or null scalar. */
bool tnd_yw_is_null(const yaml_node_t *node);

/* "a mapping", "a list" or "a value", for "got ..." in messages. */
const char *tnd_yw_kind(const yaml_node_t *node);

/* A scalar's text in double quotes, printable and cut to 60 bytes, for
 * messages. Caller frees. */
char *tnd_yw_quoted(const yaml_node_t *node);

/* Whether s is one of choices, "a|b|c" as in a field. */
bool tnd_yw_in_choices(const char *s, const char *choices);

#endif
