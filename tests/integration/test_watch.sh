#!/bin/sh
# People on terminals, under tmux (send-keys and capture-pane), at 80
# columns: tandem watch waits for a session with --for, keeps each line
# within the width (never wrapping, so the screen does not scroll at each
# redraw) and, joining late, shows the current step; tandem run's
# progress line says what runs and counts its time up ("reviewer: test
# running (2.0 s)"), not "streaming: 0 characters".
. "$(dirname "$0")/lib.sh"

command -v tmux >/dev/null 2>&1 || fail "tmux is missing (make deps)"
TMUX_SOCK=$T/tmux.sock
tmx() { tmux -S "$TMUX_SOCK" "$@"; }
# the processes in the panes must be gone before lib.sh removes files
stop_tmux() {
    [ -n "${HOLDER:-}" ] && kill "$HOLDER" 2>/dev/null
    tmx kill-server 2>/dev/null
    i=0
    while pgrep -f "$T/demo" >/dev/null 2>&1 && [ $i -lt 100 ]; do
        i=$((i + 1))
        sleep 0.05
    done
}
# (cleanup reads the test's exit status from $?: keep it past stop_tmux)
trap 's=$?; stop_tmux; (exit $s); cleanup' EXIT

# wait_pane PANE TEXT SECONDS: poll the pane until it shows TEXT
wait_pane() {
    i=0
    until tmx capture-pane -p -J -t "$1" | grep -F -q -- "$2"; do
        i=$((i + 1))
        if [ $i -gt $(($3 * 20)) ]; then
            tmx capture-pane -p -J -t "$1" >&2
            fail "the terminal $1 never showed: $2"
        fi
        sleep 0.05
    done
}

# no_wide PANE [REGEX]: no line of the pane (wrapped lines joined), or
# none matching REGEX, is wider than its 80 columns
no_wide() {
    tmx capture-pane -p -J -t "$1" >"$T/pane"
    if awk -v re="${2:-.}" '$0 ~ re && length($0) > 80 { bad = 1 }
        END { exit !bad }' "$T/pane"; then
        cat "$T/pane" >&2
        fail "a line of $1 is wider than 80 columns"
    fi
}

# the test skill waits for the test to say go: the run stays in it as
# long as the test needs, without a sleep deciding anything (it runs in
# the baseline, before any attempt)
copy_demo
demo_config "$TOP/examples/demo/cassette.json" <<YAML
skills:
  build: {command: make, timeout_s: 60}
  test:
    command: "while [ ! -e '$T/go' ]; do sleep 0.05; done; make test"
    timeout_s: 60
    sandbox: none # the sandbox would hide $T/go
YAML

# a watcher waiting before anything runs (before: it exited at once)
tmx new-session -d -s watch -x 80 -y 24 \
    "'$BIN/tandem' watch --repo '$T/demo' --for 60; echo \$? >'$T/watch-rc'; sleep 600"
wait_pane watch "waiting for a session to start in" 10

tmx new-session -d -s run -x 80 -y 24 \
    "'$BIN/tandem' run --repo '$T/demo' 'make the failing test pass with a task long enough to need more than one line of an eighty-column terminal'; echo \$? >'$T/rc'; sleep 600"

# the progress line says what runs, and its time counts up between
# messages (the skill sends none while it runs)
wait_pane run "tandem: baseline: reviewer: test running (" 30
wait_pane run "tandem: baseline: reviewer: test running (2." 30
tmx capture-pane -p -J -t run | grep -q "streaming:" &&
    fail "the progress line still says streaming"
no_wide run '^tandem: baseline: '
pass "the progress line says what runs and counts its time"

# the watcher picked the session up, its lines within 80 columns
wait_pane watch "reviewer: test running (" 30
no_wide watch
pass "watch --for waits for a session, and its lines fit 80 columns"

# a watcher joining late shows the current step, not only what it hears
tmx new-session -d -s late -x 80 -y 24 \
    "'$BIN/tandem' watch --repo '$T/demo'; sleep 600"
wait_pane late "reviewer: test running (" 10
no_wide late
pass "a watcher joining late shows the current step"

touch "$T/go"
(wait_for_rc "$T/rc" 60) 2>/dev/null || {
    tmx capture-pane -p -J -t run >&2
    fail "the run did not end"
}
[ "$(cat "$T/rc")" = 0 ] || fail "the run exited $(cat "$T/rc")"
wait_for_rc "$T/watch-rc" 30
[ "$(cat "$T/watch-rc")" = 0 ] || fail "watch exited $(cat "$T/watch-rc")"
wait_pane watch "finished: approved" 10
no_wide watch
pass "the watcher ends with the session"

# without --for and nothing running: at once, saying how to wait
run "$BIN/tandem" watch --repo "$T/demo"
expect_rc 0 "watch with nothing running"
expect_in "$T/out" "tandem watch --for S waits"
run "$BIN/tandem" watch --repo "$T/demo" --for 1
expect_rc 0 "watch --for 1 with nothing running"
expect_in "$T/out" "no session started in"
pass "watch with nothing running ends at once, or after --for S"

# an event larger than 64 KiB (an audit with 200 KB of build output) is
# read whole: it was skipped, and with it the step and its tokens. The
# build of attempt 1 (its second run, after the baseline's) waits until
# the watcher says it follows the run.
copy_demo
rm -f "$T/go" "$T/count"
demo_config "$TOP/examples/demo/cassette.json" <<YAML
skills:
  build:
    command: "n=\$(cat '$T/count' 2>/dev/null || echo 0); echo \$((n + 1)) >'$T/count'; if [ \$n -ge 1 ]; then while [ ! -e '$T/go' ]; do sleep 0.05; done; fi; yes 'x warning line of build output' | head -c 200000; make"
    sandbox: none # the sandbox would hide $T/go
    output_max_kb: 256
  test: {command: make test, timeout_s: 60}
YAML
"$BIN/tandem" watch --repo "$T/demo" --plain --for 60 >"$T/watch.out" 2>&1 &
watcher=$!
"$BIN/tandem" run --repo "$T/demo" "make the failing test pass" \
    >"$T/run.out" 2>"$T/run.err" &
runner=$!
i=0
until grep -q ": following" "$T/watch.out" 2>/dev/null; do
    i=$((i + 1))
    [ $i -gt 600 ] && fail "the watcher never followed the run: $(cat "$T/watch.out")"
    sleep 0.05
done
touch "$T/go"
wait $runner
wait $watcher
expect_in "$T/watch.out" "attempt 1: audit done"
pass "an event larger than 64 KiB reaches the watcher whole"

# a reader that leaves (watch --plain | head -1): the watch ends at its
# next line, not when the sessions end or --for runs out. The build of
# attempt 1 waits for go, attempt 2's for go2, which comes only after
# the watch has ended
copy_demo
rm -f "$T/go" "$T/go2" "$T/count" "$T/pipe" "$T/head.out"
demo_config "$TOP/examples/demo/cassette.json" <<YAML
skills:
  build:
    command: "n=\$(cat '$T/count' 2>/dev/null || echo 0); echo \$((n + 1)) >'$T/count'; if [ \$n -ge 1 ]; then while [ ! -e '$T/go' ]; do sleep 0.05; done; fi; if [ \$n -ge 2 ]; then while [ ! -e '$T/go2' ]; do sleep 0.05; done; fi; make"
    sandbox: none # the sandbox would hide $T/go
  test: {command: make test, timeout_s: 60}
YAML
mkfifo "$T/pipe"
# SIGPIPE ignored, as some parents leave it: the write error is seen
(trap '' PIPE && exec "$BIN/tandem" watch --repo "$T/demo" --plain \
    --for 120 >"$T/pipe" 2>"$T/watch.err") &
watcher=$!
head -n 1 <"$T/pipe" >"$T/head.out" &
reader=$!
"$BIN/tandem" run --repo "$T/demo" "make the failing test pass" \
    >"$T/run.out" 2>"$T/run.err" &
runner=$!
wait $reader
expect_in "$T/head.out" ": following"
touch "$T/go"
i=0
while kill -0 $watcher 2>/dev/null; do
    i=$((i + 1))
    [ $i -gt 600 ] && fail "the watch went on with nobody reading: $(cat "$T/watch.err")"
    sleep 0.05
done
wait $watcher
rc=$?
[ $rc = 1 ] || fail "the watch exited $rc with its reader gone"
expect_in "$T/watch.err" "cannot write the output on stdout"
touch "$T/go2"
wait $runner || fail "the run failed: $(cat "$T/run.err")"
pass "a watch whose reader left ends at its next line"

# a session waiting for a person, resumed to the same question again:
# the watcher said "applying", the replay's step, not "waiting"
copy_demo
demo_config "$TOP/examples/demo/cassette.json" <<'YAML'
gate:
  max_iterations: 1
  escalate: queue
YAML
run "$BIN/tandem" run --repo "$T/demo" "make the failing test pass"
expect_rc 3 "escalated"
id=$(basename "$(session_dir)")
run "$BIN/tandem" resume --repo "$T/demo" "$id" </dev/null
expect_rc 3 "resumed to the same question"
run "$BIN/tandem" watch --repo "$T/demo" --plain "$id"
expect_in "$T/out" "waiting for a person"
expect_not_in "$T/out" "applying"
pass "a session resumed to the same question is watched as waiting for a person"

# held LIST: hold the lock of each session directory named in the file
# LIST, as a running tandem does, until the file $T/release appears
held() {
    rm -f "$T/release" "$T/holding"
    /usr/bin/python3 - "$1" "$T/holding" "$T/release" <<'PY' &
import fcntl, os, sys, time
fds = []
for d in open(sys.argv[1]).read().split():
    fd = os.open(os.path.join(d, "lock"), os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    fds.append(fd)
open(sys.argv[2], "w").close()
while not os.path.exists(sys.argv[3]):
    time.sleep(0.05)
PY
    HOLDER=$!
    wait_for_file "$T/holding" 30
}

# More sessions than rows, one with a task in Chinese: every line fits
# its row (a wide character took one column and the line wrapped), and
# the watch draws no more lines than the window has (30 sessions in 10
# rows scrolled at every redraw), counting the rest
copy_demo
demo_config "$TOP/examples/demo/cassette.json" <<'YAML'
gate:
  max_iterations: 1
  escalate: queue
YAML
run "$BIN/tandem" run --repo "$T/demo" "make the failing test pass"
expect_rc 3 "escalated"
src=$(session_dir)
: >"$T/dirs"
for n in $(seq 10 39); do
    d=$T/demo/.tandem/sessions/20261126-0000$n-000000$n
    cp -r "$src" "$d"
    rm -f "$d/lock"
    echo "$d" >>"$T/dirs"
done
sed -i 's/"task":"make the failing test pass"/"task":"让失败的测试通过，并且说明为什么这样修改是正确的，再加一个测试用例"/' \
    "$T/demo/.tandem/sessions/20261126-000010-00000010/journal.jsonl"
held "$T/dirs"
tmx new-session -d -s many -x 80 -y 10 \
    "'$BIN/tandem' watch --repo '$T/demo'; sleep 600"
wait_pane many "more sessions (tandem watch ID follows one)" 20
tmx capture-pane -p -t many >"$T/pane"
[ "$(grep -c '^2026' "$T/pane")" -le 9 ] ||
    fail "more session lines than the window's rows: $(cat "$T/pane")"
grep -q '^20261126-000010-00000010 .*让失败.*\.\.\.$' "$T/pane" ||
    fail "the Chinese task is not cut to fit its row: $(cat "$T/pane")"
touch "$T/release"
wait "$HOLDER"
pass "watch draws no more lines than the window has, wide characters counted"

# A session that waited for a person and was answered is followed again:
# the watcher, held open by another running session, showed it waiting
# for a person to the end. Attempt 2's test waits for the test's word,
# so the watcher sees the session run again.
rm -rf "$T/demo/.tandem/sessions"
copy_demo
rm -f "$T/answered" "$T/running" "$T/go2"
demo_config "$TOP/examples/demo/cassette.json" <<YAML
gate:
  max_iterations: 1
  escalate: queue
skills:
  build: {command: make, timeout_s: 60}
  test:
    command: "if [ -e '$T/answered' ]; then touch '$T/running'; while [ ! -e '$T/go2' ]; do sleep 0.05; done; fi; make test"
    timeout_s: 60
    sandbox: none # the sandbox would hide the test's files
YAML
run "$BIN/tandem" run --repo "$T/demo" "make the failing test pass"
expect_rc 3 "escalated"
a=$(basename "$(session_dir)")
b=$T/demo/.tandem/sessions/20261126-000001-00000001
cp -r "$T/demo/.tandem/sessions/$a" "$b"
rm -f "$b/lock"
# where its events would come from, as a running session says
echo "ipc://$T/b-events.sock" >"$b/events"
echo "$b" >"$T/dirs"
held "$T/dirs"
"$BIN/tandem" watch --repo "$T/demo" --plain >"$T/watch.out" 2>&1 &
watcher=$!
wait_for_line() { # TEXT: poll the watcher's output for TEXT
    i=0
    until grep -q -- "$1" "$T/watch.out" 2>/dev/null; do
        i=$((i + 1))
        [ $i -gt 600 ] && fail "the watcher never said $1: $(cat "$T/watch.out")"
        sleep 0.05
    done
}
wait_for_line "$(basename "$b"): following"
touch "$T/answered"
"$BIN/tandem" budget --repo "$T/demo" "$a" --iterations 1 \
    >"$T/out" 2>"$T/err" &
answering=$!
wait_for_file "$T/running" 30
wait_for_line "$a: following"
touch "$T/go2"
wait $answering
RC=$?
expect_rc 0 "approved after a budget"
wait_for_line "$a attempt 2: finished: approved"
touch "$T/release"
wait "$HOLDER"
wait "$watcher"
pass "a session answered while a watch runs is followed again"

# A session that ended shows how long it ran, not the time since it
# started: one that ran 7 s and ended a day ago said 86407s
copy_demo
demo_config "$TOP/examples/demo/cassette.json"
run "$BIN/tandem" run --repo "$T/demo" "make the failing test pass"
expect_rc 0 "the demo"
dir=$(session_dir)
/usr/bin/python3 - "$dir/journal.jsonl" <<'PY'
import json, sys, time
end = (int(time.time()) - 86400) * 1000
recs = [json.loads(line) for line in open(sys.argv[1])]
for r in recs:
    if r["type"] == "task":
        r["started_ms"] = end - 7000
    if r["type"] == "finish":
        r["time"] = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(end / 1000))
with open(sys.argv[1], "w") as f:
    f.write("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in recs))
PY
tmx new-session -d -s ended -x 120 -y 10 \
    "'$BIN/tandem' watch --repo '$T/demo' '$(basename "$dir")'; sleep 600"
wait_pane ended "finished: approved  7s  " 10
pass "a session that ended shows the time it ran"
