/* tandem-sandbox-enter's insides, shared by enter_main.c (the program:
 * its options, joining the holder, the init and the command) and
 * enter_sandbox.c (the skill's own namespaces and mounts). Nothing else
 * includes this: the program is libc only and not in libtandem. */
#ifndef TND_ENTER_INT_H
#define TND_ENTER_INT_H

/* Exit codes of its own (see enter_main.c's top). */
#define EXIT_NOT_ENTERED 125
#define EXIT_NOT_EXEC    126
#define EXIT_NOT_FOUND   127

/* Options at most (hides, covers and directories). */
#define MAX_STEPS 32

typedef enum step_kind {
    STEP_DIR,   /* make the directory path */
    STEP_COVER, /* a tmpfs over path */
    STEP_HIDE,  /* a tmpfs over path, read-only once the workspace is in */
} step_kind;

typedef struct step {
    step_kind kind;
    const char *path;
} step;

/* The command line, parsed (enter_main.c). */
typedef struct request {
    long pid;
    unsigned long long start;
    step steps[MAX_STEPS];
    int nsteps;
    int network;
    unsigned long long size; /* of every tmpfs, bytes */
    const char *workspace;
    char **argv; /* the command */
} request;

/* Tell one failure of its own on stderr (the program's prefix, the
 * nonce, fmt) and exit with code (enter_main.c). */
_Noreturn void tnd_enter_die(int code, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Steps 2 and 3 of enter_main.c's top, in the holder's namespaces: the
 * skill's own mount, pid, ipc, uts and cgroup namespaces (and network,
 * without r->network, its loopback up), r's tmpfs and directories, the
 * workspace bound back as the cwd, and what the skill may not write
 * made read-only. Dies (tnd_enter_die) when any of it cannot be done
 * (enter_sandbox.c). */
void tnd_enter_make_sandbox(const request *r);

#endif
