#!/bin/sh
# Seeing it: tandem sessions (states), tandem show (the reflection log and
# the diff), tandem stats (figures across sessions), tandem watch (a live
# view fed by the session's event stream).
. "$(dirname "$0")/lib.sh"

copy_demo
mv "$T/demo/agents.yaml" "$T/demo.yaml"
demo_config "$TOP/examples/demo/cassette.json"
cp "$T/demo/agents.yaml" "$T/approve.yaml"
run tandem run --repo "$T/demo" --config "$T/approve.yaml" "make the failing test pass"
expect_rc 0 "approved"
approved=$(basename "$(session_dir)")
demo_config "$TOP/examples/demo/cassette.json" <<'YAML'
gate:
  max_iterations: 1
  escalate: queue
YAML
run tandem run --repo "$T/demo" "make the failing test pass"
expect_rc 3 "waiting"
waiting=$(basename "$(session_dir)")
demo_config "$FIX/cassette-short.json"
run tandem run --repo "$T/demo" "make the failing test pass"
expect_rc 1 "failed"

run "$BIN/tandem" sessions --repo "$T/demo"
expect_rc 0 "sessions"
expect_in "$T/out" "SESSION"
[ "$(grep -c ' approved ' "$T/out")" = 1 ] || fail "one approved session"
[ "$(grep -c ' waiting ' "$T/out")" = 1 ] || fail "one waiting session"
[ "$(grep -c ' failed ' "$T/out")" = 1 ] || fail "one failed session"
run "$BIN/tandem" sessions --repo "$T/demo" --json
expect_in "$T/out" '"state": "waiting"'
expect_in "$T/out" '"tokens": 3837'
pass "sessions lists every session with its state"

# an approved session without its report.json (a run killed after its
# finish record): its calls and tokens are unknown, not 0, and its
# iterations come from the journal
cp -r "$T/demo" "$T/noreport"
rm "$T/noreport/.tandem/sessions/$approved/report.json"
run "$BIN/tandem" sessions --repo "$T/noreport"
expect_rc 0 "sessions without a report"
grep -q "^$approved *approved *2 *? *?  make the failing test pass" "$T/out" ||
    fail "the calls of a session without a report: $(cat "$T/out")"
run "$BIN/tandem" sessions --repo "$T/noreport" --json
/usr/bin/python3 - "$T/out" "$approved" <<'PY' || fail "sessions --json: $(cat "$T/out")"
import json, sys
s = [x for x in json.load(open(sys.argv[1])) if x["session"] == sys.argv[2]][0]
assert (s["state"], s["iterations"], s["llm_calls"], s["tokens"]) == \
    ("approved", 2, None, None), s
PY
# and the cost per approved task is that of those whose report says it
# (the unknown one counted as 0 calls halved it)
cp -r "$T/demo/.tandem/sessions/$approved" \
    "$T/noreport/.tandem/sessions/20200101-000000-0000000a"
run "$BIN/tandem" stats --repo "$T/noreport" --json
expect_rc 0 "stats without a report"
/usr/bin/python3 - "$T/out" <<'PY' || fail "stats: $(cat "$T/out")"
import json, sys
per = json.load(open(sys.argv[1]))["per_approved"]
assert per == {"tokens": 3837, "llm_calls": 4, "costed": 1}, per
PY
# and with none known, the figures are said unknown, not 0
rm -rf "$T/noreport/.tandem/sessions/20200101-000000-0000000a"
run "$BIN/tandem" stats --repo "$T/noreport"
expect_rc 0 "stats with no report"
expect_in "$T/out" "per approved task:    unknown (no approved session's report.json gives its cost)"
rm -rf "$T/noreport"
pass "a session without its report has unknown calls, not 0"

# a journal damaged inside (not a torn last line): unreadable, said, not
# an interrupted session a resume would go on with
cp -r "$T/demo" "$T/damaged"
d=$(ls -d "$T"/damaged/.tandem/sessions/*/ | head -n 1)
sed -i '2s/.*/{"type":broken/' "$d/journal.jsonl"
run "$BIN/tandem" sessions --repo "$T/damaged"
expect_rc 0 "sessions with a damaged journal"
[ "$(grep -c ' unreadable ' "$T/out")" = 1 ] ||
    fail "the damaged session is not unreadable: $(cat "$T/out")"
expect_in "$T/err" "journal.jsonl"
# and so is one whose journal is gone, or empty, beside its report (it
# was "interrupted", which a resume refused: no task record)
rm -rf "$T/damaged"
cp -r "$T/demo" "$T/damaged"
for d in $(ls -d "$T"/damaged/.tandem/sessions/*/ | head -n 2); do
    [ -s "$d/report.json" ] || fail "no report.json in $d"
    echo "$d" >>"$T/gone"
done
rm "$(sed -n 1p "$T/gone")journal.jsonl"
: >"$(sed -n 2p "$T/gone")journal.jsonl"
run "$BIN/tandem" sessions --repo "$T/damaged"
expect_rc 0 "sessions with no journal"
[ "$(grep -c ' unreadable ' "$T/out")" = 2 ] ||
    fail "the sessions without a journal are not unreadable: $(cat "$T/out")"
expect_not_in "$T/out" " interrupted "
expect_in "$T/err" "journal.jsonl: no such file"
expect_in "$T/err" "journal.jsonl is empty"
# a resume of the one with no journal says so, and makes none (it made
# an empty one)
gone=$(sed -n 1p "$T/gone")
run "$BIN/tandem" resume --repo "$T/damaged" "$(basename "$gone")"
expect_rc 1 "resume of a session with no journal"
expect_in "$T/err" "has no journal"
[ ! -e "${gone}journal.jsonl" ] || fail "the resume made a journal"
# show of the one with an empty journal says so (it printed nothing,
# exit 0)
empty=$(sed -n 2p "$T/gone")
run "$BIN/tandem" show --repo "$T/damaged" "$(basename "$empty")"
expect_rc 1 "show of a session with an empty journal"
expect_in "$T/err" "holds no record"
pass "a session whose journal is damaged is listed unreadable, with a warning"

# a run or a server killed as it made a session leaves its directory with
# a lock file alone, or an empty journal beside it: it never started, and
# is listed so, without a warning that its journal is damaged (it was
# "unreadable", "journal.jsonl is empty", as if something had broken it)
cp -r "$T/demo" "$T/unstarted"
S=$T/unstarted/.tandem/sessions
mkdir "$S/20300101-000000-0000cccc" "$S/20300101-000000-0000dddd"
: >"$S/20300101-000000-0000cccc/lock"
: >"$S/20300101-000000-0000dddd/lock"
: >"$S/20300101-000000-0000dddd/journal.jsonl"
run "$BIN/tandem" sessions --repo "$T/unstarted"
expect_rc 0 "sessions with unstarted ones"
for id in 20300101-000000-0000cccc 20300101-000000-0000dddd; do
    grep -q "^$id *unstarted .*(killed before its task was recorded)" "$T/out" ||
        fail "$id is not listed unstarted: $(cat "$T/out")"
done
expect_not_in "$T/out" " unreadable "
expect_not_in "$T/err" "journal.jsonl"
run "$BIN/tandem" sessions --repo "$T/unstarted" --json
expect_in "$T/out" '"state": "unstarted"'
run "$BIN/tandem" help sessions
expect_in "$T/out" "unstarted (a run or server"
# ended: prune removes them (aged by their directory's time)
touch -d "2 days ago" "$S/20300101-000000-0000cccc" "$S/20300101-000000-0000dddd"
run "$BIN/tandem" sessions prune --repo "$T/unstarted" --older-than 1d \
    --dry-run
expect_rc 0 "prune --dry-run"
expect_in "$T/out" "20300101-000000-0000cccc"
expect_in "$T/out" "20300101-000000-0000dddd"
rm -rf "$T/unstarted"
pass "a session killed before its task was recorded is listed unstarted"

run "$BIN/tandem" show --repo "$T/demo" "$(echo "$approved" | cut -c1-19)"
expect_rc 0 "show"
expect_in "$T/out" "## Attempt 2"
expect_in "$T/out" "- Decision: **revise**: required skill test failed (exit 2)"
expect_in "$T/out" "+    return (double)sum / (double)count;"
expect_in "$T/out" "## Finished: approved"
expect_in "$T/out" "## The approved change"
run "$BIN/tandem" show --repo "$T/demo" "$waiting"
expect_in "$T/out" "## The last proposal (not approved)"
pass "show prints the reflection log and the diff, labelled approved or not"

run "$BIN/tandem" stats --repo "$T/demo" --json
expect_rc 0 "stats"
expect_in "$T/out" '"sessions": 3'
expect_in "$T/out" '"success_rate": 0.5'
expect_in "$T/out" '"escalation_rate": 0.333'
expect_in "$T/out" '"reason": "required skill test failed (exit 2): not fixed, it failed before the change too"'
run "$BIN/tandem" stats --repo "$T/demo"
expect_in "$T/out" "success rate:         50%"
pass "stats gives rates, costs, phases and the common failures"

# an audit a resume made again is timed from the resume, not from the
# proposal before the stop (a night went into "auditing"); an escalation
# under gate.escalate: never asked no person, and is no escalation
S=$T/stx/.tandem/sessions
mkdir -p "$S/20260101-000000-0000aaaa" "$S/20260101-000000-0000bbbb"
cat >"$S/20260101-000000-0000aaaa/journal.jsonl" <<'JSONL'
{"seq":1,"time":"2026-01-01T00:00:00.000Z","type":"task","task":"t","started_ms":1767225600000}
{"seq":2,"time":"2026-01-01T00:00:01.000Z","type":"proposal","attempt":1,"reply":{}}
{"seq":3,"time":"2026-01-01T10:00:00.000Z","type":"resume"}
{"seq":4,"time":"2026-01-01T10:00:02.000Z","type":"audit","attempt":1,"reply":{}}
{"seq":5,"time":"2026-01-01T10:00:03.000Z","type":"finish","status":"approved","reason":null}
JSONL
cat >"$S/20260101-000000-0000bbbb/journal.jsonl" <<'JSONL'
{"seq":1,"time":"2026-01-01T00:00:00.000Z","type":"task","task":"t","started_ms":1767225600000}
{"seq":2,"time":"2026-01-01T00:00:01.000Z","type":"escalation","attempt":1,"at":"decision","reason":"r","mode":"never"}
{"seq":3,"time":"2026-01-01T00:00:02.000Z","type":"finish","status":"escalated","reason":"r"}
JSONL
run "$BIN/tandem" stats --repo "$T/stx" --json
expect_rc 0 "stats of a resumed audit and a never escalation"
expect_in "$T/out" '"auditing_ms": 2000'
expect_in "$T/out" '"escalation_rate": 0,'
pass "stats: a resume's stop is no auditing time; escalate: never asked no one"

# averages of nothing are unknown, not 0: one session waiting for a
# person, none ended, no report (it said a 0 % success rate)
S=$T/stn/.tandem/sessions
mkdir -p "$S/20260101-000000-0000eeee"
cat >"$S/20260101-000000-0000eeee/journal.jsonl" <<'JSONL'
{"seq":1,"time":"2026-01-01T00:00:00.000Z","type":"task","task":"t","started_ms":1767225600000}
{"seq":2,"time":"2026-01-01T00:00:01.000Z","type":"escalation","attempt":1,"at":"decision","reason":"r","mode":"ask"}
JSONL
run "$BIN/tandem" stats --repo "$T/stn" --json
expect_rc 0 "stats with nothing ended"
expect_in "$T/out" '"success_rate": null'
expect_in "$T/out" '"average_iterations": null'
expect_in "$T/out" '"auditing_ms": null'
expect_in "$T/out" '"escalation_rate": 1,'
run "$BIN/tandem" stats --repo "$T/stn"
expect_rc 0 "stats text with nothing ended"
expect_in "$T/out" "success rate:         unknown (none has ended)"
expect_in "$T/out" "coding unknown, auditing unknown"
pass "stats: an average of nothing is unknown (null), not 0"

# watch a run as it goes
demo_config "$TOP/examples/demo/cassette.json" <<YAML
skills:
  build: {command: "sleep 0.5; make", timeout_s: 60}
  test: {command: make test, timeout_s: 60}
YAML
"$BIN/tandem" run --repo "$T/demo" "make the failing test pass" \
    >"$T/run.out" 2>"$T/run.err" &
pid=$!
i=0
until ls "$T"/demo/.tandem/sessions/*/events >/dev/null 2>&1; do
    i=$((i + 1))
    [ $i -gt 1000 ] && fail "the run never published its events"
    sleep 0.01
done
run "$BIN/tandem" watch --repo "$T/demo" --plain --for 60
wait $pid
expect_rc 0 "watch"
expect_in "$T/out" "attempt 2: auditing"
expect_in "$T/out" "attempt 2: decided: approve"
expect_in "$T/out" ": finished: approved"
run "$BIN/tandem" watch --repo "$T/demo"
expect_in "$T/out" "no session is running"
pass "watch follows a running session to its end"

# what the model wrote, and names on disk, reach a terminal without its
# escapes; show reads only this session's own diffs
python3 - "$TOP/examples/demo/cassette.json" "$T/esc.json" <<'PY'
import json, sys
c = json.load(open(sys.argv[1]))
ex = c["exchanges"]
ex[0]["answer"] = "\x1b]0;PWNED\x07\x1b[31mRED\x1b[0m " + ex[0]["answer"]
json.dump(c, open(sys.argv[2], "w"))
PY
rm -rf "$T/demo/.tandem"
demo_config "$T/esc.json" </dev/null
run "$BIN/tandem" run --repo "$T/demo" "$(printf 'make the failing test pass\033]0;TASK\007')"
expect_rc 0 "a run whose coder writes escapes"
# the markdown views are read with cat too: no escape in them (the
# task's and the model's went in as written)
for f in "$(session_dir)/reflection.md" "$(session_dir)/decisions.md"; do
    if LC_ALL=C grep -q "$(printf '\033')" "$f"; then
        fail "$(basename "$f") holds an escape: $(cat -v "$f" | head -5)"
    fi
done
mkdir "$T/demo/.tandem/sessions/$(printf 'x\033]0;PWNED\007')"
for cmd in "show 2026" "stats" "sessions"; do
    # shellcheck disable=SC2086
    "$BIN/tandem" $cmd --repo "$T/demo" >"$T/esc.out" 2>&1
    if LC_ALL=C grep -q "$(printf '\033')" "$T/esc.out"; then
        fail "tandem $cmd printed an escape: $(cat -v "$T/esc.out")"
    fi
done
id=$(basename "$(ls -d "$T"/demo/.tandem/sessions/2026*)")
printf '%s\n' '{"seq":90,"time":"2026-01-01T00:00:00.000Z","type":"decision","attempt":9,"action":"approve","reason":"x","diff":"../../../../../../etc/passwd"}' \
    >>"$T/demo/.tandem/sessions/$id/journal.jsonl"
run "$BIN/tandem" show --repo "$T/demo" "$id"
expect_not_in "$T/out" "root:"
pass "show, stats and sessions print no terminal escapes; show reads only the session's diffs"
