#!/bin/sh
# A reviewer killed outright (SIGKILL: the supervisor of tandem serve or
# run starts another) leaves its runtime directory, blobs and workspaces
# with it; the next reviewer that starts removes it, and leaves alone the
# directory of a reviewer that still runs, and one it cannot judge (no
# lock file).
. "$(dirname "$0")/lib.sh"

# the reviewers this test started must not outlive it, pass or fail
PIDS=
leftovers_cleanup() {
    s=$?
    for p in $PIDS; do kill "$p" 2>/dev/null; done
    (exit $s) # cleanup exits with the status it finds
    cleanup
}
trap leftovers_cleanup EXIT

copy_demo
demo_config "$TOP/examples/demo/cassette.json"
BASE=$TMPDIR/tandem-$(id -u)

# dirs: the reviewers' runtime directories now, one per line
dirs() { ls "$BASE" 2>/dev/null | grep '^reviewer-' | sort; }

# start_reviewer: one more reviewer (no broker needed: it connects when
# one listens); waits until its runtime directory is made, which comes
# after it reclaimed the others (its blobs/ is made last), and sets
# NEW_PID and NEW_DIR
start_reviewer() {
    before=$(dirs)
    env -u XDG_RUNTIME_DIR "$BIN/tandem-reviewer" --connect "ipc://$T/none" \
        --config "$T/demo/agents.yaml" --verbose >>"$T/reviewers.log" 2>&1 &
    NEW_PID=$!
    PIDS="$PIDS $NEW_PID"
    i=0
    while :; do
        NEW_DIR=$(dirs | grep -v -x -F "${before:-/}" | head -n 1)
        [ -n "$NEW_DIR" ] && [ -d "$BASE/$NEW_DIR/blobs" ] && break
        i=$((i + 1))
        [ $i -gt 1000 ] && fail "the reviewer made no runtime directory in $BASE"
        sleep 0.01
    done
}

start_reviewer
first=$NEW_DIR
first_pid=$NEW_PID
# what a killed reviewer leaves: blobs and a workspace
mkdir -p "$BASE/$first/workspace-abcdef/src"
echo 'int x;' >"$BASE/$first/workspace-abcdef/src/x.c"
kill -KILL "$first_pid"
wait "$first_pid" 2>/dev/null
[ -d "$BASE/$first" ] || fail "the killed reviewer's directory is already gone"
# one from before lock files, or being made: no proof its owner is gone
mkdir -m 700 "$BASE/reviewer-nolock"
pass "a reviewer killed outright leaves its runtime directory"

start_reviewer
second=$NEW_DIR
i=0
while [ -e "$BASE/$first" ]; do
    i=$((i + 1))
    [ $i -gt 1000 ] && fail "the next reviewer did not remove $first: $(dirs)"
    sleep 0.01
done
[ -d "$BASE/$second" ] || fail "the second reviewer's directory is gone"
expect_in "$T/reviewers.log" "removed $BASE/$first: the agent that made it is gone"
pass "the next reviewer removes it"

# a third while the second runs: the second's stays
start_reviewer
third=$NEW_DIR
[ "$third" != "$second" ] || fail "two reviewers share a directory"
[ -e "$BASE/$second/lock" ] || fail "a live reviewer's directory was removed"
[ -d "$BASE/reviewer-nolock" ] || fail "a directory without a lock was removed"
pass "a live reviewer's directory and one without a lock are left alone"

for p in $PIDS; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
PIDS=
[ "$(dirs)" = reviewer-nolock ] || fail "reviewers stopped by SIGTERM left: $(dirs)"
pass "reviewers stopped by SIGTERM remove their own"
