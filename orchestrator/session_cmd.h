/* tnd_cmd_continue - the commands that continue a session:
 *
 *   tandem resume ID                   go on after a crash or a stop
 *   tandem approve ID                  approve the last proposal
 *   tandem reject ID -m WHY            end the task, rejected
 *   tandem guide ID -m TEXT            guidance for the coder's next try
 *   tandem budget ID --iterations N    more attempts (or --tokens N)
 *
 * ID is a session id or a unique prefix; --repo DIR picks the repository
 * (default: the current directory). */
#ifndef TND_SESSION_CMD_H
#define TND_SESSION_CMD_H

#include <stdio.h>

/* Run cmd, one of the above, with its arguments (argv[0] is cmd); its
 * help. As main.c's table of commands (orchestrator/cli.h) takes them. */
int tnd_cmd_continue(const char *cmd, int argc, char **argv);
void tnd_cmd_continue_usage(const char *cmd, FILE *to);

#endif
