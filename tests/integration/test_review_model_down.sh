#!/bin/sh
# tandem review when the model cannot be asked: a change a required
# skill already failed on is rejected (exit 1), which --on-error pass
# does not let through; only a change whose skills passed, which the
# model alone could judge, could not be reviewed (exit 4, or 0 with
# --on-error pass). The reviewer answered with an error and dropped the
# skills' results, so a commit that broke the build went in whenever
# the model was down under --on-error pass.
. "$(dirname "$0")/lib.sh"

copy_demo
rm -f "$T/demo/agents.yaml"
(cd "$T/demo" && git init -q && git add -A &&
    git -c user.email=t@example.com -c user.name=t commit -qm base) ||
    fail "cannot make the demo a git repository"
# a cassette with no answer: every call to the model fails
echo '{"tandem_cassette": 1, "exchanges": []}' >"$T/empty.json"
review_config() { # CRITIQUE
    cat >"$T/review.yaml" <<YAML
gate:
  critique: $1
agents:
  reviewer:
    llm: {provider: replay, cassette: "$T/empty.json"}
    skills: [build, test]
skills:
  build: {command: make, timeout_s: 60}
  test: {command: make test, timeout_s: 60}
YAML
}
review() { # ARGS...
    run tandem review --repo "$T/demo" --config "$T/review.yaml" "$@" \
        -- "make the failing test pass"
}

# a change that does not compile
sed -i 's|^    return sum / count;|    return sum / count +;|' "$T/demo/stats.c"
for critique in always on_trigger; do
    review_config $critique
    review --on-error pass --format github
    expect_rc 1 "a broken change, the model down, --on-error pass ($critique)"
    expect_in "$T/err" "rejected: required skill build failed"
    expect_not_in "$T/err" "lets it through unreviewed"
    expect_in "$T/out" "::error file=stats.c,line=11"
    expect_not_in "$T/out" "could not review"
    review --on-error fail -q
    expect_rc 1 "a broken change, the model down ($critique)"
done
pass "a change a required skill failed on is rejected, the model down or not"

# the right fix: the skills pass, and only the model could judge it
sed -i 's|^    return sum / count +;|    return (double)sum / (double)count;|' \
    "$T/demo/stats.c"
review_config always
review -q
expect_rc 4 "a passing change, the model down"
review --on-error pass -q
expect_rc 0 "a passing change, the model down, --on-error pass"
expect_in "$T/err" "lets it through unreviewed"
pass "a change whose skills pass still could not be reviewed without the model"

# a reviewer that dies in its critique, in an audit in phases: the
# skills' phase had the build fail, which decides (the critique's
# failure was "could not review", exit 4, which --on-error pass let
# through)
sed -i 's|^    return (double)sum / (double)count;|    return sum / count +;|' \
    "$T/demo/stats.c"
cat >"$T/review.yaml" <<YAML
gate:
  critique: on_trigger
orchestrator:
  heartbeat_ms: 200
agents:
  reviewer:
    llm: {provider: command, command: [sh, -c, 'kill -9 \$PPID'], max_retries: 0}
    skills: [build, test]
skills:
  build: {command: make, timeout_s: 60}
  test: {command: make test, timeout_s: 60}
YAML
review --on-error pass -q
expect_rc 1 "a broken change, the reviewer dying in its critique, --on-error pass"
expect_in "$T/err" "rejected: required skill build failed"
expect_not_in "$T/err" "lets it through unreviewed"
pass "a reviewer that dies in the critique of a change a required skill failed on: rejected"
