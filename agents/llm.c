/* The LLM interface: backend choice, retries, accounting (see llm.h). */
#include "agents/llm.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "agents/anthropic.h"
#include "agents/backend.h"
#include "agents/command.h"
#include "agents/ollama.h"
#include "agents/openai.h"
#include "agents/replay.h"
#include "common/clock.h"
#include "common/error.h"
#include "common/log.h"
#include "common/str.h"
#include "common/utf8.h"
#include "common/xalloc.h"
#include "proto/json.h"

#define BACKOFF_BASE_MS 500
#define BACKOFF_CAP_MS  30000

struct tnd_llm {
    const tnd_llm_backend *backend;
    void *state;
    int max_retries;
    long timeout_ms;
    const atomic_int *cancel;
    int cancel_fd; /* readable once *cancel is set; -1 */
    tnd_llm_delta_fn delta;
    void *delta_payload;
    tnd_llm_exchange_fn exchange;
    void *exchange_payload;
    char *description;
    uint64_t rng;
    int record_fd; /* --record: answers are appended here; -1 */
    char *record_path;
};

static const tnd_llm_backend *const backends[] = {
    &tnd_replay_backend, &tnd_openai_backend,  &tnd_anthropic_backend,
    &tnd_ollama_backend, &tnd_command_backend,
};

/* The backend of a provider; NULL when there is none. */
static const tnd_llm_backend *find_backend(tnd_provider provider)
{
    for (size_t i = 0; i < sizeof(backends) / sizeof(backends[0]); i++)
        if (backends[i]->provider == provider)
            return backends[i];
    return NULL;
}

const char *tnd_llm_base_url(const tnd_llm_config *cfg)
{
    const tnd_llm_backend *backend = find_backend(cfg->provider);

    if (*cfg->base_url)
        return cfg->base_url;
    return backend ? backend->base_url : "";
}

char *tnd_llm_url(const tnd_llm_config *cfg, const char *path)
{
    const char *base = tnd_llm_base_url(cfg);
    size_t n = strlen(base);

    while (n > 0 && base[n - 1] == '/')
        n--;
    return tnd_xasprintf("%.*s%s", (int)n, base, path);
}

const char *tnd_llm_key_env(const tnd_llm_config *cfg)
{
    const tnd_llm_backend *backend = find_backend(cfg->provider);

    if (*cfg->api_key_env)
        return cfg->api_key_env;
    return backend ? backend->key_env : "";
}

/* Whether base is url, but for trailing slashes. */
static bool same_url(const char *base, const char *url)
{
    size_t n = strlen(base), m = strlen(url);

    while (n > 0 && base[n - 1] == '/')
        n--;
    while (m > 0 && url[m - 1] == '/')
        m--;
    return n == m && strncmp(base, url, n) == 0;
}

const char *tnd_llm_key_missing(const tnd_llm_config *cfg)
{
    const tnd_llm_backend *backend = find_backend(cfg->provider);
    const char *name = tnd_llm_key_env(cfg), *value;

    if (!backend || !*name || !backend->base_url ||
        !same_url(tnd_llm_base_url(cfg), backend->base_url) ||
        tnd_llm_header_set(cfg->headers, "Authorization") ||
        tnd_llm_header_set(cfg->headers, "x-api-key"))
        return NULL;
    value = getenv(name);
    return value && *value ? NULL : name;
}

static void register_key(const tnd_llm_config *llm)
{
    const char *name = tnd_llm_key_env(llm);
    const char *value = *name ? getenv(name) : NULL;

    if (value && *value)
        tnd_log_secret(value);
}

void tnd_llm_header_guard(const char *line)
{
    static const char *const words[] = {"auth",   "key",      "token",
                                        "secret", "password", "cookie"};
    const char *colon = strchr(line, ':');
    char name[128];
    size_t n = colon ? (size_t)(colon - line) : 0;

    if (!colon || n >= sizeof(name))
        return;
    for (size_t i = 0; i < n; i++)
        name[i] =
            (char)(line[i] >= 'A' && line[i] <= 'Z' ? line[i] + 32 : line[i]);
    name[n] = '\0';
    for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
        if (strstr(name, words[i])) {
            const char *value = colon + 1, *token;
            while (*value == ' ' || *value == '\t')
                value++;
            tnd_log_secret(value);
            /* "Bearer TOKEN", "Basic CREDENTIALS": the credential alone
             * is the secret a model echoes (only the whole value was
             * known, so the bare token went everywhere in clear) */
            if ((token = strrchr(value, ' ')) && token[1])
                tnd_log_secret(token + 1);
            return;
        }
    }
}

void tnd_llm_url_guard(const char *url)
{
    const char *at, *colon, *start = url ? strstr(url, "://") : NULL;
    size_t authority;
    char *password;

    if (!start)
        return;
    start += 3;
    authority = strcspn(start, "/?#");
    /* the last '@' of the authority ends the user information */
    for (at = NULL, colon = start; colon < start + authority; colon++)
        if (*colon == '@')
            at = colon;
    if (!at || !(colon = memchr(start, ':', (size_t)(at - start))) ||
        colon + 1 == at)
        return;
    password = tnd_xstrndup(colon + 1, (size_t)(at - colon - 1));
    tnd_log_secret(password);
    tnd_str_free_secret(&password);
}

static void register_llm(const tnd_llm_config *llm)
{
    register_key(llm);
    tnd_llm_url_guard(tnd_llm_base_url(llm));
    for (size_t i = 0; llm->headers && llm->headers[i]; i++)
        tnd_llm_header_guard(llm->headers[i]);
}

void tnd_llm_standard_keys_register(void)
{
    for (size_t i = 0; i < sizeof(backends) / sizeof(backends[0]); i++) {
        const char *name = backends[i]->key_env;
        const char *value = name && *name ? getenv(name) : NULL;
        if (value && *value)
            tnd_log_secret(value);
    }
}

void tnd_llm_secrets_register(const tnd_config *cfg)
{
    /* a command model that wraps a provider reads its variable, which
     * the config does not name: a failure it printed showed the key */
    tnd_llm_standard_keys_register();
    /* the file's own, whatever --llm made of the providers since */
    for (size_t i = 0; cfg->key_envs && cfg->key_envs[i]; i++) {
        const char *value = getenv(cfg->key_envs[i]);
        if (value && *value)
            tnd_log_secret(value);
    }
    register_llm(&cfg->coder.llm);
    register_llm(&cfg->reviewer.llm);
    for (size_t i = 0; i < cfg->reviewer.nmodels; i++)
        register_llm(&cfg->reviewer.models[i]);
}

/* The key variable of llm if its value is in text, else NULL. */
static const char *key_in(const tnd_llm_config *llm, const char *text)
{
    const char *name = tnd_llm_key_env(llm);
    const char *value = *name ? getenv(name) : NULL;

    return tnd_log_secret_worth(value) && strstr(text, value) ? name : NULL;
}

const char *tnd_llm_secret_in(const tnd_config *cfg, const char *text)
{
    const char *name;

    if (!tnd_log_holds_secret(text))
        return NULL;
    if ((name = key_in(&cfg->coder.llm, text)) ||
        (name = key_in(&cfg->reviewer.llm, text)))
        return name;
    for (size_t i = 0; i < cfg->reviewer.nmodels; i++)
        if ((name = key_in(&cfg->reviewer.models[i], text)))
            return name;
    for (size_t i = 0; cfg->key_envs && cfg->key_envs[i]; i++) {
        const char *value = getenv(cfg->key_envs[i]);
        if (tnd_log_secret_worth(value) && strstr(text, value))
            return cfg->key_envs[i];
    }
    return "a credential header of the config";
}

void tnd_llm_secret_hide(const tnd_llm_config *llm)
{
    const char *name = tnd_llm_key_env(llm);
    char *value = *name ? getenv(name) : NULL;

    if (!value)
        return;
    tnd_log_secret(value);
    /* /proc/PID/environ shows the block the process started with, which
     * unsetenv leaves as it was: blank the entry ("NAME=value", the
     * name just before the value) there first */
    unsetenv(name);
    memset(value - strlen(name) - 1, 0, strlen(name) + 1 + strlen(value));
}

bool tnd_llm_header_set(char *const *headers, const char *name)
{
    size_t n = strlen(name);

    for (char *const *h = headers; h && *h; h++)
        if (strncasecmp(*h, name, n) == 0 && (*h)[n] == ':')
            return true;
    return false;
}

tnd_llm *tnd_llm_new(const tnd_llm_config *cfg)
{
    const tnd_llm_backend *backend = find_backend(cfg->provider);
    tnd_llm *llm;

    if (!backend) {
        tnd_error_set("no backend for LLM provider %d (known: %s)",
                      (int)cfg->provider, TND_PROVIDERS);
        return NULL;
    }
    llm = tnd_xcalloc(1, sizeof(*llm));
    llm->cancel_fd = -1;
    llm->backend = backend;
    llm->max_retries = cfg->max_retries;
    llm->timeout_ms = (long)cfg->timeout_s * 1000;
    llm->rng = (uint64_t)tnd_wall_ms() ^ ((uint64_t)getpid() << 32) ^
               (uint64_t)(uintptr_t)llm;
    llm->record_fd = -1;
    llm->description = tnd_llm_config_describe(cfg);
    if (!(llm->state = backend->open(cfg))) {
        tnd_error_prefix("LLM %s", llm->description);
        tnd_llm_destroy(&llm);
        return NULL;
    }
    return llm;
}

void tnd_llm_destroy(tnd_llm **self_p)
{
    tnd_llm *llm = self_p ? *self_p : NULL;

    if (!llm)
        return;
    if (llm->state)
        llm->backend->close(llm->state);
    if (llm->record_fd >= 0)
        close(llm->record_fd);
    free(llm->record_path);
    free(llm->description);
    free(llm);
    *self_p = NULL;
}

void tnd_llm_set_cancel(tnd_llm *self, const atomic_int *cancel, int cancel_fd)
{
    self->cancel = cancel;
    self->cancel_fd = cancel ? cancel_fd : -1;
}

void tnd_llm_set_delta(tnd_llm *self, tnd_llm_delta_fn fn, void *payload)
{
    self->delta = fn;
    self->delta_payload = payload;
}

int tnd_llm_set_record(tnd_llm *self, const char *path)
{
    int fd = -1;

    if (path &&
        (fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600)) < 0)
        return tnd_error_sys("cannot open the recording %s", path);
    if (self->record_fd >= 0)
        close(self->record_fd);
    free(self->record_path);
    self->record_fd = fd;
    self->record_path = path ? tnd_xstrdup(path) : NULL;
    return 0;
}

/* The recording's line for one answer, "\n" included. Caller frees. */
static char *record_line(const tnd_prompt *prompt, const tnd_llm_answer *answer,
                         size_t *len)
{
    json_object *line = json_object_new_object();
    json_object *usage = json_object_new_object();
    char *text = tnd_xstrdup(answer->text ? answer->text : "");
    char *s;

    /* a registered secret (the API key) must never reach a cassette */
    tnd_log_redact(text);
    json_object_object_add(
        line, "role", json_object_new_string(prompt->role ? prompt->role : ""));
    json_object_object_add(line, "attempt",
                           json_object_new_int(prompt->attempt));
    json_object_object_add(line, "call", json_object_new_int(prompt->call));
    json_object_object_add(line, "answer", json_object_new_string(text));
    json_object_object_add(usage, "prompt_tokens",
                           json_object_new_int64(answer->usage.prompt_tokens));
    json_object_object_add(
        usage, "completion_tokens",
        json_object_new_int64(answer->usage.completion_tokens));
    json_object_object_add(line, "usage", usage);
    json_object_object_add(line, "estimated",
                           json_object_new_boolean(answer->usage.estimated));
    /* a replay must cut where the recorded run was cut */
    if (answer->truncated)
        json_object_object_add(line, "truncated", json_object_new_boolean(1));
    s = tnd_json_dump(line, len);
    s = tnd_xrealloc(s, *len + 2, 1);
    s[(*len)++] = '\n';
    s[*len] = '\0';
    json_object_put(line);
    free(text);
    return s;
}

/* Append the answer to the recording: one write(2), so lines from the two
 * agents never interleave. A failure is logged, never the call's. */
static void record(tnd_llm *self, const tnd_prompt *prompt,
                   const tnd_llm_answer *answer)
{
    size_t len = 0;
    char *line;
    ssize_t n;

    if (self->record_fd < 0)
        return;
    line = record_line(prompt, answer, &len);
    n = write(self->record_fd, line, len);
    if (n < 0)
        tnd_log_error("cannot record the %s's answer in %s: %s", prompt->role,
                      self->record_path, strerror(errno));
    else if ((size_t)n != len)
        tnd_log_error("cannot record the %s's answer in %s: wrote %zd of "
                      "%zu bytes (disk full?)",
                      prompt->role, self->record_path, n, len);
    free(line);
}

char *tnd_llm_config_describe(const tnd_llm_config *cfg)
{
    switch (cfg->provider) {
    case TND_PROVIDER_REPLAY:
        return tnd_xasprintf("replay of %s", cfg->cassette);
    case TND_PROVIDER_COMMAND:
        return tnd_xasprintf("command '%s'", cfg->command.display
                                                 ? cfg->command.display
                                                 : "(none)");
    default:
        return tnd_xasprintf("%s %s at %s", tnd_provider_name(cfg->provider),
                             cfg->model, tnd_llm_base_url(cfg));
    }
}

const char *tnd_llm_describe(const tnd_llm *self)
{
    return self->description;
}

long tnd_llm_estimate_tokens(const char *text)
{
    size_t n = text ? strlen(text) : 0;

    return n ? (long)((n + 3) / 4) : 0;
}

void tnd_llm_answer_clear(tnd_llm_answer *answer)
{
    free(answer->text);
    memset(answer, 0, sizeof(*answer));
}

static uint64_t next_random(tnd_llm *llm)
{
    /* xorshift64*: plenty for jitter */
    llm->rng ^= llm->rng >> 12;
    llm->rng ^= llm->rng << 25;
    llm->rng ^= llm->rng >> 27;
    return llm->rng * UINT64_C(2685821657736338717);
}

/* Exponential backoff with full jitter: uniform in [0, min(cap, base *
 * 2^retry)], unless the server named a delay. */
static long backoff_ms(tnd_llm *llm, int retry, long retry_after_ms)
{
    long ceiling = BACKOFF_BASE_MS;

    if (retry_after_ms > 0)
        return retry_after_ms;
    for (int i = 0; i < retry && ceiling < BACKOFF_CAP_MS; i++)
        ceiling *= 2;
    if (ceiling > BACKOFF_CAP_MS)
        ceiling = BACKOFF_CAP_MS;
    return (long)(next_random(llm) % (uint64_t)(ceiling + 1));
}

/* Sleep up to ms, waking early on cancel. Returns TND_ECANCELLED or 0. */
static int wait_ms(const tnd_llm *llm, long ms)
{
    int64_t until = tnd_now_ms() + ms;

    while (tnd_now_ms() < until) {
        struct timespec ts = {0, 20 * 1000 * 1000};
        if (llm->cancel && atomic_load(llm->cancel))
            return TND_ECANCELLED;
        nanosleep(&ts, NULL);
    }
    return 0;
}

void tnd_llm_set_exchange(tnd_llm *self, tnd_llm_exchange_fn fn, void *payload)
{
    self->exchange = fn;
    self->exchange_payload = fn ? payload : NULL;
}

static int complete(tnd_llm_answer *out, tnd_llm *self,
                    const tnd_prompt *prompt)
{
    int64_t start = tnd_now_ms();
    /* every attempt may take its timeout, plus backoff between them */
    int64_t deadline = start + self->timeout_ms * (self->max_retries + 1) +
                       (int64_t)BACKOFF_CAP_MS * self->max_retries;
    int retries = 0, rc;
    size_t replaced;

    memset(out, 0, sizeof(*out));
    for (;;) {
        tnd_llm_call call;
        long retry_after = -1, wait;
        long left = tnd_clock_remaining(deadline, self->timeout_ms);

        if (self->cancel && atomic_load(self->cancel))
            return tnd_error_set("cancelled"), TND_ECANCELLED;
        call.prompt = prompt;
        call.cancel = self->cancel;
        call.cancel_fd = self->cancel_fd;
        call.timeout_ms = left > 0 ? left : 1;
        call.delta = self->delta;
        call.delta_payload = self->delta_payload;
        rc = self->backend->complete(self->state, out, &call, &retry_after);
        if (rc == 0)
            break;
        if (rc != TND_ERETRY)
            return rc < 0 ? rc : -1;
        if (retries >= self->max_retries) {
            tnd_error_prefix("gave up after %d %s", retries + 1,
                             retries ? "attempts" : "attempt");
            return -1;
        }
        wait = backoff_ms(self, retries, retry_after);
        if (tnd_now_ms() + wait >= deadline) {
            tnd_error_prefix("no time left to retry (the next try would be "
                             "in %.1fs)",
                             wait / 1000.0);
            return -1;
        }
        tnd_log_warn("%s call failed: %s; retry %d of %d in %.1fs",
                     prompt->role, tnd_error_last(), retries + 1,
                     self->max_retries, wait / 1000.0);
        if (wait_ms(self, wait) == TND_ECANCELLED)
            return tnd_error_set("cancelled"), TND_ECANCELLED;
        retries++;
        tnd_llm_answer_clear(out);
    }
    if ((replaced = tnd_utf8_clean_inplace(&out->text)))
        tnd_log_warn("%s answer: %zu byte%s that were not valid UTF-8 read "
                     "as U+FFFD",
                     prompt->role, replaced, replaced == 1 ? "" : "s");
    out->usage.calls = 1;
    out->usage.retries = retries;
    out->usage.latency_ms = (long)(tnd_now_ms() - start);
    if (out->usage.prompt_tokens == 0 && out->usage.completion_tokens == 0) {
        out->usage.prompt_tokens = tnd_llm_estimate_tokens(prompt->system) +
                                   tnd_llm_estimate_tokens(prompt->user);
        out->usage.completion_tokens = tnd_llm_estimate_tokens(out->text);
        out->usage.estimated = true;
    }
    record(self, prompt, out);
    return 0;
}

/* text as valid UTF-8: text itself when it is, else a clean copy left in
 * *owned (caller frees). Adds the bytes replaced to *count. */
static const char *valid_text(const char *text, char **owned, size_t *count)
{
    size_t len, replaced;

    *owned = NULL;
    if (!text || tnd_utf8_valid(text, len = strlen(text)))
        return text;
    *owned = tnd_utf8_clean(text, len, &replaced);
    *count += replaced;
    return *owned;
}

int tnd_llm_complete(tnd_llm_answer *out, tnd_llm *self,
                     const tnd_prompt *prompt)
{
    /* An API takes JSON, which is UTF-8: one Latin-1 byte from a source
     * file or a test's output would get the whole request refused, and a
     * command program may choke on it. Every prompt is made valid here,
     * the one place all of them pass, and so is every answer. */
    tnd_prompt valid = *prompt;
    char *system, *user;
    size_t replaced = 0;
    int rc;

    valid.system = valid_text(prompt->system, &system, &replaced);
    valid.user = valid_text(prompt->user, &user, &replaced);
    if (replaced)
        tnd_log_warn("%s prompt: %zu byte%s that were not valid UTF-8 sent "
                     "as U+FFFD",
                     prompt->role, replaced, replaced == 1 ? "" : "s");
    rc = complete(out, self, &valid);
    if (self->exchange)
        self->exchange(&valid, rc == 0 ? out : NULL,
                       rc == 0 ? NULL : tnd_error_last(),
                       self->exchange_payload);
    free(system);
    free(user);
    return rc;
}
