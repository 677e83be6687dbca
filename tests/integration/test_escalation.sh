#!/bin/sh
# A loop that cannot converge goes to a person. queue: the session waits
# on disk (exit 3) and tandem approve|reject|guide|budget answer it and go
# on; tty: a prompt on the terminal; never: exit 1. Every answer is
# journaled with its time and who gave it; session ids may be given by a
# unique prefix.
. "$(dirname "$0")/lib.sh"

# one attempt only: the demo's first (failing) attempt escalates
escalating_demo() {
    copy_demo
    demo_config "$1" <<'YAML'
gate:
  max_iterations: 1
  escalate: queue
YAML
}

escalating_demo "$TOP/examples/demo/cassette.json"
run tandem run --repo "$T/demo" "make the failing test pass"
expect_rc 3 "queued"
expect_in "$T/err" "== tandem needs a human =="
expect_in "$T/err" "why: gate.max_iterations (1) reached"
expect_in "$T/err" "the last proposal (attempt 1):"
expect_in "$T/err" "test fail (exit 2), the end of its output:"
expect_in "$T/err" "    FAIL stats_mean({1,2,3,4}) = 2.000000, expected 2.500000"
expect_in "$T/err" "the reviewer's issues:"
expect_in "$T/err" "  stats.c:11 major: The division is still done in integers"
expect_in "$T/err" "tandem approve "
expect_in "$T/err" "tandem guide "
id=$(basename "$(session_dir)")
dir=$(session_dir)
expect_in "$dir/journal.jsonl" '"type":"escalation"'
expect_not_in "$dir/journal.jsonl" '"type":"finish"'
pass "queue: the session waits on disk and says how to answer (exit 3)"

# a session another tandem holds (its lock taken) cannot be answered:
# exit 2, as for any session that does not wait, naming the holder
mkfifo "$T/hold"
flock "$dir/lock" cat "$T/hold" >/dev/null &
holder=$!
i=0
while flock -n "$dir/lock" true; do
    i=$((i + 1))
    [ $i -gt 1000 ] && fail "the lock was not taken"
    sleep 0.01
done
for answer in approve "reject -m no" "guide -m x" "budget --iterations 1" resume; do
    run "$BIN/tandem" $answer --repo "$T/demo" "$id"
    expect_rc 2 "$answer of a session another tandem holds"
    expect_in "$T/err" "session $id is being worked on by another tandem"
    expect_in "$T/err" "tandem watch $id"
done
echo >"$T/hold"
wait $holder
expect_not_in "$dir/journal.jsonl" '"kind":"approve"'
pass "answering a session another tandem holds is exit 2"

# approve by a unique prefix of the id: attempt 1's diff becomes final
run "$BIN/tandem" approve --repo "$T/demo" "$(echo "$id" | cut -c1-17)"
expect_rc 0 "approved by a person"
expect_in "$T/out" "+    return (double)(sum / (long)count);"
expect_in "$dir/report.json" '"status": "approved"'
expect_in "$dir/report.json" '"reason": "approved by a person"'
expect_in "$dir/journal.jsonl" '"kind":"approve"'
# who answered: the system's name for the user running the command
me=$(id -un)
expect_in "$dir/journal.jsonl" "\"by\":\"command\",\"user\":\"$me\""
expect_in "$dir/decisions.md" "a person answered approve"
cmp -s "$dir/final.diff" "$T/out" || fail "final.diff differs from stdout"
run "$BIN/tandem" show --repo "$T/demo" "$id"
expect_rc 0 "show"
expect_in "$T/out" "By $me, with a tandem command."
run "$BIN/tandem" approve --repo "$T/demo" "$id"
expect_rc 2 "an answer to a session that finished"
expect_in "$T/err" "already finished: approved; there is nothing to answer"
run "$BIN/tandem" resume --repo "$T/demo" "$id"
expect_rc 0 "resume of a session that finished approved"
expect_in "$T/err" "already finished: approved"
pass "approve (by id prefix) makes the last proposal final"

escalating_demo "$TOP/examples/demo/cassette.json"
run tandem run --repo "$T/demo" "make the failing test pass"
dir=$(session_dir)
id=$(basename "$dir")
run "$BIN/tandem" reject --repo "$T/demo" "$id"
expect_rc 2 "reject without a reason"
expect_in "$T/err" "reject: say it with -m TEXT"
# blank is no reason: it was journaled ("rejected by a person:  ") and
# blank guidance spent an attempt on a prompt that said nothing
run "$BIN/tandem" reject --repo "$T/demo" "$id" -m "   "
expect_rc 2 "reject with a blank reason"
expect_in "$T/err" "reject: say it with -m TEXT"
run "$BIN/tandem" guide --repo "$T/demo" "$id" -m "$(printf ' \t ')"
expect_rc 2 "blank guidance"
expect_in "$T/err" "guide: say it with -m TEXT"
expect_not_in "$dir/journal.jsonl" '"type":"answer"'
run "$BIN/tandem" reject --repo "$T/demo" "$id" -m "not this way"
expect_rc 1 "rejected"
expect_in "$(session_dir)/report.json" '"status": "rejected"'
expect_in "$(session_dir)/report.json" "rejected by a person: not this way"
pass "reject -m WHY ends the session, rejected (exit 1)"

escalating_demo "$FIX/cassette-guided.json"
run tandem run --repo "$T/demo" "make the failing test pass"
id=$(basename "$(session_dir)")
run "$BIN/tandem" guide --repo "$T/demo" "$id" -m "divide in floating point"
expect_rc 0 "guided to approval"
expect_in "$T/err" "[2/2] approve"
expect_in "$T/err" "approved after 2 iterations · 4 LLM calls"
expect_in "$(session_dir)/reflection.md" "A person answered: guide"
# the run that went on added to it: the same as rebuilt whole
reflection_is_rebuilt "$T/demo" "$(session_dir)"
pass "guide -m TEXT puts the guidance in the coder's next prompt and goes on"

escalating_demo "$TOP/examples/demo/cassette.json"
run tandem run --repo "$T/demo" "make the failing test pass"
id=$(basename "$(session_dir)")
run "$BIN/tandem" budget --repo "$T/demo" "$id"
expect_rc 2 "budget without an amount"
run "$BIN/tandem" budget --repo "$T/demo" "$id" --iterations 2
expect_rc 0 "more attempts"
expect_in "$T/err" "[2/3] approve"
pass "budget --iterations N grants more attempts and goes on"

run "$BIN/tandem" resume --repo "$T/demo" nosuchsession
expect_rc 2 "unknown id"
expect_in "$T/err" "no session matches 'nosuchsession'"
escalating_demo "$TOP/examples/demo/cassette.json"
run tandem run --repo "$T/demo" "x"
run tandem run --repo "$T/demo" "x"
run "$BIN/tandem" approve --repo "$T/demo" 2
expect_rc 2 "ambiguous prefix"
expect_in "$T/err" "matches 2 sessions"
pass "unknown and ambiguous session ids are usage errors"

# tty: answered on a pseudo-terminal (script(1) gives the run one)
escalating_demo "$FIX/cassette-guided.json"
sed -i 's/escalate: queue/escalate: tty/' "$T/demo/agents.yaml"
printf 'x\ng\n\ndivide in floating point\n' >"$T/answers"
script -qec "'$BIN/tandem' run --repo '$T/demo' 'make the failing test pass' \
    </dev/tty" /dev/null <"$T/answers" >"$T/out" 2>"$T/err"
RC=$?
expect_rc 0 "answered on the terminal"
expect_in "$T/out" "choice [a/r/g/b/s/q]>"
expect_in "$T/out" "a, r, g, b, s or q (or the word), please"
expect_in "$T/out" "guidance for the coder>"
expect_in "$T/out" "approved after 2 iterations"
dir=$(ls -d "$T"/demo/.tandem/sessions/*/ | tail -n 1)
expect_in "$dir/journal.jsonl" "\"by\":\"tty\",\"user\":\"$me\""
pass "tty: a prompt on the terminal takes the answer"

escalating_demo "$TOP/examples/demo/cassette.json"
sed -i 's/escalate: queue/escalate: never/' "$T/demo/agents.yaml"
run tandem run --repo "$T/demo" "make the failing test pass"
expect_rc 1 "never"
expect_in "$T/err" "needs a human: gate.max_iterations (1) reached"
expect_in "$(session_dir)/journal.jsonl" '"type":"finish"'
pass "never: exit 1 with the reason"

# the journal's words are read once, by name: an answer or a status that
# is none tandem knows stops it, naming the line, the value and the names
escalating_demo "$TOP/examples/demo/cassette.json"
run tandem run --repo "$T/demo" "make the failing test pass"
expect_rc 3 "queued again"
id=$(basename "$(session_dir)")
dir=$(session_dir)
cp "$dir/journal.jsonl" "$T/journal.orig"
line=$(($(wc -l <"$dir/journal.jsonl") + 1))
printf '{"seq":%d,"time":"2026-01-01T00:00:00.000Z","type":"answer","kind":"maybe","by":"command"}\n' \
    "$line" >>"$dir/journal.jsonl"
run "$BIN/tandem" resume --repo "$T/demo" "$id"
expect_rc 1 "an unknown answer"
expect_in "$T/err" "session $id: journal.jsonl:$line: unknown answer 'maybe' (known: approve, reject, guide, budget, skip, stop)"
expect_not_in "$dir/journal.jsonl" '"type":"finish"'
cp "$T/journal.orig" "$dir/journal.jsonl"
printf '{"seq":%d,"time":"2026-01-01T00:00:00.000Z","type":"finish","status":"done"}\n' \
    "$line" >>"$dir/journal.jsonl"
run "$BIN/tandem" approve --repo "$T/demo" "$id"
expect_rc 1 "an unknown status"
expect_in "$T/err" "session $id: journal.jsonl:$line: unknown session status 'done' (known: approved, rejected, escalated, failed, interrupted)"
run "$BIN/tandem" sessions --repo "$T/demo"
expect_rc 0 "sessions lists it"
expect_in "$T/out" "unreadable"
expect_in "$T/err" "session $id: journal.jsonl:$line: unknown session status 'done'"
pass "an unknown answer or status in the journal is an error that names it"

# a long failing output: only its last 15 lines are shown
escalating_demo "$TOP/examples/demo/cassette.json"
sed -i 's/test: {command: make test,/test: {command: "make test; s=$?; seq 101 140; exit $s",/' \
    "$T/demo/agents.yaml"
run tandem run --repo "$T/demo" "make the failing test pass"
expect_rc 3 "queued, long output"
expect_in "$T/err" "    140"
expect_in "$T/err" "    127"
expect_not_in "$T/err" "    126"
pass "the escalation shows the tail of the failing output"


# what the model wrote reaches the person without terminal escapes (the
# diff set the window title and cleared the screen)
python3 - "$TOP/examples/demo/cassette.json" "$T/esc.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
ex = d["exchanges"]
E = "\x1b"
ex[0]["answer"] = ex[0]["answer"].replace(
    "return (double)(sum / (long)count);",
    "return (double)(sum / (long)count); /* " + E + "]0;PWNED\x07" + E + "[2J */")
ex[1]["answer"] = ex[1]["answer"].replace(
    '"file": "stats.c"', '"file": "stats.c' + E + '[42mX"')
ex[1]["expect"] = []
json.dump(d, open(sys.argv[2], "w"))
PY
escalating_demo "$T/esc.json"
run tandem run --repo "$T/demo" "make the failing test pass"
expect_rc 3 "queued, escapes in the model's words"
expect_in "$T/err" "== tandem needs a human =="
if LC_ALL=C grep -q "$(printf '\033')" "$T/err"; then
    fail "an escape reached the person: $(cat -v "$T/err")"
fi
pass "the escalation shows no terminal escape the model wrote"

# forger_demo LLM: the demo, one attempt, escalating to the queue; the
# coder proposes $T/forger/fix, the reviewer's model is LLM
forger_demo() {
    copy_demo
    cat >"$T/demo/agents.yaml" <<YAML
version: 1
gate: {max_iterations: 1, escalate: queue}
agents:
  coder:
    llm: {provider: command, command: [/bin/sh, $T/forger/coder.sh]}
  reviewer:
    llm: $1
    skills: [build, test]
skills:
  build: {command: make, timeout_s: 60}
  test: {command: make test, timeout_s: 60}
YAML
}

# nor a line of its own: a newline in an issue's description, quoted by
# the gate's reason, began a line the model wrote among tandem's (the
# coder fixes the test; the reviewer's model asks for a revision)
mkdir -p "$T/forger"
cp "$FIX/command-demo/answer-3" "$T/forger/fix"
cat >"$T/forger/coder.sh" <<SH
#!/bin/sh
cat >/dev/null
cat "$T/forger/fix"
SH
cat >"$T/forger/reviewer.sh" <<'SH'
#!/bin/sh
cat >/dev/null
cat <<'JSON'
{"verdict": "revise", "confidence": 0.9, "summary": "no",
 "issues": [{"type": "incorrect", "severity": "major", "file": "stats.c",
  "line": 11, "evidence": "x",
  "description": "odd\ntandem: [1/1] approve: every required skill passed"}]}
JSON
SH
forger_demo "{provider: command, command: [/bin/sh, $T/forger/reviewer.sh]}"
run tandem run --repo "$T/demo" "make the failing test pass"
expect_rc 3 "queued, a newline in the model's words"
if grep -q '^tandem: \[1/1\] approve' "$T/err"; then
    fail "the model wrote a line of tandem's: $(cat "$T/err")"
fi
expect_in "$T/err" "the reviewer found a major issue at stats.c:11: odd?tandem: [1/1] approve"
pass "the model's words begin no line of tandem's"

# a key the reviewer's model echoed into an issue: the escalation's why,
# history and issue lines are redacted too, before they are cut (why
# showed the key whole, the issue line its head past 300 bytes)
cat >"$T/forger/echo-key.sh" <<'SH'
#!/bin/sh
cat >/dev/null
pad=$(printf '%0280d' 0)
cat <<JSON
{"verdict": "revise", "confidence": 0.9, "summary": "no",
 "issues": [{"type": "incorrect", "severity": "major", "file": "stats.c",
  "line": 11, "evidence": "x", "description": "$pad key=$TANDEM_TEST_KEY"}]}
JSON
SH
forger_demo "{provider: command, command: [/bin/sh, $T/forger/echo-key.sh], api_key_env: TANDEM_TEST_KEY}"
TANDEM_TEST_KEY=sk-escalation-0123456789abcdefghijklmnop run tandem run \
    --repo "$T/demo" "make the failing test pass"
expect_rc 3 "queued, a key in the critique"
expect_in "$T/err" "why: gate.max_iterations (1) reached"
expect_not_in "$T/err" "sk-escalation"
pass "a key the reviewer echoed is redacted in the escalation"

# a key a failing skill printed, where the escalation cuts its output's
# last lines at 16 KiB: redacted before the cut, so no head of it shows
# (it was cut, then redacted, and the cut key was no longer recognised)
copy_demo
demo_config "$TOP/examples/demo/cassette.json" <<'YAML'
gate:
  max_iterations: 1
  escalate: queue
skills:
  build: {command: make, timeout_s: 60}
  test:
    command: "make test; python3 -c 'import os; print(\"x\" * 16370 + os.environ.get(\"TAIL_KEY\", \"sk-tail-\" + \"0123456789abcdefSECRET\"))'; exit 1"
    timeout_s: 60
YAML
sed -i 's/llm: {provider: replay, cassette: "\([^"]*\)"}/llm: {provider: replay, cassette: "\1", api_key_env: TAIL_KEY}/' \
    "$T/demo/agents.yaml"
TAIL_KEY=sk-tail-0123456789abcdefSECRET run tandem run --repo "$T/demo" "make the failing test pass"
expect_rc 3 "escalated with the key in the skill's output"
expect_in "$T/err" "test fail (exit 1), the end of its output:"
expect_not_in "$T/err" "sk-tail-0123"
pass "a key in a skill's output is redacted before the escalation cuts it"

# The config edited between the escalation and the answer (max_iterations
# raised, the natural "give it room" edit): the gate would now decide to
# revise attempt 1, and the replay did, so the person's reject went
# unused, the coder was asked again, and the session ended approved
# (exit 0). A session goes on as it was decided, and says so.
escalating_demo "$TOP/examples/demo/cassette.json"
run tandem run --repo "$T/demo" "make the failing test pass"
expect_rc 3 "escalated after one attempt"
id=$(basename "$(session_dir)")
sed -i 's/max_iterations: 1/max_iterations: 3/' "$T/demo/agents.yaml"
run tandem reject --repo "$T/demo" "$id" -m "not this way"
expect_rc 1 "rejected by the person, whatever the config says now"
expect_in "$T/err" "the configuration changed since, and a session goes on as it was decided"
expect_not_in "$T/err" "approved after"
[ ! -s "$T/out" ] || fail "a rejected session printed a diff"
expect_in "$(session_dir)/report.json" '"status": "rejected"'
pass "a journaled decision stands when the config changed before the answer"

# a change proposed again is stopped before its audit: the person sees
# the audit of its first proposal (it was told "the budget ran out",
# with no budget set, and shown no evidence)
copy_demo
F=$FIX/command-demo
cat >"$T/demo/agents.yaml" <<YAML
version: 1
agents:
  coder: {llm: {provider: command, command: [cat, "$F/answer-1"]}}
  reviewer: {llm: {provider: command, command: [cat, "$F/answer-2"]}, skills: [build, test]}
skills:
  build: {command: make, timeout_s: 60}
  test: {command: make test, timeout_s: 60}
YAML
run tandem run --repo "$T/demo" "make the failing test pass" </dev/null
expect_rc 3 "a repeated change"
expect_in "$T/err" "why: stuck: attempt 2 proposes exactly the change of attempt 1"
expect_in "$T/err" "attempt 2's change is attempt 1's, audited then:"
expect_in "$T/err" "FAIL stats_mean({1,2,3,4})"
expect_not_in "$T/err" "budget ran out"
pass "a repeated change's question shows the audit of its first proposal"

# an issue's place the model names outside the workspace is not shown to
# the person (the journal keeps the reply as it came, and the question
# showed /etc/passwd:11, which the report and the findings leave out)
python3 - "$TOP/examples/demo/cassette.json" "$T/outside.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
a = c["exchanges"][1]["answer"]
assert '"file": "stats.c"' in a, a
c["exchanges"][1]["answer"] = a.replace('"file": "stats.c"', '"file": "/etc/passwd"')
json.dump(c, open(sys.argv[2], "w"))
PY
escalating_demo "$T/outside.json"
run tandem run --repo "$T/demo" "make the failing test pass"
expect_rc 3 "queued with a place outside"
expect_in "$T/err" "the reviewer's issues:"
expect_in "$T/err" "  major: The division is still done in integers"
expect_not_in "$T/err" "/etc/passwd:"
pass "the question shows no place outside the workspace"

# The files changed between the question and the answer (a context line
# of stats.c, which attempt 1's diff shows): approve and reject end the
# session as the person was shown it, attempt 1 as the session holds it
# (they were refused, the answer not taken, and the session could not
# end until the files were put back); guide and budget go on from the
# files as they are now, so they are refused, naming the file
edited_after_question() { # CASSETTE: escalated, then stats.c edited
    escalating_demo "$1"
    run tandem run --repo "$T/demo" "make the failing test pass"
    expect_rc 3 "escalated after one attempt"
    dir=$(session_dir)
    id=$(basename "$dir")
    cp "$dir/attempt-1.diff" "$T/seen.diff"
    sed -i 's/sum += values\[i\];/sum += values[i]; \/\/ add them up/' "$T/demo/stats.c"
}
edited_after_question "$TOP/examples/demo/cassette.json"
cp "$dir/report.json" "$T/question.json"
for answer in "guide -m divide-as-doubles" "budget --iterations 1"; do
    run tandem $answer --repo "$T/demo" "$id"
    expect_rc 1 "$answer on changed files"
    expect_in "$T/err" "tandem: $T/demo changed since this session started: attempt 1's change to stats.c, made again from its journaled edits, is not the one its journaled audit saw (attempt-1.diff), so the session cannot go on"
    expect_in "$T/err" "tandem approve or tandem reject still end it"
    expect_in "$T/err" "tandem: your ${answer%% *} was not taken (nothing was journaled): session $id still waits for a person, on the question it asked (gate.max_iterations (1) reached;"
    expect_in "$T/err" "answer it from $T/demo with tandem approve|reject|guide|budget $id"
    # the session did not fail: nothing says so (report.json said
    # failed while the journal waited, and a pipeline reading it, or
    # submit --attach, was told the session had failed)
    expect_not_in "$T/err" "failed after"
    expect_not_in "$T/err" "failed: "
    expect_not_in "$dir/journal.jsonl" '"type":"answer"'
    cmp -s "$dir/report.json" "$T/question.json" ||
        fail "a refused $answer rewrote the question's report.json"
done
# a resume that stops on the way back to the question leaves it as well
run tandem resume --repo "$T/demo" "$id"
expect_rc 1 "a resume on changed files"
expect_in "$T/err" "tandem: session $id still waits for a person, on the question it asked"
cmp -s "$dir/report.json" "$T/question.json" ||
    fail "a resume on changed files rewrote the question's report.json"
# with no report of the question (a full disk then), one is written that
# says the session waits, the question's reason its reason
rm "$dir/report.json"
run tandem guide -m again --repo "$T/demo" "$id"
expect_rc 1 "a guide on changed files, no report"
expect_in "$dir/report.json" '"status": "escalated"'
expect_in "$dir/report.json" '"reason": "gate.max_iterations (1) reached'
run "$BIN/tandem" sessions --repo "$T/demo"
expect_in "$T/out" "$id   waiting"
cmp -s "$dir/attempt-1.diff" "$T/seen.diff" || fail "attempt-1.diff was rewritten"
run tandem approve --repo "$T/demo" "$id"
expect_rc 0 "approved on changed files"
expect_in "$T/err" "warning: attempt 1's change to stats.c, made again from its journaled edits, is not the one the session holds (attempt-1.diff); your approve ends the session"
cmp -s "$T/out" "$T/seen.diff" || fail "stdout is not the diff the person was shown"
cmp -s "$dir/final.diff" "$T/seen.diff" || fail "final.diff is not the diff the person was shown"
cmp -s "$dir/attempt-1.diff" "$T/seen.diff" || fail "attempt-1.diff was rewritten"
expect_in "$dir/journal.jsonl" '"type":"finish","status":"approved","reason":"approved by a person"'
expect_in "$dir/report.json" '"status": "approved"'
expect_in "$T/demo/stats.c" "sum += values[i]; // add them up"
expect_not_in "$T/demo/stats.c" "(double)"
pass "approve after the files changed takes the diff the person was shown; guide and budget are refused, naming the file"

edited_after_question "$TOP/examples/demo/cassette.json"
run tandem reject --repo "$T/demo" "$id" -m "not this way"
expect_rc 1 "rejected on changed files"
[ ! -s "$T/out" ] || fail "a rejected session printed a diff"
expect_in "$dir/journal.jsonl" '"type":"finish","status":"rejected","reason":"rejected by a person: not this way"'
expect_in "$dir/report.json" '"status": "rejected"'
run "$BIN/tandem" sessions --repo "$T/demo"
expect_in "$T/out" "$id   rejected"
pass "reject after the files changed ends the session rejected"

# earlier attempts replayed on the changed files, as the session holds
# them: edits that no longer apply at all (attempt 1's and 2's line
# rewritten), and a change proposed again (stuck: attempt 2's is attempt
# 1's, never audited), which on the new files no longer repeated
# anything and was audited again before the question was reached
copy_demo
demo_config "$TOP/examples/demo/cassette.json" <<'YAML'
gate:
  max_iterations: 3
  escalate: queue
  risk_paths: [stats.c]
YAML
run tandem run --repo "$T/demo" "make the failing test pass"
expect_rc 3 "attempt 2 touches a risk path"
dir=$(session_dir)
cp "$dir/attempt-2.diff" "$T/seen.diff"
asked=$(grep -c '"type":"asked"' "$dir/journal.jsonl")
sed -i 's/return sum \/ count;/return (sum \/ count);/' "$T/demo/stats.c"
run tandem approve --repo "$T/demo" "$(basename "$dir")"
expect_rc 0 "approved, the edits no longer applying"
expect_in "$T/err" "warning: attempt 1's change to stats.c"
cmp -s "$T/out" "$T/seen.diff" || fail "stdout is not attempt 2's diff"
cmp -s "$dir/final.diff" "$T/seen.diff" || fail "final.diff is not attempt 2's diff"
[ "$(grep -c '"type":"asked"' "$dir/journal.jsonl")" = "$asked" ] ||
    fail "the approve asked an agent"
copy_demo
F=$FIX/command-demo
cat >"$T/demo/agents.yaml" <<YAML
version: 1
agents:
  coder: {llm: {provider: command, command: [cat, "$F/answer-1"]}}
  reviewer: {llm: {provider: command, command: [cat, "$F/answer-2"]}, skills: [build, test]}
skills:
  build: {command: make, timeout_s: 60}
  test: {command: make test, timeout_s: 60}
YAML
run tandem run --repo "$T/demo" "make the failing test pass" </dev/null
expect_rc 3 "a repeated change"
dir=$(session_dir)
cp "$dir/attempt-2.diff" "$T/seen.diff"
asked=$(grep -c '"type":"asked"' "$dir/journal.jsonl")
sed -i 's/sum += values\[i\];/sum += values[i]; \/\/ add them up/' "$T/demo/stats.c"
run tandem approve --repo "$T/demo" "$(basename "$dir")" </dev/null
expect_rc 0 "approved, the repeated change replayed on changed files"
expect_in "$T/err" "[2/3] escalate: stuck: attempt 2 proposes exactly the change of attempt 1"
cmp -s "$T/out" "$T/seen.diff" || fail "stdout is not attempt 2's diff"
[ "$(grep -c '"type":"asked"' "$dir/journal.jsonl")" = "$asked" ] ||
    fail "the approve asked an agent"
expect_not_in "$dir/journal.jsonl" '"type":"audit","attempt":2'
pass "approve after the files changed replays every attempt as the session holds it, asking no agent"
