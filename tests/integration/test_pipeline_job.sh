#!/bin/sh
# docs/pipelines.md's job that submits to a server, run as written: the
# script is taken from the document, three tasks go to one tandem serve
# and all three come back approved with their patches.
. "$(dirname "$0")/lib.sh"

export XDG_RUNTIME_DIR=$T/run XDG_STATE_HOME=$T/state
mkdir -p "$T/run" "$T/state" "$T/job/ci" && chmod 700 "$T/run" "$T/state"
# the script: the sh block after the "Many tasks" heading
awk '/^## Many tasks/ { on = 1 } on && /^```sh$/ { body = 1; next }
     body && /^```$/ { exit } body { print }' "$TOP/docs/pipelines.md" \
    >"$T/job/ci/tandem-tasks.sh"
grep -q "tandem submit --detach" "$T/job/ci/tandem-tasks.sh" ||
    fail "no job found in docs/pipelines.md"
cat >"$T/job/ci/agents.yaml" <<YAML
version: 1
agents:
  coder:
    llm: {provider: replay, cassette: "$TOP/examples/demo/cassette.json"}
  reviewer:
    llm: {provider: replay, cassette: "$TOP/examples/demo/cassette.json"}
    skills: [build, test]
skills:
  build: {command: make, timeout_s: 60}
  test: {command: make test, timeout_s: 60}
YAML
for i in 1 2 3; do
    mkdir -p "$T/job/checkouts/$i"
    (cd "$TOP/examples/demo" && tar cf - --exclude=.tandem \
        --exclude=agents.yaml .) | (cd "$T/job/checkouts/$i" && tar xf -)
    echo "make the failing test pass" >>"$T/job/tasks.txt"
done
(cd "$T/job" && PATH=$BIN:$PATH sh ci/tandem-tasks.sh) >"$T/out" 2>"$T/err"
rc=$?
[ "$rc" = 0 ] || fail "the job exited $rc: $(cat "$T/err" "$T/job/serve.log")"
for i in 1 2 3; do
    expect_in "$T/job/fix.$i.patch" "+    return (double)sum / (double)count;"
done
if pgrep -f "$T/job/ci/agents.yaml" >/dev/null; then
    fail "the server or its agents outlived the job"
fi
pass "the pipeline job of docs/pipelines.md: three tasks through one server, all approved"
