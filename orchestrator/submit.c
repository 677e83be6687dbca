/* `tandem submit` (see submit.h). */
#include "orchestrator/submit.h"
#include "orchestrator/submit_int.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/buf.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/str.h"
#include "common/xalloc.h"
#include "orchestrator/apply.h"
#include "orchestrator/change.h"
#include "orchestrator/cli.h"
#include "orchestrator/run.h"
#include "orchestrator/serve.h"
#include "orchestrator/session.h"
#include "proto/body.h"
#include "proto/client.h"
#include "proto/mdp.h"

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
        "  --apply              once approved, apply the change to the\n"
        "                       repository here, only if all of it applies\n"
        "                       cleanly to its files as they are then (else\n"
        "                       exit 5, nothing written), as tandem run\n"
        "                       --apply; this process applies it, not the\n"
        "                       server\n"
        "  --commit             as --apply, then commit it, as tandem run\n"
        "                       --commit: the server works on HEAD's tree,\n"
        "                       and the commit is the patch on that commit\n"
        "  --json               print the report (report.json) on stdout\n"
        "                       instead of the diff\n"
        "  --server-key KEY     CURVE: the server's public key, or its\n"
        "                       NAME.pub (default: the one tandem serve\n"
        "                       wrote next to its endpoint)\n"
        "  --key FILE           CURVE: this client's NAME.key, listed with\n"
        "                       the client role (default: $TANDEM_KEY)\n"
        "  --attach ID          follow session ID of the server until it\n"
        "                       ends (one that ended long ago is looked\n"
        "                       for in --repo's sessions)\n"
        "  --reconnect-s S      a server lost while it runs the session\n"
        "                       (killed, restarted, the connection cut):\n"
        "                       wait up to S seconds for one to take the\n"
        "                       session up again, and follow it there\n"
        "                       (default 60; 0: exit 1 at once)\n"
        "  --status             what the server runs and holds\n"
        "  -q, --quiet          no progress lines\n"
        "  -h, --help           show this help\n"
        "\n"
        "exit status: as tandem run (0 approved, 1 failed or stdout could\n"
        "not take the output, 2 usage or configuration error, 3 needs a\n"
        "human, 5 approved but not applied or not committed (--apply,\n"
        "--commit), 128 + N stopped by signal N), 75 the server is busy or\n"
        "stopping (try again later), 130 you left (the task goes on);\n"
        "with --review as tandem review (1 rejected, 4 could not review,\n"
        "also when no server answers at the endpoint)\n",
        to);
}

/* A path of the server's (--repo, --config), resolved here. A server on
 * another host (--connect tcp://) has its own files: an absolute path
 * this host lacks goes as given, for the server to judge, when remote_ok
 * (a review of git's changes reads them here). It was refused as "cannot
 * resolve", so README's two-host submit worked only where the client had
 * the same directory. NULL with the error set. */
static char *server_path(const tnd_submit_client *s, const char *path,
                         bool remote_ok)
{
    char *real = tnd_fs_realpath(path);

    if (!real && remote_ok && path[0] == '/' && s->connect &&
        strncmp(s->connect, "tcp://", 6) == 0) {
        tnd_error_clear();
        return tnd_xstrdup(path);
    }
    if (!real && path[0] != '/' && s->connect &&
        strncmp(s->connect, "tcp://", 6) == 0) {
        char *why = tnd_xstrdup(tnd_error_last());
        tnd_error_set("%s (a relative path is resolved on this host; for a "
                      "server on another host give the absolute path it has "
                      "there)",
                      why);
        free(why);
    }
    return real;
}

/* The request the options ask for; -1 (said on stderr) when they cannot
 * make one. */
static int make_request(tnd_client_request *req, tnd_submit_client *s, int argc,
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
        /* where the server finds a session that ended before the
         * outcomes it keeps (it said none ran, and the client exited 2
         * for an approved change); --repo's default, ".", may be no
         * repository at all: then none is named */
        if (!(req->repo = server_path(s, s->repo ? s->repo : ".", true))) {
            if (s->repo) {
                fprintf(stderr, "tandem submit: --repo: %s\n",
                        tnd_error_last());
                return -1;
            }
            tnd_error_clear();
        }
        return 0;
    }
    req->kind = TND_CLIENT_KIND_SUBMIT;
    /* the id the session is to have: a server lost before it answered
     * is sent the task again under it, and never runs it twice */
    req->session = tnd_xmalloc(32);
    tnd_session_make_id(req->session, 32);
    req->detach = s->detach;
    req->on_head = s->apply == TND_APPLY_COMMIT;
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
    if (!(req->repo =
              server_path(s, s->repo ? s->repo : ".", !s->review || s->diff))) {
        fprintf(stderr, "tandem submit: --repo: %s\n", tnd_error_last());
        return -1;
    }
    if (s->config && !(req->config = server_path(s, s->config, true))) {
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

/* A review of git's changes takes them here, as the client's git sees
 * them, and sends them as a diff on their commit's tree: the server read
 * the repository's own index, so in a commit's hook (which git gives the
 * index being committed in GIT_INDEX_FILE) `git commit -a` was reviewed
 * as what was staged before it, and a broken edit was committed
 * unreviewed. 0, or the exit code after saying why on stderr. */
static int take_change(tnd_client_request *req, const tnd_submit_client *s)
{
    tnd_change c;
    int rc = tnd_change_load(&c, req->repo, NULL, NULL, s->staged, NULL, NULL);

    if (rc < 0) {
        fprintf(stderr, "tandem submit: %s\n", tnd_error_last());
        tnd_change_clear(&c);
        /* nothing to review, or not a repository: the user's to fix; git
         * failing: the review could not be done */
        return rc == TND_ECONFIG ? TND_EXIT_USAGE : TND_EXIT_NOT_REVIEWED;
    }
    /* what the server cannot see from the diff: submodules with changes
     * of their own, left out (a local review says it on its workspace
     * line) */
    if (c.note && !s->quiet)
        fprintf(stderr, "tandem submit: workspace: %s\n", c.note);
    req->diff = c.diff;
    req->rev = c.rev;
    req->staged = false;
    c.diff = c.rev = NULL;
    tnd_change_clear(&c);
    return 0;
}

/* --apply, --commit: what they go with, and the repository they write
 * (the client's own), checked before anything is sent. */
static int check_apply(tnd_submit_client *s)
{
    const char *opt = s->apply == TND_APPLY_COMMIT ? "--commit" : "--apply";

    if (s->review || s->status || s->detach) {
        fprintf(stderr, "tandem submit: %s %s\n", opt,
                s->review   ? "is for a task: a review judges a change that "
                              "is already in your tree"
                : s->status ? "does not go with --status"
                            : "needs the approval, which --detach does not "
                              "wait for: apply it when you attach "
                              "(tandem submit --attach ID --apply)");
        return TND_EXIT_USAGE;
    }
    if (!(s->apply_repo = tnd_fs_realpath(s->repo ? s->repo : "."))) {
        fprintf(stderr, "tandem submit: --repo: %s\n", tnd_error_last());
        return TND_EXIT_USAGE;
    }
    if (s->apply == TND_APPLY_COMMIT &&
        (tnd_apply_can_commit(s->apply_repo) < 0 ||
         tnd_change_at_top(s->apply_repo) < 0)) {
        fprintf(stderr, "tandem submit: %s\n", tnd_error_last());
        return TND_EXIT_USAGE;
    }
    return 0;
}

static int parse(tnd_submit_client *s, const char *name, int argc, char **argv)
{
    static const int accepts[] = {TND_OPT_CONNECT,
                                  TND_OPT_REPO,
                                  TND_OPT_CONFIG,
                                  TND_OPT_TASK_FILE,
                                  TND_OPT_DETACH,
                                  TND_OPT_JSON,
                                  TND_OPT_ATTACH,
                                  TND_OPT_STATUS,
                                  TND_OPT_REVIEW,
                                  TND_OPT_STAGED,
                                  TND_OPT_DIFF,
                                  TND_OPT_SERVER_KEY,
                                  TND_OPT_KEY,
                                  TND_OPT_QUIET,
                                  TND_OPT_ON_ERROR,
                                  TND_OPT_RECONNECT_S,
                                  TND_OPT_APPLY,
                                  TND_OPT_COMMIT,
                                  0};
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
        case TND_OPT_RECONNECT_S: {
            char *end;
            errno = 0;
            s->reconnect_s = strtol(optarg, &end, 10);
            if (!*optarg || *end || errno || s->reconnect_s < 0 ||
                s->reconnect_s > TND_SUBMIT_RECONNECT_MAX_S)
                return tnd_cli_error(&cli,
                                     "--reconnect-s must be 0..%d seconds, "
                                     "got \"%s\"",
                                     TND_SUBMIT_RECONNECT_MAX_S, optarg);
            break;
        }
        case TND_OPT_APPLY:
            if (s->apply != TND_APPLY_COMMIT)
                s->apply = TND_APPLY_TREE;
            break;
        case TND_OPT_COMMIT: /* implies --apply */
            s->apply = TND_APPLY_COMMIT;
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
    if (s->connect && tnd_mdp_endpoint_check(s->connect, false) < 0) {
        fprintf(stderr, "tandem submit: --connect %s\n", tnd_error_last());
        return TND_EXIT_USAGE;
    }
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
    if (s->attach && !s->attach[strspn(s->attach, " \t\r\n")]) {
        /* the server said "no session  runs": a sentence with a hole,
         * where the person typed nothing at all */
        fprintf(stderr,
                "tandem submit: --attach needs a session id (or a "
                "part of one only that session has), got \"%s\"\n",
                s->attach);
        return TND_EXIT_USAGE;
    }
    if (s->attach && s->status) {
        fprintf(stderr, "tandem submit: --attach and --status do not go "
                        "together\n");
        return TND_EXIT_USAGE;
    }
    return s->apply ? check_apply(s) : 0;
}

int tnd_submit_answer(const tnd_continue_options *o)
{
    tnd_session_facts f;
    tnd_client_request req;
    tnd_submit_client s;
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
    if (!(s.endpoint = tnd_serve_endpoint(s.found_key))) {
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
    req.calls = o->calls;
    req.escalation = o->escalation ? o->escalation : f.escalation;
    s.me = "tandem";
    s.answering = true;
    s.answer_dir = f.dir;
    s.answer_escalation = req.escalation;
    s.answer_kind = req.answer;
    s.reconnect_s = TND_SUBMIT_RECONNECT_S;
    code = tnd_submit_exchange(&s, &req);
    if (s.elsewhere) {
        /* the running server has another configuration, and the session
         * is not its: it goes on here, with its own (the server's advice
         * to start a second server could not be followed: one runs) */
        if (!o->quiet)
            fprintf(stderr,
                    "tandem: session %s ran with another configuration "
                    "than the running tandem serve's; it goes on here\n",
                    f.id);
        code = -1;
    }
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
    tnd_submit_client s;

    memset(&s, 0, sizeof(s));
    memset(&req, 0, sizeof(req));
    s.me = "tandem watch";
    s.quiet = true;
    s.status_out = &status;
    s.ctx = ctx; /* NULL: exchange makes one for this call */
    req.kind = TND_CLIENT_KIND_STATUS;
    if (tnd_serve_running() && (s.endpoint = tnd_serve_endpoint(s.found_key)))
        tnd_submit_exchange(&s, &req);
    free(s.endpoint);
    return status;
}

int tnd_cmd_submit(const char *name, int argc, char **argv)
{
    tnd_submit_client s;
    tnd_client_request req;
    int code = TND_EXIT_USAGE, rc;

    memset(&s, 0, sizeof(s));
    memset(&req, 0, sizeof(req));
    s.me = "tandem submit";
    s.reconnect_s = TND_SUBMIT_RECONNECT_S;
    if ((rc = parse(&s, name, argc, argv)) != 0) {
        free(s.apply_repo);
        return rc < 0 ? TND_EXIT_OK : rc;
    }
    if (make_request(&req, &s, argc - optind, argv + optind) < 0)
        goto out;
    if (req.kind == TND_CLIENT_KIND_SUBMIT && req.review && !req.diff &&
        (code = take_change(&req, &s)) != 0)
        goto not_reviewed;
    s.endpoint =
        s.connect ? tnd_xstrdup(s.connect) : tnd_serve_endpoint(s.found_key);
    if (!s.endpoint) {
        fprintf(stderr, "tandem submit: %s\n", tnd_error_last());
        if (!s.review)
            goto out;
        /* no server to review it: as one that does not answer */
        code = TND_EXIT_NOT_REVIEWED;
    } else {
        code = tnd_submit_exchange(&s, &req);
    }
not_reviewed:
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
    free(s.apply_repo);
    return code;
}
