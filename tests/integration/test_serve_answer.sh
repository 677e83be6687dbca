#!/bin/sh
# A person answers a session tandem serve ran (issue 8): `tandem budget|
# guide|approve|reject ID` goes to the running server, which takes the
# answer only once it is on disk (its accepted list, fsync'd), goes on
# with the session and streams it to the answering command, as submit
# does. A server killed after taking an answer goes on with it when it
# starts again. With no server running, the session is answered here.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/serve_lib.sh"

# one attempt, then a person: the demo's first proposal fails its test
serve_config "$T/one.yaml" make 1
for r in a b c; do repo "$r"; done
start_serve --config "$T/one.yaml" --max-sessions 2

# escalated: `submit` ends with exit 3 and names the answers
escalate() { # REPO: submit a task that waits for a person; sets SID
    run tandem submit --repo "$T/$1" "make the failing test pass"
    expect_rc 3 "escalated in $1"
    expect_in "$T/err" "tandem budget"
    SID=$(sed -n 's/^tandem: session \([^:]*\): make.*/\1/p' "$T/err" | head -1)
    [ -n "$SID" ] || fail "no session id in: $(cat "$T/err")"
}

# kept_code SID: the exit code the server's accepted list keeps for
# session SID once its last record of it is its end (the server ends it
# there after its clients heard the end: polled)
kept_code() {
    i=0
    until code=$($PY - "$T/state/tandem/accepted.jsonl" "$1" <<'PY'
import json, sys
mine = [r for r in map(json.loads, open(sys.argv[1]))
        if r.get("session") == sys.argv[2]]
sys.exit(not mine or mine[-1].get("type") != "end" or
         print(mine[-1].get("code")))
PY
    ); do
        i=$((i + 1))
        [ $i -gt $((1000 * SLOW)) ] && fail "the accepted list never ended session $1"
        sleep 0.01
    done
    echo "$code"
}

# ---- answered through the server ----------------------------------------
escalate a
run tandem budget --repo "$T/a" --iterations 1 "${SID#*-*-}"
expect_rc 0 "budget through the server"
expect_in "$T/err" "session $SID goes on in tandem serve"
expect_in "$T/err" "[2/2] approve"
expect_in "$T/out" "+    return (double)sum / (double)count;"
expect_in "$T/serve.err" "session $SID goes on with budget"
d=$T/a/.tandem/sessions/$SID
expect_in "$d/journal.jsonl" '"type":"answer"'
expect_in "$d/journal.jsonl" '"type":"finish","status":"approved"'
# over ipc:// the server names the answering process's account, as the
# kernel reported it (not a name the client sent)
expect_in "$d/journal.jsonl" "\"via\":\"ipc\",\"user\":\"$(id -un)\""
# the agents that did it are the server's: nothing was started here
[ "$(grep -c "goes on with" "$T/serve.err")" = 1 ] || fail "one answer expected in serve.err"
# it ended twice in this server, escalated then approved: --attach tells
# the last end (it said exit 3, with no diff; a review found it)
run tandem submit --attach "$SID"
expect_rc 0 "attached after the answer"
expect_in "$T/out" "+    return (double)sum / (double)count;"
pass "tandem budget ID of a served session: the server goes on with it and the command follows it"

# an answer the server cannot take is refused, and the session is unharmed
run tandem approve --repo "$T/a" "$SID"
expect_rc 2 "answering an approved session"
expect_in "$T/err" "is not waiting for an answer (approved)"
escalate b
run $PY "$TOP/tests/agents/client.py" "$(cat "$EPFILE")" answer "$T/b" "$SID" skip
expect_rc 0 "a raw answer request"
expect_in "$T/out" "error bad_request"
expect_in "$T/out" "a server takes approve, reject, guide or budget"
# an answer no server takes is a bad request, naming only what a server
# takes (not the terminal's skip and stop), whatever session it names
run $PY "$TOP/tests/agents/client.py" "$(cat "$EPFILE")" answer "$T/b" "$SID" maybe
expect_in "$T/out" "error bad_request: unknown answer 'maybe'; a server takes approve, reject, guide or budget"
run $PY "$TOP/tests/agents/client.py" "$(cat "$EPFILE")" answer "$T/b" no-such-session maybe
expect_in "$T/out" "error bad_request: unknown answer 'maybe'"
# an answer that is not whole is refused before the server keeps it or
# the session goes on: a guide with no text, a budget that grants
# nothing (the server took them, the session went on and only then
# ended with exit 2, advice for a command line, and --attach said 2 from
# then on, silently)
run $PY "$TOP/tests/agents/client.py" "$(cat "$EPFILE")" answer "$T/b" "$SID" budget 0
expect_in "$T/out" "error config: budget: give --iterations N, --tokens N or --calls N"
expect_not_in "$T/out" "exit:"
run $PY "$TOP/tests/agents/client.py" "$(cat "$EPFILE")" answer "$T/b" "$SID" guide
expect_in "$T/out" "error config: guide: say it with -m TEXT (tandem guide $SID -m TEXT)"
expect_not_in "$T/out" "exit:"
run $PY "$TOP/tests/agents/client.py" "$(cat "$EPFILE")" answer "$T/b" "$SID" reject "  "
expect_in "$T/out" "error config: reject: say it with -m TEXT"
# the server's config has no token budget: --tokens grants nothing
run tandem budget --repo "$T/b" --tokens 100 "$SID"
expect_rc 2 "a served budget of tokens where the config has no token budget"
expect_in "$T/err" "gate.max_tokens is 0 (no token budget), so --tokens grants nothing"
expect_not_in "$T/err" "goes on in tandem serve"
run tandem budget --repo "$T/b" "$SID"
expect_rc 2 "a served budget that grants nothing"
expect_in "$T/err" "tandem: budget: give --iterations N, --tokens N or --calls N"
expect_not_in "$T/serve.err" "session $SID goes on with"
expect_not_in "$T/b/.tandem/sessions/$SID/journal.jsonl" '"type":"resume"'
expect_not_in "$T/b/.tandem/sessions/$SID/journal.jsonl" '"type":"answer"'
run tandem submit --attach "$SID"
expect_rc 3 "attached to a session that still waits after a refused answer"
run tandem guide --repo "$T/b" -m "divide as doubles" "$SID"
expect_rc 0 "guide through the server"
expect_in "$T/b/.tandem/sessions/$SID/journal.jsonl" '"text":"divide as doubles"'
# a session made with the built-in defaults (its task record names no
# config) is not this server's to answer: it ran with other agents, so
# it goes on here, with the defaults (whose model needs a key not set)
repo d
escalate d
sed -i '1s|"config":"[^"]*"|"config":null|' "$T/d/.tandem/sessions/$SID/journal.jsonl"
expect_in "$T/d/.tandem/sessions/$SID/journal.jsonl" '"config":null'
run tandem budget --repo "$T/d" --iterations 1 "$SID"
expect_rc 2 "answering a session of the built-in defaults"
expect_in "$T/err" "ran with another configuration than the running tandem serve's; it goes on here"
expect_not_in "$T/serve.err" "session $SID goes on with"
expect_not_in "$T/d/.tandem/sessions/$SID/journal.jsonl" '"type":"answer"'
pass "answers the server cannot take are refused with the reason; the session waits on"

# the files changed after the question (a context line of stats.c): a
# guide, which goes on from them, is refused naming the file, and the
# session waits on; an approve ends it with the diff the person was
# shown (the server kept it, and the session could not end)
repo e
escalate e
d=$T/e/.tandem/sessions/$SID
cp "$d/attempt-1.diff" "$T/seen.diff"
sed -i 's/sum += values\[i\];/sum += values[i]; \/\/ add them up/' "$T/e/stats.c"
cp "$d/report.json" "$T/question.json"
run tandem guide --repo "$T/e" -m "divide as doubles" "$SID"
expect_rc 1 "a served guide on changed files"
expect_in "$T/err" "attempt 1's change to stats.c, made again from its journaled edits, is not the one its journaled audit saw"
expect_in "$T/err" "tandem: your guide was not taken (nothing was journaled): session $SID still waits for a person"
expect_not_in "$T/err" "failed after"
expect_not_in "$d/journal.jsonl" '"type":"answer"'
# the accepted list keeps the session's outcome as waiting for a person,
# 3, as the journal says (it kept 1, the exit the guide's command heard,
# and only --attach reading the journal again made that right)
code=$(kept_code "$SID")
[ "$code" = 3 ] || fail "the accepted list keeps exit $code for a session that waits after a refused guide"
# the question's report stays, and --attach says the session waits (it
# said "ended failed" beside the answers to give, report.json failed)
cmp -s "$d/report.json" "$T/question.json" ||
    fail "a refused served guide rewrote the question's report.json"
run tandem submit --attach "$SID" --json
expect_rc 3 "attached after a refused guide"
expect_in "$T/out" '"status": "escalated"'
run tandem submit --attach "$SID"
expect_rc 3 "attached after a refused guide"
expect_in "$T/err" "session $SID ended escalated: gate.max_iterations (1) reached"
expect_not_in "$T/err" "failed: "
run tandem approve --repo "$T/e" "$SID"
expect_rc 0 "a served approve on changed files"
expect_in "$T/err" "session $SID goes on in tandem serve"
cmp -s "$T/out" "$T/seen.diff" || fail "stdout is not the diff the person was shown"
cmp -s "$d/final.diff" "$T/seen.diff" || fail "final.diff is not the diff the person was shown"
expect_in "$d/journal.jsonl" '"type":"finish","status":"approved"'
pass "a served approve after the files changed takes the diff shown; a guide is refused"

# ---- a server killed after taking an answer goes on with it -------------
escalate c
stop_serve
# the answer as a server takes it, on disk, and then the server died
# before the session went on: its accepted list holds it
printf '{"seq":9999,"time":"2026-11-24T00:00:00Z","type":"accept","repo":"%s","session":"%s","answer":{"answer":"budget","iterations":1,"tokens":0,"via":"curve","user":"ann-laptop","key":"rq:rM>}U?@Ln"}}\n' \
    "$T/c" "$SID" >>"$T/state/tandem/accepted.jsonl"
start_serve --config "$T/one.yaml" --max-sessions 2
d=$T/c/.tandem/sessions/$SID
i=0
until grep -q '"type":"finish"' "$d/journal.jsonl" 2>/dev/null; do
    i=$((i + 1))
    [ $i -gt $((3000 * SLOW)) ] && fail "session $SID did not go on after the restart"
    sleep 0.01
done
expect_in "$d/journal.jsonl" '"type":"finish","status":"approved"'
expect_in "$d/journal.jsonl" '"type":"answer"'
# and with who gave it, as the server that took it recorded
expect_in "$d/journal.jsonl" '"via":"curve","user":"ann-laptop","key":"rq:rM>}U?@Ln"'
expect_in "$T/serve.err" "session $SID of an earlier server goes on"
pass "an answer the server took survives its death: the next server goes on with it, and names who gave it"

# an answer an earlier server took, refused by the next (the files
# changed meanwhile): nobody follows the session, so the server's log
# says so, and the session's report still says it waits (failed, and
# the reason gone with the answer)
repo f
escalate f
stop_serve
d=$T/f/.tandem/sessions/$SID
cp "$d/report.json" "$T/question.json"
sed -i 's/sum += values\[i\];/sum += values[i]; \/\/ add them up/' "$T/f/stats.c"
printf '{"seq":9999,"time":"2026-11-24T00:00:00Z","type":"accept","repo":"%s","session":"%s","answer":{"answer":"guide","text":"divide as doubles","iterations":0,"tokens":0,"via":"ipc","user":"ann"}}\n' \
    "$T/f" "$SID" >>"$T/state/tandem/accepted.jsonl"
start_serve --config "$T/one.yaml" --max-sessions 2
wait_for "session $SID ended (exit 1)" "$T/serve.err" 30
expect_in "$T/serve.err" "session $SID: the guide it was given was not taken, and it still waits for a person: $T/f changed since this session started"
code=$(kept_code "$SID")
[ "$code" = 3 ] || fail "the accepted list keeps exit $code for a session that waits after a refused kept guide"
expect_not_in "$d/journal.jsonl" '"type":"answer"'
cmp -s "$d/report.json" "$T/question.json" ||
    fail "a refused kept answer rewrote the question's report.json"
run tandem submit --attach "$SID"
expect_rc 3 "attached after a refused kept answer"
expect_in "$T/err" "session $SID ended escalated"
pass "an answer an earlier server took and the next refuses leaves the session waiting, and says so in the server's log"

# ---- an answer kept for a question the session has moved past -----------
# a server took `approve` for attempt 1 and died; with no server, a person
# granted another attempt here, which failed and asked again; the next
# server applied the old approve to attempt 2, a diff nobody was shown
python3 - "$CASSETTE" "$T/stale.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
second = [e for e in c["exchanges"] if e["role"] == "coder"][1]
second["answer"] = ("second try\n\nstats.c\n<<<<<<< SEARCH\n    return sum / count;\n"
                    "=======\n    return 0.0; /* ATTEMPT-2 */\n>>>>>>> REPLACE\n")
for e in c["exchanges"]:
    if e["attempt"] == 2:
        e.pop("expect", None)
json.dump(c, open(sys.argv[2], "w"))
PY
stop_serve
CASSETTE=$T/stale.json serve_config "$T/stale.yaml" make 1
start_serve --config "$T/stale.yaml" --max-sessions 2
repo e
escalate e
stop_serve
d=$T/e/.tandem/sessions/$SID
seq=$(python3 -c '
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
print([r for r in recs if r["type"] == "escalation"][-1]["seq"])' "$d/journal.jsonl")
printf '{"seq":9999,"time":"2026-11-24T00:00:00Z","type":"accept","repo":"%s","session":"%s","answer":{"escalation":%s,"answer":"approve","iterations":0,"tokens":0,"via":"ipc","user":"ann"}}\n' \
    "$T/e" "$SID" "$seq" >>"$T/state/tandem/accepted.jsonl"
run tandem budget --repo "$T/e" --iterations 1 "$SID"
expect_rc 3 "the attempt granted here failed and asks again"
[ "$(grep -c '"type":"escalation"' "$d/journal.jsonl")" = 2 ] || fail "expected a second escalation"
start_serve --config "$T/stale.yaml" --max-sessions 2
i=0
until grep -q "session $SID asked a person again" "$T/serve.err" 2>/dev/null; do
    i=$((i + 1))
    [ $i -gt $((3000 * SLOW)) ] && fail "the next server did not take up session $SID"
    sleep 0.01
done
expect_not_in "$d/journal.jsonl" '"type":"finish"'
[ ! -e "$d/final.diff" ] || fail "a final.diff was written: $(cat "$d/final.diff")"
[ "$(grep -c '"type":"answer"' "$d/journal.jsonl")" = 1 ] || fail "the old answer was taken"
expect_in "$T/serve.err" "that answer is dropped, and the session waits for a person"
run tandem approve --repo "$T/e" "$SID"
expect_rc 0 "approving the question that waits"
expect_in "$d/final.diff" "ATTEMPT-2"
stop_serve
start_serve --config "$T/one.yaml" --max-sessions 2
pass "an answer kept for an earlier question is not taken for a later one"

# ---- no server: answered here --------------------------------------------
repo a
escalate a
stop_serve
run tandem budget --repo "$T/a" --iterations 1 "$SID"
expect_rc 0 "budget with no server"
expect_in "$T/err" "was run by tandem serve, which is not running; it goes on here"
expect_in "$T/out" "+    return (double)sum / (double)count;"
pass "with no server running, a served session is answered here"

# the server before ended it waiting for a person (exit 3) and kept that
# outcome; answered here since, it is approved: a client that comes back
# to the next server gets the approval, not the exit 3 of a question
# answered already
start_serve --config "$T/one.yaml" --max-sessions 2
run tandem submit --attach "$SID"
expect_rc 0 "attach, after a restart, to a session answered with no server"
expect_in "$T/out" "+    return (double)sum / (double)count;"
stop_serve
pass "a session answered with no server is told as it ended, not as it waited"

# an answer to a session the server is running is a usage error (exit
# 2), as without a server: it was "busy" (exit 75, try again later), and
# a script that retried on it sent the losing answer of two people again
serve_config "$T/slow.yaml" "touch '$T/building'; while [ ! -e '$T/go' ]; do sleep 0.05; done; make" 1
repo d
rm -f "$T/building" "$T/go"
start_serve --config "$T/slow.yaml" --max-sessions 1
run tandem submit --detach --repo "$T/d" "make the failing test pass"
expect_rc 0 "submitted, detached"
SID=$(cat "$T/out")
wait_for_file "$T/building" 30
run tandem approve --repo "$T/d" "$SID"
expect_rc 2 "an answer to a running session"
expect_in "$T/err" "is running in this server, not waiting for an answer"
touch "$T/go"
run tandem submit --attach "$SID"
expect_rc 3 "the session went on, to its person"
stop_serve
pass "an answer to a session the server runs is exit 2, as without a server"

# attached to a session that ended waiting for a person while nobody
# followed it: its status, why, and the answers (attach exited 3 with
# nothing on stdout or stderr)
start_serve --config "$T/one.yaml" --max-sessions 2
repo e
run tandem submit --detach --repo "$T/e" "make the failing test pass"
expect_rc 0 "submitted, detached"
SID=$(cat "$T/out")
# ended in the server, not only journaled the escalation: the session
# goes on a moment after that record (the report, the views), and one
# attached to then is followed, live, to its end, which a person
# following it saw as it came (a loaded machine failed here)
wait_for "session $SID ended (exit 3)" "$T/serve.err" 60
run tandem submit --attach "$SID"
expect_rc 3 "attached to a session that waits for a person"
expect_in "$T/err" "tandem: session $SID ended escalated: gate.max_iterations (1) reached"
expect_in "$T/err" "  tandem approve $SID"
expect_in "$T/err" "  tandem guide $SID -m TEXT"
stop_serve
pass "attach to a session that ended waiting says how it ended and how to answer"

# a session a server with another configuration left waiting: the running
# server refuses it as not its own, and the answer goes on here (it said
# to start a second server, which cannot start while one runs)
serve_config "$T/other.yaml" make 1
start_serve --config "$T/one.yaml" --max-sessions 2
repo f
run tandem submit --repo "$T/f" "make the failing test pass"
expect_rc 3 "escalated under one.yaml"
SID=$(sed -n 's/^tandem: session \([^:]*\): make.*/\1/p' "$T/err" | head -1)
stop_serve
start_serve --config "$T/other.yaml" --max-sessions 2
run tandem approve --repo "$T/f" "$SID"
expect_rc 0 "answered here, with its own configuration"
expect_in "$T/err" "ran with another configuration than the running tandem serve's; it goes on here"
expect_in "$T/out" "+    return (double)(sum / (long)count);"
stop_serve
pass "a served session of another configuration is answered here while a server runs"
