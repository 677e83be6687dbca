/* tnd_transcript - every LLM exchange of one request, sent back with the
 * reply so the session keeps it.
 *
 * Plugged into an LLM as its exchange listener, it collects each call's
 * prompt (system and user), answer or error, usage and latency, secrets
 * redacted. tnd_transcript_attach adds them to the reply body as
 * "exchanges" (see proto/PROTOCOL.md); the orchestrator writes them to
 * the session's llm/ folder and keeps them out of the journal. Bounded:
 * each text is cut at TND_TRANSCRIPT_MAX_TEXT bytes (head kept, marked),
 * and once the exchanges hold TND_TRANSCRIPT_MAX bytes, later ones keep
 * their usage but not their texts. */
#ifndef TND_TRANSCRIPT_H
#define TND_TRANSCRIPT_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

#include "agents/llm.h"

#define TND_TRANSCRIPT_MAX_TEXT (512 << 10)
#define TND_TRANSCRIPT_MAX      (4 << 20)

typedef struct tnd_transcript {
    json_object *list; /* the exchanges so far */
    size_t bytes;      /* text bytes kept */
    bool dropped;      /* the exchange being added lost a text */
} tnd_transcript;

void tnd_transcript_init(tnd_transcript *t);

/* A tnd_llm_exchange_fn: payload is the tnd_transcript. */
void tnd_transcript_exchange(const tnd_prompt *prompt,
                             const tnd_llm_answer *answer, const char *error,
                             void *payload);

/* The reply body with "exchanges" added (body is freed and replaced; a
 * body that is not a JSON object is returned as it is). Empties t. */
char *tnd_transcript_attach(tnd_transcript *t, char *body, size_t *len);

/* Free what was collected. */
void tnd_transcript_clear(tnd_transcript *t);

#endif
