#!/bin/sh
# tandem submit against a server that answers badly (tests/agents/
# badserver.py): frames that are no client reply do not keep it waiting,
# a last reply with no outcome is said, another session's end is not
# this one's, and what the server says reaches the terminal without
# escapes.
. "$(dirname "$0")/lib.sh"

PY=/usr/bin/python3
SERVER=
bad_cleanup() {
    s=$?
    if [ -n "$SERVER" ]; then kill "$SERVER" 2>/dev/null; fi
    (exit $s)
    cleanup
}
trap bad_cleanup EXIT

# serve MODE: a bad server on its own socket; sets EP
serve() {
    if [ -n "$SERVER" ]; then kill "$SERVER" 2>/dev/null; wait "$SERVER" 2>/dev/null; fi
    EP=ipc://$T/bad-$1.sock
    rm -f "$T/bad-$1.sock" # the last one's: waited for, it said up at once
    $PY "$TOP/tests/agents/badserver.py" "$EP" "$1" 2>"$T/server.err" &
    SERVER=$!
    wait_for_file "$T/bad-$1.sock" 10
}
mkdir -p "$T/repo"

serve junk
TANDEM_TIMEOUT=60 run tandem submit --connect "$EP" --repo "$T/repo" "do it"
expect_rc 1 "a server that sends only agent frames"
expect_in "$T/err" "no answer from tandem serve at $EP"
pass "frames that are no client reply do not keep submit waiting"

serve no-outcome
TANDEM_TIMEOUT=60 run tandem submit --connect "$EP" --repo "$T/repo" "do it"
expect_rc 1 "a last reply with no outcome"
expect_in "$T/err" "ended the exchange without an outcome for session 20261125-000000-aaaaaaaa"
pass "a last reply with no outcome is said, exit 1"

serve other-done
TANDEM_TIMEOUT=60 run tandem submit --connect "$EP" --repo "$T/repo" "do it"
expect_rc 3 "this session's end, after another's"
expect_in "$T/err" "the server ended session 20991231-000000-bbbbbbbb, not 20261125-000000-aaaaaaaa; ignored"
expect_not_in "$T/out" "OTHER"
pass "another session's end is not this one's"

serve escapes
TANDEM_TIMEOUT=60 run tandem submit --connect "$EP" --repo "$T/repo" "do it"
expect_rc 3 "output with escapes"
expect_in "$T/err" "cleared"
if LC_ALL=C grep -q "$(printf '\033')" "$T/err"; then
    fail "an escape from the server reached stderr: $(cat -v "$T/err")"
fi
serve error-escapes
TANDEM_TIMEOUT=60 run tandem submit --connect "$EP" --repo "$T/repo" "do it"
expect_rc 2 "an error with escapes"
expect_in "$T/err" "such task"
if LC_ALL=C grep -q "$(printf '\033')" "$T/err"; then
    fail "an escape in a server's error reached stderr: $(cat -v "$T/err")"
fi
pass "what the server says reaches stderr without terminal escapes, its errors too"

# stdout that cannot be written (a full disk): the diff, the report or
# the session's id is lost, and submit says so and exits 1, not 0 (its
# writes were not checked)
for how in "" --json --detach; do
    case $how in
    --json) what="the report" ;;
    --detach) what="the session's id" ;;
    *) what="the session's output" ;;
    esac
    serve approved
    TANDEM_TIMEOUT=60 tandem submit --connect "$EP" --repo "$T/repo" $how \
        "do it" >/dev/full 2>"$T/err"
    RC=$?
    expect_rc 1 "an approved session, submit ${how:-without an option} into a full disk"
    expect_in "$T/err" "tandem submit: cannot write $what on stdout: No space left on device; the output was lost (session 20261125-000000-aaaaaaaa keeps it), exit 1"
done
serve approved
TANDEM_TIMEOUT=60 run tandem submit --connect "$EP" --repo "$T/repo" "do it"
expect_rc 0 "an approved session, stdout a file"
expect_in "$T/out" "+b"
pass "submit: a result that cannot be written on stdout is exit 1, said"

# a run whose config names a server's endpoint does not take it: libzmq's
# bind removes the socket file there and makes its own, and a `tandem
# run --config` of the server's config took its clients, the server
# serving nobody
serve approved
copy_demo
demo_config "$TOP/examples/demo/cassette.json" <<YAML
orchestrator:
  endpoint: "$EP"
YAML
TANDEM_TIMEOUT=60 run tandem run --repo "$T/demo" "make the failing test pass"
# a configuration error, exit 2 (it was 1, as if the run had failed)
expect_rc 2 "a run on a server's endpoint"
expect_in "$T/err" "cannot bind $EP: another process listens there"
TANDEM_TIMEOUT=60 run tandem submit --connect "$EP" --repo "$T/repo" "do it"
expect_rc 0 "the server still has its clients"
pass "a run does not take the endpoint a server listens on"

# nobody at an ipc:// endpoint is said at once (it waited 10 s for an
# answer, then asked "is it running?")
run tandem submit --connect "ipc://$T/nobody-here.sock" --repo "$T/repo" "x"
expect_rc 1 "no server at the endpoint"
expect_in "$T/err" "no tandem serve listens at ipc://$T/nobody-here.sock"
expect_not_in "$T/err" "is it running?"
pass "submit to an ipc:// endpoint nobody listens at says so at once"

# a server lost after it sent part of the session's stdout, or all of it,
# before its end: the client waits for the next server and writes the
# output once, the part the next one sends again checked against what
# was written, not written twice (it exited 1, "lost tandem serve", with
# the whole diff written; a pipeline took the approved change for failed)
printf -- '--- a/x\n+++ b/x\n@@ -1,3 +1,3 @@\n a\n-b\n+b\n c\n--- a/y\n+++ b/y\n@@ -1 +1 @@\n-a\n+b\n' >"$T/diff.want"
for next in resumed ended resumed-other resumed-short; do
    serve lost-midway
    first=$SERVER
    (TANDEM_TIMEOUT=60 "$BIN/tandem" submit --connect "$EP" --reconnect-s 30 \
        --repo "$T/repo" "do it" >"$T/out.$next" 2>"$T/err.$next"
    echo $? >"$T/rc.$next") &
    BG_PIDS="$BG_PIDS $!"
    wait "$first" # it sent half the diff, and is gone
    SERVER=
    i=0
    until grep -F -q "lost tandem serve at $EP" "$T/err.$next"; do
        i=$((i + 1))
        [ $i -gt 2000 ] && fail "$next: the loss was not said: $(cat "$T/err.$next")"
        sleep 0.01
    done
    rm -f "$T/bad-lost-midway.sock"
    $PY "$TOP/tests/agents/badserver.py" "$EP" "$next" 2>"$T/server.err" &
    SERVER=$!
    wait_for_file "$T/rc.$next" 60
done
[ "$(cat "$T/rc.resumed")" = 0 ] || fail "resumed: exit $(cat "$T/rc.resumed"): $(cat "$T/err.resumed")"
cmp -s "$T/out.resumed" "$T/diff.want" || fail "resumed: stdout is not the diff once: $(cat "$T/out.resumed")"
[ "$(cat "$T/rc.ended")" = 0 ] || fail "ended: exit $(cat "$T/rc.ended"): $(cat "$T/err.ended")"
cmp -s "$T/out.ended" "$T/diff.want" || fail "ended: stdout is not the diff once: $(cat "$T/out.ended")"
[ "$(cat "$T/rc.resumed-other")" = 1 ] || fail "resumed-other: exit $(cat "$T/rc.resumed-other")"
expect_in "$T/err.resumed-other" "is not what was written before the first was lost"
# a shorter one, even a prefix of what was written: the half written is
# not the session's output (it exited 0 with half a diff of another
# attempt on stdout)
[ "$(cat "$T/rc.resumed-short")" = 1 ] || fail "resumed-short: exit $(cat "$T/rc.resumed-short"): $(cat "$T/err.resumed-short")"
expect_in "$T/err.resumed-short" "is not what was written before the first was lost"
pass "a server lost in the middle of the session's stdout: the next one's is written once, checked"
