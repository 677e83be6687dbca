#!/bin/sh
# tandem submit whose server is lost before it answers: the client sends
# the task again under the session id it proposed, to the next server,
# and gets the task's outcome; the task runs once. (It waited 10 s, said
# no server answered, "is it running?", and exited 1, while the next
# server ran the task, or none did.) A submit under an id the server
# has is followed, never made twice. The kill comes at one exact write,
# strace's: the server's first write to its accepted list.
. "$(dirname "$0")/lib.sh"

. "$(dirname "$0")/serve_lib.sh"

serve_config "$T/serve.yaml"
repo a
acc=$T/state/tandem/accepted.jsonl
start_serve_killed_at_accept "$T/serve.yaml"
(tandem submit --reconnect-s 30 --repo "$T/a" "make the failing test pass" \
    >"$T/out.lost" 2>"$T/err.lost"; echo $? >"$T/rc.lost") &
BG_PIDS="$BG_PIDS $!"
wait "$SERVE_PID" # strace, once the server it runs is killed
rc=$?
SERVE_PID=
[ "$rc" = 137 ] || fail "the server under strace exited $rc: $(tail -5 "$T/serve.err")"
expect_not_in "$T/serve.err" "accepted in"
: >"$T/serve.err"
start_serve --config "$T/serve.yaml" --pool 1
wait_for_file "$T/rc.lost" $((60 * SLOW))
[ "$(cat "$T/rc.lost")" = 0 ] || fail "the client exited $(cat "$T/rc.lost"): $(cat "$T/err.lost")"
expect_in "$T/err.lost" "lost tandem serve at ipc://$T/run/tandem/serve.sock before it answered"
expect_in "$T/err.lost" "[2/3] approve"
n=$(ls "$T/a/.tandem/sessions" | wc -l)
[ "$n" = 1 ] || fail "the task made $n sessions"
sid=$(ls "$T/a/.tandem/sessions")
expect_in "$T/err.lost" "as session $sid"
approved "$T/a/.tandem/sessions/$sid"
cmp -s "$T/a/.tandem/sessions/$sid/final.diff" "$T/out.lost" ||
    fail "the client's stdout is not the session's final.diff"
pass "a server killed before it answers a submit: the client sends it again to the next server and gets its outcome; one session"

# the same id again: the session the server has is followed, not made
# again (a client that lost the server after the session was made)
run env CLIENT_SESSION="$sid" $PY "$TOP/tests/agents/client.py" \
    "$(cat "$EPFILE")" submit "$T/a" "make the failing test pass"
expect_rc 0 "a submit under an id the server has"
# ended: its outcome, as --attach gets it
expect_in "$T/out" "status: approved"
expect_not_in "$T/out" "session: "
[ "$(ls "$T/a/.tandem/sessions" | wc -l)" = 1 ] || fail "a submit under a known id made a session"
run env CLIENT_SESSION="not-an-id" $PY "$TOP/tests/agents/client.py" \
    "$(cat "$EPFILE")" submit "$T/a" "make the failing test pass"
expect_rc 11 "a submit under a malformed id"
expect_in "$T/err" "error: bad_request: field 'session' must be a session id"
stop_serve
pass "a submit under an id the server has follows that session; a malformed id is refused"

# a server killed after it recorded the session as accepted and before
# it journaled the task: the next server ends it unstarted, and the
# client that sends the task again under its id gets it run, not that
# end (its task would be lost)
id=20261124-000000-0000cccc
mkdir -p "$T/a/.tandem/sessions/$id"
: >"$T/a/.tandem/sessions/$id/journal.jsonl"
printf '{"seq":9001,"time":"2026-11-24T00:00:00Z","type":"accept","repo":"%s","session":"%s"}\n' \
    "$T/a" "$id" >>"$acc"
: >"$T/serve.err"
start_serve --config "$T/serve.yaml" --pool 1
expect_in "$T/serve.err" "session $id of an earlier server: that server stopped before its task was journaled"
run env CLIENT_SESSION="$id" $PY "$TOP/tests/agents/client.py" \
    "$(cat "$EPFILE")" submit "$T/a" "make the failing test pass"
expect_rc 0 "the task sent again under the id of a session ended unstarted"
expect_in "$T/err" "session $id: "
approved "$T/a/.tandem/sessions/$id"
stop_serve
pass "a task sent again under the id of a session the next server ended unstarted is run"

# a task on disk that no server here knows: the server that accepted it
# (under another state directory, or one whose list lost it) was killed
# once its task was journaled, before it answered; the client sends the
# task again under its id, to this server. It was refused, "session ID
# is in REPO already; submit the task under another id", while its task
# was on disk: the session is taken up here and followed, and runs once
id=20261124-000000-0000eeee
d=$T/a/.tandem/sessions/$id
mkdir -p "$d"
head -1 "$T/a/.tandem/sessions/$sid/journal.jsonl" | sed "s/$sid/$id/" >"$d/journal.jsonl"
expect_in "$d/journal.jsonl" '"type":"task"'
expect_in "$d/journal.jsonl" '"served":true'
: >"$T/serve.err"
start_serve --config "$T/serve.yaml" --pool 1
# another tandem holds it (the server that accepted it runs it still):
# refused, naming the holder, and nothing is run here
# (the holder is this shell's child itself, so killing it at exit frees
# the lock, and it writes nowhere a pipe waits on)
command -v flock >/dev/null 2>&1 || fail "flock (util-linux) is missing"
sh -c "exec 9>>'$d/lock' && flock 9 && touch '$T/held' &&
    while [ ! -e '$T/release' ] && [ -d '$T' ]; do sleep 0.02; done" \
    </dev/null >/dev/null 2>&1 &
holder=$!
BG_PIDS="$BG_PIDS $holder"
wait_for_file "$T/held" 10
run env CLIENT_SESSION="$id" $PY "$TOP/tests/agents/client.py" \
    "$(cat "$EPFILE")" submit "$T/a" "make the failing test pass"
expect_rc 16 "the task sent again under the id of a session another tandem holds"
expect_in "$T/err" "error: failed: session $id is being worked on by another tandem"
[ "$(wc -l <"$d/journal.jsonl")" = 1 ] || fail "a session another tandem holds was run"
touch "$T/release"
wait "$holder"
# a repository others may write in: not gone on with, as a new task there
chmod 0777 "$T/a"
run env CLIENT_SESSION="$id" $PY "$TOP/tests/agents/client.py" \
    "$(cat "$EPFILE")" submit "$T/a" "make the failing test pass"
expect_rc 17 "the task sent again under its id, its repository open to all"
expect_in "$T/err" "error: forbidden: repo $T/a: others may write in $T/a"
[ "$(wc -l <"$d/journal.jsonl")" = 1 ] || fail "a session in a repository others may write in was run"
chmod 0755 "$T/a"
run env CLIENT_SESSION="$id" $PY "$TOP/tests/agents/client.py" \
    "$(cat "$EPFILE")" submit "$T/a" "make the failing test pass"
expect_rc 0 "the task sent again under the id of an interrupted session no server here knows"
expect_not_in "$T/err" "already"
expect_in "$T/serve.err" "session $id ($T/a), on disk and not ended, goes on here"
approved "$d"
[ "$(grep -c '"type":"task"' "$d/journal.jsonl")" = 1 ] || fail "the task was journaled again"
stop_serve
pass "a task sent again under the id of a session on disk that this server does not know is taken up and followed"
