/* tnd_body - the envelope every JSON body shares.
 *
 * Every body inside an MDP request or reply is one JSON object with
 * "tandem": 1 (the body version) and "type". The orchestrator asks the
 * coder for a "code" proposal (proto/code.h) and the reviewer for an
 * "audit" (proto/audit.h); agents answer with "code_reply",
 * "audit_reply", or "error". proto/PROTOCOL.md is the reference; the
 * limits are part of the contract, and every decode checks them so that
 * nothing a peer sends can make us allocate without bound or act on half
 * a message. Decoding an "error" body fails with the agent's own message,
 * so callers treat a remote failure like any other.
 *
 * Each body type T has the same three functions: tnd_T_encode returns a
 * new NUL-terminated body (caller frees; *len_out may be NULL);
 * tnd_T_decode fills a zeroed struct, which the caller frees with
 * tnd_T_clear, also after a failure. */
#ifndef TND_BODY_H
#define TND_BODY_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

#define TND_BODY_VERSION 1

/* Limits (bytes unless said otherwise). */
#define TND_BODY_MAX_ID      128
#define TND_BODY_MAX_TASK    (64 << 10)
#define TND_BODY_MAX_PATH    1024
#define TND_BODY_MAX_FILES   2000
#define TND_BODY_MAX_FILE    (4 << 20)
#define TND_BODY_MAX_TEXT    (1 << 20) /* feedback, rationale, map */
#define TND_BODY_MAX_DIFF    (8 << 20)
#define TND_BODY_MAX_EDITS   500
#define TND_BODY_MAX_SKILLS  32
#define TND_BODY_MAX_OUTPUT  (1 << 20) /* one skill's output */
#define TND_BODY_MAX_ISSUES  200
#define TND_BODY_MAX_NOTE    (16 << 10) /* one issue's texts */
#define TND_BODY_MAX_ATTEMPT 1000

/* LLM use of one reply. */
typedef struct tnd_usage {
    long calls;
    long prompt_tokens;
    long completion_tokens;
    bool estimated; /* the API gave no counts; these are estimates */
    long latency_ms;
    long retries;
} tnd_usage;

/* Add b into a. */
void tnd_usage_add(tnd_usage *a, const tnd_usage *b);

/* A new body object with the version and type set. */
json_object *tnd_body_new(const char *type, const char *task_id, int attempt);

/* Parse a body and check its envelope: version 1 and the expected type.
 * An "error" body fails with "agent error: MESSAGE". *out is a new
 * reference the caller puts. */
int tnd_body_open(json_object **out, const char *body, size_t len,
                  const char *type);

/* tnd_body_open's checks of a body already parsed (obj is borrowed). */
int tnd_body_check(json_object *obj, const char *type);

/* The envelope of a body already parsed: its "type" into type (at least
 * 32 bytes); -1 when obj is not a tandem body of a version we read. */
int tnd_body_envelope(json_object *obj, char *type, size_t size);

/* Read the "task_id" and "attempt" every request and reply carries. */
int tnd_body_ids(char **task_id, int *attempt, json_object *obj);

/* The key names usage is written with. Both are file formats people's
 * tools read, so neither may change: the protocol's (PROTOCOL.md:
 * "calls", "prompt_tokens", "completion_tokens", ...) and report.json's
 * "by_role" entries (README: "llm_calls", "prompt", "completion", ...,
 * as its top-level "llm_calls" and "tokens"). Same fields, same order. */
typedef enum tnd_usage_keys {
    TND_USAGE_WIRE = 0,
    TND_USAGE_REPORT = 1,
} tnd_usage_keys;

/* Usage as a new JSON object with the given key names, and back from the
 * protocol's names (missing fields are 0). */
json_object *tnd_usage_to_json(const tnd_usage *u, tnd_usage_keys keys);
int tnd_usage_from_json(tnd_usage *out, json_object *obj);

/* An "error" reply: the agent could not do the request. Caller frees. */
char *tnd_error_reply_encode(const char *task_id, int attempt,
                             const char *message, size_t *len_out);

/* The "type" of a body into out (at least 32 bytes); -1 when the body is
 * not a tandem body of a version we read. */
int tnd_body_type(char *out, size_t size, const char *body, size_t len);

/* Serialise obj (consumed: its reference is put) as a body. Caller frees
 * the result. */
char *tnd_body_finish(json_object *obj, size_t *len_out);

#endif
