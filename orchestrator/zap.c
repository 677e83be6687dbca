/* The ZAP handler (see zap.h). */
#include "orchestrator/zap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zmq.h>

#include "common/clock.h"
#include "common/error.h"
#include "common/log.h"
#include "common/xalloc.h"

#define ZAP_ENDPOINT "inproc://zeromq.zap.01"
#define FRAMES_MAX   8
#define FRAME_MAX    256
/* refusals remembered so each is logged once a minute */
#define SEEN_MAX 64
#define QUIET_MS 60000

typedef struct seen {
    char key[TND_CURVE_Z85_LEN + 1];
    char address[64];
    int64_t at;
} seen;

struct tnd_zap {
    void *socket;
    const tnd_curve_list *list; /* the first, borrowed, or &reloaded */
    tnd_curve_list reloaded;    /* owned: the file as read again */
    char *path;                 /* the file, to read again; NULL: never */
    const tnd_curve_entry *own; /* the server's own key, always listed */
    struct stat seen;           /* the file as last read */
    size_t refused;
    seen recent[SEEN_MAX];
    size_t next_seen;
};

tnd_zap *tnd_zap_new(void *ctx, const tnd_curve_list *list, const char *path,
                     const tnd_curve_entry *own)
{
    tnd_zap *z;
    int linger = 0;
    void *s = zmq_socket(ctx, ZMQ_REP);

    if (!s) {
        tnd_error_set("cannot make the ZAP socket: %s",
                      zmq_strerror(zmq_errno()));
        return NULL;
    }
    zmq_setsockopt(s, ZMQ_LINGER, &linger, sizeof(linger));
    if (zmq_bind(s, ZAP_ENDPOINT) < 0) {
        tnd_error_set("cannot bind the ZAP handler: %s",
                      zmq_strerror(zmq_errno()));
        zmq_close(s);
        return NULL;
    }
    z = tnd_xcalloc(1, sizeof(*z));
    z->socket = s;
    z->list = list;
    z->own = own;
    if (path) {
        z->path = tnd_xstrdup(path);
        if (stat(path, &z->seen) < 0)
            memset(&z->seen, 0, sizeof(z->seen));
    }
    return z;
}

static bool same_file(const struct stat *a, const struct stat *b)
{
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino &&
           a->st_size == b->st_size && a->st_mtim.tv_sec == b->st_mtim.tv_sec &&
           a->st_mtim.tv_nsec == b->st_mtim.tv_nsec &&
           a->st_ctim.tv_sec == b->st_ctim.tv_sec &&
           a->st_ctim.tv_nsec == b->st_ctim.tv_nsec;
}

bool tnd_zap_reload(tnd_zap *self)
{
    tnd_curve_list next = {NULL, 0};
    struct stat now;
    bool read;

    if (!self->path)
        return false;
    if (stat(self->path, &now) < 0)
        memset(&now, 0, sizeof(now));
    if (same_file(&now, &self->seen))
        return false;
    self->seen = now;
    read = tnd_curve_list_load(&next, self->path) == 0;
    if (!read) {
        tnd_log_error("the authorized keys changed and cannot be read "
                      "(%s): only tandem's own agents are admitted until "
                      "the file is mended",
                      tnd_error_last());
        tnd_curve_list_clear(&next);
    }
    if (self->own) {
        next.entries =
            tnd_xrealloc(next.entries, next.n + 1, sizeof(tnd_curve_entry));
        next.entries[next.n++] = *self->own;
    }
    tnd_curve_list_clear(&self->reloaded);
    self->reloaded = next;
    self->list = &self->reloaded;
    if (read)
        tnd_log_info("read the authorized keys again (%s): %zu key%s",
                     self->path, next.n - (self->own != NULL),
                     next.n - (self->own != NULL) == 1 ? "" : "s");
    return true;
}

bool tnd_zap_key_may_serve(const tnd_zap *self, const char *fp,
                           const char *service)
{
    unsigned roles = 0;
    char user[64];

    for (size_t i = 0; i < self->list->n; i++)
        if (strcmp(tnd_curve_fingerprint(self->list->entries[i].public_key),
                   fp) == 0)
            roles |= self->list->entries[i].roles;
    if (!roles)
        return false;
    tnd_curve_roles_format(user, sizeof(user), roles);
    return tnd_zap_may_serve(user, service);
}

void *tnd_zap_socket(tnd_zap *self)
{
    return self->socket;
}

size_t tnd_zap_refused(const tnd_zap *self)
{
    return self->refused;
}

/* Log a refusal unless the same key was refused from the same address in
 * the last minute. */
static void log_refusal(tnd_zap *z, const char *key, const char *address,
                        const char *why)
{
    int64_t now = tnd_now_ms();
    seen *slot;

    for (size_t i = 0; i < SEEN_MAX; i++) {
        seen *s = &z->recent[i];
        if (s->at && now - s->at < QUIET_MS && strcmp(s->key, key) == 0 &&
            strcmp(s->address, address) == 0)
            return;
    }
    slot = &z->recent[z->next_seen++ % SEEN_MAX];
    snprintf(slot->key, sizeof(slot->key), "%s", key);
    snprintf(slot->address, sizeof(slot->address), "%s", address);
    slot->at = now;
    tnd_log_warn("refused a connection from %s: key %s %s", address,
                 *key ? tnd_curve_fingerprint(key) : "(none)", why);
}

/* One property of a ZAP metadata frame (ZMTP's form: a name of 1..255
 * bytes after its length byte, a value after its 4-byte length in network
 * order) at out + *len. */
static void put_property(unsigned char *out, size_t *len, const char *name,
                         const char *value)
{
    size_t n = strlen(name), v = strlen(value);

    out[(*len)++] = (unsigned char)n;
    memcpy(out + *len, name, n);
    *len += n;
    for (int shift = 24; shift >= 0; shift -= 8)
        out[(*len)++] = (unsigned char)(v >> shift);
    memcpy(out + *len, value, v);
    *len += v;
}

size_t tnd_zap_metadata(unsigned char *out, const char *public_key,
                        const char *name)
{
    char fp[TND_MDP_MAX_KEY_NAME + 1];
    size_t len = 0;

    /* both always: a property the handler left out could be one the
     * peer's own handshake metadata supplies */
    snprintf(fp, sizeof(fp), "%s", tnd_curve_fingerprint(public_key));
    put_property(out, &len, TND_MDP_KEY_NAME, name && *name ? name : fp);
    put_property(out, &len, TND_MDP_KEY_FINGERPRINT, fp);
    return len;
}

static int send_reply(void *s, const char *id, size_t id_len,
                      const char *status, const char *text, const char *user,
                      const unsigned char *metadata, size_t metadata_len)
{
    if (zmq_send(s, "1.0", 3, ZMQ_SNDMORE) < 0 ||
        zmq_send(s, id, id_len, ZMQ_SNDMORE) < 0 ||
        zmq_send(s, status, strlen(status), ZMQ_SNDMORE) < 0 ||
        zmq_send(s, text, strlen(text), ZMQ_SNDMORE) < 0 ||
        zmq_send(s, user, strlen(user), ZMQ_SNDMORE) < 0 ||
        zmq_send(s, metadata, metadata_len, 0) < 0)
        return -1;
    return 0;
}

/* One request: version, request id, domain, address, identity,
 * mechanism, credentials... */
static int serve_one(tnd_zap *z)
{
    char frames[FRAMES_MAX][FRAME_MAX];
    size_t lens[FRAMES_MAX];
    size_t n = 0;
    int more = 1;
    char address[64], key[TND_CURVE_Z85_LEN + 1] = "";
    char user[64];
    unsigned char metadata[TND_ZAP_METADATA_MAX];
    size_t metadata_len;
    const char *name = "";
    unsigned roles = 0;

    while (more) {
        size_t more_size = sizeof(more);
        int got = zmq_recv(z->socket, n < FRAMES_MAX ? frames[n] : frames[0],
                           FRAME_MAX, ZMQ_DONTWAIT);
        if (got < 0)
            return zmq_errno() == EAGAIN && n == 0 ? 0 : -1;
        if (n < FRAMES_MAX)
            lens[n++] = (size_t)got > FRAME_MAX ? FRAME_MAX : (size_t)got;
        if (zmq_getsockopt(z->socket, ZMQ_RCVMORE, &more, &more_size) < 0)
            return -1;
    }
    if (n < 6) /* not a ZAP request: a REP must still answer */
        return send_reply(z->socket, "", 0, "500", "malformed request", "",
                          NULL, 0) < 0
                   ? -1
                   : 1;
    snprintf(address, sizeof(address), "%.*s",
             (int)(lens[3] < 63 ? lens[3] : 63), frames[3]);
    if (lens[5] == 5 && memcmp(frames[5], "CURVE", 5) == 0 && n >= 7 &&
        lens[6] == 32) {
        zmq_z85_encode(key, (const uint8_t *)frames[6], 32);
        roles =
            tnd_curve_list_roles(z->list, (unsigned char *)frames[6], &name);
    }
    if (!roles) {
        z->refused++;
        log_refusal(z, key, address,
                    *key ? "is not in the authorized keys"
                         : "did not use CURVE");
        return send_reply(z->socket, frames[1], lens[1], "400",
                          "key not authorized", "", NULL, 0) < 0
                   ? -1
                   : 1;
    }
    tnd_curve_roles_format(user, sizeof(user), roles);
    metadata_len = tnd_zap_metadata(metadata, key, name);
    return send_reply(z->socket, frames[1], lens[1], "200", "OK", user,
                      metadata, metadata_len) < 0
               ? -1
               : 1;
}

int tnd_zap_serve(tnd_zap *self)
{
    int count = 0, rc;

    while ((rc = serve_one(self)) > 0)
        count++;
    if (rc < 0)
        return tnd_error_set("the ZAP handler failed: %s",
                             zmq_strerror(zmq_errno()));
    return count;
}

void tnd_zap_destroy(tnd_zap **self_p)
{
    tnd_zap *z = self_p ? *self_p : NULL;

    if (!z)
        return;
    /* at once: a close lets the name go later, and a handler made
     * next in the context found it taken */
    zmq_unbind(z->socket, ZAP_ENDPOINT);
    zmq_close(z->socket);
    tnd_curve_list_clear(&z->reloaded);
    free(z->path);
    free(z);
    *self_p = NULL;
}

static unsigned roles_of(const char *user_id)
{
    char text[64];

    /* parsed quietly: an empty or odd id is no role, not an error */
    snprintf(text, sizeof(text), "%s", user_id ? user_id : "");
    if (!*text)
        return 0;
    for (char *p = text; *p; p++)
        if (!strchr("abcdefghijklmnopqrstuvwxyz,", *p))
            return 0;
    return tnd_curve_roles_parse(text);
}

bool tnd_zap_may_serve(const char *user_id, const char *service)
{
    unsigned roles = roles_of(user_id);

    if (strcmp(service, "coder") == 0)
        return roles & TND_CURVE_CODER;
    if (strcmp(service, "reviewer") == 0 ||
        strncmp(service, "reviewer.", 9) == 0)
        return roles & TND_CURVE_REVIEWER;
    return false;
}

bool tnd_zap_may_submit(const char *user_id)
{
    return roles_of(user_id) & (TND_CURVE_CLIENT | TND_CURVE_PERSON);
}

unsigned tnd_zap_roles(const char *user_id)
{
    return roles_of(user_id);
}
