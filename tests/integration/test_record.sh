#!/bin/sh
# tandem run --record FILE: a live run's answers become a cassette that the
# replay provider plays back exactly: same diff, same decisions, same
# tokens, no model needed.
. "$(dirname "$0")/lib.sh"

export OPENAI_API_KEY=sk-record-0123456789SECRET
copy_demo
start_fakellm "$FIX/demo-openai.json"
run tandem run --repo "$T/demo" --llm openai:fake-model \
    --base-url "$FAKE_URL/v1" --record "$T/recorded.json" \
    "make the failing test pass"
expect_rc 0 "the live run"
expect_in "$T/err" "recorded 4 exchanges in $T/recorded.json"
cp "$T/out" "$T/live.diff"
cp "$(session_dir)/report.json" "$T/live-report.json"
[ ! -e "$T/recorded.json.partial" ] || fail "the partial recording was left"
expect_not_in "$T/recorded.json" "$OPENAI_API_KEY"
expect_in "$T/recorded.json" '"tandem_cassette": 1'
kill "$FAKE_PID"; wait "$FAKE_PID" 2>/dev/null; FAKE_PID=
pass "a live run writes a cassette of its four answers"

# Play it back with no server at all.
copy_demo
demo_config "$T/recorded.json"
run tandem run --repo "$T/demo" "make the failing test pass"
expect_rc 0 "the replayed run"
cmp -s "$T/out" "$T/live.diff" || fail "the replay's diff differs"
replay=$(session_dir)
for field in '"iterations"' '"llm_calls"' '"prompt"' '"completion"' \
    '"decision"'; do
    a=$(grep "$field" "$T/live-report.json" | tr -d ' ')
    b=$(grep "$field" "$replay/report.json" | tr -d ' ')
    [ "$a" = "$b" ] || fail "report field $field differs: $a vs $b"
done
pass "the cassette replays the run exactly (diff, decisions, tokens)"

run tandem run --repo "$T/demo" --record "$T/again.json" "x"
expect_rc 2 "recording a replay"
expect_in "$T/err" "--record records a live model's answers"
run tandem run --repo "$T/demo" --llm openai:m --record "$T/no/dir/x.json" "x"
expect_rc 2 "no directory"
expect_in "$T/err" "--record $T/no/dir/x.json: its directory does not exist"
pass "--record refuses what it cannot do, before starting"
