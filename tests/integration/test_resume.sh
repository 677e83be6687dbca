#!/bin/sh
# Sessions survive crashes: kill tandem with SIGKILL after each journaled
# step of a run and `tandem resume` it: the result (the diff, the status,
# the tokens) equals an uninterrupted run's, and no answer the journal
# holds is asked for again. The calls equal it too, plus exactly the
# requests that were out when tandem died (journaled `asked`, with no
# answer after): resume pays for those again, and the report counts them
# as `calls_unanswered`. A torn last journal line is ignored; a write
# that fails (a full disk) is reported and loses nothing already
# journaled.
. "$(dirname "$0")/lib.sh"

# a slower build, so a kill can land between the steps; $EXTRA is more
# YAML for the agents section
EXTRA=
slow_demo() {
    copy_demo
    demo_config "$TOP/examples/demo/cassette.json" <<YAML
gate:
  escalate: queue
  critique: ${CRITIQUE:-always}
skills:
  build: {command: "sleep 0.3; make", timeout_s: 60}
  test: {command: make test, timeout_s: 60}
YAML
    if [ -n "$EXTRA" ]; then
        sed -i "s|^    skills: \[build, test\]|$EXTRA\n&|" "$T/demo/agents.yaml"
    fi
}

journal_lines() {
    f=$(ls "$T"/demo/.tandem/sessions/*/journal.jsonl 2>/dev/null | head -n 1)
    # grep -c prints 0 and fails on an empty journal: one number only
    # (it printed "0" twice, and the caller's test broke)
    n=$([ -n "$f" ] && grep -c '' "$f" 2>/dev/null)
    echo "${n:-0}"
}

# prompts SESSION_DIR: the system and user prompt of every LLM exchange
# the session kept (llm/*.json), in file order, one JSON string a line
prompts() {
    /usr/bin/python3 - "$1" <<'PY'
import glob, json, os, sys
for f in sorted(glob.glob(os.path.join(sys.argv[1], "llm", "*.json"))):
    for e in json.load(open(f))["exchanges"]:
        print(os.path.basename(f), e["call"], json.dumps(e["system"]),
              json.dumps(e["user"]))
PY
}

# open_asks JOURNAL: how many requests were out when the journal ended:
# `asked` records that neither their step's reply nor an `unanswered`
# record follows (PROTOCOL.md, Events; orchestrator/paid.h)
open_asks() {
    /usr/bin/python3 - "$1" <<'PY'
import json, sys
lines = [l for l in open(sys.argv[1]) if l.strip()]
recs = []
for i, l in enumerate(lines):
    try:
        recs.append(json.loads(l))
    except ValueError:
        # a torn last line (the kill landed mid-write) is not a record,
        # as tandem itself reads it
        if i != len(lines) - 1:
            raise
n = 0
for i, r in enumerate(recs):
    if r["type"] != "asked":
        continue
    for later in recs[i + 1:]:
        if later.get("attempt") != r["attempt"]:
            continue
        if later["type"] == r["step"] or (
                later["type"] == "unanswered" and later["step"] == r["step"]):
            break
        if later["type"] == "asked" and later["step"] == r["step"]:
            n += 1
            break
    else:
        n += 1
print(n)
PY
}

# kill_each_step LABEL: an uninterrupted run, then one killed after each
# of its journaled steps and resumed, compared with it
kill_each_step() {
    # the uninterrupted run, for comparison
    slow_demo
    run tandem run --repo "$T/demo" "make the failing test pass"
    expect_rc 0 "uninterrupted"
    cp "$T/out" "$T/expected.diff"
    dir=$(session_dir)
    steps=$(grep -c '' "$dir/journal.jsonl")
    [ "$steps" -ge 7 ] || fail "expected at least 7 journaled steps, got $steps"
    prompts "$dir" | sed "s/$(basename "$dir")/SESSION/g" \
        >"$T/expected.prompts"
    want_calls=$(json_int "$dir/report.json" llm_calls)
    want_tokens=$(grep -A2 '"tokens"' "$dir/report.json" | tr -d ' \n')
    [ "$(json_int "$dir/report.json" calls_unanswered)" = 0 ] ||
        fail "an uninterrupted run has unanswered calls"
    pass "$1: an uninterrupted run journals $steps steps"

    k=1
    late=0
    out=0 # kills that landed while a request was out
    while [ $k -lt "$steps" ]; do
        slow_demo
        "$BIN/tandem" run --repo "$T/demo" "make the failing test pass" \
            >"$T/out" 2>"$T/err" &
        pid=$!
        i=0
        while [ "$(journal_lines)" -lt $k ] && kill -0 $pid 2>/dev/null; do
            i=$((i + 1))
            [ $i -gt 3000 ] && fail "step $k never came"
            sleep 0.01
        done
        kill -KILL $pid 2>/dev/null
        wait $pid 2>/dev/null
        id=$(basename "$(ls -d "$T"/demo/.tandem/sessions/*/ | head -n 1)")
        # the agents notice their parent died; wait for them to go
        i=0
        while pgrep -f "$id" >/dev/null; do
            i=$((i + 1))
            [ $i -gt 1000 ] && fail "agents of $id outlived tandem"
            sleep 0.01
        done
        # on a loaded machine the kill may land after the run ended: that
        # is no resume to check, and too many of them prove nothing
        finished=0
        grep -q '"type":"finish"' \
            "$T/demo/.tandem/sessions/$id/journal.jsonl" && finished=1
        late=$((late + finished))
        lost=$(open_asks "$T/demo/.tandem/sessions/$id/journal.jsonl")
        [ "$lost" -gt 0 ] && out=$((out + 1))
        run "$BIN/tandem" resume --repo "$T/demo" "$id"
        expect_rc 0 "resumed after a kill at step $k"
        if [ -s "$T/out" ]; then
            cmp -s "$T/out" "$T/expected.diff" ||
                fail "the diff after a kill at step $k differs"
        fi
        rdir="$T/demo/.tandem/sessions/$id"
        cmp -s "$rdir/final.diff" "$T/expected.diff" ||
            fail "final.diff after a kill at step $k differs"
        got_calls=$(json_int "$rdir/report.json" llm_calls)
        got_lost=$(json_int "$rdir/report.json" calls_unanswered)
        got_tokens=$(grep -A2 '"tokens"' "$rdir/report.json" | tr -d ' \n')
        # the requests out at the kill were paid for (maybe) and asked
        # again: counted, one call each, and nothing else
        [ "$got_lost" = "$lost" ] ||
            fail "after a kill at step $k with $lost request(s) out: $got_lost calls unanswered"
        [ "$got_calls" = $((want_calls + lost)) ] ||
            fail "after a kill at step $k with $lost request(s) out: $got_calls calls, not $want_calls + $lost"
        # their tokens are unknown: none are made up
        [ "$got_tokens" = "$want_tokens" ] ||
            fail "after a kill at step $k: tokens $got_tokens, not $want_tokens"
        # every prompt a model saw, byte for byte (a replayed audit once
        # left the next coder prompt without what the build had made)
        # the two runs are two sessions: their ids (in the workspace's
        # path, which a build may print) are the one difference allowed
        prompts "$rdir" | sed "s/$id/SESSION/g" >"$T/got.prompts"
        cmp -s "$T/got.prompts" "$T/expected.prompts" ||
            fail "after a kill at step $k the prompts differ: $(diff "$T/expected.prompts" "$T/got.prompts" | head -n 5)"
        [ $finished = 1 ] || expect_in "$rdir/journal.jsonl" '"type":"resume"'
        expect_no_leftovers "$rdir"
        k=$((k + 1))
    done
    [ $((late * 2)) -lt "$steps" ] ||
        fail "$late of $((steps - 1)) kills came after the run had ended"
    # both kinds of kill happened: with a request out and between steps
    # (with one reviewer an audit's `asked` comes before its slow build;
    # a quorum's come before critiques a cassette answers at once, so
    # kills there land after them)
    [ -n "$OUT" ] && [ "$out" -lt "$OUT" ] &&
        fail "$out kill(s) landed while a request was out, not $OUT or more"
    [ "$out" -lt $((steps - 1 - late)) ] ||
        fail "every kill landed while a request was out"
    pass "$1: killed after each of steps 1..$((steps - 1)) and resumed: the same result, $out time(s) with a request out and counted once more ($late too late)"
}

OUT=1 kill_each_step "one reviewer"
OUT=
# in phases: the skills, then a quorum of two critiques, on trigger
CRITIQUE=on_trigger EXTRA="    count: 2\n    models: [{provider: replay, cassette: $TOP/examples/demo/cassette.json}, {provider: replay, cassette: $TOP/examples/demo/cassette.json}]" \
    kill_each_step "a quorum in phases"
CRITIQUE=always EXTRA=
slow_demo

# a torn last line: the crash cut the last record short
slow_demo
run tandem run --repo "$T/demo" "make the failing test pass"
dir=$(session_dir)
id=$(basename "$dir")
head -n 3 "$dir/journal.jsonl" >"$T/j"
printf '{"seq":4,"time":"2026-11-22T00:00:00.000Z","type":"decis' >>"$T/j"
cp "$T/j" "$dir/journal.jsonl"
grep -v '"type":"finish"' "$dir/journal.jsonl" >/dev/null
run "$BIN/tandem" resume --repo "$T/demo" "$id"
expect_rc 0 "resumed over a torn line"
expect_in "$T/err" "the last record was cut short by a crash; ignoring it"
cmp -s "$dir/final.diff" "$T/expected.diff" || fail "torn: final.diff differs"
pass "a torn last journal line is ignored, not fatal"

# the repository changed between the crash and the resume so that an
# attempt's edits make another diff: its journaled audit saw the old one,
# and replaying it once approved a diff no audit saw (a review found it);
# refused, naming it, and the session goes on once the files are back. A
# change the edits do not meet (the config) is no reason to stop.
slow_demo
run tandem run --repo "$T/demo" "make the failing test pass"
dir=$(session_dir)
id=$(basename "$dir")
grep -v '"type":"finish"' "$dir/journal.jsonl" |
    grep -v '"type":"decision","attempt":2' >"$T/j"
cp "$T/j" "$dir/journal.jsonl"
cp "$T/demo/stats.c" "$T/stats.c.orig"
sed -i 's/sum += values\[i\];/sum += values[i] + 1;/' "$T/demo/stats.c"
run "$BIN/tandem" resume --repo "$T/demo" "$id"
[ "$RC" -ne 0 ] || fail "a resume on changed files went on"
expect_in "$T/err" "$T/demo changed since this session started: attempt 1's change"
expect_not_in "$dir/journal.jsonl" '"type":"finish"'
cp "$T/stats.c.orig" "$T/demo/stats.c"
echo "# a comment" >>"$T/demo/agents.yaml"
run "$BIN/tandem" resume --repo "$T/demo" "$id"
expect_rc 0 "resumed once the files are back"
cmp -s "$dir/final.diff" "$T/expected.diff" || fail "changed: final.diff differs"
expect_not_in "$T/err" "warning"
pass "a resume whose edits now make another diff is refused, naming it; with the files back it finishes"

# a file the change does not touch changed between the crash and the
# resume: the journal's checks ran on the files as they were, and the
# resumed session used them as they are, saying nothing (a header
# changed so, and the approved change no longer built); now it says so
slow_demo
run tandem run --repo "$T/demo" "make the failing test pass"
dir=$(session_dir)
grep -v '"type":"finish"' "$dir/journal.jsonl" |
    grep -v '"type":"decision","attempt":2' >"$T/j"
cp "$T/j" "$dir/journal.jsonl"
expect_in "$dir/journal.jsonl" '"type":"workspace",'
sed -i 's/^double stats_mean/int stats_mean/' "$T/demo/stats.h"
run "$BIN/tandem" resume --repo "$T/demo" "$(basename "$dir")"
expect_rc 0 "the resume goes on"
expect_in "$T/err" "tandem: warning: $T/demo changed since this session started; the checks the journal holds ran on its files as they were then"
pass "a resume on files changed outside the change says its journaled checks ran on the files as they were"

# an audit in phases killed in its critique, resumed: the skills'
# results come from the journal, and the line says so (it said "running
# the skills", which it did not)
CRITIQUE=on_trigger slow_demo
run tandem run --repo "$T/demo" "make the failing test pass"
dir=$(session_dir)
id=$(basename "$dir")
sed -n '1,/"type":"skills","attempt":1/p' "$dir/journal.jsonl" >"$T/j"
cp "$T/j" "$dir/journal.jsonl"
run "$BIN/tandem" resume --repo "$T/demo" "$id"
expect_rc 0 "the resume of an audit in phases"
expect_in "$T/err" "[1/3] reviewer: the skills' results, from the journal"
expect_not_in "$T/err" "[1/3] reviewer: running the skills"
pass "a resumed audit in phases says its skills' results come from the journal"

# the same with an audit in phases, killed in its critique: the skills'
# results are journaled, the audit not yet, and they would be reused
CRITIQUE=on_trigger slow_demo
run tandem run --repo "$T/demo" "make the failing test pass"
dir=$(session_dir)
id=$(basename "$dir")
expect_in "$dir/journal.jsonl" '"type":"skills","attempt":1'
sed -n '1,/"type":"skills","attempt":1/p' "$dir/journal.jsonl" >"$T/j"
cp "$T/j" "$dir/journal.jsonl"
sed -i 's/sum += values\[i\];/sum += values[i] + 1;/' "$T/demo/stats.c"
run "$BIN/tandem" resume --repo "$T/demo" "$id"
[ "$RC" -ne 0 ] || fail "a resume reused skills run on another diff"
expect_in "$T/err" "changed since this session started: attempt 1's change"
pass "journaled skills of an audit in phases are not reused for another diff"

# a full disk: writes past a small file size fail (RLIMIT_FSIZE); the
# journal's own write error is checked word for word in test_journal
slow_demo
(ulimit -f 4 && "$BIN/tandem" run --repo "$T/demo" \
    "make the failing test pass") >"$T/out" 2>"$T/err"
RC=$?
expect_rc 1 "a write failed"
# which write fails first (the journal, a view, or a build in the
# workspace, whose processes share the limit) depends on sizes; each
# says what failed
expect_in "$T/err" "failed: "
dir=$(session_dir)
[ -n "$dir" ] || dir=$(ls -d "$T"/demo/.tandem/sessions/*/ | head -n 1)
id=$(basename "$dir")
lines=$(grep -c '' "$dir/journal.jsonl")
[ "$lines" -ge 1 ] || fail "nothing was journaled before the disk filled"
tail -c 1 "$dir/journal.jsonl" | od -c | grep -q '\\n' ||
    fail "the journal ends in a partial record"
run "$BIN/tandem" resume --repo "$T/demo" "$id"
expect_rc 0 "resumed once there is room"
cmp -s "$dir/final.diff" "$T/expected.diff" || fail "disk: final.diff differs"
pass "a full disk is reported and nothing journaled is lost; resume finishes"

# the report cannot be written as the session ends (a full disk there;
# here a directory in its place, which the rename cannot replace): the
# session is not journaled as ended, so a resume writes the report. It
# was: exit 0, `finish` journaled, and report.json never made, a resume
# only saying the session was over.
slow_demo
run tandem run --repo "$T/demo" "make the failing test pass"
expect_rc 0 "the run before the report is lost"
dir=$(session_dir)
id=$(basename "$dir")
grep -v '"type":"finish"' "$dir/journal.jsonl" >"$T/j"
cp "$T/j" "$dir/journal.jsonl"
rm "$dir/report.json"
mkdir "$dir/report.json"
run "$BIN/tandem" resume --repo "$T/demo" "$id"
expect_rc 1 "the report could not be written"
expect_in "$T/err" "cannot write the report"
expect_in "$T/err" "go on with: tandem resume --repo $T/demo $id"
expect_not_in "$dir/journal.jsonl" '"type":"finish"'
rmdir "$dir/report.json"
run "$BIN/tandem" resume --repo "$T/demo" "$id"
expect_rc 0 "resumed once the report can be written"
expect_in "$dir/report.json" '"status": "approved"'
expect_in "$dir/journal.jsonl" '"type":"finish","status":"approved"'
cmp -s "$dir/final.diff" "$T/expected.diff" || fail "report: final.diff differs"
pass "a report that cannot be written leaves the session open; a resume writes it"

# the same under --apply, whose `finish` is journaled before the tree is
# touched (no resume can write the report then): exit 1, not 0 with no
# report. The test skill puts a directory where report.json goes.
copy_demo
demo_config "$TOP/examples/demo/cassette.json" <<YAML
skills:
  build: {command: make, timeout_s: 60}
  test:
    command: "for d in $T/demo/.tandem/sessions/*/; do rm -f \"\$d/report.json\"; mkdir -p \"\$d/report.json\"; done; make test"
    timeout_s: 60
    sandbox: none  # it writes in the session, outside the workspace
YAML
run tandem run --apply --repo "$T/demo" "make the failing test pass"
expect_rc 1 "--apply with no report"
expect_in "$T/err" "cannot write the report"
expect_in "$T/err" "the session ended without its report.json"
expect_in "$T/demo/stats.c" "(double)sum / (double)count"
pass "--apply whose report cannot be written exits 1, the change applied"
