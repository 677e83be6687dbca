/* Baselines shared by a server's sessions (see basecache.h). One mutex
 * guards the entries; one condition variable wakes the sessions waiting
 * for a flight. An entry is a flight (being run: no reply yet) or a
 * kept reply; a waiter remembers its flight's number, so when the entry
 * it waited for is gone or is another flight, the run failed. */
#include "orchestrator/basecache.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/clock.h"
#include "common/error.h"
#include "common/xalloc.h"

/* A waiter looks at its stop flag and deadline this often. */
#define WAIT_SLICE_MS 100

typedef struct entry {
    char key[TND_SHA256_HEX + 1];
    uint64_t flight; /* this run's number, unique in the cache */
    bool kept;       /* the reply is here; else it is being run */
    char *reply;
    size_t len;
    char *session;   /* who ran it */
    char *workspace; /* where it ran */
    int64_t at;      /* kept: when (tnd_now_ms) */
    uint64_t order;  /* kept: the how-manieth (the oldest goes first) */
} entry;

struct tnd_basecache {
    pthread_mutex_t lock;
    pthread_cond_t done; /* a flight ended */
    entry *e;
    size_t n, alloc, max;
    int64_t max_age_ms;
    uint64_t flights, kept;
};

tnd_basecache *tnd_basecache_new(size_t max, int64_t max_age_ms)
{
    tnd_basecache *c = tnd_xcalloc(1, sizeof(*c));
    pthread_condattr_t attr;

    pthread_mutex_init(&c->lock, NULL);
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC); /* as tnd_now_ms */
    pthread_cond_init(&c->done, &attr);
    pthread_condattr_destroy(&attr);
    c->max = max ? max : 1;
    c->max_age_ms = max_age_ms;
    return c;
}

static void entry_clear(entry *e)
{
    free(e->reply);
    free(e->session);
    free(e->workspace);
    memset(e, 0, sizeof(*e));
}

void tnd_basecache_destroy(tnd_basecache **self_p)
{
    tnd_basecache *c = self_p ? *self_p : NULL;

    if (!c)
        return;
    for (size_t i = 0; i < c->n; i++)
        entry_clear(&c->e[i]);
    free(c->e);
    pthread_cond_destroy(&c->done);
    pthread_mutex_destroy(&c->lock);
    free(c);
    *self_p = NULL;
}

void tnd_basecache_hit_clear(tnd_basecache_hit *hit)
{
    free(hit->reply);
    free(hit->session);
    free(hit->workspace);
    memset(hit, 0, sizeof(*hit));
}

/* ---- the key ------------------------------------------------------------ */

/* Each field goes in with its length, so no two configs run together
 * into the same bytes. */
static void put_bytes(tnd_sha256 *h, const void *p, size_t n)
{
    uint64_t len = n;

    tnd_sha256_update(h, &len, sizeof(len));
    tnd_sha256_update(h, p, n);
}

static void put_str(tnd_sha256 *h, const char *s)
{
    if (!s) /* unlike "" */
        put_bytes(h, "\0null", 5);
    else
        put_bytes(h, s, strlen(s));
}

static void put_long(tnd_sha256 *h, long long v)
{
    put_bytes(h, &v, sizeof(v));
}

static void put_list(tnd_sha256 *h, char *const *list)
{
    size_t n = 0;

    if (!list) {
        put_str(h, NULL);
        return;
    }
    while (list[n])
        n++;
    put_long(h, (long long)n);
    for (size_t i = 0; i < n; i++)
        put_str(h, list[i]);
}

static void put_skill(tnd_sha256 *h, const tnd_skill_config *s)
{
    put_str(h, s->name);
    put_list(h, s->command.argv);
    put_str(h, s->command.display);
    put_long(h, s->required);
    put_long(h, s->timeout_s);
    put_long(h, (long long)s->output_cap);
    put_str(h, s->builtin);
    put_list(h, s->paths);
    put_list(h, s->after);
    put_long(h, s->limits.cpu_s);
    put_long(h, (long long)s->limits.memory_bytes);
    put_long(h, (long long)s->limits.file_bytes);
    put_long(h, (long long)s->limits.disk_bytes);
    put_long(h, s->limits.processes);
    put_long(h, s->sandbox);
    put_long(h, s->network);
    put_list(h, s->forbid);
    put_long(h, s->max_changed_lines);
    put_long(h, (long long)s->max_file_bytes);
    put_list(h, s->public_paths);
    put_list(h, s->docs_paths);
}

void tnd_basecache_key(char out[TND_SHA256_HEX + 1], const tnd_config *cfg,
                       const char *tree, char *const *dirs, const char *service)
{
    tnd_sha256 h;

    tnd_sha256_init(&h);
    put_str(&h, "tandem baseline 1");
    put_str(&h, tree);
    put_list(&h, dirs);
    put_str(&h, service);
    put_str(&h, cfg->dir);
    put_list(&h, cfg->reviewer.program.argv);
    put_long(&h, cfg->reviewer.count);
    put_long(&h, cfg->workspace.include_untracked);
    put_long(&h, cfg->workspace.incremental);
    put_list(&h, cfg->reviewer.skills);
    for (char **p = cfg->reviewer.skills; p && *p; p++) {
        const tnd_skill_config *s = tnd_config_skill(cfg, *p);
        if (s)
            put_skill(&h, s);
        else
            put_str(&h, NULL);
    }
    tnd_sha256_final_hex(out, &h);
}

/* ---- the entries (under the lock) --------------------------------------- */

static void drop(tnd_basecache *c, size_t i)
{
    entry_clear(&c->e[i]);
    c->e[i] = c->e[--c->n];
}

/* Kept replies past the age limit go. */
static void expire(tnd_basecache *c, int64_t now)
{
    for (size_t i = 0; i < c->n;)
        if (c->e[i].kept && now - c->e[i].at >= c->max_age_ms)
            drop(c, i);
        else
            i++;
}

static entry *find(tnd_basecache *c, const char *key)
{
    for (size_t i = 0; i < c->n; i++)
        if (strcmp(c->e[i].key, key) == 0)
            return &c->e[i];
    return NULL;
}

/* Room for one more: the oldest kept reply goes when the cache is full.
 * Flights are never dropped (as many as sessions run). */
static void make_room(tnd_basecache *c)
{
    size_t oldest = c->n;

    if (c->n < c->max)
        return;
    for (size_t i = 0; i < c->n; i++)
        if (c->e[i].kept &&
            (oldest == c->n || c->e[i].order < c->e[oldest].order))
            oldest = i;
    if (oldest < c->n)
        drop(c, oldest);
}

static void copy_out(tnd_basecache_hit *out, const entry *e)
{
    out->reply = tnd_xmalloc(e->len + 1);
    memcpy(out->reply, e->reply, e->len);
    out->reply[e->len] = '\0';
    out->len = e->len;
    out->session = tnd_xstrdup(e->session);
    out->workspace = tnd_xstrdup(e->workspace);
}

static void wait_slice(tnd_basecache *c, int64_t deadline)
{
    long ms = tnd_clock_remaining(deadline, WAIT_SLICE_MS);
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    ts.tv_sec += ms / 1000;
    ts.tv_nsec += (ms % 1000) * 1000000L;
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    pthread_cond_timedwait(&c->done, &c->lock, &ts);
}

int tnd_basecache_take(tnd_basecache_hit *out, tnd_basecache *self,
                       const char *key, const char *session,
                       const char *workspace, int64_t deadline,
                       const atomic_int *stop,
                       void (*on_wait)(const char *runner, void *payload),
                       void *payload)
{
    char runner[128];
    uint64_t flight;
    entry *e;
    int rc;

    memset(out, 0, sizeof(*out));
    pthread_mutex_lock(&self->lock);
    expire(self, tnd_now_ms());
    if (!(e = find(self, key))) {
        make_room(self);
        TND_GROW(self->e, self->alloc, self->n + 1);
        e = &self->e[self->n++];
        memset(e, 0, sizeof(*e));
        snprintf(e->key, sizeof(e->key), "%s", key);
        e->flight = ++self->flights;
        e->session = tnd_xstrdup(session);
        e->workspace = tnd_xstrdup(workspace);
        pthread_mutex_unlock(&self->lock);
        return TND_BASECACHE_RUN;
    }
    if (e->kept) {
        copy_out(out, e);
        pthread_mutex_unlock(&self->lock);
        return TND_BASECACHE_HIT;
    }
    flight = e->flight;
    snprintf(runner, sizeof(runner), "%s", e->session);
    if (on_wait) {
        pthread_mutex_unlock(&self->lock);
        on_wait(runner, payload);
        pthread_mutex_lock(&self->lock);
    }
    for (;;) {
        /* entries move when others are dropped: look again each time */
        e = find(self, key);
        if (e && e->kept) {
            copy_out(out, e);
            rc = TND_BASECACHE_HIT;
            break;
        }
        if (!e || e->flight != flight) {
            rc = TND_BASECACHE_ALONE; /* that run failed */
            break;
        }
        if (stop && atomic_load(stop)) {
            tnd_error_set("interrupted by signal %d while waiting for "
                          "session %s's baseline",
                          atomic_load(stop), runner);
            rc = TND_ECANCELLED;
            break;
        }
        if (tnd_now_ms() >= deadline) {
            tnd_error_set("session %s's baseline of the same tree did not "
                          "come in time",
                          runner);
            rc = TND_ETIMEOUT;
            break;
        }
        wait_slice(self, deadline);
    }
    pthread_mutex_unlock(&self->lock);
    return rc;
}

void tnd_basecache_done(tnd_basecache *self, const char *key, const char *reply,
                        size_t len)
{
    entry *e;

    pthread_mutex_lock(&self->lock);
    if ((e = find(self, key)) && !e->kept) {
        if (reply) {
            e->reply = tnd_xmalloc(len + 1);
            memcpy(e->reply, reply, len);
            e->reply[len] = '\0';
            e->len = len;
            e->kept = true;
            e->at = tnd_now_ms();
            e->order = ++self->kept;
        } else {
            drop(self, (size_t)(e - self->e));
        }
    }
    pthread_cond_broadcast(&self->done);
    pthread_mutex_unlock(&self->lock);
}

size_t tnd_basecache_size(tnd_basecache *self)
{
    size_t n;

    pthread_mutex_lock(&self->lock);
    n = self->n;
    pthread_mutex_unlock(&self->lock);
    return n;
}
