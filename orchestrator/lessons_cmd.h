/* tnd_cmd_lessons - `tandem lessons list|show|forget`: look at and prune
 * the lessons bank (orchestrator/lessons.h) of a repository. */
#ifndef TND_LESSONS_CMD_H
#define TND_LESSONS_CMD_H

#include <stdio.h>

/* Run `tandem lessons ...`; argv[0] is cmd, "lessons". Returns a
 * TND_EXIT_* code: 0 ok, 1 the bank cannot be read or written, 2 usage
 * (an unknown or ambiguous id included). */
int tnd_cmd_lessons(const char *cmd, int argc, char **argv);

/* The help of `tandem lessons` (for `tandem help lessons`). */
void tnd_cmd_lessons_usage(const char *cmd, FILE *to);

#endif
