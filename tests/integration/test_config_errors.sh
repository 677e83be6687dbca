#!/bin/sh
# A broken agents.yaml stops tandem before anything starts: exit 2, every
# problem as FILE:LINE:COL, no session written.
. "$(dirname "$0")/lib.sh"

copy_demo
cat >"$T/demo/agents.yaml" <<'YAML'
version: 1
gate:
  max_iteration: 3
  confidence_threshold: high
agents:
  coder:
    llm:
      provider: replay
      cassette: cassette.json
  reviewer:
    count: 99
    llm: {provider: replay, cassette: cassette.json}
    skills: [build, tset]
skills:
  build: {command: make}
  test: {command: make test}
YAML
run tandem run --repo "$T/demo" "make the failing test pass"
expect_rc 2 "bad config"
expect_in "$T/err" "agents.yaml:3:3: unknown key 'max_iteration' in gate (did you mean 'max_iterations'?)"
expect_in "$T/err" "agents.yaml:4:25: gate.confidence_threshold must be a number 0..1, got \"high\""
expect_in "$T/err" "agents.yaml:11:12: agents.reviewer.count must be an integer 0..16, got \"99\""
expect_in "$T/err" "names 'tset', which is not defined under skills (defined: build, test)"
[ ! -d "$T/demo/.tandem" ] || fail "a session was created for a bad config"
pass "every config error is reported with file:line:col and exit 2"

printf 'gate: [1, 2\n' >"$T/demo/agents.yaml"
run tandem run --repo "$T/demo" "x"
expect_rc 2 "invalid YAML"
expect_in "$T/err" "agents.yaml:2:1: not valid YAML"
pass "a YAML syntax error names the place"

run tandem run --repo "$T/demo" --config "$T/missing.yaml" "x"
expect_rc 2 "missing --config"
expect_in "$T/err" "config file $T/missing.yaml does not exist"
pass "a missing --config file is a usage error"

demo_config "$T/no-such-cassette.json"
run tandem run --repo "$T/demo" "x"
expect_rc 2 "missing cassette"
expect_in "$T/err" "agents.coder.llm.cassette: $T/no-such-cassette.json does not exist"
pass "a missing cassette is a configuration error"

# a cassette that is there but no cassette (not JSON, cut short) stopped
# the agent after the session began: `run` failed with exit 1 and
# `review` could not review (exit 4), for a mistake in the configuration
echo "not json" >"$T/bad-cassette.json"
head -c 300 "$TOP/examples/demo/cassette.json" >"$T/cut-cassette.json"
for c in bad cut; do
    rm -rf "$T/demo/.tandem"
    demo_config "$T/$c-cassette.json"
    run tandem run --repo "$T/demo" "x"
    expect_rc 2 "a $c cassette"
    expect_in "$T/err" "agents.coder.llm.cassette: LLM replay of $T/$c-cassette.json: cassette $T/$c-cassette.json is not valid"
    expect_in "$T/err" "record it again"
    [ ! -d "$T/demo/.tandem" ] || fail "a session was created for a $c cassette"
done
(cd "$T/demo" && git init -q && git add -A &&
    git -c user.name=t -c user.email=t@t commit -qm base) || fail "git"
echo "/* x */" >>"$T/demo/stats.c"
demo_config "$T/bad-cassette.json"
run tandem review --repo "$T/demo" "x"
expect_rc 2 "review with a bad cassette"
expect_in "$T/err" "agents.reviewer.llm.cassette: LLM replay of $T/bad-cassette.json"
rm -rf "$T/demo/.git" "$T/demo/.tandem"
copy_demo
pass "a cassette that is not valid is a configuration error (exit 2)"

# --llm names a provider the config gives nothing for: the same check,
# in the same words, as agents.yaml gets when it loads
demo_config "$TOP/examples/demo/cassette.json"
run tandem run --repo "$T/demo" --llm command "x"
expect_rc 2 "--llm command without a command"
expect_in "$T/err" "agents.coder.llm: provider command needs a command (set agents.coder.llm.command to the program that reads the prompt on stdin and writes the answer on stdout"
[ ! -d "$T/demo/.tandem" ] || fail "a session was created for a bad --llm"
run tandem review --repo "$T/demo" --llm command
expect_rc 2 "review --llm command without a command"
expect_in "$T/err" "agents.coder.llm: provider command needs a command (set agents.coder.llm.command"
pass "--llm is checked by the config's own check, before anything starts"

# agents.yml (not .yaml) was passed over for the built-in defaults, whose
# model is a hosted one: code meant for a local model went to OpenAI
copy_demo
mv "$T/demo/agents.yaml" "$T/demo/agents.yml"
run tandem run --repo "$T/demo" "make the failing test pass"
expect_rc 2 "agents.yml"
expect_in "$T/err" "$T/demo/agents.yml is not read: tandem reads agents.yaml. Rename it, or give --config $T/demo/agents.yml"
run tandem doctor --repo "$T/demo"
expect_rc 2 "doctor with agents.yml"
expect_in "$T/err" "agents.yml is not read"
pass "an agents.yml is named, not passed over for the built-in defaults"
