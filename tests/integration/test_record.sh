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

# a replay for another task stops at the first prompt, naming the task
# (the recorded answers were played and their change approved, exit 0)
copy_demo
demo_config "$T/recorded.json"
run tandem run --repo "$T/demo" "add a median function"
expect_rc 1 "a replay for another task"
expect_in "$T/err" "the coder's prompt for attempt 1 call 1 should contain \"## Task  make the failing test pass  \""
pass "a recorded cassette replayed for another task says so"

run tandem run --repo "$T/demo" --record "$T/again.json" "x"
expect_rc 2 "recording a replay"
expect_in "$T/err" "--record records a live model's answers"
run tandem run --repo "$T/demo" --llm openai:m --record "$T/no/dir/x.json" "x"
expect_rc 2 "no directory"
expect_in "$T/err" "--record $T/no/dir/x.json: its directory does not exist"
pass "--record refuses what it cannot do, before starting"

# a recorded session that waits for a person and is answered: the
# cassette holds both runs' answers (the answer's run wrote it again
# with its own alone, and its replay had no first attempt)
copy_demo
start_fakellm "$FIX/demo-openai.json"
fake_config <<'YAML'
gate: {max_iterations: 1, escalate: queue}
YAML
run tandem run --repo "$T/demo" --record "$T/waited.json" \
    "make the failing test pass"
expect_rc 3 "the recorded run that waits"
[ -e "$T/waited.json.partial" ] || fail "the recording of a waiting session was not kept"
sid=$(ls "$T/demo/.tandem/sessions")
# a new run recording to the same FILE meanwhile is refused: it emptied
# the waiting session's answers, and the answer's cassette had no first
# attempt
cp "$T/waited.json.partial" "$T/waited.before"
run tandem run --repo "$T/demo" --record "$T/waited.json" "another task"
expect_rc 2 "a new recording over a waiting session's"
expect_in "$T/err" "$T/waited.json.partial holds the answers of a session that has not ended"
cmp -s "$T/waited.json.partial" "$T/waited.before" ||
    fail "the waiting session's recording changed"
run tandem budget --repo "$T/demo" "$sid" --iterations 1
expect_rc 0 "the answered session"
expect_in "$T/err" "recorded 4 exchanges in $T/waited.json"
[ ! -e "$T/waited.json.partial" ] || fail "the partial recording was left"
cp "$T/out" "$T/waited.diff"
kill "$FAKE_PID"; wait "$FAKE_PID" 2>/dev/null; FAKE_PID=
copy_demo
demo_config "$T/waited.json" <<'YAML'
gate: {max_iterations: 2, escalate: never}
YAML
run tandem run --repo "$T/demo" "make the failing test pass"
expect_rc 0 "the replay of the answered session"
cmp -s "$T/out" "$T/waited.diff" || fail "the replay's diff differs"
pass "a recorded session answered later keeps every answer in its cassette"

# a reviewer quorum: each member's critique is recorded under its own
# role (reviewer.N), and the replay gives each member its own; under one
# role the cassette kept one critique, and the replay's decision was not
# the live run's
copy_demo
python3 - "$FIX/demo-openai.json" "$FIX/cassette-dissent.json" "$T/quorum.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
dis = json.load(open(sys.argv[2]))
coder = dict(d["steps"][2]); coder.pop("expect", None)
approve = {"content": d["steps"][3]["content"]}
revise = {"content": dis["exchanges"][1]["answer"]}
json.dump({"steps": [coder, approve, revise]}, open(sys.argv[3], "w"))
PY
start_fakellm "$T/quorum.json"
quorum_config() { # LLM
    cat >"$T/demo/agents.yaml" <<YAML
version: 1
gate: {max_iterations: 1, escalate: never}
agents:
  coder:
    llm: $1
  reviewer:
    count: 2
    quorum: all
    llm: $1
    models: [$1, $1]
    skills: [build, test]
skills:
  build: {command: make, timeout_s: 60}
  test: {command: make test, timeout_s: 60}
YAML
}
quorum_config "{provider: openai, model: fake-model, base_url: \"$FAKE_URL/v1\"}"
run tandem run --repo "$T/demo" --record "$T/rec-quorum.json" "make the failing test pass"
expect_in "$T/err" "1 of 2 approve"
expect_in "$T/err" "recorded 3 exchanges"
live=$RC
kill "$FAKE_PID"; wait "$FAKE_PID" 2>/dev/null; FAKE_PID=
python3 -c '
import json, sys
roles = sorted(e["role"] for e in json.load(open(sys.argv[1]))["exchanges"])
assert roles == ["coder", "reviewer.1", "reviewer.2"], roles' "$T/rec-quorum.json" ||
    fail "the members were not recorded apart: $(cat "$T/rec-quorum.json")"
copy_demo
quorum_config "{provider: replay, cassette: \"$T/rec-quorum.json\"}"
run tandem run --repo "$T/demo" "make the failing test pass"
[ "$RC" = "$live" ] || fail "the replay exited $RC, the live run $live"
expect_in "$T/err" "1 of 2 approve"
pass "a quorum's members are recorded apart, and the replay decides as the live run did"

# --record over a file that is no cassette is refused before anything is
# asked: --record stats.c replaced a source file, and --record agents.yaml
# the config
copy_demo
cp "$T/demo/stats.c" "$T/stats.before"
run tandem run --repo "$T/demo" --llm openai:fake-model \
    --base-url "http://127.0.0.1:9/v1" --record "$T/demo/stats.c" "x"
expect_rc 2 "--record over a source file"
expect_in "$T/err" "--record $T/demo/stats.c: the file is there and is no tandem cassette"
cmp -s "$T/demo/stats.c" "$T/stats.before" || fail "stats.c was changed"
[ ! -e "$T/demo/stats.c.partial" ] || fail "a partial recording was left"
pass "--record refuses to replace a file that is no cassette"

# recording again over a cassette, in a run that fails at its first call
# (a server down): the good cassette was replaced by one of 0 exchanges
copy_demo
cp "$T/recorded.json" "$T/kept.json"
run tandem run --repo "$T/demo" --llm openai:fake-model \
    --base-url "http://127.0.0.1:9/v1" --record "$T/kept.json" \
    "make the failing test pass"
expect_rc 1 "a recording whose server is down"
expect_in "$T/err" "$T/kept.json is left as it was: this session did not end, and recorded no answer"
expect_not_in "$T/err" "recorded 0 exchanges"
cmp -s "$T/kept.json" "$T/recorded.json" || fail "the cassette was replaced"
pass "a session that did not end leaves a cassette that is there as it was"
[ ! -e "$T/kept.json.partial" ] || fail "an empty recording was left"

# two runs recording to the same FILE at once: the second emptied and
# removed the first's FILE.partial, the first removed the second's, and
# the cassette written last held no answer of either; FILE.partial is
# locked while a run records (flock(1) holds it here, as a run would)
copy_demo
echo '{"role":"coder","attempt":1,"call":1,"answer":"theirs"}' \
    >"$T/busy.json.partial"
run flock "$T/busy.json.partial" "$BIN/tandem" run --repo "$T/demo" \
    --llm openai:fake-model --base-url "http://127.0.0.1:9/v1" \
    --record "$T/busy.json" "make the failing test pass"
expect_rc 2 "a recording another run holds"
expect_in "$T/err" "--record $T/busy.json: another tandem run is recording to it now (it holds $T/busy.json.partial); wait for that run to end, or name another file"
[ ! -d "$T/demo/.tandem" ] || fail "a session was made"
expect_in "$T/busy.json.partial" '"answer":"theirs"'
pass "a recording another run holds is refused before anything starts"
