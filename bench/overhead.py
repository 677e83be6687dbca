#!/usr/bin/env python3
"""bench/overhead.py [TASKS]: tandem's own time per iteration in tandem serve.

Issue 8's first benchmark. One `tandem serve --max-sessions 1` with
resident agents, a fake model with no latency (fakellm, OpenAI wire
format) and trivial skills (`true`, and a grep that fails the first
attempt: bench/benchlib.py), so every task takes 2 iterations and the
time spent is tandem's own. TASKS tasks (default 20) are submitted one
after another, after 2 of warm-up; for each, per iteration:

- wall: the submit's wall time / iterations (at concurrency 1 this is all
  tandem's, since the model answers at once): the median over the tasks
  (target: <= 5 ms);
- server CPU: user + system time of the server, its agents and what they
  ran (skills, bwrap, git), read from /proc before and after each task;
- submit CPU: the `tandem submit` client's own;
- the wall time between the task's journal records (submit -> task ->
  workspace -> ... -> finish -> the client's exit), medians: where the
  wall goes, as the breakdown below says where the CPU goes.

CPU is summed over the batch and divided by its iterations: /proc counts
it in 10 ms clock ticks, too coarse for one task.

Then the breakdown: the same server run under `perf record` (DWARF call
graphs, every process of the tree) for TASKS/2 tasks, each sample put in
one bucket by its process and the tandem function it runs under
(broker, journal and views, workspace, skills, model calls, process
start, other). Without perf, `strace -c -f` counts system calls instead.

Run from the top of the tree after `make all build/tests/fakellm`:
    python3 bench/overhead.py 20
"""
import datetime
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as bl  # noqa: E402


def one_task(b, repo, span=None):
    """Submit one task and wait: (wall s, server CPU s, submit CPU s,
    iterations). span, a list, gets the submit's start and end as wall
    clock ms (the journal's times are wall clock)."""
    pids = bl.tree(b.serve_pid)
    c0 = bl.cpu_s(pids)
    w0 = time.time()
    t0 = time.monotonic()
    p = b.submit(repo)
    _, status, ru = os.wait4(p.pid, 0)
    t1 = time.monotonic()
    if span is not None:
        span[:] = [w0 * 1000, time.time() * 1000]
    p.returncode = os.waitstatus_to_exitcode(status)
    err = p.stderr.read().decode(errors="replace")
    if p.returncode != 0:
        sys.exit("submit failed (%d): %s" % (p.returncode, err[-2000:]))
    # the tree now: agents are the same, and children that came and went
    # were reaped into their parents' cutime/cstime
    c1 = bl.cpu_s(bl.tree(b.serve_pid))
    it = bl.iterations([repo])
    return t1 - t0, c1 - c0, ru.ru_utime + ru.ru_stime, it


def measure(n):
    b = bl.Bench(0, "overhead")
    try:
        repos = b.make_repos(n + 2)
        b.start_serve(1)
        for r in repos[:2]:
            one_task(b, r)
        bl.quiet()
        wall, server, client = [], [], []
        phases = {}
        for r in repos[2:]:
            span = []
            w, s, c, it = one_task(b, r, span)
            add_phases(phases, r, span)
            if it != 2:
                sys.exit("a task took %d iterations, not 2 (%s)" % (it, r))
            wall.append(w / it)
            server.append(s / it)
            client.append(c / it)
        # /proc counts CPU in clock ticks (10 ms): per task that is
        # coarse, so CPU is the batch's sum over its iterations
        print("per iteration, %d tasks of 2 iterations one at a time "
              "(%s):" % (n, bl.load()))
        print("  wall %.1f ms median (min %.1f, max %.1f); CPU, the batch's "
              "sum / iterations: server %.1f ms, submit %.1f ms" % (
                  bl.ms(bl.median(wall)), bl.ms(min(wall)),
                  bl.ms(max(wall)), bl.ms(sum(server) / len(server)),
                  bl.ms(sum(client) / len(client))))
        print_phases(phases, n)
    finally:
        b.close()


def add_phases(phases, repo, span):
    """The wall time between the task's journal records (their times are
    whole ms), and from the submit's start to the first and from the last
    to the submit's exit, into phases: name -> list of ms."""
    path = glob.glob(os.path.join(repo, ".tandem", "sessions", "*",
                                  "journal.jsonl"))[0]
    prev = ("submit", span[0])
    with open(path) as f:
        for line in f:
            rec = json.loads(line)
            t = datetime.datetime.strptime(
                rec["time"], "%Y-%m-%dT%H:%M:%S.%fZ").replace(
                    tzinfo=datetime.timezone.utc).timestamp() * 1000
            key = "%s -> %s" % (prev[0], rec["type"])
            phases.setdefault(key, []).append(t - prev[1])
            prev = (rec["type"], t)
    phases.setdefault("%s -> client exit" % prev[0], []).append(
        span[1] - prev[1])


def print_phases(phases, n):
    """Where a task's wall time goes, by the journal: the median of each
    step to the next, and its sum over a task."""
    print("wall time between journal records, medians over %d tasks "
          "(records have whole ms):" % n)
    print("  %-28s %5s %9s %12s" % ("from -> to", "each", "median ms",
                                    "ms / task"))
    for k, v in phases.items():
        print("  %-28s %5d %9.1f %12.1f" % (k, len(v) // n, bl.median(v),
                                           sum(v) / n))


# Buckets: a sample goes to the first whose process name matches, else to
# the innermost frame of its call chain that one of the function patterns
# matches (a write under tnd_views_write is the views', wherever that was
# called from), else "other".
BY_PROCESS = [
    ("skills", re.compile(r"^(bwrap|true|grep|sh|cat|tandem-sandbox-)$")),
    ("workspace", re.compile(r"^git$")),
]
BY_FUNCTION = [
    ("process start (exec, dynamic linking)",
     re.compile(r"^(_dl_start|_dl_relocate_object|_dl_map_object|"
                r"dl_main|_dl_sysdep_start|_dl_init|do_execve|"
                r"__x64_sys_execve|bprm_execve)")),
    ("skills", re.compile(r"^tnd_(skill|skills|sandbox|bwrap|modcheck|"
                          r"toolline|manifest|cgroup)")),
    ("journal and views", re.compile(r"^tnd_(journal|views|report|events|"
                                     r"lessons|fsio|atomic)")),
    ("workspace", re.compile(r"^tnd_(workspace|mirror|snapshot|beneath|"
                             r"git|rundir|session_new|context|unidiff)")),
    ("model calls (agents)", re.compile(r"^(tnd_llm|tnd_http|tnd_openai|"
                                        r"curl_|Curl_|tnd_stream)")),
    ("broker and messages", re.compile(r"^(tnd_broker|tnd_mdp|tnd_link|"
                                       r"tnd_hub|tnd_crew|tnd_agent|"
                                       r"tnd_pool|zmq_|tnd_msg)")),
]


def bucket(procname, frames):
    for name, rx in BY_PROCESS:
        if rx.search(procname):
            return name
    for f in frames:  # the innermost tandem function that says decides
        for name, rx in BY_FUNCTION:
            if rx.search(f):
                return name
    if procname.startswith("ZMQbg"):
        return "broker and messages"
    return "other (%s)" % procname


def perf_breakdown(n):
    b = bl.Bench(0, "overhead-perf")
    data = os.path.join(b.dir, "perf.data")
    try:
        repos = b.make_repos(n + 1)
        b.start_serve(1, wrap=["perf", "record", "-q", "-F", "2000",
                               "--call-graph", "dwarf,8192", "-o", data,
                               "--"])
        one_task(b, repos[0])  # agents up
        t0 = time.monotonic()
        for r in repos[1:]:
            one_task(b, r)
        t1 = time.monotonic()
        b.stop_serve(120)
        out = subprocess.run(
            ["perf", "script", "-i", data, "-F", "comm,tid,time,ip,sym"],
            capture_output=True, text=True, check=False).stdout
    finally:
        b.close()
    counts = {}
    total = 0
    for block in out.split("\n\n"):
        lines = [ln for ln in block.splitlines() if ln.strip()]
        if not lines:
            continue
        head = lines[0].split()
        procname = head[0]
        frames = []
        for ln in lines[1:]:
            parts = ln.split(None, 1)
            frames.append(parts[1].split("+")[0] if len(parts) > 1 else "")
        k = bucket(procname, frames)
        counts[k] = counts.get(k, 0) + 1
        total += 1
    iters = 2 * n
    print("breakdown (perf record -F 2000 --call-graph dwarf on the server "
          "tree, %d tasks, %d iterations, %.0f ms wall; samples of 0.5 ms "
          "CPU):" % (n, iters, bl.ms(t1 - t0)))
    print("  %-45s %7s %12s" % ("bucket", "share", "ms/iteration"))
    for k, v in sorted(counts.items(), key=lambda kv: -kv[1]):
        print("  %-45s %6.1f%% %12.2f" % (k, 100.0 * v / total,
                                          v * 0.5 / iters))
    print("  (the warm-up task and the server's start and stop are in the "
          "samples too)")


def strace_breakdown(n):
    b = bl.Bench(0, "overhead-strace")
    try:
        repos = b.make_repos(n + 1)
        out = os.path.join(b.dir, "strace.out")
        b.start_serve(1, wrap=["strace", "-f", "-c", "-o", out])
        for r in repos:
            one_task(b, r)
        b.stop_serve(120)
        print("system calls of the server tree (strace -c -f, %d tasks):" % n)
        with open(out) as f:
            print("".join(f.readlines()[:25]))
    finally:
        b.close()


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 20
    measure(n)
    if shutil.which("perf") and subprocess.run(
            ["perf", "record", "-q", "-o", "/dev/null", "true"],
            capture_output=True).returncode == 0:
        perf_breakdown(max(2, n // 2))
    else:
        strace_breakdown(max(2, n // 2))


if __name__ == "__main__":
    main()
