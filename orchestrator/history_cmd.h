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

#include <stdbool.h>
#include <stdio.h>

/* True when cmd is one of the commands above. */
bool tnd_cmd_history_known(const char *cmd);

/* Run cmd (argv[0] is cmd). Returns the exit code. */
int tnd_cmd_history(const char *cmd, int argc, char **argv);

/* Print cmd's help to to. */
void tnd_cmd_history_usage(const char *cmd, FILE *to);

#endif
