/* fakellm - a scriptable fake LLM HTTP server for tandem's integration
 * tests.
 *
 * This file is the process: command line, the loopback listener, one
 * thread per connection, and shutdown. SIGTERM, SIGINT and --max-seconds
 * all end in one byte written to a pipe that no one reads; every wait in
 * every thread polls that pipe, so the process exits promptly even with
 * clients stalled mid-request. Requests themselves are serve.c's. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/error.h"
#include "common/xalloc.h"
#include "tests/fakellm/serve.h"

#define MAX_CONNECTIONS     256
#define DEFAULT_MAX_SECONDS 300
#define REAP_EVERY_MS       1000

static const char usage[] =
    "usage: fakellm --script FILE [--port-file FILE] [--log FILE] "
    "[--port N] [--max-seconds N]\n";

typedef struct options {
    const char *script;
    const char *port_file;
    const char *log;
    long port;        /* 0: any free port */
    long max_seconds; /* 0: no limit */
} options;

/* One connection's thread. */
typedef struct worker {
    pthread_t thread;
    int fd;
    fl_server *server;
    atomic_int done; /* set by the thread as its last act */
    struct worker *next;
} worker;

/* stop[0] becomes readable, for good, when the server is to stop. */
static int stop[2] = {-1, -1};
static volatile sig_atomic_t caught;

static void request_stop(void)
{
    char c = 1;
    ssize_t n = write(stop[1], &c, 1); /* full pipe: already stopping */

    (void)n;
}

static void on_signal(int sig)
{
    int saved = errno;

    caught = sig;
    request_stop();
    errno = saved;
}

static int parse_long(long *out, const char *opt, const char *s, long max)
{
    char *end;
    long n;

    errno = 0;
    n = strtol(s, &end, 10);
    if (!*s || *end || errno || n < 0 || n > max)
        return tnd_error_set("%s must be a number 0..%ld, got \"%s\"", opt, max,
                             s);
    *out = n;
    return 0;
}

static int parse_args(options *out, int argc, char **argv)
{
    memset(out, 0, sizeof(*out));
    out->max_seconds = DEFAULT_MAX_SECONDS;
    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i], *eq = strchr(arg, '='), *value;
        size_t name_len = eq ? (size_t)(eq - arg) : strlen(arg);
        char name[32];
        int error = 0;

        if (!strcmp(arg, "-h") || !strcmp(arg, "--help"))
            return TND_ENOTFOUND;
        if (strncmp(arg, "--", 2) || name_len >= sizeof(name))
            return tnd_error_set("unexpected argument \"%s\"", arg);
        memcpy(name, arg, name_len);
        name[name_len] = '\0';
        if (eq)
            value = eq + 1;
        else if (i + 1 < argc)
            value = argv[++i];
        else
            return tnd_error_set("%s needs a value", name);
        if (!strcmp(name, "--script"))
            out->script = value;
        else if (!strcmp(name, "--port-file"))
            out->port_file = value;
        else if (!strcmp(name, "--log"))
            out->log = value;
        else if (!strcmp(name, "--port"))
            error = parse_long(&out->port, name, value, 65535);
        else if (!strcmp(name, "--max-seconds"))
            error = parse_long(&out->max_seconds, name, value, INT_MAX / 1000);
        else
            return tnd_error_set("unknown option %s", name);
        if (error < 0)
            return error;
    }
    if (!out->script)
        return tnd_error_set("--script FILE is required");
    return 0;
}

static int install_signals(void)
{
    struct sigaction sa;

    memset(&sa, 0, sizeof(sa));
    sigemptyset(&sa.sa_mask);
    sa.sa_handler = on_signal; /* no SA_RESTART: poll() must wake up */
    if (sigaction(SIGTERM, &sa, NULL) < 0 || sigaction(SIGINT, &sa, NULL) < 0)
        return tnd_error_sys("sigaction");
    sa.sa_handler = SIG_IGN;
    if (sigaction(SIGPIPE, &sa, NULL) < 0)
        return tnd_error_sys("sigaction");
    return 0;
}

/* Listen on 127.0.0.1:port; *port_out gets the port really bound. */
static int open_listener(int *fd_out, int *port_out, long port)
{
    struct sockaddr_in addr;
    socklen_t len = sizeof(addr);
    int one = 1;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

    if (fd < 0)
        return tnd_error_sys("socket");
    memset(&addr, 0, sizeof(addr));
    addr.sin_family = AF_INET;
    addr.sin_port = htons((uint16_t)port);
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0) {
        tnd_error_sys("cannot bind 127.0.0.1:%ld", port);
        close(fd);
        return -1;
    }
    if (listen(fd, 128) < 0 ||
        getsockname(fd, (struct sockaddr *)&addr, &len) < 0) {
        tnd_error_sys("cannot listen on 127.0.0.1:%ld", port);
        close(fd);
        return -1;
    }
    *fd_out = fd;
    *port_out = ntohs(addr.sin_port);
    return 0;
}

/* Write "PORT\n" to path through a temporary file and rename(), so a test
 * polling for path never reads half a number. */
static int write_port_file(const char *path, int port)
{
    char *tmp = tnd_xasprintf("%s.tmp.%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "w");
    int error = 0;

    if (!f) {
        error = tnd_error_sys("--port-file: cannot create %s", tmp);
        goto out;
    }
    if (fprintf(f, "%d\n", port) < 0) {
        error = tnd_error_sys("--port-file: cannot write %s", tmp);
        fclose(f);
    } else if (fclose(f) != 0) {
        error = tnd_error_sys("--port-file: cannot write %s", tmp);
    } else if (rename(tmp, path) < 0) {
        error = tnd_error_sys("--port-file: cannot rename %s to %s", tmp, path);
    }
    if (error < 0)
        unlink(tmp);
out:
    free(tmp);
    return error;
}

static void *work(void *payload)
{
    worker *w = payload;

    fl_server_serve(w->server, w->fd, stop[0]);
    atomic_store(&w->done, 1);
    return NULL;
}

/* Join finished threads (all of them, waiting, when all is set); returns
 * how many are still running. */
static size_t reap(worker **list, int all)
{
    size_t live = 0;

    for (worker **p = list; *p;) {
        worker *w = *p;

        if (all || atomic_load(&w->done)) {
            pthread_join(w->thread, NULL);
            *p = w->next;
            free(w);
        } else {
            live++;
            p = &w->next;
        }
    }
    return live;
}

/* Accept one connection and give it a thread. Signals stay with the main
 * thread, whose poll() they are meant to interrupt. */
static void spawn(worker **list, size_t live, int listen_fd, fl_server *server)
{
    static const char body[] =
        "{\"error\":{\"message\":\"fakellm: too many connections\"}}";
    int fd = accept4(listen_fd, NULL, NULL, SOCK_CLOEXEC);
    sigset_t all, old;
    int one = 1;
    worker *w;

    if (fd < 0) {
        if (errno == EMFILE || errno == ENFILE)
            usleep(10000); /* let connections finish rather than spin */
        return;
    }
    /* Each stream event is its own small send, as a real server flushes
     * each one. With Nagle's algorithm on, the second waited for the
     * client's delayed ACK (40 ms), and every benchmark paid it. */
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (live >= MAX_CONNECTIONS) {
        char busy[256];
        int len = snprintf(busy, sizeof(busy),
                           "HTTP/1.1 503 Service Unavailable\r\n"
                           "Content-Type: application/json\r\n"
                           "Content-Length: %zu\r\nConnection: close\r\n"
                           "\r\n%s",
                           sizeof(body) - 1, body);
        ssize_t n = send(fd, busy, (size_t)len, MSG_NOSIGNAL);

        (void)n;
        close(fd);
        return;
    }
    w = tnd_xcalloc(1, sizeof(*w));
    w->fd = fd;
    w->server = server;
    atomic_init(&w->done, 0);
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    if (pthread_create(&w->thread, NULL, work, w) != 0) {
        fprintf(stderr, "fakellm: cannot start a connection thread\n");
        close(fd);
        free(w);
    } else {
        w->next = *list;
        *list = w;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* Accept until a signal or the deadline, then stop every connection. */
static void run(int listen_fd, fl_server *server, long max_seconds)
{
    int64_t deadline = tnd_now_ms() + (int64_t)max_seconds * 1000;
    worker *workers = NULL;

    for (;;) {
        struct pollfd p[2] = {{.fd = stop[0], .events = POLLIN},
                              {.fd = listen_fd, .events = POLLIN}};
        size_t live = reap(&workers, 0);
        long wait = max_seconds > 0
                        ? tnd_clock_remaining(deadline, REAP_EVERY_MS)
                        : REAP_EVERY_MS;

        if (max_seconds > 0 && wait == 0) {
            fprintf(stderr, "fakellm: --max-seconds %ld reached, exiting\n",
                    max_seconds);
            break;
        }
        if (poll(p, 2, (int)wait) < 0 && errno != EINTR) {
            fprintf(stderr, "fakellm: poll: %s\n", strerror(errno));
            break;
        }
        if (p[0].revents)
            break;
        if (p[1].revents & POLLIN)
            spawn(&workers, live, listen_fd, server);
    }
    if (caught)
        fprintf(stderr, "fakellm: caught signal %d, exiting\n", (int)caught);
    request_stop();
    close(listen_fd);
    reap(&workers, 1);
}

/* Everything between the arguments and the first accept. */
static int start(int *fd_out, int *port_out, const options *opt)
{
    if (pipe2(stop, O_CLOEXEC | O_NONBLOCK) < 0)
        return tnd_error_sys("pipe");
    if (install_signals() < 0 || open_listener(fd_out, port_out, opt->port) < 0)
        return -1;
    if (opt->port_file && write_port_file(opt->port_file, *port_out) < 0) {
        close(*fd_out);
        return TND_ECONFIG; /* a bad --port-file path is a usage error */
    }
    return 0;
}

int main(int argc, char **argv)
{
    fl_script *script;
    fl_server *server;
    FILE *log = NULL;
    options opt;
    int listen_fd = -1, port = 0, error;

    if ((error = parse_args(&opt, argc, argv)) == TND_ENOTFOUND) {
        fputs(usage, stdout);
        return 0;
    }
    if (error < 0) {
        fprintf(stderr, "fakellm: %s\n%s", tnd_error_last(), usage);
        return 2;
    }
    if (!(script = fl_script_load(opt.script))) {
        fprintf(stderr, "fakellm: --script %s\n", tnd_error_last());
        return 2;
    }
    if (opt.log && !(log = fopen(opt.log, "ae"))) {
        fprintf(stderr, "fakellm: --log %s: cannot open: %s\n", opt.log,
                strerror(errno));
        fl_script_destroy(&script);
        return 2;
    }
    server = fl_server_new(script, log);
    if ((error = start(&listen_fd, &port, &opt)) < 0) {
        fprintf(stderr, "fakellm: %s\n", tnd_error_last());
        fl_server_destroy(&server);
        return error == TND_ECONFIG ? 2 : 1;
    }
    fprintf(stderr, "fakellm: listening on 127.0.0.1:%d\n", port);
    run(listen_fd, server, opt.max_seconds);
    fl_server_destroy(&server);
    close(stop[0]);
    close(stop[1]);
    return 0;
}
