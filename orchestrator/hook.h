/* tnd_hook - tandem's git pre-commit hook: its text, telling it from a
 * hook another program wrote, where git looks for hooks (core.hooksPath
 * included), and writing or removing it without touching anyone else's.
 *
 * tandem's hook is a shell script that runs `tandem review --staged` on
 * what the commit takes. It carries a marker line (TND_HOOK_MARK); a
 * pre-commit file without it is someone else's, and is replaced only when
 * the caller says so and never removed. */
#ifndef TND_HOOK_H
#define TND_HOOK_H

#include <stdbool.h>

/* The line that makes a pre-commit hook tandem's. */
#define TND_HOOK_MARK "# tandem-hook: written by 'tandem hook install'"

/* What a hooks directory holds under the name pre-commit. */
typedef enum tnd_hook_state {
    TND_HOOK_NONE = 0,  /* no file */
    TND_HOOK_TANDEM,    /* tandem's hook (it has the marker) */
    TND_HOOK_FOREIGN,   /* another hook: a person's, or another tool's */
    TND_HOOK_FRAMEWORK, /* the pre-commit framework's (pre-commit.com) */
} tnd_hook_state;

/* The hook script: review the staged changes, pass a commit with none,
 * and a review that cannot be done fails the commit (exit 4) or, with
 * on_error_pass, lets it through with a warning. Caller frees. */
char *tnd_hook_text(bool on_error_pass);

/* Whose hook text is: TND_HOOK_TANDEM, FRAMEWORK or FOREIGN. */
tnd_hook_state tnd_hook_state_of_text(const char *text);

/* Where git looks for the hooks of the repository (or a directory in its
 * work tree) repo: core.hooksPath when set, else GIT_DIR/hooks; absolute.
 * 0 with *out (caller frees), or TND_ECONFIG when repo is not in a git
 * repository, or -1. */
int tnd_hook_dir(char **out, const char *repo);

/* Whether dir, repo's hooks directory, lies outside the repository (its
 * git directory and its work tree): a core.hooksPath others share (a
 * global one), where a hook runs for every repository that uses it. */
bool tnd_hook_shared(const char *repo, const char *dir);

/* What dir/pre-commit is. 0 with *out, or -1 when it cannot be read. */
int tnd_hook_read(tnd_hook_state *out, const char *dir);

/* Write text as dir/pre-commit (made executable; dir is made when
 * missing). A hook that is not tandem's is replaced only with force;
 * otherwise TND_ECONFIG with an error naming it and the way out. *was
 * says what was there. 0, TND_ECONFIG, or -1. */
int tnd_hook_install(tnd_hook_state *was, const char *dir, const char *text,
                     bool force);

/* Remove dir/pre-commit when it is tandem's; a hook that is not is left
 * alone. *was says what was there (TND_HOOK_TANDEM: removed). 0, or -1
 * when it cannot be read or removed. */
int tnd_hook_uninstall(tnd_hook_state *was, const char *dir);

#endif
