/* tnd_mdp - Majordomo Protocol MDP/0.2 (ZeroMQ RFC 18) framing.
 *
 * Pure encode/decode of the client (MDPC02) and worker (MDPW02)
 * sub-protocols over frame arrays, plus send/receive on ZeroMQ sockets
 * with limits. Every check the broker and the agents rely on lives here:
 * the header, the command byte, the frame count for that command, the
 * service name and address shape, and the body size. A message that
 * fails any check is drained and reported, never half-used.
 *
 * One extension for interoperability: a single empty frame in front of
 * the protocol header (as MDP/0.1 and some MDP/0.2 peers send) is
 * accepted and ignored on receive. */
#ifndef TND_MDP_H
#define TND_MDP_H

#include <stdbool.h>
#include <stddef.h>

#define TND_MDPC "MDPC02"
#define TND_MDPW "MDPW02"

/* MDP/Client commands */
#define TND_MDPC_REQUEST 1
#define TND_MDPC_PARTIAL 2
#define TND_MDPC_FINAL   3

/* MDP/Worker commands */
#define TND_MDPW_READY      1
#define TND_MDPW_REQUEST    2
#define TND_MDPW_PARTIAL    3
#define TND_MDPW_FINAL      4
#define TND_MDPW_HEARTBEAT  5
#define TND_MDPW_DISCONNECT 6

#define TND_MDP_MAX_SERVICE   64            /* bytes of a service name */
#define TND_MDP_MAX_ADDRESS   255           /* bytes of a client address */
#define TND_MDP_MAX_BODY      (16 << 20)    /* bytes of one body frame */
#define TND_MDP_MAX_FRAMES    8             /* frames of one message */
#define TND_MDP_MAX_IDENTITY  255           /* bytes of a ROUTER identity */
#define TND_MDP_MAX_PRINTABLE (2 * 255 + 1) /* tnd_mdp_printable output */
#define TND_MDP_MAX_KEY_NAME  64            /* bytes of a Key-Name */
#define TND_MDP_MAX_PEER      128           /* bytes of a Peer-Address */

/* The properties the server's ZAP handler (orchestrator/zap.h) gives
 * every message of a CURVE peer it admitted, besides "User-Id": the NAME
 * the authorized keys give its key (else the key's fingerprint), and the
 * fingerprint. */
#define TND_MDP_KEY_NAME        "Key-Name"
#define TND_MDP_KEY_FINGERPRINT "Key-Fingerprint"

typedef struct tnd_frame {
    const void *data;
    size_t size;
} tnd_frame;

typedef struct tnd_mdp_msg {
    bool worker; /* true: MDP/Worker (MDPW02); false: MDP/Client */
    int command; /* TND_MDPC_* or TND_MDPW_* */
    char service[TND_MDP_MAX_SERVICE + 1];      /* READY and client commands */
    unsigned char address[TND_MDP_MAX_ADDRESS]; /* worker REQUEST, PARTIAL,
                                                   FINAL */
    size_t address_len;
    char *body; /* owned; NUL-terminated for convenience; NULL when the
                   command has none */
    size_t body_len;
    /* tnd_mdp_recv: what the ZAP handler said of the sender over CURVE
     * (its roles, e.g. "coder,reviewer"); "" without CURVE */
    char user_id[64];
    /* tnd_mdp_recv: the sender's "Key-Name" and "Key-Fingerprint" (see
     * above); "" when the message has none, or one longer than
     * TND_MDP_MAX_KEY_NAME or with a byte outside printable ASCII. Only
     * what a ZAP handler set is proof: read them only over CURVE. */
    char key_name[TND_MDP_MAX_KEY_NAME + 1];
    char key_fingerprint[TND_MDP_MAX_KEY_NAME + 1];
    /* tnd_mdp_recv: libzmq's "Peer-Address" of the sender ("" when none or
     * too long): an IP address over tcp://; over ipc:// on Linux
     * "HOST:UID:GID:PID" as the kernel reports the peer (SO_PEERCRED) */
    char peer_address[TND_MDP_MAX_PEER + 1];
} tnd_mdp_msg;

/* Check and decode one message given as frames (without the ROUTER
 * identity). The body is copied into out (free with tnd_mdp_msg_clear).
 * -1 with an error naming the problem ("READY has 4 frames, expected
 * 3"). */
int tnd_mdp_decode(tnd_mdp_msg *out, const tnd_frame *frames, size_t n);

/* Frames for msg, pointing into msg (borrowed). Returns the count (at
 * most TND_MDP_MAX_FRAMES). The command byte is stored in *command_byte,
 * which the first frames point at, so keep it alive while sending. */
size_t tnd_mdp_encode(tnd_frame *frames, unsigned char *command_byte,
                      const tnd_mdp_msg *msg);

/* Receive one message. On a ROUTER socket pass identity (at least
 * TND_MDP_MAX_IDENTITY bytes) and identity_len to get the sender; on a
 * DEALER pass NULLs. Returns 0; TND_ETIMEOUT when nothing was waiting (the
 * socket is read without blocking); -1 for a malformed message (drained;
 * the identity is still filled in when known, so the sender can be told
 * off) or a socket error. */
int tnd_mdp_recv(tnd_mdp_msg *out, unsigned char *identity,
                 size_t *identity_len, void *socket);

/* Send msg, prefixed by identity when identity_len > 0 (ROUTER). Does not
 * block: a full queue or an unknown peer is an error (-1, with errno
 * kept: EAGAIN, EHOSTUNREACH). */
int tnd_mdp_send(void *socket, const unsigned char *identity,
                 size_t identity_len, const tnd_mdp_msg *msg);

/* Fill msg for a command without body or address (READY needs service). */
void tnd_mdp_msg_init(tnd_mdp_msg *msg, bool worker, int command,
                      const char *service);

/* Free the body and reset. Safe on a zeroed message. */
void tnd_mdp_msg_clear(tnd_mdp_msg *msg);

/* "READY", "FINAL", ... for logs; "UNKNOWN" otherwise. */
const char *tnd_mdp_command_name(bool worker, int command);

/* Apply tandem's socket limits: largest inbound message, high-water marks,
 * no linger on close. -1 with an error when libzmq refuses. */
int tnd_mdp_socket_limits(void *socket);

/* Whether endpoint is one tandem can bind (bind) or connect to:
 * ipc://PATH, or tcp://HOST:PORT with PORT 1..65535 (0 or *, any free
 * port, to bind). libzmq took a port past 65535 modulo 65536 (a server
 * told 99999 listened on 34463) and said "Invalid argument" of a
 * missing one. -1 with the error naming the endpoint and the fix. */
int tnd_mdp_endpoint_check(const char *endpoint, bool bind);

/* Whether a process listens at an ipc:// endpoint's socket file, asked
 * by connecting to it: 1 when one does, 0 when none does (no such file,
 * or nobody accepts), -1 when it cannot be told this way (tcp://, an
 * abstract name, a path too long). */
int tnd_mdp_ipc_listening(const char *endpoint);

/* A printable form of a binary identity or address (hex unless it is
 * printable ASCII) into out (at least 2 * len + 1 bytes, max 512). */
void tnd_mdp_printable(char *out, size_t out_size, const unsigned char *data,
                       size_t len);

/* The uid in an ipc:// peer's Peer-Address ("HOST:UID:GID:PID") into
 * *out: 0, or -1 (quietly) when the address does not end in three
 * decimal numbers. Only for a message that came over ipc://: a tcp://
 * peer's IPv6 address can end in the same shape. */
int tnd_mdp_peer_uid(unsigned *out, const char *peer_address);

/* An agent process that serves several requests at once (tandem-coder
 * --threads N) is N workers named AGENT.1 .. AGENT.N. Worker k's name
 * into out (k 0: AGENT itself, a single worker); -1 with the error set
 * when it does not fit. */
int tnd_mdp_worker_name(char *out, size_t out_size, const char *agent, int k);

/* The agent process of worker: AGENT for AGENT.N (N digits), else the
 * name itself, into out (truncated to out_size). */
void tnd_mdp_worker_agent(char *out, size_t out_size, const char *worker);

#endif
