/* tnd_bwrap - bubblewrap on this host: which program runs the sandbox
 * (skills/sandbox.h), and whether it can make one here.
 *
 * bwrap can be missing, or refused the namespaces it needs (user
 * namespaces switched off, a container's seccomp profile, a /proc it may
 * not mount). Skills that want the sandbox then do not run at all: the
 * probe finds out once per process, with the same command line a skill
 * gets, and every sandboxed skill after it reports the same reason. */
#ifndef TND_BWRAP_H
#define TND_BWRAP_H

/* The fix people are told when the sandbox cannot be had. */
#define TND_BWRAP_FIX                                                     \
    "install bubblewrap (Debian: apt-get install bubblewrap) where user " \
    "namespaces are allowed, or run the skill unsandboxed with "          \
    "skills.NAME.sandbox: none in agents.yaml"

/* The bwrap to run: $TANDEM_BWRAP when it is set (a path, or a name
 * looked up on PATH), else "bwrap" on PATH. *out is a path (caller
 * frees). -1 with "bubblewrap (bwrap) is not installed: not found on
 * PATH" (or the path that is missing) when there is none. */
int tnd_bwrap_find(char **out);

/* Run program as the sandbox of a skill running `true` in an empty
 * directory: 0 when that works, else -1 with what bwrap said. Not
 * cached. */
int tnd_bwrap_probe(const char *program);

/* What a probe runs: argv (a sandbox's command line around `true`) in
 * dir, within 10 s. 0 when it exits 0; else -1 with *said the first
 * line it printed, or how it ended (caller frees); or -1 with *said NULL
 * and the error set when it could not start. */
int tnd_bwrap_try(const char *const *argv, const char *dir, char **said);

/* tnd_bwrap_find, then tnd_bwrap_probe, the first time it is called in
 * this process; every call returns that answer. 0 with the program in
 * *program (borrowed; valid until the process ends), or -1 with the
 * reason in tnd_error_last() (the caller adds the fix: TND_BWRAP_FIX).
 * Safe from any thread. */
int tnd_bwrap_check(const char **program);

#endif
