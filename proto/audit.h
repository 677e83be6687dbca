/* tnd_audit - the reviewer's request and reply bodies (see proto/body.h);
 * the critique a reply carries is proto/critique_schema.h's. */
#ifndef TND_AUDIT_H
#define TND_AUDIT_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

#include "common/names.h"
#include "proto/body.h"
#include "proto/critique_schema.h"
#include "proto/tree.h"

typedef enum tnd_skill_status {
    TND_SKILL_PASS = 0,
    TND_SKILL_FAIL,    /* ran and reported failure (non-zero exit) */
    TND_SKILL_TIMEOUT, /* killed at its deadline */
    TND_SKILL_ERROR,   /* could not run at all */
    TND_SKILL_SKIPPED, /* not run: the change touches none of its paths */
} tnd_skill_status;

TND_NAMES_INT_SIZED(tnd_skill_status);

/* Where a skill's command ran (skills[].sandbox). */
typedef enum tnd_isolation {
    TND_ISOLATION_UNSAID = 0,  /* not said: a built-in or skipped skill,
                                  or a reviewer that does not say */
    TND_ISOLATION_BWRAP,       /* "bwrap": in the bubblewrap sandbox */
    TND_ISOLATION_NONE,        /* "none": unsandboxed, as configured */
    TND_ISOLATION_UNAVAILABLE, /* "unavailable": not run; the config wants
                                  the sandbox and the host has none */
} tnd_isolation;

TND_NAMES_INT_SIZED(tnd_isolation);

/* Most bytes of a skill result's "ended". */
#define TND_AUDIT_MAX_ENDED 256

/* Most locations one skill result carries, and most changed files. */
#define TND_AUDIT_MAX_LOCATIONS 50
#define TND_AUDIT_MAX_CHANGED   200

/* The largest line and column a location carries (the line bound is an
 * issue's too): a reply with a larger one is refused whole. */
#define TND_AUDIT_MAX_LINE TND_CRITIQUE_MAX_LINE
#define TND_AUDIT_MAX_COL  1000000L

/* A place in the workspace a skill's output points at. */
typedef struct tnd_location {
    char *file; /* relative to the workspace */
    long line;  /* 1..TND_AUDIT_MAX_LINE */
    long col;   /* 1..TND_AUDIT_MAX_COL; 0 when unknown */
} tnd_location;

typedef struct tnd_skill_result {
    char *name;
    tnd_skill_status status;
    bool required;
    int exit_code;
    long duration_ms;
    char *command;           /* as configured, for people */
    char *output;            /* trimmed: head and tail */
    tnd_location *locations; /* from the output; may be NULL when none */
    size_t nlocations;
    char **changed; /* workspace files the skill modified or deleted;
                       may be NULL when none */
    size_t nchanged;
    tnd_isolation sandbox;
    char *ended; /* how it ended when not by exiting itself, in words
                    ("killed: over the 512-process limit", "timed out
                    after 600 s"); NULL otherwise */
} tnd_skill_result;

/* orchestrator -> reviewer */
typedef struct tnd_audit_request {
    char *task_id;
    int attempt;
    char *task;
    char *workspace; /* absolute path of the tree to audit: a hint only a
                        reviewer started with --runtime DIR uses, when it
                        lies beneath DIR; NULL when not sent */
    char *tree;      /* hash of the base tree's manifest (proto/tree.h);
                        NULL when not sent */
    tnd_tree_change *changes; /* the attempt's files against the base */
    size_t nchanges;
    tnd_blob *blobs; /* contents carried along: the manifest, changed
                        files, what a "need" asked for */
    size_t nblobs;
    char *diff;    /* the proposal as a unified diff against the base */
    bool critique; /* ask the model for a critique (default true) */
    bool baseline; /* the unmodified tree, before attempt 1: every
                      skill runs whatever its paths, built-ins (which
                      judge a diff) are skipped */
    tnd_skill_result *skills; /* results of a run already made (the
                                 reviewer then runs no skill), or NULL */
    size_t nskills;
} tnd_audit_request;

/* The request's body (see proto/body.h). */
char *tnd_audit_request_encode(const tnd_audit_request *r, size_t *len_out);
int tnd_audit_request_decode(tnd_audit_request *out, const char *body,
                             size_t len);
void tnd_audit_request_clear(tnd_audit_request *r);

/* reviewer -> orchestrator */
typedef struct tnd_audit_reply {
    char *task_id; /* echoed from the request */
    int attempt;
    tnd_skill_result *skills;
    size_t nskills;
    tnd_critique *critique; /* NULL when none could be had */
    char *critique_error;   /* why critique is NULL; else NULL */
    tnd_usage usage;
} tnd_audit_reply;

/* The reply's body (see proto/body.h). */
char *tnd_audit_reply_encode(const tnd_audit_reply *r, size_t *len_out);
int tnd_audit_reply_decode(tnd_audit_reply *out, const char *body, size_t len);
/* The same from a body already parsed (o is borrowed). */
int tnd_audit_reply_from_json(tnd_audit_reply *out, json_object *o);
void tnd_audit_reply_clear(tnd_audit_reply *r);

/* Free one skill result's strings, locations and changed files. */
void tnd_skill_result_clear(tnd_skill_result *r);

/* How much of a skill result tnd_skill_result_to_json writes. */
typedef enum tnd_skill_json {
    TND_SKILL_JSON_SUMMARY, /* name, status, required, exit_code,
                               duration_ms, and sandbox and ended when
                               said: report.json's form (the rest is in
                               the journal) */
    TND_SKILL_JSON_FULL,    /* and command, output, locations, changed:
                               the audit_reply's form */
} tnd_skill_json;

/* A skill result as a new JSON object, in the given form. */
json_object *tnd_skill_result_to_json(const tnd_skill_result *s,
                                      tnd_skill_json form);

/* Names for people and for JSON; "?" when out of range. */
const char *tnd_skill_status_name(tnd_skill_status s);
const char *tnd_isolation_name(tnd_isolation i); /* "" for UNSAID */

/* The status called name (as a skill result's "status" writes it) into
 * *out; -1 with "unknown skill status 'NAME' (known: pass, ...)". */
int tnd_skill_status_parse(tnd_skill_status *out, const char *name);

#endif
