/* `tandem watch` (see watch.h). */
#include "orchestrator/watch.h"

#include <errno.h>
#include <time.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zmq.h>

#include "common/clock.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/term.h"
#include "common/str.h"
#include "common/xalloc.h"
#include "orchestrator/doing.h"
#include "orchestrator/history.h"
#include "orchestrator/journal.h"
#include "orchestrator/run.h"
#include "orchestrator/session.h"
#include "orchestrator/submit.h"
#include "proto/json.h"

/* Sessions one watch follows at most (each holds a socket); the rest are
 * counted on the last line. It was 64, and the 65th never showed. */
#define MAX_WATCHED 4096
#define TICK_MS     250

typedef struct watched {
    char *id;
    char *repo;
    char *dir;
    char *task;
    void *sub;
    int64_t started_wall;
    int64_t ended_wall; /* when it finished or stopped; 0: it runs */
    bool live;          /* running when the watch found it */
    bool waited;        /* found before its run published its events */
    long seq;           /* the last journal record applied */
    long attempt;
    long tokens;
    char phase[128];
    tnd_doing doing; /* what an agent does, when the last word was its */
    bool doing_now;
    bool done;
} watched;

typedef struct watch {
    const tnd_watch_options *opts;
    char *repo;
    void *ctx;
    watched *items;
    size_t n, alloc;
    size_t left_out; /* running sessions past MAX_WATCHED */
    long queued;     /* --server: sessions its queue holds, which will
                        run; 0 when it stops (they will not) */
    bool tty;
    int drawn;        /* lines drawn last time (tty) */
    int64_t deadline; /* --for: the end (monotonic ms); 0: none */
} watch;

static long reply_tokens(json_object *rec)
{
    json_object *usage = tnd_json_field(tnd_json_field(rec, "reply"), "usage");

    return tnd_json_int_or(usage, "prompt_tokens", 0) +
           tnd_json_int_or(usage, "completion_tokens", 0);
}

/* Bring a watched session's state up to date with one journal record or
 * event. */
static void apply(watched *w, json_object *e)
{
    const char *type = tnd_json_str_or(e, "type", NULL);
    long seq = tnd_json_int_or(e, "seq", 0);

    if (!type)
        return;
    /* a record read from the journal and heard as an event counts once */
    if (seq > 0) {
        if (seq <= w->seq)
            return;
        w->seq = seq;
    }
    if (tnd_json_int_or(e, "attempt", 0) > w->attempt)
        w->attempt = tnd_json_int_or(e, "attempt", 0);
    if (strcmp(type, "progress") == 0) {
        if (tnd_doing_update(&w->doing, e, tnd_wall_ms()))
            w->doing_now = true;
        return;
    }
    if (strcmp(type, "asked") != 0 && strcmp(type, "unanswered") != 0)
        w->doing_now = false;
    if (strcmp(type, "task") == 0) {
        free(w->task);
        w->task = tnd_xstrdup(tnd_json_str_or(e, "task", NULL));
        w->started_wall = tnd_json_int_or(e, "started_ms", 0);
        snprintf(w->phase, sizeof(w->phase), "starting");
    } else if (strcmp(type, "phase") == 0) {
        snprintf(w->phase, sizeof(w->phase), "%s",
                 tnd_json_str_or(e, "phase", NULL));
    } else if (strcmp(type, "asked") == 0) {
        snprintf(w->phase, sizeof(w->phase), "asked the %s (%s)",
                 tnd_json_str_or(e, "service", "agent"),
                 tnd_json_str_or(e, "step", "?"));
        tnd_doing_start(&w->doing, tnd_json_str_or(e, "service", "agent"));
    } else if (strcmp(type, "baseline") == 0) {
        snprintf(w->phase, sizeof(w->phase), "baseline done");
    } else if (strcmp(type, "skills") == 0 ||
               strncmp(type, "critique.", 9) == 0) {
        /* a quorum's records: each a line of --plain, which said the
         * step before it ("asked the reviewer.2 (critique.2)" for
         * reviewer.1's critique) */
        snprintf(w->phase, sizeof(w->phase), "%.40s done", type);
    } else if (strcmp(type, "proposal") == 0 || strcmp(type, "audit") == 0) {
        w->tokens += reply_tokens(e);
        snprintf(w->phase, sizeof(w->phase), "%s done",
                 strcmp(type, "audit") == 0 ? "audit" : "proposal");
    } else if (strcmp(type, "decision") == 0) {
        snprintf(w->phase, sizeof(w->phase), "decided: %s",
                 tnd_json_str_or(e, "action", NULL));
    } else if (strcmp(type, "escalation") == 0) {
        snprintf(w->phase, sizeof(w->phase), "waiting for a person");
    } else if (strcmp(type, "answer") == 0) {
        snprintf(w->phase, sizeof(w->phase), "a person answered %s",
                 tnd_json_str_or(e, "kind", NULL));
    } else if (strcmp(type, "finish") == 0) {
        snprintf(w->phase, sizeof(w->phase), "finished: %s",
                 tnd_json_str_or(e, "status", NULL));
        /* its time stops there (a session that ended yesterday showed
         * the hours since it started) */
        w->ended_wall =
            tnd_history_parse_time(tnd_json_str_or(e, "time", NULL));
        if (w->ended_wall <= 0)
            w->ended_wall = tnd_wall_ms();
        w->done = true;
    }
}

/* Joining late: what the run does now, from its now.json, when no
 * journal record came after it (records is the journal as read). */
static void current_step(watched *w, json_object *records)
{
    json_object *now = NULL;
    char *path, *text = NULL;
    size_t len, have = records ? json_object_array_length(records) : 0;

    /* a session that ended, or waits for a person, does nothing now: a
     * resume that reached the same question again left a now.json of its
     * replay ("applying") that matched the journal's count */
    if (w->done || strcmp(w->phase, "waiting for a person") == 0)
        return;
    path = tnd_fs_join(w->dir, "now.json");

    if (tnd_fs_read(&text, &len, path, 64 * 1024) == 0 &&
        tnd_json_parse(&now, text, len) == 0 &&
        tnd_json_int_or(now, "records", -1) == (long)have) {
        const char *phase = tnd_json_str_or(now, "phase", NULL);
        if (tnd_json_int_or(now, "attempt", 0) > w->attempt)
            w->attempt = tnd_json_int_or(now, "attempt", 0);
        if (phase) {
            snprintf(w->phase, sizeof(w->phase), "%s", phase);
            w->doing_now = false;
        } else if (*tnd_json_str_or(now, "what", "")) {
            tnd_doing_start(&w->doing, tnd_json_str_or(now, "role", "agent"));
            snprintf(w->doing.what, sizeof(w->doing.what), "%s",
                     tnd_json_str_or(now, "what", ""));
            w->doing.since_ms = tnd_json_int_or(now, "since_ms", 0);
            w->doing_now = true;
        }
    }
    json_object_put(now);
    free(text);
    free(path);
}

/* What the journal holds past what w has, and what the run does now. */
static void catch_up(watched *w)
{
    json_object *records = NULL;
    char *path = tnd_fs_join(w->dir, "journal.jsonl");

    if (tnd_journal_read(&records, path) == 0)
        for (size_t i = 0; i < json_object_array_length(records); i++)
            apply(w, json_object_array_get_idx(records, i));
    current_step(w, records);
    json_object_put(records);
    free(path);
}

/* Follow w's events, when its run has said where they are (a run that
 * had not yet, when the watcher found it, was never followed: scan()
 * tries again, and then catches up with what it missed: a session
 * queued in a tandem serve when the watch found it said "starting"
 * through the whole of its baseline's build). */
static void subscribe(watch *wt, watched *w)
{
    char *path, *ep = NULL;
    size_t len;

    if (w->sub)
        return;
    path = tnd_fs_join(w->dir, "events");
    if (tnd_fs_read(&ep, &len, path, 4096) == 0 && len > 0) {
        int zero = 0;
        w->sub = zmq_socket(wt->ctx, ZMQ_SUB);
        zmq_setsockopt(w->sub, ZMQ_LINGER, &zero, sizeof(zero));
        zmq_setsockopt(w->sub, ZMQ_SUBSCRIBE, "", 0);
        if (zmq_connect(w->sub, tnd_str_trim(ep)) < 0) {
            zmq_close(w->sub);
            w->sub = NULL;
        } else {
            if (w->waited)
                catch_up(w);
            w->waited = false;
            if (!wt->tty) {
                /* a log says from where on its lines are live */
                printf("%s: following\n", w->id);
                fflush(stdout);
            }
        }
    }
    free(ep);
    free(path);
}

static void forget(watched *w)
{
    if (w->sub)
        zmq_close(w->sub);
    free(w->id);
    free(w->repo);
    free(w->dir);
    free(w->task);
    memset(w, 0, sizeof(*w));
}

/* Follow the session id of repo, which runs now; one followed already
 * that had stopped (it waited for a person, who answered) is followed
 * again from its journal (it was left as it stopped, "waiting for a
 * person", and the watch's summary said so of a session approved). */
static void add(watch *wt, const char *repo, const char *id)
{
    watched *w = NULL;

    for (size_t i = 0; i < wt->n && !w; i++)
        if (strcmp(wt->items[i].id, id) == 0) {
            /* one that finished stays so, its lock held for a moment
             * after its finish or not (followed again at every scan, a
             * log said "following" again) */
            if (!wt->items[i].done ||
                strncmp(wt->items[i].phase, "finished", 8) == 0)
                return;
            w = &wt->items[i];
            forget(w);
        }
    if (!w && wt->n == MAX_WATCHED) {
        wt->left_out++;
        return;
    }
    if (!w) {
        TND_GROW(wt->items, wt->alloc, wt->n + 1);
        w = &wt->items[wt->n++];
    }
    memset(w, 0, sizeof(*w));
    w->id = tnd_xstrdup(id);
    w->repo = tnd_xstrdup(repo);
    w->dir = tnd_session_dir_of(repo, id);
    w->live = tnd_session_locked(w->dir);
    snprintf(w->phase, sizeof(w->phase), "?");
    catch_up(w);
    subscribe(wt, w);
    w->waited = !w->sub;
}

/* The sessions the user's tandem serve runs now, from its status: asked
 * every second, through the watch's one context (a context per ask
 * would start and stop its I/O threads each time). The socket is made
 * per ask: a status reply that comes after its ask gave up must not be
 * taken for the next one's, and the server may have restarted on
 * another endpoint. */
static void scan_server(watch *wt)
{
    json_object *status = tnd_submit_status(wt->ctx), *list, *stopping;

    wt->queued = json_object_object_get_ex(status, "stopping", &stopping) &&
                         json_object_get_boolean(stopping)
                     ? 0
                     : tnd_json_int_or(status, "queued", 0);
    list = tnd_json_array(status, "sessions");
    for (size_t i = 0; list && i < json_object_array_length(list); i++) {
        json_object *e = json_object_array_get_idx(list, i);
        const char *repo = tnd_json_str_or(e, "repo", NULL);
        const char *id = tnd_json_str_or(e, "session", NULL);
        if (repo && id &&
            strcmp(tnd_json_str_or(e, "state", ""), "running") == 0)
            add(wt, repo, id);
    }
    json_object_put(status);
}

/* Sessions to watch now: the one asked for, every running one, or
 * every one the server runs. */
static void scan(watch *wt)
{
    char **ids;

    wt->left_out = 0;
    for (size_t i = 0; i < wt->n; i++)
        if (!wt->items[i].done)
            subscribe(wt, &wt->items[i]);
    if (wt->opts->session)
        return;
    if (wt->opts->server) {
        scan_server(wt);
        return;
    }
    ids = tnd_session_list(wt->repo);
    for (char **p = ids; *p; p++) {
        char *dir = tnd_session_dir_of(wt->repo, *p);
        if (tnd_session_locked(dir))
            add(wt, wt->repo, *p);
        free(dir);
    }
    tnd_str_list_free(&ids);
}

/* What w does now, in words. */
static void phase_of(char *out, size_t size, const watched *w, int64_t now)
{
    if (w->doing_now)
        tnd_doing_format(out, size, &w->doing, now);
    else
        snprintf(out, size, "%s", w->phase);
}

static void draw(watch *wt)
{
    int64_t now = tnd_wall_ms();
    int width = tnd_term_width(STDOUT_FILENO) - 1; /* never the last column:
                                                      no wrap, ever */
    char line[1024], phase[160];
    size_t shown;
    int rows;

    if (!wt->tty)
        return;
    for (int i = 0; i < wt->drawn; i++)
        fputs("\033[1A\033[2K", stdout);
    if (wt->n == 0) {
        snprintf(line, sizeof(line),
                 "waiting for a session to start in %s (%.0f s left)", wt->repo,
                 (double)(wt->deadline - tnd_now_ms()) / 1000.0);
        tnd_term_fit(line, width);
        printf("%s\n", line);
        wt->drawn = 1;
        fflush(stdout);
        return;
    }
    /* never more lines than the window has: the cursor cannot go up past
     * its top, and every redraw of 30 sessions in 10 rows scrolled */
    rows = tnd_term_height(STDOUT_FILENO) - 1;
    if (rows < 1)
        rows = 1;
    /* a window of one row shows the count alone */
    shown = wt->n + (wt->left_out ? 1 : 0) > (size_t)rows ? (size_t)rows - 1
                                                          : wt->n;
    for (size_t i = 0; i < shown; i++) {
        const watched *w = &wt->items[i];
        double secs =
            w->started_wall
                ? ((w->ended_wall ? w->ended_wall : now) - w->started_wall) /
                      1000.0
                : 0;
        phase_of(phase, sizeof(phase), w, now);
        snprintf(line, sizeof(line), "%s  #%ld  %s  %.0fs  %ld tok  %s", w->id,
                 w->attempt, phase, secs, w->tokens, w->task ? w->task : "");
        tnd_term_fit(line, width);
        printf("%s\n", line);
    }
    wt->drawn = (int)shown;
    if (shown < wt->n + wt->left_out) {
        snprintf(line, sizeof(line),
                 "... and %zu more session%s (tandem watch ID follows one)",
                 wt->n + wt->left_out - shown,
                 wt->n + wt->left_out - shown == 1 ? "" : "s");
        tnd_term_fit(line, width);
        printf("%s\n", line);
        wt->drawn++;
    }
    fflush(stdout);
}

static void plain_line(const watched *w, json_object *e)
{
    char when[40];

    tnd_clock_iso8601(when, sizeof(when), tnd_wall_ms());
    char phase[160];

    phase_of(phase, sizeof(phase), w, tnd_wall_ms());
    /* a role and a phase come from an agent, perhaps on another host:
     * no escape codes to the terminal (the terminal view fits them) */
    char *shown = tnd_str_one_line(phase, sizeof(phase));
    printf("%s %s attempt %ld: %s\n", when + 11, w->id, w->attempt, shown);
    free(shown);
    (void)e;
    fflush(stdout);
}

/* w's run let go of it with no finish heard: how it ended, from its
 * journal (a finish the watch had not read yet, a question for a
 * person, or none: stopped by a server that stops, killed, failed).
 * Its last line said what it did last ("baseline"), as if it still
 * ran. */
static void stopped(watched *w)
{
    tnd_summary s;
    const char *state;

    /* held: its lock, taken again since, must not make it "running" */
    tnd_history_summary(&s, w->repo, w->id, true);
    state = tnd_session_status_name(s.state);
    if (s.state == TND_SESSION_APPROVED || s.state == TND_SESSION_REJECTED ||
        s.state == TND_SESSION_ESCALATED)
        snprintf(w->phase, sizeof(w->phase), "finished: %s", state);
    else if (s.state == TND_SESSION_WAITING)
        snprintf(w->phase, sizeof(w->phase), "waiting for a person");
    else
        snprintf(w->phase, sizeof(w->phase), "stopped: %s", state);
    w->doing_now = false;
    /* followed while it ran, it stopped now; found stopped, at its last
     * record */
    w->ended_wall = w->live || s.last <= 0 ? tnd_wall_ms() : s.last;
    w->done = true;
    tnd_history_summary_clear(&s);
}

static bool all_done(watch *wt)
{
    for (size_t i = 0; i < wt->n; i++) {
        watched *w = &wt->items[i];
        if (!w->done && !tnd_session_locked(w->dir))
            stopped(w);
        if (!w->done)
            return false;
    }
    return true;
}

int tnd_watch(const tnd_watch_options *opts)
{
    watch wt;
    int64_t next_scan = 0;
    int code = TND_EXIT_OK;

    memset(&wt, 0, sizeof(wt));
    wt.opts = opts;
    wt.deadline = opts->timeout_ms > 0 ? tnd_now_ms() + opts->timeout_ms : 0;
    wt.tty = !opts->plain && tnd_term_can_redraw(STDOUT_FILENO);
    if (!(wt.repo = tnd_fs_realpath(opts->repo ? opts->repo : "."))) {
        fprintf(stderr, "tandem watch: --repo: %s\n", tnd_error_last());
        return TND_EXIT_USAGE;
    }
    /* as tandem sessions does: a .tandem that is a link or a file hides
     * every session (the watch warned of it at each tick, 4 times a
     * second under --for, and then said no session was running) */
    if (!opts->server && tnd_session_check_home(wt.repo) < 0) {
        fprintf(stderr, "tandem watch: %s\n", tnd_error_last());
        free(wt.repo);
        return TND_EXIT_FAILED;
    }
    wt.ctx = zmq_ctx_new();
    if (opts->session) {
        tnd_session *s = tnd_session_open(wt.repo, opts->session);
        if (!s) {
            fprintf(stderr, "tandem watch: %s\n", tnd_error_last());
            code = TND_EXIT_USAGE;
            goto out;
        }
        add(&wt, wt.repo, tnd_session_id(s));
        tnd_session_destroy(&s);
    }
    scan(&wt);
    if (wt.n == 0 && !wt.deadline) {
        printf("no session is running %s%s (tandem watch --for S waits "
               "up to S seconds for one)\n",
               opts->server ? "in tandem serve" : "in ",
               opts->server ? "" : wt.repo);
        goto out;
    }
    for (;;) {
        zmq_pollitem_t *items = tnd_xcalloc(wt.n + 1, sizeof(*items));
        size_t *map = tnd_xcalloc(wt.n + 1, sizeof(*map)), np = 0;
        for (size_t i = 0; i < wt.n; i++)
            if (wt.items[i].sub && !wt.items[i].done) {
                items[np].socket = wt.items[i].sub;
                items[np].fd = 0;
                items[np].events = ZMQ_POLLIN;
                items[np].revents = 0;
                map[np++] = i;
            }
        draw(&wt);
        if (np > 0 && zmq_poll(items, (int)np, TICK_MS) < 0 && errno == EINTR) {
            free(items);
            free(map);
            break;
        }
        if (np == 0) {
            struct timespec ts = {0, TICK_MS * 1000000L};
            nanosleep(&ts, NULL);
        }
        for (size_t k = 0; k < np; k++) {
            zmq_msg_t msg;
            if (!(items[k].revents & ZMQ_POLLIN))
                continue;
            /* whole, however large (an audit event with a long build
             * output passed 64 KiB and was skipped, and the tokens it
             * carried with it) */
            zmq_msg_init(&msg);
            while (zmq_msg_recv(&msg, items[k].socket, ZMQ_DONTWAIT) >= 0) {
                json_object *e = NULL;
                if (tnd_json_parse(&e, zmq_msg_data(&msg),
                                   zmq_msg_size(&msg)) == 0 &&
                    e) {
                    watched *w = &wt.items[map[k]];
                    apply(w, e);
                    if (!wt.tty)
                        plain_line(w, e);
                }
                json_object_put(e);
            }
            zmq_msg_close(&msg);
        }
        free(items);
        free(map);
        if (tnd_now_ms() >= next_scan) {
            scan(&wt);
            /* while none runs, look at every tick */
            next_scan = tnd_now_ms() + (wt.n ? 1000 : TICK_MS);
        }
        /* nobody reads any more (watch --plain | head -1): it went on
         * until the sessions ended, or for the whole --for */
        if (ferror(stdout))
            break;
        /* a server's queued session starts as the last running one
         * ends: the watch ended there, before the next scan saw it */
        if ((wt.n > 0 && all_done(&wt) && wt.queued == 0) ||
            (wt.deadline && tnd_now_ms() >= wt.deadline))
            break;
    }
    draw(&wt);
    if (wt.n == 0)
        printf("no session started %s%s within %ld s\n",
               opts->server ? "in tandem serve" : "in ",
               opts->server ? "" : wt.repo, opts->timeout_ms / 1000);
    for (size_t i = 0; i < wt.n && !wt.tty; i++)
        printf("%s: %s\n", wt.items[i].id, wt.items[i].phase);
out:
    for (size_t i = 0; i < wt.n; i++)
        forget(&wt.items[i]);
    free(wt.items);
    zmq_ctx_term(wt.ctx);
    free(wt.repo);
    return code;
}
