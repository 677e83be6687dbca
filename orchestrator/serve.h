/* tnd_serve - `tandem serve`: one resident orchestrator for many tasks.
 *
 * The command takes its options, makes sure it is the user's only
 * server (an flock, held for its life, in the runtime directory and in
 * the state directory), binds the endpoint in a directory only the user
 * may enter, writes it to serve.endpoint there for `tandem submit`, and
 * runs the hub (hub.h) until SIGTERM, SIGINT or SIGHUP: the first
 * drains (no new task; running sessions get --drain-s, then stop
 * resumable), a second stops the sessions at once. The agents are told
 * DISCONNECT and stopped, and it exits 0. */
#ifndef TND_SERVE_H
#define TND_SERVE_H

#include <stdbool.h>
#include <stdio.h>

/* The directory of the server's endpoint: $XDG_RUNTIME_DIR/tandem when
 * that is set, else the runtime base (rundir.h); made with mode 0700
 * when missing. NULL with the error set when it cannot be made or is
 * not the user's alone. Caller frees. */
char *tnd_serve_dir(void);

/* Whether a tandem serve of the user's runs: one holds serve.lock in
 * that directory. */
bool tnd_serve_running(void);

/* The endpoint file's name in that directory. Its first line is the
 * endpoint; over CURVE a second line is TND_SERVE_KEY_WORD and the
 * server's public key. */
#define TND_SERVE_ENDPOINT_FILE "serve.endpoint"
#define TND_SERVE_KEY_WORD      "server-key"

/* The endpoint a running tandem serve of the user's wrote there, and in
 * key (TND_CURVE_Z85_LEN + 1 bytes) the public key it wrote with it, or
 * "" when none. NULL with the error set (naming the file and what to
 * do) when no server runs. Caller frees. */
char *tnd_serve_endpoint(char *key);

/* `tandem serve [options]`; a TND_EXIT_* code. argv[0] is "serve". */
int tnd_cmd_serve(const char *name, int argc, char **argv);

void tnd_cmd_serve_usage(const char *name, FILE *to);

#endif
