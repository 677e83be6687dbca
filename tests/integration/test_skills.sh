#!/bin/sh
# The reviewer's skills as a user configures them: paths that skip a
# skill, skills that run at the same time, resource limits, a formatter
# caught changing the code it audits, and the built-in git and docs
# skills blocking what a model would let through.
. "$(dirname "$0")/lib.sh"

DEMO_CASSETTE=$TOP/examples/demo/cassette.json

# skills_config CASSETTE REVIEWER_SKILLS: the demo copy's agents.yaml with
# both agents on CASSETTE, the reviewer running REVIEWER_SKILLS (a YAML
# list); the skills section follows on stdin.
skills_config() {
    {
        cat <<YAML
version: 1
gate:
  max_iterations: ${MAX_ITER:-3}
agents:
  coder:
    llm: {provider: replay, cassette: "$1"}
  reviewer:
    llm: {provider: replay, cassette: "$1"}
    skills: $2
skills:
YAML
        cat
    } >"$T/demo/agents.yaml"
}

# The skill's status in the last attempt of report.json.
skill_status() {
    python3 - "$1" "$2" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
attempt = report["attempts"][-1]
for s in attempt["skills"]:
    if s["name"] == sys.argv[2]:
        print(s["status"])
PY
}

# ---- paths: a skill the change does not concern is skipped ----------
copy_demo
skills_config "$DEMO_CASSETTE" "[build, test, docs-lint]" <<'YAML'
  build: {command: make, timeout_s: 60}
  test: {command: make test, timeout_s: 60}
  docs-lint:
    command: "false"
    required: true
    paths: ["docs/**", "**/*.md"]
YAML
run tandem run --repo "$T/demo" "make the failing test pass"
expect_rc 0 "a skipped required skill does not block"
expect_in "$T/err" "approved after 2 iterations"
dir=$(session_dir)
[ "$(skill_status "$dir/report.json" docs-lint)" = skipped ] ||
    fail "docs-lint is not reported skipped: $(cat "$dir/report.json")"
expect_in "$dir/logs/reviewer-1.log" "docs-lint: skipped"
pass "a skill whose paths the change does not touch is skipped and does not block"

# ---- a pipeline fails when any command in it does ---------------------
# agents.yaml's own example piped a suite into tail: under /bin/sh -c the
# skill took tail's status, and a failing suite passed
copy_demo
skills_config "$DEMO_CASSETTE" "[build, test]" <<'YAML'
  build: {command: make, timeout_s: 60}
  test: {command: "make test 2>&1 | tail -n 50", timeout_s: 60}
YAML
run tandem run --repo "$T/demo" "make the failing test pass"
dir=$(session_dir)
[ "$(baseline_field "$dir" test status)" = fail ] ||
    fail "the failing suite piped into tail passed: $(baseline_field "$dir" test output)"
expect_in "$T/err" "approved after 2 iterations"
pass "a failing command piped into tail fails its skill"

# ---- after: [] lets two skills run at the same time -----------------
# Each end of a named pipe blocks until the other end is opened, so
# "left" can only finish once "right" has started and the other way
# round: run one after the other, the first would block until its
# timeout. No sleep is involved.
if [ "$(nproc)" -ge 2 ]; then
    copy_demo
    mkfifo "$T/handshake"
    skills_config "$DEMO_CASSETTE" "[left, right, build, test]" <<YAML
  left:
    command: "echo left-started > $T/handshake && echo saw-right > $T/left.done"
    after: []
    timeout_s: 20
    sandbox: none  # the pipe is this test's, outside the workspace
  right:
    command: "read what < $T/handshake && echo \"saw-\$what\" > $T/right.done"
    after: []
    timeout_s: 20
    sandbox: none
  build: {command: make, timeout_s: 60}
  test: {command: make test, timeout_s: 60}
YAML
    run tandem run --repo "$T/demo" "make the failing test pass"
    expect_rc 0 "both skills pass"
    dir=$(session_dir)
    [ "$(skill_status "$dir/report.json" left)" = pass ] ||
        fail "left did not pass"
    [ "$(skill_status "$dir/report.json" right)" = pass ] ||
        fail "right did not pass"
    expect_in "$T/left.done" "saw-right"
    expect_in "$T/right.done" "saw-left-started"
    order=$(python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))
print(" ".join(s["name"] for s in r["attempts"][-1]["skills"]))' \
        "$dir/report.json")
    [ "$order" = "left right build test" ] ||
        fail "results are not in the configured order: $order"
    pass "two skills with after: [] run concurrently (a pipe handshake)"
else
    echo "skip - concurrency needs two CPUs; this machine has $(nproc)"
fi

# ---- limits: a skill that writes past limits.file_mb fails ----------
copy_demo
MAX_ITER=1 skills_config "$DEMO_CASSETTE" "[big, build, test]" <<'YAML'
  big:
    command: "head -c 3000000 /dev/zero > big.bin"
    limits: {file_mb: 1}
  build: {command: make, timeout_s: 60}
  test: {command: make test, timeout_s: 60}
YAML
run tandem run --repo "$T/demo" "make the failing test pass"
expect_rc 3 "the limit blocks"
expect_in "$T/err" "[1/1] escalate: gate.max_iterations (1) reached; last failure: required skill big: fail, killed: a file grew past the 1 MiB limit (limits.file_mb)"
dir=$(session_dir)
expect_in "$dir/logs/reviewer-1.log" "big: fail"
# the skills after it still ran: results are evidence
[ "$(skill_status "$dir/report.json" build)" = pass ] ||
    fail "build did not run after big failed"
pass "a skill over its limits.file_mb fails, saying so; the skills after it still run"

# ---- a skill that rewrites a file it audits is reported -------------
copy_demo
skills_config "$DEMO_CASSETTE" "[build, test, fmt]" <<'YAML'
  build: {command: make, timeout_s: 60}
  test: {command: make test, timeout_s: 60}
  fmt:
    command: "sed -i 's/count values;/count  values;/' stats.h"
    required: false
YAML
run tandem run --repo "$T/demo" "make the failing test pass"
expect_rc 0 "an advisory formatter does not block"
dir=$(session_dir)
expect_in "$dir/logs/reviewer-1.log" "skill fmt changed stats.h"
expect_not_in "$dir/logs/reviewer-1.log" "skill build changed"
expect_not_in "$dir/logs/reviewer-1.log" "skill test changed"
pass "a formatter that rewrites a tracked file is reported as changing it"

# ---- builtin git: a proposal that adds a key is blocked -------------
# The cassette's reviewer exchange expects the skill's finding, with its
# line, in the prompt: a run whose output did not name it fails there.
copy_demo
MAX_ITER=1 skills_config "$FIX/cassette-secret.json" "[secrets, build]" <<'YAML'
  secrets: {builtin: git}
  build: {command: make, timeout_s: 60}
YAML
run tandem run --repo "$T/demo" "make the failing test pass"
expect_rc 3 "the git skill blocks the key"
expect_in "$T/err" "[1/1] escalate: gate.max_iterations (1) reached; last failure: required skill secrets failed (exit 1)"
[ ! -s "$T/out" ] || fail "a change with a key was approved"
pass "the built-in git skill blocks an added AWS-style key and names its line"

# ---- builtin docs: a header change needs a docs change --------------
copy_demo
MAX_ITER=1 skills_config "$FIX/cassette-header-change.json" "[docs]" <<'YAML'
  docs:
    builtin: docs
    public: ["*.h", "include/**"]
    docs: [README.md, "docs/**"]
YAML
run tandem run --repo "$T/demo" "make the failing test pass"
expect_rc 3 "the docs skill blocks"
expect_in "$T/err" "[1/1] escalate: gate.max_iterations (1) reached; last failure: required skill docs failed (exit 1)"
pass "the built-in docs skill blocks a header change without a docs change"

# ---- a reply that would not fit --------------------------------------
# Twenty skills printing 1 MiB each would make a 20 MiB reply, past the
# protocol's 16 MiB for one body: libzmq dropped it without a word and
# the run waited for request_timeout_s. The reviewer cuts each output to
# an equal share instead (what failed kept first), and the run goes on.
copy_demo
names=
{
    i=1
    while [ $i -le 20 ]; do
        printf '  big%d:\n    command: "head -c 1040000 /dev/zero | tr %s x; echo; echo line-%d"\n    output_max_kb: 1024\n    required: false\n' \
            $i "'\\\\0'" $i
        names="${names:+$names, }big$i"
        i=$((i + 1))
    done
    printf '  build: {command: make, timeout_s: 60}\n  test: {command: make test, timeout_s: 60}\n'
} >"$T/big-skills.yaml"
skills_config "$TOP/examples/demo/cassette.json" "[build, test, $names]" \
    <"$T/big-skills.yaml"
TANDEM_TIMEOUT=120 run tandem run --repo "$T/demo" "make the failing test pass"
expect_rc 0 "approved with 20 MiB of skill output"
dir=$(session_dir)
expect_in "$dir/logs/reviewer-1.log" "more than a reply carries; each output is cut to"
pass "outputs too large for one reply are cut, not lost with the reply"
