/* `tandem serve` (see serve.h): options, the user's one server, the
 * endpoint, signals, then the hub. */
#include "orchestrator/serve.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/config.h"
#include "common/error.h"
#include "common/fs.h"
#include "common/log.h"
#include "common/str.h"
#include "common/xalloc.h"
#include "orchestrator/cli.h"
#include "orchestrator/hub.h"
#include "orchestrator/pool.h"
#include "orchestrator/run.h"
#include "orchestrator/rundir.h"
#include "proto/curve.h"
#include "proto/mdp.h"

#define IPC_PATH_MAX 100 /* sun_path is 108 bytes; keep a margin */
#define QUEUE_MAX    256
#define DRAIN_S      30
#define LIMIT_MAX    100000
#define POOL_MAX     64
/* Open files: a queued session holds its lock open (one), a running one
 * about 7 (its journal, lock, sockets, a child's pipes; measured with 16
 * at once), counted here twice over; and the server's own. */
#define FILES_RUNNING 16
#define FILES_OWN     256

static atomic_int stops; /* lock-free: the handler adds to it */

static void on_stop(int sig)
{
    (void)sig;
    atomic_fetch_add(&stops, 1);
}

void tnd_cmd_serve_usage(const char *name, FILE *to)
{
    (void)name;
    fputs(
        "usage: tandem serve [options]\n"
        "\n"
        "Run one orchestrator for many tasks until stopped. It starts the\n"
        "agents the config asks for (agents.*.count) and keeps them up\n"
        "across tasks; 'tandem submit' sends it tasks. Each task is an\n"
        "ordinary session in its own repository (REPO/.tandem/sessions/ID/),\n"
        "on disk before the client hears its id; up to --max-sessions run\n"
        "at once and the rest wait in a queue. The endpoint is an ipc://\n"
        "socket in a directory only you may enter ($XDG_RUNTIME_DIR/tandem,\n"
        "else $TMPDIR/tandem-UID), printed at start and written to\n"
        "serve.endpoint there, where 'tandem submit' finds it.\n"
        "\n"
        "SIGTERM (or Ctrl-C, or SIGHUP) stops taking tasks, lets running\n"
        "sessions go on for --drain-s, then stops them (resumable) and\n"
        "exits 0; a second one stops them at once. Sessions accepted and\n"
        "not ended (queued, running, stopped, or lost to a crash) go on\n"
        "when tandem serve starts again.\n"
        "\n"
        "options:\n"
        "  --config FILE        agents.yaml for the agents and every session\n"
        "                       (default: the built-in defaults)\n"
        "  --bind EP            the endpoint: ipc://PATH (default:\n"
        "                       serve.sock in the directory above, or the\n"
        "                       config's orchestrator.endpoint), or\n"
        "                       tcp://HOST:PORT for agents and clients on\n"
        "                       other hosts, with CURVE (orchestrator.\n"
        "                       curve_key, authorized_keys: clients need\n"
        "                       the client role)\n"
        "  --max-sessions N     sessions running at once (default: 2 x the\n"
        "                       online CPUs)\n"
        "  --queue-max N        sessions waiting to run (default 256); past\n"
        "                       it a submission is answered busy\n"
        "  --pool N             sets of the config's agents to start, so\n"
        "                       that N sessions' agents work at once\n"
        "                       (default: the online CPUs, at most\n"
        "                       --max-sessions); each agent process\n"
        "                       serves agents.*.threads of them\n"
        "  --drain-s S          how long running sessions may go on after\n"
        "                       SIGTERM (default 30)\n"
        "  --insecure           allow a tcp:// endpoint without CURVE,\n"
        "                       loopback too, where every local user may\n"
        "                       submit (as orchestrator.insecure: true);\n"
        "                       every session's report says so\n"
        "  --state DIR          where the list of accepted sessions and the\n"
        "                       agents' logs live (default:\n"
        "                       $XDG_STATE_HOME/tandem, else\n"
        "                       ~/.local/state/tandem)\n"
        "  -v, --verbose        debug logging\n"
        "  -h, --help           show this help\n"
        "\n"
        "exit status: 0 stopped, 1 failed, 2 usage or configuration error\n"
        "(another tandem serve runs, a bad option or config)\n",
        to);
}

/* dir, made 0700 when missing; it must be a directory of the user's
 * that no one else may enter. */
static int private_dir(const char *dir)
{
    struct stat st;

    if (tnd_fs_mkdirs(dir, 0700) < 0)
        return -1;
    if (lstat(dir, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != getuid() ||
        (st.st_mode & 077))
        return tnd_error_set("%s must be a directory owned by you with mode "
                             "0700 (it is not; fix it or remove it)",
                             dir);
    return 0;
}

char *tnd_serve_dir(void)
{
    const char *xdg = getenv("XDG_RUNTIME_DIR");
    char *dir;

    if (!xdg || xdg[0] != '/')
        return tnd_rundir_base();
    dir = tnd_fs_join(xdg, "tandem");
    if (private_dir(dir) < 0) {
        free(dir);
        return NULL;
    }
    return dir;
}

static char *state_dir(const char *given)
{
    const char *xdg = getenv("XDG_STATE_HOME"), *home = getenv("HOME");
    char *dir;

    if (given)
        dir = tnd_xstrdup(given);
    else if (xdg && xdg[0] == '/')
        dir = tnd_fs_join(xdg, "tandem");
    else if (home && home[0] == '/')
        dir = tnd_xasprintf("%s/.local/state/tandem", home);
    else {
        tnd_error_set("neither XDG_STATE_HOME nor HOME is set; give --state "
                      "DIR");
        return NULL;
    }
    if (private_dir(dir) < 0) {
        free(dir);
        return NULL;
    }
    return dir;
}

bool tnd_serve_running(void)
{
    char *dir = tnd_serve_dir(), *path;
    bool running = false;
    int fd;

    if (!dir)
        return false;
    path = tnd_fs_join(dir, "serve.lock");
    fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
    if (fd >= 0) {
        running = flock(fd, LOCK_SH | LOCK_NB) < 0 && errno == EWOULDBLOCK;
        close(fd); /* a lock we took goes with it */
    }
    free(path);
    free(dir);
    return running;
}

char *tnd_serve_endpoint(char *key)
{
    char *dir = tnd_serve_dir(), *file, *ep = NULL, *nl, *line;

    *key = '\0';
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
            line = nl + 1;
            if (strncmp(line, TND_SERVE_KEY_WORD " ",
                        strlen(TND_SERVE_KEY_WORD) + 1) == 0) {
                line += strlen(TND_SERVE_KEY_WORD) + 1;
                tnd_str_trim(line);
                if (tnd_curve_is_key(line))
                    memcpy(key, line, TND_CURVE_Z85_LEN + 1);
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

/* Hold dir/serve.lock for the server's life. -1 with an error naming
 * the running server when another holds it. */
static int take_lock(int *fd, const char *dir, const char *endpoint_dir)
{
    char *path = tnd_fs_join(dir, "serve.lock"), pid[32];
    int n;

    *fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (*fd < 0) {
        tnd_error_sys("cannot open %s", path);
        free(path);
        return -1;
    }
    if (flock(*fd, LOCK_EX | LOCK_NB) < 0) {
        char held[32] = "",
             *file = tnd_fs_join(endpoint_dir, TND_SERVE_ENDPOINT_FILE);
        char *ep = NULL;
        ssize_t got = pread(*fd, held, sizeof(held) - 1, 0);
        held[got > 0 ? got : 0] = '\0';
        tnd_str_trim(held);
        if (tnd_fs_read(&ep, NULL, file, 4096) == 0)
            tnd_str_trim(ep);
        tnd_error_set("tandem serve is already running%s%s%s%s (it holds "
                      "%s); submit to it, or stop it first (kill -TERM "
                      "%s)",
                      *held ? " as pid " : "", held, ep ? " at " : "",
                      ep ? ep : "", path, *held ? held : "PID");
        free(ep);
        free(file);
        free(path);
        close(*fd);
        *fd = -1;
        return -1;
    }
    n = snprintf(pid, sizeof(pid), "%ld\n", (long)getpid());
    if (ftruncate(*fd, 0) < 0 || pwrite(*fd, pid, (size_t)n, 0) != n)
        tnd_log_warn("cannot write the pid to %s", path);
    free(path);
    return 0;
}

/* A positive number option; -1 (said on stderr) when it is not one. */
static long number(const char *opt, const char *arg, long max)
{
    char *end;
    long v = strtol(arg, &end, 10);

    if (!*arg || *end || v < 1 || v > max) {
        fprintf(stderr, "tandem serve: %s must be 1..%ld, got \"%s\"\n", opt,
                max, arg);
        return -1;
    }
    return v;
}

typedef struct serve_opts {
    const char *config, *bind, *state;
    long max_sessions, queue_max, drain_s, pool;
    bool verbose, insecure;
} serve_opts;

static int parse(serve_opts *o, const char *name, int argc, char **argv)
{
    static const int accepts[] = {TND_OPT_CONFIG,       TND_OPT_BIND,
                                  TND_OPT_MAX_SESSIONS, TND_OPT_QUEUE_MAX,
                                  TND_OPT_DRAIN_S,      TND_OPT_POOL,
                                  TND_OPT_STATE,        TND_OPT_VERBOSE,
                                  TND_OPT_INSECURE,     0};
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    tnd_cli cli;
    int c;

    memset(o, 0, sizeof(*o));
    o->max_sessions = 2 * (cpus > 0 ? cpus : 1);
    o->queue_max = QUEUE_MAX;
    o->drain_s = DRAIN_S;
    tnd_cli_start(&cli, name, tnd_cmd_serve_usage, accepts, argc, argv);
    while ((c = tnd_cli_next(&cli)) > 0) {
        switch (c) {
        case TND_OPT_CONFIG:
            o->config = optarg;
            break;
        case TND_OPT_BIND:
            o->bind = optarg;
            break;
        case TND_OPT_STATE:
            o->state = optarg;
            break;
        case TND_OPT_MAX_SESSIONS:
            if ((o->max_sessions = number("--max-sessions", optarg, 1024)) < 0)
                return TND_EXIT_USAGE;
            break;
        case TND_OPT_QUEUE_MAX:
            if ((o->queue_max = number("--queue-max", optarg, LIMIT_MAX)) < 0)
                return TND_EXIT_USAGE;
            break;
        case TND_OPT_POOL:
            if ((o->pool = number("--pool", optarg, POOL_MAX)) < 0)
                return TND_EXIT_USAGE;
            break;
        case TND_OPT_DRAIN_S:
            if ((o->drain_s = number("--drain-s", optarg, 86400)) < 0)
                return TND_EXIT_USAGE;
            break;
        case TND_OPT_INSECURE:
            o->insecure = true;
            break;
        default: /* TND_OPT_VERBOSE */
            o->verbose = true;
            break;
        }
    }
    if (c < 0)
        return cli.status == TND_EXIT_OK ? -1 : cli.status;
    if (optind < argc)
        return tnd_cli_error(&cli, "unexpected argument '%s'", argv[optind]);
    if (!o->pool) /* a set per CPU, and no more than can be busy */
        o->pool = cpus < 1                 ? 1
                  : cpus < o->max_sessions ? cpus
                                           : o->max_sessions;
    return 0;
}

/* The server's config: loaded, checked as a run checks it. */
static int load_config(tnd_config **out, const char *given)
{
    char *real = NULL;
    int rc;

    *out = NULL;
    if (!given) {
        *out = tnd_config_defaults();
    } else if (!(real = tnd_fs_realpath(given))) {
        return tnd_error_config("--config %s: %s", given, tnd_error_last());
    } else if ((rc = tnd_config_load(out, real)) < 0) {
        free(real);
        return rc == TND_ECONFIG ? TND_ECONFIG : -1;
    }
    free(real);
    return 0;
}

/* Write the endpoint where submit finds it (and, over CURVE, the
 * server's public key): a temporary file renamed into place, so a reader
 * never sees half of it. */
static int publish(const char *dir, const char *endpoint, const tnd_config *cfg)
{
    char *path = tnd_fs_join(dir, TND_SERVE_ENDPOINT_FILE);
    char *text = NULL;
    tnd_curve_pair pair;
    int rc;

    if (*cfg->orchestrator.curve_key && strncmp(endpoint, "tcp://", 6) == 0) {
        if (tnd_curve_read_pair(&pair, cfg->orchestrator.curve_key) < 0) {
            free(path);
            return -1;
        }
        text = tnd_xasprintf("%s\n%s %s\n", endpoint, TND_SERVE_KEY_WORD,
                             pair.public_key);
        explicit_bzero(pair.secret_key, sizeof(pair.secret_key));
    } else {
        text = tnd_xasprintf("%s\n", endpoint);
    }
    rc = tnd_fs_write_atomic(path, text, strlen(text));

    free(text);
    free(path);
    return rc;
}

/* The open files the queue and the sessions asked for: the soft limit
 * raised to it when the hard one allows (a queue past ~700 sessions
 * failed its opens under the usual 1,024), else an error naming both.
 * Raised no further here (children inherit it); the hub adds one a
 * session it takes over from an earlier server. */
static unsigned long long files_needed(const serve_opts *o)
{
    return (unsigned long long)o->queue_max +
           (unsigned long long)o->max_sessions * FILES_RUNNING + FILES_OWN;
}

static int enough_files(const serve_opts *o)
{
    unsigned long long need = files_needed(o);
    unsigned long long can = tnd_fs_files_raise(need);

    if (can >= need)
        return 0;
    return tnd_error_set(
        "--queue-max %ld and --max-sessions %ld need about %llu open files "
        "(a queued session holds one, a running one up to %d), and this "
        "process may open %llu (ulimit -Hn); give a smaller --queue-max or "
        "--max-sessions, or raise the limit",
        o->queue_max, o->max_sessions, need, FILES_RUNNING, can);
}

/* Whether a and b are one directory (by device and inode). */
static bool same_dir(const char *a, const char *b)
{
    struct stat sa, sb;

    return stat(a, &sa) == 0 && stat(b, &sb) == 0 && sa.st_dev == sb.st_dev &&
           sa.st_ino == sb.st_ino;
}

static int serve(const serve_opts *o)
{
    char *dir = NULL, *state = NULL, *endpoint = NULL, *logs = NULL,
         *accepted = NULL, *file = NULL;
    int lock = -1, state_lock = -1, code = TND_EXIT_FAILED, rc;
    bool bound = false;
    tnd_config *cfg = NULL;
    tnd_hub_options ho;
    tnd_hub *hub = NULL;
    struct sigaction sa;

    if (enough_files(o) < 0 || !(dir = tnd_serve_dir()) ||
        !(state = state_dir(o->state))) {
        fprintf(stderr, "tandem serve: %s\n", tnd_error_last());
        code = TND_EXIT_USAGE;
        goto out;
    }
    /* one directory for both (--state naming the runtime directory, or
     * XDG_STATE_HOME = XDG_RUNTIME_DIR) is one lock: taken twice, it
     * said the server ran already, as its own pid */
    if (take_lock(&lock, dir, dir) < 0 ||
        (!same_dir(state, dir) && take_lock(&state_lock, state, dir) < 0)) {
        fprintf(stderr, "tandem serve: %s\n", tnd_error_last());
        code = TND_EXIT_USAGE;
        goto out;
    }
    if ((rc = load_config(&cfg, o->config)) < 0) {
        fprintf(stderr, "tandem serve: %s\n", tnd_error_last());
        code = rc == TND_ECONFIG ? TND_EXIT_USAGE : TND_EXIT_FAILED;
        goto out;
    }
    if (o->insecure)
        cfg->orchestrator.insecure = true;
    endpoint = o->bind ? tnd_xstrdup(o->bind)
               : *cfg->orchestrator.endpoint
                   ? tnd_xstrdup(cfg->orchestrator.endpoint)
                   : tnd_xasprintf("ipc://%s/serve.sock", dir);
    if (tnd_mdp_endpoint_check(endpoint, true) < 0) {
        fprintf(stderr, "tandem serve: %s%s\n", o->bind ? "--bind " : "",
                tnd_error_last());
        code = TND_EXIT_USAGE;
        goto out;
    }
    if (tnd_pool_check(cfg, endpoint, true, true) < 0) {
        fprintf(stderr, "tandem serve: %s\n", tnd_error_last());
        code = TND_EXIT_USAGE;
        goto out;
    }
    if (strncmp(endpoint, "ipc://", 6) == 0 &&
        strlen(endpoint) - 6 > IPC_PATH_MAX) {
        fprintf(stderr,
                "tandem serve: the socket path %s is too long for ipc://; "
                "give --bind ipc://SHORTER-PATH\n",
                endpoint + 6);
        code = TND_EXIT_USAGE;
        goto out;
    }
    logs = tnd_fs_join(state, "logs");
    accepted = tnd_fs_join(state, "accepted.jsonl");

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = on_stop;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
    {
        /* nohup tandem serve &: a hang-up the user chose to ignore stays
         * ignored (a logout stopped the server) */
        struct sigaction was;
        if (sigaction(SIGHUP, NULL, &was) < 0 || was.sa_handler != SIG_IGN)
            sigaction(SIGHUP, &sa, NULL);
    }
    signal(SIGPIPE, SIG_IGN);
    signal(SIGXFSZ, SIG_IGN); /* a file size limit is a write error */

    memset(&ho, 0, sizeof(ho));
    ho.config = cfg;
    ho.endpoint = endpoint;
    ho.logs_dir = logs;
    ho.accepted = accepted;
    ho.max_sessions = o->max_sessions;
    ho.pool = (int)o->pool;
    ho.queue_max = o->queue_max;
    ho.files = files_needed(o);
    ho.drain_ms = o->drain_s * 1000;
    ho.stops = &stops;
    ho.verbose = o->verbose;
    if (!(hub = tnd_hub_new(&ho))) {
        /* not bound: the socket there, if any, is another server's (one
         * with another runtime directory on the same --bind), and
         * removing it cut that server off from every client */
        fprintf(stderr, "tandem serve: %s\n", tnd_error_last());
        if (tnd_error_is_config())
            code = TND_EXIT_USAGE; /* an endpoint taken, say */
        goto out;
    }
    bound = true;
    fprintf(stderr,
            "tandem serve: listening on %s (%ld session%s at once, a queue "
            "of %ld, %ld set%s of agents; config %s)\n",
            tnd_hub_endpoint(hub), o->max_sessions,
            o->max_sessions == 1 ? "" : "s", o->queue_max, o->pool,
            o->pool == 1 ? "" : "s",
            cfg->path ? cfg->path : "built-in defaults");
    /* submit finds the endpoint only once the server answers there */
    if (publish(dir, tnd_hub_endpoint(hub), cfg) < 0) {
        fprintf(stderr, "tandem serve: %s\n", tnd_error_last());
        goto out;
    }
    file = tnd_fs_join(dir, TND_SERVE_ENDPOINT_FILE);
    rc = tnd_hub_run(hub);
    unlink(file);
    tnd_hub_destroy(&hub);
    if (rc < 0) {
        fprintf(stderr, "tandem serve: %s\n", tnd_error_last());
    } else {
        fprintf(stderr, "tandem serve: stopped\n");
        code = TND_EXIT_OK;
    }
out:
    tnd_hub_destroy(&hub);
    if (bound && endpoint && strncmp(endpoint, "ipc://", 6) == 0 && lock >= 0)
        unlink(endpoint + 6);
    tnd_config_destroy(&cfg);
    if (state_lock >= 0)
        close(state_lock);
    if (lock >= 0)
        close(lock);
    free(file);
    free(accepted);
    free(logs);
    free(endpoint);
    free(state);
    free(dir);
    return code;
}

int tnd_cmd_serve(const char *name, int argc, char **argv)
{
    serve_opts o;
    int rc = parse(&o, name, argc, argv);

    if (rc != 0)
        return rc < 0 ? TND_EXIT_OK : rc;
    tnd_log_init("tandem", o.verbose ? TND_LOG_DEBUG : TND_LOG_WARN);
    return serve(&o);
}
