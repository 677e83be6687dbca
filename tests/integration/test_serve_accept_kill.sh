#!/bin/sh
# tandem serve killed outright while it takes a task in: the next server
# knows every session whose task is on disk, so none is left there that
# no server runs. The session is recorded as accepted before its task is
# journaled (it was after: killed between the two, the server left a
# journaled task that the next one never took up, and whose client
# never heard its id); one recorded and never journaled is ended by the
# next server, not waited for. The kill comes at one exact write,
# strace's: the server's first write to its accepted list.
. "$(dirname "$0")/lib.sh"

. "$(dirname "$0")/serve_lib.sh"

serve_config "$T/serve.yaml"
repo a
acc=$T/state/tandem/accepted.jsonl
start_serve_killed_at_accept "$T/serve.yaml"
tandem submit --reconnect-s 0 --repo "$T/a" "make the failing test pass" \
    >"$T/out.lost" 2>"$T/err.lost" &
client=$!
BG_PIDS="$BG_PIDS $client"
wait "$SERVE_PID" # strace, once the server it runs is killed
rc=$?
SERVE_PID=
kill "$client" 2>/dev/null
[ "$rc" = 137 ] || fail "the server under strace exited $rc: $(tail -5 "$T/serve.err")"
expect_not_in "$T/serve.err" "accepted in"
n=$(ls "$T/a/.tandem/sessions" | wc -l)
[ "$n" = 1 ] || fail "expected one session made, found $n"
sid=$(ls "$T/a/.tandem/sessions")
d=$T/a/.tandem/sessions/$sid

: >"$T/serve.err"
start_serve --config "$T/serve.yaml" --pool 1
# a task on disk is one the next server runs to its end (killed at that
# write, the server has not journaled it yet)
if grep -q '"type":"task"' "$d/journal.jsonl" 2>/dev/null; then
    wait_for '"type":"finish"' "$d/journal.jsonl" $((30 * SLOW))
fi
stop_serve
pass "a server killed as it takes a task in leaves no journaled task that no server runs"

# recorded as accepted, killed before the task was journaled (an empty
# journal), or before the journal was made: the next server ends both,
# and no server after it waits for them (one without a journal waited
# for every next server; one with an empty journal was run)
mkdir -p "$T/a/.tandem/sessions/20261124-000000-0000aaaa" \
    "$T/a/.tandem/sessions/20261124-000000-0000bbbb"
: >"$T/a/.tandem/sessions/20261124-000000-0000aaaa/journal.jsonl"
seq=9000
for id in 20261124-000000-0000aaaa 20261124-000000-0000bbbb; do
    seq=$((seq + 1))
    printf '{"seq":%d,"time":"2026-11-24T00:00:00Z","type":"accept","repo":"%s","session":"%s"}\n' \
        $seq "$T/a" "$id" >>"$acc"
done
: >"$T/serve.err"
# a soft limit of open files that is the hard one, far past what the
# server needs: taking two sessions over needs no raise (it tried the
# soft limit plus two, and warned that sessions may wait)
SERVE_IN="prlimit --nofile=4096:4096"
start_serve --config "$T/serve.yaml" --pool 1
SERVE_IN=
stop_serve
expect_not_in "$T/serve.err" "cannot raise the open files limit"
expect_in "$T/serve.err" "session 20261124-000000-0000aaaa of an earlier server: that server stopped before its task was journaled"
expect_in "$T/serve.err" "session 20261124-000000-0000bbbb of an earlier server"
expect_not_in "$T/serve.err" "20261124-000000-0000bbbb (${T}/a) of an earlier server cannot be read now"
: >"$T/serve.err"
start_serve --config "$T/serve.yaml" --pool 1
stop_serve
expect_not_in "$T/serve.err" "20261124-000000-0000"
pass "a session accepted and never journaled is ended by the next server; taking sessions over under a soft limit that is the hard one does not warn"

# a review, killed as the server takes it in: the file the server put
# its diff in ($TMPDIR/tandem-UID/submitted-XXXXXX.diff, removed in the
# same call once the session is made) stayed for good, a copy of the
# change; the sweep of the next session removes it, as nobody holds its
# lock any more (not in its first minute: hence the touch)
repo b
printf 'diff --git a/new.txt b/new.txt\nnew file mode 100644\n--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+x\n' >"$T/change.diff"
: >"$T/serve.err"
start_serve_killed_at_accept "$T/serve.yaml"
tandem submit --review --diff "$T/change.diff" --reconnect-s 0 \
    --repo "$T/b" "a new file" >"$T/out.review" 2>"$T/err.review" &
client=$!
BG_PIDS="$BG_PIDS $client"
wait "$SERVE_PID" 2>/dev/null
rc=$?
SERVE_PID=
kill "$client" 2>/dev/null
[ "$rc" = 137 ] || fail "the server under strace exited $rc: $(tail -5 "$T/serve.err")"
left=$(ls "$TMPDIR/tandem-$(id -u)"/submitted-*.diff 2>/dev/null)
[ -n "$left" ] || fail "no diff left by the killed server: the kill came elsewhere"
touch -d "@$(($(date +%s) - 120))" $left
start_serve --config "$T/serve.yaml" --pool 1
tandem submit --reconnect-s 0 --repo "$T/a" "make the failing test pass" \
    >"$T/out.next" 2>"$T/err.next" || fail "the next task failed: $(tail -3 "$T/err.next")"
stop_serve
for f in $left; do
    [ ! -e "$f" ] || fail "the diff a killed server left is still there: $f"
done
pass "a review's diff a server killed as it took the review in left is swept"

# killed after a session journaled the question it asks its person (the
# gate escalated), before its report.json was written: the next server
# ended it as waiting with no report, for good, and a client that came
# back for it was sent to a report.json that was not there (with --json,
# nothing on stdout). It goes on, replaying its journal to the question,
# and writes the report.
serve_config "$T/once.yaml" make 1
repo w
start_serve --config "$T/once.yaml" --pool 1
run tandem submit --repo "$T/w" "make the failing test pass"
expect_rc 3 "an escalation"
wid=$(ls "$T/w/.tandem/sessions")
wd=$T/w/.tandem/sessions/$wid
stop_serve
# what the kill leaves: the escalation journaled, no report, the session
# accepted and not ended
tail -n 1 "$wd/journal.jsonl" | grep -q '"type":"escalation"' ||
    fail "the session does not end on its escalation: $(tail -n 1 "$wd/journal.jsonl")"
rm "$wd/report.json"
printf '{"seq":9999,"time":"2026-11-24T00:00:00Z","type":"accept","repo":"%s","session":"%s"}\n' \
    "$T/w" "$wid" >>"$acc"
: >"$T/serve.err"
start_serve --config "$T/once.yaml" --pool 1
run tandem submit --json --attach "$wid" --repo "$T/w"
stop_serve
expect_rc 3 "attach to a session killed before its report"
[ -s "$wd/report.json" ] || fail "no report.json: $(cat "$T/serve.err")"
expect_in "$wd/report.json" '"status": "escalated"'
expect_in "$T/out" '"status": "escalated"'
[ "$(grep -c '"type":"proposal"' "$wd/journal.jsonl")" = 1 ] ||
    fail "the proposal was asked again: $(grep -c '"type":"proposal"' "$wd/journal.jsonl")"
pass "a session killed between its question and its report gets its report from the next server"
