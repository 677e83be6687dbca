# bench/benchlib.py: what the serve benchmarks of issue 8 share
# (bench/overhead.py, throughput.py, memory.py, stress.py). Not run by
# itself.
#
# The workload: a git repository with one file, app.txt ("value = 1"); the
# task asks for "value = 3". The fake model (build/tests/fakellm, OpenAI
# wire format, streaming, LATENCY ms before each answer) answers the
# coder "value = 2" first and "value = 3" when its prompt says "this is
# attempt 2", and the reviewer always approves. The reviewer's skills are
# trivial: `true`, and a grep for "value = 3" that fails the first
# attempt. So every task takes 2 iterations (4 model calls) and is
# approved. Skills run in the default bubblewrap sandbox (BENCH_SANDBOX,
# below, changes that).
#
# Everything lives in one temporary directory (TMPDIR, XDG_RUNTIME_DIR and
# XDG_STATE_HOME point into it), removed at the end unless KEEP=1.
# BENCH_BIN=DIR runs the tandem of another build (its bin/); fakellm is
# always this tree's.
import atexit
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# BENCH_BIN: another build's bin/ (to compare before and after a change)
BIN = os.environ.get("BENCH_BIN") or os.path.join(TOP, "bin")
# BENCH_THREADS=N: agents.*.threads in the config (requests one agent
# process serves at once); unset: the built-in default
THREADS = ("\n    threads: %d" % int(os.environ["BENCH_THREADS"])
           if os.environ.get("BENCH_THREADS") else "")
# BENCH_SANDBOX=none: the skills run with `sandbox: none`, to tell the
# orchestrator's own time from the skill sandbox's (unset: the default
# sandbox, as a user gets it)
SANDBOX = (", sandbox: %s" % os.environ["BENCH_SANDBOX"]
           if os.environ.get("BENCH_SANDBOX") else "")
TANDEM = os.path.join(BIN, "tandem")
FAKELLM = os.path.join(TOP, "build", "tests", "fakellm")
TASK = "set the value in app.txt to 3"

CODER_1 = ("The value is set in app.txt.\n\napp.txt\n<<<<<<< SEARCH\n"
           "value = 1\n=======\nvalue = 2\n>>>>>>> REPLACE\n")
CODER_2 = ("The check wants 3.\n\napp.txt\n<<<<<<< SEARCH\n"
           "value = 1\n=======\nvalue = 3\n>>>>>>> REPLACE\n")
APPROVE = ("```json\n{\"verdict\": \"approve\", \"confidence\": 0.95, "
           "\"issues\": [], \"summary\": \"The value is set.\"}\n```\n")


def ms(seconds):
    return seconds * 1000.0


def median(xs):
    xs = sorted(xs)
    n = len(xs)
    if n == 0:
        return float("nan")
    return xs[n // 2] if n % 2 else (xs[n // 2 - 1] + xs[n // 2]) / 2.0


def load():
    """The load average and the CPUs, for the record."""
    with open("/proc/loadavg") as f:
        la = f.read().split()[:3]
    return "load %s %s %s on %d CPUs" % (la[0], la[1], la[2], os.cpu_count())


def quiet():
    """Before a measured batch: wait BENCH_QUIET_S seconds (default 0).

    On ext4 without a journal (the machines these figures come from) a
    new inode is not put where one was freed recently: 60 s, and 300 s
    more while that inode's table block is dirty (recently_deleted in
    ext4's find_inode_bit, which reads each such inode on every
    allocation). So a batch run within minutes of a removal of thousands
    of files (an earlier run's world, a test suite) pays for each of them
    on every file it makes: a quarter of all CPU in perf, and the C = 32
    batch a third slower. BENCH_QUIET_S=400 lets them age out, so that
    each figure is tandem's own (40, the earlier advice, is too short
    while the blocks stay dirty)."""
    s = float(os.environ.get("BENCH_QUIET_S") or 0)
    if s > 0:
        time.sleep(s)


def need_build():
    for p in (TANDEM, FAKELLM):
        if not os.access(p, os.X_OK):
            sys.exit("%s is missing: run make all build/tests/fakellm "
                     "(make bench does)" % p)


class Bench:
    """One temporary world: a fake model, repositories, a server."""

    def __init__(self, latency_ms=0, name="bench"):
        need_build()
        self.dir = tempfile.mkdtemp(prefix="tandem-%s." % name,
                                    dir=os.environ.get("TMPDIR", "/tmp"))
        self.env = dict(os.environ)
        for k, sub in (("TMPDIR", "tmp"), ("XDG_RUNTIME_DIR", "run"),
                       ("XDG_STATE_HOME", "state")):
            p = os.path.join(self.dir, sub)
            os.makedirs(p, mode=0o700)
            self.env[k] = p
        self.env.pop("OPENAI_API_KEY", None)
        self.serve = None
        self.fake = None
        self.repos = []
        self.config = os.path.join(self.dir, "agents.yaml")
        self.start_fakellm(latency_ms)
        self.write_config()

    # ---- the fake model ---------------------------------------------------
    def start_fakellm(self, latency_ms):
        many = 1 << 30
        script = {"steps": [
            {"when": "You are the reviewer", "content": APPROVE,
             "delay_ms": latency_ms, "repeat": many},
            {"when": "this is attempt 2", "content": CODER_2,
             "delay_ms": latency_ms, "repeat": many},
            {"content": CODER_1, "delay_ms": latency_ms, "repeat": many},
        ]}
        path = os.path.join(self.dir, "script.json")
        with open(path, "w") as f:
            json.dump(script, f)
        port = os.path.join(self.dir, "fakellm.port")
        self.fake = subprocess.Popen(
            [FAKELLM, "--script", path, "--port-file", port,
             "--max-seconds", "0"],
            stderr=open(os.path.join(self.dir, "fakellm.err"), "w"))
        deadline = time.time() + 10
        while not os.path.exists(port):
            if time.time() > deadline or self.fake.poll() is not None:
                sys.exit("fakellm did not start: see %s/fakellm.err" %
                         self.dir)
            time.sleep(0.01)
        with open(port) as f:
            self.url = "http://127.0.0.1:%s/v1" % f.read().strip()

    def write_config(self):
        llm = ("{provider: openai, model: fake-model, base_url: \"%s\"}" %
               self.url)
        with open(self.config, "w") as f:
            f.write("""version: 1
gate: {escalate: never}
agents:
  coder:
    llm: %s%s
  reviewer:
    llm: %s%s
    skills: [ok, check]
skills:
  ok: {command: "true", required: true%s}
  check: {command: "grep -q 'value = 3' app.txt", required: true%s}
""" % (llm, THREADS, llm, THREADS, SANDBOX, SANDBOX))

    # ---- repositories -----------------------------------------------------
    def make_repos(self, n):
        """n more repositories; returns their paths."""
        made = []
        for _ in range(n):
            r = os.path.join(self.dir, "r%d" % len(self.repos))
            os.makedirs(r)
            with open(os.path.join(r, "app.txt"), "w") as f:
                f.write("value = 1\n")
            git = ["git", "-C", r, "-c", "user.email=bench@example.com",
                   "-c", "user.name=bench"]
            subprocess.run(git + ["init", "-q"], check=True)
            subprocess.run(git + ["add", "app.txt"], check=True)
            subprocess.run(git + ["commit", "-q", "-m", "base"], check=True)
            self.repos.append(r)
            made.append(r)
        return made

    # ---- the server -------------------------------------------------------
    def start_serve(self, max_sessions, pool=None, queue_max=None,
                    wrap=None):
        """tandem serve in the background (wrap: a command line in front,
        e.g. perf record); returns once its endpoint is written."""
        epfile = os.path.join(self.env["XDG_RUNTIME_DIR"], "tandem",
                              "serve.endpoint")
        argv = [TANDEM, "serve", "--config", self.config,
                "--max-sessions", str(max_sessions)]
        if pool:
            argv += ["--pool", str(pool)]
        if queue_max:
            argv += ["--queue-max", str(queue_max)]
        self.serve_err = os.path.join(self.dir, "serve.err")
        self.serve = subprocess.Popen(
            (wrap or []) + argv, env=self.env,
            stdout=subprocess.DEVNULL, stderr=open(self.serve_err, "a"),
            start_new_session=True)
        deadline = time.time() + 30
        while not os.path.exists(epfile):
            if time.time() > deadline or self.serve.poll() is not None:
                sys.exit("tandem serve did not start: %s" %
                         open(self.serve_err).read()[-2000:])
            time.sleep(0.01)
        self.serve_pid = self.find_serve_pid() if wrap else self.serve.pid

    def find_serve_pid(self):
        """The tandem serve process under a wrapper (perf)."""
        for _ in range(500):
            for pid in tree(self.serve.pid):
                if comm(pid) == "tandem":
                    return pid
            time.sleep(0.01)
        sys.exit("no tandem process under the wrapper")

    def stop_serve(self, timeout=60):
        if not self.serve:
            return
        try:
            os.kill(self.serve_pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            self.serve.wait(timeout)
        except subprocess.TimeoutExpired:
            os.killpg(self.serve.pid, signal.SIGKILL)
            self.serve.wait()
        self.serve = None

    def submit(self, repo, *extra):
        """tandem submit, started (not waited for)."""
        return subprocess.Popen(
            [TANDEM, "submit", "-q", "--repo", repo] + list(extra) + [TASK],
            env=self.env, stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE)

    def run(self, repo):
        """An independent tandem run, started (not waited for)."""
        return subprocess.Popen(
            [TANDEM, "run", "-q", "--config", self.config, "--repo", repo,
             TASK], env=self.env, stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE)

    def close(self):
        self.stop_serve()
        if self.fake:
            self.fake.terminate()
            self.fake.wait()
        if os.environ.get("KEEP"):
            print("kept %s" % self.dir)
        else:
            _trash.append(self.dir)


# The worlds are removed when the benchmark exits, not when each is
# closed: removing one (thousands of files: repositories, sessions) just
# before the next is measured made every file the next one created cost
# more. On ext4 without a journal, as on the machines these figures come
# from, making an inode skips each one freed in the last 5 to 35 s
# (recently_deleted in ext4's find_inode_bit): perf showed it at a quarter
# of all CPU in the batch that followed a removal, 5 % otherwise.
_trash = []


@atexit.register
def _remove_worlds():
    for d in _trash:
        shutil.rmtree(d, ignore_errors=True)


# ---- sessions on disk -----------------------------------------------------
def reports(repos):
    """Every report.json under the repositories' sessions."""
    out = []
    for r in repos:
        d = os.path.join(r, ".tandem", "sessions")
        if not os.path.isdir(d):
            continue
        for s in sorted(os.listdir(d)):
            p = os.path.join(d, s, "report.json")
            if os.path.exists(p):
                with open(p) as f:
                    out.append(json.load(f))
    return out


def iterations(repos):
    return sum(r.get("iterations", 0) for r in reports(repos))


# ---- processes ------------------------------------------------------------
def _stat(pid):
    with open("/proc/%d/stat" % pid) as f:
        s = f.read()
    # comm may hold spaces and parentheses: split after the last ')'
    return s[s.index("(") + 1:s.rindex(")")], s[s.rindex(")") + 2:].split()


def comm(pid):
    try:
        return _stat(pid)[0]
    except (OSError, ValueError):
        return ""


def tree(root):
    """root and every descendant alive now."""
    children = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            ppid = int(_stat(int(name))[1][1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(ppid, []).append(int(name))
    out, pending = [], [root]
    while pending:
        p = pending.pop()
        out.append(p)
        pending.extend(children.get(p, []))
    return out


TICK = os.sysconf("SC_CLK_TCK")


def cpu_s(pids):
    """CPU seconds of these processes and of the children they reaped
    (utime + stime + cutime + cstime)."""
    total = 0
    for pid in pids:
        try:
            f = _stat(pid)[1]
        except (OSError, ValueError):
            continue
        total += sum(int(x) for x in f[11:15])
    return total / float(TICK)


_libc = None


def _shares_vm(a, b):
    """Whether processes a and b have one address space: a child started
    with clone(CLONE_VM | CLONE_VFORK) (skills/proc.c) until its exec.
    kcmp(2), KCMP_VM."""
    global _libc
    if _libc is None:
        import ctypes
        _libc = ctypes.CDLL(None, use_errno=True)
    return _libc.syscall(312, a, b, 1, 0, 0) == 0  # SYS_kcmp on x86-64


def pss_by_pid(pids):
    """Pss of each of these processes (smaps_rollup), in KiB. A process
    that still shares its parent's address space (started, not yet
    exec'd) is left out: its smaps are its parent's, and counting both
    would count that memory twice."""
    out = {}
    ppid = {}
    for pid in pids:
        try:
            name, rest = _stat(pid)
            ppid[pid] = (int(rest[1]), name)
        except (OSError, ValueError, IndexError):
            continue
    for pid in pids:
        if pid not in ppid:
            continue
        parent, name = ppid[pid]
        if parent in ppid and ppid[parent][1] == name and \
                _shares_vm(parent, pid):
            continue
        try:
            with open("/proc/%d/smaps_rollup" % pid) as f:
                for line in f:
                    if line.startswith("Pss:"):
                        out[pid] = int(line.split()[1])
                        break
        except OSError:
            continue
    return out


def pss_kib(pids):
    """Sum of Pss over these processes (see pss_by_pid), and the count
    read."""
    by = pss_by_pid(pids)
    return sum(by.values()), len(by)


def rss_kib(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0
