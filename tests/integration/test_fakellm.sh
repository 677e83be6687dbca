#!/bin/sh
# fakellm itself: steps with `when` are taken by the requests whose body
# holds their strings, whatever the order has reached, and the ordered
# steps skip them (bench/ relies on this to answer many sessions at once).
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
