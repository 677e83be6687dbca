/* tnd_pid_wait - wait for child processes to end, without polling on a
 * timer.
 *
 * A pidfd (Linux 5.3) becomes readable when its process exits, so a
 * wait for "any of these, or the deadline" is one poll(). Where pidfds
 * are missing (an older kernel, seccomp, valgrind), the wait looks with
 * waitid(WNOWAIT) between short naps, which is correct, only slower.
 * Nothing is reaped here: the caller collects the status as before,
 * when this says to look. */
#ifndef TND_PIDWAIT_H
#define TND_PIDWAIT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* A close-on-exec pidfd for pid, or -1 (errno set) when the kernel has
 * none or the process is gone. */
int tnd_pidfd_open(pid_t pid);

/* Wait until one of the n processes (children of ours, or adopted) has
 * exited, or until deadline (a tnd_now_ms() value). Returns 1 when one
 * may have exited (look with waitpid/waitid), 0 at the deadline. */
int tnd_pid_wait_any(const pid_t *pids, size_t n, int64_t deadline);

#endif
