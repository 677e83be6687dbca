/* tnd_cmd_hook - `tandem hook install|uninstall`: tandem's git pre-commit
 * hook (orchestrator/hook.h) written into, or removed from, the hooks
 * directory git uses for a repository. */
#ifndef TND_HOOK_CMD_H
#define TND_HOOK_CMD_H

#include <stdio.h>

/* Run `tandem hook ...`; argv[0] is cmd, "hook". Returns a TND_EXIT_*
 * code: 0 done, 1 the hook cannot be read or written, 2 usage (another
 * program's hook in the way without --force, no git repository). */
int tnd_cmd_hook(const char *cmd, int argc, char **argv);

/* The help of `tandem hook` (for `tandem help hook`). */
void tnd_cmd_hook_usage(const char *cmd, FILE *to);

#endif
