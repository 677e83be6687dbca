#!/usr/bin/env python3
"""bench/memory.py [SESSIONS [QUEUED]]: the memory tandem serve holds.

Issue 8's third benchmark, in two parts (bench/benchlib.py has the
workload).

1. PSS of the whole process tree (the server, its agents, the skills and
   whatever else runs under it) with SESSIONS (default 32) sessions at
   once: `tandem serve --max-sessions SESSIONS --pool SESSIONS`, the fake
   model at 50 ms so sessions overlap, 2 x SESSIONS tasks submitted at
   once; Pss of /proc/PID/smaps_rollup summed over every process of the
   tree, sampled every 20 ms during the batch (a child that shares its
   parent's address space between its clone and its exec is counted
   once, with its parent: bench/benchlib.py, pss_by_pid). Prints the peak, with the
   server's and the agents' shares at that moment. Target <= 64 MiB.
2. RSS of the server holding QUEUED (default 1000) tasks: `tandem serve
   --max-sessions 1 --queue-max QUEUED+8`, the model slow (2 s an
   answer) so the first task holds the only slot, QUEUED `tandem submit
   --detach`s (four at a time); VmRSS and VmHWM of the server once all
   are queued. Target <= 32 MiB.

Run from the top of the tree after `make all build/tests/fakellm`:
    python3 bench/memory.py 32 1000
QUEUED 0 skips the second part.
"""
import os
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as bl  # noqa: E402


def pss_peak(sessions):
    b = bl.Bench(50, "memory")
    try:
        warm = b.make_repos(sessions)
        repos = b.make_repos(2 * sessions)
        b.start_serve(sessions, pool=sessions)
        for p in [b.submit(r) for r in warm]:
            p.wait()
        time.sleep(0.5)  # the warm-up's last clean-up
        idle_pids = bl.tree(b.serve_pid)
        idle, _ = bl.pss_kib(idle_pids)
        procs = [b.submit(r) for r in repos]
        peak = (0, 0, 0, 0, "")
        while any(p.poll() is None for p in procs):
            by = bl.pss_by_pid(bl.tree(b.serve_pid))
            total, n = sum(by.values()), len(by)
            if total > peak[0]:
                # the shares from the same sample as the total
                names = {p: bl.comm(p) for p in by}
                server = by.get(b.serve_pid, 0)
                agents = sum(v for p, v in by.items()
                             if names[p].startswith("tandem-"))
                kinds = {}
                for k in names.values():
                    kinds[k] = kinds.get(k, 0) + 1
                peak = (total, n, server, agents, ", ".join(
                    "%d %s" % (v, k) for k, v in sorted(kinds.items())))
            time.sleep(0.02)
        fails = sum(1 for p in procs if p.wait() != 0)
        b.stop_serve()
        print("PSS of the tree, %d sessions at once (--pool %d), %d tasks, "
              "%d failed (%s):" % (sessions, sessions, len(repos), fails,
                                   bl.load()))
        print("  idle after warm-up: %.1f MiB in %d processes" %
              (idle / 1024.0, len(idle_pids)))
        print("  peak: %.1f MiB in %d processes (server %.1f MiB, agents "
              "%.1f MiB, the rest %.1f MiB)" % (
                  peak[0] / 1024.0, peak[1], peak[2] / 1024.0,
                  peak[3] / 1024.0, (peak[0] - peak[2] - peak[3]) / 1024.0))
        print("  processes at the peak: %s" % peak[4])
    finally:
        b.close()


def queued_rss(queued):
    b = bl.Bench(2000, "memory-queue")
    try:
        repos = b.make_repos(8)
        b.start_serve(1, pool=1, queue_max=queued + 8)
        base = bl.rss_kib(b.serve_pid)
        pending = list(range(queued + 1))
        lock = threading.Lock()
        fails = []

        def worker():
            while True:
                with lock:
                    if not pending:
                        return
                    i = pending.pop()
                p = b.submit(repos[i % len(repos)], "--detach")
                err = p.stderr.read().decode(errors="replace")
                if p.wait() != 0:
                    with lock:
                        fails.append(err[-300:])

        t0 = time.monotonic()
        threads = [threading.Thread(target=worker) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        t1 = time.monotonic()
        status = subprocess.run(
            [bl.TANDEM, "submit", "--status"], env=b.env,
            capture_output=True, text=True).stdout.splitlines()[:1]
        rss = bl.rss_kib(b.serve_pid)
        with open("/proc/%d/status" % b.serve_pid) as f:
            hwm = [int(ln.split()[1]) for ln in f
                   if ln.startswith("VmHWM:")][0]
        print("RSS of the server with %d tasks queued (%d submitted in "
              "%.1f s, %d failed%s; %s):" % (
                  queued, queued + 1, t1 - t0, len(fails),
                  (": " + fails[0].strip()) if fails else "", bl.load()))
        print("  status: %s" % (status[0] if status else "?"))
        print("  VmRSS %.1f MiB (%.1f MiB before the first task), VmHWM "
              "%.1f MiB" % (rss / 1024.0, base / 1024.0, hwm / 1024.0))
        os.kill(b.serve_pid, 15)
        os.kill(b.serve_pid, 15)  # the second stops the running one at once
    finally:
        b.close()


def main():
    sessions = int(sys.argv[1]) if len(sys.argv) > 1 else 32
    queued = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
    pss_peak(sessions)
    if queued > 0:
        queued_rss(queued)


if __name__ == "__main__":
    main()
