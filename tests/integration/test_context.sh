#!/bin/sh
# What the coder is sent, seen in the requests the fake server received
# (issue 11): a file the task names goes whatever its size when the
# budget holds it, and when it does not the run says so, naming
# agents.coder.context_max_kb; the files left out are reported; and the
# repository map stays within agents.coder.map_max_tokens on a tree of
# 2,000 files.
. "$(dirname "$0")/lib.sh"

export OPENAI_API_KEY=sk-test-context
# coder_request: the first chat request's body, as the server logged it
coder_request() {
    /usr/bin/python3 -c 'import json, sys
for line in open(sys.argv[1]):
    r = json.loads(line)
    if r["path"] == "/v1/chat/completions":
        print(json.dumps(r["body"])); break' "$FAKE_LOG"
}

# The demo, plus a 300 KiB source file the task names and 2,000 small
# files in three directories.
make_tree() {
    copy_demo
    /usr/bin/python3 - "$T/demo" <<'PY'
import os, sys
root = sys.argv[1]
with open(os.path.join(root, "table.c"), "w") as f:
    f.write("/* TABLE-MARKER */\n")
    while f.tell() < 300 * 1024:
        f.write("static const int row_%d = %d;\n" % (f.tell(), f.tell()))
for i in range(2000):
    d = "gen" if i < 1500 else "vendor" if i < 1900 else "misc"
    os.makedirs(os.path.join(root, d), exist_ok=True)
    with open(os.path.join(root, d, "f%04d.txt" % i), "w") as f:
        f.write("x" * 200 + "\n")
PY
}

TASK="make the failing test pass; the limits live in table.c"
# config CODER_KEYS: the demo's agents.yaml over openai, with extra coder
# keys
config() {
    cat >"$T/demo/agents.yaml" <<YAML
version: 1
agents:
  coder:
    llm: {provider: openai, model: fake-model}
    $1
  reviewer:
    llm: {provider: openai, model: fake-model}
    skills: [build, test]
skills:
  build: {command: make, timeout_s: 60}
  test: {command: make test, timeout_s: 60}
YAML
}

# 1. the budget holds the named file: it goes, though over 256 KiB
make_tree
config "context_max_kb: 512"
start_fakellm "$FIX/demo-openai.json"
run tandem run --repo "$T/demo" --base-url "$FAKE_URL/v1" "$TASK"
expect_rc 0 "approved with a named 300 KiB file"
coder_request >"$T/req1"
expect_in "$T/req1" "TABLE-MARKER"
expect_not_in "$T/err" "not sent, though named"
dir=$(session_dir)
/usr/bin/python3 - "$dir/report.json" <<'PY' || fail "report.json context"
import json, sys
c = json.load(open(sys.argv[1]))["attempts"][0]["context"]
assert c["named_left_out"] == 0, c
assert c["files_left_out"] > 0, c
assert c["map_bytes"] <= 2048 * 4, c
assert c["map_files_summed"] > 0, c
PY
kill "$FAKE_PID"; wait "$FAKE_PID" 2>/dev/null; FAKE_PID=
pass "a named file over 256 KiB goes when the budget holds it"

# 2. the default budget (128 KiB) does not: the run says so and what
# would hold it, and the coder still gets the rest
make_tree
config "map_max_tokens: 1024"
start_fakellm "$FIX/demo-openai.json"
run tandem run --repo "$T/demo" --base-url "$FAKE_URL/v1" "$TASK"
expect_rc 0 "approved without the named file"
expect_in "$T/err" "coder: not sent, though named: table.c (301 KiB); the named files need agents.coder.context_max_kb: 302 or more (it is 128)"
expect_in "$T/err" "left out"
coder_request >"$T/req2"
expect_not_in "$T/req2" "TABLE-MARKER"
expect_in "$T/req2" "gen/ ("
dir=$(session_dir)
/usr/bin/python3 - "$dir/report.json" <<'PY' || fail "report.json context"
import json, sys
c = json.load(open(sys.argv[1]))["attempts"][0]["context"]
assert c["named_left_out"] == 1, c
assert c["files_left_out"] >= 1000, c
assert 1024 * 2 < c["map_bytes"] <= 1024 * 4, c
PY
kill "$FAKE_PID"; wait "$FAKE_PID" 2>/dev/null; FAKE_PID=
pass "a named file that does not fit is named, with the budget to raise"

# 3. in a git work tree, tandem's own outputs and untracked files stay
# out: a fix.patch written into the repository, the untracked
# agents.yaml, .tandem/
copy_demo
rm -f "$T/demo/agents.yaml"
(cd "$T/demo" && git init -q && git add -A &&
    git -c user.email=t@example.com -c user.name=t commit -qm base) ||
    fail "cannot make the demo a git repository"
config "context_max_kb: 512"
echo "# CONFIG-MARKER" >>"$T/demo/agents.yaml"
printf 'diff --git a/x b/x\n+PATCH-MARKER\n' >"$T/demo/fix.patch"
mkdir -p "$T/demo/.tandem" && echo TANDEM-MARKER >"$T/demo/.tandem/note"
start_fakellm "$FIX/demo-openai.json"
run tandem run --repo "$T/demo" --base-url "$FAKE_URL/v1" "make the failing test pass"
expect_rc 0 "approved in a git tree"
coder_request >"$T/req3"
expect_not_in "$T/req3" "PATCH-MARKER"
expect_not_in "$T/req3" "fix.patch"
expect_not_in "$T/req3" "TANDEM-MARKER"
expect_not_in "$T/req3" "CONFIG-MARKER"
expect_in "$T/req3" "stats.c"
kill "$FAKE_PID"; wait "$FAKE_PID" 2>/dev/null; FAKE_PID=
pass "fix.patch, the untracked agents.yaml and .tandem/ are neither sent nor mapped"
