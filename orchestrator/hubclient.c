/* What clients of tandem serve ask the hub (see hub_int.h): submit a
 * task or a review, follow a session, the server's status (a person's
 * answer: hubanswer.c). Every request is checked before anything is
 * made; a refusal names the reason. */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/error.h"
#include "common/fs.h"
#include "common/log.h"
#include "common/str.h"
#include "common/xalloc.h"
#include "orchestrator/hub_int.h"
#include "orchestrator/run.h"
#include "orchestrator/rundir.h"
#include "orchestrator/session.h"
#include "proto/client.h"
#include "proto/curve.h"
#include "proto/json.h"
#include "proto/mdp.h"

/* The most bytes of sessions a status reply lists: half a frame. */
#define STATUS_LIST_MAX (TND_MDP_MAX_BODY / 2)

void tnd_hub_answer(tnd_hub *h, const tnd_broker_event *ev, bool final,
                    char *body, size_t len)
{
    if (tnd_broker_client_send(h->broker, ev->client, ev->client_len,
                               ev->service, final, body, len) < 0)
        tnd_log_warn("cannot answer client %s: %s", ev->key, tnd_error_last());
    free(body);
}

void tnd_hub_refuse(tnd_hub *h, const tnd_broker_event *ev, const char *kind,
                    const char *why)
{
    size_t len;
    char *body = tnd_client_error(kind, why, &len);

    tnd_log_info("refusing a request of client %s: %s", ev->key, why);
    tnd_hub_answer(h, ev, true, body, len);
}

/* A review's diff, as the client sent it, in a file of the server's
 * own private runtime directory for tnd_run_create to read (it keeps a
 * copy in the session); NULL with the error set. *held_out holds the
 * file's flock, which keeps a sweep from taking it for a killed
 * server's however long the session takes to make: the caller unlinks
 * the file, then closes it, and frees. */
static char *diff_file(int *held_out, const char *diff)
{
    char *base = tnd_rundir_base(), *path;
    int fd;

    *held_out = -1;
    if (!base)
        return NULL;
    /* not review-XXXXXX: that names a review's runtime directory */
    path = tnd_xasprintf(
        "%s/" TND_RUNDIR_DIFF_PREFIX "XXXXXX" TND_RUNDIR_DIFF_SUFFIX, base);
    free(base);
    fd = tnd_fs_mkstemps_held(path, (int)strlen(TND_RUNDIR_DIFF_SUFFIX));
    if (fd < 0) {
        tnd_error_sys("cannot make %s", path);
        free(path);
        return NULL;
    }
    if (tnd_fs_write_all(fd, diff, strlen(diff)) < 0) {
        tnd_error_sys("cannot write %s", path);
        unlink(path);
        close(fd);
        free(path);
        return NULL;
    }
    *held_out = fd;
    return path;
}

/* The CURVE key that sent ev, or NULL (not over CURVE). */
static const char *owner_of(const tnd_broker_event *ev)
{
    return ev->who.via == TND_CLIENT_VIA_CURVE && *ev->who.key ? ev->who.key
                                                               : NULL;
}

/* tnd_run_host.made for create: the session recorded as accepted
 * before its task record is journaled (a server killed between the two
 * left a task on disk that no server ran, and whose client never heard
 * its id). */
typedef struct made_arg {
    tnd_hub *h;
    char *repo, *id; /* recorded: ended again if the session is not made */
} made_arg;

static int made(void *arg, const char *repo, const char *id)
{
    made_arg *m = arg;

    if (tnd_accepted_add(m->h->accepted, repo, id, NULL, NULL) < 0) {
        tnd_error_prefix("session %s cannot be recorded", id);
        return -1;
    }
    m->repo = tnd_xstrdup(repo);
    m->id = tnd_xstrdup(id);
    return 0;
}

/* The session for a submitted task, made and recorded in repo (the
 * path tnd_hub_check_repo checked); NULL with kind and the error set
 * when it cannot be. */
static tnd_hubsession *create(tnd_hub *h, const tnd_broker_event *ev,
                              const tnd_client_request *req, const char *repo,
                              const char **kind)
{
    tnd_run_options ro;
    tnd_run_host host;
    atomic_int never = 0;
    char *id = NULL, *dir = NULL, *said = NULL, *diff = NULL;
    size_t said_len = 0;
    tnd_hubsession *s = NULL;
    made_arg m = {h, NULL, NULL};
    int code, lock = -1, held = -1;

    memset(&ro, 0, sizeof(ro));
    ro.repo = repo;
    ro.config = h->o->config->path;
    ro.task = req->task;
    ro.session_id = req->session;
    ro.review = req->review;
    ro.staged = req->staged;
    ro.rev = req->rev;
    ro.on_head = req->on_head;
    ro.diff_label = "the submitted diff";
    ro.by = &ev->who;
    if (req->diff && !(ro.diff = diff = diff_file(&held, req->diff))) {
        *kind = "failed";
        return NULL;
    }
    memset(&host, 0, sizeof(host));
    host.stop = &never;
    host.config = h->o->config;
    host.made = made;
    host.made_arg = &m;
    host.out = host.err = open_memstream(&said, &said_len);
    if (!host.err) {
        *kind = "failed";
        tnd_error_sys("cannot make a session");
        if (diff) {
            unlink(diff);
            close(held);
        }
        free(diff);
        return NULL;
    }
    code = tnd_run_create(&id, &dir, &ro, &host, &lock);
    fclose(host.err);
    if (diff) {
        unlink(diff);
        close(held); /* after the unlink: no sweep meets it unheld */
    }
    free(diff);
    if (code != 0) {
        *kind = code == TND_EXIT_USAGE ? "config" : "failed";
        tnd_str_trim(said);
        tnd_error_set("%s",
                      strncmp(said, "tandem: ", 8) == 0 ? said + 8 : said);
        /* recorded, then not made: no server is to take it up */
        if (m.id && tnd_accepted_end(h->accepted, m.id, -1, NULL) < 0)
            tnd_log_error("%s", tnd_error_last());
    } else {
        s = tnd_hub_add(h, m.repo, id, dir, owner_of(ev));
        tnd_hubsession_hold_lock(s, lock); /* until its thread runs it */
        lock = -1;
    }
    if (lock >= 0)
        close(lock);
    free(m.repo);
    free(m.id);
    free(said);
    free(id);
    free(dir);
    return s;
}

static bool left_here(const tnd_hub *h, const char *id);
static bool accepted_here(const tnd_hub *h, const char *id);
static void attach_id(tnd_hub *h, const tnd_broker_event *ev, const char *id);
static bool may_follow(tnd_hub *h, const tnd_broker_event *ev, const char *id,
                       const char *owner);

/* The directory of session id in repo, for an answer to a client:
 * opened as tnd_session_dir_open opens one, each directory from the
 * one before, through no link, each the server user's and nobody
 * else's to write in, and every file of it read from the descriptor
 * (by path, the repository's owner could put a link to another user's
 * session where the path led, before the server read it or between its
 * checks and its reads, and have that session's report sent to them).
 * The descriptor, or -1 (TND_ENOTFOUND: not there) with the error
 * set, naming the session, the path and why. */
int tnd_hub_open_session(const char *repo, const char *id)
{
    int dir = tnd_session_dir_open(repo, id);

    if (dir < 0 && dir != TND_ENOTFOUND)
        tnd_error_prefix("session %s is not read by this server", id);
    return dir;
}

/* The done of session id of repo, which ended, to ev: code (as the
 * server kept it) as its journal says it now, and its report, both
 * read from the directory open_session opens. dir: that directory, or
 * -1 when it is not there (code kept, no report). */
static void answer_done(tnd_hub *h, const tnd_broker_event *ev,
                        const char *repo, const char *id, int dir, int code)
{
    char *path = tnd_session_dir_of(repo, id), *body;
    size_t len;

    body = tnd_hubsession_done_body(id, dir, tnd_hub_code_now(dir, path, code),
                                    NULL, &len);
    free(path);
    tnd_hub_answer(h, ev, true, body, len);
}

/* A session a tandem serve made in repo, named by part (its whole id
 * when whole), that ended or waits for a person, though this server
 * keeps no outcome of it: the accepted list keeps the newest
 * TND_ACCEPTED_ENDED_MAX, and a client that came back after more had
 * ended was refused, its id taken, or told no such session ran, while
 * the session and its report were on disk. Its task record says whose
 * it is (by.key), and may_follow judges that as for a kept outcome; the
 * record and the report are read from one descriptor of its directory
 * (open_session), so what is judged is what is sent. true when ev was
 * answered: the session's done, forbidden, or its directory refused. */
static bool ended_on_disk(tnd_hub *h, const tnd_broker_event *ev,
                          const char *repo, const char *part, bool whole)
{
    tnd_session_facts f;
    char *real = tnd_hub_real_repo(repo), *id = NULL, *path;
    bool answered = false;
    struct stat st;
    int dir = -1;

    memset(&f, 0, sizeof(f));
    if (whole) {
        /* a whole id is its directory's name: a new task's is not
         * there, and the repository's sessions are not listed for it */
        path =
            tnd_session_id_valid(part) ? tnd_session_dir_of(real, part) : NULL;
        if (path && lstat(path, &st) == 0)
            id = tnd_xstrdup(part);
        free(path);
    } else if (tnd_run_facts(&f, real, part) == 0) {
        id = tnd_xstrdup(f.id); /* which one; what it says is read below */
    }
    tnd_session_facts_clear(&f);
    if (id && (dir = tnd_hub_open_session(real, id)) < 0 &&
        dir != TND_ENOTFOUND) {
        answered = true;
        tnd_hub_refuse(h, ev, "forbidden", tnd_error_last());
    } else if (dir >= 0 && tnd_run_facts_at(&f, dir, real, id) == 0 &&
               f.served && f.status != TND_SESSION_OPEN) {
        answered = true;
        if (may_follow(h, ev, f.id, f.owner))
            /* as a kept outcome: what its journal says now */
            answer_done(h, ev, real, f.id, dir, TND_EXIT_FAILED);
    }
    tnd_error_clear(); /* none, or several: not this server's to say */
    if (dir >= 0)
        close(dir);
    tnd_session_facts_clear(&f);
    free(id);
    free(real);
    return answered;
}

/* The client's submit, taken by s: accepted (the FINAL when detached),
 * and followed unless detached. */
static void accepted(tnd_hub *h, const tnd_broker_event *ev,
                     const tnd_client_request *req, tnd_hubsession *s)
{
    size_t len;
    char *body =
        tnd_client_accepted(tnd_hubsession_id(s), tnd_hubsession_dir(s),
                            tnd_hub_ahead_of(h, s), &len);

    if (!req->detach)
        tnd_hubsession_follow(s, ev->client, ev->client_len, ev->service);
    tnd_hub_answer(h, ev, req->detach, body, len);
    tnd_hub_start_queued(h);
}

/* Whether session id of repo, whose directory dir is, is one a tandem
 * serve made and that has not ended, read from dir into *f (cleared
 * first). */
static bool open_on_disk(tnd_session_facts *f, int dir, const char *repo,
                         const char *id)
{
    tnd_session_facts_clear(f);
    if (tnd_run_facts_at(f, dir, repo, id) < 0) {
        tnd_error_clear();
        return false;
    }
    return f->served && f->status == TND_SESSION_OPEN;
}

/* Whether ev may have this server go on with the session of f, not
 * ended, that it does not know: refused (and true returned) when it is
 * not the key's, the server stops, another configuration ran it, or the
 * server is full. */
static bool take_up_refused(tnd_hub *h, const tnd_broker_event *ev,
                            const char *repo, const tnd_session_facts *f)
{
    char *why;
    size_t len;
    char *body;

    if (!may_follow(h, ev, f->id, f->owner))
        return true;
    if (h->draining) {
        tnd_hub_refuse(h, ev, "stopping",
                       "tandem serve is stopping and takes no new task; submit "
                       "again when it runs");
        return true;
    }
    /* run by path there, as a task it takes */
    if (tnd_hub_trust_repo(repo) < 0) {
        tnd_hub_refuse(h, ev, "forbidden", tnd_error_last());
        return true;
    }
    if (!tnd_hub_runs_config(h, f->config)) {
        why = tnd_xasprintf(
            "session %s is on disk in %s, not ended, and was accepted under "
            "%s; this server runs %s: it goes on in a tandem serve with that "
            "configuration (then tandem submit --attach %s --repo %s follows "
            "it), or here with tandem resume --repo %s %s",
            f->id, repo, f->config ? f->config : "the built-in defaults",
            h->o->config->path ? h->o->config->path : "the built-in defaults",
            f->id, repo, repo, f->id);
        tnd_hub_refuse(h, ev, "config", why);
        free(why);
        return true;
    }
    if ((long)h->n >= h->o->max_sessions + h->o->queue_max) {
        body = tnd_client_busy(h->o->max_sessions, h->o->queue_max, &len);
        tnd_hub_answer(h, ev, true, body, len);
        return true;
    }
    return false;
}

/* A session a tandem serve made in repo under the whole id, its task
 * journaled, that has not ended, and that this server does not know: a
 * client that lost the server that accepted it (killed once the task was
 * journaled, before it answered; one of another state directory, whose
 * accepted list this server does not read) sends the same submit here.
 * It was refused as an id taken ("session ID is in REPO already"), its
 * task on disk. The session is the client's (may_follow, as for an
 * outcome on disk), so this server goes on with it, as a next server
 * goes on with its own list's (take_over): recorded in its accepted
 * list, queued under its lock, and followed. A task is still never made
 * twice: the session replays its journal. One another tandem holds (the
 * server that accepted it still runs it, or a tandem resume) is refused,
 * naming the holder. true when ev was answered. */
static bool open_here(tnd_hub *h, const tnd_broker_event *ev,
                      const tnd_client_request *req)
{
    tnd_session_facts f;
    tnd_hubsession *s;
    char *real, *path;
    bool answered = true;
    int dir, lock = -1;

    if (!tnd_session_id_valid(req->session))
        return false;
    memset(&f, 0, sizeof(f));
    real = tnd_hub_real_repo(req->repo);
    path = tnd_session_dir_of(real, req->session);
    if ((dir = tnd_hub_open_session(real, req->session)) < 0) {
        /* not there, or refused: ended_on_disk answered the latter */
        tnd_error_clear();
        answered = false;
    } else if (!open_on_disk(&f, dir, real, req->session)) {
        answered = false; /* unstarted, not served, or ended */
    } else if (take_up_refused(h, ev, real, &f)) {
        /* answered */
    } else if ((lock = tnd_session_lock_dir(path)) < 0) {
        tnd_hub_refuse(h, ev, "failed", tnd_error_last());
    } else if (!open_on_disk(&f, dir, real, req->session)) {
        /* it ended as the lock was taken: its outcome, as on disk */
        close(lock);
        answered = ended_on_disk(h, ev, real, req->session, true);
    } else if (tnd_accepted_add(h->accepted, real, f.id, NULL, NULL) < 0) {
        close(lock);
        tnd_error_prefix("session %s cannot be recorded", f.id);
        tnd_hub_refuse(h, ev, "failed", tnd_error_last());
    } else {
        s = tnd_hub_add(h, real, f.id, path, f.owner);
        tnd_hubsession_hold_lock(s, lock); /* until its thread runs it */
        fprintf(stderr,
                "tandem serve: session %s (%s), on disk and not ended, goes "
                "on here: its client sent its task again\n",
                f.id, real);
        accepted(h, ev, req, s);
    }
    if (dir >= 0)
        close(dir);
    tnd_session_facts_clear(&f);
    free(path);
    free(real);
    return answered;
}

/* Whether this server made, or took over, the session id, running,
 * waiting or ended. */
static bool known(tnd_hub *h, const char *id)
{
    tnd_accepted_outcome e;

    return tnd_hub_by_id(h, id) || accepted_here(h, id) || left_here(h, id) ||
           tnd_accepted_outcome_of(h->accepted, id, &e);
}

static void on_submit(tnd_hub *h, const tnd_broker_event *ev,
                      const tnd_client_request *req)
{
    const char *kind = "bad_request";
    tnd_hubsession *s;
    size_t len;
    char *body, *repo;

    if (req->session && !tnd_session_id_valid(req->session)) {
        tnd_hub_refuse(h, ev, "bad_request",
                       "field 'session' must be a session id "
                       "(YYYYMMDD-HHMMSS-HEX), the one the client proposes");
        return;
    }
    /* sent again by a client that lost the server before it heard the
     * id it proposed: the session made then, if one was, is followed,
     * never made twice (the client said no server answered, and exited
     * 1, while the next server ran its task) */
    if (req->session && known(h, req->session)) {
        attach_id(h, ev, req->session);
        return;
    }
    /* or one that ended before the newest outcomes this server keeps:
     * its outcome, from its repository (it was refused as an id taken) */
    if (req->session && ended_on_disk(h, ev, req->repo, req->session, true))
        return;
    /* or one whose task is on disk, not ended, that this server does not
     * know (its server lost, of another state directory): it goes on
     * here (it was refused as an id taken) */
    if (req->session && open_here(h, ev, req))
        return;
    if (h->draining) {
        tnd_hub_refuse(h, ev, "stopping",
                       "tandem serve is stopping and takes no new task; submit "
                       "again when it runs");
        return;
    }
    /* a request that could never run is told so, busy or not */
    if (!(repo = tnd_hub_check_repo(req->repo, &kind)) ||
        (kind = "config", tnd_hub_check_config(h, req->config) < 0)) {
        tnd_hub_refuse(h, ev, kind, tnd_error_last());
        free(repo);
        return;
    }
    if ((long)h->n >= h->o->max_sessions + h->o->queue_max) {
        body = tnd_client_busy(h->o->max_sessions, h->o->queue_max, &len);
        tnd_hub_answer(h, ev, true, body, len);
        free(repo);
        return;
    }
    s = create(h, ev, req, repo, &kind);
    free(repo);
    if (!s) {
        tnd_hub_refuse(h, ev, kind, tnd_error_last());
        return;
    }
    fprintf(stderr, "tandem serve: session %s accepted in %s\n",
            tnd_hubsession_id(s), tnd_hubsession_repo(s));
    accepted(h, ev, req, s);
}

/* Over CURVE a session is its submitter's: only that key follows it, or
 * a key with the person role (who answers it, and must see it first).
 * Sessions not submitted over CURVE have no owner, and only a person's
 * key follows them there. Without CURVE nothing tells clients apart. */
static bool may_follow(tnd_hub *h, const tnd_broker_event *ev, const char *id,
                       const char *owner)
{
    char *why;

    if (ev->who.via != TND_CLIENT_VIA_CURVE || (ev->roles & TND_CURVE_PERSON) ||
        (owner && strcmp(owner, ev->who.key) == 0))
        return true;
    why = tnd_xasprintf("session %s was not submitted with this key: only the "
                        "key that submitted it, or a key with the person "
                        "role, may follow it",
                        id);
    tnd_hub_refuse(h, ev, "forbidden", why);
    free(why);
    return false;
}

/* Whether take_over left id for a next server. */
static bool left_here(const tnd_hub *h, const char *id)
{
    return tnd_str_list_has((const char *const *)h->left, id);
}

/* Whether id is a session this server accepted and has not ended. */
static bool accepted_here(const tnd_hub *h, const char *id)
{
    for (size_t i = 0; i < tnd_accepted_pending(h->accepted); i++)
        if (strcmp(tnd_accepted_id(h->accepted, i), id) == 0)
            return true;
    return false;
}

/* Follow session id (whole). */
static void attach_id(tnd_hub *h, const tnd_broker_event *ev, const char *id)
{
    tnd_hubsession *s = tnd_hub_by_id(h, id);
    tnd_accepted_outcome e;
    size_t len;
    char *body;

    if (!s && tnd_accepted_outcome_of(h->accepted, id, &e)) {
        if (!may_follow(h, ev, e.id, e.owner))
            return;
        /* it ended while nobody followed it, or its client lost the end
         * (in this server or an earlier one): its outcome, the newest
         * (one that ended waiting for a person and was answered ended
         * again: a review found --attach saying 3 after approval) */
        int dir = tnd_hub_open_session(e.repo, e.id);
        if (dir < 0 && dir != TND_ENOTFOUND)
            tnd_hub_refuse(h, ev, "forbidden", tnd_error_last());
        else
            answer_done(h, ev, e.repo, e.id, dir, e.code);
        if (dir >= 0)
            close(dir);
        return;
    }
    if (!s && left_here(h, id)) {
        /* an earlier server's that take_over left for a next server,
         * and why (each was said to be under another configuration) */
        size_t i = 0;
        while (strcmp(h->left[i], id) != 0)
            i++;
        char *why =
            tnd_xasprintf("session %s %s (or for tandem resume --repo REPO %s)",
                          id, h->left_why[i], id);
        tnd_hub_refuse(h, ev, "not_found", why);
        free(why);
        return;
    }
    if (!s && h->draining && accepted_here(h, id)) {
        /* a queued session was let go at the first SIGTERM: it is on
         * disk for the next server, not ended (a review found it called
         * not found) */
        tnd_hub_refuse(h, ev, "stopping",
                       "tandem serve is stopping; a session it had not started "
                       "waits for the next server: attach again when it runs");
        return;
    }
    if (!s && accepted_here(h, id)) {
        /* on disk, not ended, not running: its thread could not start
         * (the error is in this server's log); the next server goes on
         * with it */
        char *why = tnd_xasprintf(
            "session %s could not be started by this server (its log says "
            "why); it is kept, and the next tandem serve goes on with it",
            id);
        tnd_hub_refuse(h, ev, "failed", why);
        free(why);
        return;
    }
    if (!s) {
        tnd_hub_refuse(h, ev, "not_found", "no such session in this server");
        return;
    }
    if (!may_follow(h, ev, tnd_hubsession_id(s), tnd_hubsession_owner(s)))
        return;
    if (tnd_hubsession_follow(s, ev->client, ev->client_len, ev->service) < 0) {
        tnd_hub_refuse(h, ev, "busy", tnd_error_last());
        return;
    }
    body = tnd_client_accepted(tnd_hubsession_id(s), tnd_hubsession_dir(s),
                               tnd_hub_ahead_of(h, s), &len);
    tnd_hub_answer(h, ev, false, body, len);
}

/* Follow a session named by any unique part of its id, as README shows
 * (`--attach 20261122-014455-3fa2`; only the whole id was found). */
static void on_attach(tnd_hub *h, const tnd_broker_event *ev,
                      const tnd_client_request *req)
{
    /* over CURVE a key finds its own sessions by a part of their id */
    const char *mine =
        ev->who.via == TND_CLIENT_VIA_CURVE && !(ev->roles & TND_CURVE_PERSON)
            ? ev->who.key
            : NULL;
    bool none;
    char *id = tnd_hub_resolve_id(h, req->session, mine, &none), *why;

    if (!id) {
        /* one that ended before the outcomes this server keeps, in the
         * repository the client named: a key finds its own there by the
         * whole id (a part would tell it of other keys' sessions) */
        why = tnd_xstrdup(tnd_error_last());
        if (!none || !req->repo ||
            !ended_on_disk(h, ev, req->repo, req->session, mine != NULL))
            tnd_hub_refuse(h, ev, "not_found", why);
        free(why);
        return;
    }
    attach_id(h, ev, id);
    free(id);
}

static void on_status(tnd_hub *h, const tnd_broker_event *ev)
{
    json_object *o = json_object_new_object(), *list;
    bool person =
        ev->who.via != TND_CLIENT_VIA_CURVE || (ev->roles & TND_CURVE_PERSON);
    size_t len, more;
    char *body;

    json_object_object_add(o, "tandem", json_object_new_int(1));
    json_object_object_add(o, "type", json_object_new_string("status"));
    json_object_object_add(
        o, "running",
        json_object_new_int64((int64_t)tnd_hub_count(h, TND_HS_RUNNING)));
    json_object_object_add(
        o, "queued",
        json_object_new_int64((int64_t)tnd_hub_count(h, TND_HS_QUEUED)));
    json_object_object_add(o, "max_sessions",
                           json_object_new_int64(h->o->max_sessions));
    json_object_object_add(o, "queue_max",
                           json_object_new_int64(h->o->queue_max));
    json_object_object_add(o, "stopping", json_object_new_boolean(h->draining));
    /* a pipeline's key sees its own sessions; a person's, all */
    list = tnd_hubsession_list(h->s, h->n, person ? NULL : ev->who.key,
                               STATUS_LIST_MAX, &more);
    json_object_object_add(o, "sessions", list);
    json_object_object_add(o, "more", json_object_new_int64((int64_t)more));
    body = tnd_json_dump(o, &len);
    json_object_put(o);
    tnd_hub_answer(h, ev, true, body, len);
}

/* Over CURVE a key is a credential, and its roles say what it may ask:
 * a task needs `client`; an answer needs `person`, since approve lets a
 * change past the gate, which a pipeline's key must not do to its own
 * tasks. Following sessions and status need either (the broker let only
 * those through). Over ipc:// only the server's user (or root) connects;
 * over tcp:// without CURVE nothing tells keys apart (--insecure). */
static bool may(tnd_hub *h, const tnd_broker_event *ev, tnd_client_kind kind)
{
    const char *why = NULL;

    if (ev->who.via != TND_CLIENT_VIA_CURVE)
        return true;
    if (kind == TND_CLIENT_KIND_SUBMIT && !(ev->roles & TND_CURVE_CLIENT))
        why = "this key may not submit tasks: the server's authorized keys "
              "list it without the client role";
    else if (kind == TND_CLIENT_KIND_ANSWER && !(ev->roles & TND_CURVE_PERSON))
        why = "this key may not answer sessions: the server's authorized "
              "keys list it without the person role (answers such as "
              "approve let a change past the gate, so they are a person's, "
              "not a pipeline's)";
    if (!why)
        return true;
    tnd_hub_refuse(h, ev, "forbidden", why);
    return false;
}

void tnd_hub_on_client(tnd_hub *h, const tnd_broker_event *ev)
{
    tnd_client_request req;

    if (tnd_client_request_decode(&req, ev->service, ev->body, ev->body_len) <
        0) {
        tnd_hub_refuse(h, ev, "bad_request", tnd_error_last());
        return;
    }
    if (!may(h, ev, req.kind)) {
        tnd_client_request_clear(&req);
        return;
    }
    switch (req.kind) {
    case TND_CLIENT_KIND_SUBMIT:
        on_submit(h, ev, &req);
        break;
    case TND_CLIENT_KIND_ATTACH:
        on_attach(h, ev, &req);
        break;
    case TND_CLIENT_KIND_STATUS:
        on_status(h, ev);
        break;
    case TND_CLIENT_KIND_ANSWER:
        tnd_hub_on_answer(h, ev, &req);
        break;
    }
    tnd_client_request_clear(&req);
}
