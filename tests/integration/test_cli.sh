#!/bin/sh
# The command line: help, version, usage errors (exit 2) for tandem and
# both agent programs.
. "$(dirname "$0")/lib.sh"

run "$BIN/tandem" --help
expect_rc 0 "tandem --help"
expect_in "$T/out" "usage: tandem COMMAND"
expect_in "$T/out" "exit status: 0 approved"
run "$BIN/tandem" --version
expect_rc 0 "tandem --version"
expect_in "$T/out" "tandem 0."
run "$BIN/tandem" run --help
expect_rc 0 "tandem run --help"
expect_in "$T/out" "usage: tandem run [options] TASK..."
run "$BIN/tandem" help run
expect_rc 0 "tandem help run"
expect_in "$T/out" "--base-url URL"
pass "help and version"

run "$BIN/tandem"
expect_rc 2 "no command"
expect_in "$T/err" "usage: tandem"
run "$BIN/tandem" frobnicate
expect_rc 2 "unknown command"
expect_in "$T/err" "unknown command 'frobnicate'"
run "$BIN/tandem" run --frob x
expect_rc 2 "unknown option"
expect_in "$T/err" "unknown option '--frob'"
run "$BIN/tandem" run
expect_rc 2 "no task"
expect_in "$T/err" "say what to do"
run "$BIN/tandem" run --repo "$T/nowhere" "x"
expect_rc 2 "missing repo"
expect_in "$T/err" "--repo"
run "$BIN/tandem" run --llm nosuch:model --repo "$TOP/examples/demo" "x"
expect_rc 2 "bad --llm"
expect_in "$T/err" "unknown provider 'nosuch'"
run "$BIN/tandem" run --task-file "$T/none.txt" --repo "$TOP/examples/demo"
expect_rc 2 "missing task file"
expect_in "$T/err" "none.txt"
pass "usage errors exit 2 with a message"

for agent in tandem-coder tandem-reviewer; do
    run "$BIN/$agent" --help
    expect_rc 0 "$agent --help"
    expect_in "$T/out" "--connect ENDPOINT"
    run "$BIN/$agent" --version
    expect_rc 0 "$agent --version"
    run "$BIN/$agent"
    expect_rc 2 "$agent without --connect"
    expect_in "$T/err" "--connect ENDPOINT is required"
    run "$BIN/$agent" --connect ipc:///x --heartbeat 0
    expect_rc 2 "$agent bad heartbeat"
    expect_in "$T/err" "--heartbeat must be an integer 50..60000"
done
pass "agent programs: help, version, usage errors"

# make install puts the three programs under PREFIX, and the installed
# tandem finds its agents next to itself.
run make -s -C "$TOP" install PREFIX="$T/prefix"
expect_rc 0 "make install"
for p in tandem tandem-coder tandem-reviewer; do
    [ -x "$T/prefix/bin/$p" ] || fail "make install did not install $p"
done
copy_demo
run "$T/prefix/bin/tandem" run -q --repo "$T/demo" "make the failing test pass"
expect_rc 0 "the installed tandem runs the demo"
expect_in "$T/err" "approved after 2 iterations"
pass "make install PREFIX=... installs working programs"
