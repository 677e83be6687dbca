/* stderr diagnostics with secret redaction (see log.h). Lines are built in
 * a local buffer and written with one write(2) under a mutex, so the
 * threads of an agent never interleave half lines. */
#include "common/log.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/xalloc.h"

#define LINE_MAX_BYTES 8192
#define SECRETS_MAX    16

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static char program[64] = "tandem";
static tnd_log_level current = TND_LOG_INFO;
static char *secrets[SECRETS_MAX];
static size_t nsecrets;

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

void tnd_log_secret(const char *value)
{
    if (!value || strlen(value) < 4)
        return;
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < nsecrets; i++)
        if (strcmp(secrets[i], value) == 0)
            goto out;
    if (nsecrets < SECRETS_MAX)
        secrets[nsecrets++] = tnd_xstrdup(value);
out:
    pthread_mutex_unlock(&lock);
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

void tnd_log(tnd_log_level level, const char *fmt, ...)
{
    char line[LINE_MAX_BYTES];
    size_t n;
    int k;
    va_list ap;

    if (level > current)
        return;
    pthread_mutex_lock(&lock);
    k = snprintf(line, sizeof(line), "%s[%ld] %s: ", program, (long)getpid(),
                 level_names[level]);
    n = k < 0 ? 0 : (size_t)k;
    if (n < sizeof(line)) {
        va_start(ap, fmt);
        vsnprintf(line + n, sizeof(line) - n, fmt, ap);
        va_end(ap);
    }
    line[sizeof(line) - 2] = '\0';
    redact_locked(line);
    n = strlen(line);
    line[n++] = '\n';
    if (write(STDERR_FILENO, line, n) < 0) {
        /* nowhere left to report it */
    }
    pthread_mutex_unlock(&lock);
}
