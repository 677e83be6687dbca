/* tnd_keys_cmd - `tandem keys generate [--out DIR] [--name NAME]`: a
 * CurveZMQ key pair for the orchestrator, an agent or a client
 * (proto/curve.h), written as DIR/NAME.key (mode 0600) and DIR/NAME.pub,
 * never over an existing file. */
#ifndef TND_KEYS_CMD_H
#define TND_KEYS_CMD_H

#include <stdio.h>

/* Run `tandem keys ...`; argv[0] is name ("keys"). A TND_EXIT_* code. */
int tnd_keys_cmd(const char *name, int argc, char **argv);

/* The help of `tandem keys`. */
void tnd_keys_cmd_usage(const char *name, FILE *to);

#endif
