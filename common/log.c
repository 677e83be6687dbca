/* stderr diagnostics with secret redaction (see log.h). Lines are built in
 * a local buffer and written with one write(2) under a mutex, so the
 * threads of an agent never interleave half lines. */
#include "common/log.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "common/str.h"
#include "common/xalloc.h"

#define LINE_MAX_BYTES 8192
/* Texts to redact: each secret as it is and in its two JSON forms, a
 * credential header's whole value and its token apart, a key with
 * trailing blanks with and without them; 18 models with a key and a few
 * headers each fit many times over. Past it, a warning (48, silently
 * full, let the last secrets through in clear). */
#define SECRETS_MAX 512

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char program[64] = "tandem";
static tnd_log_level current = TND_LOG_INFO;
static char *secrets[SECRETS_MAX];
static size_t nsecrets;
static bool secrets_full, said_full; /* one was not kept; said so once */

static const char *const level_names[] = {"error", "warn", "info", "debug"};

void tnd_log_init(const char *name, tnd_log_level level)
{
    pthread_mutex_lock(&lock);
    snprintf(program, sizeof(program), "%s", name);
    current = level;
    pthread_mutex_unlock(&lock);
}

tnd_log_level tnd_log_level_get(void)
{
    return current;
}

int tnd_log_level_parse(const char *name)
{
    for (int i = 0; i < 4; i++)
        if (strcmp(name, level_names[i]) == 0)
            return i;
    return -1;
}

/* Remember one text to redact, with the lock held. */
static void add_locked(const char *text)
{
    for (size_t i = 0; i < nsecrets; i++)
        if (strcmp(secrets[i], text) == 0)
            return;
    if (nsecrets < SECRETS_MAX)
        secrets[nsecrets++] = tnd_xstrdup(text);
    else
        secrets_full = true;
}

/* value as a JSON string writer puts it between the quotes: '"', '\\'
 * and control characters escaped, and '/' too when slash. Caller frees. */
static char *json_form(const char *value, bool slash)
{
    char *out = tnd_xmalloc(strlen(value) * 6 + 1), *o = out;

    for (const unsigned char *p = (const unsigned char *)value; *p; p++) {
        const char *esc = NULL;
        switch (*p) {
        case '"':
            esc = "\\\"";
            break;
        case '\\':
            esc = "\\\\";
            break;
        case '\b':
            esc = "\\b";
            break;
        case '\f':
            esc = "\\f";
            break;
        case '\n':
            esc = "\\n";
            break;
        case '\r':
            esc = "\\r";
            break;
        case '\t':
            esc = "\\t";
            break;
        case '/':
            esc = slash ? "\\/" : NULL;
            break;
        default:
            break;
        }
        if (esc) {
            strcpy(o, esc);
            o += strlen(esc);
        } else if (*p < 0x20) {
            o += sprintf(o, "\\u%04x", *p);
        } else {
            *o++ = (char)*p;
        }
    }
    *o = '\0';
    return out;
}

bool tnd_log_secret_worth(const char *value)
{
    static const char *const placeholders[] = {
        "empty",       "none",       "null",    "dummy",
        "fake",        "test",       "api-key", "ollama",
        "lm-studio",   "not-needed", "no-key",  "sk-no-key-required",
        "placeholder", "changeme",   "unused"};

    if (!value || strlen(value) < 4)
        return false;
    for (size_t i = 0; i < sizeof(placeholders) / sizeof(placeholders[0]); i++)
        if (strcasecmp(value, placeholders[i]) == 0)
            return false;
    return true;
}

void tnd_log_secret(const char *value)
{
    char *plain, *slashed;
    bool full;
    size_t n = value ? strlen(value) : 0;

    /* "KEY \n" is known as "KEY" too: a model echoes the key, not the
     * blanks a file or a shell left after it */
    if (n && (value[n - 1] == ' ' || value[n - 1] == '\t' ||
              value[n - 1] == '\n' || value[n - 1] == '\r')) {
        char *trimmed = tnd_xstrdup(value);
        while (n && (trimmed[n - 1] == ' ' || trimmed[n - 1] == '\t' ||
                     trimmed[n - 1] == '\n' || trimmed[n - 1] == '\r'))
            trimmed[--n] = '\0';
        tnd_log_secret(trimmed);
        free(trimmed);
    }
    if (!tnd_log_secret_worth(value))
        return;
    plain = json_form(value, false);
    slashed = json_form(value, true);
    pthread_mutex_lock(&lock);
    add_locked(value);
    add_locked(plain);
    add_locked(slashed);
    full = secrets_full && !said_full;
    said_full = said_full || full;
    pthread_mutex_unlock(&lock);
    if (full)
        fprintf(stderr,
                "%s: warning: more than %d secret texts to redact; the "
                "last were not kept, and may reach files in clear: use "
                "fewer keys and credential headers\n",
                program, SECRETS_MAX);
    free(plain);
    free(slashed);
}

bool tnd_log_holds_secret(const char *text)
{
    bool found = false;

    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < nsecrets && !found; i++)
        found = strstr(text, secrets[i]) != NULL;
    pthread_mutex_unlock(&lock);
    return found;
}

size_t tnd_log_safe_cut(const char *text, size_t len)
{
    size_t longest = 0, cut;

    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < nsecrets; i++)
        if (strlen(secrets[i]) > longest)
            longest = strlen(secrets[i]);
    cut = longest > len ? 0 : len - (longest ? longest - 1 : 0);
    /* a secret that starts before the cut ends before len: move the cut
     * past it, so it goes out whole and is redacted; again until no
     * secret straddles the cut */
    for (bool moved = true; moved && cut > 0 && cut < len;) {
        moved = false;
        for (size_t i = 0; i < nsecrets; i++) {
            size_t n = strlen(secrets[i]);
            for (size_t at = cut >= n ? cut - n + 1 : 0; at < cut; at++)
                if (at + n > cut && at + n <= len &&
                    memcmp(text + at, secrets[i], n) == 0) {
                    cut = at + n;
                    moved = true;
                    break;
                }
        }
    }
    pthread_mutex_unlock(&lock);
    return cut;
}

/* Redact with the lock held. A secret of 10 bytes or more becomes
 * "[redacted]" (the text shrinks); a shorter one becomes stars. */
static void redact_locked(char *text)
{
    static const char mark[] = "[redacted]";

    for (size_t i = 0; i < nsecrets; i++) {
        size_t n = strlen(secrets[i]);
        char *p = text;
        while ((p = strstr(p, secrets[i])) != NULL) {
            if (n >= sizeof(mark) - 1) {
                memcpy(p, mark, sizeof(mark) - 1);
                memmove(p + sizeof(mark) - 1, p + n, strlen(p + n) + 1);
                p += sizeof(mark) - 1;
            } else {
                memset(p, '*', n);
                p += n;
            }
        }
    }
}

char *tnd_log_redact(char *text)
{
    pthread_mutex_lock(&lock);
    redact_locked(text);
    pthread_mutex_unlock(&lock);
    return text;
}

char *tnd_log_printable(const char *text, size_t max)
{
    char *whole = tnd_log_redact(tnd_xstrdup(text));
    char *out = tnd_str_printable(whole, max);

    free(whole);
    return out;
}

/* The end of the JSON string whose opening quote is at p: its closing
 * quote, or the text's end when there is none. */
static char *string_end(char *p)
{
    for (p++; *p && *p != '"'; p++)
        if (*p == '\\' && p[1])
            p++;
    return p;
}

char *tnd_log_redact_json(char *text)
{
    char *p = text;

    pthread_mutex_lock(&lock);
    while ((p = strchr(p, '"')) != NULL) {
        char *end = string_end(p), *after = end, keep = *end;
        size_t was, now;

        if (keep)
            for (after = end + 1; *after == ' ' || *after == '\t' ||
                                  *after == '\n' || *after == '\r';
                 after++)
                ;
        if (!keep) { /* cut short: the rest is all string */
            redact_locked(p + 1);
            break;
        }
        if (*after == ':') { /* a key: as it is */
            p = end + 1;
            continue;
        }
        /* the string's inside alone; a long secret shrinks it */
        *end = '\0';
        was = (size_t)(end - p - 1);
        redact_locked(p + 1);
        now = strlen(p + 1);
        *end = keep;
        if (now < was)
            memmove(p + 1 + now, end, strlen(end) + 1);
        p += 1 + now + 1;
    }
    pthread_mutex_unlock(&lock);
    return text;
}

/* see tnd_log_line_open; under the lock */
static bool line_open;

void tnd_log_line_open(bool open)
{
    pthread_mutex_lock(&lock);
    line_open = open;
    pthread_mutex_unlock(&lock);
}

void tnd_log(tnd_log_level level, const char *fmt, ...)
{
    char line[LINE_MAX_BYTES];
    size_t n;
    int k, m = 0;
    va_list ap;

    if (level > current)
        return;
    pthread_mutex_lock(&lock);
    k = snprintf(line, sizeof(line), "%s[%ld] %s: ", program, (long)getpid(),
                 level_names[level]);
    n = k < 0 ? 0 : (size_t)k;
    if (n < sizeof(line)) {
        va_start(ap, fmt);
        m = vsnprintf(line + n, sizeof(line) - n, fmt, ap);
        va_end(ap);
    }
    /* redact before the cut: a secret across the 8 KiB mark would leave
     * its head, which redaction no longer knows as a secret */
    if (m > 0 && n + (size_t)m >= sizeof(line) - 1) {
        char *whole = tnd_xmalloc(n + (size_t)m + 1);

        memcpy(whole, line, n);
        va_start(ap, fmt);
        vsnprintf(whole + n, (size_t)m + 1, fmt, ap);
        va_end(ap);
        redact_locked(whole);
        snprintf(line, sizeof(line), "%s", whole);
        free(whole);
    }
    line[sizeof(line) - 2] = '\0';
    redact_locked(line);
    n = strlen(line);
    line[n++] = '\n';
    if (line_open && write(STDERR_FILENO, "\r\033[K", 4) < 0) {
        /* nowhere left to report it */
    }
    line_open = false;
    if (write(STDERR_FILENO, line, n) < 0) {
        /* nowhere left to report it */
    }
    pthread_mutex_unlock(&lock);
}
