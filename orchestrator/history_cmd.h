/* tnd_cmd_history - the commands that look at sessions:
 *
 *   tandem sessions [--repo DIR] [--json]    every session and its state
 *   tandem sessions prune [--repo DIR] [--older-than D] [--waiting]
 *                         [--dry-run]        remove old ended sessions
 *   tandem show [--repo DIR] ID              its reflection log and diff
 *   tandem stats [--repo DIR] [--json]       figures across sessions
 *   tandem watch [--repo DIR] [ID]           a live view of running ones
 */
#ifndef TND_HISTORY_CMD_H
#define TND_HISTORY_CMD_H

#include <stdio.h>

/* Run cmd, one of the above (argv[0] is cmd), and print its help: as
 * main.c's table of commands (orchestrator/cli.h) takes them. */
int tnd_cmd_history(const char *cmd, int argc, char **argv);
void tnd_cmd_history_usage(const char *cmd, FILE *to);

#endif
