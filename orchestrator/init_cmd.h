/* tnd_init_cmd - `tandem init [--repo DIR] [--force]`: write
 * REPO/agents.yaml with the build and test skills orchestrator/init.h
 * guesses, and say on stderr what was guessed and from which file. */
#ifndef TND_INIT_CMD_H
#define TND_INIT_CMD_H

#include <stdio.h>

/* Run `tandem init ...`; argv[0] is name ("init"). Returns a TND_EXIT_*
 * code: 0 written, 1 it could not be written, 2 usage (an agents.yaml
 * that is there already without --force included). */
int tnd_init_cmd(const char *name, int argc, char **argv);

/* The help of `tandem init` (for `tandem help init`). */
void tnd_init_cmd_usage(const char *name, FILE *to);

#endif
