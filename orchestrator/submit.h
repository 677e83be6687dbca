/* tnd_submit - `tandem submit`: a task for a running `tandem serve`.
 *
 * The client of proto/client.h over MDP/0.2: it resolves the repository
 * (and a config) to absolute paths, sends the task to tandem.submit (or
 * follows a session with tandem.attach, or asks tandem.status), and by
 * default waits: the session's progress lines go to stderr and the
 * approved diff to stdout as `tandem run` writes them, and it exits with
 * run's exit code. --detach prints the session id once the server has
 * it on disk; --json prints the report instead of the diff. Leaving
 * (Ctrl-C, a lost connection) never cancels the task. */
#ifndef TND_SUBMIT_H
#define TND_SUBMIT_H

#include <json-c/json.h>
#include <stdio.h>

#include "orchestrator/run.h"

/* The exit code for "the server is busy or stopping: try again later"
 * (EX_TEMPFAIL from sysexits.h). */
#define TND_EXIT_TEMPFAIL 75

/* `tandem submit [options] TASK...`; a TND_EXIT_* code. argv[0] is
 * "submit". */
int tnd_cmd_submit(const char *name, int argc, char **argv);

void tnd_cmd_submit_usage(const char *name, FILE *to);

/* `tandem approve|reject|guide|budget ID` of a session tandem serve ran,
 * while a server of the user's runs: the answer goes to it (checked and
 * fsync'd there before it is taken), the server goes on with the
 * session, and this follows it as submit does; a TND_EXIT_* code. -1
 * when the session is not a server's, or no server runs: answer it
 * here (tnd_run_continue). */
int tnd_submit_answer(const tnd_continue_options *o);

/* What the user's running tandem serve holds (its status reply, see
 * PROTOCOL.md), or NULL when none runs or it does not answer (said on
 * stderr). Caller puts. ctx is the caller's ZeroMQ context, borrowed
 * (one that asks again and again, as watch does, keeps one: each new
 * context starts its own I/O threads); NULL makes one for this call. */
json_object *tnd_submit_status(void *ctx);

#endif
