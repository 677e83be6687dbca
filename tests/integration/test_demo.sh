#!/bin/sh
# The main job end to end, offline: the bundled demo, real agents, real
# `make test`, replayed answers. The first proposal fails the tests, the
# failure goes back to the coder, the second passes and is approved.
. "$(dirname "$0")/lib.sh"

copy_demo
before=$(cksum "$T/demo/stats.c")
run tandem run --repo "$T/demo" "make the failing test pass"
expect_rc 0 "the demo is approved"

# stdout is exactly the approved diff
expect_in "$T/out" "--- a/stats.c"
expect_in "$T/out" "+    return (double)sum / (double)count;"
expect_in "$T/out" "-    return sum / count;"
# progress and summary on stderr
expect_in "$T/err" "[1/3] revise: required skill test failed"
expect_in "$T/err" "[2/3] approve"
expect_in "$T/err" "approved after 2 iterations · 4 LLM calls"
pass "approved on the second attempt with the failure fed back"

# the user's files are untouched
[ "$(cksum "$T/demo/stats.c")" = "$before" ] || fail "stats.c was modified"
[ ! -e "$T/demo/stats.o" ] || fail "the build ran in the user's tree"
pass "the user's tree is not modified"

# the session holds the report and every attempt
dir=$(session_dir)
[ -d "$dir" ] || fail "no session directory in stderr"
for f in report.json attempt-1.diff attempt-2.diff final.diff \
    logs/coder-1.log logs/reviewer-1.log; do
    [ -f "$dir/$f" ] || fail "session lacks $f"
done
cmp -s "$dir/final.diff" "$T/out" || fail "final.diff differs from stdout"
expect_in "$dir/attempt-1.diff" "+    return (double)(sum / (long)count);"
expect_in "$dir/report.json" '"status": "approved"'
expect_in "$dir/report.json" '"iterations": 2'
expect_in "$dir/report.json" '"llm_calls": 4'
expect_in "$dir/report.json" '"prompt": 3330'
expect_in "$dir/report.json" '"completion": 507'
expect_in "$dir/report.json" '"final_diff": ".tandem/sessions/'
reflection_is_rebuilt "$T/demo" "$dir"
pass "report.json, attempt-N.diff, final.diff and reflection.md are written"

# every LLM exchange is kept for people, out of the journal
for f in attempt-1-proposal attempt-1-audit attempt-2-proposal \
    attempt-2-audit; do
    [ -s "$dir/llm/$f.json" ] || fail "llm/$f.json was not written"
done
expect_in "$dir/llm/attempt-1-proposal.json" '"system": "You are the coder'
expect_in "$dir/llm/attempt-1-proposal.json" 'make the failing test pass'
expect_in "$dir/llm/attempt-1-proposal.json" '"prompt_tokens": 941'
expect_in "$dir/llm/attempt-2-audit.json" '"answer": "{'
expect_in "$dir/llm/attempt-2-audit.json" '"latency_ms"'
expect_not_in "$dir/journal.jsonl" '"exchanges"'
pass "every LLM exchange is in the session's llm/ folder"

expect_no_leftovers "$dir"
pass "no agent process or socket outlives the run"
