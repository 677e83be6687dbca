#!/bin/sh
# The gate decides in code, across the real processes: a model's
# "approve" cannot pass failing tests, an unparseable or ambiguous
# critique is never a pass, and a coder that repeats itself is stopped and
# handed to a human.
. "$(dirname "$0")/lib.sh"

copy_demo
demo_config "$FIX/cassette-llm-approves-failing.json"
run tandem run --repo "$T/demo" "make the failing test pass"
expect_rc 0 "approved in the end"
expect_in "$T/err" "[1/3] reviewer: build pass, test FAIL (exit 2); critique: approve, confidence 0.99"
expect_in "$T/err" "[1/3] revise: required skill test failed (exit 2)"
expect_in "$T/err" "approved after 2 iterations"
pass "a model approving a change whose tests fail does not get it through"

copy_demo
demo_config "$FIX/cassette-bad-critique.json"
run tandem run --repo "$T/demo" "make the failing test pass"
expect_rc 3 "needs a human"
expect_in "$T/err" "[1/3] reviewer: build pass, test pass; no valid critique"
expect_in "$T/err" "[1/3] revise: no valid critique: the critique does not match the schema: field 'confidence' must be a number 0..1"
expect_in "$T/err" "[2/3] escalate: stuck: attempt 2 proposes exactly the change of attempt 1"
expect_in "$T/err" "needs a human: stuck"
[ ! -s "$T/out" ] || fail "a diff was printed for a change that was not approved"
dir=$(session_dir)
expect_in "$dir/report.json" '"status": "escalated"'
expect_in "$dir/report.json" '"final_diff": null'
expect_in "$dir/report.json" '"llm_calls": 4'
pass "an unparseable critique is never a pass; a repeated diff escalates (exit 3)"

# A draft "approve" before the final "revise", then (re-asked) a verdict
# given twice: each is an ambiguous critique, never a pass. The cassette's
# expect checks that the re-ask carries the exact ambiguity.
copy_demo
demo_config "$FIX/cassette-ambiguous-critique.json"
run tandem run --repo "$T/demo" "make the failing test pass"
expect_rc 3 "needs a human"
expect_in "$T/err" "[1/3] reviewer: build pass, test pass; no valid critique"
expect_in "$T/err" "[1/3] revise: no valid critique: the critique is ambiguous: key 'verdict' appears twice"
expect_in "$T/err" "[2/3] escalate: stuck: attempt 2 proposes exactly the change of attempt 1"
dir=$(session_dir)
expect_in "$dir/logs/reviewer-1.log" "unusable critique (the answer holds 2 critiques that disagree: 'approve' then 'revise'; answer with exactly one JSON object); asking again"
expect_in "$dir/report.json" '"final_diff": null'
expect_in "$dir/report.json" '"llm_calls": 4'
pass "a draft verdict before the final one, or a verdict given twice, is never a pass"

copy_demo
demo_config "$TOP/examples/demo/cassette.json" <<'YAML'
gate:
  max_iterations: 1
YAML
run tandem run --repo "$T/demo" "make the failing test pass"
expect_rc 3 "max iterations"
expect_in "$T/err" "[1/1] escalate: gate.max_iterations (1) reached; last failure: required skill test failed (exit 2)"
pass "reaching gate.max_iterations hands the task to a human (exit 3)"

# The coder's own mistakes are feedback, not failures: an answer without
# edit blocks is re-asked once with the parse error, and edits that do
# not apply go back with the closest line of the file.
copy_demo
demo_config "$FIX/cassette-coder-mistakes.json"
run tandem run --repo "$T/demo" "make the failing test pass"
expect_rc 0 "approved after the coder's mistakes"
expect_in "$T/err" "[1/3] coder: the edits do not apply"
expect_in "$T/err" "[1/3] revise: the proposal could not be applied: edit 1: the SEARCH text was not found in stats.c"
expect_in "$T/err" "approved after 2 iterations · 4 LLM calls"
dir=$(session_dir)
expect_in "$dir/logs/coder-1.log" "unusable answer (the answer contains no edit blocks"
expect_in "$dir/report.json" '"diff": ".tandem/sessions/'
pass "unusable answers and edits that do not apply go back to the coder"

# Passing tests are not enough: a critical issue from the reviewer sends
# the change back even when its verdict says approve.
copy_demo
demo_config "$FIX/cassette-critical-issue.json"
run tandem run --repo "$T/demo" "make the failing test pass"
expect_rc 0 "approved after the critical issue is fixed"
expect_in "$T/err" "[1/3] reviewer: build pass, test pass; critique: approve, confidence 0.90, 1 issue"
expect_in "$T/err" "[1/3] revise: the reviewer found a critical issue at stats.c:11"
expect_in "$T/out" "+    double sum = 0.0;"
pass "tests pass but a critical issue is raised: revised, then approved"
