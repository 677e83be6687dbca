#!/bin/sh
# The openai provider against the fake LLM server on 127.0.0.1: the demo
# end to end over the real Chat Completions wire format, the key sent
# only where it belongs, and clear errors and retries for faults.
. "$(dirname "$0")/lib.sh"

KEY=sk-test-0123456789abcdefSECRET
export OPENAI_API_KEY=$KEY

copy_demo
start_fakellm "$FIX/demo-openai.json"
run tandem run --repo "$T/demo" --llm openai:fake-model \
    --base-url "$FAKE_URL/v1" "make the failing test pass"
expect_rc 0 "approved over openai"
expect_in "$T/out" "+    return (double)sum / (double)count;"
expect_in "$T/err" "approved after 2 iterations · 4 LLM calls"
[ "$(grep -c '"path":"/v1/chat/completions"' "$FAKE_LOG")" = 4 ] ||
    fail "expected 4 chat requests"
expect_in "$FAKE_LOG" "\"authorization\":\"Bearer $KEY\""
expect_in "$FAKE_LOG" '"model":"fake-model"'
pass "the demo runs against an OpenAI-compatible server"

# The key went to the server and nowhere else.
dir=$(session_dir)
if grep -r -F -q "$KEY" "$dir" "$T/out" "$T/err"; then
    fail "the API key leaked into the session, stdout or stderr"
fi
pass "the API key appears in no session file, log or output"

kill "$FAKE_PID"; wait "$FAKE_PID" 2>/dev/null; FAKE_PID=

# 401: fails at once, says which variable to check, never shows the key.
cat >"$T/s401.json" <<'JSON'
{"steps": [{"status": 401, "repeat": 5}]}
JSON
copy_demo
start_fakellm "$T/s401.json"
run tandem run --repo "$T/demo" --llm openai:fake-model \
    --base-url "$FAKE_URL/v1" "make the failing test pass"
expect_rc 1 "401"
expect_in "$T/err" "401 from $FAKE_URL/v1/chat/completions"
expect_in "$T/err" "check the key in \$OPENAI_API_KEY"
expect_not_in "$T/err" "$KEY"
[ "$(grep -c '"path"' "$FAKE_LOG")" = 1 ] || fail "a 401 was retried"
kill "$FAKE_PID"; wait "$FAKE_PID" 2>/dev/null; FAKE_PID=
pass "401 fails at once with the variable to check"

# 429 with Retry-After and a 500 are retried; the answers then arrive.
python_free_script() {
    # the demo script with two faults in front
    printf '{"steps": [{"status": 429, "headers": {"Retry-After": "0"}}, {"status": 500},'
    sed -n '/"steps": \[/,$p' "$FIX/demo-openai.json" | sed '1d'
}
python_free_script >"$T/faults.json"
copy_demo
start_fakellm "$T/faults.json"
run tandem run --repo "$T/demo" --llm openai:fake-model \
    --base-url "$FAKE_URL/v1" "make the failing test pass"
expect_rc 0 "approved after retries"
[ "$(grep -c '"path"' "$FAKE_LOG")" = 6 ] || fail "expected 6 requests"
dir=$(session_dir)
expect_in "$dir/logs/coder-1.log" "429 from $FAKE_URL/v1/chat/completions"
expect_in "$dir/logs/coder-1.log" "retry 2 of 3"
expect_in "$dir/report.json" '"retries": 2'
kill "$FAKE_PID"; wait "$FAKE_PID" 2>/dev/null; FAKE_PID=
pass "429 (Retry-After) and 500 are retried and counted"

# A body that is not JSON is a clear error, not a crash.
cat >"$T/garbage.json" <<'JSON'
{"steps": [{"garbage": true}]}
JSON
copy_demo
start_fakellm "$T/garbage.json"
run tandem run --repo "$T/demo" --llm openai:fake-model \
    --base-url "$FAKE_URL/v1" "make the failing test pass"
expect_rc 1 "garbage"
expect_in "$T/err" "bad answer from $FAKE_URL/v1/chat/completions: not valid JSON"
pass "a garbage body fails the run with a clear error"

# No server at all: connection refused is retried, then reported.
kill "$FAKE_PID"; wait "$FAKE_PID" 2>/dev/null; FAKE_PID=
copy_demo
run tandem run --repo "$T/demo" --llm openai:fake-model \
    --base-url "$FAKE_URL/v1" "make the failing test pass"
expect_rc 1 "refused"
expect_in "$T/err" "gave up after 4 attempts"
expect_in "$T/err" "Couldn't connect to server"
pass "an unreachable server is retried, then reported"

# The skills never see the key: their environment is scrubbed. (The skill
# writes it where this test can read it, outside the workspace, so it
# runs unsandboxed: the scrubbing is the same either way.)
copy_demo
demo_config "$TOP/examples/demo/cassette.json" <<YAML
skills:
  build: {command: "env > '$T/skill-env'; make", timeout_s: 60, sandbox: none}
  test: {command: make test, timeout_s: 60}
YAML
start_fakellm "$FIX/demo-openai.json"
MY_SERVICE_TOKEN=tok-0123456789abcdef run tandem run --repo "$T/demo" \
    --llm openai:fake-model --base-url "$FAKE_URL/v1" \
    "make the failing test pass"
expect_rc 0 "approved"
[ -s "$T/skill-env" ] || fail "the skill did not run"
expect_in "$T/skill-env" "PATH="
expect_not_in "$T/skill-env" "$KEY"
expect_not_in "$T/skill-env" "OPENAI_API_KEY"
expect_not_in "$T/skill-env" "tok-0123456789abcdef"
pass "skills run without API keys or tokens in their environment"

# An answer the server cut at max_tokens (finish_reason "length") is not
# used, however well its first edits parse: the rest of the change was
# never written. The coder asks again, telling the model why; the
# reviewer does the same with a critique cut after its JSON (a draft the
# model may have been about to revise), which is no verdict.
kill "$FAKE_PID" 2>/dev/null; wait "$FAKE_PID" 2>/dev/null; FAKE_PID=
/usr/bin/python3 - "$FIX/demo-openai.json" "$T/cut.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))["steps"]
fix = ("stats.c\n<<<<<<< SEARCH\n    return sum / count;\n=======\n"
       "    return (double)sum / (double)count;\n>>>>>>> REPLACE\n")
doc = ("stats.h\n<<<<<<< SEARCH\n/* The arithmetic mean of count values; "
       "0.0 when count is 0. */\n=======\n/* The arithmetic mean of count "
       "values, in double; 0.0 when count is 0. */\n>>>>>>> REPLACE\n")
why = "cut off at the model's output limit (max_tokens)"
steps = [
    {"content": "Two edits: the division, then its comment.\n\n" + fix +
     "\nNow the comment in stats.h, which", "hit_max_tokens": True,
     "usage": {"completion_tokens": 64}},
    {"content": "Two edits.\n\n" + fix + "\n" + doc, "expect": why},
    {"content": d[3]["content"] + "\n\nOne more thing to check before",
     "hit_max_tokens": True},
    {"content": d[3]["content"], "expect": why},
]
json.dump({"steps": steps}, open(sys.argv[2], "w"))
PY
copy_demo
start_fakellm "$T/cut.json"
cat >"$T/demo/agents.yaml" <<YAML
version: 1
gate: {max_iterations: 1, escalate: never}
agents:
  coder:
    llm: {provider: openai, model: fake-model, base_url: "$FAKE_URL/v1", stream: false, max_tokens: 64}
  reviewer:
    llm: {provider: openai, model: fake-model, base_url: "$FAKE_URL/v1"}
    skills: [build, test]
skills:
  build: {command: make, timeout_s: 60}
  test: {command: make test, timeout_s: 60}
YAML
run tandem run --repo "$T/demo" "make the failing test pass"
expect_rc 0 "approved once the whole answers came"
expect_in "$T/out" "+    return (double)sum / (double)count;"
expect_in "$T/out" "+/* The arithmetic mean of count values, in double;"
[ "$(grep -c '"path":"/v1/chat/completions"' "$FAKE_LOG")" = 4 ] ||
    fail "expected 4 chat requests: each cut answer asked again"
expect_not_in "$FAKE_LOG" '"error"'
dir=$(session_dir)
expect_in "$dir/logs/coder-1.log" "unusable answer (the answer was cut off at the model's output limit (max_tokens) after 64 tokens"
expect_in "$dir/logs/coder-1.log" "raise agents.coder.llm.max_tokens"
expect_in "$dir/logs/reviewer-1.log" "unusable critique (the answer was cut off at the model's output limit (max_tokens)"
pass "an answer cut at max_tokens is asked again, not applied or taken as a verdict"

# Cut twice: the attempt ends with no usable edits, and the next one's
# feedback says why.
kill "$FAKE_PID" 2>/dev/null; wait "$FAKE_PID" 2>/dev/null; FAKE_PID=
/usr/bin/python3 - "$T/cut.json" <<'PY'
import json, sys
steps = json.load(open(sys.argv[1]))["steps"]
cut = dict(steps[0])
again = dict(steps[0], expect="cut off at the model's output limit")
feedback = dict(steps[1], expect=["held no usable edits: the answer was cut off",
                                  "raise agents.coder.llm.max_tokens"])
verdict = {"content": steps[3]["content"]}
json.dump({"steps": [cut, again, feedback, verdict]}, open(sys.argv[1], "w"))
PY
copy_demo
start_fakellm "$T/cut.json"
cat >"$T/demo/agents.yaml" <<YAML
version: 1
gate: {max_iterations: 2, escalate: never}
agents:
  coder:
    llm: {provider: openai, model: fake-model, base_url: "$FAKE_URL/v1", stream: false, max_tokens: 64}
  reviewer:
    llm: {provider: openai, model: fake-model, base_url: "$FAKE_URL/v1"}
    skills: [build, test]
skills:
  build: {command: make, timeout_s: 60}
  test: {command: make test, timeout_s: 60}
YAML
run tandem run --repo "$T/demo" "make the failing test pass"
expect_rc 0 "approved at attempt 2"
expect_in "$T/out" "+/* The arithmetic mean of count values, in double;"
expect_not_in "$FAKE_LOG" '"error"'
dir=$(session_dir)
expect_in "$dir/journal.jsonl" '"format_error":"the answer was cut off at the model'
pass "an attempt whose answers were both cut tells the next attempt why"

# Saying yes or no to a waiting session asks no model: the person
# answering need not hold its key (reject refused without it, and
# advised --llm, which an answer refuses). The config names the
# provider's own address when the answer comes (a key is required only
# there; the session ran against the fake server).
kill "$FAKE_PID" 2>/dev/null; wait "$FAKE_PID" 2>/dev/null; FAKE_PID=
for answer in reject approve; do
    copy_demo
    start_fakellm "$FIX/demo-openai.json"
    llm_config "{provider: openai, model: fake-model, base_url: \"$FAKE_URL/v1\"}" <<'YAML'
gate:
  max_iterations: 1
  escalate: queue
YAML
    run tandem run --repo "$T/demo" "make the failing test pass"
    expect_rc 3 "waits for a person after one attempt"
    sid=$(basename "$(session_dir)")
    sed -i "s|, base_url: \"$FAKE_URL/v1\"||" "$T/demo/agents.yaml"
    expect_not_in "$T/demo/agents.yaml" "base_url"
    if [ "$answer" = reject ]; then
        env -u OPENAI_API_KEY "$BIN/tandem" reject --repo "$T/demo" "$sid" \
            -m "not this way" >"$T/out" 2>"$T/err"
        RC=$?
        expect_rc 1 "rejected without the model's key"
    else
        env -u OPENAI_API_KEY "$BIN/tandem" approve --repo "$T/demo" "$sid" \
            >"$T/out" 2>"$T/err"
        RC=$?
        expect_rc 0 "approved without the model's key"
        expect_in "$T/out" "+    return (double)(sum / (long)count);"
    fi
    expect_not_in "$T/err" "OPENAI_API_KEY"
    kill "$FAKE_PID" 2>/dev/null; wait "$FAKE_PID" 2>/dev/null; FAKE_PID=
done
pass "approve and reject need no model's key"

# An answer the provider's content filter stopped (finish_reason
# "content_filter") is no whole answer: it was applied, one of its two
# edits, and approved as the change
kill "$FAKE_PID" 2>/dev/null; wait "$FAKE_PID" 2>/dev/null; FAKE_PID=
/usr/bin/python3 - "$FIX/demo-openai.json" "$T/filtered.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))["steps"]
fix = ("stats.c\n<<<<<<< SEARCH\n    return sum / count;\n=======\n"
       "    return (double)sum / (double)count;\n>>>>>>> REPLACE\n")
steps = [
    {"content": "Two edits.\n\n" + fix, "filtered": True},
    {"content": "Two edits.\n\n" + fix, "expect": "content filter"},
    {"content": d[3]["content"]},
]
json.dump({"steps": steps}, open(sys.argv[2], "w"))
PY
for stream in false true; do
    copy_demo
    start_fakellm "$T/filtered.json"
    llm_config "{provider: openai, model: fake-model, base_url: \"$FAKE_URL/v1\", stream: $stream}" <<'YAML'
gate: {max_iterations: 1, escalate: never}
YAML
    run tandem run --repo "$T/demo" "make the failing test pass"
    expect_rc 0 "approved once the whole answer came (stream: $stream)"
    expect_in "$(session_dir)/logs/coder-1.log" "unusable answer (the provider stopped the answer with its content filter"
    [ "$(grep -c '"path":"/v1/chat/completions"' "$FAKE_LOG")" = 3 ] ||
        fail "expected 3 chat requests: the filtered answer asked again"
    kill "$FAKE_PID" 2>/dev/null; wait "$FAKE_PID" 2>/dev/null; FAKE_PID=
done
pass "an answer the content filter stopped is asked again, not applied"
