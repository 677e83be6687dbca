/* Whether a socket lost its peer (see linewatch.h). */
#include "proto/linewatch.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zmq.h>

#include "common/error.h"
#include "common/xalloc.h"

struct tnd_linewatch {
    void *watched;  /* borrowed */
    void *pair;     /* the monitor's events */
    int refused;    /* the status of a handshake the peer refused, or 0 */
    bool connected; /* a connection was made */
    bool shook;     /* a handshake succeeded */
    bool cut;       /* the peer closed a connection in its handshake */
    bool mismatch;  /* the peer wants another mechanism (CURVE or not) */
};

/* Each watch's inproc name is its own within the process. */
static atomic_uint serial;

tnd_linewatch *tnd_linewatch_new(void *ctx, void *socket)
{
    tnd_linewatch *self;
    char name[64];
    int linger = 0;

    snprintf(name, sizeof(name), "inproc://tandem-linewatch-%u",
             atomic_fetch_add(&serial, 1));
    if (zmq_socket_monitor(
            socket, name,
            ZMQ_EVENT_DISCONNECTED | ZMQ_EVENT_HANDSHAKE_FAILED_AUTH |
                ZMQ_EVENT_CONNECTED | ZMQ_EVENT_HANDSHAKE_SUCCEEDED |
                ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL |
                ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL) < 0) {
        tnd_error_set("cannot watch a socket: %s", zmq_strerror(errno));
        return NULL;
    }
    self = tnd_xcalloc(1, sizeof(*self));
    self->watched = socket;
    if (!(self->pair = zmq_socket(ctx, ZMQ_PAIR)) ||
        zmq_setsockopt(self->pair, ZMQ_LINGER, &linger, sizeof(linger)) < 0 ||
        zmq_connect(self->pair, name) < 0) {
        tnd_error_set("cannot watch a socket: %s", zmq_strerror(errno));
        tnd_linewatch_destroy(&self);
        return NULL;
    }
    return self;
}

void *tnd_linewatch_socket(const tnd_linewatch *self)
{
    return self->pair;
}

bool tnd_linewatch_broke(tnd_linewatch *self)
{
    bool broke = false;

    for (;;) {
        zmq_msg_t part;
        uint16_t event = 0;
        uint32_t value = 0;
        int more = 0, first = 1;

        /* an event is two frames: 6 bytes (the event, a value), then the
         * endpoint; anything else is read past */
        do {
            zmq_msg_init(&part);
            if (zmq_msg_recv(&part, self->pair, ZMQ_DONTWAIT) < 0) {
                zmq_msg_close(&part);
                return broke;
            }
            if (first && zmq_msg_size(&part) >= sizeof(event) + sizeof(value)) {
                memcpy(&event, zmq_msg_data(&part), sizeof(event));
                memcpy(&value, (char *)zmq_msg_data(&part) + sizeof(event),
                       sizeof(value));
            }
            first = 0;
            more = zmq_msg_more(&part);
            zmq_msg_close(&part);
        } while (more);
        if (event == ZMQ_EVENT_DISCONNECTED)
            broke = true;
        else if (event == ZMQ_EVENT_HANDSHAKE_FAILED_AUTH)
            self->refused = value ? (int)value : 400;
        else if (event == ZMQ_EVENT_CONNECTED)
            self->connected = true;
        else if (event == ZMQ_EVENT_HANDSHAKE_SUCCEEDED)
            self->shook = true;
        else if (event == ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL)
            self->cut = true;
        else if (event == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL &&
                 value == ZMQ_PROTOCOL_ERROR_ZMTP_MECHANISM_MISMATCH)
            self->mismatch = true;
    }
}

bool tnd_linewatch_mismatch(const tnd_linewatch *self)
{
    return self->mismatch;
}

const char *tnd_linewatch_why(const tnd_linewatch *self, bool curve)
{
    if (self->mismatch)
        return curve ? "it does not use CURVE: leave out the server's key "
                       "and this one's (or connect to the endpoint of a "
                       "server that does)"
                     : "it uses CURVE: give the server's public key "
                       "(--server-key NAME.pub) and a key pair its "
                       "authorized keys list (--key NAME.key)";
    if (self->shook)
        return NULL; /* the caller knows what silence then means */
    if (self->cut)
        return curve ? "it closes the connection in the handshake, as a "
                       "CURVE server does when the server key given is not "
                       "its public key: check --server-key against its "
                       "NAME.pub (or the server-key line of its "
                       "serve.endpoint)"
                     : "it closes the connection in the handshake, as a "
                       "server that uses CURVE does: give its public key "
                       "(--server-key NAME.pub) and a key pair its "
                       "authorized keys list (--key NAME.key)";
    if (!self->connected)
        return "nothing accepts a connection there: is it running, and are "
               "the host and the port right?";
    return "it took the connection but never ended the handshake: is it "
           "stopped or stuck, or is this not its endpoint?";
}

bool tnd_linewatch_shook(const tnd_linewatch *self)
{
    return self->shook;
}

int tnd_linewatch_refused(const tnd_linewatch *self)
{
    return self->refused;
}

void tnd_linewatch_destroy(tnd_linewatch **self_p)
{
    tnd_linewatch *self = *self_p;

    if (!self)
        return;
    /* no more events are sent to a pair about to close */
    zmq_socket_monitor(self->watched, NULL, 0);
    if (self->pair)
        zmq_close(self->pair);
    free(self);
    *self_p = NULL;
}
