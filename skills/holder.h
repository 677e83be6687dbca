/* tnd_holder - the reviewer's running sandbox, from which each skill's
 * own sandbox is made, instead of by a bubblewrap start per skill.
 *
 * Starting bwrap for a skill costs ~5 ms of CPU (new namespaces, ~17
 * mounts each reading the whole mount table), ten times the skill `true`
 * itself. A holder is the part every skill's sandbox shares, made once
 * per reviewer process: bwrap with the system's directories as a skill
 * has them and, instead of one workspace, the roots (the directories
 * where this reviewer's workspaces are: its --runtime directory and its
 * blob cache) bound writable; its command only waits (`cat` reading a
 * pipe whose write end the holder keeps). A skill then runs as
 * `tandem-sandbox-enter PID START ... --workspace DIR -- PROGRAM ARGS`
 * (skills/enter_main.c), which joins the holder's user and mount
 * namespaces and makes the rest anew for that skill alone: mount, pid,
 * ipc, uts, cgroup and network namespaces, an empty tmpfs over each root
 * with only its workspace bound back, fresh /tmp, /var/tmp, $HOME,
 * $TMPDIR, /dev/shm and /dev/pts, and an init whose end kills whatever
 * the skill left running. So skills share nothing through the holder:
 * not the ones of an audit, and not those of two tasks a reviewer's
 * threads serve at once (ARCHITECTURE.md, "One sandbox per reviewer").
 *
 * The holder is started at the first skill that needs it, and again
 * after it ended; it does not die with that skill's thread: it ends when
 * its pipe closes, at tnd_holder_destroy or when the reviewer dies. A
 * skill whose workspace is not beneath a root, or that runs while there
 * is no holder to be had, starts bwrap of its own as before. */
#ifndef TND_HOLDER_H
#define TND_HOLDER_H

#include <stdbool.h>
#include <stddef.h>

#include "skills/sandbox.h"

typedef struct tnd_holder tnd_holder;

/* A holder for workspaces beneath roots (NULL-terminated; each made
 * absolute and symlink-free; one that is not a directory, or that
 * tnd_sandbox_root_ok refuses, is left out with a warning); envp is the
 * environment bwrap gets (NULL: this process's; kept, not copied).
 * Nothing is started yet. Never NULL. */
tnd_holder *tnd_holder_new(const char *const *roots, char *const *envp);

/* Stop the holder, if one runs: close its pipe, wait for bwrap (2 s at
 * most, then SIGKILL) and reap it. Skills already entered are not
 * affected. Sets *self_p to NULL; safe on NULL. */
void tnd_holder_destroy(tnd_holder **self_p);

/* One entry into a holder: which holder it was (its generation), and
 * the nonce only the enter program's own failure lines carry, which the
 * command it runs never sees (tnd_holder_failed). */
#define TND_HOLDER_NONCE_LEN 32
typedef struct tnd_holder_entry {
    unsigned generation;
    char nonce[TND_HOLDER_NONCE_LEN + 1];
} tnd_holder_entry;

/* The command line that runs spec's command (spec->argv[0] absolute, as
 * tnd_sandbox_resolve gives it) in a sandbox of its own made from the
 * holder, starting the holder when none runs; *entry says which holder
 * and the nonce, for what follows. NULL when the skill is to start
 * bwrap of its own: self NULL, the workspace not beneath a root, no
 * enter program (told once), or no holder to be had (told). Caller
 * frees with tnd_str_list_free. Safe from any thread. */
char **tnd_holder_argv(tnd_holder *self, const tnd_sandbox_spec *spec,
                       tnd_holder_entry *entry);

/* The environment the enter program runs with: a copy of envp (NULL:
 * this process's) with entry's nonce added. Caller frees with
 * tnd_str_list_free. */
char **tnd_holder_envp(const tnd_holder_entry *entry, char *const *envp);

/* Whether a run of entry ended by the enter program's own failure: its
 * output (*len bytes) starts "tandem-sandbox-enter: NONCE: " with entry's
 * nonce, which no command can know, and it exited with code. If so,
 * "NONCE: " is taken out of output, and *len shortened to match, so the
 * output reads as the program's own message. 125 means the command never
 * started (the holder is gone, or the sandbox could not be made); 126 and
 * 127 that it could not be executed. */
bool tnd_holder_failed(const tnd_holder_entry *entry, char *output, size_t *len,
                       int code);

/* The enter program's exit code when the command never started. */
#define TND_HOLDER_NOT_ENTERED 125

/* An entry failed before its command started, for why: its holder is
 * stopped (if it still runs) and the next skill starts another. After
 * TND_HOLDER_TRIES holders in a row fail so, without one entry that
 * worked, skills start bwrap of their own for the rest of the process
 * (told once, with why). */
void tnd_holder_refused(tnd_holder *self, const tnd_holder_entry *entry,
                        const char *why);

#define TND_HOLDER_TRIES 2

/* An entry ran its command: the count of holders refused in a row
 * starts again. */
void tnd_holder_entered(tnd_holder *self, const tnd_holder_entry *entry);

#endif
