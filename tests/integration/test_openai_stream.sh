#!/bin/sh
# The openai provider streaming (the default) against the fake LLM server:
# the demo end to end over Server-Sent Events with the server's token
# counts, a truncated stream retried, error events, and the config's
# extra headers.
. "$(dirname "$0")/lib.sh"

# usage_script [FAULT_STEPS]: the demo's answers in small stream pieces,
# each step with its own token counts (step i: 1000+i prompt, 10+i
# completion), after FAULT_STEPS (JSON steps, each followed by a comma).
usage_script() {
    printf '{"steps": [%s\n' "${1:-}"
    sed -n '/"steps": \[/,$p' "$FIX/demo-openai.json" | sed '1d' |
        awk '/^      "content": / {
                 n++
                 printf "      \"usage\": {\"prompt_tokens\": %d, \"completion_tokens\": %d},\n", 1000 + n, 10 + n
                 print "      \"chunk_size\": 7,"
             }
             { print }'
}

# openai_config EXTRA: both agents on the fake server; EXTRA is more of
# the llm mapping (", key: value...").
openai_config() {
    llm_config "{provider: openai, model: fake-model, base_url: \"$FAKE_URL/v1\"$1}" </dev/null
}

stop_fakellm() {
    kill "$FAKE_PID"
    wait "$FAKE_PID" 2>/dev/null
    FAKE_PID=
}

# The demo, streamed: approved, and the report's tokens are the server's.
usage_script >"$T/usage.json"
copy_demo
start_fakellm "$T/usage.json"
openai_config ""
run tandem run --repo "$T/demo" "make the failing test pass"
expect_rc 0 "approved over a streamed openai"
expect_in "$T/out" "+    return (double)sum / (double)count;"
expect_in "$T/err" "approved after 2 iterations · 4 LLM calls"
expect_in "$T/err" "4,060 tokens (4,010 prompt + 50 completion)"
dir=$(session_dir)
tr -d ' \n' <"$dir/report.json" >"$T/report.flat"
expect_in "$T/report.flat" '"tokens":{"prompt":4010,"completion":50,"estimated":false}'
expect_in "$T/report.flat" '"coder":{"llm_calls":2,"prompt":2004,"completion":24'
expect_in "$T/report.flat" '"reviewer":{"llm_calls":2,"prompt":2006,"completion":26'
[ "$(grep -c '"stream":true' "$FAKE_LOG")" = 4 ] ||
    fail "expected 4 streamed requests"
[ "$(grep -c '"include_usage":true' "$FAKE_LOG")" = 4 ] ||
    fail "expected include_usage in every request"
expect_in "$FAKE_LOG" '"accept":"text/event-stream"'
stop_fakellm
pass "the demo streams; the report's tokens are the server's usage"

# A stream cut before [DONE] is retried, and the run goes on.
usage_script '{"truncate": true, "content": "stats.c is fine as it is, I think; let me look again at the"},' \
    >"$T/truncate.json"
copy_demo
start_fakellm "$T/truncate.json"
openai_config ""
run tandem run --repo "$T/demo" "make the failing test pass"
expect_rc 0 "approved after a truncated stream"
[ "$(grep -c '"path":"/v1/chat/completions"' "$FAKE_LOG")" = 5 ] ||
    fail "expected 5 chat requests"
dir=$(session_dir)
expect_in "$dir/logs/coder-1.log" "the stream from $FAKE_URL/v1/chat/completions ended before [DONE] after"
expect_in "$dir/logs/coder-1.log" "retry 1 of 3"
expect_in "$dir/report.json" '"retries": 1'
stop_fakellm
pass "a truncated stream is retried"

# Error events: a server error is retried; a rejected request is not,
# and its message reaches the user.
ev='data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"choices\":[{\"index\":0,\"delta\":{\"content\":\"stats.c\"}}]}\n\n'
cat >"$T/errors.json" <<JSON
{"steps": [
  {"headers": {"Content-Type": "text/event-stream"},
   "body": "$ev: keep-alive\r\n\r\ndata: {\"error\":{\"message\":\"fakellm: the engine fell over\",\"type\":\"server_error\"}}\n\n"},
  {"headers": {"Content-Type": "text/event-stream"},
   "body": "${ev}data: {\"error\":{\"message\":\"fakellm: this model cannot do that\",\"type\":\"invalid_request_error\",\"code\":null}}\n\ndata: [DONE]\n\n"}
]}
JSON
copy_demo
start_fakellm "$T/errors.json"
openai_config ""
run tandem run --repo "$T/demo" "make the failing test pass"
expect_rc 1 "an error event"
expect_in "$T/err" "$FAKE_URL/v1/chat/completions sent an error in the stream after"
expect_in "$T/err" "fakellm: this model cannot do that"
[ "$(grep -c '"path":"/v1/chat/completions"' "$FAKE_LOG")" = 2 ] ||
    fail "expected 2 chat requests (one retry)"
dir=$(session_dir)
expect_in "$dir/logs/coder-1.log" "fakellm: the engine fell over; retry 1 of 3"
stop_fakellm
pass "error events: server errors are retried, others fail with the message"

# stream: false and extra headers: a plain request, the headers sent.
copy_demo
start_fakellm "$FIX/demo-openai.json"
openai_config ", stream: false, headers: {X-Tandem-Test: hello, HTTP-Referer: https://example.com}"
run tandem run --repo "$T/demo" "make the failing test pass"
expect_rc 0 "approved without streaming"
[ "$(grep -c '"stream":false' "$FAKE_LOG")" = 4 ] ||
    fail "expected 4 plain requests"
expect_not_in "$FAKE_LOG" "include_usage"
[ "$(grep -c '"x-tandem-test":"hello"' "$FAKE_LOG")" = 4 ] ||
    fail "the extra header was not on every request"
expect_in "$FAKE_LOG" '"http-referer":"https://example.com"'
stop_fakellm
pass "stream: false asks for one body; extra headers go on every request"

# Progress: while the coder's answer streams in, the agent passes it on as
# PARTIAL messages; tandem hears them (shown on a terminal; logged at -v).
python_free_slow_script() {
    printf '{"steps": [\n'
    sed -n '/"steps": \[/,$p' "$FIX/demo-openai.json" | sed '1d' |
        sed 's/^    {$/    {"chunk_size": 8, "chunk_delay_ms": 20,/'
}
python_free_slow_script >"$T/slow.json"
grep -q '"chunk_delay_ms": 20' "$T/slow.json" || fail "could not slow the script"
copy_demo
start_fakellm "$T/slow.json"
openai_config ""
run tandem run -v --repo "$T/demo" "make the failing test pass"
expect_rc 0 "approved while streaming slowly"
expect_in "$T/err" "coder: writing, "
expect_in "$T/err" "characters so far"
stop_fakellm
pass "streamed text reaches tandem as progress while it arrives"

# A NUL in a streamed answer ("\u0000" in a chunk): read as U+FFFD, the
# rest of the answer kept. It ended the text there, so the coder's edits
# after it were lost and the model was asked again for no reason it could
# see; not streamed, the same answer was refused as a bad reply.
for stream in true false; do
    usage_script | sed '0,/"content": "`stats_mean`/s//"content": "\\u0000`stats_mean`/' \
        >"$T/nul.json"
    grep -q 'u0000`stats_mean' "$T/nul.json" || fail "no NUL in the script"
    copy_demo
    start_fakellm "$T/nul.json"
    openai_config ", stream: $stream"
    run tandem run --repo "$T/demo" "make the failing test pass"
    expect_rc 0 "approved with a NUL in the first answer (stream: $stream)"
    expect_in "$T/err" "approved after 2 iterations · 4 LLM calls"
    expect_in "$(session_dir)/attempt-1.diff" "return (double)(sum / (long)count);"
    stop_fakellm
done
pass "a NUL in a model's answer neither cuts nor loses it"
