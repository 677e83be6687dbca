#!/bin/sh
# One `tandem run` of the demo in a fresh copy, in one of three audit
# modes, for timing from outside:
#   /usr/bin/time -v bench/demo-run.sh always
#   /usr/bin/time -v bench/demo-run.sh on_trigger
#   /usr/bin/time -v bench/demo-run.sh quorum3
# Prints the run's summary line (LLM calls, tokens, time) on stdout.
# Offline: the answers come from the demo's cassette; the builds and
# tests are real. Needs `make` first.
set -eu
mode=${1:-always}
top=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tandem-bench.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
(cd "$top/examples/demo" && tar cf - --exclude=.tandem .) |
    (mkdir "$tmp/demo" && cd "$tmp/demo" && tar xf -)
cassette=$top/examples/demo/cassette.json
case $mode in
always | on_trigger | quorum3) ;;
*)
    echo "usage: $0 always|on_trigger|quorum3" >&2
    exit 2
    ;;
esac
reviewer_extra=
[ "$mode" = quorum3 ] && reviewer_extra="    count: 3
    quorum: majority"
cat >"$tmp/agents.yaml" <<YAML
gate:
  critique: $([ "$mode" = on_trigger ] && echo on_trigger || echo always)
agents:
  coder:
    llm: {provider: replay, cassette: "$cassette"}
  reviewer:
$reviewer_extra
    llm: {provider: replay, cassette: "$cassette"}
    skills: [build, test]
skills:
  build: {command: make, timeout_s: 60}
  test: {command: make test, timeout_s: 60}
YAML
"$top/bin/tandem" run -q --repo "$tmp/demo" --config "$tmp/agents.yaml" \
    "make the failing test pass" >/dev/null 2>"$tmp/err" || {
    cat "$tmp/err" >&2
    exit 1
}
grep -E '^(approved|rejected|escalated|failed) after' "$tmp/err" || true
