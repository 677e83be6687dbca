/* tnd_apierror - what an LLM API's error answer means, said so a person
 * can act on it.
 *
 * Shared by the HTTP backends (through agents/endpoint.h for a status):
 * the server's own explanation pulled out of the error body, and the
 * HTTP status mapped to a message that names the URL and the fix, and to
 * "retry" or "give up". */
#ifndef TND_APIERROR_H
#define TND_APIERROR_H

#include <stdbool.h>
#include <stddef.h>

/* What a backend knows that makes a message useful. */
typedef struct tnd_apierror_ctx {
    const char *url;       /* the endpoint that answered */
    const char *key_env;   /* the variable meant to hold the key; "" */
    bool key_set;          /* a key was sent */
    const char *not_found; /* the fix to suggest on a 404, e.g. "check
                              the model name 'x' and the base URL" */
} tnd_apierror_ctx;

/* The server's explanation in an error body: error.message (OpenAI,
 * Anthropic), a string "error" (Ollama), or else the body itself when it
 * is text. Control characters replaced, cut to about 300 bytes, secrets
 * redacted. Caller frees; "" when there is nothing to say. */
char *tnd_apierror_message(const char *body, size_t len);

/* Set the error for an answer with an HTTP status other than 200:
 * "429 from URL: MESSAGE", plus the key variable to check for 401/403
 * and ctx->not_found for 404. Returns TND_ERETRY for statuses worth
 * retrying (408, 409, 425, 429, 500, 502, 503, 504, 529 and other 5xx),
 * -1 for the rest. */
int tnd_apierror_status(const tnd_apierror_ctx *ctx, long status,
                        const char *body, size_t len);

#endif
