/* `tandem submit` (see submit.h). */
#include "orchestrator/submit.h"

#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zmq.h>

#include "common/buf.h"
#include "common/clock.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/str.h"
#include "common/xalloc.h"
#include "orchestrator/cli.h"
#include "orchestrator/run.h"
#include "orchestrator/serve.h"
#include "proto/body.h"
#include "proto/client.h"
#include "proto/curve.h"
#include "proto/json.h"
#include "proto/mdp.h"

#define FIRST_ANSWER_MS 10000 /* the server answers a request at once */
#define SILENCE_MS      15000 /* it says "alive" every 2 s while it works */

static atomic_int left; /* a signal: leave, the task goes on */

static void on_signal(int sig)
{
    atomic_store(&left, sig);
}

void tnd_cmd_submit_usage(const char *name, FILE *to)
{
    (void)name;
    fputs(
        "usage: tandem submit [options] TASK...\n"
        "       tandem submit --review [--staged | --diff FILE]\n"
        "                     [--on-error fail|pass] [TASK...]\n"
        "       tandem submit --attach ID [options]\n"
        "       tandem submit --status [--json]\n"
        "\n"
        "Send TASK to a running 'tandem serve' and wait for it: the\n"
        "session's progress goes to stderr and the approved diff to stdout,\n"
        "as 'tandem run' writes them, and the exit status is run's. The\n"
        "task is on disk in REPO/.tandem/sessions/ID/ before the server\n"
        "answers; leaving (Ctrl-C) does not cancel it, and --attach ID\n"
        "follows it again. Options may also follow the task; -- ends\n"
        "them.\n"
        "\n"
        "options:\n"
        "  --connect EP         the server's endpoint (default: the one in\n"
        "                       serve.endpoint, which tandem serve writes in\n"
        "                       $XDG_RUNTIME_DIR/tandem, else\n"
        "                       $TMPDIR/tandem-UID)\n"
        "  --repo DIR           the repository (default: .)\n"
        "  --config FILE        agents.yaml; it must be the server's (a\n"
        "                       server runs one configuration)\n"
        "  --task-file FILE     read the task from FILE ('-': stdin)\n"
        "  --review             'tandem review' through the server: audit\n"
        "                       the repository's git changes against HEAD,\n"
        "                       as they are now; TASK says what they are\n"
        "                       meant to do (default: review this change)\n"
        "  --staged             with --review: only the staged changes\n"
        "  --diff FILE          with --review: the patch in FILE ('-':\n"
        "                       stdin), sent to the server\n"
        "  --on-error WHAT      with --review: a review that could not be\n"
        "                       done (no server answers, its model\n"
        "                       unreachable): fail (exit 4, the default)\n"
        "                       or pass (exit 0 with a warning)\n"
        "  --detach             print the session id as soon as the server\n"
        "                       has it, and return\n"
        "  --json               print the report (report.json) on stdout\n"
        "                       instead of the diff\n"
        "  --server-key KEY     CURVE: the server's public key, or its\n"
        "                       NAME.pub (default: the one tandem serve\n"
        "                       wrote next to its endpoint)\n"
        "  --key FILE           CURVE: this client's NAME.key, listed with\n"
        "                       the client role (default: $TANDEM_KEY)\n"
        "  --attach ID          follow session ID of the server until it\n"
        "                       ends\n"
        "  --status             what the server runs and holds\n"
        "  -q, --quiet          no progress lines\n"
        "  -h, --help           show this help\n"
        "\n"
        "exit status: as tandem run (0 approved, 1 failed or stdout could\n"
        "not take the output, 2 usage or configuration error, 3 needs a\n"
        "human, 128 + N stopped by signal N), 75 the server is busy or\n"
        "stopping (try again later), 130 you left (the task goes on);\n"
        "with --review as tandem review (1 rejected, 4 could not review,\n"
        "also when no server answers at the endpoint)\n",
        to);
}

typedef struct submit {
    const char *connect, *repo, *config, *task_file, *attach, *diff;
    const char *server_key, *key;          /* CURVE: --server-key, --key */
    char found_key[TND_CURVE_Z85_LEN + 1]; /* from serve.endpoint */
    bool detach, json, status, quiet, review, staged;
    tnd_on_error on_error; /* --review: exit 4, or 0 with a warning */
    bool on_error_given;
    void *ctx, *socket;
    bool own_ctx; /* ctx is made and ended by exchange, not the caller's */
    char *endpoint;
    char *session;            /* once accepted */
    const char *me;           /* "tandem submit", or "tandem" answering */
    bool answering;           /* tnd_submit_answer */
    bool wrote_out;           /* the session's stdout came */
    char *out_lost;           /* why what goes on stdout could not be written */
    json_object **status_out; /* a status reply is kept here, not shown */
} submit;

/* The endpoint the server wrote; NULL with the error set. */
static char *find_endpoint(submit *s)
{
    char *dir = tnd_serve_dir(), *file, *ep = NULL, *nl, *key;

    if (!dir)
        return NULL;
    file = tnd_fs_join(dir, TND_SERVE_ENDPOINT_FILE);
    if (tnd_fs_read(&ep, NULL, file, 4096) < 0) {
        tnd_error_set("no tandem serve runs for you: %s cannot be read; "
                      "start one with 'tandem serve', or give --connect EP",
                      file);
        ep = NULL;
    } else {
        /* the endpoint, then maybe "server-key KEY" */
        if ((nl = strchr(ep, '\n'))) {
            *nl = '\0';
            key = nl + 1;
            if (strncmp(key, TND_SERVE_KEY_WORD " ",
                        strlen(TND_SERVE_KEY_WORD) + 1) == 0) {
                key += strlen(TND_SERVE_KEY_WORD) + 1;
                tnd_str_trim(key);
                if (tnd_curve_is_key(key) && !s->server_key)
                    memcpy(s->found_key, key, TND_CURVE_Z85_LEN + 1);
            }
        }
        tnd_str_trim(ep);
        if (!tnd_serve_running()) {
            /* left by a server that stopped (killed, or a reboot): a
             * request sent there waited 10 s for nobody */
            tnd_error_set("no tandem serve runs for you: %s is left from "
                          "one that stopped; start one with 'tandem "
                          "serve', or give --connect EP",
                          file);
            free(ep);
            ep = NULL;
        }
    }
    free(file);
    free(dir);
    return ep;
}

/* CURVE for the socket when the server wants it: its public key (from
 * --server-key, else serve.endpoint) and this client's pair (--key, else
 * $TANDEM_KEY). 0 when there is none to set; -1 said on stderr. */
static int setup_curve(submit *s)
{
    const char *key_file = s->key ? s->key : getenv("TANDEM_KEY");
    char server[TND_CURVE_Z85_LEN + 1];
    tnd_curve_pair pair;
    int rc = 0;

    if (s->server_key) {
        if (tnd_curve_read_public(server, s->server_key) < 0) {
            fprintf(stderr, "%s: --server-key: %s\n", s->me, tnd_error_last());
            return -1;
        }
    } else if (s->found_key[0]) {
        memcpy(server, s->found_key, sizeof(server));
    } else {
        if (s->key) {
            fprintf(stderr,
                    "%s: --key needs the server's public key: give "
                    "--server-key KEY (its NAME.pub)\n",
                    s->me);
            return -1;
        }
        return 0;
    }
    if (!key_file || !*key_file) {
        fprintf(stderr,
                "%s: the server at %s wants CURVE: give --key FILE (a "
                "NAME.key its authorized keys list with the client role), "
                "or set TANDEM_KEY\n",
                s->me, s->endpoint);
        return -1;
    }
    if (tnd_curve_read_pair(&pair, key_file) < 0) {
        fprintf(stderr, "%s: --key: %s\n", s->me, tnd_error_last());
        return -1;
    }
    if (zmq_setsockopt(s->socket, ZMQ_CURVE_SERVERKEY, server,
                       TND_CURVE_Z85_LEN) < 0 ||
        zmq_setsockopt(s->socket, ZMQ_CURVE_PUBLICKEY, pair.public_key,
                       TND_CURVE_Z85_LEN) < 0 ||
        zmq_setsockopt(s->socket, ZMQ_CURVE_SECRETKEY, pair.secret_key,
                       TND_CURVE_Z85_LEN) < 0) {
        fprintf(stderr, "%s: cannot set up CURVE: %s\n", s->me,
                zmq_strerror(errno));
        rc = -1;
    }
    explicit_bzero(pair.secret_key, sizeof(pair.secret_key));
    return rc;
}

static int send_request(submit *s, const tnd_client_request *req)
{
    tnd_mdp_msg m;
    size_t len;
    char *body = tnd_client_request_encode(req, &len);
    int rc;

    tnd_mdp_msg_init(&m, false, TND_MDPC_REQUEST,
                     tnd_client_service(req->kind));
    m.body = body;
    m.body_len = len;
    rc = tnd_mdp_send(s->socket, NULL, 0, &m);
    tnd_mdp_msg_clear(&m);
    return rc;
}

/* Write len bytes of the result (what: "the approved diff") on stdout,
 * flushed; a failed or short write is kept in s->out_lost: the command
 * then says the output was lost and exits 1 (exchange). */
static void put_out(submit *s, const char *what, const char *text, size_t len)
{
    errno = 0;
    if ((fwrite(text, 1, len, stdout) == len && fflush(stdout) == 0 &&
         !ferror(stdout)) ||
        s->out_lost)
        return;
    s->out_lost = tnd_xasprintf("cannot write %s on stdout: %s", what,
                                errno ? strerror(errno) : "a write failed");
}

static void print_status(const tnd_client_reply *r)
{
    json_object *list = tnd_json_array(r->report, "sessions");

    printf("running %ld of %ld, queued %ld of %ld%s\n",
           tnd_json_int_or(r->report, "running", 0),
           tnd_json_int_or(r->report, "max_sessions", 0),
           tnd_json_int_or(r->report, "queued", 0),
           tnd_json_int_or(r->report, "queue_max", 0),
           tnd_json_bool_or(r->report, "stopping", false) ? " (stopping)" : "");
    for (size_t i = 0; list && i < json_object_array_length(list); i++) {
        json_object *e = json_object_array_get_idx(list, i);
        printf("%s  %-7s  %s\n", tnd_json_str_or(e, "session", "?"),
               tnd_json_str_or(e, "state", "?"),
               tnd_json_str_or(e, "repo", "?"));
    }
    if (tnd_json_int_or(r->report, "more", 0) > 0)
        printf("... and %ld more, past what one reply lists\n",
               tnd_json_int_or(r->report, "more", 0));
}

/* One reply: 1 when it was the last (*code set), 0 to go on, -1. */
static int on_reply(submit *s, const tnd_client_reply *r, int *code)
{
    const char *diff;
    char *text;

    switch (r->type) {
    case TND_CLIENT_ACCEPTED:
        free(s->session);
        s->session = tnd_xstrdup(r->session);
        if (s->answering && !s->quiet)
            fprintf(stderr, "tandem: session %s goes on in tandem serve (%s)\n",
                    r->session, s->endpoint);
        if (s->detach) {
            text = tnd_xasprintf("%s\n", r->session);
            put_out(s, "the session's id", text, strlen(text));
            free(text);
            *code = TND_EXIT_OK;
            return 1;
        }
        if (r->queued > 0 && !s->quiet)
            fprintf(stderr,
                    "tandem: session %s waits: %ld session%s ahead of it\n",
                    r->session, r->queued, r->queued == 1 ? "" : "s");
        return 0;
    case TND_CLIENT_OUTPUT:
        if (r->err ? s->quiet : s->json)
            return 0;
        if (r->err) {
            /* what a server says goes to a person's terminal: no escape
             * (stdout is the diff, and goes as it is) */
            text = tnd_str_printable(r->text, r->text_len + 1);
            fputs(text, stderr);
            free(text);
            fflush(stderr);
        } else {
            put_out(s, "the session's output", r->text, r->text_len);
        }
        s->wrote_out = s->wrote_out || !r->err;
        return 0;
    case TND_CLIENT_ALIVE:
        return 0;
    case TND_CLIENT_DONE:
        if (s->json && r->report) {
            text = tnd_json_pretty(r->report);
            put_out(s, "the report", text, strlen(text));
            free(text);
        } else if (s->json || (!s->wrote_out && r->exit_code == TND_EXIT_OK &&
                               r->status && !r->report)) {
            /* none came: there is none, or it was too large for a reply */
            fprintf(stderr,
                    "%s: session %s ended %s; its report did not come with "
                    "the reply: read .tandem/sessions/%s/report.json in its "
                    "repository\n",
                    s->me, r->session, r->status ? r->status : "", r->session);
        } else if (!s->wrote_out && r->exit_code == TND_EXIT_OK &&
                   strcmp(tnd_json_str_or(r->report, "kind", ""), "run") == 0) {
            /* it ended while nobody followed it: the diff is in its
             * report */
            if (!s->quiet)
                fprintf(stderr, "tandem: session %s ended %s\n", r->session,
                        r->status ? r->status : "");
            diff = tnd_json_str_or(r->report, "final_diff_text", "");
            put_out(s, "the approved diff", diff, strlen(diff));
        }
        *code = r->exit_code;
        return 1;
    case TND_CLIENT_STATUS_REPLY:
        if (s->status_out) {
            *s->status_out = json_object_get(r->report);
        } else if (s->json) {
            text = tnd_json_pretty(r->report);
            put_out(s, "the status", text, strlen(text));
            free(text);
        } else {
            print_status(r);
        }
        *code = TND_EXIT_OK;
        return 1;
    case TND_CLIENT_ERROR:
        fprintf(stderr, "%s: %s\n", s->me, r->error);
        *code = strcmp(r->kind, "busy") == 0 || strcmp(r->kind, "stopping") == 0
                    ? TND_EXIT_TEMPFAIL
                : strcmp(r->kind, "failed") != 0 ? TND_EXIT_USAGE
                : s->review                      ? TND_EXIT_NOT_REVIEWED
                                                 : TND_EXIT_FAILED;
        return 1;
    }
    return 0;
}

/* The exit code when no outcome was heard (no server answers there, a
 * reply that cannot be read): under --review a review that could not be
 * done, 4, as tandem review exits when its model cannot be reached (1
 * said "rejected"); else run's 1. */
static int unheard(const submit *s)
{
    return s->review ? TND_EXIT_NOT_REVIEWED : TND_EXIT_FAILED;
}

/* Read replies until the FINAL; a TND_EXIT_* code. */
static int follow(submit *s)
{
    int64_t heard = tnd_now_ms();
    bool any = false;
    int code = unheard(s);

    for (;;) {
        zmq_pollitem_t item = {s->socket, 0, ZMQ_POLLIN, 0};
        tnd_mdp_msg m;
        tnd_client_reply r;
        int rc;

        if (atomic_load(&left)) {
            if (s->session)
                fprintf(stderr,
                        "%s: left; session %s goes on (tandem "
                        "submit --attach %s follows it)\n",
                        s->me, s->session, s->session);
            return TND_EXIT_SIGNAL + atomic_load(&left);
        }
        if (tnd_now_ms() - heard > (any ? SILENCE_MS : FIRST_ANSWER_MS)) {
            fprintf(stderr,
                    "%s: no answer from tandem serve at %s for "
                    "%d s; is it running?%s%s%s\n",
                    s->me, s->endpoint,
                    (any ? SILENCE_MS : FIRST_ANSWER_MS) / 1000,
                    s->session ? " Session " : "", s->session ? s->session : "",
                    s->session ? " is on disk; it goes on when a server runs "
                                 "it (tandem submit --attach ID)"
                               : "");
            return unheard(s);
        }
        if (zmq_poll(&item, 1, 500) < 0 && errno != EINTR) {
            fprintf(stderr, "%s: %s\n", s->me, zmq_strerror(errno));
            return unheard(s);
        }
        while ((rc = tnd_mdp_recv(&m, NULL, NULL, s->socket)) == 0) {
            int last;
            /* only a client reply is the server heard (a peer sending
             * anything else kept the wait going for ever) */
            if (m.worker || (m.command != TND_MDPC_PARTIAL &&
                             m.command != TND_MDPC_FINAL)) {
                tnd_mdp_msg_clear(&m);
                continue;
            }
            heard = tnd_now_ms();
            any = true;
            if (tnd_client_reply_decode(&r, m.body, m.body_len) < 0) {
                fprintf(stderr, "%s: %s\n", s->me, tnd_error_last());
                tnd_mdp_msg_clear(&m);
                return unheard(s);
            }
            if (r.type == TND_CLIENT_DONE && s->session && r.session &&
                strcmp(r.session, s->session) != 0) {
                /* another session's end is not this one's */
                fprintf(stderr,
                        "%s: the server ended session %s, not %s; ignored\n",
                        s->me, r.session, s->session);
                tnd_client_reply_clear(&r);
                tnd_mdp_msg_clear(&m);
                continue;
            }
            last = on_reply(s, &r, &code);
            if (!last && m.command == TND_MDPC_FINAL) {
                /* a last reply that says no outcome */
                fprintf(stderr,
                        "%s: tandem serve at %s ended the exchange without "
                        "an outcome%s%s\n",
                        s->me, s->endpoint, s->session ? " for session " : "",
                        s->session ? s->session : "");
                last = 1;
            }
            tnd_client_reply_clear(&r);
            tnd_mdp_msg_clear(&m);
            if (last)
                return code;
        }
        if (rc != TND_ETIMEOUT) {
            fprintf(stderr, "%s: %s\n", s->me, tnd_error_last());
            return unheard(s);
        }
    }
}

/* The request the options ask for; -1 (said on stderr) when they cannot
 * make one. */
static int make_request(tnd_client_request *req, submit *s, int argc,
                        char **argv)
{
    tnd_buf b;

    memset(req, 0, sizeof(*req));
    if (s->status) {
        req->kind = TND_CLIENT_KIND_STATUS;
        return 0;
    }
    if (s->attach) {
        req->kind = TND_CLIENT_KIND_ATTACH;
        req->session = tnd_xstrdup(s->attach);
        return 0;
    }
    req->kind = TND_CLIENT_KIND_SUBMIT;
    req->detach = s->detach;
    req->review = s->review;
    req->staged = s->staged;
    if (s->diff &&
        (strcmp(s->diff, "-") == 0
             ? tnd_fs_read_fd(&req->diff, NULL, STDIN_FILENO, "stdin",
                              TND_BODY_MAX_DIFF)
             : tnd_fs_read(&req->diff, NULL, s->diff, TND_BODY_MAX_DIFF)) < 0) {
        fprintf(stderr, "tandem submit: --diff %s: %s\n", s->diff,
                tnd_error_last());
        return -1;
    }
    if (!(req->repo = tnd_fs_realpath(s->repo ? s->repo : "."))) {
        fprintf(stderr, "tandem submit: --repo: %s\n", tnd_error_last());
        return -1;
    }
    if (s->config && !(req->config = tnd_fs_realpath(s->config))) {
        fprintf(stderr, "tandem submit: --config: %s\n", tnd_error_last());
        return -1;
    }
    if (s->task_file && argc > 0) {
        fprintf(stderr, "tandem submit: give the task as arguments or with "
                        "--task-file, not both\n");
        return -1;
    }
    if (s->task_file) {
        int rc = strcmp(s->task_file, "-") == 0
                     ? tnd_fs_read_fd(&req->task, NULL, STDIN_FILENO, "stdin",
                                      TND_BODY_MAX_TASK)
                     : tnd_fs_read(&req->task, NULL, s->task_file,
                                   TND_BODY_MAX_TASK);
        if (rc < 0) {
            fprintf(stderr, "tandem submit: --task-file %s: %s\n", s->task_file,
                    tnd_error_last());
            return -1;
        }
    } else {
        tnd_buf_init(&b, TND_BODY_MAX_TASK);
        for (int i = 0; i < argc; i++)
            if (tnd_buf_printf(&b, "%s%s", i ? " " : "", argv[i]) < 0) {
                fprintf(stderr,
                        "tandem submit: the task is longer than %d "
                        "bytes\n",
                        TND_BODY_MAX_TASK);
                tnd_buf_free(&b);
                return -1;
            }
        req->task = tnd_buf_detach(&b, NULL);
    }
    tnd_str_trim(req->task);
    if (!*req->task && s->review) {
        free(req->task);
        req->task = tnd_xstrdup("review this change");
    }
    if (!*req->task) {
        fprintf(stderr, "tandem submit: say what to do, e.g. tandem submit "
                        "\"make the failing test pass\"\n"
                        "try 'tandem submit --help'\n");
        return -1;
    }
    return 0;
}

static int parse(submit *s, const char *name, int argc, char **argv)
{
    static const int accepts[] = {
        TND_OPT_CONNECT, TND_OPT_REPO,   TND_OPT_CONFIG,   TND_OPT_TASK_FILE,
        TND_OPT_DETACH,  TND_OPT_JSON,   TND_OPT_ATTACH,   TND_OPT_STATUS,
        TND_OPT_REVIEW,  TND_OPT_STAGED, TND_OPT_DIFF,     TND_OPT_SERVER_KEY,
        TND_OPT_KEY,     TND_OPT_QUIET,  TND_OPT_ON_ERROR, 0};
    tnd_cli cli;
    int c;

    tnd_cli_start(&cli, name, tnd_cmd_submit_usage, accepts, argc, argv);
    while ((c = tnd_cli_next(&cli)) > 0) {
        switch (c) {
        case TND_OPT_CONNECT:
            s->connect = optarg;
            break;
        case TND_OPT_REPO:
            s->repo = optarg;
            break;
        case TND_OPT_CONFIG:
            s->config = optarg;
            break;
        case TND_OPT_TASK_FILE:
            s->task_file = optarg;
            break;
        case TND_OPT_DETACH:
            s->detach = true;
            break;
        case TND_OPT_JSON:
            s->json = true;
            break;
        case TND_OPT_ATTACH:
            s->attach = optarg;
            break;
        case TND_OPT_STATUS:
            s->status = true;
            break;
        case TND_OPT_REVIEW:
            s->review = true;
            break;
        case TND_OPT_STAGED:
            s->staged = true;
            break;
        case TND_OPT_DIFF:
            s->diff = optarg;
            break;
        case TND_OPT_SERVER_KEY:
            s->server_key = optarg;
            break;
        case TND_OPT_KEY:
            s->key = optarg;
            break;
        case TND_OPT_ON_ERROR:
            if (strcmp(optarg, "fail") != 0 && strcmp(optarg, "pass") != 0)
                return tnd_cli_error(&cli,
                                     "--on-error must be fail (exit 4) or "
                                     "pass (exit 0 with a warning), got "
                                     "\"%s\"",
                                     optarg);
            s->on_error = strcmp(optarg, "pass") == 0 ? TND_ON_ERROR_PASS
                                                      : TND_ON_ERROR_FAIL;
            s->on_error_given = true;
            break;
        default: /* TND_OPT_QUIET */
            s->quiet = true;
            break;
        }
    }
    if (c < 0)
        return cli.status == TND_EXIT_OK ? -1 : cli.status;
    if ((s->attach || s->status) && optind < argc) {
        fprintf(stderr, "tandem submit: --%s takes no task\n",
                s->attach ? "attach" : "status");
        return TND_EXIT_USAGE;
    }
    if ((s->staged || s->diff || s->on_error_given) && !s->review) {
        fprintf(stderr, "tandem submit: --%s is for --review\n",
                s->staged ? "staged"
                : s->diff ? "diff"
                          : "on-error");
        return TND_EXIT_USAGE;
    }
    if (s->staged && s->diff) {
        fprintf(stderr, "tandem submit: --staged and --diff do not go "
                        "together\n");
        return TND_EXIT_USAGE;
    }
    if (s->attach && s->status) {
        fprintf(stderr, "tandem submit: --attach and --status do not go "
                        "together\n");
        return TND_EXIT_USAGE;
    }
    return 0;
}

/* Send req to the server and follow what it answers; a TND_EXIT_* code.
 * s->endpoint is set. */
static int exchange(submit *s, const tnd_client_request *req)
{
    struct sigaction sa, old[3];
    bool handled = false;
    int linger = 0, code = unheard(s);

    if (!s->ctx) {
        s->ctx = zmq_ctx_new();
        s->own_ctx = true;
    }
    if (!s->ctx || !(s->socket = zmq_socket(s->ctx, ZMQ_DEALER)) ||
        tnd_mdp_socket_limits(s->socket) < 0) {
        fprintf(stderr, "%s: cannot make a socket: %s\n", s->me,
                zmq_strerror(errno));
        goto out;
    }
    if (setup_curve(s) < 0) {
        code = TND_EXIT_USAGE;
        goto out;
    }
    if (zmq_connect(s->socket, s->endpoint) < 0) {
        fprintf(stderr, "%s: cannot connect to %s: %s\n", s->me, s->endpoint,
                zmq_strerror(errno));
        goto out;
    }
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old[0]);
    sigaction(SIGTERM, &sa, &old[1]);
    sigaction(SIGHUP, &sa, &old[2]);
    handled = true;
    signal(SIGPIPE, SIG_IGN);
    if (send_request(s, req) < 0) {
        fprintf(stderr, "%s: cannot send to %s: %s\n", s->me, s->endpoint,
                tnd_error_last());
        goto out;
    }
    code = follow(s);
    /* the status table's printf too: a stream that failed stays failed */
    errno = 0;
    if (!s->status_out && !s->out_lost &&
        (fflush(stdout) != 0 || ferror(stdout)))
        s->out_lost = tnd_xasprintf("cannot write on stdout: %s",
                                    errno ? strerror(errno) : "a write failed");
    if (s->out_lost) {
        fprintf(stderr, "%s: %s; the output was lost%s%s%s%s\n", s->me,
                s->out_lost, s->session ? " (session " : "",
                s->session ? s->session : "", s->session ? " keeps it)" : "",
                code == TND_EXIT_OK ? ", exit 1" : "");
        code = code == TND_EXIT_OK ? TND_EXIT_FAILED : code;
        free(s->out_lost);
        s->out_lost = NULL;
    }
out:
    if (s->socket) {
        zmq_setsockopt(s->socket, ZMQ_LINGER, &linger, sizeof(linger));
        zmq_close(s->socket);
        s->socket = NULL;
    }
    if (s->own_ctx && s->ctx)
        zmq_ctx_term(s->ctx);
    s->ctx = NULL;
    s->own_ctx = false;
    if (handled) { /* a caller such as watch keeps its own */
        sigaction(SIGINT, &old[0], NULL);
        sigaction(SIGTERM, &old[1], NULL);
        sigaction(SIGHUP, &old[2], NULL);
    }
    return code;
}

int tnd_submit_answer(const tnd_continue_options *o)
{
    tnd_session_facts f;
    tnd_client_request req;
    submit s;
    char *repo = tnd_fs_realpath(o->repo ? o->repo : ".");
    int code = -1;

    memset(&s, 0, sizeof(s));
    memset(&req, 0, sizeof(req));
    if (!repo || tnd_run_facts(&f, repo, o->session) < 0) {
        free(repo); /* tnd_run_continue says what is wrong */
        return -1;
    }
    if (!f.served)
        goto out;
    if (!tnd_serve_running()) {
        if (!o->quiet)
            fprintf(stderr,
                    "tandem: session %s was run by tandem serve, which is "
                    "not running; it goes on here\n",
                    f.id);
        goto out;
    }
    if (!(s.endpoint = find_endpoint(&s))) {
        fprintf(stderr, "tandem: %s\n", tnd_error_last());
        code = TND_EXIT_FAILED;
        goto out;
    }
    s.quiet = o->quiet;
    req.kind = TND_CLIENT_KIND_ANSWER;
    req.session = tnd_xstrdup(f.id);
    req.repo = tnd_xstrdup(repo);
    req.answer = tnd_xstrdup(tnd_answer_name(o->answer));
    req.text = o->text ? tnd_xstrdup(o->text) : NULL;
    req.iterations = o->iterations;
    req.tokens = o->tokens;
    req.escalation = o->escalation ? o->escalation : f.escalation;
    s.me = "tandem";
    s.answering = true;
    code = exchange(&s, &req);
out:
    tnd_client_request_clear(&req);
    tnd_session_facts_clear(&f);
    free(s.endpoint);
    free(s.session);
    free(repo);
    return code;
}

json_object *tnd_submit_status(void *ctx)
{
    tnd_client_request req;
    json_object *status = NULL;
    submit s;

    memset(&s, 0, sizeof(s));
    memset(&req, 0, sizeof(req));
    s.me = "tandem watch";
    s.quiet = true;
    s.status_out = &status;
    s.ctx = ctx; /* NULL: exchange makes one for this call */
    req.kind = TND_CLIENT_KIND_STATUS;
    if (tnd_serve_running() && (s.endpoint = find_endpoint(&s)))
        exchange(&s, &req);
    free(s.endpoint);
    return status;
}

int tnd_cmd_submit(const char *name, int argc, char **argv)
{
    submit s;
    tnd_client_request req;
    int code = TND_EXIT_USAGE, rc;

    memset(&s, 0, sizeof(s));
    memset(&req, 0, sizeof(req));
    s.me = "tandem submit";
    if ((rc = parse(&s, name, argc, argv)) != 0)
        return rc < 0 ? TND_EXIT_OK : rc;
    if (make_request(&req, &s, argc - optind, argv + optind) < 0)
        goto out;
    s.endpoint = s.connect ? tnd_xstrdup(s.connect) : find_endpoint(&s);
    if (!s.endpoint) {
        fprintf(stderr, "tandem submit: %s\n", tnd_error_last());
        if (!s.review)
            goto out;
        /* no server to review it: as one that does not answer */
        code = TND_EXIT_NOT_REVIEWED;
    } else {
        code = exchange(&s, &req);
    }
    if (code == TND_EXIT_NOT_REVIEWED && s.on_error == TND_ON_ERROR_PASS) {
        /* as tandem review --on-error pass: fail open, and say so */
        fprintf(stderr, "tandem submit: warning: could not review the "
                        "change; --on-error pass lets it through "
                        "unreviewed\n");
        code = TND_EXIT_OK;
    }
out:
    tnd_client_request_clear(&req);
    free(s.endpoint);
    free(s.session);
    return code;
}
