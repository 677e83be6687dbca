/* tnd_llm - one interface to every LLM backend.
 *
 * An agent opens one tnd_llm from its agents.yaml section and asks it for
 * completions. The interface owns what every backend needs the same way:
 * retries of transient failures with exponential backoff and full jitter
 * (honouring Retry-After), an overall deadline, cancellation, token
 * accounting (estimated, and marked so, when the API reports none), and
 * the promise that the API key never appears in an error or a log line.
 * Backends: replay (a recorded cassette, offline), openai (Chat
 * Completions over libcurl), anthropic, ollama and command (a program of
 * the user's); each declares its provider's base URL and key variable,
 * which apply when agents.yaml names none (common/config.c knows only
 * the providers' names). */
#ifndef TND_LLM_H
#define TND_LLM_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

#include "common/config.h"
#include "proto/body.h"

typedef struct tnd_llm tnd_llm;

typedef struct tnd_prompt {
    const char *system; /* instructions */
    const char *user;   /* the task, files, feedback */
    const char *role;   /* "coder" or "reviewer": keys recordings, logs */
    const char *task_id;
    int attempt; /* the request's attempt, 1-based */
    int call;    /* this call within the request, 1-based (a
                    re-ask after a bad answer is call 2) */
} tnd_prompt;

typedef struct tnd_llm_answer {
    char *text;      /* owned */
    tnd_usage usage; /* calls = 1, tokens, latency, retries */
    bool truncated;  /* the provider stopped it at max_tokens (OpenAI
                        finish_reason "length", Anthropic stop_reason
                        "max_tokens", Ollama done_reason "length"), or
                        with its content filter (filtered): the text is
                        only the start of what the model meant, and must
                        not be used as a whole answer */
    bool filtered;   /* truncated by the provider's content filter
                        (OpenAI "content_filter", Anthropic "refusal"),
                        not at max_tokens */
} tnd_llm_answer;

/* How a provider said an answer ended (tnd_endpoint_answer's stop). */
enum { TND_LLM_DONE = 0, TND_LLM_CUT = 1, TND_LLM_FILTERED = 2 };

/* Receives streamed answer text as it arrives (see tnd_llm_set_delta).
 * Runs on the thread that called tnd_llm_complete. */
typedef void (*tnd_llm_delta_fn)(const char *text, size_t len, void *payload);

/* Open a backend. NULL with the error set when the configuration cannot
 * work (unknown provider, unreadable cassette...). */
tnd_llm *tnd_llm_new(const tnd_llm_config *cfg);

/* Free; sets *self_p to NULL. Safe on NULL. */
void tnd_llm_destroy(tnd_llm **self_p);

/* Stop waiting (between retries, inside a request) once *cancel is
 * non-zero, or cancel_fd (-1: none) is readable: a request waiting on
 * the server wakes at that fd at once. Both borrowed; NULL clears
 * them. */
void tnd_llm_set_cancel(tnd_llm *self, const atomic_int *cancel, int cancel_fd);

/* Hear the answer's text while it streams in (backends that stream call
 * it; the others do not). fn NULL stops it. When an attempt fails and is
 * retried, fn hears the text again from the start. */
void tnd_llm_set_delta(tnd_llm *self, tnd_llm_delta_fn fn, void *payload);

/* Hears every exchange once tnd_llm_complete is done with it: the
 * prompt, and the answer or (answer NULL) the error that ended the call.
 * Runs on the calling thread. */
typedef void (*tnd_llm_exchange_fn)(const tnd_prompt *prompt,
                                    const tnd_llm_answer *answer,
                                    const char *error, void *payload);

/* Set (fn NULL: clear) the exchange listener; see agents/transcript.h. */
void tnd_llm_set_exchange(tnd_llm *self, tnd_llm_exchange_fn fn, void *payload);

/* Record every answer: after each successful tnd_llm_complete, append
 * one line to the file at path (created 0600) with a single write(2), so
 * several processes can share the file. The line is the compact JSON
 * {"role", "attempt", "call", "answer", "usage": {"prompt_tokens",
 * "completion_tokens"}, "estimated"} and a newline, the answer redacted
 * of registered secrets (see proto/PROTOCOL.md, "Recording"). A failed
 * write is logged and does not fail the call. path NULL stops recording.
 * -1 with the error set when the file cannot be opened. */
int tnd_llm_set_record(tnd_llm *self, const char *path);

/* Ask for one completion. Returns 0 with *out filled (free with
 * tnd_llm_answer_clear), TND_ECANCELLED, or -1 with an error that says
 * what to fix. */
int tnd_llm_complete(tnd_llm_answer *out, tnd_llm *self,
                     const tnd_prompt *prompt);

/* Free an answer's text; safe on a zeroed answer. */
void tnd_llm_answer_clear(tnd_llm_answer *answer);

/* "openai gpt-4o-mini at https://api.openai.com/v1", for logs. Borrowed. */
const char *tnd_llm_describe(const tnd_llm *self);

/* The same for a config that is not open: "replay of CASSETTE", "command
 * 'PROGRAM'", or "PROVIDER MODEL at BASE_URL". Caller frees. */
char *tnd_llm_config_describe(const tnd_llm_config *cfg);

/* The base URL to use: the configured one, or the provider's own
 * (https://api.openai.com/v1, https://api.anthropic.com,
 * http://localhost:11434). Borrowed; "" for providers without one. */
const char *tnd_llm_base_url(const tnd_llm_config *cfg);

/* The URL of path ("/chat/completions") under that base, its trailing
 * slashes dropped. Caller frees. */
char *tnd_llm_url(const tnd_llm_config *cfg, const char *path);

/* The variable that holds the key: the configured one, or the provider's
 * usual (OPENAI_API_KEY, ANTHROPIC_API_KEY). Borrowed; "" when the
 * provider needs none. */
const char *tnd_llm_key_env(const tnd_llm_config *cfg);

/* The variable holding the key cfg needs and lacks, or NULL: its
 * provider needs a key (openai, anthropic), the base URL is the
 * provider's own (a server at another URL may need none), no configured
 * header carries a key (Authorization, x-api-key), and the variable is
 * unset or empty. A run says so before it starts. Borrowed. */
const char *tnd_llm_key_missing(const tnd_llm_config *cfg);

/* Register the value of every key variable the config's models use
 * (tnd_llm_key_env of the coder's, the reviewer's and each quorum
 * member's) with the redactor, so whatever this process writes has it
 * replaced. The orchestrator calls it: it never uses the keys, but a
 * model may echo one into an answer it journals. */
void tnd_llm_secrets_register(const tnd_config *cfg);

/* Register the value of a configured header ("Name: value") whose name
 * looks like it carries a credential (auth, key, token, secret,
 * password, cookie) with the redactor, as a key is. */
void tnd_llm_header_guard(const char *line);

/* Register the password of a URL's user information
 * ("http://user:PASSWORD@host/v1") with the redactor, as a key is: it
 * went in clear to stderr, report.json, the journal and the logs. */
void tnd_llm_url_guard(const char *url);

/* Whether text holds a registered secret: NULL when not; else what it
 * is, for a message (the key variable whose value it holds, or "a
 * credential header of the config"). Never the value. */
const char *tnd_llm_secret_in(const tnd_config *cfg, const char *text);

/* Register the values of the built-in providers' key variables
 * (OPENAI_API_KEY, ANTHROPIC_API_KEY), set or not in the config: a
 * `command` model program that wraps a provider reads them, and may
 * print one in an error. */
void tnd_llm_standard_keys_register(void);

/* For an agent, once its model is made (the backend keeps its own copy
 * of the key): register the key of llm, blank its value in the
 * environment block and unset it, so a skill or any other process that
 * reads this one's /proc/PID/environ finds nothing. */
void tnd_llm_secret_hide(const tnd_llm_config *llm);

/* Whether headers ("Name: value", NULL-terminated, may be NULL) set the
 * header name (any case): a configured header wins over tandem's own. */
bool tnd_llm_header_set(char *const *headers, const char *name);

/* Rough token count of a text (about 4 bytes a token), for APIs that
 * report none. */
long tnd_llm_estimate_tokens(const char *text);

#endif
