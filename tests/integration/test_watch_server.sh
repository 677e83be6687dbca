#!/bin/sh
# tandem watch --server beside a tandem serve that runs one session at a
# time: the watch goes on while the server's queue holds sessions, and
# follows each as it starts (it ended with the first one, the second
# still queued); a session the server stops is said to be stopped (the
# watch's last line said the step it was at, "baseline", as if it still
# ran).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/serve_lib.sh"

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
