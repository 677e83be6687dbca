/* tnd_ptree - counting tasks (processes and their threads) in /proc:
 * those below one process, and those of one user.
 *
 * The skill runner's fallback for its process limit when no cgroup can
 * be had (skills/skill.c): RLIMIT_NPROC counts every task of the user,
 * so the limit is set above the user's count at the start, and the
 * skill's own tree is counted while it runs. Threads count as a pids
 * cgroup and RLIMIT_NPROC count them: each is a task of the kernel's,
 * and a process of 2,000 threads must not pass a limit of 64. Counts
 * are a snapshot of a moving set: good for a limit with some room, not
 * for accounting. */
#ifndef TND_PTREE_H
#define TND_PTREE_H

#include <sys/types.h>

/* The threads of the processes below pid (its children, theirs, ...),
 * pid itself not counted; the count stops once it passes cap (then
 * cap + 1 is returned). 0 when pid has none or is gone. */
long tnd_ptree_count_below(pid_t pid, long cap);

/* The threads of the processes whose owner (of their /proc entry) is
 * uid. */
long tnd_ptree_count_user(uid_t uid);

#endif
