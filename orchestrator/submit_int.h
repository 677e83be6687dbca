/* The insides of `tandem submit`, shared by submit.c (the command, its
 * options, the requests it makes) and follow.c (the exchange with the
 * server: the request sent, its replies followed, a lost server waited
 * for). Not for anyone else: the rest of tandem uses submit.h. */
#ifndef TND_SUBMIT_INT_H
#define TND_SUBMIT_INT_H

#include <json-c/json.h>
#include <stdbool.h>

#include "common/sha256.h"
#include "orchestrator/run.h"
#include "proto/client.h"
#include "proto/curve.h"
#include "proto/linewatch.h"

/* --reconnect-s: its default and its most */
#define TND_SUBMIT_RECONNECT_S     60
#define TND_SUBMIT_RECONNECT_MAX_S 86400

/* One exchange with a server, as the options and the replies so far
 * make it. */
typedef struct tnd_submit_client {
    const char *connect, *repo, *config, *task_file, *attach, *diff;
    const char *server_key, *key;           /* CURVE: --server-key, --key */
    char found_key[TND_CURVE_Z85_LEN + 1];  /* from serve.endpoint */
    char public_key[TND_CURVE_Z85_LEN + 1]; /* this client's, over CURVE */
    const char *key_file;                   /* where it came from */
    bool detach, json, status, quiet, review, staged;
    tnd_on_error on_error; /* --review: exit 4, or 0 with a warning */
    bool on_error_given;
    long reconnect_s; /* --reconnect-s */
    void *ctx, *socket;
    tnd_linewatch *watch; /* whether socket's connection ended */
    bool own_ctx; /* ctx is made and ended by the exchange, not the caller's */
    char *endpoint;
    char *session;                    /* once accepted */
    const tnd_client_request *submit; /* a task or review sent under the
                                         id it proposes (req->session):
                                         sent again when the server is
                                         lost before it answered */
    const char *repo_sent;            /* the repository the request named
                                         (NULL: none), named again when
                                         the session is attached to */
    int first_ms;                     /* how long the first answer may take */
    bool lost;                        /* the server went while it ran session */
    bool coming_back;                 /* following session again: come_back */
    bool said_stopping;               /* come_back met a server stopping */
    const char *me;           /* "tandem submit", or "tandem" answering */
    bool answering;           /* tnd_submit_answer */
    const char *answer_dir;   /* answering: the session's directory, */
    long answer_escalation;   /* the escalation answered (its seq) */
    const char *answer_kind;  /* and the answer's name */
    bool came_back;           /* the server was lost, and one came back */
    bool elsewhere;           /* answering: the server does not run the
                                 session's configuration */
    bool wrote_out;           /* the session's stdout came */
    size_t out_len;           /* bytes of it written, */
    tnd_sha256 out_sum;       /* and their sum */
    size_t out_again;         /* a server came back: bytes of what it sends
                                 again that were written already (checked
                                 against out_sum, not written again) */
    tnd_sha256 again_sum;     /* their sum so far */
    bool out_resent;          /* its stdout came since the last loss */
    bool heard;               /* any of its output came, stderr too */
    char *out_lost;           /* why what goes on stdout could not be written */
    json_object **status_out; /* a status reply is kept here, not shown */
    tnd_apply_mode apply;     /* --apply, --commit: the approved change into
                                 apply_repo */
    char *apply_repo;         /* the client's repository, its real path */
} tnd_submit_client;

/* Send req to the server at s->endpoint and follow what it answers; a
 * TND_EXIT_* code, what went wrong said on stderr. SIGINT, SIGTERM and
 * SIGHUP leave it (the session goes on) while it runs. */
int tnd_submit_exchange(tnd_submit_client *s, const tnd_client_request *req);

/* submit_out.c: len bytes of a result (what: "the approved diff") on
 * stdout, flushed; a failed or short write kept in s->out_lost (the
 * command then says the output was lost and exits 1). */
void tnd_submit_put_out(tnd_submit_client *s, const char *what,
                        const char *text, size_t len);

/* The session's stdout, written once whatever servers send it: after
 * tnd_submit_out_from_start (a server lost), what the next one sends
 * again is checked against what was written (its SHA-256), not written
 * twice; output that is not it is not mixed in (s->out_lost). */
void tnd_submit_put_session_out(tnd_submit_client *s, const char *text,
                                size_t len);
void tnd_submit_out_from_start(tnd_submit_client *s);
/* The session ended: output sent again that was shorter than what was
 * written is lost (s->out_lost), as output that differs is. */
void tnd_submit_out_end(tnd_submit_client *s);

/* The server's error on stderr, without escape codes. */
void tnd_submit_say_error(const tnd_submit_client *s,
                          const tnd_client_reply *r);

/* A status reply as a table on stdout. */
void tnd_submit_print_status(const tnd_client_reply *r);

/* How a session that ended while nobody followed it ended, on stderr:
 * its status and why, and for one that waits, the answers. */
void tnd_submit_said_end(const tnd_client_reply *r);

/* submit_apply.c: an approved session's change into s->apply_repo as
 * s->apply asks, from its report (the reply's, which gets the `apply`
 * it did, or read from the session's directory when NULL); said on
 * stderr as tandem run says it. TND_EXIT_OK when done as asked, else
 * TND_EXIT_NOT_APPLIED (the tree as it was, or applied and not
 * committed). */
int tnd_submit_apply(tnd_submit_client *s, json_object *reply_report,
                     const char *session);

#endif
