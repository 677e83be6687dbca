#!/bin/sh
# tandem doctor: a table of checks, exit 0 when all pass and 1 otherwise;
# keys are checked for presence, never shown; endpoints are asked for
# their model list.
. "$(dirname "$0")/lib.sh"

KEY=sk-doctor-0123456789SECRET
cat >"$T/empty.json" <<'JSON'
{"steps": []}
JSON
start_fakellm "$T/empty.json"

run "$BIN/tandem" doctor --repo "$TOP/examples/demo"
expect_rc 0 "the demo's configuration"
expect_in "$T/out" "coder endpoint"
expect_in "$T/out" "cassette.json can be read"
expect_in "$T/out" "skill test             ok    make ("
expect_in "$T/out" "doctor: everything is in place"
pass "the demo passes every check"

for p in openai anthropic ollama; do
    case $p in
    openai) base="$FAKE_URL/v1" ;;
    *) base="$FAKE_URL" ;;
    esac
    OPENAI_API_KEY=$KEY ANTHROPIC_API_KEY=$KEY \
        run "$BIN/tandem" doctor --repo "$TOP/examples/demo" \
        --llm "$p:fake-model" --base-url "$base"
    expect_rc 0 "$p endpoint"
    expect_in "$T/out" "offers fake-model"
    expect_not_in "$T/out" "$KEY"
done
grep -q '"path":"/v1/models"' "$FAKE_LOG" || fail "no GET /v1/models"
grep -q '"path":"/api/tags"' "$FAKE_LOG" || fail "no GET /api/tags"
grep -q '"x-api-key":"'"$KEY"'"' "$FAKE_LOG" || fail "anthropic key not sent"
grep -q '"anthropic-version":"2023-06-01"' "$FAKE_LOG" ||
    fail "anthropic-version not sent"
[ "$(grep -c '"method":"POST"' "$FAKE_LOG")" = 0 ] ||
    fail "doctor asked for a completion"
pass "openai, anthropic and ollama endpoints are checked by their model list"

# a gateway's own Authorization replaces the provider's key, as in a
# model call (doctor sent the key beside it)
mkdir -p "$T/gw"
cat >"$T/gw/agents.yaml" <<YAML
version: 1
agents:
  coder:
    llm: {provider: openai, model: fake-model, base_url: "$FAKE_URL/v1",
          headers: {Authorization: "Bearer gw-token"}}
  reviewer:
    llm: {provider: openai, model: fake-model, base_url: "$FAKE_URL/v1",
          headers: {Authorization: "Bearer gw-token"}}
    skills: []
skills: {}
YAML
: >"$FAKE_LOG"
OPENAI_API_KEY=$KEY run "$BIN/tandem" doctor --repo "$T/gw" \
    --config "$T/gw/agents.yaml"
grep -q '"authorization":"Bearer gw-token"' "$FAKE_LOG" ||
    fail "the gateway's header was not sent: $(cat "$FAKE_LOG")"
expect_not_in "$FAKE_LOG" "$KEY"
pass "a configured Authorization header replaces the key"

OPENAI_API_KEY=$KEY run "$BIN/tandem" doctor --repo "$TOP/examples/demo" \
    --llm openai:no-such-model --base-url "$FAKE_URL/v1"
expect_rc 1 "unknown model"
expect_in "$T/out" "does not offer model 'no-such-model' (it offers: fake-model)"
pass "a model the server does not offer fails, naming what it offers"

# (a port on loopback nobody listens on: no traffic leaves the machine)
env -u OPENAI_API_KEY "$BIN/tandem" doctor --repo "$TOP/examples/demo" \
    --llm openai:fake-model --base-url http://127.0.0.1:9/v1 --timeout 2 \
    >"$T/out" 2>"$T/err"
RC=$?
expect_rc 1 "unreachable"
expect_in "$T/out" "coder key              ok    \$OPENAI_API_KEY is not set (fine for a local server)"
expect_in "$T/out" "GET http://127.0.0.1:9/v1/models: Couldn't connect to server"
expect_in "$T/out" "doctor: 2 checks failed"
pass "an unreachable endpoint fails with the reason"

copy_demo
cat >"$T/demo/agents.yaml" <<YAML
version: 1
agents:
  coder:
    llm: {provider: replay, cassette: $TOP/examples/demo/cassette.json}
  reviewer:
    llm: {provider: replay, cassette: $TOP/examples/demo/cassette.json}
    skills: [lint, test]
skills:
  lint: {command: [no-such-linter, --strict]}
  test: {command: "cd sub && make test"}
YAML
run "$BIN/tandem" doctor --repo "$T/demo"
expect_rc 1 "missing skill program"
expect_in "$T/out" "skill lint             FAIL  cannot run 'no-such-linter': not found on PATH ("
expect_in "$T/out" "skill test             ok    a shell command"
pass "a skill whose program is missing fails"

# what the config's check says, doctor says on the model's own row
# (and does not go on to its key and endpoint)
demo_config "$T/no-such-cassette.json"
run "$BIN/tandem" doctor --repo "$T/demo"
expect_rc 1 "missing cassette"
expect_in "$T/out" "coder llm              FAIL  agents.coder.llm.cassette: $T/no-such-cassette.json does not exist"
expect_in "$T/out" "reviewer llm           FAIL  agents.reviewer.llm.cassette: $T/no-such-cassette.json does not exist"
expect_not_in "$T/out" "coder endpoint"
run "$BIN/tandem" doctor --repo "$TOP/examples/demo" --llm command
expect_rc 1 "--llm command without a command"
expect_in "$T/out" "coder llm              FAIL  agents.coder.llm: provider command needs a command (set agents.coder.llm.command to the program"
pass "a model that lacks what its provider needs fails its llm row"

# a make target the Makefile has no rule for is a FAIL row naming the
# skill and the target; the Makefile is read, not run
copy_demo
cat >"$T/demo/agents.yaml" <<YAML
version: 1
agents:
  coder:
    llm: {provider: replay, cassette: "$TOP/examples/demo/cassette.json"}
  reviewer:
    llm: {provider: replay, cassette: "$TOP/examples/demo/cassette.json"}
    skills: [build, test]
skills:
  build: {command: make -j 2}
  test: {command: make check}
YAML
run "$BIN/tandem" doctor --repo "$T/demo"
expect_rc 1 "a missing make target"
expect_in "$T/out" "skill test             FAIL  \`make check\`: Makefile has no rule for target 'check'; fix skills.test in agents.yaml"
expect_not_in "$T/out" "target '2'"
sed -i 's/make check/make test/' "$T/demo/agents.yaml"
run "$BIN/tandem" doctor --repo "$T/demo"
expect_rc 0 "the target is there"
pass "doctor fails a make target the Makefile has no rule for"

printf 'gate: {max_iterations: 0}\n' >"$T/demo/agents.yaml"
run "$BIN/tandem" doctor --repo "$T/demo"
expect_rc 1 "bad config"
expect_in "$T/out" "config                 FAIL"
expect_in "$T/out" "agents.yaml:1:24: gate.max_iterations must be an integer 1..50"
run "$BIN/tandem" doctor --bogus
expect_rc 2 "usage"
run "$BIN/tandem" doctor --help
expect_rc 0 "help"
expect_in "$T/out" "usage: tandem doctor"
pass "a broken config fails the check; usage errors exit 2"

# What the skills will see, not what the host has: a bare make where the
# repository has no Makefile, a Makefile git ignores (./configure wrote
# it; the workspace is a copy of the repository's files), a program the
# sandbox does not show (under /tmp), a relative program, found in
# --repo and not in the current directory. Each was "ok" before.
mkdir -p "$T/dr/scripts" "$T/tools"
printf '#!/bin/sh\nexit 0\n' >"$T/tools/mytool"
printf '#!/bin/sh\nexit 0\n' >"$T/dr/scripts/run.sh"
chmod +x "$T/tools/mytool" "$T/dr/scripts/run.sh"
(cd "$T/dr" && echo Makefile >.gitignore && git init -q && git add -A &&
    git -c user.name=t -c user.email=t@t commit -qm base) >/dev/null
cat >"$T/dr.yaml" <<YAML
version: 1
agents:
  coder: {llm: {provider: command, command: [cat, /dev/null]}}
  reviewer:
    llm: {provider: command, command: [cat, /dev/null]}
    skills: [build, mine, rel]
skills:
  build: {command: make}
  mine: {command: "mytool --all"}
  rel: {command: ./scripts/run.sh}
YAML
(cd / && PATH="$T/tools:$PATH" "$BIN/tandem" doctor --repo "$T/dr" --config "$T/dr.yaml") >"$T/out" 2>"$T/err"
expect_in "$T/out" "skill build            FAIL  \`make\`: $T/dr has no Makefile; fix skills.build in agents.yaml"
expect_in "$T/out" "skill mine             FAIL  cannot run 'mytool': $T/tools/mytool is not in the sandbox"
expect_in "$T/out" "skill rel              ok    ./scripts/run.sh ($T/dr/scripts/run.sh)"
printf 'all:\n\ttrue\n' >"$T/dr/Makefile"
(cd / && "$BIN/tandem" doctor --repo "$T/dr" --config "$T/dr.yaml") >"$T/out" 2>"$T/err"
expect_in "$T/out" "skill build            FAIL  \`make\`: Makefile is not one of git's files, and the skills run on the repository's files"
pass "doctor checks the skills as they will run: the workspace's Makefile, the sandbox's programs, --repo's paths"

# a server's config (README's "A server for other hosts": agents with
# count 0, no orchestrator.endpoint, tandem serve --bind gives it): its
# agent programs pass and its keys are checked (it failed, "set
# orchestrator.endpoint", and the keys went unchecked)
mkdir -p "$T/keys"
for n in orch agent; do
    tandem keys generate --out "$T/keys" --name $n >"$T/$n.pub" 2>/dev/null ||
        fail "tandem keys generate $n"
done
printf 'coder,reviewer %s agent\n' "$(cat "$T/agent.pub")" >"$T/keys/authorized"
cat >"$T/srv.yaml" <<YAML
version: 1
orchestrator:
  curve_key: "$T/keys/orch.key"
  authorized_keys: "$T/keys/authorized"
agents:
  coder: {count: 0, llm: {provider: command, command: [cat, /dev/null]}}
  reviewer:
    llm: {provider: command, command: [cat, /dev/null]}
    skills: [build]
skills:
  build: {command: make}
YAML
copy_demo
run tandem doctor --repo "$T/demo" --config "$T/srv.yaml"
expect_in "$T/out" "agent programs         ok    found; agents with count 0 connect by themselves, to tandem serve --bind EP"
chmod 666 "$T/keys/authorized"
run tandem doctor --repo "$T/demo" --config "$T/srv.yaml"
expect_rc 1 "a server's config with a list others may write"
expect_in "$T/out" "agent programs         FAIL  $T/keys/authorized can be written by others (mode 666)"
pass "doctor takes a server's config, agents with count 0 and no endpoint, and checks its keys"
