/* tnd_config_skills - the skills section of agents.yaml, and what the
 * rest of the config loader shares with it. Internal to common/config.c,
 * config_skills.c and config_check.c: nothing else includes this. */
#ifndef TND_CONFIG_SKILLS_H
#define TND_CONFIG_SKILLS_H

#include <yaml.h>

#include "common/config.h"
#include "common/config_command.h"
#include "common/yamlwalk.h"

/* config_skills.c: a skill with its defaults (line, if not NULL, is its
 * command); every skill freed; the `skills:` map walked into cfg; the
 * `after` lists checked, cycles included, against the document root. */
void tnd_config_skill_defaults(tnd_skill_config *s, const char *name,
                               const char *line);
void tnd_config_skills_free(tnd_config *cfg);
void tnd_config_walk_skills(tnd_yw *w, tnd_config *cfg, const yaml_node_t *map);
void tnd_config_check_after(tnd_yw *w, tnd_config *cfg,
                            const yaml_node_t *root);

/* config_check.c: the checks between keys, once the document is walked
 * into cfg; each pattern in the list under key of map is a valid glob
 * (common/glob.h), reported at its place as path.key[i] otherwise. */
void tnd_config_cross_check(tnd_yw *w, tnd_config *cfg,
                            const yaml_node_t *root);
void tnd_config_check_globs(tnd_yw *w, const char *path, const yaml_node_t *map,
                            const char *key);

#endif
