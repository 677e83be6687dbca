#!/bin/sh
# --json on run, review and doctor: stdout holds one JSON document and
# nothing else (progress and messages stay on stderr); for run and review
# it is the session's report, byte for byte report.json, with the
# approved diff inside; for doctor the checks. Usage errors leave stdout
# empty.
. "$(dirname "$0")/lib.sh"

check() { run /usr/bin/python3 "$TOP/tools/check-json" "$@"; }

# one_document FILE: FILE is exactly one JSON document (a second one, or
# any text before or after, fails)
one_document() {
    /usr/bin/python3 -c 'import json, sys; json.loads(open(sys.argv[1]).read())' \
        "$1" 2>"$T/json.err" || fail "stdout is not one JSON document: $(cat "$T/json.err")"
}

# run --json: the report on stdout, the diff inside it, not printed
copy_demo
run tandem run --repo "$T/demo" --json "make the failing test pass"
expect_rc 0 "the demo is approved"
one_document "$T/out"
dir=$(session_dir)
cmp -s "$T/out" "$dir/report.json" || fail "stdout is not report.json"
expect_not_in "$T/out" "tandem: "
expect_in "$T/err" "[2/3] approve:"
expect_in "$T/err" "approved after 2 iterations"
/usr/bin/python3 - "$T/out" "$dir/final.diff" <<'PY' || fail "final_diff_text is not final.diff"
import json, sys
r = json.load(open(sys.argv[1]))
assert r["status"] == "approved", r["status"]
assert r["final_diff_text"] == open(sys.argv[2]).read()
PY
cp "$T/out" "$T/run.json"
check "$TOP/docs/report.schema.json" "$T/run.json"
expect_rc 0 "the printed report matches the schema"
pass "run --json prints report.json and nothing else; the diff is inside"

# stdout that cannot be written: a full disk, a pipe its reader closed.
# The approved diff (or the report) is lost, so the run says so and exits
# 1 (it exited 0: `tandem run ... >fix.patch` on a full disk left an
# empty patch and a pipeline that took it for approved)
copy_demo
tandem run --repo "$T/demo" "make the failing test pass" >/dev/full \
    2>"$T/err"
RC=$?
expect_rc 1 "the approved diff into a full disk"
expect_in "$T/err" "approved after 2 iterations"
expect_in "$T/err" "tandem: cannot write the approved diff on stdout: No space left on device; the output was lost (the session keeps it), exit 1"
dir=$(session_dir)
expect_in "$dir/final.diff" "+    return (double)sum / (double)count;"
# stdout closed: the session's lock file was the next open()'s, and the
# approved diff went into it, exit 0
copy_demo
tandem run --repo "$T/demo" "make the failing test pass" >&- 2>"$T/err"
RC=$?
# under valgrind the program never sees its stdout closed: valgrind's
# --log-file takes the lowest free descriptor, 1, and the diff goes there
if [ "${TANDEM_MEMCHECK:-0}" != 1 ]; then
    expect_rc 1 "the approved diff with stdout closed"
    expect_in "$T/err" "tandem: cannot write the approved diff on stdout"
fi
dir=$(session_dir)
expect_not_in "$dir/lock" "diff --git"
copy_demo
/usr/bin/python3 - "$BIN/tandem" "$T/demo" "$T/err" <<'PY'
import os, subprocess, sys
r, w = os.pipe()
os.close(r)  # the reader is gone before anything is written
with open(sys.argv[3], "w") as err:
    rc = subprocess.call([sys.argv[1], "run", "--repo", sys.argv[2], "--json",
                          "make the failing test pass"], stdout=w, stderr=err)
sys.exit(rc)
PY
RC=$?
expect_rc 1 "the report into a closed pipe"
expect_in "$T/err" "tandem: cannot write the report on stdout: Broken pipe; the output was lost"
pass "run: a result that cannot be written on stdout is exit 1, said"

# a session that waits for a person (exit 3): the report says so
copy_demo
demo_config "$TOP/examples/demo/cassette.json" <<'YAML'
gate:
  max_iterations: 1
  escalate: queue
YAML
run tandem run --repo "$T/demo" --json "make the failing test pass"
expect_rc 3 "one attempt is not enough"
one_document "$T/out"
cmp -s "$T/out" "$(session_dir)/report.json" || fail "stdout is not report.json"
expect_in "$T/out" '"status": "escalated"'
expect_in "$T/out" '"final_diff_text": null'
expect_in "$T/err" "the session waits for an answer"
pass "a session that waits prints its report too (exit 3)"

# review --json: the report instead of the findings
(cd "$T/demo" && rm -f agents.yaml && git init -q && git add -A &&
    git -c user.email=t@example.com -c user.name=t commit -qm base) ||
    fail "cannot make the demo a git repository"
cat >"$T/review.yaml" <<YAML
agents:
  reviewer:
    llm: {provider: replay, cassette: "$TOP/examples/demo/cassette.json"}
    skills: [build, test]
skills:
  build: {command: make, timeout_s: 60}
  test: {command: make test, timeout_s: 60}
YAML
sed -i 's|^    return sum / count;|    return (double)(sum / (long)count);|' "$T/demo/stats.c"
run tandem review --repo "$T/demo" --config "$T/review.yaml" --json \
    "make the failing test pass"
expect_rc 1 "a half fix is rejected"
one_document "$T/out"
cmp -s "$T/out" "$(session_dir)/report.json" || fail "stdout is not report.json"
expect_in "$T/out" '"status": "rejected"'
expect_in "$T/out" '"suggested_fix": "Convert before dividing'
# the text findings are inside the report (findings_text), not beside it
/usr/bin/python3 - "$T/out" <<'PY' || fail "findings_text is not the text findings"
import json, sys
r = json.load(open(sys.argv[1]))
assert "Suggested fix: Convert" in r["findings_text"], r["findings_text"]
PY
pass "review --json prints the report, with the findings inside it"

run tandem review --repo "$T/demo" --config "$T/review.yaml" --json \
    --format sarif
expect_rc 2 "--json with --format"
[ ! -s "$T/out" ] || fail "a usage error printed on stdout"
expect_in "$T/err" "--json prints the report and --format the findings; give one of them"
run tandem run --repo "$T/demo" --config "$T/missing.yaml" --json "x"
expect_rc 2 "a missing config"
[ ! -s "$T/out" ] || fail "a configuration error printed on stdout"
pass "usage and configuration errors leave stdout empty"

# doctor --json: the checks
run "$BIN/tandem" doctor --repo "$TOP/examples/demo" --json
expect_rc 0 "the demo's configuration"
one_document "$T/out"
cp "$T/out" "$T/doctor.json"
check "$TOP/docs/doctor.schema.json" "$T/doctor.json"
expect_rc 0 "doctor's document matches its schema"
expect_in "$T/doctor.json" '"ok": true'
expect_in "$T/doctor.json" '"check": "skill test"'
cat >"$T/demo/agents.yaml" <<YAML
version: 1
agents:
  coder:
    llm: {provider: replay, cassette: $TOP/examples/demo/cassette.json}
  reviewer:
    llm: {provider: replay, cassette: $TOP/examples/demo/cassette.json}
    skills: [lint]
skills:
  lint: {command: [no-such-linter, --strict]}
YAML
run "$BIN/tandem" doctor --repo "$T/demo" --json
expect_rc 1 "a missing skill program"
one_document "$T/out"
expect_in "$T/out" '"ok": false'
expect_in "$T/out" '"failures": 1'
expect_in "$T/out" '"detail": "cannot run '"'"'no-such-linter'"'"': not found on PATH ('
run "$BIN/tandem" doctor --repo "$T/demo" --json --llm gpt-4o-mini
expect_rc 2 "--llm without a provider"
[ ! -s "$T/out" ] || fail "a usage error printed on stdout"
printf 'gate: {max_iterations: 0}\n' >"$T/demo/agents.yaml"
run "$BIN/tandem" doctor --repo "$T/demo" --json
expect_rc 1 "a config that does not load"
one_document "$T/out"
cp "$T/out" "$T/doctor.json"
check "$TOP/docs/doctor.schema.json" "$T/doctor.json"
expect_rc 0 "the failing document matches the schema"
expect_in "$T/doctor.json" '"check": "config"'
expect_in "$T/doctor.json" 'agents.yaml:1:'
pass "doctor --json prints the checks as one document"
