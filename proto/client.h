/* tnd_client - the bodies an MDP/0.2 client and `tandem serve` exchange.
 *
 * A client sends one REQUEST to a service of the server's own namespace
 * (tandem.submit, tandem.attach, tandem.status, tandem.answer) and gets
 * zero or more
 * PARTIAL replies, then one FINAL. Every body is a JSON object with
 * "tandem": 1 and "type", like the agents' bodies (body.h);
 * proto/PROTOCOL.md ("MDP/Client") is the reference, with every limit.
 * Decoding checks every field a peer sends, so a client in any language
 * can be refused with a message naming the field, and nothing it sends
 * makes the server allocate without bound. */
#ifndef TND_CLIENT_H
#define TND_CLIENT_H

#include <json-c/json.h>
#include <stdbool.h>
#include <stddef.h>

#include "proto/body.h"
#include "proto/mdp.h"

#define TND_CLIENT_SUBMIT "tandem.submit"
#define TND_CLIENT_ATTACH "tandem.attach"
#define TND_CLIENT_STATUS "tandem.status"
#define TND_CLIENT_ANSWER "tandem.answer"

/* A request body is at most this long (room for a review's diff); a
 * longer one is refused. */
#define TND_CLIENT_MAX_BODY (TND_BODY_MAX_DIFF + (256 << 10))

/* An output reply carries at most this much text (a longer write is
 * sent as several replies). */
#define TND_CLIENT_MAX_TEXT (64 << 10)

/* What a client asks. */
typedef enum tnd_client_kind {
    TND_CLIENT_KIND_SUBMIT = 1,
    TND_CLIENT_KIND_ATTACH,
    TND_CLIENT_KIND_STATUS,
    TND_CLIENT_KIND_ANSWER,
} tnd_client_kind;

typedef struct tnd_client_request {
    tnd_client_kind kind;
    char *repo;      /* submit, answer: the repository, an absolute path;
                        attach: where to look for a session that ended
                        before the outcomes the server keeps, or NULL */
    char *task;      /* submit: what to do */
    char *config;    /* submit: agents.yaml, absolute; NULL: the server's */
    bool detach;     /* submit: the FINAL comes as soon as it is accepted */
    bool on_head;    /* submit: the base is HEAD's tree, not the work
                        tree's files: the client will commit the approved
                        change (submit --commit) */
    bool review;     /* submit: review a change (tandem review), not a task */
    bool staged;     /* review: git's staged changes only */
    char *diff;      /* review: the change as a unified diff; NULL: the
                        repository's git changes */
    char *rev;       /* review with diff: the commit (40 or 64 hex digits)
                        whose tree the diff applies to: git's changes the
                        client took itself; NULL: the repository's files */
    char *session;   /* attach, answer: the session id; submit: the id the
                        client proposes for the session, or NULL (sent
                        again after the server was lost, the session it
                        made, if any, is followed: never two) */
    char *answer;    /* answer: approve, reject, guide or budget (the
                        server parses it) */
    char *text;      /* answer: reject's reason, guide's guidance; or NULL */
    long iterations; /* answer, budget: more attempts (1..50), or 0 */
    long tokens;     /* answer, budget: more tokens, or 0 */
    long calls;      /* answer, budget: more LLM calls (1..1000), or 0 */
    long escalation; /* answer: the escalation it answers (the seq of the
                        journal record of the question the person saw), or
                        0: whichever the session waits on */
} tnd_client_request;

/* Decode the request body sent to service. -1 with an error naming the
 * field (or the unknown service) when it cannot be served. */
int tnd_client_request_decode(tnd_client_request *out, const char *service,
                              const char *body, size_t len);

/* Encode a request (the client's side); the service is the kind's.
 * Caller frees. */
char *tnd_client_request_encode(const tnd_client_request *req, size_t *len);

/* The service a kind is asked of. */
const char *tnd_client_service(tnd_client_kind kind);

void tnd_client_request_clear(tnd_client_request *req);

/* ---- who asked ---------------------------------------------------------- */

/* How a request reached the server, which says what proves its sender. */
typedef enum tnd_client_via {
    TND_CLIENT_VIA_NONE = 0, /* not through a server: this process's user */
    TND_CLIENT_VIA_CURVE,    /* tcp:// with CURVE: the key, as ZAP named it */
    TND_CLIENT_VIA_IPC,      /* ipc://: the peer's uid, as the kernel said */
    TND_CLIENT_VIA_TCP,      /* tcp:// without CURVE: nothing but an address */
} tnd_client_via;

/* Who sent a request, as the server's transport proved it; never what the
 * body says. All strings; "" when not known. */
typedef struct tnd_client_who {
    tnd_client_via via;
    char user[TND_MDP_MAX_KEY_NAME + 1]; /* curve: the key's name, else its
                                            fingerprint; ipc: the account of
                                            the peer's uid; tcp: "" */
    char key[TND_MDP_MAX_KEY_NAME + 1];  /* curve: the key's fingerprint */
    char address[TND_MDP_MAX_PEER + 1];  /* curve, tcp: the peer's address */
} tnd_client_who;

/* "curve", "ipc", "tcp"; "" for TND_CLIENT_VIA_NONE. */
const char *tnd_client_via_name(tnd_client_via via);

/* Add who's fields to o (an answer record): "via", "user" (null when not
 * known), and "key" and "address" when known. Nothing for
 * TND_CLIENT_VIA_NONE. */
void tnd_client_who_add(json_object *o, const tnd_client_who *who);

/* Read those fields back from o (may be NULL) into *out; what is missing,
 * too long or unknown is left empty (TND_CLIENT_VIA_NONE). */
void tnd_client_who_read(tnd_client_who *out, json_object *o);

/* ---- replies ------------------------------------------------------------- */

typedef enum tnd_client_reply_type {
    TND_CLIENT_ACCEPTED = 1, /* the session exists, on disk */
    TND_CLIENT_OUTPUT,       /* text the session wrote */
    TND_CLIENT_ALIVE,        /* nothing new; the server is there */
    TND_CLIENT_DONE,         /* FINAL: the session ended */
    TND_CLIENT_STATUS_REPLY, /* FINAL: what the server runs */
    TND_CLIENT_ERROR,        /* FINAL: refused or failed */
} tnd_client_reply_type;

typedef struct tnd_client_reply {
    tnd_client_reply_type type;
    char *session;       /* accepted, done */
    char *dir;           /* accepted: the session directory */
    long queued;         /* accepted: sessions ahead of it; 0: it runs */
    bool err;            /* output: stderr (else stdout) */
    char *text;          /* output */
    size_t text_len;     /* output */
    int exit_code;       /* done: as `tandem run` exits */
    char *status;        /* done: the report's status, or NULL */
    json_object *report; /* done: report.json, or NULL; status reply:
                            the whole body */
    char *kind;          /* error: bad_request, config, busy, not_found,
                            stopping, failed */
    char *error;         /* error: the message */
} tnd_client_reply;

/* Reply bodies (the server's side). Each returns the body; caller frees;
 * *len gets its length. */
char *tnd_client_accepted(const char *session, const char *dir, long queued,
                          size_t *len);
char *tnd_client_output(bool err, const char *text, size_t text_len,
                        size_t *len);
char *tnd_client_alive(size_t *len);
/* report (borrowed) may be NULL. */
char *tnd_client_done(const char *session, int exit_code, const char *status,
                      json_object *report, size_t *len);
char *tnd_client_error(const char *kind, const char *message, size_t *len);
/* A full queue: kind "busy", naming the limits and the options that set
 * them. */
char *tnd_client_busy(long max_sessions, long queue_max, size_t *len);

/* Decode a reply (the client's side). -1 with the error set for a body
 * that is none of the above. Free with tnd_client_reply_clear. */
int tnd_client_reply_decode(tnd_client_reply *out, const char *body,
                            size_t len);

void tnd_client_reply_clear(tnd_client_reply *reply);

#endif
