#!/bin/sh
# A reply that cannot be used (not JSON, the wrong type, another task's
# ids, a FINAL under the wrong address) is the agent's fault, not the
# task's: the agent is dropped, the request goes out again, and the bad
# reply is never journaled, so a resume cannot replay it. An agent that
# never answers properly fails the run after TND_CREW_MAX_INVALID (3)
# replies, naming itself. Places a reviewer reports outside the
# workspace, or at files that are not there, are left out. The coder here is tests/agents/scripted.py, an
# agent written from PROTOCOL.md that follows a plan.
. "$(dirname "$0")/lib.sh"

PY=/usr/bin/python3
AGENT=$TOP/tests/agents/scripted.py
$PY -c 'import zmq' 2>/dev/null || fail "python3-zmq is missing (make deps)"

# A repository whose one check passes once x.txt says "fixed".
repo=$T/repo
mkdir -p "$repo"
printf 'broken\n' >"$repo/x.txt"
cat >"$T/cassette.json" <<'JSON'
{"tandem_cassette": 1, "exchanges": [
 {"role": "reviewer", "attempt": 1, "call": 1,
  "answer": "{\"verdict\":\"approve\",\"confidence\":0.95,\"issues\":[],\"summary\":\"fine\"}"},
 {"role": "reviewer", "attempt": 2, "call": 1,
  "answer": "{\"verdict\":\"approve\",\"confidence\":0.95,\"issues\":[],\"summary\":\"fine\"}"}
]}
JSON
# config FILE [MORE]: the coder from outside, the reviewer ours; MORE is
# more of the orchestrator section
config() {
    cat >"$1" <<YAML
version: 1
orchestrator: {endpoint: "ipc://$T/broker.sock"${2:+, $2}}
gate: {max_iterations: 2, escalate: never}
agents:
  coder:
    count: 0
  reviewer:
    llm: {provider: replay, cassette: "$T/cassette.json"}
    skills: [check]
skills:
  check: {command: "grep -q fixed x.txt", required: true, timeout_s: 20}
YAML
}
config "$T/agents.yaml"

# start_agent PLAN...: the scripted coder, in the background
start_agent() {
    $PY "$AGENT" "ipc://$T/broker.sock" coder scripted-coder "$@" \
        >"$T/agent.out" 2>&1 &
    AGENT_PID=$!
}

start_agent garbage wrong-type edit:x.txt
TANDEM_TIMEOUT=60 run tandem run --repo "$repo" --config "$T/agents.yaml" \
    "make x.txt say fixed"
wait $AGENT_PID
expect_rc 0 "approved once the agent answered properly"
expect_in "$T/err" "the coder agent scripted-coder sent a reply that cannot be used"
expect_in "$T/err" "asking again (2 of 3)"
expect_in "$T/err" "asking again (3 of 3)"
expect_in "$T/out" "+fixed"
dir=$(session_dir)
expect_in "$dir/journal.jsonl" '"rationale":"scripted"'
expect_not_in "$dir/journal.jsonl" "audit_reply\",\"task_id\":\"$(basename "$dir")\",\"attempt\":1}"
[ "$(grep -c '"type":"proposal"' "$dir/journal.jsonl")" = 1 ] ||
    fail "exactly one proposal should be journaled"
pass "unusable replies drop the agent and the request goes out again"

start_agent wrong-addr edit:x.txt
TANDEM_TIMEOUT=60 run tandem run --repo "$repo" --config "$T/agents.yaml" \
    "make x.txt say fixed"
wait $AGENT_PID
expect_rc 0 "approved after the wrong address"
expect_in "$T/err" "disconnecting scripted-coder: it sent a FINAL for"
pass "a FINAL under another address drops the agent at once, not at the timeout"

# acknowledged, then nothing but heartbeats: given up on within the
# broker's liveness (200 ms x 3 here), not at the request's timeout
config "$T/agents-quick.yaml" "heartbeat_ms: 200, liveness: 3"
start_agent ack-then-nothing edit:x.txt
TANDEM_TIMEOUT=60 run tandem run --repo "$repo" --config "$T/agents-quick.yaml" \
    "make x.txt say fixed"
wait $AGENT_PID
expect_rc 0 "approved after the agent that went quiet was dropped"
expect_in "$T/err" "disconnecting scripted-coder: it stopped reporting on request"
pass "a request acknowledged and then left is given to an agent again at once"

start_agent garbage wrong-id garbage
TANDEM_TIMEOUT=60 run tandem run --repo "$repo" --config "$T/agents.yaml" \
    "make x.txt say fixed"
wait $AGENT_PID
expect_rc 1 "an agent that never answers properly fails the run"
expect_in "$T/err" "the coder agent scripted-coder sent a reply that cannot be used"
expect_in "$T/err" "not task"
expect_in "$T/err" "(3 such replies; giving up)"
dir=$(session_dir)
expect_not_in "$dir/journal.jsonl" '"type":"proposal"'
pass "three unusable replies fail the run, naming the agent; nothing is journaled"

# A reviewer (scripted too) that points at places outside the workspace
cat >"$T/agents2.yaml" <<YAML
version: 1
orchestrator: {endpoint: "ipc://$T/broker.sock"}
gate: {max_iterations: 2, escalate: never, baseline: false}
agents:
  coder: {count: 0}
  reviewer: {count: 0, skills: [check]}
skills:
  check: {command: "true", required: true}
YAML
start_agent edit:x.txt
$PY "$AGENT" "ipc://$T/broker.sock" reviewer scripted-reviewer audit-places \
    >"$T/reviewer.out" 2>&1 &
REVIEWER_PID=$!
TANDEM_TIMEOUT=60 run tandem run --repo "$repo" --config "$T/agents2.yaml" \
    "make x.txt say fixed"
wait $AGENT_PID
wait $REVIEWER_PID
expect_rc 0 "approved"
expect_in "$T/err" "issue 1 names /etc/shadow, not a file in the workspace"
expect_in "$T/err" "3 places the reviewer reported were left out"
dir=$(session_dir)
expect_in "$dir/report.json" "a place that is not in the workspace"
expect_not_in "$dir/report.json" "/etc/shadow"
pass "places outside the workspace or at no file are left out of the report"

# A skill's location whose file name carries escape codes is said
# without them (the warning printed the name as the agent sent it)
start_agent edit:x.txt
$PY "$AGENT" "ipc://$T/broker.sock" reviewer scripted-reviewer audit-escape \
    >"$T/reviewer.out" 2>&1 &
REVIEWER_PID=$!
TANDEM_TIMEOUT=60 run tandem run --repo "$repo" --config "$T/agents2.yaml" \
    "make x.txt say fixed"
wait $AGENT_PID
wait $REVIEWER_PID
expect_rc 0 "approved"
expect_in "$T/err" "red.c:1 is not a file in the workspace; left out"
if LC_ALL=C grep -q "$(printf '\033')" "$T/err"; then
    fail "an escape code reached the terminal: $(cat -v "$T/err")"
fi
pass "a skill location's file name reaches the terminal without escape codes"
