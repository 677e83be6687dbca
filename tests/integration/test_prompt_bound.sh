#!/bin/sh
# Retry prompts stay bounded: after four failed attempts, with their
# feedback, history and diffs, the coder's fifth prompt is less than 1.5
# times its first (measured on the requests the fake server received).
. "$(dirname "$0")/lib.sh"

copy_demo
start_fakellm "$FIX/five-wrong-fixes.json"
demo_config "$TOP/examples/demo/cassette.json" <<'YAML'
gate:
  max_iterations: 5
  persistent_failure_threshold: 10
YAML
run tandem run --repo "$T/demo" --llm openai:fake-model \
    --base-url "$FAKE_URL/v1" "make the failing test pass"
expect_rc 3 "five failures"
expect_in "$T/err" "gate.max_iterations (5) reached"
[ "$(grep -c '"path":"/v1/chat/completions"' "$FAKE_LOG")" = 10 ] ||
    fail "expected 10 requests"
# requests alternate coder, reviewer: the coder's are lines 1, 3, 5, 7, 9;
# the fake server's own counts (request bytes / 4) are its prompt tokens
sizes=$(awk 'NR % 2 == 1 { print length($0) }' "$FAKE_LOG" | tr '\n' ' ')
echo "coder prompt sizes (bytes of the logged request): $sizes"
first=$(echo "$sizes" | cut -d' ' -f1)
fifth=$(echo "$sizes" | cut -d' ' -f5)
[ $((fifth * 2)) -lt $((first * 3)) ] ||
    fail "prompt 5 ($fifth) is 1.5 times prompt 1 ($first) or more"
dir=$(session_dir)
expect_in "$dir/report.json" '"iterations": 5'
pass "the fifth coder prompt is under 1.5x the first ($fifth vs $first bytes)"
