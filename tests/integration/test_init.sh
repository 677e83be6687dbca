#!/bin/sh
# tandem init: the agents.yaml it writes for the demo finds the demo's
# build and test, loads, and runs the demo to an approval; an existing
# agents.yaml is kept unless --force; a repository with nothing it
# recognises gets the template to fill in, which loads too.
. "$(dirname "$0")/lib.sh"

export OPENAI_API_KEY=sk-init-test

run "$BIN/tandem" help init
expect_rc 0 "tandem help init"
expect_in "$T/out" "usage: tandem init [--repo DIR] [--force]"
run "$BIN/tandem" --help
expect_in "$T/out" "  init  "
pass "tandem help init"

# The demo without its agents.yaml: a Makefile with all and test.
copy_demo
rm "$T/demo/agents.yaml"
run tandem init --repo "$T/demo"
expect_rc 0 "init on the demo"
expect_in "$T/err" "found Makefile (targets all, test)"
expect_in "$T/err" "build: make (from Makefile, target all)"
expect_in "$T/err" "test: make test (from Makefile, target test)"
expect_in "$T/err" "wrote $T/demo/agents.yaml"
[ -s "$T/out" ] && fail "init wrote to stdout"
expect_in "$T/demo/agents.yaml" '    command: "make test"'
expect_in "$T/demo/agents.yaml" "    skills: [build, test]"
expect_in "$T/demo/agents.yaml" "# Guessed by tandem init"
pass "init guesses the demo's make and make test and says from where"

# The file loads and works: doctor accepts it and the demo, run on it
# against a fake OpenAI server, is approved by the guessed skills.
start_fakellm "$FIX/demo-openai.json"
run tandem doctor --repo "$T/demo" --llm openai:fake-model \
    --base-url "$FAKE_URL/v1"
expect_rc 0 "doctor on the written agents.yaml"
expect_in "$T/out" "skill test"
expect_in "$T/out" "skill build            ok    make ("
cp "$T/demo/agents.yaml" "$T/written.yaml"
run tandem run --repo "$T/demo" --llm openai:fake-model \
    --base-url "$FAKE_URL/v1" "make the failing test pass"
expect_rc 0 "the demo on the written agents.yaml"
expect_in "$T/err" "approved after 2 iterations"
pass "the written agents.yaml loads, and a run on it is approved"

# An agents.yaml that is there is kept, unless --force.
echo "# mine" >"$T/demo/agents.yaml"
run tandem init --repo "$T/demo"
expect_rc 2 "init over an existing agents.yaml"
expect_in "$T/err" "$T/demo/agents.yaml is there already"
expect_in "$T/err" "--force"
[ "$(cat "$T/demo/agents.yaml")" = "# mine" ] || fail "agents.yaml was changed"
run tandem init --force --repo "$T/demo"
expect_rc 0 "init --force"
cmp -s "$T/demo/agents.yaml" "$T/written.yaml" ||
    fail "init --force did not write the same agents.yaml again"
pass "an existing agents.yaml is refused (exit 2, named), --force replaces it"

# Nothing recognised: the template with the skills to fill in.
mkdir -p "$T/bare"
echo 'int main(void) { return 0; }' >"$T/bare/main.c"
run tandem init --repo "$T/bare"
expect_rc 0 "init on a bare repository"
expect_in "$T/err" "recognised no build system in $T/bare"
expect_in "$T/err" "with no skill: fill in skills.build and skills.test"
expect_in "$T/bare/agents.yaml" "    skills: []"
expect_in "$T/bare/agents.yaml" "  # build:"
run tandem doctor --repo "$T/bare" --llm openai:fake-model \
    --base-url "$FAKE_URL/v1"
expect_rc 0 "doctor on the template"
pass "a repository with nothing recognised gets a template that loads"

# Other build systems, as a user would meet them (the rules are in
# tests/unit/test_init.c).
mkdir -p "$T/py/tests"
echo 'def test_x(): pass' >"$T/py/tests/test_x.py"
run tandem init --repo "$T/py"
expect_rc 0 "init on a pytest repository"
expect_in "$T/err" "found pytest (tests/test_x.py)"
expect_in "$T/err" "build: none recognised"
expect_in "$T/err" "test: python3 -m pytest -q (from tests/test_x.py)"
expect_in "$T/py/agents.yaml" "    skills: [test]"
mkdir -p "$T/rs"
printf '[package]\nname = "x"\n' >"$T/rs/Cargo.toml"
printf '{"scripts": {"test": "node t.js"}}\n' >"$T/rs/package.json"
run tandem init --repo "$T/rs"
expect_rc 0 "init on cargo and npm"
expect_in "$T/err" "found Cargo.toml, package.json (script test)"
expect_in "$T/err" "build: cargo build (from Cargo.toml)"
expect_in "$T/err" "test: cargo test (from Cargo.toml)"
pass "pytest, and cargo before npm"

# Usage errors.
run tandem init --repo "$T/nowhere"
expect_rc 2 "a missing --repo"
expect_in "$T/err" "--repo $T/nowhere is not a directory"
run tandem init --frob
expect_rc 2 "an unknown option"
expect_in "$T/err" "unknown option '--frob'"
run tandem init "$T/bare"
expect_rc 2 "an operand"
expect_in "$T/err" "unexpected argument"
expect_in "$T/err" "--repo DIR"
[ -e "$T/nowhere" ] && fail "init made the missing repository"
pass "usage errors are exit 2"

# a Makefile git ignores (./configure wrote it) is not the workspace's:
# no make skill is guessed from it, and init says why (it offered make
# and make check, and every run's baseline failed)
mkdir -p "$T/conf"
(cd "$T/conf" && echo 'int main(void){return 0;}' >main.c &&
    echo Makefile >.gitignore && git init -q && git add -A &&
    git -c user.name=t -c user.email=t@t commit -qm base) >/dev/null
printf 'all:\n\tcc -o m main.c\ncheck:\n\ttrue\n' >"$T/conf/Makefile"
run "$BIN/tandem" init --repo "$T/conf"
expect_rc 0 "init beside a git-ignored Makefile"
expect_in "$T/err" "Makefile is not one of git's files"
expect_not_in "$T/conf/agents.yaml" '  build: {command: "make"'
expect_in "$T/conf/agents.yaml" "skills: []"
pass "a git-ignored Makefile is not taken for the build"
