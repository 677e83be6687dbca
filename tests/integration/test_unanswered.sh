#!/bin/sh
# The report counts every model call paid, including those no journaled
# reply accounts for (issue 10, 7b). The fake LLM server is the
# provider's bill: every chat request it served is a call, and the
# report's llm_calls must equal their number.
# - tandem killed while the coder's request is at the model: `tandem
#   resume` asks again; the lost call counts once, as unanswered;
# - the coder agent killed while its request is at the model: the crew
#   sends it to the restarted coder; the same;
# - the coder's error reply after one answered call and a failed re-ask:
#   its exchanges' usage counts, tokens included, in the failed run's
#   report and in the resumed one's.
# Tokens are counted only where the server said what they were.
. "$(dirname "$0")/lib.sh"

KEY=sk-test-unanswered-0123456789
export OPENAI_API_KEY=$KEY

# script OUT FIRST...: the demo's four answers, each with its token
# counts (prompt 1000+i, completion 10+i for step i), after the JSON
# steps FIRST (none: nothing before them)
script() {
    out=$1
    shift
    /usr/bin/python3 - "$FIX/demo-openai.json" "$out" "$@" <<'PY'
import json, sys
demo = json.load(open(sys.argv[1]))["steps"]
for i, s in enumerate(demo):
    s["usage"] = {"prompt_tokens": 1000 + i, "completion_tokens": 10 + i}
first = [json.loads(a) for a in sys.argv[3:]]
json.dump({"steps": first + demo}, open(sys.argv[2], "w"))
PY
}
# the demo's tokens, as the script above serves them
DEMO_PROMPT=$((1000 + 1001 + 1002 + 1003))
DEMO_COMPLETION=$((10 + 11 + 12 + 13))

chat_requests() {
    if [ -e "$FAKE_LOG" ]; then
        grep -c '"path":"/v1/chat/completions"' "$FAKE_LOG"
    else
        echo 0
    fi
}

# wait_requests N: poll until the server has logged N chat requests
wait_requests() {
    i=0
    while [ "$(chat_requests)" -lt "$1" ]; do
        i=$((i + 1))
        [ $i -gt 3000 ] && fail "the model never got request $1"
        sleep 0.01
    done
}

# expect_report DIR CALLS UNANSWERED PROMPT COMPLETION
expect_report() {
    [ "$(json_int "$1/report.json" llm_calls)" = "$2" ] ||
        fail "llm_calls: $(json_int "$1/report.json" llm_calls), not $2"
    [ "$(json_int "$1/report.json" calls_unanswered)" = "$3" ] ||
        fail "calls_unanswered: $(json_int "$1/report.json" calls_unanswered), not $3"
    tokens=$(/usr/bin/python3 -c 'import json, sys
t = json.load(open(sys.argv[1]))["tokens"]
print(t["prompt"], t["completion"])' "$1/report.json")
    [ "$tokens" = "$4 $5" ] || fail "tokens: $tokens, not $4 $5"
}

stop_fakellm() {
    kill "$FAKE_PID"
    wait "$FAKE_PID" 2>/dev/null
    FAKE_PID=
}

# start_run: tandem in the background against the fake LLM; sets pid, sid
start_run() {
    "$BIN/tandem" run --repo "$T/demo" --llm openai:fake-model \
        --base-url "$FAKE_URL/v1" "make the failing test pass" \
        >"$T/out" 2>"$T/err" &
    pid=$!
}

session_id() {
    i=0
    while :; do
        sid=$(sed -n 's/^tandem: session \([^:]*\):.*/\1/p' "$T/err" | head -n 1)
        [ -n "$sid" ] && break
        i=$((i + 1))
        [ $i -gt 1000 ] && fail "no session id on stderr"
        sleep 0.01
    done
}

# ---- tandem killed while the model holds the coder's request -----------
copy_demo
script "$T/s.json" '{"stall": true}'
start_fakellm "$T/s.json"
start_run
wait_requests 1
session_id
kill -KILL $pid
wait $pid 2>/dev/null
i=0
while pgrep -f "$sid" >/dev/null; do
    i=$((i + 1))
    [ $i -gt 1000 ] && fail "agents of $sid outlived tandem"
    sleep 0.01
done
dir=$T/demo/.tandem/sessions/$sid
expect_in "$dir/journal.jsonl" '"type":"asked","attempt":1,"step":"proposal","service":"coder"'
run "$BIN/tandem" resume --repo "$T/demo" "$sid"
expect_rc 0 "resumed"
expect_in "$T/err" "approved after 2 iterations · 5 LLM calls (1 unanswered)"
[ "$(chat_requests)" = 5 ] || fail "the model served $(chat_requests) requests, not 5"
expect_report "$dir" 5 1 $DEMO_PROMPT $DEMO_COMPLETION
stop_fakellm
pass "a request out when tandem was killed is counted once the resume pays for it again"

# ---- the coder killed while the model holds its request ----------------
copy_demo
start_fakellm "$T/s.json"
start_run
wait_requests 1
session_id
cpid=$(pgrep -f "tandem-coder.*$sid")
[ -n "$cpid" ] || fail "no coder agent for $sid"
kill -KILL $cpid
wait $pid
RC=$?
expect_rc 0 "approved after the coder died"
expect_in "$T/err" "request $sid/1/coder goes back on the queue"
expect_in "$T/err" "approved after 2 iterations · 5 LLM calls (1 unanswered)"
[ "$(chat_requests)" = 5 ] || fail "the model served $(chat_requests) requests, not 5"
dir=$T/demo/.tandem/sessions/$sid
expect_in "$dir/journal.jsonl" '"type":"unanswered","attempt":1,"step":"proposal","service":"coder","calls":1'
expect_report "$dir" 5 1 $DEMO_PROMPT $DEMO_COMPLETION
stop_fakellm
pass "a request whose agent died at the model is counted when the crew sends it again"

# ---- an error reply after a call that was answered ---------------------
# the coder's first answer has no edits, its re-ask is refused (401):
# the agent replies with an error, and the exchanges say call 1 was paid
cat >"$T/e.json" <<'JSON'
{"steps": [
 {"content": "I would rather not edit anything.",
  "usage": {"prompt_tokens": 500, "completion_tokens": 5}},
 {"status": 401}
]}
JSON
copy_demo
start_fakellm "$T/e.json"
run "$BIN/tandem" run --repo "$T/demo" --llm openai:fake-model \
    --base-url "$FAKE_URL/v1" "make the failing test pass"
expect_rc 1 "the coder's error fails the run"
expect_in "$T/err" "401 from $FAKE_URL/v1/chat/completions"
expect_in "$T/err" "failed after 1 iteration · 1 LLM call · 505 tokens"
dir=$(session_dir)
sid=$(basename "$dir")
expect_in "$dir/journal.jsonl" '"type":"unanswered","attempt":1,"step":"proposal","service":"coder","calls":0,"usage":{"calls":1,"prompt_tokens":500,"completion_tokens":5'
expect_report "$dir" 1 0 500 5
stop_fakellm
# the key works again: the resume counts what the error cost, and the rest
script "$T/s2.json"
start_fakellm "$T/s2.json"
run "$BIN/tandem" resume --repo "$T/demo" --base-url "$FAKE_URL/v1" "$sid"
expect_rc 0 "resumed after the error"
expect_report "$dir" 5 0 $((DEMO_PROMPT + 500)) $((DEMO_COMPLETION + 5))
stop_fakellm
pass "an error reply counts the calls and tokens its agent says it paid for"

# ---- the same in tandem serve: the hub says what went out ---------------
# A served session hears of its requests through the hub; the coder that
# dies at the model is restarted by the server, the request goes to it
# again, and the report counts the lost call.
. "$(dirname "$0")/serve_lib.sh"
start_fakellm "$T/s.json"
cat >"$T/serve.yaml" <<YAML
version: 1
agents:
  coder:
    llm: {provider: openai, model: fake-model, base_url: "$FAKE_URL/v1"}
  reviewer:
    llm: {provider: openai, model: fake-model, base_url: "$FAKE_URL/v1"}
    skills: [build, test]
skills:
  build: {command: make, timeout_s: 60}
  test: {command: make test, timeout_s: 60}
YAML
start_serve --config "$T/serve.yaml" --pool 1
repo a
(tandem submit --repo "$T/a" "make the failing test pass" >"$T/out.s" \
    2>"$T/err.s"; echo $? >"$T/rc.s") &
sub=$!
wait_requests 1
cpid=$(pgrep -f "tandem-coder.*$T/serve.yaml")
[ -n "$cpid" ] || fail "no coder agent of the server"
kill -KILL $cpid
wait $sub
[ "$(cat "$T/rc.s")" = 0 ] || fail "the served task exited $(cat "$T/rc.s"): $(tail -3 "$T/err.s")"
expect_in "$T/err.s" "approved after 2 iterations · 5 LLM calls (1 unanswered)"
d=$(ls -d "$T"/a/.tandem/sessions/*)
expect_report "$d" 5 1 $DEMO_PROMPT $DEMO_COMPLETION
stop_serve
stop_fakellm
pass "in tandem serve, a request whose agent died at the model is counted too"
