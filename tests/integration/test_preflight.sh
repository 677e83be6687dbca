#!/bin/sh
# Checks before paying, before anything starts: a run on the built-in
# defaults says so; a provider's own API with no key set is exit 2 with
# no session; a server that cannot be reached says where to look.
. "$(dirname "$0")/lib.sh"

# no agents.yaml, no --config, no key: the defaults are named, then the
# key, and nothing starts (no session, no agents)
mkdir -p "$T/bare"
run env -u OPENAI_API_KEY -u TANDEM_LLM -u TANDEM_BASE_URL \
    "$BIN/tandem" run "fix it" --repo "$T/bare"
expect_rc 2 "the default OpenAI URL without a key"
expect_in "$T/err" "no $T/bare/agents.yaml and no --config: using the built-in defaults"
expect_in "$T/err" "tandem init"
expect_in "$T/err" "needs an API key, and OPENAI_API_KEY is not set"
expect_in "$T/err" "--llm PROVIDER:MODEL (and --base-url URL"
[ ! -e "$T/bare/.tandem" ] || fail "a session was made before the key was checked"
[ ! -s "$T/out" ] || fail "stdout is not empty"
pass "built-in defaults are said; no key on the provider's own URL is exit 2, no session"

# the configured api_key_env is the one named; anthropic the same
copy_demo
cat >"$T/demo/agents.yaml" <<'YAML'
version: 1
agents:
  coder:
    llm: {provider: openai, model: m, api_key_env: TANDEM_TEST_KEY}
  reviewer:
    llm: {provider: anthropic, model: m}
    skills: []
YAML
run env -u TANDEM_TEST_KEY -u ANTHROPIC_API_KEY -u TANDEM_LLM \
    "$BIN/tandem" run "x" --repo "$T/demo"
expect_rc 2 "the configured key variable unset"
expect_in "$T/err" "the coder's model (openai m at https://api.openai.com/v1) needs an API key, and TANDEM_TEST_KEY is not set"
expect_not_in "$T/err" "built-in defaults"
run env -u ANTHROPIC_API_KEY -u TANDEM_LLM TANDEM_TEST_KEY=sk-x \
    "$BIN/tandem" run "x" --repo "$T/demo"
expect_rc 2 "anthropic without its key"
expect_in "$T/err" "the reviewer's model (anthropic m at https://api.anthropic.com) needs an API key, and ANTHROPIC_API_KEY is not set"
[ ! -e "$T/demo/.tandem" ] || fail "a session was made before the key was checked"
pass "the configured api_key_env, and anthropic's key, are checked"

# a review with no key could not be done (exit 4, as --help and the
# pipelines guide say), which --on-error pass lets through: a fork's
# pull request runs without the secrets (it was exit 2, which no
# --on-error changes)
(cd "$T/demo" && git init -q && git add -A &&
    git -c user.email=t@example.com -c user.name=t commit -qm base &&
    echo '/* x */' >>stats.c) || fail "cannot make the demo a git repository"
run env -u ANTHROPIC_API_KEY -u TANDEM_LLM "$BIN/tandem" review --repo "$T/demo"
expect_rc 4 "a review without the reviewer's key"
expect_in "$T/err" "could not review: the reviewer's model (anthropic m at https://api.anthropic.com) needs an API key"
run env -u ANTHROPIC_API_KEY -u TANDEM_LLM "$BIN/tandem" review --on-error pass --repo "$T/demo"
expect_rc 0 "the same under --on-error pass"
expect_in "$T/err" "could not review the change"
[ ! -e "$T/demo/.tandem" ] || fail "a session was made"
pass "a review without a key could not be done: exit 4, or 0 under --on-error pass"

# a server of one's own at another URL may need no key: it starts, and a
# server that is not there ends with where to look
cat >"$T/demo/agents.yaml" <<'YAML'
version: 1
agents:
  coder:
    llm: {provider: openai, model: m, base_url: "http://127.0.0.1:9/v1", max_retries: 0}
  reviewer:
    llm: {provider: openai, model: m, base_url: "http://127.0.0.1:9/v1", max_retries: 0}
    skills: [build]
skills:
  build: {command: make, timeout_s: 60}
YAML
run env -u OPENAI_API_KEY -u TANDEM_LLM \
    "$BIN/tandem" run "x" --repo "$T/demo"
expect_rc 1 "a server that cannot be reached"
expect_in "$T/err" "Couldn't connect to server"
expect_in "$T/err" "; check --base-url, or run \`tandem doctor\`"
pass "a custom base URL needs no key; connection refused says check --base-url or doctor"

# a TMPDIR tandem cannot use: exit 2 naming it and the fix, before a
# session is made (it was exit 1 after one); doctor names it too, not
# bubblewrap
copy_demo
(cd "$T/demo" && git init -q && git add -A &&
    git -c user.name=t -c user.email=t@t commit -qm base && echo "/* x */" >>stats.c)
for cmd in "run x" review; do
    # shellcheck disable=SC2086 # cmd is a command and its words
    run env TMPDIR="$T/no-such-dir" "$BIN/tandem" $cmd --repo "$T/demo"
    expect_rc 2 "tandem $cmd with an unusable TMPDIR"
    expect_in "$T/err" "cannot create tandem's runtime directory $T/no-such-dir/tandem-"
    expect_in "$T/err" "set TMPDIR to a directory you may write, or unset it for /tmp"
    [ ! -e "$T/demo/.tandem/sessions" ] || fail "tandem $cmd made a session"
done
run env TMPDIR="$T/no-such-dir" "$BIN/tandem" doctor --repo "$T/demo"
expect_rc 1 "doctor with an unusable TMPDIR"
expect_in "$T/out" "runtime directory      FAIL  cannot create tandem's runtime directory"
expect_not_in "$T/out" "bubblewrap"
run "$BIN/tandem" doctor --repo "$T/demo"
expect_in "$T/out" "runtime directory      ok"
pass "an unusable TMPDIR is exit 2 before any session, and doctor names it"

# the built-in defaults (make, make test) in a repository without a
# Makefile: exit 2 before any model is asked (a bare make's "no makefile
# found" was taken for the project's failure, and the model was paid),
# and the fix is an agents.yaml, not a skill of one that is not there
mkdir -p "$T/nomk"
(cd "$T/nomk" && echo 'print(1)' >a.py && git init -q && git add -A &&
    git -c user.name=t -c user.email=t@t commit -qm base) >/dev/null
run "$BIN/tandem" run --repo "$T/nomk" --llm ollama:x \
    --base-url http://127.0.0.1:1 "fix it"
expect_rc 2 "no Makefile under the built-in defaults"
expect_in "$T/err" "skill build cannot run on the unmodified tree: make found no Makefile in the tree"
expect_in "$T/err" "write an agents.yaml whose skills fit this repository (tandem init guesses one; skill build is a built-in default)"
expect_in "$T/err" "0 LLM calls"
pass "a bare make without a Makefile is exit 2 before any model, pointing at tandem init"

# a bad TANDEM_LLM is named as the environment's, not as an --llm that
# was never given; doctor's usage error leaves stdout empty (its table's
# header was printed before the check)
mkdir -p "$T/envllm"
run env TANDEM_LLM=gpt-4o-mini "$BIN/tandem" run --repo "$T/envllm" "x"
expect_rc 2 "a bad TANDEM_LLM"
expect_in "$T/err" "TANDEM_LLM (read as an option): --llm gpt-4o-mini: give PROVIDER:MODEL"
run env TANDEM_LLM=gpt-4o-mini "$BIN/tandem" doctor --repo "$T/envllm"
expect_rc 2 "doctor with a bad TANDEM_LLM"
expect_in "$T/err" "tandem doctor: TANDEM_LLM (read as an option)"
[ ! -s "$T/out" ] || fail "doctor's usage error printed on stdout: $(cat "$T/out")"
run "$BIN/tandem" run --repo "$T/envllm" --llm gpt-4o-mini "x"
expect_not_in "$T/err" "TANDEM_LLM"
pass "a bad TANDEM_LLM is named as such; doctor's usage error prints nothing on stdout"
