#!/bin/sh
# fakellm itself: steps with `when` are taken by the requests whose body
# holds their strings, whatever the order has reached, and the ordered
# steps skip them (bench/ relies on this to answer many sessions at once);
# hit_max_tokens gives each API's own "cut at max_tokens" stop reason.
. "$(dirname "$0")/lib.sh"

# ask TEXT: POST a chat request whose prompt is TEXT; prints the answer.
ask() {
    /usr/bin/python3 - "$FAKE_URL/v1/chat/completions" "$1" <<'PY'
import json, sys, urllib.error, urllib.request
body = json.dumps({"model": "m", "messages": [{"role": "user", "content": sys.argv[2]}]})
req = urllib.request.Request(sys.argv[1], body.encode(), {"Content-Type": "application/json"})
try:
    print(json.load(urllib.request.urlopen(req))["choices"][0]["message"]["content"])
except urllib.error.HTTPError as e:
    print("HTTP", e.code)
PY
}

cat >"$T/when.json" <<'JSON'
{"steps": [
  {"content": "first"},
  {"content": "review", "when": "You are the reviewer", "repeat": 2},
  {"content": "second", "when": ["attempt 2", "coder"]},
  {"content": "last"}
]}
JSON
start_fakellm "$T/when.json"
got=$(ask "You are the reviewer"; ask "the coder, attempt 1"; \
    ask "the coder, attempt 2"; ask "You are the reviewer"; \
    ask "the coder, attempt 2"; ask "You are the reviewer"; ask "x")
want=$(printf '%s\n' review first second review last "HTTP 500" "HTTP 500")
[ "$got" = "$want" ] || fail "when: expected $(echo $want), got $(echo $got)"
expect_in "$FAKE_LOG" '"step":2,'
pass "a step with when answers the requests that hold its strings, out of order"

echo '{"steps": [{"when": 3}]}' >"$T/bad.json"
run "$FAKELLM" --script "$T/bad.json"
expect_rc 2 "a when that is not a string"
expect_in "$T/err" "when must be a string or an array of strings, got 3"
pass "a when that is not a string fails at start"

# hit_max_tokens: each API's own "cut at max_tokens" stop reason, in the
# plain answer and in the stream, the content as given.
kill "$FAKE_PID"; wait "$FAKE_PID" 2>/dev/null; FAKE_PID=
echo '{"steps": [{"content": "half an ans", "hit_max_tokens": true, "repeat": 6}]}' \
    >"$T/cut.json"
start_fakellm "$T/cut.json"
got=$(/usr/bin/python3 - "$FAKE_URL" <<'PY'
import json, sys, urllib.request
base = sys.argv[1]
def post(path, body):
    req = urllib.request.Request(base + path, json.dumps(body).encode(),
                                 {"Content-Type": "application/json"})
    return urllib.request.urlopen(req).read().decode()
msgs = [{"role": "user", "content": "x"}]
for stream in (False, True):
    out = post("/v1/chat/completions", {"model": "m", "messages": msgs, "stream": stream})
    if stream:
        chunks = [json.loads(l[6:]) for l in out.splitlines()
                  if l.startswith("data: {")]
        text = "".join(c["choices"][0]["delta"].get("content", "") for c in chunks)
        why = [c["choices"][0]["finish_reason"] for c in chunks][-1]
    else:
        c = json.loads(out)["choices"][0]
        text, why = c["message"]["content"], c["finish_reason"]
    print("openai", stream, text, why)
    out = post("/v1/messages", {"model": "m", "messages": msgs, "max_tokens": 9, "stream": stream})
    if stream:
        evs = [json.loads(l[6:]) for l in out.splitlines() if l.startswith("data: ")]
        text = "".join(e["delta"]["text"] for e in evs if e["type"] == "content_block_delta")
        why = [e["delta"]["stop_reason"] for e in evs if e["type"] == "message_delta"][0]
    else:
        m = json.loads(out)
        text, why = m["content"][0]["text"], m["stop_reason"]
    print("anthropic", stream, text, why)
    out = post("/api/chat", {"model": "m", "messages": msgs, "stream": stream})
    objs = [json.loads(l) for l in out.splitlines() if l.strip()]
    text = "".join(o["message"]["content"] for o in objs)
    print("ollama", stream, text, objs[-1]["done_reason"])
PY
)
want=$(printf '%s\n' "openai False half an ans length" \
    "anthropic False half an ans max_tokens" "ollama False half an ans length" \
    "openai True half an ans length" "anthropic True half an ans max_tokens" \
    "ollama True half an ans length")
[ "$got" = "$want" ] || fail "hit_max_tokens: expected
$want
got
$got"
pass "hit_max_tokens: each API says max_tokens cut the answer, plain and streamed"
