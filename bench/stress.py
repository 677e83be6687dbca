#!/usr/bin/env python3
"""bench/stress.py [BATCHES [SIZE [DEADLINE_S]]]: failures and hangs of
tandem serve under bursts of submissions.

Issue 8's fourth benchmark. One `tandem serve --max-sessions 32` with its
default pool (one set of agents per CPU), the fake model with no latency
(bench/benchlib.py: every task 2 iterations, approved). BATCHES batches
(default 15) of SIZE (default 64) `tandem submit`s started at once, one
to each of SIZE repositories (the same ones every batch, so sessions pile
up in them). Every submit must end within
DEADLINE_S (default 120) of its batch's start: one still running then is
a hang (killed, and counted). A failure is a submit that exits non-zero,
or a session that is not approved after 2 iterations on disk. Prints
each batch's wall time, failures and hangs, the totals, and the first
failure's message.

Run from the top of the tree after `make all build/tests/fakellm`:
    python3 bench/stress.py 15 64 120
"""
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as bl  # noqa: E402


def main():
    batches = int(sys.argv[1]) if len(sys.argv) > 1 else 15
    size = int(sys.argv[2]) if len(sys.argv) > 2 else 64
    deadline_s = float(sys.argv[3]) if len(sys.argv) > 3 else 120
    b = bl.Bench(0, "stress")
    fails = hangs = 0
    first = ""
    try:
        repos = b.make_repos(size)
        b.start_serve(32)
        print("%d batches of %d submissions, deadline %.0f s (%s)" %
              (batches, size, deadline_s, bl.load()))
        for k in range(batches):
            t0 = time.monotonic()
            procs = [b.submit(r) for r in repos]
            bf = bh = 0
            for p in procs:
                left = deadline_s - (time.monotonic() - t0)
                try:
                    p.wait(max(left, 0.01))
                except Exception:  # subprocess.TimeoutExpired
                    p.kill()
                    p.wait()
                    bh += 1
                    continue
                err = p.stderr.read().decode(errors="replace")
                if p.returncode != 0:
                    bf += 1
                    first = first or ("batch %d: exit %d: %s" % (
                        k + 1, p.returncode, err.strip()[-600:]))
            wall = time.monotonic() - t0
            print("batch %2d: %6.0f ms, %d failed, %d hung" %
                  (k + 1, bl.ms(wall), bf, bh))
            sys.stdout.flush()
            fails += bf
            hangs += bh
            if b.serve.poll() is not None:
                first = first or "tandem serve exited %d" % b.serve.returncode
                break
        b.stop_serve()
        bad = [r for r in bl.reports(repos)
               if r.get("status") != "approved" or r.get("iterations") != 2]
        print("total: %d submissions, %d failed, %d hung; %d sessions on "
              "disk, %d not approved after 2 iterations" % (
                  batches * size, fails, hangs, len(bl.reports(repos)),
                  len(bad)))
        if first:
            print("first failure: %s" % first)
        if bad:
            print("first session not approved: %s" %
                  {k: bad[0].get(k) for k in ("session", "status", "reason",
                                               "iterations")})
    finally:
        b.close()


if __name__ == "__main__":
    main()
