#!/bin/sh
# The anthropic and ollama providers against the fake LLM server on
# 127.0.0.1: the demo end to end over each native wire format, streamed
# and not, with the token counts the server reported; the key sent only
# where it belongs; and faults (rate limits, server errors, stalls,
# truncated streams, garbage, oversize bodies, 401, 404) retried or
# reported clearly.
. "$(dirname "$0")/lib.sh"

KEY=sk-ant-test-0123456789abcdefSECRET
export ANTHROPIC_API_KEY=$KEY
TASK="make the failing test pass"

# The demo's four answers, each reporting 100 prompt and 10 completion
# tokens, streamed in small pieces.
sed 's/"expect": \[/"usage": {"prompt_tokens": 100, "completion_tokens": 10}, "chunk_size": 7, "expect": [/' \
    "$FIX/demo-openai.json" >"$T/demo.json"
[ "$(grep -c '"usage"' "$T/demo.json")" = 4 ] || fail "cannot make demo.json"

# script FAULT...: a script with the given steps before the demo's own.
script() {
    printf '{"steps": ['
    for step in "$@"; do printf '%s,\n' "$step"; done
    sed -n '/"steps": \[/,$p' "$T/demo.json" | sed '1d'
}

stop_fakellm() {
    if [ -n "$FAKE_PID" ]; then
        kill "$FAKE_PID"
        wait "$FAKE_PID" 2>/dev/null
        FAKE_PID=
    fi
}

# serve FILE: a fresh demo and a fresh fake server with this script.
serve() {
    stop_fakellm
    copy_demo
    start_fakellm "$1"
}

# llm_config 'YAML MAP': both agents talk to the fake server this way.
llm_config() {
    cat >"$T/demo/agents.yaml" <<YAML
version: 1
agents:
  coder:
    llm: $1
  reviewer:
    llm: $1
    skills: [build, test]
skills:
  build: {command: make, timeout_s: 60}
  test: {command: make test, timeout_s: 60}
YAML
}

# The run wrote the key nowhere: not in the session, the repo copy, the
# output or the errors.
expect_no_key() {
    if grep -r -F -q -- "$KEY" "$T/demo" "$T/out" "$T/err"; then
        grep -r -F -l -- "$KEY" "$T/demo" "$T/out" "$T/err" >&2
        fail "the API key leaked ($1)"
    fi
}

# time_ms of the log's Nth request.
request_time() {
    sed -n "$1p" "$FAKE_LOG" | sed 's/.*"time_ms":\([0-9]*\).*/\1/'
}

requests() { grep -c '"method"' "$FAKE_LOG"; }

# expect_approved PATH [N]: the demo was approved over N (4) requests to
# PATH, with the server's token counts.
expect_approved() {
    expect_rc 0 "approved"
    expect_in "$T/out" "+    return (double)sum / (double)count;"
    expect_in "$T/err" "approved after 2 iterations · 4 LLM calls"
    [ "$(grep -c "\"path\":\"$1\"" "$FAKE_LOG")" = "${2:-4}" ] ||
        fail "expected ${2:-4} requests to $1"
    dir=$(session_dir)
    expect_in "$dir/report.json" '"prompt": 400,'
    expect_in "$dir/report.json" '"completion": 40,'
    expect_in "$dir/report.json" '"estimated": false'
    expect_no_key "$1"
}

# --- anthropic, streamed (the default) -------------------------------------
serve "$T/demo.json"
run tandem run --repo "$T/demo" --llm anthropic:fake-model \
    --base-url "$FAKE_URL" "$TASK"
expect_approved /v1/messages
expect_in "$FAKE_LOG" "\"x-api-key\":\"$KEY\""
expect_in "$FAKE_LOG" '"anthropic-version":"2023-06-01"'
expect_in "$FAKE_LOG" '"system":"You are the coder'
expect_in "$FAKE_LOG" '"system":"You are the reviewer'
expect_in "$FAKE_LOG" '"max_tokens":4096'
expect_not_in "$FAKE_LOG" '"role":"system"'
expect_not_in "$FAKE_LOG" '"authorization"'
[ "$(grep -c '"stream":true' "$FAKE_LOG")" = 4 ] || fail "not streamed"
pass "anthropic, streamed: the demo is approved with the server's tokens"

# --- anthropic, one JSON answer ----------------------------------------------
serve "$T/demo.json"
llm_config "{provider: anthropic, model: fake-model, base_url: \"$FAKE_URL\", stream: false, headers: {X-Team: tandem-tests}}"
run tandem run --repo "$T/demo" "$TASK"
expect_approved /v1/messages
expect_in "$FAKE_LOG" '"x-team":"tandem-tests"'
expect_in "$FAKE_LOG" "\"x-api-key\":\"$KEY\""
expect_in "$FAKE_LOG" '"anthropic-version":"2023-06-01"'
expect_not_in "$FAKE_LOG" '"authorization"'
[ "$(grep -c '"stream":false' "$FAKE_LOG")" = 4 ] || fail "streamed"
pass "anthropic, not streamed: the demo is approved with the server's tokens"

# --- ollama, streamed ----------------------------------------------------------
serve "$T/demo.json"
run tandem run --repo "$T/demo" --llm ollama:fake-model \
    --base-url "$FAKE_URL" "$TASK"
expect_approved /api/chat
expect_in "$FAKE_LOG" '"role":"system","content":"You are the coder'
expect_in "$FAKE_LOG" '"num_predict":4096'
expect_not_in "$FAKE_LOG" '"authorization"'
expect_not_in "$FAKE_LOG" '"x-api-key"'
expect_not_in "$FAKE_LOG" "$KEY"
[ "$(grep -c '"stream":true' "$FAKE_LOG")" = 4 ] || fail "not streamed"
pass "ollama, streamed: the demo is approved with the server's tokens, no key"

# --- ollama, one JSON answer, behind a proxy that wants a key -----------------
serve "$T/demo.json"
export PROXY_KEY=$KEY
llm_config "{provider: ollama, model: fake-model, base_url: \"$FAKE_URL/\", stream: false, api_key_env: PROXY_KEY}"
run tandem run --repo "$T/demo" "$TASK"
expect_approved /api/chat
expect_in "$FAKE_LOG" "\"authorization\":\"Bearer $KEY\""
[ "$(grep -c '"stream":false' "$FAKE_LOG")" = 4 ] || fail "streamed"
unset PROXY_KEY
pass "ollama, not streamed: approved; a configured key goes to the proxy"

# --- faults, each provider -----------------------------------------------------
for provider in anthropic ollama; do
    if [ $provider = anthropic ]; then
        path=/v1/messages
        busy=529
        truncated="ended before message_stop"
    else
        path=/api/chat
        busy=503
        truncated="ended before the final \"done\": true object"
    fi

    # 429 (Retry-After: 1), 500 and a cut stream before the coder's first
    # answer, the provider's "busy" before the reviewer's: all retried.
    script '{"status": 429, "headers": {"Retry-After": "1"}}' \
        '{"status": 500}' \
        '{"content": "an answer that never ends", "chunk_size": 4, "truncate": true}' \
        | awk -v busy="{\"status\": $busy}," \
            '/^    \{$/ && ++n == 2 { print busy } { print }' >"$T/faults.json"
    serve "$T/faults.json"
    run tandem run --repo "$T/demo" --llm $provider:fake-model \
        --base-url "$FAKE_URL" "$TASK"
    expect_rc 0 "$provider: approved after faults"
    [ "$(requests)" = 8 ] || fail "$provider: expected 8 requests, got $(requests)"
    dir=$(session_dir)
    expect_in "$dir/logs/coder-1.log" "429 from $FAKE_URL$path"
    expect_in "$dir/logs/coder-1.log" "500 from $FAKE_URL$path"
    expect_in "$dir/logs/coder-1.log" "the stream from $FAKE_URL$path $truncated"
    expect_in "$dir/logs/reviewer-1.log" "$busy from $FAKE_URL$path"
    expect_in "$dir/report.json" '"retries": 3'
    expect_in "$dir/report.json" '"retries": 1'
    gap=$(($(request_time 2) - $(request_time 1)))
    [ "$gap" -ge 1000 ] || fail "$provider: retried after ${gap}ms, not 1s"
    expect_no_key "$provider faults"
    pass "$provider: 429 (Retry-After honoured), 500, $busy and a cut stream are retried"

    # A stalled server: each attempt times out after timeout_s, one retry.
    cat >"$T/stall.json" <<'JSON'
{"steps": [{"stall": true, "repeat": 5}]}
JSON
    serve "$T/stall.json"
    llm_config "{provider: $provider, model: fake-model, base_url: \"$FAKE_URL\", timeout_s: 1, max_retries: 1}"
    t0=$(date +%s)
    run tandem run --repo "$T/demo" "$TASK"
    took=$(($(date +%s) - t0))
    expect_rc 1 "$provider: stalled"
    expect_in "$T/err" "gave up after 2 attempts"
    expect_in "$T/err" "POST $FAKE_URL$path: Timeout was reached"
    [ "$(requests)" = 2 ] || fail "$provider: expected 2 stalled requests"
    if [ "${TANDEM_MEMCHECK:-0}" != 1 ]; then
        [ "$took" -le 10 ] || fail "$provider: a stalled run took ${took}s"
    fi
    pass "$provider: a stalled server times out, is retried once, then reported"

    # Garbage: a clear error at once, not a crash and not a retry.
    echo '{"steps": [{"garbage": true, "repeat": 5}]}' >"$T/garbage.json"
    serve "$T/garbage.json"
    run tandem run --repo "$T/demo" --llm $provider:fake-model \
        --base-url "$FAKE_URL" "$TASK"
    expect_rc 1 "$provider: garbage"
    expect_in "$T/err" "bad answer from $FAKE_URL$path: not valid JSON"
    [ "$(requests)" = 1 ] || fail "$provider: garbage was retried"
    pass "$provider: a garbage body fails the run with a clear error"

    # 10 MiB of one JSON object: over every cap, a clear error.
    echo '{"steps": [{"oversize": 10485760, "repeat": 5}]}' >"$T/big.json"
    serve "$T/big.json"
    run tandem run --repo "$T/demo" --llm $provider:fake-model \
        --base-url "$FAKE_URL" "$TASK"
    expect_rc 1 "$provider: oversize"
    expect_in "$T/err" "$FAKE_URL$path"
    if [ $provider = anthropic ]; then
        expect_in "$T/err" "the response is larger than 8388608 bytes"
    else
        expect_in "$T/err" "a line of the stream is longer than 1048576 bytes"
    fi
    pass "$provider: an oversize body fails the run with a clear error"
done

# --- an answer complete, its body kept open ------------------------------------
# The end marker ([DONE], message_stop, "done": true) ends the call: it
# was waited on until timeout_s, then retried and paid for again.
sed 's/"chunk_size": 7,/"chunk_size": 7, "hold_open": true,/' "$T/demo.json" \
    >"$T/hold.json"
[ "$(grep -c '"hold_open"' "$T/hold.json")" = 4 ] || fail "cannot make hold.json"
for provider in openai anthropic ollama; do
    case $provider in
    openai) path=/v1/chat/completions ;;
    anthropic) path=/v1/messages ;;
    ollama) path=/api/chat ;;
    esac
    serve "$T/hold.json"
    base=$FAKE_URL
    [ $provider = openai ] && base=$FAKE_URL/v1
    llm_config "{provider: $provider, model: fake-model, base_url: \"$base\", timeout_s: 60, max_retries: 0}"
    OPENAI_API_KEY=$KEY TANDEM_TIMEOUT=50 run tandem run --repo "$T/demo" "$TASK"
    expect_approved $path
    pass "$provider: an answer whose body stays open ends at its end marker"
done

# --- errors inside a 200 stream ----------------------------------------------
# Anthropic: an overloaded_error event mid-stream is retried.
script '{"headers": {"Content-Type": "text/event-stream"}, "body": "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":5,\"output_tokens\":1}}}\n\nevent: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"Hel\"}}\n\nevent: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}\n\n"}' \
    >"$T/event.json"
serve "$T/event.json"
run tandem run --repo "$T/demo" --llm anthropic:fake-model \
    --base-url "$FAKE_URL" "$TASK"
expect_approved /v1/messages 5
dir=$(session_dir)
expect_in "$dir/logs/coder-1.log" "$FAKE_URL/v1/messages reported overloaded_error: Overloaded; retry 1 of 3"
pass "anthropic: an overloaded_error event mid-stream is retried"

# Ollama: an error object mid-stream is the run's error, with its message.
cat >"$T/oerr.json" <<'JSON'
{"steps": [{"repeat": 5, "headers": {"Content-Type": "application/x-ndjson"},
  "body": "{\"message\":{\"role\":\"assistant\",\"content\":\"Hel\"},\"done\":false}\n{\"error\":\"llama runner process has terminated\"}\n"}]}
JSON
serve "$T/oerr.json"
run tandem run --repo "$T/demo" --llm ollama:fake-model \
    --base-url "$FAKE_URL" "$TASK"
expect_rc 1 "ollama error mid-stream"
expect_in "$T/err" "$FAKE_URL/api/chat reported an error: llama runner process has terminated"
[ "$(requests)" = 1 ] || fail "an error object was retried"
pass "ollama: an error object mid-stream fails with the server's message"

# --- an answer over the 4 MiB cap, streamed ------------------------------------
{
    printf '{"steps": [{"chunk_size": 65536, "repeat": 5, "content": "'
    head -c 5000000 /dev/zero | tr '\0' 'x'
    printf '"}]}\n'
} >"$T/long.json"
serve "$T/long.json"
run tandem run --repo "$T/demo" --llm anthropic:fake-model \
    --base-url "$FAKE_URL" "$TASK"
expect_rc 1 "an answer over the cap"
expect_in "$T/err" "the answer from $FAKE_URL/v1/messages is longer than 4194304 bytes"
pass "anthropic: a streamed answer over 4 MiB fails with a clear error"

# --- 401: at once, names the variable, never shows the key ---------------------
echo '{"steps": [{"status": 401, "repeat": 5}]}' >"$T/s401.json"
serve "$T/s401.json"
run tandem run --repo "$T/demo" --llm anthropic:fake-model \
    --base-url "$FAKE_URL" "$TASK"
expect_rc 1 "anthropic 401"
expect_in "$T/err" "401 from $FAKE_URL/v1/messages"
expect_in "$T/err" "check the key in \$ANTHROPIC_API_KEY"
expect_not_in "$T/err" "(it is not set)"
[ "$(requests)" = 1 ] || fail "a 401 was retried"
expect_no_key "anthropic 401"

serve "$T/s401.json"
(
    unset ANTHROPIC_API_KEY
    run tandem run --repo "$T/demo" --llm anthropic:fake-model \
        --base-url "$FAKE_URL" "$TASK"
    expect_rc 1 "anthropic 401 without a key"
    expect_in "$T/err" "check the key in \$ANTHROPIC_API_KEY (it is not set)"
    expect_not_in "$FAKE_LOG" '"x-api-key"'
) || exit 1

serve "$T/s401.json"
export PROXY_KEY=$KEY
llm_config "{provider: ollama, model: fake-model, base_url: \"$FAKE_URL\", api_key_env: PROXY_KEY}"
run tandem run --repo "$T/demo" "$TASK"
expect_rc 1 "ollama 401"
expect_in "$T/err" "401 from $FAKE_URL/api/chat"
expect_in "$T/err" "check the key in \$PROXY_KEY"
[ "$(requests)" = 1 ] || fail "a 401 was retried"
expect_no_key "ollama 401"
unset PROXY_KEY
pass "401 fails at once, names the variable and never shows the key"

# --- ollama: a model that is not there -----------------------------------------
cat >"$T/s404.json" <<'JSON'
{"steps": [{"status": 404, "repeat": 5,
            "body": "{\"error\":\"model \\\"fake-model\\\" not found, try pulling it first\"}"}]}
JSON
serve "$T/s404.json"
run tandem run --repo "$T/demo" --llm ollama:fake-model \
    --base-url "$FAKE_URL" "$TASK"
expect_rc 1 "ollama 404"
expect_in "$T/err" "404 from $FAKE_URL/api/chat: model \"fake-model\" not found"
expect_in "$T/err" "ollama pull fake-model"
[ "$(requests)" = 1 ] || fail "a 404 was retried"
pass "ollama: a missing model fails at once and says to pull it"
stop_fakellm
