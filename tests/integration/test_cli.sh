#!/bin/sh
# The command line: help, version, usage errors (exit 2) for tandem and
# both agent programs.
. "$(dirname "$0")/lib.sh"

run "$BIN/tandem" --help
expect_rc 0 "tandem --help"
expect_in "$T/out" "usage: tandem COMMAND"
expect_in "$T/out" "exit status: 0 approved"
# every code README's table has (75 and --commit's 5 were left out)
tr '\n' ' ' <"$T/out" >"$T/flat"
expect_in "$T/flat" "5 approved but not applied or not committed (--apply, --commit)"
expect_in "$T/flat" "75 the server is busy or stopping"
run "$BIN/tandem" --version
expect_rc 0 "tandem --version"
expect_in "$T/out" "tandem 0."
run "$BIN/tandem" run --help
expect_rc 0 "tandem run --help"
expect_in "$T/out" "usage: tandem run [options] TASK..."
tr '\n' ' ' <"$T/out" >"$T/flat"
expect_in "$T/flat" "1 rejected (by a person, or a human needed under gate.escalate: never) or failed"
expect_in "$T/flat" "a budget ran out, too little confidence, a change to gate.risk_paths"
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
# options another command of the family takes, taken and ignored here
for args in "show x --json" "watch --json" "sessions --plain" \
    "sessions --for 5" "stats --server"; do
    # shellcheck disable=SC2086 # args are words
    run "$BIN/tandem" $args
    expect_rc 2 "tandem $args"
    expect_in "$T/err" "unknown option"
done
# the start of two options is said to be ambiguous, not unknown; help's
# own help is tandem's; --version takes nothing after it
run "$BIN/tandem" run --co x
expect_rc 2 "an ambiguous option"
expect_in "$T/err" "option '--co' is ambiguous: --config, --commit"
for args in "help help" "help --help"; do
    # shellcheck disable=SC2086 # args are words
    run "$BIN/tandem" $args
    expect_rc 0 "tandem $args"
    expect_in "$T/out" "usage: tandem COMMAND"
done
run "$BIN/tandem" --version extra
expect_rc 2 "--version with an argument"
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
run "$BIN/tandem" run --llm gpt-4o-mini --repo "$TOP/examples/demo" "x"
expect_rc 2 "--llm without a provider"
expect_in "$T/err" "give PROVIDER:MODEL, e.g. openai:gpt-4o-mini"
pass "usage errors exit 2 with a message"

# Options after the task are honoured (GNU-style), not words of the task:
# the run is on --repo, quiet, and the task is only the words.
copy_demo
run "$BIN/tandem" run "make the failing test pass" --repo "$T/demo" -q
expect_rc 0 "options after the task"
expect_not_in "$T/err" "tandem: session"
report=$(ls "$T"/demo/.tandem/sessions/*/report.json)
grep -q '"task": *"make the failing test pass"' "$report" ||
    fail "the task is not the words alone: $(grep '"task"' "$report")"
# a word that starts with '-' is refused as an unknown option before
# anything starts, and goes after -- to be a word
run "$BIN/tandem" run --repo "$T/demo" fix off by -1
expect_rc 2 "a dash word in the task"
expect_in "$T/err" "unknown option '-1'; if it is a word, not an option, put -- before it"
[ "$(ls "$T/demo/.tandem/sessions" | wc -l)" -eq 1 ] ||
    fail "a refused command line started a session"
run "$BIN/tandem" review --repo "$T/demo" --diff "$T/none.patch" -- -x
expect_rc 2 "review, task after --"
expect_in "$T/err" "none.patch"
# every command: options after operands
run "$BIN/tandem" show nosuch --repo "$T/demo"
expect_rc 2 "show ID --repo"
expect_in "$T/err" "nosuch"
expect_not_in "$T/err" "unexpected argument"
pass "options after the task are honoured; -- ends them"

# a short option refused inside a cluster is named by its letter and its
# word, not by the word before it (it named 'github', the --format value)
run "$BIN/tandem" review --repo "$T/demo" --format github -fix the thing
expect_rc 2 "a task word that starts with '-' after an option's value"
expect_in "$T/err" "unknown option '-f' in '-fix'; if it is a word, not an option, put -- before it"
expect_not_in "$T/err" "'github'"
run "$BIN/tandem" run --repo "$T/demo" -qx "task"
expect_rc 2 "an unknown letter after a known one"
expect_in "$T/err" "unknown option '-x' in '-qx'"
pass "an unknown option in a cluster of letters is named by its letter"

# docs/pipelines.md's plain shell job, run as written, on a pull request
# whose title is an option: the title goes after --, so it stays a task,
# and a review that could not be done (no model) fails the job (exit 4)
# instead of passing it as --on-error=pass would
awk '/^## A plain shell job/ { on = 1 } on && /^```sh$/ { body = 1; next }
     body && /^```$/ { exit } body { print }' "$TOP/docs/pipelines.md" \
    >"$T/tandem-review.sh"
grep -q "tandem review" "$T/tandem-review.sh" ||
    fail "no plain shell job found in docs/pipelines.md"
mkdir -p "$T/pr"
(cd "$T/pr" && git init -q && echo hello >a.txt &&
    printf 'agents:\n  reviewer:\n    llm: {provider: command, command: "%s"}\n    skills: []\n' \
        "$T/no-such-model" >agents.yaml && git add -A &&
    git -c user.email=t@example.com -c user.name=t commit -qm base &&
    git branch -q base && echo evil >>a.txt &&
    git -c user.email=t@example.com -c user.name=t commit -qam pr &&
    git tag pr) ||
    fail "cannot make the pull request's repository"
for title in --on-error=pass "-fix the thing"; do
    (cd "$T/pr" && BASE=base TASK=$title ON_ERROR=fail PATH=$BIN:$PATH \
        sh "$T/tandem-review.sh") >"$T/out" 2>"$T/err"
    RC=$?
    expect_rc 4 "the plain shell job, title '$title', no model"
    expect_in "$T/err" "tandem: could not review this change"
    expect_in "$T/pr/tandem.sarif" '"executionSuccessful": false'
    (cd "$T/pr" && git reset -q --soft pr)
done
# every job of the page: a task from outside comes after --
grep -n -E 'tandem (run|review|submit) .*"\$\{?(TASK|task)' \
    "$TOP/docs/pipelines.md" | grep -v -E -- '-- "\$\{?(TASK|task)' \
    >"$T/undashed" && fail "docs/pipelines.md passes a task without --: $(cat "$T/undashed")"
pass "docs/pipelines.md: a pull request's title is a task, never an option"

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

# -v on a good run: debug lines, but none about saying goodbye to agents
# that are already gone (it used to end with "cannot send DISCONNECT to
# coder-1: send failed: Host unreachable")
copy_demo
run tandem run -v --repo "$T/demo" "make the failing test pass"
expect_rc 0 "a verbose run"
expect_in "$T/err" "debug:"
expect_not_in "$T/err" "cannot send DISCONNECT"
pass "-v does not end a good run with a DISCONNECT line"

# watch --for past what it can count: refused (strtol saturated, and the
# milliseconds overflowed into "no --for", so it returned at once)
run tandem watch --for 99999999999999999999 --repo "$T/demo"
expect_rc 2 "--for too large"
expect_in "$T/err" "--for must be a number of seconds, 1..604800, got \"99999999999999999999\""
pass "watch --for too large is refused, naming the range"

# output that cannot be written is no success: `sessions`, `stats`, the
# help and the version into a full disk exited 0, as if a pipeline had
# read them
for args in "sessions --repo $T/demo" "stats --repo $T/demo" "--help" \
    "--version" "help run"; do
    # shellcheck disable=SC2086 # the words are the command's arguments
    tandem $args >/dev/full 2>"$T/err"
    rc=$?
    [ "$rc" = 1 ] || fail "tandem $args into a full disk exited $rc, not 1"
    expect_in "$T/err" "tandem: cannot write the output on stdout: No space left on device"
done
pass "a command whose output is lost exits 1 and says so"

# help of a subcommand is its own: `tandem help hook install` printed
# hook's general help
run tandem help hook install
expect_rc 0 "help hook install"
expect_in "$T/out" "usage: tandem hook install"
run tandem help sessions prune
expect_in "$T/out" "usage: tandem sessions prune"
pass "tandem help CMD SUB shows the subcommand's help"
