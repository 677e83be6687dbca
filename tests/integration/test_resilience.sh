#!/bin/sh
# Processes can die without losing the task: a reviewer killed in the
# middle of an audit is restarted and the request goes to it again; an
# interrupted tandem stops its agents cleanly; a tandem killed outright
# takes its agents (and their skills) with it.
. "$(dirname "$0")/lib.sh"

copy_demo
# The first test run kills its own reviewer (the skill's parent process).
demo_config "$TOP/examples/demo/cassette.json" <<YAML
skills:
  build: {command: make, timeout_s: 60}
  test:
    command: "if [ ! -e '$T/killed' ]; then touch '$T/killed'; kill -9 \$PPID; exit 1; fi; make test"
    timeout_s: 60
    sandbox: none  # it kills the reviewer, which a sandbox hides
YAML
run tandem run --repo "$T/demo" "make the failing test pass"
expect_rc 0 "approved despite the crash"
[ -e "$T/killed" ] || fail "the reviewer was never killed"
expect_in "$T/err" "agent reviewer-1 was killed by signal 9"
expect_in "$T/err" "approved after 2 iterations · 4 LLM calls"
# the test ran in the baseline, in a workspace the killed one's had
# been in: put back first
expect_in "$T/err" "baseline: an agent lost with it worked in the workspace"
dir=$(session_dir)
expect_in "$dir/logs/reviewer-1.log" "critique says approve"
expect_no_leftovers "$dir"
pass "a reviewer killed mid-audit is restarted and its request is not lost"

# A reviewer killed while its build had written half an output: the
# restarted reviewer's audit does not run on what it left. The build
# leaves half.out and kills its reviewer in attempt 1's audit; a build
# that meets half.out fails (as make met a half-written library with a
# fresh mtime, said "nothing to be done", and a correct change failed
# its test).
copy_demo
demo_config "$TOP/examples/demo/cassette.json" <<YAML
skills:
  build:
    command: "if [ -e half.out ]; then echo 'left''over: half.out'; exit 1; fi; if grep -q '(double)(sum' stats.c && [ ! -e '$T/killed-build' ]; then touch half.out '$T/killed-build'; kill -9 \$PPID; exit 1; fi; make"
    timeout_s: 60
    sandbox: none  # it kills the reviewer, which a sandbox hides
  test: {command: make test, timeout_s: 60}
YAML
run tandem run --repo "$T/demo" "make the failing test pass"
expect_rc 0 "approved despite the crash"
[ -e "$T/killed-build" ] || fail "the reviewer was never killed"
expect_in "$T/err" "agent reviewer-1 was killed by signal 9"
dir=$(session_dir)
expect_not_in "$dir/journal.jsonl" "leftover: half.out"
expect_not_in "$dir/report.json" "leftover: half.out"
expect_in "$T/err" "[1/3] reviewer: build pass, test FAIL"
expect_in "$T/err" "the workspace is put back and the audit asked again"
expect_no_leftovers "$dir"
pass "a reviewer killed mid-build: the audit asked again runs in a workspace put back"

# A long skill, to have something to interrupt.
copy_demo
demo_config "$TOP/examples/demo/cassette.json" <<YAML
skills:
  build: {command: make, timeout_s: 60}
  test: {command: "touch '$T/started'; exec sleep 47", timeout_s: 60,
         sandbox: none}
YAML
rm -f "$T/started"
"$BIN/tandem" run --repo "$T/demo" "make the failing test pass" \
    >"$T/out" 2>"$T/err" &
pid=$!
wait_for_file "$T/started" 20
kill -INT $pid
wait $pid
RC=$?
expect_rc 130 "interrupted"
expect_in "$T/err" "interrupted: interrupted by signal 2 (Interrupt)"
dir=$(session_dir)
expect_in "$T/err" "go on with: tandem resume --repo $T/demo $(basename "$dir")"
expect_in "$dir/report.json" '"status": "interrupted"'
expect_not_in "$dir/journal.jsonl" '"type":"finish"'
expect_no_leftovers "$dir"
if pgrep -f "sleep 47" >/dev/null; then fail "the skill outlived the run"; fi
pass "SIGINT stops the run, its agents and their skills; interrupted, exit 130"

# Killed outright: the agents notice (PR_SET_PDEATHSIG) and stop too.
rm -f "$T/started"
"$BIN/tandem" run --repo "$T/demo" "make the failing test pass" \
    >"$T/out" 2>"$T/err" &
pid=$!
wait_for_file "$T/started" 20
sid=$(sed -n 's/^tandem: session \([^:]*\):.*/\1/p' "$T/err" | head -n 1)
[ -n "$sid" ] || fail "no session id on stderr"
kill -KILL $pid
wait $pid 2>/dev/null
i=0
while pgrep -f "$sid" >/dev/null || pgrep -f "sleep 47" >/dev/null; do
    i=$((i + 1))
    [ $i -gt 1000 ] && fail "agents or skills of $sid outlived tandem"
    sleep 0.01
done
pass "no agent or skill outlives a tandem killed with SIGKILL"

# A busy agent keeps beating: a test run three times longer than the
# broker's patience (heartbeat 100 ms x liveness 3) is not mistaken for a
# dead agent, and the request is not handed out twice.
# (valgrind slows everything down some 30 times: scale the clock)
hb=100 busy=1
[ "${TANDEM_MEMCHECK:-0}" = 1 ] && hb=1000 busy=8
copy_demo
demo_config "$TOP/examples/demo/cassette.json" <<YAML
orchestrator:
  heartbeat_ms: $hb
  liveness: 3
skills:
  build: {command: make, timeout_s: 60}
  test: {command: "sleep $busy; make test", timeout_s: 60}
YAML
run tandem run -v --repo "$T/demo" "make the failing test pass"
expect_rc 0 "approved with slow tests"
expect_not_in "$T/err" "went silent"
expect_not_in "$T/err" "goes back on the queue"
dir=$(session_dir)
[ "$(grep -c 'test: ' "$dir/logs/reviewer-1.log")" = 3 ] ||
    fail "the tests ran more or less than once per attempt and once before"
pass "an agent busy for longer than the heartbeat timeout stays alive"

# The only reviewer stopped (SIGSTOP) keeps its process but beats no
# more: the broker gives up on it, tandem kills it (a stopped process
# heeds only SIGKILL) and starts another, which takes the request. The
# request used to wait for its whole timeout.
copy_demo
demo_config "$TOP/examples/demo/cassette.json" <<YAML
orchestrator: {heartbeat_ms: 200, liveness: 3}
skills:
  build: {command: make, timeout_s: 60}
  test:
    command: "if [ ! -e '$T/stopped' ]; then touch '$T/stopped'; kill -STOP \$PPID; fi; make test"
    timeout_s: 60
    sandbox: none  # it stops the reviewer, which a sandbox hides
YAML
rm -f "$T/stopped"
TANDEM_TIMEOUT=90 run tandem run --repo "$T/demo" "make the failing test pass"
expect_rc 0 "approved despite a stopped reviewer"
[ -e "$T/stopped" ] || fail "the reviewer was never stopped"
expect_in "$T/err" "agent reviewer-1 went silent"
expect_in "$T/err" "killing agent reviewer-1"
expect_in "$T/err" "approved after 2 iterations"
expect_no_leftovers "$(session_dir)"
pass "a stopped reviewer is killed and replaced; its request is not lost"

# tandem itself stopped (Ctrl-Z stops only tandem: its agents have process
# groups of their own) for longer than the agents' patience while the
# reviewer audits: the reviewer reconnects, still working, and is sent
# the request again. It says it still holds it ("held"), so its one reply
# counts: the audit used to be put aside and asked again, its critique
# paid for twice ("5 LLM calls (1 unanswered)").
copy_demo
demo_config "$TOP/examples/demo/cassette.json" <<YAML
orchestrator: {heartbeat_ms: 200, liveness: 3}
skills:
  build: {command: make, timeout_s: 60}
  test:
    command: "if grep -q '(double)sum / (double)count' stats.c; then touch '$T/started'; while [ ! -e '$T/go' ]; do sleep 0.05; done; fi; make test"
    timeout_s: 60
    sandbox: none  # waits on a file of the test's
YAML
rm -f "$T/started" "$T/go"
"$BIN/tandem" run --repo "$T/demo" "make the failing test pass" \
    >"$T/out" 2>"$T/err" &
pid=$!
wait_for_file "$T/started" 30
kill -STOP $pid
log=$(ls "$T"/demo/.tandem/sessions/*/logs/reviewer-1.log)
i=0
until grep -q "no word from the broker" "$log"; do
    i=$((i + 1))
    [ $i -gt 3000 ] && { kill -CONT $pid; fail "the reviewer never missed tandem"; }
    sleep 0.01
done
kill -CONT $pid
touch "$T/go"
wait $pid
RC=$?
expect_rc 0 "approved after tandem was stopped"
expect_in "$T/err" "approved after 2 iterations · 4 LLM calls"
expect_not_in "$T/err" "asked again"
expect_not_in "$(session_dir)/journal.jsonl" '"type":"unanswered"'
pass "a tandem stopped while the reviewer audits pays for no audit twice"

# the same, with the audit done while tandem is stopped, after the
# reviewer gave up on its first connection: the reply goes into the new
# one, which cannot finish its handshake with a stopped tandem, and went
# with it when the reviewer gave that one up too: the audit was asked
# again, paid twice. The agent sends its last reply again, once, when it
# reconnects after the broker's silence.
copy_demo
demo_config "$TOP/examples/demo/cassette.json" <<YAML
orchestrator: {heartbeat_ms: 200, liveness: 3}
skills:
  build: {command: make, timeout_s: 60}
  test:
    command: "if grep -q '(double)sum / (double)count' stats.c; then touch '$T/started'; while [ ! -e '$T/go' ]; do sleep 0.05; done; fi; make test"
    timeout_s: 60
    sandbox: none  # waits on a file of the test's
YAML
rm -f "$T/started" "$T/go"
"$BIN/tandem" run --repo "$T/demo" "make the failing test pass" \
    >"$T/out" 2>"$T/err" &
pid=$!
wait_for_file "$T/started" 30
kill -STOP $pid
log=$(ls "$T"/demo/.tandem/sessions/*/logs/reviewer-1.log)
# missed_times N: wait until the reviewer has given up N connections
missed_times() {
    i=0
    until [ "$(grep -c "no word from the broker" "$log")" -ge "$1" ]; do
        i=$((i + 1))
        [ $i -gt 3000 ] && { kill -CONT $pid; fail "the reviewer never missed tandem $1 times"; }
        sleep 0.01
    done
}
missed_times 1
touch "$T/go"
missed_times 3
kill -CONT $pid
wait $pid
RC=$?
expect_rc 0 "approved after tandem was stopped past the audit"
expect_in "$T/err" "approved after 2 iterations · 4 LLM calls"
expect_not_in "$(session_dir)/journal.jsonl" '"type":"unanswered"'
pass "a reply sent while tandem was stopped is not lost with the connection"

# An interrupted session goes on with another model: `tandem resume
# --llm/--base-url` asks it what the journal does not hold yet (here the
# critique, from an address where nothing listens), then goes on with the
# session's own model when not told otherwise.
copy_demo
demo_config "$TOP/examples/demo/cassette.json" <<YAML
skills:
  build: {command: make, timeout_s: 60}
  test: {command: "touch '$T/started'; exec sleep 47", timeout_s: 60,
         sandbox: none}
YAML
rm -f "$T/started"
"$BIN/tandem" run --repo "$T/demo" "make the failing test pass" \
    >"$T/out" 2>"$T/err" &
pid=$!
wait_for_file "$T/started" 20
kill -INT $pid
wait $pid
RC=$?
expect_rc 130 "interrupted"
sid=$(basename "$(session_dir)")
demo_config "$TOP/examples/demo/cassette.json" </dev/null
run tandem resume --repo "$T/demo" --llm openai:gone \
    --base-url http://127.0.0.1:9/v1 "$sid"
expect_rc 1 "the other model cannot be reached"
expect_in "$T/err" "127.0.0.1:9"
run tandem approve --repo "$T/demo" --llm openai:x "$sid"
expect_rc 2 "--llm is for resume"
expect_in "$T/err" "--llm and --base-url are for resume"
run tandem resume --repo "$T/demo" "$sid"
expect_rc 0 "approved with the session's own model"
expect_in "$T/err" "approved after 2 iterations"
pass "resume takes --llm and --base-url for what is still to ask"
