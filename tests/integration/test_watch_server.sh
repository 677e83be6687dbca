#!/bin/sh
# tandem watch --server beside a tandem serve that runs one session at a
# time: the watch goes on while the server's queue holds sessions, and
# follows each as it starts (it ended with the first one, the second
# still queued); a session the server stops is said to be stopped (the
# watch's last line said the step it was at, "baseline", as if it still
# ran). A watch of a repository whose session is queued catches up when
# it starts (it said "starting" through the whole of its baseline).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/serve_lib.sh"

command -v tmux >/dev/null 2>&1 || fail "tmux is missing (make deps)"
TMUX_SOCK=$T/tmux.sock
tmx() { tmux -S "$TMUX_SOCK" "$@"; }
trap 's=$?; tmx kill-server 2>/dev/null; (exit $s); serve_cleanup' EXIT

# wait_pane PANE TEXT SECONDS: poll the pane until it shows TEXT
wait_pane() {
    i=0
    until tmx capture-pane -p -J -t "$1" | grep -F -q -- "$2"; do
        i=$((i + 1))
        if [ $i -gt $(($3 * 20 * SLOW)) ]; then
            tmx capture-pane -p -J -t "$1" >&2
            fail "the terminal $1 never showed: $2"
        fi
        sleep 0.05
    done
}

# each repository's build waits for the file its `hold` names
serve_config "$T/serve.yaml" 'while [ ! -e $(cat hold) ]; do sleep 0.02; done; make'
for r in a b; do
    repo "$r"
    echo "$T/go-$r" >"$T/$r/hold"
done
start_serve --config "$T/serve.yaml" --max-sessions 1 --drain-s 1
run tandem submit --detach --repo "$T/a" "make the failing test pass"
expect_rc 0 "first detached"
first=$(cat "$T/out")
run tandem submit --detach --repo "$T/b" "make the failing test pass"
expect_rc 0 "second detached"
second=$(cat "$T/out")
status_says "running 1 of 1, queued 1 of"

tandem watch --server --plain >"$T/watch.out" 2>&1 &
watcher=$!
wait_for "$first: following" "$T/watch.out" 30
touch "$T/go-a"
i=0
until grep -q -F "$second: following" "$T/watch.out"; do
    kill -0 "$watcher" 2>/dev/null ||
        fail "the watch ended with the first session, the second queued: $(cat "$T/watch.out")"
    i=$((i + 1))
    [ $i -gt $((3000 * SLOW)) ] && fail "the watch never followed the second session"
    sleep 0.01
done
expect_in "$T/watch.out" "$first attempt 2: finished: approved"
# a quorum's records are lines of their own (reviewer.1's critique
# said "asked the reviewer.2 (critique.2)", the step before it)
expect_in "$T/watch.out" "$first attempt 1: skills done"
expect_in "$T/watch.out" "$first attempt 1: critique.1 done"
expect_in "$T/watch.out" "$first attempt 1: critique.2 done"
touch "$T/go-b"
wait "$watcher"
RC=$?
expect_rc 0 "the watch"
expect_in "$T/watch.out" "$second: finished: approved"
pass "watch --server follows a queued session when it starts"

# a session queued when the watch of its repository starts: once it
# runs, the watch says what it does (its baseline's build)
for r in d e; do
    repo "$r"
    echo "$T/go-$r" >"$T/$r/hold"
    run tandem submit --detach --repo "$T/$r" "make the failing test pass"
    expect_rc 0 "$r detached"
done
status_says "running 1 of 1, queued 1 of"
tmx new-session -d -s queued -x 150 -y 10 \
    "'$BIN/tandem' watch --repo '$T/e'; sleep 600"
wait_pane queued "  starting  " 10
touch "$T/go-d"
wait_pane queued "reviewer: build running (" 30
touch "$T/go-e"
wait_pane queued "finished: approved" 30
pass "a watch of a queued session catches up when it starts"

# the server stops with a session at its baseline's build
repo c
echo "$T/go-c" >"$T/c/hold"
run tandem submit --detach --repo "$T/c" "make the failing test pass"
expect_rc 0 "third detached"
third=$(cat "$T/out")
tandem watch --server --plain >"$T/watch.out" 2>&1 &
watcher=$!
wait_for "$third: following" "$T/watch.out" 30
stop_serve
wait "$watcher"
RC=$?
expect_rc 0 "the watch"
expect_in "$T/watch.out" "$third: stopped: interrupted"
pass "a session the server stopped is watched as stopped"
