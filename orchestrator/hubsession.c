/* One session tandem serve holds (see hubsession.h). */
#include "orchestrator/hubsession.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/error.h"
#include "common/fs.h"
#include "common/log.h"
#include "common/utf8.h"
#include "common/xalloc.h"
#include "orchestrator/link.h"
#include "orchestrator/run.h"
#include "orchestrator/session.h"
#include "proto/client.h"
#include "proto/json.h"
#include "proto/mdp.h"

#define REPORT_MAX (16 << 20)
#define OUT_BUF    (64 << 10)

typedef struct follower {
    unsigned char id[TND_MDP_MAX_IDENTITY];
    size_t len;
    char service[TND_MDP_MAX_SERVICE + 1];
} follower;

struct tnd_hubsession {
    char *name, *repo, *id, *dir;
    tnd_hubsession_state state;
    tnd_link *link; /* the thread's once it started */
    pthread_t thread;
    bool started; /* a thread runs it, not joined yet */
    bool ran;     /* a thread was started: the link is the thread's */
    atomic_int stop;
    tnd_answer answer;   /* kind 0: none */
    tnd_client_who who;  /* who gives it; via NONE: not known */
    char *owner;         /* the CURVE key that submitted it, or NULL */
    long escalation;     /* the escalation the answer is for; 0 */
    tnd_run_host shared; /* what the server's sessions share (its
                            pointers borrowed); link, streams and stop
                            are this session's */
    int lock;            /* the session's lock while it is queued, or -1 */
    int thread_lock;     /* that lock, the thread's once it started */
    json_object *report; /* the report.json the thread wrote last, or
                            NULL (tnd_run_host.report); read once the
                            thread is joined */
    follower f[TND_HUBSESSION_MAX_FOLLOWERS];
    size_t nf;
};

tnd_hubsession *tnd_hubsession_new(const char *name, const char *repo,
                                   const char *id, const char *dir)
{
    tnd_hubsession *s = tnd_xcalloc(1, sizeof(*s));

    s->name = tnd_xstrdup(name);
    s->repo = tnd_xstrdup(repo);
    s->id = tnd_xstrdup(id);
    s->dir = tnd_xstrdup(dir);
    s->state = TND_HS_QUEUED;
    s->lock = s->thread_lock = -1;
    atomic_init(&s->stop, 0);
    return s;
}

void tnd_hubsession_destroy(tnd_hubsession **self_p)
{
    tnd_hubsession *s = self_p ? *self_p : NULL;

    if (!s)
        return;
    if (s->started)
        pthread_join(s->thread, NULL);
    if (!s->ran)
        tnd_link_destroy(&s->link); /* no thread took it */
    if (s->lock >= 0)
        close(s->lock); /* never started: the session is free again */
    free(s->name);
    free(s->repo);
    free(s->id);
    free(s->dir);
    free(s->owner);
    tnd_answer_clear(&s->answer);
    json_object_put(s->report);
    free(s);
    *self_p = NULL;
}

const char *tnd_hubsession_name(const tnd_hubsession *self)
{
    return self->name;
}

const char *tnd_hubsession_id(const tnd_hubsession *self)
{
    return self->id;
}

const char *tnd_hubsession_dir(const tnd_hubsession *self)
{
    return self->dir;
}

const char *tnd_hubsession_repo(const tnd_hubsession *self)
{
    return self->repo;
}

tnd_hubsession_state tnd_hubsession_state_of(const tnd_hubsession *self)
{
    return self->state;
}

void tnd_hubsession_set_answer(tnd_hubsession *self, const tnd_answer *ans,
                               long escalation)
{
    tnd_answer_clear(&self->answer);
    self->answer = *ans;
    self->answer.text = ans->text ? tnd_xstrdup(ans->text) : NULL;
    self->escalation = escalation;
}

void tnd_hubsession_hold_lock(tnd_hubsession *self, int fd)
{
    if (self->lock >= 0)
        close(self->lock);
    self->lock = fd;
    /* `tandem sessions` says queued, not running, until a slot is free */
    tnd_session_lock_queued(fd, true);
}

void tnd_hubsession_set_who(tnd_hubsession *self, const tnd_client_who *who)
{
    self->who = *who;
}

void tnd_hubsession_set_owner(tnd_hubsession *self, const char *owner)
{
    free(self->owner);
    self->owner = owner && *owner ? tnd_xstrdup(owner) : NULL;
}

const char *tnd_hubsession_owner(const tnd_hubsession *self)
{
    return self->owner;
}

/* ---- the thread --------------------------------------------------------- */

/* The session, run as `tandem resume` would run it, with the link as its
 * crew and its streams. Its last message says how it ended. */
static void *session_main(void *arg)
{
    tnd_hubsession *s = arg;
    tnd_link *link = s->link;
    FILE *out = tnd_link_stream(link, TND_LINK_OUT);
    FILE *err = tnd_link_stream(link, TND_LINK_ERR);
    int code = TND_EXIT_FAILED;

    if (out && err) {
        tnd_run_host host = s->shared;
        tnd_continue_options co;
        host.link = link;
        host.out = out;
        host.err = err;
        host.stop = &s->stop;
        host.report = &s->report;
        memset(&co, 0, sizeof(co));
        co.repo = s->repo;
        co.session = s->id;
        co.host = &host;
        co.fresh = true;
        co.answer = s->answer.kind;
        co.text = s->answer.text;
        co.iterations = s->answer.iterations;
        co.tokens = s->answer.tokens;
        co.calls = s->answer.calls;
        co.escalation = s->escalation;
        co.who = s->who.via ? &s->who : NULL;
        /* held since it was queued: nothing took it meanwhile */
        co.locked = s->thread_lock >= 0;
        if (co.locked)
            tnd_session_lock_queued(s->thread_lock, false);
        co.lock_fd = s->thread_lock;
        /* the diff in large pieces, progress a line at a time */
        setvbuf(out, NULL, _IOFBF, OUT_BUF);
        code = tnd_run_continue(&co);
    } else {
        tnd_log_error("session %s: %s", s->id, tnd_error_last());
        if (s->thread_lock >= 0)
            close(s->thread_lock);
    }
    if (out)
        fclose(out);
    if (err)
        fclose(err);
    if (tnd_link_done(link, code) < 0)
        tnd_log_error("session %s: %s", s->id, tnd_error_last());
    tnd_link_destroy(&link);
    return NULL;
}

int tnd_hubsession_start(tnd_hubsession *self, const char *endpoint,
                         const tnd_run_host *shared)
{
    sigset_t all, old;
    int rc;

    self->shared = *shared;
    if (!(self->link = tnd_link_new(shared->zmq_ctx, endpoint, self->name)))
        return -1;
    /* the thread inherits the mask: signals stay the main thread's */
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    self->thread_lock = self->lock; /* the thread's from now on */
    self->lock = -1;
    rc = pthread_create(&self->thread, NULL, session_main, self);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        self->lock = self->thread_lock;
        self->thread_lock = -1;
        tnd_link_destroy(&self->link);
        return tnd_error_set("cannot start a thread: %s", strerror(rc));
    }
    self->ran = true; /* the link is the thread's now */
    self->started = true;
    self->state = TND_HS_RUNNING;
    return 0;
}

void tnd_hubsession_stop(tnd_hubsession *self, void *router, int sig)
{
    if (!self->started)
        return;
    atomic_store(&self->stop, sig);
    /* the crew polls its link 200 ms at a time: a second SIGTERM, "at
     * once", waited for that; the flag is set before the message goes,
     * so the woken session sees it */
    if (router && tnd_link_send_stop(router, self->name) < 0)
        tnd_log_warn("session %s: %s", self->id, tnd_error_last());
}

/* ---- followers ---------------------------------------------------------- */

int tnd_hubsession_follow(tnd_hubsession *self, const unsigned char *client,
                          size_t client_len, const char *service)
{
    follower *f;

    /* a client that attaches again is one follower, not another: a
     * client looping on attach took every place (a review found it) */
    for (size_t i = 0; i < self->nf; i++)
        if (self->f[i].len == client_len &&
            memcmp(self->f[i].id, client, client_len) == 0) {
            snprintf(self->f[i].service, sizeof(self->f[i].service), "%s",
                     service);
            return 0;
        }
    if (self->nf == TND_HUBSESSION_MAX_FOLLOWERS)
        return tnd_error_set("%d clients follow session %s already; that is "
                             "the most it takes",
                             TND_HUBSESSION_MAX_FOLLOWERS, self->id);
    f = &self->f[self->nf++];
    memcpy(f->id, client, client_len);
    f->len = client_len;
    snprintf(f->service, sizeof(f->service), "%s", service);
    return 0;
}

/* body to every follower; one that cannot be reached is forgotten.
 * Frees body. */
static void tell(tnd_hubsession *self, tnd_broker *broker, bool final,
                 char *body, size_t len)
{
    for (size_t i = 0; i < self->nf;) {
        follower *f = &self->f[i];
        if (tnd_broker_client_send(broker, f->id, f->len, f->service, final,
                                   body, len) == 0) {
            i++;
        } else if (final) {
            tnd_log_warn("session %s: cannot tell a client its end (%s)",
                         self->id, tnd_error_last());
            i++;
        } else {
            tnd_log_info("session %s: a client is gone (%s)", self->id,
                         tnd_error_last());
            memmove(f, f + 1, (self->nf - i - 1) * sizeof(*f));
            self->nf--;
        }
    }
    if (final)
        self->nf = 0;
    free(body);
}

void tnd_hubsession_output(tnd_hubsession *self, tnd_broker *broker, bool err,
                           const char *text, size_t len)
{
    char *clean = NULL;

    /* made UTF-8 before it is cut: a bad byte becomes U+FFFD, three
     * bytes, and a full piece cut first went past the 64 KiB a client
     * takes (a review found an approved diff so lost to its submit) */
    if (self->nf > 0 && !tnd_utf8_valid(text, len)) {
        clean = tnd_utf8_clean(text, len, NULL);
        text = clean;
        len = strlen(clean);
    }
    while (len > 0 && self->nf > 0) {
        size_t n = len < TND_CLIENT_MAX_TEXT ? len : TND_CLIENT_MAX_TEXT, blen;
        char *body;
        /* a piece ends between characters, never inside one */
        while (n < len && n > 1 && ((unsigned char)text[n] & 0xC0) == 0x80)
            n--;
        body = tnd_client_output(err, text, n, &blen);
        tell(self, broker, false, body, blen);
        text += n;
        len -= n;
    }
    free(clean);
}

void tnd_hubsession_alive(tnd_hubsession *self, tnd_broker *broker)
{
    size_t len;
    char *body;

    if (self->nf == 0)
        return;
    body = tnd_client_alive(&len);
    tell(self, broker, false, body, len);
}

char *tnd_hubsession_done_body(const char *id, int dir, int code,
                               json_object *wrote, size_t *len)
{
    char *path = tnd_xasprintf("report.json of session %s", id), *text = NULL,
         *body;
    json_object *report = json_object_get(wrote);
    size_t n = 0;

    if (!report &&
        (dir < 0 ||
         tnd_fs_read_at(&text, &n, dir, "report.json", path, REPORT_MAX) < 0 ||
         tnd_json_parse(&report, text, n) < 0)) {
        tnd_log_warn("session %s: no report: %s", id, tnd_error_last());
        json_object_put(report);
        report = NULL;
    }
    body = tnd_client_done(id, code, tnd_json_str_or(report, "status", NULL),
                           report, len);
    if (*len > TND_MDP_MAX_BODY) {
        /* a reply that large is never sent (a review found the client
         * waiting for it until it gave up): the outcome without the
         * report, which stays in the session's directory */
        if (wrote) /* not read: about the reply's size */
            n = *len;
        tnd_log_warn("session %s: report.json (%zu bytes) is larger than a "
                     "reply carries; the client is told where it is",
                     id, n);
        free(body);
        body = tnd_client_done(
            id, code, tnd_json_str_or(report, "status", NULL), NULL, len);
    }
    json_object_put(report);
    free(text);
    free(path);
    return body;
}

void tnd_hubsession_finish(tnd_hubsession *self, tnd_broker *broker, int code)
{
    size_t len = 0;
    char *body;

    if (self->started) {
        pthread_join(self->thread, NULL);
        self->started = false;
    }
    if (code > TND_EXIT_SIGNAL)
        /* stopped by the server's stop: the next server goes on with it,
         * and its clients wait for that one as for a queued session's
         * (a done with 143 ended them, and a pipeline that ran the task
         * again ran it twice) */
        body = tnd_client_error(
            "stopping",
            "tandem serve stopped while this session ran; it is on disk, "
            "and the next tandem serve goes on with it (tandem submit "
            "--attach ID follows it then)",
            &len);
    else if (self->report) {
        /* the report the thread wrote, not read back from the file */
        body = tnd_hubsession_done_body(self->id, -1, code, self->report, &len);
    } else {
        /* from its directory as the server made it: a repository's owner
         * could have put a link, or another repository's session, where
         * its path led (its report went to this session's followers) */
        int dir = tnd_session_dir_open(self->repo, self->id);
        if (dir < 0)
            tnd_log_warn("session %s: its report is not sent: %s", self->id,
                         tnd_error_last());
        body = tnd_hubsession_done_body(self->id, dir, code, NULL, &len);
        if (dir >= 0)
            close(dir);
    }
    tell(self, broker, true, body, len);
}

void tnd_hubsession_fail(tnd_hubsession *self, tnd_broker *broker,
                         const char *kind, const char *why)
{
    size_t len;
    char *body = tnd_client_error(kind, why, &len);

    tell(self, broker, true, body, len);
}

json_object *tnd_hubsession_json(const tnd_hubsession *self)
{
    json_object *o = json_object_new_object();

    json_object_object_add(o, "session", json_object_new_string(self->id));
    json_object_object_add(o, "repo", json_object_new_string(self->repo));
    json_object_object_add(o, "state",
                           json_object_new_string(self->state == TND_HS_RUNNING
                                                      ? "running"
                                                      : "queued"));
    json_object_object_add(o, "followers", json_object_new_int((int)self->nf));
    return o;
}

static bool owned_by(const tnd_hubsession *s, const char *owner)
{
    return !owner || (s->owner && strcmp(s->owner, owner) == 0);
}

json_object *tnd_hubsession_list(tnd_hubsession *const *s, size_t n,
                                 const char *owner, size_t max, size_t *more)
{
    json_object *list = json_object_new_array();
    size_t size = 0, i;

    *more = 0;
    for (i = 0; i < n; i++) {
        json_object *e;
        size_t len = 0;
        if (!owned_by(s[i], owner))
            continue;
        e = tnd_hubsession_json(s[i]);
        json_object_to_json_string_length(e, JSON_C_TO_STRING_PLAIN, &len);
        if (size + len + 1 > max) {
            json_object_put(e);
            break;
        }
        size += len + 1;
        json_object_array_add(list, e);
    }
    for (; i < n; i++)
        *more += owned_by(s[i], owner);
    return list;
}
