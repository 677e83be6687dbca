#!/usr/bin/env python3
"""bench/throughput.py [TASKS [LATENCY_MS [C ...]]]: tasks per second of
tandem serve against independent tandem runs, when the model is slow.

Issue 8's second benchmark. TASKS tasks (default 64) of 2 iterations
each (bench/benchlib.py: 4 model calls a task), the fake model waiting
LATENCY_MS (default 50) before each answer, for each concurrency C
(default 8 16 32):

- serve: one `tandem serve --max-sessions C --pool C` (C sets of resident
  agents: an agent does one request at a time, so C sessions waiting on
  the model need C of each), warmed up with C tasks, then TASKS
  `tandem submit`s started at once; wall time from the first start to
  the last exit;
- runs: the same TASKS as independent `tandem run`s, C at a time.

(BENCH_RUNS=0 leaves the runs out.) Both against the ideal, ceil(TASKS / C) x 2 iterations x 2 calls x
LATENCY_MS: the time the model alone takes. Target: serve <= 2x ideal
at C = 32.

Run from the top of the tree after `make all build/tests/fakellm`:
    python3 bench/throughput.py 64 50 8 16 32
"""
import math
import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as bl  # noqa: E402


def wait_all(procs):
    """Wait for every process; returns the number that failed, and the
    first failure's stderr."""
    fails, first = 0, ""
    for p in procs:
        err = p.stderr.read().decode(errors="replace")
        if p.wait() != 0:
            fails += 1
            first = first or ("exit %d: %s" % (p.returncode, err[-500:]))
    return fails, first


def serve_batch(b, n, c):
    warm = b.make_repos(c)
    repos = b.make_repos(n)
    b.start_serve(c, pool=c)
    wait_all([b.submit(r) for r in warm])
    bl.quiet()
    t0 = time.monotonic()
    fails, first = wait_all([b.submit(r) for r in repos])
    wall = time.monotonic() - t0
    b.stop_serve()
    return wall, bl.iterations(repos), fails, first


def runs_batch(b, n, c):
    repos = b.make_repos(n)
    pending = list(repos)
    lock = threading.Lock()
    result = {"fails": 0, "first": ""}

    def worker():
        while True:
            with lock:
                if not pending:
                    return
                r = pending.pop(0)
            p = b.run(r)
            err = p.stderr.read().decode(errors="replace")
            if p.wait() != 0:
                with lock:
                    result["fails"] += 1
                    result["first"] = result["first"] or err[-500:]

    bl.quiet()
    t0 = time.monotonic()
    threads = [threading.Thread(target=worker) for _ in range(c)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.monotonic() - t0
    return wall, bl.iterations(repos), result["fails"], result["first"]


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 64
    lat = int(sys.argv[2]) if len(sys.argv) > 2 else 50
    cs = [int(x) for x in sys.argv[3:]] or [8, 16, 32]
    print("%d tasks of 2 iterations, model latency %d ms (%s)" %
          (n, lat, bl.load()))
    print("%-4s %-6s %9s %9s %7s %6s  %s" % (
        "C", "how", "wall ms", "ideal ms", "/ideal", "iter", "failed"))
    for c in cs:
        ideal = math.ceil(n / float(c)) * 2 * 2 * lat
        b = bl.Bench(lat, "throughput")
        try:
            hows = [("serve", serve_batch), ("runs", runs_batch)]
            if os.environ.get("BENCH_RUNS") == "0":
                hows = hows[:1]
            for how, fn in hows:
                wall, it, fails, first = fn(b, n, c)
                print("%-4d %-6s %9.0f %9d %7.2f %6d  %d%s" % (
                    c, how, bl.ms(wall), ideal, bl.ms(wall) / ideal, it,
                    fails, (" (first: %s)" % first.strip()) if first else ""))
                sys.stdout.flush()
        finally:
            b.close()


if __name__ == "__main__":
    main()
