/* MDP/Worker runtime with a job thread (see agent.h).
 *
 * Threads and sockets: ZeroMQ sockets are not thread-safe, so each
 * worker's loop thread owns its DEALER to the broker and the PULL end of
 * an inproc PUSH/PULL; each job thread owns a PUSH and sends two-frame
 * messages: "P" + body for progress, "F" + body for the reply (the job
 * thread is agent_job.c's). Only the worker's loop thread ever touches
 * its broker socket. Worker 1 loops on the main thread; with threads > 1
 * the others loop on threads of their own, sharing the ZeroMQ context.
 *
 * Stopping: SIGTERM and SIGINT write a byte into the stop pipe, which
 * nobody reads, so its read end stays readable and every loop polling it
 * wakes at once, whenever the signal came. A worker that fails writes
 * the same byte: one broken worker stops the agent, whose supervisor
 * restarts it whole. */
#include "agents/agent.h"
#include "agents/agent_int.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zmq.h>

#include "common/clock.h"
#include "common/error.h"
#include "common/log.h"
#include "common/xalloc.h"
#include "proto/body.h"
#include "proto/linewatch.h"
#include "proto/mdp.h"

/* Jobs talk to the main thread over inproc PUSH/PULL, not PAIR: a PAIR
 * takes one peer, and closing the last job's socket is asynchronous, so
 * the next job's PAIR could connect while the old one still held the
 * place, and its first send blocked for ever (seen once: a reviewer hung
 * in test_on_trigger). A PULL takes any number of PUSH peers. */
#define JOB_ENDPOINT  "inproc://tandem-agent-job-%d"
#define MAX_PENDING   16
#define STOP_GRACE_MS 10000

/* A request received while another runs (the broker sends one at a time,
 * but after a reconnect it may hand us work before our old job ends). */
typedef struct pending {
    unsigned char address[TND_MDP_MAX_ADDRESS];
    size_t address_len;
    char *body;
    size_t len;
} pending;

typedef struct runtime {
    const tnd_agent_options *opts;
    void *payload; /* the handler's, for this worker */
    int index;     /* 1-based */
    char job_endpoint[64];
    int stop_fd; /* readable once the agent stops (see the top) */
    pthread_t thread;
    int rc; /* the loop's: 0 stopped, -1 failed (error logged) */
    void *ctx;
    void *dealer;
    tnd_linewatch *watch; /* whether the broker refused dealer's key */
    void *pair;           /* the loop's end: a PULL (see JOB_ENDPOINT) */
    char identity[TND_MDP_MAX_IDENTITY + 1];
    int64_t broker_expiry;
    bool heard;           /* the broker spoke on this connection */
    int refused;          /* READYs answered DISCONNECT in a row */
    int64_t reconnect_at; /* after a refused READY: when to try again; 0 */
    int64_t next_beat;
    tnd_agent_job *job;                         /* running job, or NULL */
    unsigned char address[TND_MDP_MAX_ADDRESS]; /* of the running job */
    size_t address_len;
    pending queue[MAX_PENDING];
    size_t npending;
    /* the last reply sent (its address and body), until the broker
     * shows it has it (a request or a DISCONNECT comes): a reconnection
     * after the broker's silence sends it again, before READY. A tandem
     * stopped (Ctrl-Z) past the agent's patience lost the reply the
     * agent had sent (the queue of the connection it gave up went with
     * it), and the model was asked, and paid, twice. */
    pending last;
    atomic_int cancel;
} runtime;

static volatile sig_atomic_t stop_signal;
static int stop_pipe[2] = {-1, -1};

static void stop_all(void)
{
    int saved = errno;

    if (stop_pipe[1] >= 0 && write(stop_pipe[1], "s", 1) < 0) {
        /* full: a byte is there already, which is all it takes */
    }
    errno = saved;
}

static void on_signal(int sig)
{
    stop_signal = sig;
    stop_all();
}

/* A progress PARTIAL for the running request: "started" when it is
 * taken, then, with no phase, a sign that it is still being worked on.
 * chars 0 with no delta changes nothing the orchestrator shows. */
static void send_working(runtime *rt, const char *phase)
{
    tnd_mdp_msg msg;
    char body[128];
    int n = phase ? snprintf(body, sizeof(body),
                             "{\"tandem\":1,\"type\":\"progress\","
                             "\"chars\":0,\"phase\":\"%s\"}",
                             phase)
                  : snprintf(body, sizeof(body),
                             "{\"tandem\":1,\"type\":\"progress\","
                             "\"chars\":0}");

    tnd_mdp_msg_init(&msg, true, TND_MDPW_PARTIAL, NULL);
    memcpy(msg.address, rt->address, rt->address_len);
    msg.address_len = rt->address_len;
    msg.body = body;
    msg.body_len = (size_t)n;
    if (tnd_mdp_send(rt->dealer, NULL, 0, &msg) < 0)
        tnd_log_warn("cannot send progress: %s", tnd_error_last());
}

/* Start a job for the request at address; takes ownership of body. */
static int job_start(runtime *rt, const unsigned char *address,
                     size_t address_len, char *body, size_t len)
{
    tnd_agent_job *job =
        tnd_agent_job_start(rt->ctx, rt->job_endpoint, rt->opts, rt->payload,
                            &rt->cancel, rt->stop_fd, body, len);

    if (!job)
        return -1;
    memcpy(rt->address, address, address_len);
    rt->address_len = address_len;
    rt->job = job;
    /* acknowledge: from now on the orchestrator expects a sign of this
     * request at least every heartbeat (see send_beat) */
    send_working(rt, "started");
    return 0;
}

static bool same_address(const unsigned char *a, size_t alen,
                         const unsigned char *b, size_t blen)
{
    return alen == blen && memcmp(a, b, alen) == 0;
}

static void forget_last(runtime *rt)
{
    free(rt->last.body);
    rt->last.body = NULL;
}

/* Send the last reply again (see runtime.last). */
static void send_last(runtime *rt)
{
    tnd_mdp_msg reply;

    tnd_mdp_msg_init(&reply, true, TND_MDPW_FINAL, NULL);
    memcpy(reply.address, rt->last.address, rt->last.address_len);
    reply.address_len = rt->last.address_len;
    reply.body = rt->last.body;
    reply.body_len = rt->last.len;
    if (tnd_mdp_send(rt->dealer, NULL, 0, &reply) < 0)
        tnd_log_warn("cannot send the reply again: %s", tnd_error_last());
}

/* Run a request now, or queue it behind the running job. A request we
 * already hold (the broker re-sent it after a reconnect) is not run
 * twice: its one reply is on the way. The running one is acknowledged as
 * held: without that the orchestrator took the reply for one from an
 * agent that had started again, put the workspace back and asked for the
 * audit again (a tandem stopped with Ctrl-Z paid for it twice). */
static void accept_request(runtime *rt, tnd_mdp_msg *msg)
{
    pending *p;

    if (rt->job && same_address(rt->address, rt->address_len, msg->address,
                                msg->address_len)) {
        send_working(rt, "held");
        return;
    }
    for (size_t i = 0; i < rt->npending; i++)
        if (same_address(rt->queue[i].address, rt->queue[i].address_len,
                         msg->address, msg->address_len))
            return;
    if (!rt->job) {
        if (job_start(rt, msg->address, msg->address_len, msg->body,
                      msg->body_len) < 0)
            tnd_log_error("%s", tnd_error_last());
        msg->body = NULL;
        return;
    }
    if (rt->npending == MAX_PENDING) {
        /* answer at once so the request fails loudly, not silently */
        tnd_mdp_msg reply;
        size_t len;
        char *body = tnd_error_reply_encode(
            NULL, 1, "the agent is overloaded: too many requests wait", &len);
        tnd_log_error("%d requests already wait; refusing one more",
                      MAX_PENDING);
        tnd_mdp_msg_init(&reply, true, TND_MDPW_FINAL, NULL);
        memcpy(reply.address, msg->address, msg->address_len);
        reply.address_len = msg->address_len;
        reply.body = body;
        reply.body_len = len;
        tnd_mdp_send(rt->dealer, NULL, 0, &reply);
        free(body);
        return;
    }
    p = &rt->queue[rt->npending++];
    memcpy(p->address, msg->address, msg->address_len);
    p->address_len = msg->address_len;
    p->body = msg->body;
    p->len = msg->body_len;
    msg->body = NULL;
}

/* After a job ends: start the next waiting request, if any. */
static void start_next(runtime *rt)
{
    pending next;

    if (rt->job || rt->npending == 0 || atomic_load(&rt->cancel))
        return;
    next = rt->queue[0];
    memmove(&rt->queue[0], &rt->queue[1], (rt->npending - 1) * sizeof(pending));
    rt->npending--;
    if (job_start(rt, next.address, next.address_len, next.body, next.len) < 0)
        tnd_log_error("%s", tnd_error_last());
}

/* ---- broker connection -------------------------------------------------- */

static int send_simple(runtime *rt, int command)
{
    tnd_mdp_msg msg;

    tnd_mdp_msg_init(&msg, true, command, rt->opts->service);
    return tnd_mdp_send(rt->dealer, NULL, 0, &msg);
}

/* A new connection to the broker, and READY on it. resend: the broker
 * went silent; the last reply, which the old connection may have held,
 * goes first (the broker takes it while it waits for it, from the
 * identity it gave the request to, and drops it if not). */
static int connect_broker(runtime *rt, bool resend)
{
    tnd_linewatch_destroy(&rt->watch);
    if (rt->dealer) {
        zmq_close(rt->dealer);
        rt->dealer = NULL;
    }
    if (!(rt->dealer = zmq_socket(rt->ctx, ZMQ_DEALER)))
        return tnd_error_set("cannot create a socket: %s", zmq_strerror(errno));
    if (tnd_mdp_socket_limits(rt->dealer) < 0 ||
        zmq_setsockopt(rt->dealer, ZMQ_ROUTING_ID, rt->identity,
                       strlen(rt->identity)) < 0)
        return tnd_error_set("cannot configure the socket: %s",
                             zmq_strerror(errno));
    if (rt->opts->server_key &&
        (zmq_setsockopt(rt->dealer, ZMQ_CURVE_SERVERKEY, rt->opts->server_key,
                        TND_CURVE_Z85_LEN) < 0 ||
         zmq_setsockopt(rt->dealer, ZMQ_CURVE_PUBLICKEY,
                        rt->opts->curve_pair->public_key,
                        TND_CURVE_Z85_LEN) < 0 ||
         zmq_setsockopt(rt->dealer, ZMQ_CURVE_SECRETKEY,
                        rt->opts->curve_pair->secret_key,
                        TND_CURVE_Z85_LEN) < 0))
        return tnd_error_set("cannot set up CURVE: %s", zmq_strerror(errno));
    /* over CURVE, whether the key was refused; on any transport, why a
     * broker that never speaks does not */
    if (!(rt->watch = tnd_linewatch_new(rt->ctx, rt->dealer)))
        return -1;
    if (zmq_connect(rt->dealer, rt->opts->endpoint) < 0)
        return tnd_error_set("cannot connect to %s: %s", rt->opts->endpoint,
                             zmq_strerror(errno));
    rt->broker_expiry =
        tnd_now_ms() + (int64_t)rt->opts->heartbeat_ms * rt->opts->liveness;
    rt->heard = false;
    rt->next_beat = tnd_now_ms() + rt->opts->heartbeat_ms;
    /* not while a job runs: the broker took the last reply before it
     * gave that job, and a reply for another request than the one it
     * holds is a broken agent to it */
    if (resend && rt->last.body && !rt->job && rt->npending == 0)
        send_last(rt);
    /* READY is queued until the connection is up; the queued message is
     * delivered when the broker appears */
    if (send_simple(rt, TND_MDPW_READY) < 0) {
        tnd_error_prefix("cannot send READY");
        return -1;
    }
    tnd_log_info("connecting to %s as %s (service %s)", rt->opts->endpoint,
                 rt->identity, rt->opts->service);
    return 0;
}

static void forward_from_job(runtime *rt)
{
    zmq_msg_t kind, body;
    tnd_mdp_msg msg;
    bool final;

    zmq_msg_init(&kind);
    zmq_msg_init(&body);
    if (zmq_msg_recv(&kind, rt->pair, ZMQ_DONTWAIT) < 0 ||
        !zmq_msg_more(&kind) || zmq_msg_recv(&body, rt->pair, 0) < 0) {
        zmq_msg_close(&kind);
        zmq_msg_close(&body);
        return;
    }
    final = *(const char *)zmq_msg_data(&kind) == 'F';
    tnd_mdp_msg_init(&msg, true, final ? TND_MDPW_FINAL : TND_MDPW_PARTIAL,
                     NULL);
    memcpy(msg.address, rt->address, rt->address_len);
    msg.address_len = rt->address_len;
    msg.body = zmq_msg_data(&body);
    msg.body_len = zmq_msg_size(&body);
    if (!atomic_load(&rt->cancel) &&
        tnd_mdp_send(rt->dealer, NULL, 0, &msg) < 0)
        tnd_log_warn("cannot send the %s: %s", final ? "reply" : "progress",
                     tnd_error_last());
    if (final && !atomic_load(&rt->cancel)) {
        free(rt->last.body);
        memcpy(rt->last.address, rt->address, rt->address_len);
        rt->last.address_len = rt->address_len;
        rt->last.body = tnd_xmalloc(msg.body_len ? msg.body_len : 1);
        memcpy(rt->last.body, msg.body, msg.body_len);
        rt->last.len = msg.body_len;
    }
    zmq_msg_close(&kind);
    zmq_msg_close(&body);
    if (final) {
        tnd_agent_job_join(&rt->job);
        start_next(rt);
    }
}

/* The broker answered READY with DISCONNECT: said once, then tried
 * again after a wait that doubles up to a minute (a server whose list
 * is mended takes the agent then). */
static void refused(runtime *rt)
{
    int64_t wait = 1000;

    for (int i = 0; i < rt->refused && wait < 60000; i++)
        wait *= 2;
    if (wait > 60000)
        wait = 60000;
    if (rt->refused++ == 0)
        tnd_log_error("the orchestrator at %s refused this agent as %s "
                      "(service %s)%s; trying again every %d s at most",
                      rt->opts->endpoint, rt->identity, rt->opts->service,
                      rt->opts->curve_pair
                          ? ": over CURVE its authorized keys must list this "
                            "agent's key with that role"
                          : "",
                      60);
    else
        tnd_log_info("refused again as %s; trying again in %ld s", rt->identity,
                     (long)(wait / 1000));
    rt->reconnect_at = tnd_now_ms() + wait;
    rt->broker_expiry = rt->reconnect_at + 1;
}

static void from_broker(runtime *rt)
{
    tnd_mdp_msg msg;
    int rc;

    while ((rc = tnd_mdp_recv(&msg, NULL, NULL, rt->dealer)) != TND_ETIMEOUT) {
        bool first = !rt->heard;
        if (rc < 0) {
            tnd_log_warn("ignoring a message from the broker: %s",
                         tnd_error_last());
            continue;
        }
        rt->broker_expiry =
            tnd_now_ms() + (int64_t)rt->opts->heartbeat_ms * rt->opts->liveness;
        rt->heard = true;
        if (msg.worker && msg.command == TND_MDPW_DISCONNECT && first) {
            /* the first word on this connection, the answer to READY:
             * refused (a key without the role of the service). It
             * reconnected at once, ten times a second, for ever, and
             * never said why */
            tnd_mdp_msg_clear(&msg);
            refused(rt);
            return;
        }
        if (msg.worker && msg.command != TND_MDPW_DISCONNECT)
            rt->refused = 0;
        if (!msg.worker) {
            tnd_log_warn("ignoring an MDP/Client message on a worker "
                         "socket");
        } else if (msg.command == TND_MDPW_REQUEST) {
            forget_last(rt); /* one at a time: it has our last reply */
            accept_request(rt, &msg);
        } else if (msg.command == TND_MDPW_DISCONNECT) {
            tnd_log_info("broker said DISCONNECT; reconnecting");
            tnd_mdp_msg_clear(&msg);
            forget_last(rt);
            /* it heard us: nothing of ours is lost, and a reply it
             * refused must not be judged twice */
            if (connect_broker(rt, false) < 0)
                tnd_log_error("%s", tnd_error_last());
            return; /* the old socket is gone */
        } else if (msg.command != TND_MDPW_HEARTBEAT) {
            tnd_log_warn("ignoring %s from the broker",
                         tnd_mdp_command_name(true, msg.command));
        }
        tnd_mdp_msg_clear(&msg);
    }
}

/* Stop: cancel the job, give it a bounded time to finish, say goodbye. */
static void shut_down(runtime *rt)
{
    int64_t deadline = tnd_now_ms() + STOP_GRACE_MS;

    atomic_store(&rt->cancel, 1);
    while (rt->job && tnd_now_ms() < deadline) {
        zmq_pollitem_t item = {rt->pair, 0, ZMQ_POLLIN, 0};
        if (zmq_poll(&item, 1, 100) > 0)
            forward_from_job(rt);
    }
    if (rt->dealer)
        send_simple(rt, TND_MDPW_DISCONNECT);
    if (rt->job) {
        tnd_log_warn("the running job did not stop within %d ms; exiting "
                     "anyway",
                     STOP_GRACE_MS);
        /* the thread still uses the context: leave without tearing down */
        fflush(NULL);
        _exit(1);
    }
}

/* One worker's loop: connect, serve until the stop pipe says stop or
 * the loop fails, say goodbye. Sets rt->rc. */
static void worker_loop(runtime *rt)
{
    const tnd_agent_options *opts = rt->opts;

    rt->rc = -1;
    if (!(rt->pair = zmq_socket(rt->ctx, ZMQ_PULL)) ||
        zmq_bind(rt->pair, rt->job_endpoint) < 0) {
        tnd_log_error("%s: cannot open the job channel: %s", rt->identity,
                      zmq_strerror(errno));
        return;
    }
    if (connect_broker(rt, false) < 0) {
        tnd_log_error("%s", tnd_error_last());
        return;
    }
    for (;;) {
        zmq_pollitem_t items[3] = {{rt->dealer, 0, ZMQ_POLLIN, 0},
                                   {rt->pair, 0, ZMQ_POLLIN, 0},
                                   {NULL, rt->stop_fd, ZMQ_POLLIN, 0}};
        long wait = tnd_clock_remaining(rt->next_beat, -1);
        int n = zmq_poll(items, 3, wait);

        if (n < 0 && errno != EINTR) {
            tnd_log_error("%s: poll failed: %s", rt->identity,
                          zmq_strerror(errno));
            break;
        }
        if (stop_signal || (n > 0 && (items[2].revents & ZMQ_POLLIN))) {
            shut_down(rt);
            rt->rc = 0;
            break;
        }
        if (n > 0 && (items[1].revents & ZMQ_POLLIN))
            forward_from_job(rt);
        if (n > 0 && (items[0].revents & ZMQ_POLLIN))
            from_broker(rt);
        if (rt->reconnect_at && tnd_now_ms() >= rt->reconnect_at) {
            rt->reconnect_at = 0;
            if (connect_broker(rt, false) < 0) {
                tnd_log_error("%s", tnd_error_last());
                break;
            }
        }
        if (tnd_now_ms() >= rt->next_beat) {
            /* busy: the beat is a sign the request is still worked on;
             * none while refused (the broker answers a stranger's beat
             * with DISCONNECT) */
            if (rt->reconnect_at)
                ;
            else if (rt->job && !atomic_load(&rt->cancel))
                send_working(rt, NULL);
            else
                send_simple(rt, TND_MDPW_HEARTBEAT);
            rt->next_beat = tnd_now_ms() + opts->heartbeat_ms;
        }
        if (rt->watch && (tnd_linewatch_broke(rt->watch),
                          tnd_linewatch_refused(rt->watch))) {
            /* it never answers such a key: the agent reconnected every
             * few seconds for ever, saying only that the broker was
             * silent */
            tnd_log_error("the orchestrator at %s refused this agent's key "
                          "%s: its authorized keys do not list it; add it "
                          "there with this agent's role (a line 'ROLES "
                          "PUBLIC-KEY NAME', role %s), or start the agent "
                          "with a key they list",
                          opts->endpoint, opts->curve_pair->public_key,
                          opts->service);
            break;
        }
        if (rt->watch && tnd_linewatch_mismatch(rt->watch)) {
            /* as a refused key: no connection of this agent's is ever
             * taken, and it said only that the broker was silent */
            tnd_log_error(
                "the orchestrator at %s did not take the "
                "connection: %s",
                opts->endpoint,
                tnd_linewatch_why(rt->watch, opts->server_key != NULL));
            break;
        }
        if (tnd_now_ms() > rt->broker_expiry) {
            const char *why =
                rt->watch
                    ? tnd_linewatch_why(rt->watch, opts->server_key != NULL)
                    : NULL;
            /* a wrong --server-key, or a name another agent holds, read
             * as a broker that was not there, for ever */
            if (why)
                tnd_log_warn("no word from the broker for %d ms (%s); "
                             "reconnecting",
                             opts->heartbeat_ms * opts->liveness, why);
            else if (rt->watch && opts->server_key && !rt->heard &&
                     tnd_linewatch_shook(rt->watch))
                tnd_log_warn(
                    "no word from the broker for %d ms, though it took the "
                    "connection: another agent may be connected as %s "
                    "(give each its own --id), or the orchestrator is "
                    "stuck; reconnecting",
                    opts->heartbeat_ms * opts->liveness, rt->identity);
            else
                tnd_log_warn("no word from the broker for %d ms; "
                             "reconnecting",
                             opts->heartbeat_ms * opts->liveness);
            if (connect_broker(rt, true) < 0) {
                tnd_log_error("%s", tnd_error_last());
                break;
            }
        }
    }
    if (rt->rc < 0 && rt->job)
        shut_down(rt);
}

static void *worker_main(void *arg)
{
    runtime *rt = arg;

    worker_loop(rt);
    if (rt->rc < 0)
        stop_all(); /* one broken worker stops the agent */
    return NULL;
}

static void worker_clear(runtime *rt)
{
    for (size_t i = 0; i < rt->npending; i++)
        free(rt->queue[i].body);
    free(rt->last.body);
    tnd_linewatch_destroy(&rt->watch);
    if (rt->dealer)
        zmq_close(rt->dealer);
    if (rt->pair)
        zmq_close(rt->pair);
}

/* Worker k's identity: the agent's own for a single worker, ID.K for
 * several. -1 with the error set when it does not fit. */
static int worker_identity(runtime *rt, const tnd_agent_options *opts, int k)
{
    char base[TND_MDP_MAX_IDENTITY + 1];

    if (opts->identity)
        snprintf(base, sizeof(base), "%s", opts->identity);
    else
        snprintf(base, sizeof(base), "%s-%ld", opts->service, (long)getpid());
    return tnd_mdp_worker_name(rt->identity, sizeof(rt->identity), base,
                               opts->threads > 1 ? k : 0);
}

int tnd_agent_run(const tnd_agent_options *opts)
{
    int nworkers = opts->threads > 1 ? opts->threads : 1;
    runtime *rts = tnd_xcalloc((size_t)nworkers, sizeof(*rts));
    struct sigaction sa;
    sigset_t all, old;
    void *ctx;
    int started = 0, error = -1;

    if (nworkers > TND_AGENT_MAX_THREADS) {
        free(rts);
        return tnd_error_set("%d threads asked for; an agent serves at most "
                             "%d requests at once",
                             nworkers, TND_AGENT_MAX_THREADS);
    }
    if (pipe2(stop_pipe, O_CLOEXEC | O_NONBLOCK) < 0) {
        free(rts);
        return tnd_error_sys("cannot make the stop pipe");
    }
    stop_signal = 0;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    if (!(ctx = zmq_ctx_new())) {
        tnd_error_set("cannot create a ZeroMQ context: %s",
                      zmq_strerror(errno));
        goto out;
    }
    for (int k = 0; k < nworkers; k++) {
        runtime *rt = &rts[k];
        rt->opts = opts;
        rt->payload = opts->payloads ? opts->payloads[k] : opts->payload;
        rt->index = k + 1;
        rt->ctx = ctx;
        rt->stop_fd = stop_pipe[0];
        atomic_init(&rt->cancel, 0);
        snprintf(rt->job_endpoint, sizeof(rt->job_endpoint), JOB_ENDPOINT,
                 k + 1);
        if (worker_identity(rt, opts, k + 1) < 0)
            goto out;
    }
    /* workers 2.. take no signal: the main thread does, and its handler
     * wakes them all through the stop pipe */
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    for (started = 1; started < nworkers; started++) {
        int rc = pthread_create(&rts[started].thread, NULL, worker_main,
                                &rts[started]);
        if (rc != 0) {
            tnd_error_set("cannot start worker thread %d: %s", started + 1,
                          strerror(rc));
            break;
        }
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (started == nworkers)
        worker_loop(&rts[0]);
    stop_all();
    for (int k = 1; k < started; k++)
        pthread_join(rts[k].thread, NULL);
    if (stop_signal)
        tnd_log_info("stopping (signal %d)", (int)stop_signal);
    error = started == nworkers ? 0 : -1;
    for (int k = 0; k < nworkers; k++)
        if (k < started && rts[k].rc < 0) {
            error = tnd_error_set("worker %s failed; see the log above",
                                  rts[k].identity);
            break;
        }
out:
    for (int k = 0; k < nworkers; k++)
        worker_clear(&rts[k]);
    if (ctx)
        zmq_ctx_term(ctx);
    close(stop_pipe[0]);
    close(stop_pipe[1]);
    stop_pipe[0] = stop_pipe[1] = -1;
    free(rts);
    return error;
}
