#!/bin/sh
# What a person sees at the escalation prompt, under tmux (send-keys and
# capture-pane): the question, and agents that stay connected however
# long the person takes to answer. Before, the prompt stopped the broker:
# an answer slower than the broker's liveness made every agent think the
# orchestrator dead, reconnect and register again.
. "$(dirname "$0")/lib.sh"

command -v tmux >/dev/null 2>&1 || fail "tmux is missing (make deps)"
TMUX_SOCK=$T/tmux.sock
tmx() { tmux -S "$TMUX_SOCK" "$@"; }
# the run in the pane must be gone before lib.sh removes its files
stop_tmux() {
    tmx kill-server 2>/dev/null
    i=0
    while pgrep -f "$T/demo" >/dev/null 2>&1 && [ $i -lt 100 ]; do
        i=$((i + 1))
        sleep 0.05
    done
}
# (cleanup reads the test's exit status from $?: keep it past stop_tmux)
trap 's=$?; stop_tmux; (exit $s); cleanup' EXIT

# wait_pane TEXT SECONDS: poll the pane until it shows TEXT
wait_pane() {
    i=0
    until tmx capture-pane -p -t tnd | grep -F -q -- "$1"; do
        i=$((i + 1))
        if [ $i -gt $(($2 * 20)) ]; then
            tmx capture-pane -p -t tnd >&2
            fail "the terminal never showed: $1"
        fi
        sleep 0.05
    done
}

# one attempt, then the question on the terminal; a broker that gives up
# on a silent agent after 300 ms (heartbeat 100 ms, liveness 3)
copy_demo
demo_config "$TOP/examples/demo/cassette.json" <<'YAML'
gate: {max_iterations: 1, escalate: tty}
orchestrator: {heartbeat_ms: 100, liveness: 3}
YAML
tmx new-session -d -s tnd -x 120 -y 40 \
    "'$BIN/tandem' run -v --repo '$T/demo' 'make the failing test pass' \
     2>'$T/err'; echo \$? >'$T/rc'; sleep 600"
wait_pane "choice [a/r/g/b/s/q]>" 60
# stderr goes to a file: what the question is about is on the terminal
# too (only the menu was)
wait_pane "== tandem needs a human ==" 5
wait_pane "why: gate.max_iterations (1) reached" 5

# the person reads for a while: twenty times the broker's patience
i=0
while [ $i -lt 40 ]; do
    if grep -E -q "went silent|registered again|goes back on the queue" \
        "$T/err"; then
        fail "the agents lost the orchestrator while the prompt was up"
    fi
    i=$((i + 1))
    sleep 0.05
done
dir=$(sed -n 's/^tandem: session \([^:]*\):.*/\1/p' "$T/err" | head -n 1)
[ -n "$dir" ] || fail "no session on stderr"
expect_not_in "$T/demo/.tandem/sessions/$dir/logs/coder-1.log" "reconnecting"
expect_not_in "$T/demo/.tandem/sessions/$dir/logs/reviewer-1.log" "reconnecting"

tmx send-keys -t tnd a Enter
wait_for_rc "$T/rc" 30
[ "$(cat "$T/rc")" = 0 ] || fail "exit $(cat "$T/rc") after approving"
expect_in "$T/err" "approved after 1 iteration"
expect_in "$T/demo/.tandem/sessions/$dir/journal.jsonl" '"by":"tty"'
python3 -c '
import json, sys
a = json.load(open(sys.argv[1]))["answers"]
assert [(x["attempt"], x["answer"], x["by"], x["user"], x["via"]) for x in a] \
    == [(1, "approve", "tty", sys.argv[2], None)], a
' "$T/demo/.tandem/sessions/$dir/report.json" "$(id -un)" ||
    fail "report.json answers: $(cat "$T/demo/.tandem/sessions/$dir/report.json")"
pass "agents stay connected while a person reads the question, and the answer is taken"

# a proposal longer than the escalation shows is cut in the middle; "d"
# shows it whole, and the question comes again (the person was only told
# the path of the whole)
tmx kill-server 2>/dev/null
rm -f "$T/rc" "$T/err"
copy_demo
python3 - "$TOP/examples/demo/cassette.json" "$T/long.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
first = next(e for e in c["exchanges"] if e["role"] == "coder")
lines = ["    /* line %02d of a long note %s */" % (i, "-" * 40) for i in range(60)]
lines[30] = "    /* WHOLE-DIFF-MIDDLE */"
first["answer"] = first["answer"].replace(
    "=======\n", "=======\n" + "\n".join(lines) + "\n")
json.dump(c, open(sys.argv[2], "w"))
PY
demo_config "$T/long.json" <<'YAML'
gate: {max_iterations: 1, escalate: tty}
YAML
tmx new-session -d -s tnd -x 120 -y 40 \
    "'$BIN/tandem' run --repo '$T/demo' 'make the failing test pass' \
     2>'$T/err'; echo \$? >'$T/rc'; sleep 600"
wait_pane "choice [a/r/g/b/s/q/d]>" 60
wait_pane "d  show the whole diff" 5
expect_in "$T/err" "(cut in the middle; all of it:"
expect_not_in "$T/err" "WHOLE-DIFF-MIDDLE"
tmx send-keys -t tnd d Enter
wait_pane "line 59 of a long note" 10
i=0
until [ "$(tmx capture-pane -p -S -3000 -t tnd | grep -c 'choice \[a/r/g/b/s/q/d\]>')" -ge 2 ]; do
    i=$((i + 1))
    [ $i -lt 200 ] || fail "the question did not come again after d"
    sleep 0.05
done
tmx capture-pane -p -S -3000 -t tnd >"$T/pane"
expect_in "$T/pane" "WHOLE-DIFF-MIDDLE"
tmx send-keys -t tnd q Enter
wait_for_rc "$T/rc" 30
[ "$(cat "$T/rc")" = 3 ] || fail "exit $(cat "$T/rc") after stop"
# stderr went to a file: the way to answer later is on the terminal too
# (the question was, and then nothing said how to answer it)
wait_pane "tandem approve " 5
pass "d shows the whole of a proposal the escalation cut, then asks again; q says how to answer later"

# a person who reads the question past gate.max_wall_s and grants more
# attempts gets them: the answer starts the wall budget again, as a
# resume does (the budget stayed spent, and the same question came back
# at each answer)
tmx kill-server 2>/dev/null
rm -f "$T/rc" "$T/err"
copy_demo
demo_config "$TOP/examples/demo/cassette.json" <<'YAML'
gate: {max_iterations: 1, max_wall_s: 3, escalate: tty}
YAML
tmx new-session -d -s tnd -x 120 -y 40 \
    "'$BIN/tandem' run --repo '$T/demo' 'make the failing test pass' \
     2>'$T/err'; echo \$? >'$T/rc'; sleep 600"
wait_pane "choice [a/r/g/b/s/q]>" 60
# the person reads past the budget (3 s from the run's start, which was
# before the question)
asked=$(date +%s)
while [ "$(date +%s)" -lt $((asked + 4)) ]; do sleep 0.1; done
tmx send-keys -t tnd b Enter
wait_pane "more attempts (1..50)>" 10
tmx send-keys -t tnd 1 Enter
wait_for_rc "$T/rc" 60
[ "$(cat "$T/rc")" = 0 ] || fail "exit $(cat "$T/rc") after granting an attempt: $(tail -5 "$T/err")"
expect_not_in "$T/err" "gate.max_wall_s (3) reached"
expect_in "$T/err" "approved after 2 iterations"
pass "more attempts granted at the terminal after the wall budget passed are taken"

# gate.max_wall_s that ends an audit while its build runs (the
# baseline's build goes through, attempt 1's waits): the person is asked
# at the terminal, and the session goes on in the same run from its
# journal (it waited and printed commands: the cut attempt could not go
# on in place), with the run's --json
tmx kill-server 2>/dev/null
rm -f "$T/rc" "$T/err" "$T/go" "$T/seen"
copy_demo
demo_config "$TOP/examples/demo/cassette.json" <<YAML
gate: {max_iterations: 2, max_wall_s: 6, escalate: tty}
skills:
  build: {command: "if [ -e $T/seen ]; then while [ ! -e $T/go ]; do sleep 0.02; done; fi; touch $T/seen; make", timeout_s: 120, sandbox: none}
  test: {command: make test, timeout_s: 60}
YAML
tmx new-session -d -s tnd -x 120 -y 40 \
    "'$BIN/tandem' run --json --repo '$T/demo' 'make the failing test pass' \
     >'$T/out' 2>'$T/err'; echo \$? >'$T/rc'; sleep 600"
wait_pane "choice [a/r/g/b/s/q]>" 60
wait_pane "why: gate.max_wall_s (6) reached" 5
wait_pane "attempt 1's change was not audited" 5
[ ! -e "$T/rc" ] || fail "the run ended at the question: $(cat "$T/err")"
touch "$T/go"
tmx send-keys -t tnd b Enter
wait_pane "more attempts (1..50)>" 10
tmx send-keys -t tnd 1 Enter
wait_for_rc "$T/rc" 60
[ "$(cat "$T/rc")" = 0 ] || fail "exit $(cat "$T/rc") after granting an attempt: $(tail -5 "$T/err")"
expect_in "$T/err" "going on after the answer"
expect_in "$T/err" "approved after 2 iterations"
expect_not_in "$T/err" "tandem budget"
sid=$(ls "$T/demo/.tandem/sessions")
python3 - "$T/out" "$T/demo/.tandem/sessions/$sid/journal.jsonl" <<'PY' ||
import json, sys
out = json.load(open(sys.argv[1]))  # one report: the end's, whole
assert out["status"] == "approved", out["status"]
assert [(a["attempt"], a["answer"], a["by"]) for a in out["answers"]] == \
    [(1, "budget", "tty")], out["answers"]
recs = [json.loads(l) for l in open(sys.argv[2])]
esc = [r for r in recs if r["type"] == "escalation"]
assert [(e["attempt"], e["at"]) for e in esc] == [(1, "audit")], esc
assert sum(r["type"] == "resume" for r in recs) == 1, recs
PY
    fail "the report or the journal: $(cat "$T/out")"
pass "a wall budget that ends an audit is asked at the terminal, and the run goes on"

# the wall budget ends the baseline: there is no proposal yet, so
# approve is refused and asked again, as `tandem approve` refuses it (it
# ended the session failed, for good)
tmx kill-server 2>/dev/null
rm -f "$T/rc" "$T/err" "$T/go"
copy_demo
demo_config "$TOP/examples/demo/cassette.json" <<YAML
gate: {max_wall_s: 2, escalate: tty}
skills:
  build: {command: "while [ ! -e $T/go ]; do sleep 0.02; done; make", timeout_s: 120, sandbox: none}
  test: {command: make test, timeout_s: 60}
YAML
tmx new-session -d -s tnd -x 120 -y 40 \
    "'$BIN/tandem' run --repo '$T/demo' 'make the failing test pass' \
     2>'$T/err'; echo \$? >'$T/rc'; sleep 600"
wait_pane "choice [a/r/g/b/s/q]>" 60
tmx send-keys -t tnd a Enter
wait_pane "there is no proposal to approve" 10
tmx send-keys -t tnd q Enter
wait_for_rc "$T/rc" 30
[ "$(cat "$T/rc")" = 3 ] || fail "exit $(cat "$T/rc") after approve then stop: $(tail -5 "$T/err")"
expect_not_in "$T/err" "there is no change to approve"
pass "approve with no proposal yet is refused at the terminal and asked again"

# Ctrl-C in the middle of a run, as a person presses it: the run stops
# (exit 130), says how to go on, and leaves the terminal clean; the
# session is interrupted, not failed, and resumes.
tmx kill-server 2>/dev/null
rm -f "$T/rc" "$T/err"
copy_demo
demo_config "$TOP/examples/demo/cassette.json" <<YAML
skills:
  build: {command: "while [ ! -e $T/go ]; do sleep 0.02; done; make", timeout_s: 120, sandbox: none}
  test: {command: make test, timeout_s: 60}
YAML
# the pane's shell ignores SIGINT to write down the code: tandem, which
# handles it, dies of it once the session is saved
tmx new-session -d -s tnd -x 100 -y 30 \
    "trap '' INT; '$BIN/tandem' run --repo '$T/demo' 'make the failing test pass'; \
     echo \"rc=\$?\" >'$T/rc'; sleep 600"
wait_pane "build running" 30
tmx send-keys -t tnd C-c
wait_for_rc "$T/rc" 30
[ "$(cat "$T/rc")" = rc=130 ] || fail "Ctrl-C: $(cat "$T/rc"), not rc=130"
wait_pane "go on with: tandem resume --repo $T/demo" 10
if tmx capture-pane -p -t tnd | grep -q "$(printf '\033')"; then
    fail "escape codes left on the screen"
fi
sid=$(ls "$T/demo/.tandem/sessions")
expect_in "$T/demo/.tandem/sessions/$sid/report.json" '"status": "interrupted"'
touch "$T/go"
run tandem resume --repo "$T/demo" "$sid"
expect_rc 0 "resumed after Ctrl-C"
pass "Ctrl-C stops the run with exit 130, says how to go on, and the session resumes"

# Ctrl-C stops a shell loop of runs too: tandem dies of the signal once
# its session is saved, as a program should (it exited 130, and the loop
# went on to the next task, paying for it, at every Ctrl-C)
tmx kill-server 2>/dev/null
rm -f "$T/go" "$T/loop"
copy_demo
demo_config "$TOP/examples/demo/cassette.json" <<YAML
skills:
  build: {command: "while [ ! -e $T/go ]; do sleep 0.02; done; make", timeout_s: 120, sandbox: none}
  test: {command: make test, timeout_s: 60}
YAML
tmx new-session -d -s tnd -x 100 -y 30 \
    "for t in one two; do '$BIN/tandem' run --repo '$T/demo' \"task \$t\"; \
     echo \"ran \$t: \$?\" >>'$T/loop'; done; echo loop-done >>'$T/loop'; sleep 600"
wait_pane "build running" 30
tmx send-keys -t tnd C-c
# either the pane's shell stops (the loop with it, and the pane is
# gone) or the loop writes down the first run's code and goes on
n=0
while tmx has-session -t tnd 2>/dev/null && [ ! -e "$T/loop" ]; do
    n=$((n + 1))
    [ "$n" -lt 600 ] || fail "neither the loop nor its shell ended"
    sleep 0.05
done
[ "$(ls "$T/demo/.tandem/sessions" | wc -l)" = 1 ] ||
    fail "the loop went on to the next task: $(ls "$T/demo/.tandem/sessions")"
[ ! -e "$T/loop" ] || fail "the loop went on after Ctrl-C: $(cat "$T/loop")"
pass "Ctrl-C stops a shell loop of runs, not just the run"

# Ctrl-C at the question: interrupted (130), as anywhere else; the
# escalation waits in the journal (it was exit 3, waiting, with no word),
# and the report says so
tmx kill-server 2>/dev/null
rm -f "$T/rc" "$T/err"
copy_demo
demo_config "$TOP/examples/demo/cassette.json" <<'YAML'
gate: {max_iterations: 1, escalate: tty}
YAML
tmx new-session -d -s tnd -x 120 -y 40 \
    "trap '' INT; '$BIN/tandem' run --repo '$T/demo' 'make the failing test pass'; \
     echo \"rc=\$?\" >'$T/rc'; sleep 600"
wait_pane "choice [a/r/g/b/s/q]>" 60
tmx send-keys -t tnd C-c
wait_for_rc "$T/rc" 30
[ "$(cat "$T/rc")" = rc=130 ] || fail "Ctrl-C at the question: $(cat "$T/rc")"
wait_pane "go on with: tandem resume --repo $T/demo" 10
if tmx capture-pane -p -t tnd | grep -F -q ']> ^Cinterrupted'; then
    fail "the summary went on the prompt's line"
fi
sid=$(ls "$T/demo/.tandem/sessions")
expect_in "$T/demo/.tandem/sessions/$sid/journal.jsonl" '"type":"escalation"'
# its report says what the journal does: it waits (it said interrupted)
expect_in "$T/demo/.tandem/sessions/$sid/report.json" '"status": "escalated"'
wait_pane "the session still waits for a person, on the question it asked" 10
pass "Ctrl-C at the question is exit 130, and the escalation waits"

# a run started in the background of its terminal (escalate: auto) has
# no one to ask there: it leaves the session waiting and says how to
# answer (it put the question at the shell's prompt, what the person
# typed went to the shell, and it waited, stopped, for ever)
tmx kill-server 2>/dev/null
rm -f "$T/rc" "$T/err"
copy_demo
demo_config "$TOP/examples/demo/cassette.json" <<'YAML'
gate: {max_iterations: 1}
YAML
tmx new-session -d -s tnd -x 120 -y 40 "sh -i"
tmx send-keys -t tnd "'$BIN/tandem' run --repo '$T/demo' 'make the failing test pass' >/dev/null 2>'$T/err' & wait \$!; echo \$? >'$T/rc'" Enter
wait_for_rc "$T/rc" 60
[ "$(cat "$T/rc")" = 3 ] || fail "a background run at the question: exit $(cat "$T/rc"): $(tail -5 "$T/err")"
expect_in "$T/err" "tandem approve "
expect_not_in "$T/err" "choice ["
if tmx capture-pane -p -t tnd | grep -F -q "choice ["; then
    fail "the question went to the shell's terminal"
fi
pass "a run in the background of its terminal leaves the question waiting, saying how to answer"

# a log line (a warning; -v's debug lines) while the progress line is up
# clears it first: it went on after "coder: working (0.8 s)" on one line
tmx kill-server 2>/dev/null
rm -f "$T/rc" "$T/err"
copy_demo
F=$FIX/command-demo
cat >"$T/demo/agents.yaml" <<YAML
version: 1
agents:
  coder: {llm: {provider: command, command: [sh, -c, "sleep 1; cat $F/answer-3"]}}
  reviewer: {llm: {provider: command, command: [sh, -c, "sleep 1; cat $F/answer-4"]}, skills: [build, test]}
skills:
  build: {command: make, timeout_s: 60}
  test: {command: make test, timeout_s: 60}
YAML
tmx new-session -d -s tnd -x 160 -y 50 \
    "'$BIN/tandem' run -v --repo '$T/demo' 'make the failing test pass' >/dev/null; \
     echo \$? >'$T/rc'; sleep 600"
wait_for_rc "$T/rc" 60
[ "$(cat "$T/rc")" = 0 ] || fail "the -v run: exit $(cat "$T/rc")"
tmx capture-pane -p -S -3000 -t tnd >"$T/pane"
grep -q 'tandem\[[0-9]*\] debug' "$T/pane" || fail "no debug line to look at"
if grep -q '[^ ]tandem\[[0-9]*\] ' "$T/pane"; then
    grep '[^ ]tandem\[[0-9]*\] ' "$T/pane" | head -3 >&2
    fail "a log line went on after the progress line"
fi
pass "a log line clears the progress line before it"

# a 40-column terminal: the progress line is cut to fit, and its time
# stays at its end ("tandem: baseline: reviewer: build runn..." lost it)
tmx kill-server 2>/dev/null
rm -f "$T/rc" "$T/go"
copy_demo
demo_config "$TOP/examples/demo/cassette.json" <<YAML
skills:
  build: {command: "while [ ! -e $T/go ]; do sleep 0.02; done; make", timeout_s: 120, sandbox: none}
  test: {command: make test, timeout_s: 60}
YAML
tmx new-session -d -s tnd -x 40 -y 20 \
    "'$BIN/tandem' run --repo '$T/demo' 'make the failing test pass' >/dev/null; \
     echo \$? >'$T/rc'; sleep 600"
i=0
until tmx capture-pane -p -t tnd |
    grep -E -q '^baseline: reviewer: .*\.\.\. \([0-9]+\.[0-9] s\)$'; do
    i=$((i + 1))
    if [ $i -gt 600 ]; then
        tmx capture-pane -p -t tnd >&2
        fail "the 40-column progress line lost its time"
    fi
    sleep 0.05
done
# never the last column: a line that wraps cannot be redrawn
tmx capture-pane -p -t tnd | grep '^baseline: reviewer: ' >"$T/pane"
if awk 'length($0) > 39' "$T/pane" | grep -q .; then
    fail "the progress line is wider than 39 columns: $(cat "$T/pane")"
fi
touch "$T/go"
wait_for_rc "$T/rc" 60
[ "$(cat "$T/rc")" = 0 ] || fail "the 40-column run: exit $(cat "$T/rc")"
pass "at 40 columns the progress line keeps its time"
