/* How a command in agents.yaml becomes what runs: a list as it is, a
 * string of plain words split as the shell would (without a shell per
 * skill), anything else through a shell (see tnd_command in config.h).
 * Shared by config.c and config_skills.c. */
#ifndef TND_CONFIG_COMMAND_H
#define TND_CONFIG_COMMAND_H

#include <yaml.h>

#include "common/config.h"
#include "common/yamlwalk.h"

/* The shell a string command that is not plain words runs in, as
 * `TND_CONFIG_SHELL -o pipefail -c LINE` (/bin/sh -c where it is
 * missing). */
#define TND_CONFIG_SHELL "/bin/bash"

/* A command field (a shell string or a list) of a section being walked. */
void tnd_config_set_command(tnd_yw *w, const tnd_yw_field *f, const char *path,
                            const yaml_node_t *v, char *base);

/* As tnd_config_set_command, for a program tandem starts (an agent, a
 * model program), not a skill (which runs in the workspace): a program
 * named by a relative path ("./answer.sh", "bin/x") is beside the file,
 * as a cassette is, not in whatever directory tandem was started from (a
 * model program ran from one and failed from another). A bare name is
 * looked up on PATH; a shell's words are the shell's. */
void tnd_config_set_program(tnd_yw *w, const tnd_yw_field *f, const char *path,
                            const yaml_node_t *v, char *base);

/* c set up from a string command: plain words run directly, anything
 * else through the shell. */
void tnd_config_command_shell(tnd_command *c, const char *line);

/* Free what c holds; it is empty after. */
void tnd_config_command_free(tnd_command *c);

#endif
