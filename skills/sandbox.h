/* tnd_sandbox - the bubblewrap command line that runs one skill contained.
 *
 * A skill runs code a model wrote (the project's build and tests), so it
 * runs in new user, pid, ipc, uts and cgroup namespaces, and a network
 * namespace of its own unless the skill says network: true, with every
 * capability dropped, in a session of its own (entered: without a
 * controlling terminal), dying with the reviewer.
 * Its filesystem is built from an allowlist: the system's directories
 * (/usr, /bin, /sbin, /lib*, /etc) read-only, a fresh /dev and a /proc of
 * its own pid namespace (no other process is visible), private tmpfs on
 * /tmp, /var/tmp and /dev/shm, an empty private $TMPDIR and $HOME, and
 * the workspace, the one writable directory of the host, at its own
 * path; the root and /dev read-only. Every tmpfs it can write is
 * bounded (their pages are the host's memory, which no rlimit counts:
 * tnd_sandbox_tmpfs_bytes), and no user namespace can be made inside
 * (in one the command would have every capability again, and could mount
 * a tmpfs of its own).
 * Everything else (other homes, /root, /run, /var, /srv, the repository and its
 * .tandem/, tandem's runtime directory) is absent; /etc's secrets (shadow
 * files, ssh host keys, ssl private keys) are covered where this user could
 * read them (as root: always; elsewhere their permissions keep them unread),
 * and as root so is every entry of /etc that others may not read.
 *
 * A skill usually runs in a sandbox made from the reviewer's running
 * one (skills/holder.h) by the enter program rather than by a bwrap
 * start of its own; the guarantees above hold for it all the same, and
 * it shares no namespace, /tmp, $HOME or process with any other skill.
 *
 * Building the command line is pure given what the host's paths are, so
 * a test can give a host of its own (tnd_sandbox_host). Whether bwrap
 * works at all on this host is skills/bwrap.h's business. */
#ifndef TND_SANDBOX_H
#define TND_SANDBOX_H

#include <stdbool.h>
#include <stddef.h>

/* What a path on the host is, as tnd_sandbox_host's lookup tells. */
typedef enum tnd_sandbox_kind {
    TND_SANDBOX_PATH_ABSENT = 0,
    TND_SANDBOX_PATH_DIR,
    TND_SANDBOX_PATH_FILE,    /* any other non-symlink */
    TND_SANDBOX_PATH_SYMLINK, /* the target is given */
} tnd_sandbox_kind;

/* The host as the command line needs to know it. */
typedef struct tnd_sandbox_host {
    /* What path is, without following it when it is a symlink (then its
     * target, cut to size, goes to target). */
    tnd_sandbox_kind (*lookup)(const char *path, char *target, size_t size);
    /* Whether path (symlinks followed) is a file this user may execute. */
    bool (*executable)(const char *path);
    /* Whether the sandbox, run as this user, could read path (kind FILE)
     * or look inside it (kind DIR) were it not covered. */
    bool (*readable)(const char *path, tnd_sandbox_kind kind);
    /* The entries beneath dir that others may not read (regular files
     * without o+r, directories without o+x, not looked into) and the
     * sandbox could: on the real host, those of a walk as uid 0, and
     * none for another uid. NULL-terminated, sorted, caller frees with
     * tnd_str_list_free; NULL for none. The member NULL: none. */
    char **(*private_entries)(const char *dir);
} tnd_sandbox_host;

/* Bounds of the real host's private_entries: entries looked at, entries
 * returned, directory depth, milliseconds. Past one it stops (deeper
 * directories are passed over), returns what it found and logs a
 * warning once per process. */
#define TND_SANDBOX_SCAN_ENTRIES 20000
#define TND_SANDBOX_SCAN_FOUND   256
#define TND_SANDBOX_SCAN_DEPTH   16
#define TND_SANDBOX_SCAN_MS      200

/* The real host: lstat(2), readlink(2), access(2), and as root a walk of
 * the directory (no symlink followed). */
extern const tnd_sandbox_host tnd_sandbox_real_host;

typedef struct tnd_sandbox_spec {
    const char *bwrap;               /* the program to run; required */
    const char *workspace;           /* absolute; writable, the cwd */
    const char *const *argv;         /* the command; argv[0] as given by
                                        tnd_sandbox_resolve */
    const char *home;                /* $HOME the command sees, or NULL */
    const char *tmpdir;              /* $TMPDIR the command sees, or NULL */
    bool network;                    /* share the host's network */
    unsigned long long memory_bytes; /* the skill's limits.memory_mb,
                                        in bytes; 0: none */
    const tnd_sandbox_host *host;    /* NULL: tnd_sandbox_real_host */
} tnd_sandbox_spec;

/* The largest tmpfs of a sandbox, in MiB. */
#define TND_SANDBOX_TMPFS_MB 1024

/* The size in bytes of each tmpfs of the sandbox the spec makes (/tmp,
 * /var/tmp, /dev/shm, a private $HOME or $TMPDIR): the skill's memory
 * limit, or TND_SANDBOX_TMPFS_MB MiB when it has none or a larger one. */
unsigned long long tnd_sandbox_tmpfs_bytes(const tnd_sandbox_spec *spec);

/* The command line: bwrap, its options, "--", then the command. NULL-
 * terminated; caller frees with tnd_str_list_free(). */
char **tnd_sandbox_argv(const tnd_sandbox_spec *spec);

/* Whether path is dir or lies beneath it (both absolute, compared as
 * text). */
bool tnd_sandbox_under(const char *path, const char *dir);

/* Whether dir (absolute) may be a holder's root, a directory bound
 * writable into the reviewer's running sandbox (skills/holder.h): not
 * "/", no "." or ".." or "//", not a system directory, nor beneath one,
 * nor above one or above /dev, /proc, /tmp or /var/tmp, nor beneath /dev
 * or /proc. */
bool tnd_sandbox_root_ok(const char *dir);

/* The holder's command line: bwrap with the system's directories as a
 * skill has them, the resolver directory read-only when the host has
 * one, roots (NULL-terminated, each tnd_sandbox_root_ok) bound writable
 * at their place instead of a workspace, cwd "/", the sandbox's pids
 * written to info_fd (> 2), and argv. It does not die with the thread
 * that starts it: it ends when its command does. host NULL: the real
 * one. Caller frees with tnd_str_list_free(). */
char **tnd_sandbox_holder_argv(const char *bwrap, const char *const *roots,
                               int info_fd, const char *const *argv,
                               const tnd_sandbox_host *host);

/* The command line that runs spec's command in a sandbox made from the
 * holder whose first process is pid (start time start) by the enter
 * program (skills/enter_main.c): enter, pid, start, --size (each tmpfs's
 * bytes), [--network], a
 * --hide for each of roots (the holder's: an empty tmpfs, read-only
 * once the workspace is bound back, so nothing is written beside it), a
 * --cover for /tmp and /var/tmp, the
 * resolver directory without the network, $TMPDIR and $HOME made
 * private as a skill's own sandbox makes them (--dir or --cover),
 * --workspace, "--", the command. spec->bwrap is not used. Caller frees
 * with tnd_str_list_free(). */
char **tnd_sandbox_enter_argv(const tnd_sandbox_spec *spec, const char *enter,
                              long pid, unsigned long long start,
                              const char *const *roots);

/* Whether the command in the sandbox sees the host's path at the same
 * place (under a system directory that is bound and not covered, or
 * under the workspace). path is absolute. */
bool tnd_sandbox_shows(const char *path, const char *workspace,
                       const tnd_sandbox_host *host);

/* The program to run for prog, found as the sandbox will see it: with a
 * '/', itself (relative to the workspace); else the first entry of path
 * (a PATH value; NULL: "/bin:/usr/bin") that the sandbox shows and that
 * holds an executable prog. *out is absolute (caller frees). -1 when
 * there is none, the error naming prog and the reason ("cannot run
 * 'mkae': not found on PATH as the sandbox sees it (...)"). */
int tnd_sandbox_resolve(char **out, const char *prog, const char *path,
                        const char *workspace, const tnd_sandbox_host *host);

#endif
