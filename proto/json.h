/* tnd_json - reading JSON from outside with limits and clear errors.
 *
 * Every JSON document tandem reads comes from something that can be wrong
 * or hostile (a peer, an LLM, a cassette). These helpers parse with a
 * size and depth limit and read fields with type and range checks, so
 * the error says which field is wrong and why ("field 'attempt' must be
 * an integer 1..1000"). */
#ifndef TND_JSON_H
#define TND_JSON_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

#include "common/buf.h"
#include "common/names.h"

#define TND_JSON_MAX_DEPTH 32

enum {
    TND_JSON_REQUIRED = 0,
    TND_JSON_OPTIONAL = 1, /* a missing (or null) field is not an error */
    TND_JSON_TEXT = 2,     /* tnd_json_get_str: a NUL byte is read as U+FFFD,
                              not refused (a model's answer: one stray NUL
                              must neither cut nor lose the whole answer) */
};

/* Parse exactly one JSON value from len bytes (no NUL needed; trailing
 * whitespace allowed, trailing garbage is an error). *out is a new
 * reference the caller puts (NULL for the value null). The error says
 * where parsing stopped. */
int tnd_json_parse(json_object **out, const char *text, size_t len);

/* As tnd_json_parse, nesting allowed to depth (not TND_JSON_MAX_DEPTH):
 * for text tandem wrote around values it parsed, a journal record around
 * a reply, which is deeper than the reply by the record's levels. */
int tnd_json_parse_depth(json_object **out, const char *text, size_t len,
                         int depth);

/* Read obj[key] as a string of at most max bytes without NUL bytes into
 * *out (caller frees). With TND_JSON_OPTIONAL a missing field gives
 * *out = NULL and 0; with TND_JSON_TEXT a string holding a NUL byte is
 * read with U+FFFD for it (and for any byte that is not UTF-8). */
int tnd_json_get_str(char **out, json_object *obj, const char *key, size_t max,
                     int flags);

/* Read the required obj[key] as the name of one of an enum's values
 * (common/names.h) into *out: "field 'K' must be one of A, B, C, got "X""
 * when it names none. Where a peer's enum enters. */
int tnd_json_get_enum(int *out, json_object *obj, const char *key,
                      const tnd_names *names);

/* Read obj[key] as an integer in min..max. A missing optional field
 * leaves *out untouched. */
int tnd_json_get_int(long *out, json_object *obj, const char *key, long min,
                     long max, int flags);

/* Read obj[key] as a number in min..max (integers accepted). A missing
 * optional field leaves *out untouched. */
int tnd_json_get_double(double *out, json_object *obj, const char *key,
                        double min, double max, int flags);

/* Read obj[key] as a boolean. A missing optional field leaves *out
 * untouched. */
int tnd_json_get_bool(bool *out, json_object *obj, const char *key, int flags);

/* Borrow obj[key] as an array of at most max items; *out is NULL for a
 * missing optional field. */
int tnd_json_get_array(json_object **out, json_object *obj, const char *key,
                       size_t max, int flags);

/* Borrow obj[key] as an object; *out is NULL for a missing optional
 * field. */
int tnd_json_get_object(json_object **out, json_object *obj, const char *key,
                        int flags);

/* Lenient readers, for JSON tandem wrote itself (the journal, report.json,
 * events) where a missing field means "not there", not an error. obj may
 * be NULL or not an object; a field set to null counts as missing. */

/* Borrow obj[key], or NULL. */
json_object *tnd_json_field(json_object *obj, const char *key);

/* obj[key] when it is an array (borrowed), else NULL: what a damaged
 * file holds is never handed to json_object_array_length, which aborts
 * on anything else. */
json_object *tnd_json_array(json_object *obj, const char *key);

/* obj[key] when it is a string (borrowed from obj), else fallback. */
const char *tnd_json_str_or(json_object *obj, const char *key,
                            const char *fallback);

/* obj[key] as json-c converts it to an integer (a double is truncated, a
 * numeric string parsed), or fallback when it is missing. */
long tnd_json_int_or(json_object *obj, const char *key, long fallback);

/* obj[key] as json-c converts it to a boolean, or fallback when it is
 * missing. */
bool tnd_json_bool_or(json_object *obj, const char *key, bool fallback);

/* Check that no object in the JSON text repeats a key: json-c keeps the
 * last of a repeated key without a word, so {"verdict": "revise", ...,
 * "verdict": "approve"} would read as approve. Keys are compared as
 * json-c stores them (unescaped, cut at a NUL), so "verd\u0069ct"
 * repeats "verdict". -1 names the key repeated first and its object:
 * "issues[0]: key 'severity' appears twice". For text tnd_json_parse
 * accepted: nesting past TND_JSON_MAX_DEPTH is an error, and text that
 * is not JSON is read only as far as it looks like JSON. O(n log n) time,
 * O(n) memory, no recursion. */
int tnd_json_check_unique_keys(const char *text, size_t len);

/* obj serialised compactly into a new string (caller frees); *len_out may
 * be NULL. Slashes are not escaped. The text is always valid UTF-8: a
 * string's invalid bytes come out as U+FFFD (see common/utf8.h), so
 * nothing tandem sends or writes as JSON can be refused for its bytes. */
char *tnd_json_dump(json_object *obj, size_t *len_out);

/* obj pretty-printed with a trailing newline, for files people read;
 * valid UTF-8 like tnd_json_dump. Caller frees. */
char *tnd_json_pretty(json_object *obj);

/* A new JSON string from s, or JSON null when s is NULL. */
json_object *tnd_json_str_or_null(const char *s);

#endif
