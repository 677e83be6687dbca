#!/usr/bin/env python3
"""bench/instructions.py [TASKS]: the tandem serve process's own
instructions an iteration, counted by callgrind.

The overhead benchmark's workload (bench/benchlib.py: a fake model at
0 ms, the skills `true` and a grep that fails the first attempt, so every
task takes 2 iterations), one task at a time, with `tandem serve` run
under `valgrind --tool=callgrind --trace-children=no`: only the server
process is counted (its threads, user space), not its agents, skills or
git. The counters are zeroed after 2 warm-up tasks and dumped after
TASKS more (default 4). Instruction counts do not drift with a busy or
noisy machine as wall time and /proc's CPU ticks do, so two builds can
be compared a millisecond apart (BENCH_BIN=DIR for another build).

Run from the top of the tree after `make all build/tests/fakellm`:
    python3 bench/instructions.py 4
"""
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as bl  # noqa: E402


def control(b, *args):
    """callgrind_control on the server (it finds the process through
    the bench's TMPDIR)."""
    r = subprocess.run(["callgrind_control", *args, str(b.serve_pid)],
                       capture_output=True, text=True, env=b.env)
    if r.returncode != 0:
        sys.exit("callgrind_control %s: %s" % (" ".join(args), r.stderr))


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 4
    out = tempfile.mkdtemp(prefix="tandem-callgrind-")
    b = bl.Bench(0, "instructions")
    b.find_serve_pid = lambda: b.serve.pid  # valgrind runs it in place
    try:
        repos = b.make_repos(n + 2)
        b.start_serve(1, wrap=["valgrind", "--tool=callgrind",
                               "--trace-children=no",
                               "--callgrind-out-file=%s/cg.%%p" % out])
        for i, r in enumerate(repos):
            if i == 2:
                control(b, "-z")
            p = b.submit(r)
            p.wait()
            if p.returncode != 0:
                sys.exit("submit: exit %d: %s" %
                         (p.returncode, p.stderr.read().decode()))
        control(b, "--dump=batch")
        iters = bl.iterations(repos[2:])
        b.stop_serve(300)
    finally:
        b.close()
    total = None
    for name in os.listdir(out):
        if name.endswith(".1"):  # the dump, not the exit's
            with open(os.path.join(out, name)) as f:
                for line in f:
                    if line.startswith("summary:"):
                        total = int(line.split()[1])
    if total is None:
        sys.exit("no callgrind dump in %s" % out)
    print("tandem serve's own instructions (user space), %d tasks, %d "
          "iterations: %d, %.2f M an iteration (dump in %s)" %
          (n, iters, total, total / iters / 1e6, out))


if __name__ == "__main__":
    main()
