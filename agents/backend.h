/* tnd_llm_backend - what an LLM backend implements (see llm.h).
 *
 * Backends do one attempt of one call; llm.c owns retries, deadlines and
 * accounting around them. A header-only contract: each backend module
 * exports one const tnd_llm_backend. */
#ifndef TND_BACKEND_H
#define TND_BACKEND_H

#include <stdatomic.h>

#include "agents/llm.h"
#include "common/config.h"

/* One attempt of one call, as llm.c hands it to a backend. */
typedef struct tnd_llm_call {
    const tnd_prompt *prompt;
    const atomic_int *cancel; /* may be NULL; stop when non-zero */
    int cancel_fd;            /* with cancel: readable once stopping; -1 */
    long timeout_ms;          /* bounds this attempt */
    tnd_llm_delta_fn delta;   /* may be NULL: streamed text as it comes */
    void *delta_payload;
} tnd_llm_call;

typedef struct tnd_llm_backend {
    tnd_provider provider; /* the provider it speaks for */
    const char *base_url;  /* the API's own base URL; "" when none */
    const char *key_env;   /* the variable that usually holds its key; ""
                              when it needs none */
    /* Open a backend for cfg; NULL with the error set. */
    void *(*open)(const tnd_llm_config *cfg);
    /* One attempt. Returns 0 with out->text (and, when the API said,
     * out->usage tokens and out->truncated) filled; TND_ERETRY for a transient
     * failure with *retry_after_ms set (> 0) when the server asked for a delay;
     * TND_ECANCELLED; or -1 for a permanent failure. The error never
     * contains the API key. A streaming backend calls call->delta with
     * each piece of text as it arrives (and may have called it before a
     * failure: the next attempt starts the text again). */
    int (*complete)(void *state, tnd_llm_answer *out, const tnd_llm_call *call,
                    long *retry_after_ms);
    /* Free the state; safe on NULL. */
    void (*close)(void *state);
} tnd_llm_backend;

#endif
