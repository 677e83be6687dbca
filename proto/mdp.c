/* MDP/0.2 encode, decode and socket I/O (see mdp.h). */
#include "proto/mdp.h"

#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <zmq.h>

#include "common/error.h"
#include "common/xalloc.h"

static const char *const worker_names[] = {"UNKNOWN",   "READY", "REQUEST",
                                           "PARTIAL",   "FINAL", "HEARTBEAT",
                                           "DISCONNECT"};
static const char *const client_names[] = {"UNKNOWN", "REQUEST", "PARTIAL",
                                           "FINAL"};

const char *tnd_mdp_command_name(bool worker, int command)
{
    if (worker)
        return command >= 1 && command <= 6 ? worker_names[command]
                                            : worker_names[0];
    return command >= 1 && command <= 3 ? client_names[command]
                                        : client_names[0];
}

void tnd_mdp_msg_init(tnd_mdp_msg *msg, bool worker, int command,
                      const char *service)
{
    memset(msg, 0, sizeof(*msg));
    msg->worker = worker;
    msg->command = command;
    if (service)
        snprintf(msg->service, sizeof(msg->service), "%s", service);
}

void tnd_mdp_msg_clear(tnd_mdp_msg *msg)
{
    free(msg->body);
    memset(msg, 0, sizeof(*msg));
}

static bool frame_is(const tnd_frame *f, const char *s)
{
    size_t n = strlen(s);

    return f->size == n && memcmp(f->data, s, n) == 0;
}

static int take_service(tnd_mdp_msg *out, const tnd_frame *f)
{
    const unsigned char *p = f->data;

    if (f->size == 0 || f->size > TND_MDP_MAX_SERVICE)
        return tnd_error_set("service name must be 1..%d bytes, got %zu",
                             TND_MDP_MAX_SERVICE, f->size);
    for (size_t i = 0; i < f->size; i++)
        if (p[i] < 0x21 || p[i] > 0x7e)
            return tnd_error_set("service name must be printable ASCII "
                                 "without spaces");
    memcpy(out->service, p, f->size);
    out->service[f->size] = '\0';
    return 0;
}

static int take_body(tnd_mdp_msg *out, const tnd_frame *f)
{
    if (f->size > TND_MDP_MAX_BODY)
        return tnd_error_set("body is %zu bytes, more than the limit of %d",
                             f->size, TND_MDP_MAX_BODY);
    out->body = tnd_xmalloc(f->size + 1);
    if (f->size)
        memcpy(out->body, f->data, f->size);
    out->body[f->size] = '\0';
    out->body_len = f->size;
    return 0;
}

static int expect_frames(const char *what, size_t n, size_t want)
{
    if (n != want)
        return tnd_error_set("%s has %zu frames, expected %zu%s", what, n, want,
                             n > want ? " (tandem bodies are one frame)" : "");
    return 0;
}

static int decode_worker(tnd_mdp_msg *out, const tnd_frame *f, size_t n)
{
    const char *name = tnd_mdp_command_name(true, out->command);

    switch (out->command) {
    case TND_MDPW_READY:
        if (expect_frames(name, n, 3) < 0)
            return -1;
        return take_service(out, &f[2]);
    case TND_MDPW_REQUEST:
    case TND_MDPW_PARTIAL:
    case TND_MDPW_FINAL:
        if (expect_frames(name, n, 5) < 0)
            return -1;
        if (f[2].size == 0 || f[2].size > TND_MDP_MAX_ADDRESS)
            return tnd_error_set("%s client address must be 1..%d bytes, "
                                 "got %zu",
                                 name, TND_MDP_MAX_ADDRESS, f[2].size);
        if (f[3].size != 0)
            return tnd_error_set("%s frame 3 must be the empty envelope "
                                 "delimiter",
                                 name);
        memcpy(out->address, f[2].data, f[2].size);
        out->address_len = f[2].size;
        return take_body(out, &f[4]);
    case TND_MDPW_HEARTBEAT:
    case TND_MDPW_DISCONNECT:
        return expect_frames(name, n, 2);
    default:
        return tnd_error_set("unknown MDP/Worker command 0x%02x", out->command);
    }
}

static int decode_client(tnd_mdp_msg *out, const tnd_frame *f, size_t n)
{
    const char *name = tnd_mdp_command_name(false, out->command);

    if (out->command < TND_MDPC_REQUEST || out->command > TND_MDPC_FINAL)
        return tnd_error_set("unknown MDP/Client command 0x%02x", out->command);
    if (expect_frames(name, n, 4) < 0 || take_service(out, &f[2]) < 0)
        return -1;
    return take_body(out, &f[3]);
}

int tnd_mdp_decode(tnd_mdp_msg *out, const tnd_frame *frames, size_t n)
{
    int error;

    memset(out, 0, sizeof(*out));
    /* tolerate one empty frame before the header (MDP/0.1 style peers) */
    if (n > 0 && frames[0].size == 0) {
        frames++;
        n--;
    }
    if (n < 2)
        return tnd_error_set("malformed MDP message: %zu frames, need at "
                             "least 2",
                             n);
    if (frame_is(&frames[0], TND_MDPW))
        out->worker = true;
    else if (!frame_is(&frames[0], TND_MDPC))
        return tnd_error_set("malformed MDP message: protocol header is not "
                             "MDPC02 or MDPW02 (wrong protocol or version)");
    if (frames[1].size != 1)
        return tnd_error_set("malformed MDP message: command frame is %zu "
                             "bytes, expected 1",
                             frames[1].size);
    out->command = ((const unsigned char *)frames[1].data)[0];
    error = out->worker ? decode_worker(out, frames, n)
                        : decode_client(out, frames, n);
    if (error < 0) {
        tnd_error_prefix("malformed MDP message");
        tnd_mdp_msg_clear(out);
    }
    return error;
}

size_t tnd_mdp_encode(tnd_frame *frames, unsigned char *command_byte,
                      const tnd_mdp_msg *msg)
{
    size_t n = 0;

    *command_byte = (unsigned char)msg->command;
    frames[n].data = msg->worker ? TND_MDPW : TND_MDPC;
    frames[n++].size = 6;
    frames[n].data = command_byte;
    frames[n++].size = 1;
    if (!msg->worker) {
        frames[n].data = msg->service;
        frames[n++].size = strlen(msg->service);
        frames[n].data = msg->body ? msg->body : "";
        frames[n++].size = msg->body_len;
        return n;
    }
    switch (msg->command) {
    case TND_MDPW_READY:
        frames[n].data = msg->service;
        frames[n++].size = strlen(msg->service);
        break;
    case TND_MDPW_REQUEST:
    case TND_MDPW_PARTIAL:
    case TND_MDPW_FINAL:
        frames[n].data = msg->address;
        frames[n++].size = msg->address_len;
        frames[n].data = "";
        frames[n++].size = 0;
        frames[n].data = msg->body ? msg->body : "";
        frames[n++].size = msg->body_len;
        break;
    default:
        break;
    }
    return n;
}

static void drain(void *socket)
{
    int more = 0;
    size_t len = sizeof(more);
    zmq_msg_t m;

    zmq_getsockopt(socket, ZMQ_RCVMORE, &more, &len);
    while (more) {
        zmq_msg_init(&m);
        if (zmq_msg_recv(&m, socket, 0) < 0) {
            zmq_msg_close(&m);
            return;
        }
        more = zmq_msg_more(&m);
        zmq_msg_close(&m);
    }
}

/* A message property into out: "" when it is missing, does not fit, or
 * holds a byte outside printable ASCII (it ends up in journals and
 * logs). */
static void property(char *out, size_t size, zmq_msg_t *m, const char *name)
{
    const char *v = zmq_msg_gets(m, name);
    size_t n = v ? strlen(v) : 0;

    out[0] = '\0';
    if (!v || n >= size)
        return;
    for (size_t i = 0; i < n; i++)
        if (v[i] < 0x21 || v[i] > 0x7e)
            return;
    memcpy(out, v, n + 1);
}

int tnd_mdp_recv(tnd_mdp_msg *out, unsigned char *identity,
                 size_t *identity_len, void *socket)
{
    zmq_msg_t parts[TND_MDP_MAX_FRAMES + 1];
    tnd_frame frames[TND_MDP_MAX_FRAMES + 1];
    size_t n = 0, first = 0, limit = TND_MDP_MAX_FRAMES + (identity ? 1 : 0);
    int more = 1, error = 0, flags = ZMQ_DONTWAIT;

    memset(out, 0, sizeof(*out));
    if (identity_len)
        *identity_len = 0;
    while (more) {
        if (n == limit) {
            drain(socket);
            error = tnd_error_set("malformed MDP message: more than %d "
                                  "frames",
                                  TND_MDP_MAX_FRAMES);
            break;
        }
        zmq_msg_init(&parts[n]);
        if (zmq_msg_recv(&parts[n], socket, flags) < 0) {
            int e = errno;
            zmq_msg_close(&parts[n]);
            if (n == 0 && e == EAGAIN)
                return TND_ETIMEOUT;
            error = tnd_error_set("receive failed: %s", zmq_strerror(e));
            break;
        }
        flags = 0; /* the rest of a multipart message is already here */
        more = zmq_msg_more(&parts[n]);
        frames[n].data = zmq_msg_data(&parts[n]);
        frames[n].size = zmq_msg_size(&parts[n]);
        n++;
    }
    if (identity && n > 0) {
        size_t len = frames[0].size;
        if (len > TND_MDP_MAX_IDENTITY)
            len = TND_MDP_MAX_IDENTITY;
        memcpy(identity, frames[0].data, len);
        *identity_len = len;
        first = 1;
    }
    if (error == 0)
        error = tnd_mdp_decode(out, frames + first, n - first);
    if (error == 0 && n > first) {
        /* a ROUTER's identity frame carries no properties: the sender's */
        const char *uid = zmq_msg_gets(&parts[first], "User-Id");
        snprintf(out->user_id, sizeof(out->user_id), "%s", uid ? uid : "");
        property(out->key_name, sizeof(out->key_name), &parts[first],
                 TND_MDP_KEY_NAME);
        property(out->key_fingerprint, sizeof(out->key_fingerprint),
                 &parts[first], TND_MDP_KEY_FINGERPRINT);
        property(out->peer_address, sizeof(out->peer_address), &parts[first],
                 "Peer-Address");
    }
    for (size_t i = 0; i < n; i++)
        zmq_msg_close(&parts[i]);
    return error;
}

/* -1 with the error set, and errno kept for the caller (EHOSTUNREACH:
 * the peer is gone). */
static int send_failed(void)
{
    int e = errno;

    tnd_error_set("send failed: %s", zmq_strerror(e));
    errno = e;
    return -1;
}

int tnd_mdp_send(void *socket, const unsigned char *identity,
                 size_t identity_len, const tnd_mdp_msg *msg)
{
    tnd_frame frames[TND_MDP_MAX_FRAMES];
    unsigned char command;
    size_t n = tnd_mdp_encode(frames, &command, msg);

    if (identity_len > 0 && zmq_send(socket, identity, identity_len,
                                     ZMQ_SNDMORE | ZMQ_DONTWAIT) < 0)
        return send_failed();
    for (size_t i = 0; i < n; i++) {
        int flags = ZMQ_DONTWAIT | (i + 1 < n ? ZMQ_SNDMORE : 0);
        if (zmq_send(socket, frames[i].data, frames[i].size, flags) < 0)
            return send_failed();
    }
    return 0;
}

int tnd_mdp_socket_limits(void *socket)
{
    int64_t maxmsg = TND_MDP_MAX_BODY + 4096;
    int hwm = 1000, linger = 0;

    if (zmq_setsockopt(socket, ZMQ_MAXMSGSIZE, &maxmsg, sizeof(maxmsg)) < 0 ||
        zmq_setsockopt(socket, ZMQ_SNDHWM, &hwm, sizeof(hwm)) < 0 ||
        zmq_setsockopt(socket, ZMQ_RCVHWM, &hwm, sizeof(hwm)) < 0 ||
        zmq_setsockopt(socket, ZMQ_LINGER, &linger, sizeof(linger)) < 0)
        return tnd_error_set("cannot set socket options: %s",
                             zmq_strerror(errno));
    return 0;
}

void tnd_mdp_printable(char *out, size_t out_size, const unsigned char *data,
                       size_t len)
{
    static const char hex[] = "0123456789abcdef";
    bool text = len > 0;
    size_t o = 0;

    for (size_t i = 0; i < len; i++)
        if (data[i] < 0x21 || data[i] > 0x7e)
            text = false;
    /* room for this byte's 1 or 2 characters and the NUL */
    for (size_t i = 0; i < len && o + (text ? 1 : 2) < out_size; i++) {
        if (text) {
            out[o++] = (char)data[i];
        } else {
            out[o++] = hex[data[i] >> 4];
            out[o++] = hex[data[i] & 15];
        }
    }
    if (out_size)
        out[o < out_size ? o : out_size - 1] = '\0';
}

int tnd_mdp_worker_name(char *out, size_t out_size, const char *agent, int k)
{
    int n = k > 0 ? snprintf(out, out_size, "%s.%d", agent, k)
                  : snprintf(out, out_size, "%s", agent);

    if (n < 0 || (size_t)n >= out_size)
        return tnd_error_set("the agent's identity is longer than %zu bytes; "
                             "give a shorter --id",
                             out_size - 1);
    return 0;
}

void tnd_mdp_worker_agent(char *out, size_t out_size, const char *worker)
{
    const char *dot = strrchr(worker, '.');
    size_t n = strlen(worker);

    if (dot && dot[1] && strspn(dot + 1, "0123456789") == strlen(dot + 1))
        n = (size_t)(dot - worker);
    snprintf(out, out_size, "%.*s", (int)n, worker);
}

int tnd_mdp_peer_uid(unsigned *out, const char *peer_address)
{
    const char *p = peer_address + strlen(peer_address);
    unsigned long uid = 0;

    /* back over PID and GID to the colon before UID */
    for (int fields = 0; fields < 3; fields++) {
        const char *end = p;
        while (p > peer_address && isdigit((unsigned char)p[-1]))
            p--;
        if (p == end || end - p > 10 || p == peer_address || p[-1] != ':')
            return -1;
        if (fields == 2)
            uid = strtoul(p, NULL, 10);
        p--;
    }
    if (uid > 0xffffffffUL)
        return -1;
    *out = (unsigned)uid;
    return 0;
}

int tnd_mdp_endpoint_check(const char *endpoint, bool bind)
{
    const char *host = endpoint + 6, *colon, *port;
    size_t digits;

    if (strncmp(endpoint, "ipc://", 6) == 0) {
        if (!*host)
            return tnd_error_set("%s names no socket: give ipc://PATH",
                                 endpoint);
        return 0;
    }
    if (strncmp(endpoint, "tcp://", 6) != 0 && !strstr(endpoint, "://"))
        return tnd_error_set("%s is not an endpoint: give tcp://%s (or "
                             "ipc://PATH)",
                             endpoint,
                             strchr(endpoint, ':') ? endpoint : "HOST:PORT");
    if (strncmp(endpoint, "tcp://", 6) != 0)
        return tnd_error_set("%s is not an endpoint: give tcp://HOST:PORT "
                             "or ipc://PATH",
                             endpoint);
    colon = strrchr(host, ':');
    /* [::1]:5555 has its port after the bracket */
    if (!colon || colon == host || (host[0] == '[' && colon[-1] != ']'))
        return tnd_error_set("%s names no port: give tcp://HOST:PORT (e.g. "
                             "%s:5555)",
                             endpoint, endpoint);
    port = colon + 1;
    if (bind && strcmp(port, "*") == 0)
        return 0;
    digits = strspn(port, "0123456789");
    if (!*port || port[digits] || digits > 5 || atol(port) > 65535 ||
        (!bind && atol(port) == 0))
        return tnd_error_set("%s: the port must be a number, 1..65535%s, "
                             "not '%.16s'",
                             endpoint, bind ? " (0 or *: any free port)" : "",
                             port);
    return 0;
}

int tnd_mdp_ipc_listening(const char *endpoint)
{
    struct sockaddr_un sa;
    const char *path = endpoint + 6;
    int fd, rc;

    if (strncmp(endpoint, "ipc://", 6) != 0 || path[0] == '@' ||
        strlen(path) >= sizeof(sa.sun_path))
        return -1;
    memset(&sa, 0, sizeof(sa));
    sa.sun_family = AF_UNIX;
    memcpy(sa.sun_path, path, strlen(path) + 1);
    if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
        return -1;
    rc = connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 ? 1 : 0;
    close(fd);
    return rc;
}
