/* tnd_zap - the ZAP handler (ZeroMQ RFC 27) that admits CURVE peers.
 *
 * libzmq asks the handler bound at inproc://zeromq.zap.01, in the same
 * context as the server socket, about every peer that completes a CURVE
 * handshake. This one answers 200 only for a public key listed in the
 * authorized keys (proto/curve.h), with the key's roles as the user id
 * ("coder,reviewer"): each message from that peer then carries them as
 * its "User-Id" property (zmq_msg_gets on a frame the peer sent; a
 * ROUTER's routing-id frame has none), which the broker checks before it lets
 * the peer register as a service or submit a task. The reply's metadata
 * frame names the key: "Key-Name" (the NAME its authorized-keys line gives,
 * else its fingerprint) and "Key-Fingerprint", which tnd_mdp_recv reads
 * (proto/mdp.h) and `tandem serve` records with a person's answer. Any other
 * key gets 400, and the refusal is logged with the key's fingerprint and the
 * peer's address, once per key and address a minute, so a peer that retries
 * cannot flood the log.
 *
 * The list is the authorized-keys file's, read again when the file
 * changes (tnd_zap_reload, which the broker calls once a heartbeat): a
 * key removed from it is refused from then on, as sshd reads its
 * authorized_keys at each login. A file that no longer reads (a line
 * that does not parse, modes others could write) leaves only the
 * server's own key admitted until it is mended: a revocation with a typo
 * in it must not leave the key admitted.
 *
 * The handler runs in the thread that polls its socket: call
 * tnd_zap_serve when tnd_zap_socket is readable. */
#ifndef TND_ZAP_H
#define TND_ZAP_H

#include <stdbool.h>

#include "proto/curve.h"
#include "proto/mdp.h"

/* Bytes of the largest metadata frame tnd_zap_metadata makes. */
#define TND_ZAP_METADATA_MAX 256

typedef struct tnd_zap tnd_zap;

/* Bind the handler in ctx. The list is borrowed and must outlive it.
 * path (NULL: never read again) is the file its keys came from, and own
 * (borrowed, may be NULL) the server's own key, kept across reloads.
 * NULL with the error set (another handler is bound in ctx). */
tnd_zap *tnd_zap_new(void *ctx, const tnd_curve_list *list, const char *path,
                     const tnd_curve_entry *own);

/* Read the authorized-keys file again if it changed since it was last
 * read (its inode, size or time of change). true when the list changed:
 * the caller then drops the peers whose keys lost their role
 * (tnd_zap_key_may_serve). */
bool tnd_zap_reload(tnd_zap *self);

/* Whether the key whose fingerprint is fp (tnd_curve_fingerprint) may
 * serve service by the list as it is now. */
bool tnd_zap_key_may_serve(const tnd_zap *self, const char *fp,
                           const char *service);

/* The REP socket to poll for ZMQ_POLLIN. */
void *tnd_zap_socket(tnd_zap *self);

/* Answer every request waiting now. Returns the number answered, -1 on a
 * socket failure. */
int tnd_zap_serve(tnd_zap *self);

/* The metadata frame of a 200 reply for the Z85 public_key listed under
 * name ("" or NULL: none) into out (TND_ZAP_METADATA_MAX bytes): the
 * properties "Key-Name" (name, else the key's fingerprint) and
 * "Key-Fingerprint", in ZMTP's metadata form. Returns its length. */
size_t tnd_zap_metadata(unsigned char *out, const char *public_key,
                        const char *name);

/* The number of peers refused so far. */
size_t tnd_zap_refused(const tnd_zap *self);

void tnd_zap_destroy(tnd_zap **self_p);

/* Whether a peer whose messages carry user_id (the roles the handler
 * gave its key) may register as service: "coder" needs the coder role,
 * "reviewer" and "reviewer.N" the reviewer role. */
bool tnd_zap_may_serve(const char *user_id, const char *service);

/* Whether such a peer may send client requests at all (the client or
 * the person role). */
bool tnd_zap_may_submit(const char *user_id);

/* The roles in user_id (proto/curve.h); 0 for none or an odd id. */
unsigned tnd_zap_roles(const char *user_id);

#endif
