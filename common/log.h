/* tnd_log - diagnostics on stderr, with secrets redacted.
 *
 * One line per message: "tandem-coder[4242] info: connected to ipc://...".
 * Any value registered with tnd_log_secret() is replaced by "[redacted]"
 * before a line is written, so an API key cannot reach a log even when
 * some error text quotes it. */
#ifndef TND_LOG_H
#define TND_LOG_H

#include <stdbool.h>

#include "common/error.h"

typedef enum tnd_log_level {
    TND_LOG_ERROR = 0,
    TND_LOG_WARN,
    TND_LOG_INFO,
    TND_LOG_DEBUG,
} tnd_log_level;

/* Name the program for log lines and set the level (messages above it
 * are dropped). The name is copied. */
void tnd_log_init(const char *program, tnd_log_level level);

/* A line is open on the terminal stderr goes to (a progress line that
 * redraws itself, with no newline yet): the next log line clears it
 * first, and closes it. A warning went on after "coder: working (15 s)"
 * on the same line. */
void tnd_log_line_open(bool open);

/* Current level. */
tnd_log_level tnd_log_level_get(void);

/* Parse "error", "warn", "info", "debug"; -1 when unknown. */
int tnd_log_level_parse(const char *name);

/* Never print value: every later line has it replaced, and so do its
 * forms inside a JSON string (with '/' escaped or not, quotes,
 * backslashes and control characters escaped). Values that are no
 * secret (tnd_log_secret_worth) are ignored. The value is copied; up to
 * 16 values are remembered. */
void tnd_log_secret(const char *value);

/* Whether value can be a secret worth hiding: 4 bytes or more (shorter
 * ones would redact ordinary words), and not a placeholder that local
 * model servers document for clients that insist on a key ("EMPTY",
 * "none", "dummy", "ollama", "lm-studio", ..., in any case), which hides
 * nothing and is a word of much code: hidden, every file tandem wrote
 * masked that word and every change holding it was refused. */
bool tnd_log_secret_worth(const char *value);

/* Whether text holds a registered secret, in any of its forms. */
bool tnd_log_holds_secret(const char *text);

/* For text that leaves in pieces (a model's answer streamed as progress
 * messages): how much of text[0..len) can go now, so that no registered
 * secret is cut in two between this piece and the next one. Send
 * text[0..cut), redacted, and keep the rest for the next piece; the last
 * piece goes whole. */
size_t tnd_log_safe_cut(const char *text, size_t len);

/* Replace every registered secret in text, in place where it fits;
 * returns text. For strings that leave the process by other routes
 * (session files, events). Redact before cutting a text, never after:
 * a cut through a secret leaves its head, which no later redaction
 * recognises. */
char *tnd_log_redact(char *text);

/* tnd_str_printable(text, max) of text with every registered secret
 * redacted first, so the cut never leaves part of one. Caller frees. */
char *tnd_log_printable(const char *text, size_t max);

/* As tnd_log_redact, for JSON text: only inside string values, never in
 * an object's key, a number or a literal, so the text stays the same
 * JSON (a short secret, "1298", made a token count "****" and the
 * journal unreadable). Returns text. */
char *tnd_log_redact_json(char *text);

/* Write one line at level: redacted whole, then cut to 8 KiB. */
void tnd_log(tnd_log_level level, const char *fmt, ...) TND_PRINTF(2, 3);

#define tnd_log_error(...) tnd_log(TND_LOG_ERROR, __VA_ARGS__)
#define tnd_log_warn(...)  tnd_log(TND_LOG_WARN, __VA_ARGS__)
#define tnd_log_info(...)  tnd_log(TND_LOG_INFO, __VA_ARGS__)
#define tnd_log_debug(...) tnd_log(TND_LOG_DEBUG, __VA_ARGS__)

#endif
