/* tnd_reap - end what a dead agent's programs left running.
 *
 * A program run with tnd_proc_run() dies with the agent running it
 * (PR_SET_PDEATHSIG), but what the program started does not: a killed
 * reviewer's `make test` leaves its compilers, its test programs and a
 * test's background server orphaned, still writing in the workspace. A
 * process that calls tnd_reap_adopt() becomes the parent of every
 * descendant of its that is orphaned (PR_SET_CHILD_SUBREAPER), instead
 * of init, whatever process group or session the orphan moved to; and
 * tnd_reap_strays() kills and reaps its children that are not its own
 * agents. tandem's supervisor does both, so what an agent left is dead
 * before its request is handed out again (see orchestrator/supervisor.h).
 *
 * Why children, and not process groups written down somewhere: a process
 * that left its group (setsid, a daemon) is not found that way, and a
 * recorded id may name someone else's process once the group is gone. A
 * child's pid is not reused until its parent reaps it, and its process
 * group lives as long as it does, so nothing here can hit a stranger. Why
 * not a cgroup: creating one needs privileges or a delegated subtree,
 * which a plain login on Debian does not give. */
#ifndef TND_REAP_H
#define TND_REAP_H

#include <stddef.h>
#include <sys/types.h>

/* Make the calling process the parent of its orphaned descendants (not
 * inherited by its children). 0, or -1 with the error set. */
int tnd_reap_adopt(void);

/* Kill with SIGKILL and reap every child of the calling process whose
 * pid is not in keep[0..nkeep) (a zombie counts), and the children each
 * one leaves orphaned in turn, until none is left: each one's process
 * group is killed with it, unless the caller or a kept child is in that
 * group. *out gets the number reaped. Returns 0 when none is left,
 * TND_ETIMEOUT when some were still alive after wait_ms (the error names
 * them; calling again goes on), -1 when /proc cannot be read (error set).
 * Only for a process that waits for no child of its own outside keep at
 * the time: such a child would be killed too. */
int tnd_reap_strays(size_t *out, const pid_t *keep, size_t nkeep, long wait_ms);

/* Reap the children of the calling process that have exited already
 * (zombies) and are neither in keep nor a program tnd_proc_run waits
 * for: what adopted orphans leave, such as the helper a sandboxed
 * skill's bwrap leaves when it exits. Kills nothing. *out gets the
 * number reaped. -1 when /proc cannot be read (error set). */
int tnd_reap_zombies(size_t *out, const pid_t *keep, size_t nkeep);

#endif
