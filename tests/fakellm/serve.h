/* fl_server - what fakellm does with each request.
 *
 * Routes a request to an API (or to a model list, or to 404), takes the
 * next script step for chat requests, logs the request, then answers it,
 * faults included. Connection threads share one server; a mutex keeps the
 * step order and the log's "n" in one global order. */
#ifndef FL_SERVE_H
#define FL_SERVE_H

#include <stdio.h>

#include "tests/fakellm/script.h"

typedef struct fl_server fl_server;

/* Takes ownership of script and of log (NULL: no request log); both are
 * released by fl_server_destroy. */
fl_server *fl_server_new(fl_script *script, FILE *log);

/* Free; closes the log. Sets *self_p to NULL. Safe on NULL. Only after
 * every fl_server_serve call has returned. */
void fl_server_destroy(fl_server **self_p);

/* Serve one accepted connection until the peer closes it, a response ends
 * it, or stop_fd (borrowed) becomes readable. Takes ownership of fd. */
void fl_server_serve(fl_server *self, int fd, int stop_fd);

#endif
