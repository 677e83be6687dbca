/* tnd_ptree - counting processes in /proc: those below one process, and
 * those of one user.
 *
 * The skill runner's fallback for its process limit when no cgroup can
 * be had (skills/skill.c): RLIMIT_NPROC counts every process of the
 * user, so the limit is set above the user's count at the start, and the
 * skill's own tree is counted while it runs. Counts are a snapshot of a
 * moving set: good for a limit with some room, not for accounting. */
#ifndef TND_PTREE_H
#define TND_PTREE_H

#include <sys/types.h>

/* Processes below pid (its children, theirs, ...), pid itself not
 * counted; the count stops once it passes cap (then cap + 1 is
 * returned). 0 when pid has none or is gone. */
long tnd_ptree_count_below(pid_t pid, long cap);

/* Processes whose owner (of their /proc entry) is uid. */
long tnd_ptree_count_user(uid_t uid);

#endif
