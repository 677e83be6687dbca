/* tnd_coder - the coder agent's work: turn a "code" request into edits.
 *
 * Asks the model with the coder prompt, parses the edit blocks, and when
 * the answer has none that can be used, asks once more with the exact
 * problem. An answer still unusable after that is not an agent failure:
 * the reply carries zero edits and a format_error, and the orchestrator
 * feeds it back like any failed attempt. */
#ifndef TND_CODER_H
#define TND_CODER_H

#include <stddef.h>

#include "agents/llm.h"

/* Handle one request body; returns the reply body (caller frees), which
 * is an "error" body when the request was malformed or the model could
 * not be reached. */
char *tnd_coder_handle(tnd_llm *llm, const char *body, size_t len,
                       size_t *reply_len);

#endif
