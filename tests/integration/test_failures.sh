#!/bin/sh
# Failure paths a user will meet: the recording runs out or drifts, an
# agent program is missing or keeps crashing. Each gives a clear message,
# the right exit code, a report, and no process left behind.
. "$(dirname "$0")/lib.sh"

copy_demo
demo_config "$FIX/cassette-short.json"
run tandem run --repo "$T/demo" "make the failing test pass"
expect_rc 1 "cassette exhausted"
expect_in "$T/err" "has no answer for the coder's call 1 of attempt 2"
expect_in "$T/err" "the run went further than the recording"
dir=$(session_dir)
expect_in "$dir/report.json" '"status": "failed"'
expect_in "$dir/report.json" "has no answer for the coder"
expect_no_leftovers "$dir"
pass "an exhausted cassette fails the run with exit 1 and says why"

copy_demo
demo_config "$FIX/cassette-drift.json"
run tandem run --repo "$T/demo" "make the failing test pass"
expect_rc 1 "cassette drift"
expect_in "$T/err" "should contain \"text that is never in the prompt\""
expect_in "$T/err" "differs from the recording"
expect_no_leftovers "$(session_dir)"
pass "a run that drifts from its recording fails with exit 1 and says where"

copy_demo
cat >"$T/demo/agents.yaml" <<YAML
version: 1
agents:
  coder:
    command: [$T/bin/no-such-coder]
    llm: {provider: replay, cassette: $TOP/examples/demo/cassette.json}
  reviewer:
    llm: {provider: replay, cassette: $TOP/examples/demo/cassette.json}
YAML
run tandem run --repo "$T/demo" "make the failing test pass"
expect_rc 2 "agent program missing"
expect_in "$T/err" "agent program $T/bin/no-such-coder cannot be run"
expect_in "$T/err" "set agents.coder.command"
[ ! -d "$T/demo/.tandem" ] || fail "a session was created without agents"
pass "a missing agent program is a configuration error (exit 2)"

# an agent that dies at once, every time: tandem gives up with its log
mkdir -p "$T/bin"
cat >"$T/bin/crashing-coder" <<'SH'
#!/bin/sh
echo "crashing-coder: cannot work today" >&2
exit 3
SH
chmod +x "$T/bin/crashing-coder"
sed -i "s|$T/bin/no-such-coder|$T/bin/crashing-coder|" "$T/demo/agents.yaml"
run tandem run --repo "$T/demo" "make the failing test pass"
expect_rc 1 "agent keeps crashing"
expect_in "$T/err" "agent coder-1 exited with status 3, 3 times in a row"
expect_in "$T/err" "crashing-coder: cannot work today"
expect_no_leftovers "$(session_dir)"
pass "an agent that keeps crashing fails the run with its last log lines"

# an agent whose own configuration is wrong exits 2: no retries
cat >"$T/bin/misconfigured-coder" <<'SH'
#!/bin/sh
echo "misconfigured-coder: agents.yaml is wrong" >&2
exit 2
SH
chmod +x "$T/bin/misconfigured-coder"
sed -i "s|$T/bin/crashing-coder|$T/bin/misconfigured-coder|" "$T/demo/agents.yaml"
run tandem run --repo "$T/demo" "make the failing test pass"
expect_rc 1 "agent configuration error"
expect_in "$T/err" "agent coder-1 exited with status 2: its configuration is wrong"
expect_in "$T/err" "misconfigured-coder: agents.yaml is wrong"
pass "an agent that exits 2 is not restarted"

# an agent's error is not an answer: once the cause is fixed, resume asks
# again instead of replaying the failure
copy_demo
demo_config "$FIX/cassette-short.json"
run tandem run --repo "$T/demo" "make the failing test pass"
expect_rc 1 "the cassette runs out"
id=$(basename "$(session_dir)")
demo_config "$TOP/examples/demo/cassette.json"
run "$BIN/tandem" resume --repo "$T/demo" "$id"
expect_rc 0 "resumed once the cassette is complete"
expect_in "$T/err" "approved after 2 iterations"
expect_in "$T/out" "+    return (double)sum / (double)count;"
pass "resume after an agent error asks the agent again"
