/* tnd_holder - one running sandbox that an audit's skills enter, instead
 * of each starting bubblewrap of its own.
 *
 * Starting bwrap for every skill costs ~4 ms of CPU (new namespaces,
 * ~17 mounts each reading the whole mount table), ten times the skill
 * `true` itself. A holder is that sandbox made once per audit and shape
 * (today the shape is the skill's network flag; the workspace, $HOME and
 * $TMPDIR are the audit's): bwrap with exactly a skill's options
 * (skills/sandbox.h) plus --info-fd, whose command only waits: `cat`
 * reading a pipe whose write end the holder keeps. Each skill then runs
 * as `tandem-sandbox-enter PID START DIR -- PROGRAM ARGS...` (see
 * skills/enter_main.c), which joins the holder's namespaces, drops every
 * capability and runs the command there, under skills/proc.c as bwrap
 * would be.
 *
 * The reviewer starts one only for a shape three skills or more need:
 * for fewer, a bwrap each costs as much CPU and holds less memory.
 *
 * What the skills of one audit share then: the sandbox's /tmp, /var/tmp,
 * $HOME, $TMPDIR and pid namespace. They already share the writable
 * workspace and run the same model-written code, so this is no new trust
 * boundary; tasks, and audits, never share a holder. A process a skill
 * leaves behind is killed at that skill's end through its pids cgroup
 * (skills/cgroup.h) where there is one; where there is none, through its
 * process group, and at the latest when the holder stops (the end of its
 * pid namespace kills everything in it).
 *
 * The holder's bwrap dies with the thread that started it
 * (--die-with-parent): start and stop a holder on the thread that waits
 * for the audit's skills, never on a skill's own thread. */
#ifndef TND_HOLDER_H
#define TND_HOLDER_H

#include <stdbool.h>

typedef struct tnd_holder tnd_holder;

/* The sandbox for skills running in workspace (absolute) with $HOME home
 * and $TMPDIR tmpdir (either NULL), sharing the host's network or not;
 * envp is the environment bwrap gets (NULL: this process's). bwrap is
 * the program (skills/bwrap.h). NULL with the error set when it cannot
 * be started. */
tnd_holder *tnd_holder_start(const char *bwrap, const char *workspace,
                             const char *home, const char *tmpdir, bool network,
                             char *const *envp);

/* The command line that runs argv (argv[0] absolute, as
 * tnd_sandbox_resolve gives it) in the holder with cwd dir: enter, the
 * holder's pid and start time, dir, "--", argv. Caller frees with
 * tnd_str_list_free. Safe from any thread while the holder runs. */
char **tnd_holder_argv(const tnd_holder *self, const char *enter,
                       const char *dir, const char *const *argv);

/* Whether argv's run ended by the enter program's own failure: it
 * printed output starting "tandem-sandbox-enter: " and exited with
 * code. 125 means the command never started (the holder is gone, or
 * could not be joined); 126 and 127 that it could not be executed. */
bool tnd_holder_failed(const char *output, int code);

/* The enter program's exit code when the command never started. */
#define TND_HOLDER_NOT_ENTERED 125

/* End the holder: close its pipe (its command ends, and with it the pid
 * namespace and everything in it), wait for bwrap (2 s at most, then
 * SIGKILL) and reap it. Sets *self_p to NULL; safe on NULL. */
void tnd_holder_stop(tnd_holder **self_p);

/* The enter program: $TANDEM_SANDBOX_ENTER when set, else
 * tandem-sandbox-enter beside this process's executable. The first call
 * in the process also tries it: a holder started in an empty directory
 * and `true` entered into it. 0 with the program in *enter (borrowed,
 * valid until the process ends), or -1 with the reason (logged once, at
 * the first call): skills then start a bwrap each. Safe from any
 * thread. */
int tnd_holder_check(const char **enter, const char *bwrap);

/* One audit's holders, one per shape (index: the network flag). */
typedef struct tnd_holders {
    tnd_holder *shape[2];
    const char *enter; /* the program; NULL: no holder */
} tnd_holders;

/* Start a holder for each shape in need[] (need[1]: a skill wants the
 * network) for workspace, with $HOME and $TMPDIR from envp. One that
 * cannot be had is logged and left NULL: its skills start bwrap each.
 * Nothing is started when tnd_holder_check or tnd_bwrap_check fails. */
void tnd_holders_start(tnd_holders *self, const bool need[2],
                       const char *workspace, char *const *envp);

/* Stop every holder; the struct is zeroed. */
void tnd_holders_stop(tnd_holders *self);

#endif
