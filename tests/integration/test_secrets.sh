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
