/* tnd_error - the last error of this thread, in words a person can act on.
 *
 * Functions that can fail return 0 on success and -1 (or a named negative
 * below) on failure, and leave the detail here. Callers that add context
 * use tnd_error_prefix() so the final message reads outermost first:
 * "agents.yaml: gate: max_iterations must be 1..50, got 0". */
#ifndef TND_ERROR_H
#define TND_ERROR_H

#include <stdbool.h>
#include <stddef.h>

enum {
    TND_OK = 0,
    TND_ERROR = -1,
    TND_ETIMEOUT = -2,   /* a deadline passed */
    TND_ECANCELLED = -3, /* stopped on request (signal, shutdown) */
    TND_ENOTFOUND = -4,  /* the named thing does not exist */
    TND_ECONFIG = -5,    /* configuration or usage error (exit code 2) */
    TND_ERETRY = -6,     /* transient: the same call may succeed later */
};

#if defined(__GNUC__)
#define TND_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define TND_PRINTF(a, b)
#endif

/* Replace the thread's error message; returns TND_ERROR so callers can
 * write `return tnd_error_set(...)`. */
int tnd_error_set(const char *fmt, ...) TND_PRINTF(1, 2);

/* Like tnd_error_set but returns TND_ECONFIG: for usage and configuration
 * mistakes, which commands report with exit code 2. */
int tnd_error_config(const char *fmt, ...) TND_PRINTF(1, 2);

/* Like tnd_error_set but appends ": strerror(errno)". */
int tnd_error_sys(const char *fmt, ...) TND_PRINTF(1, 2);

/* Whether the current message was set by tnd_error_config: a usage or
 * configuration mistake, for a caller whose callee fails with NULL (a
 * constructor) to report with exit code 2. tnd_error_prefix keeps it. */
bool tnd_error_is_config(void);

/* Put "prefix: " in front of the current message. */
void tnd_error_prefix(const char *fmt, ...) TND_PRINTF(1, 2);

/* The current message; borrowed, valid until the next tnd_error_* call in
 * this thread. Never NULL ("" when no error was set). */
const char *tnd_error_last(void);

/* Forget the current message. */
void tnd_error_clear(void);

#endif
