#!/bin/sh
# tandem sessions prune: sessions of every state, made old by their
# journals' times; what goes (ended and older than --older-than), what
# stays (running, waiting for a person, newer), --dry-run, --waiting,
# bad durations; the lessons bank untouched; sessions, stats, show and
# watch working afterwards; a kept workspace going with its session; the
# runtime directory of a killed run removed too.
. "$(dirname "$0")/lib.sh"

RT=$TMPDIR/tandem-$(id -u)
OLD=$(date -u -d '40 days ago' +%Y-%m-%dT%H:%M:%S.000Z)
LIVE_PID=
trap 'st=$?; if [ -n "$LIVE_PID" ]; then kill -INT "$LIVE_PID" 2>/dev/null;
    wait "$LIVE_PID" 2>/dev/null; fi; (exit $st); cleanup' EXIT

# the sessions of $T/demo, oldest first
ids() { ls "$T/demo/.tandem/sessions" 2>/dev/null; }
# before; ...start a run...; newest: the session it made (ids made in
# the same second sort by their random part, so not simply the last)
before() { ids >"$T/ids.before"; }
newest() { ids | comm -13 "$T/ids.before" -; }
# age ID: its journal's records all 40 days old
age() {
    sed -i "s/\"time\":\"[^\"]*\"/\"time\":\"$OLD\"/g" \
        "$T/demo/.tandem/sessions/$1/journal.jsonl"
}

copy_demo
blocking_config() {
    demo_config "$TOP/examples/demo/cassette.json" <<YAML
skills:
  build: {command: make, timeout_s: 60}
  test:
    command: "if [ -e '$T/block' ]; then touch '$T/started'; exec sleep \$((40 + $1)); fi; make test"
    timeout_s: 120
    sandbox: none  # it signals this test through \$T
YAML
}

demo_config "$TOP/examples/demo/cassette.json"
before
run tandem run --repo "$T/demo" "make the failing test pass"
expect_rc 0 "approved"
approved=$(newest)
demo_config "$TOP/examples/demo/cassette.json" <<'YAML'
gate:
  max_iterations: 1
  escalate: queue
YAML
before
run tandem run --repo "$T/demo" "make the failing test pass"
expect_rc 3 "waiting"
waiting=$(newest)
demo_config "$FIX/cassette-short.json"
before
run tandem run --repo "$T/demo" "make the failing test pass"
expect_rc 1 "failed"
failed=$(newest)
demo_config "$TOP/examples/demo/cassette.json"
before
run tandem run --repo "$T/demo" "make the failing test pass"
expect_rc 0 "approved, recent"
recent=$(newest)
[ -f "$T/demo/.tandem/lessons.json" ] || fail "no lessons bank to keep"
cp "$T/demo/.tandem/lessons.json" "$T/lessons.before"

# a run that goes on while we prune
blocking_config 11
touch "$T/block"
before
"$BIN/tandem" run --repo "$T/demo" "make the failing test pass" \
    >"$T/live.out" 2>"$T/live.err" &
LIVE_PID=$!
wait_for_file "$T/started" 30
running=$(newest)
# a run killed outright: interrupted, and its runtime directory left
rm -f "$T/started"
blocking_config 12
before
"$BIN/tandem" run --repo "$T/demo" "make the failing test pass" \
    >"$T/killed.out" 2>"$T/killed.err" &
pid=$!
wait_for_file "$T/started" 30
killed=$(newest)
kill -KILL $pid
wait $pid 2>/dev/null
i=0
while pgrep -f "$killed" >/dev/null || pgrep -f "sleep 52" >/dev/null; do
    i=$((i + 1))
    [ $i -gt 1000 ] && fail "the agents of $killed outlived it"
    sleep 0.01
done
rm -f "$T/block"
[ -d "$RT/$killed" ] || fail "the killed run left no runtime directory"
for id in $approved $waiting $failed $running $killed; do age "$id"; done

run "$BIN/tandem" sessions --repo "$T/demo"
[ "$(grep -c '^20' "$T/out")" = 6 ] || fail "expected 6 sessions"
expect_in "$T/out" "$killed   interrupted"
expect_in "$T/out" "$running   running"

# bad durations and arguments: exit 2, nothing removed
for d in 7x 30 -1d 1.5d "" 99999d; do
    run tandem sessions prune --repo "$T/demo" --older-than "$d"
    expect_rc 2 "--older-than '$d'"
    expect_in "$T/err" "tandem sessions prune: --older-than: "
done
expect_in "$T/err" "longer than 100 years"
run tandem sessions prune --repo "$T/demo" --older-than 7x
expect_in "$T/err" "tandem sessions prune: --older-than: \"7x\": unknown unit 'x' (use s, m, h, d or w); give a duration such as 30d, 12h or 45m"
run tandem sessions prune --repo "$T/demo" --older-than
expect_rc 2 "no value"
expect_in "$T/err" "tandem sessions prune: --older-than needs a value"
run tandem sessions prune --repo "$T/demo" --bogus
expect_rc 2 "unknown option"
run tandem sessions prune --repo "$T/demo" 30d
expect_rc 2 "an argument"
expect_in "$T/err" "unexpected argument '30d'"
run tandem sessions --repo "$T/demo" prune
expect_rc 2 "prune after an option"
expect_in "$T/err" "put prune first"
[ "$(ids | wc -l)" = 6 ] || fail "a usage error removed sessions"
pass "bad durations and arguments are usage errors (exit 2)"

run tandem sessions prune --help
expect_rc 0 "help"
expect_in "$T/out" "usage: tandem sessions prune"
expect_in "$T/out" "(default: 30d)"
run "$BIN/tandem" help sessions
expect_in "$T/out" "tandem sessions prune [--repo DIR] [--older-than D]"
pass "tandem sessions prune --help, and tandem help sessions"

# a dry run says what would go, and removes nothing
run tandem sessions prune --repo "$T/demo" --dry-run
expect_rc 0 "dry run"
for id in $approved $failed $killed; do
    expect_in "$T/out" "would remove $id"
done
for id in $waiting $running $recent; do
    expect_not_in "$T/out" "$id"
done
expect_in "$T/out" "would remove $approved  approved      40d"
expect_in "$T/out" "would remove $failed  failed        40d"
expect_in "$T/out" "would remove $killed  interrupted   40d"
expect_in "$T/out" "would remove 3 sessions older than 30d ("
expect_in "$T/out" "; kept 3: 1 running, 1 waiting for a person (--waiting removes those too), 1 newer"
expect_in "$T/out" "would remove 1 runtime directory left in $RT by runs that are gone"
expect_in "$T/out" "nothing was removed (--dry-run)"
[ "$(ids | wc -l)" = 6 ] || fail "the dry run removed sessions"
[ -d "$RT/$killed" ] || fail "the dry run removed a runtime directory"
pass "--dry-run says what would go and removes nothing"

run tandem sessions prune --repo "$T/demo"
expect_rc 0 "prune"
expect_in "$T/out" "removed $approved  approved      40d"
expect_in "$T/out" "removed 3 sessions older than 30d ("
expect_in "$T/out" "; kept 3: 1 running, 1 waiting for a person (--waiting removes those too), 1 newer"
expect_in "$T/out" "removed 1 runtime directory left in $RT by runs that are gone"
[ "$(ids | tr '\n' ' ')" = "$(printf '%s\n' $waiting $recent $running | sort | tr '\n' ' ')" ] ||
    fail "left $(ids | tr '\n' ' ')"
[ ! -e "$RT/$killed" ] || fail "the killed run's runtime directory is still there"
cmp -s "$T/demo/.tandem/lessons.json" "$T/lessons.before" ||
    fail "the lessons bank changed"
kill -0 $LIVE_PID 2>/dev/null || fail "the running session's run died"
pass "prune removes ended sessions older than 30d; running, waiting, newer stay; lessons untouched"

# the other commands after pruning
run "$BIN/tandem" sessions --repo "$T/demo"
expect_rc 0 "sessions"
[ "$(grep -c '^20' "$T/out")" = 3 ] || fail "expected 3 sessions listed"
run "$BIN/tandem" stats --repo "$T/demo" --json
expect_rc 0 "stats"
expect_in "$T/out" '"sessions": 3'
run "$BIN/tandem" show --repo "$T/demo" "$recent"
expect_rc 0 "show"
expect_in "$T/out" "## Finished: approved"
run "$BIN/tandem" show --repo "$T/demo" "$approved"
expect_rc 2 "show a pruned session"
expect_in "$T/err" "no session matches '$approved'"
kill -INT $LIVE_PID
wait $LIVE_PID
LIVE_PID=
run "$BIN/tandem" watch --repo "$T/demo"
expect_rc 0 "watch"
expect_in "$T/out" "no session is running"
run "$BIN/tandem" approve --repo "$T/demo" "$waiting"
expect_rc 0 "the waiting session is answered"
pass "sessions, stats, show, watch and approve work after a prune"

# --waiting, and a kept workspace that goes with its session
demo_config "$TOP/examples/demo/cassette.json" <<'YAML'
gate:
  max_iterations: 1
  escalate: queue
YAML
before
run tandem run --repo "$T/demo" "make the failing test pass"
expect_rc 3 "waiting again"
waiting=$(newest)
demo_config "$TOP/examples/demo/cassette.json"
before
run tandem run --keep-workspace --repo "$T/demo" "make the failing test pass"
expect_rc 0 "a kept workspace"
kept=$(newest)
[ -f "$RT/$kept/workspace/stats.c" ] || fail "the workspace was not kept"
age "$waiting"
age "$kept"
run tandem sessions prune --repo "$T/demo" --older-than 1d
expect_rc 0 "without --waiting"
expect_not_in "$T/out" "$waiting"
expect_in "$T/out" "removed $kept  approved      40d"
expect_in "$T/out" "and its kept workspace"
[ ! -e "$RT/$kept" ] || fail "the kept workspace of a pruned session stayed"
run tandem sessions prune --repo "$T/demo" --older-than 1d --waiting
expect_rc 0 "--waiting"
expect_in "$T/out" "removed $waiting  waiting       40d"
expect_in "$T/out" "removed 1 session older than 1d ("
[ ! -e "$T/demo/.tandem/sessions/$waiting" ] || fail "the waiting session stayed"
pass "--waiting removes old waiting sessions; a kept workspace goes with its session"

# a repository can carry .tandem: a link there leads nowhere (prune
# removed the directories beside the repository it led to)
mkdir -p "$T/linked/.tandem" "$T/precious/old"
touch -d '60 days ago' "$T/precious/old" "$T/precious"
ln -s "$T/precious" "$T/linked/.tandem/sessions"
run "$BIN/tandem" sessions --repo "$T/linked"
expect_rc 1 "sessions through a link"
expect_in "$T/err" "is a symbolic link, not a directory"
run "$BIN/tandem" sessions prune --repo "$T/linked"
expect_rc 1 "prune through a link"
expect_in "$T/err" "is a symbolic link, not a directory"
[ -d "$T/precious/old" ] || fail "prune removed what a link led to"
# watch too, at once and once (it warned at every tick, 4 times a second
# under --for, then said no session was running and exited 0)
run "$BIN/tandem" watch --repo "$T/linked" --for 2
expect_rc 1 "watch through a link"
expect_in "$T/err" "tandem watch: $T/linked/.tandem/sessions is a symbolic link, not a directory"
[ "$(grep -c 'symbolic link' "$T/err")" = 1 ] ||
    fail "watch said it more than once: $(cat "$T/err")"
expect_not_in "$T/out" "no session"
pass "a link for .tandem/sessions is refused, and nothing it leads to is removed"
