#!/bin/sh
# Budgets per task: crossing gate.max_tokens, max_llm_calls or max_wall_s
# stops the loop, hands the task to a human (exit 3) and says which.
. "$(dirname "$0")/lib.sh"

copy_demo
demo_config "$TOP/examples/demo/cassette.json" <<'YAML'
gate:
  max_tokens: 1500
YAML
run tandem run --repo "$T/demo" "make the failing test pass"
expect_rc 3 "token budget"
expect_in "$T/err" "budget: gate.max_tokens (1500) reached: 1787 tokens used"
expect_in "$T/err" "needs a human: gate.max_tokens (1500) reached"
dir=$(session_dir)
expect_in "$dir/report.json" '"status": "escalated"'
expect_in "$dir/report.json" '"llm_calls": 2'
pass "gate.max_tokens stops the loop before the next request"

copy_demo
demo_config "$TOP/examples/demo/cassette.json" <<'YAML'
gate:
  max_llm_calls: 3
YAML
run tandem run --repo "$T/demo" "make the failing test pass"
expect_rc 3 "call budget"
expect_in "$T/err" "budget: gate.max_llm_calls (3) reached: 3 calls made"
expect_not_in "$T/err" "[2/3] reviewer: auditing"
pass "gate.max_llm_calls stops the loop before the audit that would exceed it"

copy_demo
demo_config "$TOP/examples/demo/cassette.json" <<YAML
gate:
  max_wall_s: 1
skills:
  build: {command: make, timeout_s: 60}
  test: {command: "sleep 30.$$", timeout_s: 60}
YAML
start=$(date +%s)
run tandem run --repo "$T/demo" "make the failing test pass"
took=$(($(date +%s) - start))
expect_rc 3 "wall budget"
expect_in "$T/err" "budget: gate.max_wall_s (1) reached"
[ "$took" -lt 15 ] || fail "the wall budget did not bound the wait (${took}s)"
expect_no_leftovers "$(session_dir)"
if pgrep -f "sleep 30.$$" >/dev/null; then fail "the skill outlived the run"; fi
pass "gate.max_wall_s ends a wait in progress"
