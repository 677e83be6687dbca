#!/bin/sh
# A reviewer quorum: the skills run once, every member critiques the same
# evidence with its own model, and the gate merges the critiques under
# agents.reviewer.quorum (all or majority).
. "$(dirname "$0")/lib.sh"

copy_demo
# member 1 answers from the demo cassette (approves attempt 2), member 2
# from the dissent cassette (asks for a revision at attempt 2)
quorum_config() { # COUNT QUORUM MODEL...
    count=$1 quorum=$2
    shift 2
    {
        echo "gate:"
        echo "  max_iterations: 2"
        echo "  escalate: never"
        echo "agents:"
        echo "  coder:"
        echo "    llm: {provider: replay, cassette: \"$TOP/examples/demo/cassette.json\"}"
        echo "  reviewer:"
        echo "    count: $count"
        echo "    quorum: $quorum"
        echo "    llm: {provider: replay, cassette: \"$TOP/examples/demo/cassette.json\"}"
        echo "    models:"
        for m in "$@"; do
            echo "      - {provider: replay, cassette: \"$m\"}"
        done
        echo "    skills: [build, test]"
        echo "skills:"
        echo "  build: {command: make, timeout_s: 60}"
        echo "  test: {command: make test, timeout_s: 60}"
    } >"$T/demo/agents.yaml"
}
DEMO=$TOP/examples/demo/cassette.json
DISSENT=$FIX/cassette-dissent.json

# all: one dissent blocks the change
quorum_config 2 all "$DEMO" "$DISSENT"
run tandem run --repo "$T/demo" "make the failing test pass"
expect_rc 1 "quorum all, one member dissents"
expect_in "$T/err" "1 of 2 approve (quorum: all)"
expect_in "$T/err" "sum is a long: many large values overflow it"
dir=$(session_dir)
expect_no_leftovers "$dir"
report=$dir/report.json
expect_in "$report" '"status": "escalated"'
expect_in "$report" '"member": 2'
expect_in "$report" '"verdict": "revise"'
# the skills ran once per attempt, in member 1; member 2 only judged
grep -q 'test: pass' "$dir/logs/reviewer-1.log" ||
    fail "member 1 ran the tests (log: $(cat "$dir/logs/reviewer-1.log"))"
if grep -q 'test: \(pass\|fail\)' "$dir/logs/reviewer-2.log"; then
    fail "member 2 ran the skills again"
fi
# 2 coder calls + 2 members x 2 attempts
expect_in "$report" '"llm_calls": 6'
pass "quorum all: one member's revise blocks the change"

# majority: two of three approve, the change goes through; the dissent's
# issue is still reported
copy_demo
quorum_config 3 majority "$DEMO" "$DISSENT" "$DEMO"
run tandem run --repo "$T/demo" "make the failing test pass"
expect_rc 0 "quorum majority, two of three approve"
expect_in "$T/err" "2 of 3 approve (quorum: majority)"
report=$(session_dir)/report.json
expect_in "$report" '"status": "approved"'
expect_in "$report" '"llm_calls": 8'
expect_in "$T/out" "+    return (double)sum / (double)count;"
pass "quorum majority: two of three approve"

# majority of two is both: one dissent is not more than half
copy_demo
quorum_config 2 majority "$DEMO" "$DISSENT"
run tandem run --repo "$T/demo" "make the failing test pass"
expect_rc 1 "quorum majority of two with one dissent"
expect_in "$T/err" "1 of 2 approve (quorum: majority)"
pass "quorum majority: half is not a majority"

# a member whose model cannot answer fails the audit with its name
copy_demo
quorum_config 2 all "$DEMO" "$FIX/cassette-short.json"
run tandem run --repo "$T/demo" "make the failing test pass"
expect_rc 1 "a member's cassette runs out"
expect_in "$T/err" "failed: reviewer 2: agent error: cassette"
expect_no_leftovers "$(session_dir)"
# member 1 answered, and was paid: the failed session counts its call
# at attempt 2 (2 coder calls, 2 members at attempt 1, member 1 at
# attempt 2; it counted 4)
expect_in "$T/err" "failed after 2 iterations · 5 LLM calls"
expect_in "$(session_dir)/report.json" '"llm_calls": 5'
pass "a failing member fails the audit clearly"

# a member's agent, started by hand, without a quorum: the run waits for
# "reviewer" and says which agent is registered for a service it never
# asks (it said only "waiting for a reviewer agent", the agent connected
# and idle beside it)
copy_demo
port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
EP=tcp://127.0.0.1:$port
cat >"$T/demo/agents.yaml" <<YAML
orchestrator: {endpoint: "$EP", insecure: true}
agents:
  coder:
    llm: {provider: replay, cassette: "$DEMO"}
  reviewer:
    count: 0
    llm: {provider: replay, cassette: "$DEMO"}
    skills: [build, test]
skills:
  build: {command: make, timeout_s: 60}
  test: {command: make test, timeout_s: 60}
YAML
"$BIN/tandem" run --repo "$T/demo" "make the failing test pass" \
    >"$T/out" 2>"$T/err" &
RUN=$!
BG_PIDS="$BG_PIDS $RUN"
# the run says it waits; the member's agent registers after that, and is
# named when it does (said once, at 3 s, it went unnamed when it came
# later: a slow host, or a person starting it on seeing the message)
i=0
until grep -q "waiting for a reviewer agent to connect" "$T/err"; do
    i=$((i + 1))
    [ $i -gt 6000 ] && fail "no waiting message: $(cat "$T/err")"
    sleep 0.01
done
"$BIN/tandem-reviewer" --connect "$EP" --config "$T/demo/agents.yaml" \
    --service reviewer.1 --member 1 --heartbeat 1000 >"$T/member.log" 2>&1 &
MEMBER=$!
BG_PIDS="$BG_PIDS $MEMBER"
i=0
until grep -q "is registered for the service reviewer.1" "$T/err"; do
    i=$((i + 1))
    [ $i -gt 6000 ] && fail "no agent named: $(cat "$T/err")"
    sleep 0.01
done
kill -TERM "$RUN" "$MEMBER"
wait "$RUN" "$MEMBER" 2>/dev/null
expect_in "$T/err" "waiting for a reviewer agent to connect to $EP; agent "
expect_in "$T/err" " is registered for the service reviewer.1, which this run does not ask: start it with --service reviewer"
pass "an agent registered for a service the run never asks is named"
