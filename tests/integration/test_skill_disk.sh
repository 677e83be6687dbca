#!/bin/sh
# A skill's writes in its workspace are bounded as a whole
# (limits.disk_mb), not only file by file (limits.file_mb): before, a
# skill writing many files of a MiB filled the disk the workspace is on.
# One that writes past its bound and keeps going is stopped; one that
# writes past it and ends is failed; one under it passes; each says the
# limit and its key.
. "$(dirname "$0")/lib.sh"

DEMO_CASSETTE=$TOP/examples/demo/cassette.json
copy_demo
demo_config "$DEMO_CASSETTE" "build, test, keeps, ends, under" <<YAML
skills:
  build: {command: make, timeout_s: 60}
  test: {command: make test, timeout_s: 60}
  keeps:
    required: false
    timeout_s: 60
    limits: {disk_mb: 2}
    command: "mkdir -p out && i=0; while [ \$i -lt 64 ]; do head -c 1048576 /dev/zero >out/k\$i; i=\$((i+1)); done; sleep 50; echo not-stopped"
  ends:
    required: false
    limits: {disk_mb: 2}
    command: "mkdir -p out && for i in 1 2 3 4; do head -c 1048576 /dev/zero >out/e\$i; done; echo wrote"
  under:
    required: false
    limits: {disk_mb: 2}
    command: "head -c 524288 /dev/zero >small && echo wrote-small"
YAML
TANDEM_TIMEOUT=120 run tandem run --repo "$T/demo" "make the failing test pass"
expect_rc 0 "the demo approves beside the skills that write too much"
dir=$(session_dir)
words="killed: wrote more than 2 MiB in the workspace (limits.disk_mb)"
for s in keeps ends; do
    [ "$(baseline_field "$dir" $s status)" = fail ] ||
        fail "$s: not failed: $(baseline_field "$dir" $s status)"
    [ "$(baseline_field "$dir" $s ended)" = "$words" ] ||
        fail "$s: ended '$(baseline_field "$dir" $s ended)'"
    case $(skill_output "$dir" $s) in *"[tandem: $s $words]"*) ;;
    *) fail "$s: its output does not say so: $(skill_output "$dir" $s)" ;;
    esac
done
case $(skill_output "$dir" keeps) in *not-stopped*) fail "keeps: ran to its end" ;; esac
ms=$(baseline_field "$dir" keeps duration_ms)
[ "$ms" -lt 30000 ] || fail "keeps: stopped only after $ms ms"
[ "$(baseline_field "$dir" under status)" = pass ] ||
    fail "under: $(baseline_field "$dir" under status): $(skill_output "$dir" under)"
pass "a skill writing more than limits.disk_mb in its workspace is stopped, or failed, and told why"
