# Helpers for integration tests: sourced by each tests/integration/test_*.sh.
# Tests run the real binaries from bin/ and assert on what a user sees:
# exit codes, stdout, stderr, files. Nothing sleeps to synchronise: waits
# poll with a deadline.
set -u

TOP=$(cd "$(dirname "$0")/../.." && pwd)
BIN=$TOP/bin
FAKELLM=$TOP/build/tests/fakellm
T=$(mktemp -d "${TMPDIR:-/tmp}/tandem-test.XXXXXX")
FAKE_PID=
export TMPDIR=$T/tmp
mkdir -p "$TMPDIR"
# Sanitizer builds (make test SANITIZE=...) report into files, so a leak
# or an error in any process of the test, agents included, fails it.
export ASAN_OPTIONS="log_path=$T/sanitizer:detect_leaks=1"
export UBSAN_OPTIONS="log_path=$T/sanitizer:print_stacktrace=1"

# BG_PIDS: processes a test started in the background, killed at its
# exit, so a test that fails half way leaves no server or agent running
BG_PIDS=
cleanup() {
    status=$?
    for p in $BG_PIDS; do
        kill "$p" 2>/dev/null
    done
    if [ -n "$FAKE_PID" ]; then
        kill "$FAKE_PID" 2>/dev/null
        wait "$FAKE_PID" 2>/dev/null
    fi
    if ls "$T"/sanitizer.* >/dev/null 2>&1; then
        cat "$T"/sanitizer.* >&2
        echo "FAIL: a sanitizer reported errors (above)" >&2
        status=1
    fi
    # every report.json the test left must match the published schema
    # (docs/report.schema.json), whatever state its session ended in
    # (a directory a test made unreadable is no report)
    find "$T" -name report.json -type f 2>/dev/null >"$T/reports.list"
    if [ -s "$T/reports.list" ] && ! tr '\n' '\0' <"$T/reports.list" |
        xargs -0 /usr/bin/python3 "$TOP/tools/check-json" \
            "$TOP/docs/report.schema.json" >&2; then
        echo "FAIL: a report.json does not match docs/report.schema.json" \
            "(above)" >&2
        status=1
    fi
    if [ "${TANDEM_MEMCHECK:-0}" = 1 ] && [ -d "$T/vg" ]; then
        # with -q, valgrind writes ==PID== lines only for errors and leaks
        bad=$(grep -l -E '^==[0-9]+== ' "$T"/vg/*.log 2>/dev/null)
        if [ -n "$bad" ]; then
            cat $bad >&2
            echo "FAIL: valgrind reported errors (above)" >&2
            status=1
        fi
    fi
    rm -rf "$T"
    exit $status
}
trap cleanup EXIT

fail() {
    echo "FAIL: $*" >&2
    for f in "$T/out" "$T/err"; do
        if [ -s "$f" ]; then
            echo "--- $(basename "$f"):" >&2
            tail -n 40 "$f" >&2
        fi
    done
    exit 1
}

pass() { echo "ok - $*"; }

# Run a command with stdout in $T/out and stderr in $T/err; $RC is its
# exit status.
run() {
    "$@" >"$T/out" 2>"$T/err"
    RC=$?
}

# What valgrind does not follow under TANDEM_MEMCHECK=1: the system
# programs the skills run, and tandem-sandbox-enter (libc only, no
# sanitizer either), which moves into a sandbox's mount namespace, where
# valgrind cannot remove its own files at exit and says so as errors.
VG_SKIP='/usr/*,/bin/*,/sbin/*,*/tandem-sandbox-enter'

# tandem itself, under valgrind when TANDEM_MEMCHECK=1 (agents included,
# what VG_SKIP names excluded; a forked child is silent until it execs,
# since one whose exec fails leaves with the other threads' memory in
# use, which is no leak; only definite leaks are shown, since an agent
# whose job will not stop leaves with _exit while that thread still
# holds the context, on purpose, and its blocks are "possibly lost").
# With TANDEM_TIMEOUT=SECONDS set, killed after that long (ten times
# that under valgrind): for cases where a regression would block, so the
# test fails instead of hanging.
tandem() {
    if [ "${TANDEM_MEMCHECK:-0}" = 1 ]; then
        mkdir -p "$T/vg"
        ${TANDEM_TIMEOUT:+timeout $((TANDEM_TIMEOUT * 10))} \
            valgrind -q --trace-children=yes \
            --trace-children-skip="$VG_SKIP" \
            --child-silent-after-fork=yes \
            --leak-check=full --errors-for-leak-kinds=definite \
            --show-leak-kinds=definite \
            --log-file="$T/vg/%p.log" "$BIN/tandem" "$@"
    else
        ${TANDEM_TIMEOUT:+timeout $TANDEM_TIMEOUT} "$BIN/tandem" "$@"
    fi
}

# skill_output DIR NAME: skill NAME's output in the session's baseline
skill_output() {
    baseline_field "$1" "$2" output
}

# baseline_field DIR SKILL FIELD: that field of the skill's result in the
# session's baseline
baseline_field() {
    python3 - "$@" <<'PY'
import json, sys
for line in open(sys.argv[1] + "/journal.jsonl"):
    rec = json.loads(line)
    if rec["type"] == "baseline":
        for s in rec["reply"]["skills"]:
            if s["name"] == sys.argv[2]:
                print(s.get(sys.argv[3]))
PY
}

expect_rc() {
    [ "$RC" = "$1" ] || fail "expected exit $1, got $RC ($2)"
}

# expect_in FILE TEXT: FILE contains TEXT (fixed string)
expect_in() {
    grep -F -q -- "$2" "$1" || fail "$(basename "$1") lacks: $2"
}

expect_not_in() {
    if grep -F -q -- "$2" "$1"; then fail "$(basename "$1") has: $2"; fi
}

# A private copy of the demo project.
copy_demo() {
    rm -rf "$T/demo"
    mkdir -p "$T/demo"
    (cd "$TOP/examples/demo" && tar cf - --exclude=.tandem .) |
        (cd "$T/demo" && tar xf -)
}

# wait_for_rc FILE SECONDS: poll until FILE holds what `echo $? >FILE`
# writes (the shell makes the file empty before it writes the code: a
# check between the two read "" and failed "exited 0")
wait_for_rc() {
    i=0
    while [ ! -s "$1" ]; do
        i=$((i + 1))
        [ $i -gt $(($2 * 100)) ] && fail "timed out waiting for $1"
        sleep 0.01
    done
}

# wait_for_file FILE SECONDS: poll until FILE exists (written atomically)
wait_for_file() {
    i=0
    while [ ! -e "$1" ]; do
        i=$((i + 1))
        [ $i -gt $(($2 * 100)) ] && fail "timed out waiting for $1"
        sleep 0.01
    done
}

# start_fakellm SCRIPT: start the fake LLM server; sets FAKE_URL, FAKE_LOG.
start_fakellm() {
    FAKE_LOG=$T/fakellm.log
    rm -f "$T/fakellm.port" "$FAKE_LOG"
    "$FAKELLM" --script "$1" --port-file "$T/fakellm.port" \
        --log "$FAKE_LOG" --max-seconds 120 2>"$T/fakellm.err" &
    FAKE_PID=$!
    wait_for_file "$T/fakellm.port" 10
    FAKE_URL="http://127.0.0.1:$(cat "$T/fakellm.port")"
}

# The session directory named on the last line of tandem's stderr.
session_dir() {
    sed -n 's/^session [^:]*: \(.*\)\/$/\1/p' "$T/err" | tail -n 1
}

# reflection_is_rebuilt REPO DIR: the session DIR's reflection.md, which
# the run adds to a step at a time, is what tandem show rebuilds from the
# journal, byte for byte (show prints the diff after it, under a heading).
reflection_is_rebuilt() {
    "$BIN/tandem" show --repo "$1" "$(basename "$2")" >"$T/show.out" 2>&1 ||
        fail "tandem show: $(cat "$T/show.out")"
    n=$(grep -n '^## The \(approved change\|last proposal\)' "$T/show.out" |
        tail -n 1 | cut -d: -f1)
    if [ -n "$n" ]; then head -n $((n - 2)) "$T/show.out"; else cat "$T/show.out"; fi |
        cmp -s - "$2/reflection.md" ||
        fail "$2/reflection.md is not what the journal makes: $(diff "$2/reflection.md" "$T/show.out")"
}

# No process of a session may outlive tandem.
expect_no_leftovers() {
    sid=$(basename "$1")
    if pgrep -f "$sid" >/dev/null 2>&1; then
        pgrep -af "$sid" >&2
        fail "processes of session $sid are still running"
    fi
    [ ! -e "$TMPDIR/tandem-$(id -u)/$sid" ] ||
        fail "runtime directory of $sid was left behind"
}

# llm_config LLM [SKILLS]: the demo copy's agents.yaml with both agents
# on LLM (a YAML flow mapping), the reviewer running SKILLS (default
# "build, test"); extra YAML for the top level can follow on stdin, and
# build and test are the demo's make targets unless it names skills.
llm_config() {
    {
        cat <<YAML
version: 1
agents:
  coder:
    llm: $1
  reviewer:
    llm: $1
    skills: [${2:-build, test}]
YAML
        if [ ! -t 0 ]; then cat; fi
    } >"$T/demo/agents.yaml"
    if ! grep -q '^skills:' "$T/demo/agents.yaml"; then
        cat >>"$T/demo/agents.yaml" <<YAML
skills:
  build: {command: make, timeout_s: 60}
  test: {command: make test, timeout_s: 60}
YAML
    fi
}

# demo_config CASSETTE [SKILLS]: llm_config with a cassette (absolute
# path) replayed.
demo_config() {
    llm_config "{provider: replay, cassette: \"$1\"}" "${2-}"
}

# fake_config [SKILLS]: llm_config with the fake model server that
# start_fakellm started.
fake_config() {
    llm_config "{provider: openai, model: fake-model, base_url: \"$FAKE_URL/v1\"}" "${1-}"
}

FIX=$TOP/tests/fixtures

# json_int FILE KEY: the integer at KEY of the JSON object in FILE (a
# report.json)
json_int() {
    /usr/bin/python3 -c 'import json, sys
print(json.load(open(sys.argv[1]))[sys.argv[2]])' "$1" "$2"
}
