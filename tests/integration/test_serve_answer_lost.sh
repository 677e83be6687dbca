#!/bin/sh
# An answer a server took and kept, when it stopped before the session
# went on with it, and that another person's answer, given here with no
# server running, came before: the next server finds the session ended,
# and the first command hears that its answer was not used (exit 2). It
# followed the session to the other answer's end: a `tandem reject`
# exited 0 with the approved diff on stdout.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/serve_lib.sh"

# every session's build waits for $T/go: the holder keeps the only slot
serve_config "$T/slow.yaml" "touch '$T/building'; while [ ! -e '$T/go' ]; do sleep 0.05; done; make" 1
repo a
repo h
touch "$T/go"
start_serve --config "$T/slow.yaml" --max-sessions 1 --drain-s 1
run tandem submit --repo "$T/a" "make the failing test pass"
expect_rc 3 "escalated"
SID=$(sed -n 's/^tandem: session \([^:]*\): make.*/\1/p' "$T/err" | head -1)
[ -n "$SID" ] || fail "no session id in: $(cat "$T/err")"
rm -f "$T/go" "$T/building"
run tandem submit --detach --repo "$T/h" "make the failing test pass"
expect_rc 0 "the holder, detached"
wait_for_file "$T/building" 60

# person A's reject waits behind the holder; the server stops
(cd "$T/a" && "$BIN/tandem" reject "$SID" -m "A says no" >"$T/A.out" \
    2>"$T/A.err"
echo $? >"$T/A.rc") &
wait_for "waits: 1 session ahead of it" "$T/A.err" 30
stop_serve
wait_for "waiting up to" "$T/A.err" 30

# person B answers here, with no server running
run tandem approve --repo "$T/a" "$SID"
expect_rc 0 "B's approve, here"

touch "$T/go"
start_serve --config "$T/slow.yaml" --max-sessions 1 --drain-s 1
wait_for_rc "$T/A.rc" 90
RC=$(cat "$T/A.rc")
cp "$T/A.err" "$T/err"
cp "$T/A.out" "$T/out"
expect_rc 2 "A's reject, not used"
expect_in "$T/err" "your reject was not used: session $SID went on with another answer"
[ ! -s "$T/out" ] || fail "A's reject printed: $(head -3 "$T/out")"
expect_not_in "$T/a/.tandem/sessions/$SID/journal.jsonl" '"kind":"reject"'
stop_serve
pass "an answer a server kept, overtaken by one given here, is said not used (exit 2)"
