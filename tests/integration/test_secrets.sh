#!/bin/sh
# Secrets stay secret: a model that echoes the API key in the coder's
# answer and in the critique leaves no trace of it, whole, JSON-escaped
# or cut in two by streaming, in any file under .tandem/, in the kept
# workspace and runtime directory, in the event stream a watcher gets,
# or on the terminal. And an agent's key cannot be read from its
# /proc/PID/environ by a process of the same user.
. "$(dirname "$0")/lib.sh"

# a "/" that JSON writers escape as "\/", and a middle that streaming
# may cut
KEY='sk-test/0123456789abcdef+SECRETxyz'
MIDDLE='0123456789abcdef+SECRET'
export OPENAI_API_KEY=$KEY

# the demo's answers, each with the key echoed in it
KEY="$KEY" /usr/bin/python3 - "$FIX/demo-openai.json" "$T/echo.json" <<'PY'
import json, os, sys
key = os.environ["KEY"]
d = json.load(open(sys.argv[1]))
for i, step in enumerate(d["steps"]):
    c = step["content"]
    if i % 2 == 0:  # the coder: in the rationale
        step["content"] = "My key is %s, by the way. %s" % (key, c)
    else:  # the reviewer: in the critique's summary
        step["content"] = c.replace('"summary": "', '"summary": "(key %s) ' % key)
json.dump(d, open(sys.argv[2], "w"))
PY

copy_demo
# the test skill also reads its parent's (the reviewer's) environment
cat >"$T/demo/agents.yaml" <<YAML
version: 1
skills:
  build: {command: make, timeout_s: 60}
  test:
    command: "tr '\\\\000' '\\\\n' </proc/\$PPID/environ >'$T/reviewer-env'; make test"
    timeout_s: 60
    # unsandboxed: the sandbox would hide the reviewer, and this shows
    # that the reviewer itself keeps its key from its environ
    sandbox: none
YAML
start_fakellm "$T/echo.json"
"$BIN/tandem" run --repo "$T/demo" --llm openai:fake-model \
    --base-url "$FAKE_URL/v1" --keep-workspace "make the failing test pass" \
    >"$T/out" 2>"$T/err" &
pid=$!

# catch the event stream as a watcher would
wait_for_file "$T/demo/.tandem/sessions" 30
i=0
while ! ls "$T"/demo/.tandem/sessions/*/events >/dev/null 2>&1; do
    i=$((i + 1))
    [ $i -gt 3000 ] && fail "no event endpoint appeared"
    kill -0 $pid 2>/dev/null || break
    sleep 0.01
done
ev=$(ls "$T"/demo/.tandem/sessions/*/events 2>/dev/null | head -n 1)
if [ -n "$ev" ]; then
    /usr/bin/python3 - "$(cat "$ev")" "$T/events.txt" "$pid" <<'PY' &
import os, sys, zmq
ctx = zmq.Context()
s = ctx.socket(zmq.SUB)
s.setsockopt(zmq.SUBSCRIBE, b"")
s.setsockopt(zmq.RCVTIMEO, 200)
s.connect(sys.argv[1])
out = open(sys.argv[2], "wb")
pid = int(sys.argv[3])
while True:
    try:
        out.write(s.recv() + b"\n")
        out.flush()
    except zmq.Again:
        try:
            os.kill(pid, 0)
        except OSError:
            break
PY
    sub=$!
fi
wait $pid
rc=$?
[ -n "$ev" ] && wait $sub
[ "$rc" = 0 ] || { cat "$T/err" >&2; fail "the run was not approved (exit $rc)"; }
grep -q '"delta"' "$T/events.txt" || fail "the event stream carried no text"
grep -q '"type":"proposal"' "$T/events.txt" || fail "no journaled record was published"
pass "a run whose model echoes the key is approved, events captured"

RT=$TMPDIR/tandem-$(id -u)
dir=$(session_dir)
kept=$RT/$(basename "$dir")
[ -d "$kept/workspace" ] || fail "no kept workspace at $kept"
ESCAPED=$(printf '%s' "$KEY" | sed 's|/|\\/|g')
for what in "$KEY" "$ESCAPED" "$MIDDLE"; do
    if grep -r -F -l -- "$what" "$T/demo/.tandem" "$kept" "$T/events.txt" \
        "$T/out" "$T/err" >"$T/leaks" 2>/dev/null; then
        cat "$T/leaks" >&2
        fail "the key ($what) leaked into the files above"
    fi
done
grep -r -q -F '[redacted]' "$dir" || fail "nothing in the session says [redacted]"
pass "the key is in no session file, workspace, runtime file, event or output"
rm -rf "$kept"

grep -q '^PATH=' "$T/reviewer-env" || fail "the skill did not read the reviewer's environment"
expect_not_in "$T/reviewer-env" "$MIDDLE"
grep -q '^OPENAI_API_KEY=' "$T/reviewer-env" &&
    fail "the reviewer's environment still names the key"
pass "a skill reading the reviewer's /proc/PID/environ finds no key"

# a change that holds a key's value is never the one approved: every
# file tandem writes masks the key, so final.diff and --apply wrote
# "(******)sum" where the gate audited "(double)sum" (a key "double", as
# local servers' placeholder keys are). The coder's edits holding it are
# sent back; a change under review holding it is refused.
copy_demo
demo_config "$TOP/examples/demo/cassette.json"
sed -i 's/llm: {provider: replay, cassette: "\([^"]*\)"}/llm: {provider: replay, cassette: "\1", api_key_env: DEMO_KEY}/' \
    "$T/demo/agents.yaml"
grep -q 'api_key_env: DEMO_KEY' "$T/demo/agents.yaml" || fail "no key variable in the config"
(cd "$T/demo" && git init -q && git add -A &&
    git -c user.email=t@example.com -c user.name=t commit -qm base) ||
    fail "cannot make the demo a git repository"
DEMO_KEY=double run tandem run --apply --repo "$T/demo" "make the failing test pass"
[ "$RC" -ne 0 ] || fail "a change holding the key was approved"
dir=$(session_dir)
expect_in "$dir/journal.jsonl" "the edits hold the value of DEMO_KEY, a secret"
[ ! -e "$dir/final.diff" ] || fail "a final.diff was written"
[ -z "$(cd "$T/demo" && git status --porcelain -- stats.c)" ] ||
    fail "the tree was changed"
expect_not_in "$T/demo/stats.c" '******'
sed -i 's|^    return sum / count;|    return (double)sum / (double)count;|' "$T/demo/stats.c"
DEMO_KEY=double run tandem review --repo "$T/demo" "make the failing test pass"
expect_rc 2 "a change under review holding the key"
expect_in "$T/err" "the change holds the value of DEMO_KEY, a secret"
pass "a change holding a key's value is sent back, or refused, never approved"

# a local server's placeholder key (vLLM documents EMPTY) is no secret:
# a change that holds the word is approved, and written as it is (every
# change holding it was refused, and every file masked it)
copy_demo
sed 's|>>>>>>> REPLACE|    /* EMPTY input never reaches here */\\n>>>>>>> REPLACE|' \
    "$TOP/examples/demo/cassette.json" >"$T/empty.json"
grep -q 'EMPTY input' "$T/empty.json" || fail "the cassette was not edited"
demo_config "$T/empty.json"
sed -i 's/llm: {provider: replay, cassette: "\([^"]*\)"}/llm: {provider: replay, cassette: "\1", api_key_env: DEMO_KEY}/' \
    "$T/demo/agents.yaml"
DEMO_KEY=EMPTY run tandem run --repo "$T/demo" "make the failing test pass"
expect_rc 0 "a change holding a placeholder key"
dir=$(session_dir)
expect_in "$dir/final.diff" "EMPTY input never reaches here"
expect_not_in "$dir/journal.jsonl" "a secret"
pass "a placeholder key (EMPTY) is no secret: a change holding the word is approved as it is"

# A key cut in two before it is redacted leaves its head, which no
# redaction recognises: the coder's answer with no edit blocks echoes the
# key across byte 2000, where it is cut into the reply's rationale (the
# journal and report.json kept the key's first 20 bytes).
kill "$FAKE_PID" 2>/dev/null; wait "$FAKE_PID" 2>/dev/null; FAKE_PID=
KEY="$KEY" /usr/bin/python3 - "$T/cut.json" <<'PY'
import json, os, sys
key = os.environ["KEY"]
ans = "I could not find the file. " + "x" * (2000 - 27 - 20) + key + " end\n"
json.dump({"steps": [{"content": ans, "repeat": 2}]}, open(sys.argv[1], "w"))
PY
copy_demo
start_fakellm "$T/cut.json"
fake_config <<'YAML'
gate: {max_iterations: 1, escalate: never}
YAML
run tandem run --repo "$T/demo" "make the failing test pass"
expect_rc 1 "an answer with no edits, at the last attempt"
dir=$(session_dir)
expect_in "$dir/journal.jsonl" '"format_error":"the answer contains no edit blocks'
HEAD=$(printf %s "$KEY" | cut -c1-12)
for what in "$HEAD" "$(printf '%s' "$HEAD" | sed 's|/|\\/|g')"; do
    if grep -r -F -l -- "$what" "$T/demo/.tandem" "$T/out" "$T/err" >"$T/leaks"; then
        cat "$T/leaks" >&2
        fail "the key's head ($what) leaked into the files above"
    fi
done
expect_in "$dir/journal.jsonl" 'xxx[redacted]'
pass "a key across the rationale's cut is redacted whole, not cut first"

# the edits hold no key, but the lines the diff keeps as context do (a
# key "values", a word of the demo's code): never approved, since the
# diff kept masked would not be the one audited (final.diff held
# "******" where stdout had the code, and --apply failed on it)
copy_demo
demo_config "$TOP/examples/demo/cassette.json"
sed -i 's/llm: {provider: replay, cassette: "\([^"]*\)"}/llm: {provider: replay, cassette: "\1", api_key_env: DEMO_KEY}/' \
    "$T/demo/agents.yaml"
DEMO_KEY=values run tandem run --repo "$T/demo" "make the failing test pass"
[ "$RC" -ne 0 ] || fail "a diff with the key in its context was approved"
dir=$(session_dir)
expect_in "$dir/journal.jsonl" "holds the value of DEMO_KEY, a secret, in lines of the repository it keeps as context"
[ ! -e "$dir/final.diff" ] || fail "a final.diff was written: $(cat "$dir/final.diff")"
pass "a diff whose context holds a key's value is not approved"

# a reviewer whose critique names the key in an issue: the findings on
# stdout, in every format, and the progress on stderr hold no key (only
# report.json was redacted; stdout and stderr are a CI job's log)
cat >"$T/crit.json" <<JSON
{"steps": [{"content": "{\"verdict\": \"revise\", \"confidence\": 0.9, \"issues\": [{\"type\": \"incorrect\", \"severity\": \"major\", \"file\": \"stats.c\", \"line\": 11, \"description\": \"The key $KEY is wrong here.\", \"suggested_fix\": \"use $KEY\"}], \"summary\": \"summary with $KEY\"}", "repeat": 6}]}
JSON
copy_demo
rm -f "$T/demo/agents.yaml"
(cd "$T/demo" && git init -q && git add -A &&
    git -c user.email=t@example.com -c user.name=t commit -qm base) ||
    fail "cannot make the demo a git repository"
sed -i 's|^    return sum / count;|    return (double)sum / (double)count;|' "$T/demo/stats.c"
kill "$FAKE_PID" 2>/dev/null
wait "$FAKE_PID" 2>/dev/null
start_fakellm "$T/crit.json"
for fmt in "" "--format github" "--format sarif" "--format rdjsonl"; do
    run tandem review $fmt --repo "$T/demo" --llm openai:fake-model \
        --base-url "$FAKE_URL/v1" "make the failing test pass"
    expect_rc 1 "a review the critique rejects (${fmt:-text})"
    expect_in "$T/out" "is wrong here"
    for f in "$T/out" "$T/err"; do
        if grep -q -F -- "$MIDDLE" "$f"; then
            fail "the key reached $(basename "$f") with ${fmt:-text} findings: $(grep -F -- "$MIDDLE" "$f" | head -3)"
        fi
    done
done
pass "a key in a critique's issue reaches neither stdout nor stderr, whatever the findings' format"

# --commit: the coder's rationale, which echoes the key, is the commit's
# message: it held the key, and git's argv held it while git ran
copy_demo
demo_config "$T/echo.json"
(cd "$T/demo" && git init -q && git add -A &&
    git -c user.email=t@example.com -c user.name=t commit -qm base &&
    git config user.email t@example.com && git config user.name t) ||
    fail "cannot make the demo a git repository"
kill "$FAKE_PID" 2>/dev/null
wait "$FAKE_PID" 2>/dev/null
start_fakellm "$T/echo.json"
run tandem run --commit --repo "$T/demo" --llm openai:fake-model \
    --base-url "$FAKE_URL/v1" "make the failing test pass"
expect_rc 0 "--commit with a model that echoes the key"
(cd "$T/demo" && git log -1 --format=%B) >"$T/message"
expect_in "$T/message" "Tandem-Session: "
if grep -r -q -F -- "$MIDDLE" "$T/message" "$T/demo/.git/logs"; then
    fail "the key is in the commit: $(grep -r -F -- "$MIDDLE" "$T/message" "$T/demo/.git/logs" | head -3)"
fi
pass "a key in the coder's rationale stays out of the commit --commit makes"

# --llm for another provider drops the config's api_key_env: its key
# reached a sandboxed skill's environment, the journal and the reviewer's
# prompt (MY_LLM_CREDENTIAL matches no name the scrubber knows)
copy_demo
cat >"$T/demo/probe.sh" <<'PROBE'
env | grep -i cred || echo "no credential in env"
PROBE
cat >"$T/cred.yaml" <<YAML
version: 1
agents:
  coder:
    llm: {provider: anthropic, model: claude-x, api_key_env: MY_LLM_CREDENTIAL}
  reviewer:
    llm: {provider: anthropic, model: claude-x, api_key_env: MY_LLM_CREDENTIAL}
    skills: [probe, build, test]
skills:
  probe: {command: "sh probe.sh", timeout_s: 60, required: false}
  build: {command: make, timeout_s: 60}
  test: {command: make test, timeout_s: 60}
YAML
kill "$FAKE_PID" 2>/dev/null
wait "$FAKE_PID" 2>/dev/null
start_fakellm "$FIX/demo-openai.json"
MY_LLM_CREDENTIAL='cred-0123456789abcdefCREDSECRET' run tandem run \
    --llm openai:fake-model --base-url "$FAKE_URL/v1" --config "$T/cred.yaml" \
    --repo "$T/demo" "make the failing test pass"
dir=$(session_dir)
[ -n "$dir" ] || fail "no session: $(cat "$T/err")"
expect_in "$dir/journal.jsonl" "no credential in env"
if grep -r -q -F "CREDSECRET" "$dir" "$T/out" "$T/err"; then
    fail "the config's key reached the session: $(grep -r -l -F "CREDSECRET" "$dir" | head -3)"
fi
pass "--llm for another provider: the config's own key variable is still scrubbed from skills and redacted"

# A password in a base URL (http://user:PASSWORD@host/v1, sent as basic
# authentication) is a secret too: it went in clear to stderr, doctor's
# table, report.json, the journal, the model exchanges and the logs
kill "$FAKE_PID" 2>/dev/null
wait "$FAKE_PID" 2>/dev/null
echo '{"steps": [{"status": 401, "repeat": 20}]}' >"$T/s401.json"
start_fakellm "$T/s401.json"
copy_demo
url=$(echo "$FAKE_URL" | sed 's|http://|http://user:PWURL0123456789SECRET@|')/v1
OPENAI_API_KEY=sk-test-0123456789 run tandem run --repo "$T/demo" \
    --llm openai:fake-model --base-url "$url" "make the failing test pass"
expect_not_in "$T/err" "PWURL0123456789SECRET"
expect_in "$T/err" "user:[redacted]@"
dir=$(session_dir)
if grep -r -q -F "PWURL0123456789SECRET" "$dir"; then
    fail "the URL's password reached the session: $(grep -r -l -F "PWURL0123456789SECRET" "$dir" | head -3)"
fi
OPENAI_API_KEY=sk-test-0123456789 run tandem doctor --repo "$T/demo" \
    --llm openai:fake-model --base-url "$url"
expect_not_in "$T/out" "PWURL0123456789SECRET"
pass "a base URL's password is redacted as a key is"
