#!/bin/sh
# bench/serve-batch.sh N C: N tasks (the demo, answered from its
# cassette: a model with no latency; its real build and tests, which the
# cassette's prompts expect), C at a time, done two ways in one run:
# submitted to one
# `tandem serve --max-sessions C` with resident agents, and as N
# independent `tandem run`s, C at a time. Prints each wall time, the
# ratio, and tandem's own time per iteration (wall x C / iterations).
set -eu
N=${1:-32}
C=${2:-8}
top=$(cd "$(dirname "$0")/.." && pwd)
bin=$top/bin
w=$(mktemp -d "${TMPDIR:-/tmp}/tandem-bench.XXXXXX")
trap 'kill $srv 2>/dev/null || true; [ -n "${KEEP:-}" ] || rm -rf "$w"' EXIT
srv=
export XDG_RUNTIME_DIR=$w/run XDG_STATE_HOME=$w/state
mkdir -p "$w/run" "$w/state" && chmod 700 "$w/run" "$w/state"
cat >"$w/agents.yaml" <<YAML
version: 1
gate: {max_iterations: 3, baseline: false}
agents:
  coder:
    count: 2
    llm: {provider: replay, cassette: "$top/examples/demo/cassette.json"}
  reviewer:
    count: 1
    llm: {provider: replay, cassette: "$top/examples/demo/cassette.json"}
    skills: [build, test]
skills:
  build: {command: make}
  test: {command: make test}
YAML
repos() { # DIR: N copies of the demo without its own config
    for i in $(seq 1 "$N"); do
        mkdir -p "$1/r$i"
        (cd "$top/examples/demo" && tar cf - --exclude=.tandem \
            --exclude=agents.yaml .) | (cd "$1/r$i" && tar xf -)
    done
}
now() { date +%s%N; }
iterations() { # DIR: iterations of every report under it
    cat "$1"/r*/.tandem/sessions/*/report.json |
        sed -n 's/^ *"iterations": \([0-9]*\),/\1/p' |
        awk '{ s += $1 } END { print s }'
}

repos "$w/a"
"$bin/tandem" serve --config "$w/agents.yaml" --max-sessions "$C" \
    >"$w/serve.out" 2>"$w/serve.err" &
srv=$!
while [ ! -s "$w/run/tandem/serve.endpoint" ]; do sleep 0.01; done
t0=$(now)
pids=
for i in $(seq 1 "$N"); do
    "$bin/tandem" submit -q --repo "$w/a/r$i" "make the failing test pass" \
        >/dev/null 2>"$w/submit.$i.err" &
    pids="$pids $!"
done
fails=0
for p in $pids; do
    wait "$p" || fails=$((fails + 1))
done
t1=$(now)
kill -TERM $srv; wait $srv || true; srv=
serve_ms=$(((t1 - t0) / 1000000))
serve_it=$(iterations "$w/a")

repos "$w/b"
t0=$(now)
seq 1 "$N" | xargs -P "$C" -I{} sh -c \
    "'$bin/tandem' run -q --config '$w/agents.yaml' --repo '$w/b/r{}' \
     'make the failing test pass' >/dev/null 2>&1 || echo fail" >"$w/runs.out"
t1=$(now)
run_ms=$(((t1 - t0) / 1000000))
run_it=$(iterations "$w/b")
run_fails=$(grep -c fail "$w/runs.out" || true)

echo "tasks $N, $C at a time"
echo "serve: ${serve_ms} ms wall, $serve_it iterations, $fails failed," \
    "$((serve_ms * C / serve_it)) ms per iteration"
echo "runs:  ${run_ms} ms wall, $run_it iterations, $run_fails failed," \
    "$((run_ms * C / run_it)) ms per iteration"
echo "runs / serve: $(awk "BEGIN { printf \"%.2f\", $run_ms / $serve_ms }")"
