#!/bin/sh
# What a killed run leaves behind is cleaned up: its runtime directory
# ($TMPDIR/tandem-UID/ID: the workspace, the base, the sockets) is
# removed by the next tandem that makes one, because no process holds
# its lock any more; a live run's directory is never touched, nor a
# workspace kept with --keep-workspace; and the killed session still
# resumes to the end.
. "$(dirname "$0")/lib.sh"

RT=$TMPDIR/tandem-$(id -u)
# a run left going when a check fails is interrupted, not orphaned
LIVE_PID=
trap 'st=$?; if [ -n "$LIVE_PID" ]; then kill -INT "$LIVE_PID" 2>/dev/null;
    wait "$LIVE_PID" 2>/dev/null; fi; (exit $st); cleanup' EXIT

# demo_copy NAME SLEEP: a demo copy in $T/NAME whose tests, while
# $T/block-NAME exists, say so in $T/started-NAME and sleep SLEEP.$$
# seconds (the fraction is this test's pid, so that pgrep finds this
# run's sleep and no other test's)
demo_copy() {
    copy_demo
    demo_config "$TOP/examples/demo/cassette.json" <<YAML
skills:
  build: {command: make, timeout_s: 60}
  test:
    command: "if [ -e '$T/block-$1' ]; then touch '$T/started-$1'; exec sleep $2.$$; fi; make test"
    timeout_s: 120
    sandbox: none  # it signals this test through \$T
YAML
    rm -rf "$T/$1"
    mv "$T/demo" "$T/$1"
}

# session_of NAME: the id of the (only) session of $T/NAME
session_of() {
    basename "$(ls -d "$T/$1"/.tandem/sessions/*/ | head -n 1)"
}

# gone PATTERN WHAT: poll until no process matches PATTERN
gone() {
    i=0
    while pgrep -f "$1" >/dev/null; do
        i=$((i + 1))
        [ $i -gt 1000 ] && fail "$2 outlived tandem"
        sleep 0.01
    done
}

demo_copy live 53
demo_copy killed 47
demo_copy other 0

# a live run, blocked in its tests
touch "$T/block-live"
"$BIN/tandem" run --repo "$T/live" "make the failing test pass" \
    >"$T/live.out" 2>"$T/live.err" &
live_pid=$!
LIVE_PID=$live_pid
wait_for_file "$T/started-live" 30
live=$(session_of live)
[ -d "$RT/$live/workspace" ] || fail "no runtime directory for the live run"

# a run killed outright in the middle of its tests
touch "$T/block-killed"
"$BIN/tandem" run --repo "$T/killed" "make the failing test pass" \
    >"$T/killed.out" 2>"$T/killed.err" &
pid=$!
wait_for_file "$T/started-killed" 30
killed=$(session_of killed)
[ -d "$RT/$killed/workspace" ] || fail "no runtime directory for the run"
kill -KILL $pid
wait $pid 2>/dev/null
gone "$killed" "the agents of $killed"
gone "sleep 47.$$" "the tests of $killed"
[ -d "$RT/$killed" ] || fail "the kill itself removed the runtime directory"
pass "a run killed with SIGKILL leaves its runtime directory"

# the next run sweeps: the dead run's directory goes, the live one stays
run tandem run --repo "$T/other" "make the failing test pass"
expect_rc 0 "another run"
[ ! -e "$RT/$killed" ] ||
    fail "the runtime directory of the killed run $killed was left behind"
[ -d "$RT/$live/workspace" ] ||
    fail "the sweep removed the live run's workspace"
[ -S "$RT/$live/broker.sock" ] ||
    fail "the sweep removed the live run's broker socket"
kill -0 $live_pid 2>/dev/null || fail "the live run died"
pass "the next run removes a dead run's runtime directory, not a live one's"

# the live run still works: interrupted, it cleans up after itself
kill -INT $live_pid
wait $live_pid
RC=$?
LIVE_PID=
expect_rc 130 "the live run, interrupted"
expect_no_leftovers "$T/live/.tandem/sessions/$live"
pass "the live run went on untouched"

# the killed session resumes without its runtime directory
rm -f "$T/block-killed"
run tandem resume --repo "$T/killed" "$killed"
expect_rc 0 "resumed"
expect_in "$T/err" "approved after 2 iterations"
expect_no_leftovers "$T/killed/.tandem/sessions/$killed"
pass "the killed session resumes after its runtime directory was swept"

# a workspace kept on purpose is not a leftover
run tandem run --keep-workspace --repo "$T/other" "make the failing test pass"
expect_rc 0 "a run that keeps its workspace"
kept=$(basename "$(session_dir)")
[ -f "$RT/$kept/workspace/stats.c" ] || fail "the workspace was not kept"
run tandem run --repo "$T/other" "make the failing test pass"
expect_rc 0 "a run after it"
[ -f "$RT/$kept/workspace/stats.c" ] || fail "the sweep removed a kept workspace"
pass "a workspace kept with --keep-workspace survives the sweep"
