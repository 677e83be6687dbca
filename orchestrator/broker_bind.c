/* The broker's socket made ready to take peers (see broker_int.h): the
 * endpoint checked free, bound, and on tcp:// made safe to open to
 * strangers (a handshake's time limit, CURVE with its ZAP handler). */
#include "orchestrator/broker_int.h"

#include <errno.h>
#include <string.h>
#include <zmq.h>

#include "common/error.h"
#include "common/fs.h"
#include "orchestrator/zap.h"

/* The server side of CURVE: the handler that admits keys, then the
 * socket's own key pair. */
static int start_curve(tnd_broker *b, const tnd_broker_options *opts)
{
    int one = 1, zero = 0,
        ivl = opts->heartbeat_ms > 0 ? opts->heartbeat_ms : 1000,
        timeout = ivl * (opts->liveness > 0 ? opts->liveness : 3);

    if (!opts->authorized)
        return tnd_error_set("CURVE needs the list of authorized keys");
    if (!(b->zap = tnd_zap_new(b->ctx, opts->authorized, opts->authorized_path,
                               opts->own_key)))
        return -1;
    /* Over CURVE there are many keys, so no handover: with it a peer
     * connecting under an agent's name takes that agent's connection
     * as soon as its handshake ends, and gets the agent's requests
     * before it sends a thing (a review found a client's key doing so).
     * Without it, libzmq drops a connection whose name is in use; ZMTP
     * heartbeats drop an agent's dead connection in time for the agent,
     * restarted, to have its name again. */
    if (zmq_setsockopt(b->socket, ZMQ_ROUTER_HANDOVER, &zero, sizeof(zero)) <
            0 ||
        zmq_setsockopt(b->socket, ZMQ_HEARTBEAT_IVL, &ivl, sizeof(ivl)) < 0 ||
        zmq_setsockopt(b->socket, ZMQ_HEARTBEAT_TIMEOUT, &timeout,
                       sizeof(timeout)) < 0 ||
        zmq_setsockopt(b->socket, ZMQ_CURVE_SERVER, &one, sizeof(one)) < 0 ||
        zmq_setsockopt(b->socket, ZMQ_CURVE_SECRETKEY, opts->curve->secret_key,
                       TND_CURVE_Z85_LEN) < 0 ||
        zmq_setsockopt(b->socket, ZMQ_ZAP_DOMAIN, "tandem", 6) < 0)
        return tnd_error_set("cannot set up CURVE: %s", zmq_strerror(errno));
    return 0;
}

/* A tcp:// endpoint takes connections from anyone who can reach it, and
 * each holds a descriptor until its handshake ends: ~1,100 raw
 * connections that never spoke made a run under the usual limit of 1,024
 * open files fail its workspace ("Too many open files"). So a handshake
 * must end within HANDSHAKE_MS (libzmq's default: 30 s; CURVE's takes
 * milliseconds), and the soft limit of open files is raised to the hard
 * one, up to FILES_TCP (children inherit it: no higher, as some close
 * every descriptor up to it). */
#define HANDSHAKE_MS 5000
#define FILES_TCP    65536

static int open_to_strangers(tnd_broker *b)
{
    int ivl = HANDSHAKE_MS;

    tnd_fs_files_raise(FILES_TCP);
    if (zmq_setsockopt(b->socket, ZMQ_HANDSHAKE_IVL, &ivl, sizeof(ivl)) < 0)
        return tnd_error_set("cannot set the handshake's time limit: %s",
                             zmq_strerror(errno));
    return 0;
}

/* An ipc:// endpoint another process listens on. libzmq's bind removes
 * the socket file that is there and makes its own, so a `tandem run`
 * whose config named a server's endpoint took the server's clients and
 * left it serving nobody; a file nobody listens on (a dead process's) is
 * taken, as before. 0, or -1 with the error set. */
static int ipc_free(const char *endpoint)
{
    /* tcp, an abstract name, or zmq's to refuse: -1, bound as asked */
    if (tnd_mdp_ipc_listening(endpoint) == 1)
        return tnd_error_config("cannot bind %s: another process listens there "
                                "(a tandem serve, or a run with the same "
                                "orchestrator.endpoint); give each its own "
                                "endpoint, or leave orchestrator.endpoint out "
                                "for a private one",
                                endpoint);
    return 0;
}

/* Why endpoint could not be bound. The endpoint is the user's (--bind,
 * orchestrator.endpoint): one that is taken, or not this host's, or
 * not an endpoint, is theirs to change, and said as a configuration
 * error (exit 2). */
static void bind_failed(const char *endpoint, int err)
{
    switch (err) {
    case EADDRINUSE:
        tnd_error_config("cannot bind %s: another process listens there; "
                         "give another endpoint (or stop that process)",
                         endpoint);
        break;
    case EADDRNOTAVAIL:
    case ENODEV:
        tnd_error_config("cannot bind %s: %s; give an address of this host "
                         "(tcp://127.0.0.1:PORT, or tcp://*:PORT for all)",
                         endpoint, zmq_strerror(err));
        break;
    case EINVAL:
    case EPROTONOSUPPORT:
    case ENOCOMPATPROTO:
    case EACCES:
    case ENOENT:
        tnd_error_config("cannot bind %s: %s; give ipc://PATH (a directory "
                         "you may write) or tcp://HOST:PORT",
                         endpoint, zmq_strerror(err));
        break;
    default:
        tnd_error_set("cannot bind %s: %s", endpoint, zmq_strerror(err));
    }
}

int tnd_broker_bind(tnd_broker *b, const tnd_broker_options *opts)
{
    if (opts->curve && start_curve(b, opts) < 0)
        return -1;
    if (strncmp(opts->endpoint, "tcp://", 6) == 0 && open_to_strangers(b) < 0)
        return -1;
    if (ipc_free(opts->endpoint) < 0)
        return -1;
    if (zmq_bind(b->socket, opts->endpoint) < 0) {
        bind_failed(opts->endpoint, errno);
        return -1;
    }
    return 0;
}
