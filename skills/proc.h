/* tnd_proc - run a program with a deadline, captured output and a clean
 * environment.
 *
 * Used by the reviewer's skills (build, test, lint...) and by the
 * `command` LLM provider. Nothing here goes through a shell: the caller
 * gives argv. The child gets its own process group, so a timeout or a
 * cancel kills everything it started (TERM, then KILL after a grace
 * period, to the group and to the child itself, which may have left
 * it), and no process of the group outlives tnd_proc_run(). The
 * program also dies (SIGKILL, PR_SET_PDEATHSIG) when the thread that
 * called tnd_proc_run() ends, which, as that thread waits in the call
 * until the program is reaped, happens only when the whole process dies:
 * an agent killed outright takes its skill with it. What the program
 * started itself is orphaned then: see skills/reap.h for its end. */
#ifndef TND_PROC_H
#define TND_PROC_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "skills/capture.h"

/* Most bytes of lines naming a failure (tnd_toolline_is_failure()) that
 * a stream keeps from its omitted middle, on top of output_cap; each line
 * is cut to 1 KiB. Lines beyond are counted in the marker (capture.h). */
#define TND_PROC_MIDDLE_MAX TND_CAPTURE_MIDDLE_MAX

typedef struct tnd_proc_spec {
    const char *const *argv; /* argv[0] is looked up on the PATH of the
                                child's environment unless it contains
                                a '/'; required */
    const char *cwd;         /* working directory; NULL = inherit */
    const char *const *envp; /* complete environment; NULL = inherit */
    const char *input;       /* bytes written to stdin, then closed;
                                NULL = stdin is /dev/null */
    size_t input_len;
    long timeout_ms;          /* <= 0: no deadline */
    long kill_grace_ms;       /* TERM to KILL delay; <= 0: 2000 */
    size_t output_cap;        /* bytes kept per stream; 0: 64 KiB. When a
                                 stream writes more, the first and last
                                 halves are kept with a marker line
                                 between them, followed by the lines of
                                 the omitted part that name a failure
                                 (see TND_PROC_MIDDLE_MAX) */
    size_t output_stop;       /* > 0: stdout past this many bytes stops
                                 the program at once (status
                                 TND_PROC_STOPPED): a model command that
                                 floods it ran to its deadline; 0: none */
    int merge_stderr;         /* 1: stderr goes into output, interleaved in
                                 the order written; 0: kept apart */
    const atomic_int *cancel; /* when non-NULL and it becomes non-zero,
                                 the process is stopped as on a timeout */
    /* Resource limits applied in the child; 0 = inherit. */
    long rlimit_cpu_s;
    size_t rlimit_as_bytes;
    size_t rlimit_fsize_bytes;
    long rlimit_nproc;
    int cgroup_join_fd; /* > 0: a cgroup's open join file the child joins
                            before anything else (skills/cgroup.h), so
                            everything it starts is in that cgroup; 0:
                            none */
    int new_keyring;    /* 1: the child joins a new, empty session keyring
                           before anything runs, so it possesses none of
                           the caller's keys (the session keyring is
                           inherited through every namespace; a sandbox
                           must not read what a login or kinit left
                           there); 0: it keeps the caller's */
    /* When set, called about every 50 ms while the program runs, with
     * its pid (also its process group); a non-zero return stops it at
     * once (SIGKILL to the group), with status TND_PROC_STOPPED. */
    int (*watch)(int pid, void *payload);
    void *watch_payload;
} tnd_proc_spec;

typedef enum tnd_proc_status {
    TND_PROC_EXITED = 0, /* exited; see exit_code */
    TND_PROC_SIGNALED,   /* killed by a signal it did not ask for */
    TND_PROC_TIMEOUT,    /* the deadline passed and we killed it */
    TND_PROC_CANCELLED,  /* *cancel became non-zero and we killed it */
    TND_PROC_STOPPED,    /* spec->watch said so and we killed it */
} tnd_proc_status;

typedef struct tnd_proc_result {
    tnd_proc_status status;
    int exit_code;    /* valid when status == TND_PROC_EXITED (and
                         -1 when the child did not exit itself) */
    int signal;       /* the terminating signal, when there was one */
    long duration_ms; /* wall time from spawn to reap */
    char *output;     /* stdout (plus stderr when merged), trimmed to
                         the cap as described above; NUL-terminated;
                         never NULL after a successful run */
    size_t output_len;
    size_t output_total; /* bytes the stream really produced */
    char *errors;        /* stderr when not merged (else ""); same rules */
    size_t errors_len;
    size_t errors_total;
} tnd_proc_result;

/* Run spec to completion. Returns 0 when the program ran, whatever its
 * exit status (look at out->status), and -1 when it could not be started
 * at all: the error names the program and the reason ("cannot run
 * 'mkae': No such file or directory"). out is always safe to pass to
 * tnd_proc_result_free(). */
int tnd_proc_run(tnd_proc_result *out, const tnd_proc_spec *spec);

/* Free the buffers of a result; safe on a zeroed or freed result. */
void tnd_proc_result_free(tnd_proc_result *result);

/* One line describing how the run ended, for people: "exit 0",
 * "exit 2", "killed by signal 9 (Killed)", "timed out after 30.0s",
 * "cancelled", "stopped". Borrowed from a static buffer of this
 * thread. */
const char *tnd_proc_describe(const tnd_proc_result *result);

/* The programs tnd_proc_run() runs, for any thread of the process, are
 * its children too; a sweep for leftovers (tnd_reap_strays) must spare
 * them. While the lock is held no such program starts, and
 * tnd_proc_is_running (called with the lock held) says whether pid is
 * one that has not been reaped yet. */
void tnd_proc_children_lock(void);
void tnd_proc_children_unlock(void);
bool tnd_proc_is_running(pid_t pid);

#endif
