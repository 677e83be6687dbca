#!/bin/sh
# The tree by content (issue 9 point 2): a reviewer that does not share
# the orchestrator's runtime directory (started by hand with --connect,
# as one on another host would be) is sent the base tree as blobs
# (a symbolic link as a link, a 13 MB file in pieces), keeps them, and
# audits the demo to an approval; a second task on the same
# tree sends none. A workspace path from the wire that is not beneath
# the reviewer's --runtime directory is never used: the skills there
# would leave a marker, and none appears. The local reviewers tandem
# starts itself still use the path (the marker shows it).
. "$(dirname "$0")/lib.sh"

# a reviewer this test started must not outlive it, pass or fail
REVIEWER=
content_cleanup() {
    s=$?
    if [ -n "$REVIEWER" ]; then kill "$REVIEWER" 2>/dev/null; fi
    (exit $s) # cleanup exits with the status it finds
    cleanup
}
trap content_cleanup EXIT

port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
EP=tcp://127.0.0.1:$port

# the demo whose test target leaves a marker where it runs (a loopback
# tcp:// without CURVE, which this test's users trust)
marked_demo() {
    copy_demo
    demo_config "$TOP/examples/demo/cassette.json" <<YAML
orchestrator:
  endpoint: "$EP"
  insecure: true
  request_timeout_s: 60
YAML
    sed -i 's/^test: test_stats$/test: test_stats\n\t.\/test_stats\n\ttouch ran-here/' \
        "$T/demo/Makefile"
}

# the kept workspace of the last session
kept_workspace() {
    echo "$TMPDIR/tandem-$(id -u)/$(basename "$(session_dir)")/workspace"
}

# a loopback tcp:// without CURVE is refused unless insecure says every
# local user is trusted: any of them could connect as the reviewer and
# approve any change (agents alone did without it there)
marked_demo
sed -i '/^  insecure: true$/d' "$T/demo/agents.yaml"
run tandem run --repo "$T/demo" "make the failing test pass"
expect_rc 2 "a loopback tcp:// without CURVE or insecure"
expect_in "$T/err" "any of them could act as your reviewer and approve any change"
[ ! -e "$T/demo/.tandem/sessions" ] || fail "a session was made"
pass "a loopback tcp:// without CURVE is refused for a run too"

# tandem's own reviewer (--runtime: its runtime directory) works in the
# orchestrator's workspace: the marker is there
marked_demo
run tandem run --repo "$T/demo" --keep-workspace "make the failing test pass"
expect_rc 0 "approved with the local reviewer"
[ -e "$(kept_workspace)/ran-here" ] ||
    fail "the local reviewer did not use the workspace path it was sent"
pass "a reviewer tandem starts uses the workspace beneath its runtime dir"

# a reviewer of our own, as on another host: the tree comes by content,
# symbolic links included (the tests fail without the link)
marked_demo
ln -s stats.c "$T/demo/stats_link.c"
# and a file larger than one request carries: it goes in pieces
head -c 13000000 /dev/urandom >"$T/demo/data.bin"
sed -i 's/^\t.\/test_stats$/\ttest -L stats_link.c\n\t.\/test_stats/' "$T/demo/Makefile"
grep -q "test -L stats_link.c" "$T/demo/Makefile" || fail "the Makefile was not changed"
sed -i 's/^  reviewer:$/  reviewer:\n    count: 0/' "$T/demo/agents.yaml"
mkdir -p "$T/elsewhere"
env -u XDG_RUNTIME_DIR "$BIN/tandem-reviewer" --connect "$EP" --config "$T/demo/agents.yaml" \
    --runtime "$T/elsewhere" --heartbeat 1000 --verbose \
    >"$T/reviewer.log" 2>&1 &
REVIEWER=$!
run tandem run --repo "$T/demo" --keep-workspace "make the failing test pass"
expect_rc 0 "approved by a reviewer fed by content"
expect_in "$T/out" "+    return (double)sum / (double)count;"
[ -e "$(kept_workspace)/ran-here" ] &&
    fail "the remote reviewer ran the skills in the path it was sent"
expect_in "$T/reviewer.log" "is not beneath this reviewer's --runtime directory"
expect_in "$T/reviewer.log" "need the manifest of tree"
ls "$TMPDIR/tandem-$(id -u)" | grep -q '^reviewer-' ||
    fail "the reviewer has no runtime directory of its own"
needs=$(grep -c "need .* of tree" "$T/reviewer.log")
pass "a reviewer outside the runtime dir builds its own workspace from content"

# the same tree again: the reviewer has every blob
run tandem run --repo "$T/demo" "make the failing test pass"
expect_rc 0 "the second task is approved"
[ "$(grep -c "need .* of tree" "$T/reviewer.log")" = "$needs" ] ||
    fail "the second task on the same tree asked for blobs again"
pass "the tree goes to a reviewer once"

# its runtime directory goes with it
kill $REVIEWER
wait $REVIEWER 2>/dev/null
REVIEWER=
ls "$TMPDIR/tandem-$(id -u)" | grep -q '^reviewer-' &&
    fail "the reviewer left its runtime directory: $(ls "$TMPDIR/tandem-$(id -u)")"
pass "the reviewer removes its runtime directory at exit"
