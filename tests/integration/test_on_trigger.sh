#!/bin/sh
# gate.critique on_trigger: the skills run first and the model critiques
# only when a trigger fires; a change that passes its skills and fires no
# trigger is approved on them alone, and the report counts what was saved.
. "$(dirname "$0")/lib.sh"

copy_demo
demo_config "$TOP/examples/demo/cassette.json" <<'YAML'
gate:
  critique: on_trigger
YAML
run tandem run --repo "$T/demo" "make the failing test pass"
expect_rc 0 "on_trigger demo"
# attempt 1: the tests fail, a trigger: the coder gets the critique
expect_in "$T/err" "[1/3] reviewer: critique (required skill test did not pass)"
# attempt 2: the tests pass now, where they failed on the unmodified
# tree: deleting the failing assertions does that too, and only the
# model tells the two apart (it was approved on the skills alone)
expect_in "$T/err" "[2/3] reviewer: critique (required skill test failed on the unmodified tree and passes now)"
expect_in "$T/err" "approved after 2 iterations · 4 LLM calls"
pass "on_trigger: a change that makes a failing required skill pass is critiqued"

# a small change whose skills passed before it as after it fires no
# trigger: approved on the skills alone, the critique counted as saved
copy_demo
sed -i 's|^    return sum / count;|    return (double)sum / (double)count;|' "$T/demo/stats.c"
cat >"$T/comment.json" <<'JSON'
{"tandem_cassette": 1, "exchanges": [
 {"role": "coder", "attempt": 1, "call": 1,
  "answer": "A comment.\n\nstats.c\n<<<<<<< SEARCH\nint stats_max(const int *values, size_t count)\n=======\n/* the largest value; 0 for none */\nint stats_max(const int *values, size_t count)\n>>>>>>> REPLACE\n",
  "usage": {"prompt_tokens": 10, "completion_tokens": 10}}]}
JSON
demo_config "$T/comment.json" <<'YAML'
gate:
  critique: on_trigger
YAML
run tandem run --repo "$T/demo" "say what stats_max returns"
expect_rc 0 "on_trigger, a comment"
expect_in "$T/err" "[1/3] reviewer: no critique: no trigger fired (gate.critique: on_trigger)"
expect_in "$T/err" "approved after 1 iteration · 1 LLM call"
report=$(session_dir)/report.json
expect_in "$report" '"asked": 0'
expect_in "$report" '"skipped": 1'
expect_in "$(session_dir)/journal.jsonl" '"type":"skills"'
pass "on_trigger: a passing, small change needs no critique"

# deleting the failing assertions: the suite passes, no model asked
# would have approved it; the test file is one of the checks' files
copy_demo
cat >"$T/cheat.json" <<'JSON'
{"tandem_cassette": 1, "exchanges": [
 {"role": "coder", "attempt": 1, "call": 1,
  "answer": "Done.\n\ntest_stats.c\n<<<<<<< SEARCH\n    expect_near(\"stats_mean({1,2,3,4})\", stats_mean(fraction, 4), 2.5);\n    expect_near(\"stats_mean({-3,-1})\", stats_mean(negative, 2), -2.0);\n=======\n>>>>>>> REPLACE\n",
  "usage": {"prompt_tokens": 10, "completion_tokens": 10}},
 {"role": "reviewer", "attempt": 1, "call": 1,
  "answer": "{\"verdict\": \"revise\", \"confidence\": 0.95, \"issues\": [{\"type\": \"incorrect\", \"severity\": \"critical\", \"file\": \"test_stats.c\", \"line\": 20, \"description\": \"The failing assertion was deleted.\", \"suggested_fix\": \"Fix stats.c instead.\"}], \"summary\": \"The change deletes the test.\"}",
  "usage": {"prompt_tokens": 10, "completion_tokens": 10}}]}
JSON
demo_config "$T/cheat.json" <<'YAML'
gate:
  critique: on_trigger
  max_iterations: 1
  escalate: never
YAML
run tandem run --repo "$T/demo" "make the failing test pass"
[ "$RC" -ne 0 ] || fail "deleting the failing assertion was approved: $(cat "$T/err")"
expect_in "$T/err" "[1/1] reviewer: critique (required skill test failed on the unmodified tree and passes now; the change touches test_stats.c"
expect_not_in "$T/err" "approved after"
pass "on_trigger: deleting the failing assertions is critiqued"

# a diff larger than critique_diff_lines is a trigger
copy_demo
demo_config "$TOP/examples/demo/cassette.json" <<'YAML'
gate:
  critique: on_trigger
  critique_diff_lines: 1
YAML
run tandem run --repo "$T/demo" "make the failing test pass"
expect_rc 0 "on_trigger with a small critique_diff_lines"
expect_in "$T/err" "[2/3] reviewer: critique (required skill test failed on the unmodified tree and passes now; the change has 2 changed lines (gate.critique_diff_lines is 1))"
expect_in "$T/err" "approved after 2 iterations · 4 LLM calls"
pass "on_trigger: a large diff is critiqued"

# every Nth task is critiqued whatever it looks like
copy_demo
demo_config "$TOP/examples/demo/cassette.json" <<'YAML'
gate:
  critique: on_trigger
  critique_every: 1
YAML
run tandem run --repo "$T/demo" "make the failing test pass"
expect_rc 0 "on_trigger with critique_every 1"
expect_in "$T/err" "task 1 is a periodic check (gate.critique_every is 1)"
expect_in "$T/err" "4 LLM calls"
pass "on_trigger: periodic critiques"

# a risky path is a trigger, and a passing risky change goes to a human
copy_demo
demo_config "$TOP/examples/demo/cassette.json" <<'YAML'
gate:
  critique: on_trigger
  risk_paths: ["*.c"]
  escalate: never
YAML
run tandem run --repo "$T/demo" "make the failing test pass"
expect_rc 1 "a passing change on a risky path"
expect_in "$T/err" "the change touches stats.c (gate.risk_paths)"
expect_in "$T/err" "but it touches stats.c (gate.risk_paths): a human must approve it"
pass "risk_paths: critiqued, and a human decides"

# answering replays the journal: no skill runs again, no model is asked
copy_demo
demo_config "$TOP/examples/demo/cassette.json" <<'YAML'
gate:
  critique: on_trigger
  escalate: queue
  risk_paths: ["*.c"]
YAML
run tandem run --repo "$T/demo" "make the failing test pass"
expect_rc 3 "risky change waits for a person"
run "$BIN/tandem" approve --repo "$T/demo" "$(basename "$(session_dir)")"
expect_rc 0 "approve the risky change"
expect_in "$T/out" "+    return (double)sum / (double)count;"
journal=$T/demo/.tandem/sessions/$(ls "$T/demo/.tandem/sessions")/journal.jsonl
[ "$(grep -c '"type":"skills"' "$journal")" = 2 ] ||
    fail "the skills ran again after the answer"
[ "$(grep -c '"type":"critique.1"' "$journal")" = 2 ] ||
    fail "the model was asked again after the answer"
pass "a risky change is approved by a person"

# a change that edits the checker is critiqued: a coder whose only edit
# made the suite's recipe echo success passed its skills, fired no
# trigger, and was approved with the code still wrong
copy_demo
cat >"$T/gutted.json" <<'JSON'
{"tandem_cassette": 1, "exchanges": [
 {"role": "coder", "attempt": 1, "call": 1,
  "answer": "Done.\n\nMakefile\n<<<<<<< SEARCH\n\t./test_stats\n=======\n\t@echo all tests passed\n>>>>>>> REPLACE\n",
  "usage": {"prompt_tokens": 10, "completion_tokens": 10}},
 {"role": "reviewer", "attempt": 1, "call": 1,
  "answer": "{\"verdict\": \"reject\", \"confidence\": 0.95, \"issues\": [{\"type\": \"incorrect\", \"severity\": \"critical\", \"file\": \"Makefile\", \"line\": 11, \"description\": \"The test recipe no longer runs the tests.\", \"evidence\": \"@echo all tests passed\", \"suggested_fix\": \"Fix stats.c instead.\"}], \"summary\": \"The change disables the tests.\"}",
  "usage": {"prompt_tokens": 10, "completion_tokens": 10}}]}
JSON
demo_config "$T/gutted.json" <<'YAML'
gate:
  critique: on_trigger
  max_iterations: 1
  escalate: never
YAML
run tandem run --repo "$T/demo" "make the failing test pass"
[ "$RC" -ne 0 ] || fail "the gutted suite was approved: $(cat "$T/err")"
expect_in "$T/err" "the change touches Makefile, which defines checks (gate.check_paths))"
expect_not_in "$T/err" "approved after"
pass "on_trigger: a change to the files that define the checks is critiqued"
