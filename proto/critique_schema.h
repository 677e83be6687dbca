/* tnd_critique_schema - the critique object: the reviewer model's
 * judgement of an attempt (verdict, confidence, criteria, issues,
 * summary), its schema check and its JSON form, as an audit_reply carries
 * it (proto/audit.h) and the journal and report.json keep it. Finding one
 * in a model's answer is agents/critique.h's. */
#ifndef TND_CRITIQUE_SCHEMA_H
#define TND_CRITIQUE_SCHEMA_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

/* The largest line an issue names: a critique with a larger one is
 * refused. */
#define TND_CRITIQUE_MAX_LINE 100000000L

typedef enum tnd_verdict {
    TND_VERDICT_APPROVE = 1,
    TND_VERDICT_REVISE,
} tnd_verdict;

typedef enum tnd_severity {
    TND_SEVERITY_MINOR = 1,
    TND_SEVERITY_MAJOR,
    TND_SEVERITY_CRITICAL,
} tnd_severity;

typedef enum tnd_issue_type {
    TND_ISSUE_MISSING = 1,
    TND_ISSUE_UNSUPPORTED,
    TND_ISSUE_INCORRECT,
    TND_ISSUE_SUPERFLUOUS,
    TND_ISSUE_SAFETY,
    TND_ISSUE_STYLE,
} tnd_issue_type;

typedef struct tnd_issue {
    tnd_issue_type type;
    tnd_severity severity;
    char *file; /* may be NULL */
    long line;  /* 0 when unknown */
    char *description;
    char *evidence;      /* may be NULL */
    char *suggested_fix; /* may be NULL */
} tnd_issue;

/* The audit criteria, in the order the critique's "criteria" object
 * names them. */
typedef enum tnd_criterion_kind {
    TND_CRITERION_COMPLETENESS = 0,
    TND_CRITERION_CORRECTNESS,
    TND_CRITERION_SAFETY,
    TND_CRITERION_QUALITY,
    TND_CRITERIA
} tnd_criterion_kind;

typedef struct tnd_criterion {
    bool present; /* the critique scored this criterion */
    double score; /* 0..1 */
    char *reason;
} tnd_criterion;

typedef struct tnd_critique {
    tnd_verdict verdict;
    double confidence; /* 0..1 */
    tnd_criterion criteria[TND_CRITERIA];
    tnd_issue *issues;
    size_t nissues;
    char *summary;
} tnd_critique;

/* Check a critique object against the schema and convert it; the error
 * names the field at fault ("issues[2]: field 'severity' must be one of
 * minor, major, critical, got \"huge\""). Caller frees *out with
 * tnd_critique_destroy. */
int tnd_critique_from_json(tnd_critique **out, json_object *obj);

/* The critique as a new JSON object (caller puts). */
json_object *tnd_critique_to_json(const tnd_critique *c);

/* Free; sets *c to NULL; safe on NULL. */
void tnd_critique_destroy(tnd_critique **c);

/* Names for people and for JSON; "?" when out of range. */
const char *tnd_verdict_name(tnd_verdict v);
const char *tnd_severity_name(tnd_severity s);
const char *tnd_issue_type_name(tnd_issue_type t);
const char *tnd_criterion_name(tnd_criterion_kind k);

#endif
