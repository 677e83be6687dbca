/* tnd_linewatch - whether a connected ZeroMQ socket lost its peer.
 *
 * A DEALER reconnects by itself when its peer goes and comes back, but
 * the ROUTER on the other side sees a new peer: whatever it knew of the
 * old one (a client following a session, say) is gone, and the replies
 * meant for it are dropped. A client that waits for replies must then
 * ask again; this tells it when. It also tells when the peer refused
 * this socket's key (CURVE, the peer's ZAP handler), which a client
 * otherwise sees only as a peer that never answers. It is a ZeroMQ
 * socket monitor for ZMQ_EVENT_DISCONNECTED and
 * ZMQ_EVENT_HANDSHAKE_FAILED_AUTH (and the connection and handshake
 * events that tell why a peer never answered) on an inproc PAIR of the
 * socket's context.
 *
 * Only a connection that ends is seen: a peer on another host that
 * vanishes without closing (a cable pulled) is not, and silence is the
 * caller's to time. */
#ifndef TND_LINEWATCH_H
#define TND_LINEWATCH_H

#include <stdbool.h>

typedef struct tnd_linewatch tnd_linewatch;

/* Watch socket, a socket of ctx that is not connected yet. NULL with
 * the error set. The watch must be destroyed before socket is closed. */
tnd_linewatch *tnd_linewatch_new(void *ctx, void *socket);

/* The socket to poll (ZMQ_POLLIN) beside the watched one. */
void *tnd_linewatch_socket(const tnd_linewatch *self);

/* Read what the monitor said; true when a connection of the watched
 * socket ended since the last call. Never blocks. */
bool tnd_linewatch_broke(tnd_linewatch *self);

/* The status code (400, say) with which the peer refused this socket's
 * key in a handshake, as read by tnd_linewatch_broke; 0 while none did.
 * A key with the wrong server key is not told apart: that peer closes
 * the connection without a word, and it reads as broken. */
int tnd_linewatch_refused(const tnd_linewatch *self);

/* Whether a handshake failed because the peer wants another security
 * mechanism than this socket's (CURVE against none, or the other way),
 * as read by tnd_linewatch_broke: asking again cannot help. */
bool tnd_linewatch_mismatch(const tnd_linewatch *self);

/* Why a peer that never answered did not, as far as the connections
 * tell (read by tnd_linewatch_broke), for "no answer from X: WHY": it
 * wants another mechanism; it closed the connection in the handshake (a
 * CURVE server given the wrong server key does: curve says this socket
 * uses CURVE); no connection was made; one was, and its handshake never
 * ended (a peer stopped with SIGSTOP: its kernel still accepts); NULL
 * when a handshake succeeded (the peer heard this socket: its silence is
 * the caller's to explain). A static string. */
const char *tnd_linewatch_why(const tnd_linewatch *self, bool curve);

/* Whether a handshake succeeded (read by tnd_linewatch_broke). */
bool tnd_linewatch_shook(const tnd_linewatch *self);

/* Stop watching and free; sets *self_p to NULL; safe on NULL. */
void tnd_linewatch_destroy(tnd_linewatch **self_p);

#endif
