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
pass "what the server says reaches stderr without terminal escapes"
