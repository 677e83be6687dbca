#!/bin/sh
# The baseline: before the first attempt the reviewer runs the skills on
# the unmodified tree. A required skill that cannot run there stops the
# run as a configuration error before any model is paid; what already
# fails is the coder's first clue; a check that passed before and fails
# after the change is called a regression.
. "$(dirname "$0")/lib.sh"

# `make check` where the Makefile has no such target: exit 2, the real
# cause on the terminal, no LLM call
copy_demo
demo_config "$TOP/examples/demo/cassette.json" <<'YAML'
skills:
  build: {command: make, timeout_s: 60}
  test: {command: make check, timeout_s: 60}
YAML
run tandem run --repo "$T/demo" "make the failing test pass"
expect_rc 2 "a skill that cannot run is a configuration error"
expect_in "$T/err" "skill test cannot run on the unmodified tree: make has no rule for the target it names"
expect_in "$T/err" "No rule to make target 'check'"
expect_in "$T/err" "fix skills.test in agents.yaml"
expect_in "$T/err" "no model was asked"
expect_not_in "$T/err" "coder: proposing"
dir=$(session_dir)
expect_in "$dir/report.json" '"llm_calls": 0'
expect_not_in "$dir/journal.jsonl" '"type":"baseline"'
pass "a make target that does not exist stops the run before any LLM call (exit 2)"

copy_demo
demo_config "$TOP/examples/demo/cassette.json" <<'YAML'
skills:
  build: {command: make, timeout_s: 60}
  test: {command: "tandem-no-such-program --all", timeout_s: 60}
YAML
run tandem run --repo "$T/demo" "make the failing test pass"
expect_rc 2 "a program that is not there"
expect_in "$T/err" "skill test cannot run on the unmodified tree: it could not start"
expect_in "$T/err" "cannot run 'tandem-no-such-program': not found on PATH"
# the summary's reason is one line, its lines joined by spaces (a '?'
# for each ran the words together)
grep '^failed: ' "$T/err" >"$T/failed" || fail "no failed: line"
expect_in "$T/failed" "it could not start "
expect_not_in "$T/failed" "start?"
pass "a skill whose program is not installed is exit 2, naming it"

# the same through the shell (the command has shell syntax): exit 127
copy_demo
demo_config "$TOP/examples/demo/cassette.json" <<'YAML'
skills:
  build: {command: make, timeout_s: 60}
  test: {command: "tandem-no-such-program --all 2>&1", timeout_s: 60}
YAML
run tandem run --repo "$T/demo" "make the failing test pass"
expect_rc 2 "a program that is not there, through the shell"
expect_in "$T/err" "skill test cannot run on the unmodified tree: its command was not found (exit 127)"
expect_in "$T/err" "tandem-no-such-program"
pass "a shell command whose program is not installed is exit 2, naming it"

# an advisory skill that cannot run is a warning, not a stop
copy_demo
cat >"$T/demo/agents.yaml" <<YAML
version: 1
agents:
  coder:
    llm: {provider: replay, cassette: "$TOP/examples/demo/cassette.json"}
  reviewer:
    llm: {provider: replay, cassette: "$TOP/examples/demo/cassette.json"}
    skills: [build, test, lint]
skills:
  build: {command: make, timeout_s: 60}
  test: {command: make test, timeout_s: 60}
  lint: {command: tandem-no-such-lint, required: false, timeout_s: 60}
YAML
run tandem run --repo "$T/demo" "make the failing test pass"
expect_rc 0 "an advisory skill does not stop the run"
expect_in "$T/err" "baseline: advisory skill lint cannot run (it could not start); fix skills.lint in agents.yaml"
pass "an advisory skill that cannot run is a warning"

# the demo: the baseline's failure is the coder's first clue, and each
# attempt's checks say how they did before the change
copy_demo
demo_config "$TOP/examples/demo/cassette.json"
run tandem run --repo "$T/demo" "make the failing test pass"
expect_rc 0 "approved"
expect_in "$T/err" "baseline: build pass, test FAIL (exit 2), before any change"
expect_in "$T/err" "[1/3] revise: required skill test failed (exit 2): not fixed, it failed before the change too"
dir=$(session_dir)
expect_in "$dir/llm/attempt-1-proposal.json" "Before any change, these checks already fail on the repository as it is"
expect_in "$dir/llm/attempt-1-proposal.json" "FAIL stats_mean({1,2,3,4}) = 2.000000, expected 2.500000"
expect_in "$dir/journal.jsonl" '"type":"baseline"'
expect_in "$dir/report.json" '"baseline": {'
expect_in "$dir/report.json" '"before": "fail"'
expect_in "$dir/report.json" '"regression": false'
run "$BIN/tandem" show --repo "$T/demo" "$(basename "$dir")"
expect_in "$T/out" "## Before any change"
expect_in "$T/out" "- Checks: build pass, test fail (exit 2)"
pass "the baseline goes to the coder's first prompt and into the report"

# a change that breaks a check that passed before: a regression, in the
# gate's reason and in the coder's feedback
copy_demo
demo_config "$FIX/cassette-regression.json"
run tandem run --repo "$T/demo" "make the failing test pass"
expect_rc 0 "approved at the second attempt"
expect_in "$T/err" "[1/3] revise: required skill build failed (exit 2): a regression, it passed before the change"
dir=$(session_dir)
expect_in "$dir/report.json" '"regression": true'
expect_in "$dir/llm/attempt-2-proposal.json" "### build (\`make\`): fail, exit 2: a regression, it passed before the change"
pass "a check the change broke is named a regression"

# skills with paths run at the baseline; gate.baseline: false skips it
copy_demo
demo_config "$TOP/examples/demo/cassette.json" <<'YAML'
skills:
  build: {command: make, timeout_s: 60, paths: ["docs/**"]}
  test: {command: make test, timeout_s: 60}
YAML
run tandem run --repo "$T/demo" "make the failing test pass"
expect_rc 0 "approved"
expect_in "$T/err" "baseline: build pass, test FAIL (exit 2)"
expect_in "$T/err" "[1/3] reviewer: build skipped, test FAIL (exit 2)"
pass "a skill with paths runs at the baseline all the same"

copy_demo
demo_config "$TOP/examples/demo/cassette.json" <<'YAML'
gate:
  baseline: false
YAML
run tandem run --repo "$T/demo" "make the failing test pass"
expect_rc 0 "approved without a baseline"
expect_not_in "$T/err" "baseline:"
dir=$(session_dir)
expect_in "$dir/report.json" '"baseline": null'
expect_not_in "$dir/llm/attempt-1-proposal.json" "Before any change"
pass "gate.baseline: false runs no baseline"
