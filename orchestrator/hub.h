/* tnd_hub - the heart of `tandem serve`: one broker and its agents for
 * many sessions, each session on a thread of its own.
 *
 * The hub runs on the main thread. It owns the pool (the broker bound at
 * the server's endpoint, and the resident agents), an inproc ROUTER the
 * session threads' links connect to (link.h), the sessions it holds, and
 * the clients that follow them. Clients speak MDP/0.2 on the broker's
 * ROUTER to the services tandem.submit, tandem.attach and tandem.status
 * (proto/client.h); a client's request for an agent's service is
 * refused, never forwarded.
 *
 * A submitted task becomes an ordinary session in its repository
 * (tnd_run_create: the session directory and its task record, fsync'd),
 * is added to the accepted list (accepted.h), and only then does the
 * client hear its id. Up to max_sessions sessions run at once, each
 * through tnd_run_continue on its own thread with a link as its crew;
 * the rest wait in a queue of at most queue_max, and a full queue
 * answers "busy". A session thread's requests go to the broker under
 * "NAME:KEY" (NAME is the session's link, unique in the server), and
 * the broker's events go back to the session whose name they carry.
 *
 * Threads share nothing but the inproc sockets and each session's stop
 * flag: a session thread owns its session, journal, workspace and run
 * state; signals are the main thread's (session threads block them). */
#ifndef TND_HUB_H
#define TND_HUB_H

#include <stdatomic.h>
#include <stdbool.h>

#include "common/config.h"

typedef struct tnd_hub tnd_hub;

typedef struct tnd_hub_options {
    const tnd_config *config; /* the server's; the agents start from it */
    const char *endpoint;     /* where clients and agents connect */
    const char *logs_dir;     /* the agents' logs */
    const char *accepted;     /* the accepted list's file */
    long max_sessions;        /* sessions running at once */
    int pool;                 /* sets of the config's agents to start */
    long queue_max;           /* sessions waiting to run */
    unsigned long long files; /* the open files the queue and the running
                                 sessions need (the soft limit serve made
                                 sure of): room for those taken over from
                                 an earlier server is made past it */
    long drain_ms;            /* after a stop, how long running sessions
                                 may go on before they are stopped */
    const atomic_int *stops;  /* how many times the server was told to
                                 stop (SIGTERM, SIGINT, SIGHUP) */
    bool verbose;
} tnd_hub_options;

/* Bind the endpoint, start the agents, and queue the sessions the
 * accepted list holds from an earlier server. NULL with the error set.
 * opts must outlive the hub. */
tnd_hub *tnd_hub_new(const tnd_hub_options *opts);

/* Where it listens, as bound: a tcp port 0 is the port it got, and "*"
 * the address (what clients and serve.endpoint need, not the --bind
 * given). Borrowed. */
const char *tnd_hub_endpoint(const tnd_hub *self);

/* Serve until told to stop, then drain: no new task is taken, queued
 * sessions stay on disk for the next server, running ones go on for up
 * to drain_ms and are then stopped (resumable, as a signal leaves a
 * run); a second stop stops them at once. Returns 0 once every session
 * thread has ended, -1 with the error set when the broker fails. */
int tnd_hub_run(tnd_hub *self);

/* Stop the agents and free. Sets *self_p to NULL; safe on NULL. */
void tnd_hub_destroy(tnd_hub **self_p);

#endif
