/* tnd_cgroup - a pids cgroup for one skill run: the kernel's count of
 * exactly that run's processes and threads, and its limit.
 *
 * RLIMIT_NPROC counts all of a user's processes, and not root's at all,
 * so it cannot say "this skill may have 512 processes". A cgroup with
 * the pids controller can: everything the skill starts is in it, a fork
 * past pids.max fails, pids.events counts the refusals, and the whole
 * group can be killed. It is made below this process's own cgroup (cgroup
 * v2 when the pids controller is enabled there or can be, else the v1
 * pids hierarchy), which needs write access there: root has it, and so
 * does a user whose service manager delegated a subtree. Elsewhere
 * tnd_cgroup_new says why not, and the caller falls back (skills/skill.c).
 * Where (or why not) is found once per process. */
#ifndef TND_CGROUP_H
#define TND_CGROUP_H

#include <stdbool.h>

typedef struct tnd_cgroup tnd_cgroup;

/* A new cgroup allowing max_tasks processes and threads at once. NULL
 * when none can be made here, with the reason in tnd_error_last(). Empty
 * cgroups a dead process of ours left behind are removed first. */
tnd_cgroup *tnd_cgroup_new(long max_tasks);

/* The file a process joins it by, open for writing (close-on-exec): a
 * process that writes "0" there joins it (tnd_proc_spec.cgroup_join_fd).
 * v1's tasks, which moves only the writing thread (a child just forked is
 * one thread) without the lock that makes cgroup.procs wait for an RCU
 * grace period: only for "0", the writer itself (a pid takes the lock
 * again); v2's cgroup.procs. Borrowed. */
int tnd_cgroup_join_fd(const tnd_cgroup *self);

/* Whether a fork in it has been refused for its limit. */
bool tnd_cgroup_refused(const tnd_cgroup *self);

/* SIGKILL every process in it. */
void tnd_cgroup_kill(tnd_cgroup *self);

/* Kill what is left, wait (a second at most) until it is empty, remove
 * it and free; sets *self_p to NULL. Safe on NULL. */
void tnd_cgroup_destroy(tnd_cgroup **self_p);

/* For tests only: read this process's cgroups from the file cgroup and
 * the mount table from mountinfo (their /proc/self formats) instead of
 * /proc/self's; NULL: /proc/self's. Forgets where cgroups were made, or
 * why they could not be, so the next tnd_cgroup_new finds out again. A
 * test rewrites its cgroup file to play this process moved to another
 * cgroup, whose old one is then gone. */
void tnd_cgroup_set_proc_files(const char *cgroup, const char *mountinfo);

#endif
