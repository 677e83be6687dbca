/* Waiting for processes to end (see pidwait.h). */
#include "common/pidwait.h"

#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <string.h>
#include <sys/wait.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "common/clock.h"
#include "common/xalloc.h"

/* The nap between looks where pidfds are missing. */
#define NAP_MS 5

int tnd_pidfd_open(pid_t pid)
{
#ifdef SYS_pidfd_open
    return (int)syscall(SYS_pidfd_open, pid, 0); /* close-on-exec */
#else
    (void)pid;
    errno = ENOSYS;
    return -1;
#endif
}

/* Whether one of the processes has exited (or is not ours to ask
 * about, so the caller should look), without reaping it. */
static bool any_exited(const pid_t *pids, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        siginfo_t info;
        memset(&info, 0, sizeof(info));
        if (waitid(P_PID, (id_t)pids[i], &info, WEXITED | WNOHANG | WNOWAIT) <
            0)
            return errno != EINTR;
        if (info.si_pid == pids[i])
            return true;
    }
    return false;
}

/* Without pidfds: look, nap, look again, until the deadline. */
static int nap_until(const pid_t *pids, size_t n, int64_t deadline)
{
    for (;;) {
        int64_t left = deadline - tnd_now_ms();
        struct timespec ts;
        if (any_exited(pids, n))
            return 1;
        if (left <= 0)
            return 0;
        if (left > NAP_MS)
            left = NAP_MS;
        ts.tv_sec = 0;
        ts.tv_nsec = (long)left * 1000000L;
        nanosleep(&ts, NULL);
    }
}

int tnd_pid_wait_any(const pid_t *pids, size_t n, int64_t deadline)
{
    struct pollfd *pfd;
    int64_t left;
    size_t opened = 0;
    int rc = 1;

    if (n == 0)
        return 1;
    pfd = tnd_xcalloc(n, sizeof(*pfd));
    for (size_t i = 0; i < n; i++) {
        int fd = tnd_pidfd_open(pids[i]);
        if (fd < 0) {
            /* ESRCH: gone already, so there is something to look at */
            rc = errno == ESRCH ? 1 : nap_until(pids, n, deadline);
            goto out;
        }
        pfd[opened].fd = fd;
        pfd[opened].events = POLLIN;
        opened++;
    }
    for (;;) {
        int got;
        left = deadline - tnd_now_ms();
        if (left <= 0) {
            rc = 0;
            break;
        }
        got = poll(pfd, (nfds_t)opened, left > 60000 ? 60000 : (int)left);
        if (got > 0)
            break;
        if (got < 0 && errno != EINTR) {
            rc = nap_until(pids, n, deadline);
            break;
        }
    }
out:
    for (size_t i = 0; i < opened; i++)
        close(pfd[i].fd);
    free(pfd);
    return rc;
}
