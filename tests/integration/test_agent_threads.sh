#!/bin/sh
# An agent process that serves several requests at once (--threads N,
# agents.*.threads for the agents tandem serve starts): one reviewer
# process runs four sessions' checks at the same time; killed outright
# with four requests in hand, all four are handed out again and every
# task is approved; agents.reviewer.skills_at_once bounds the skills
# its requests run at once; its command line refuses a bad count.
. "$(dirname "$0")/lib.sh"

. "$(dirname "$0")/serve_lib.sh"

# serve_config FILE SKILLS_AT_ONCE BUILD: four workers of each agent;
# every session runs its own baseline (the four repositories hold the
# same tree); BUILD outside the workspace, so it runs unsandboxed
serve_config() {
    cat >"$1" <<YAML
version: 1
gate:
  baseline_reuse_s: 0
agents:
  coder:
    threads: 4
    llm: {provider: replay, cassette: "$CASSETTE"}
  reviewer:
    threads: 4
    skills_at_once: $2
    llm: {provider: replay, cassette: "$CASSETTE"}
    skills: [build, test]
skills:
  build: {command: ["$3"], required: true, sandbox: none, timeout_s: 120}
  test: {command: make test, required: true, timeout_s: 60}
YAML
}

# the build of every audit marks that it started, then waits for the gate
cat >"$T/gated-build" <<SH
#!/bin/sh
mktemp "$T/started.XXXXXX" >/dev/null
while [ ! -e "$T/gate" ]; do sleep 0.02; done
exec make
SH
chmod +x "$T/gated-build"
serve_config "$T/serve.yaml" 4 "$T/gated-build"
for r in a b c d; do repo "$r"; done

# started N: poll until N builds have started and wait together
started() {
    i=0
    until [ "$(ls "$T" | grep -c '^started\.')" -ge "$1" ]; do
        i=$((i + 1))
        [ $i -gt $((2000 * SLOW)) ] && fail "only $(ls "$T" | grep -c '^started\.') of $1 builds started at once"
        sleep 0.01
    done
}

start_serve --config "$T/serve.yaml" --max-sessions 4 --pool 4
reviewers() { pgrep -P "$SERVE_PID" -f bin/tandem-reviewer | wc -l; }
coders() { pgrep -P "$SERVE_PID" -f bin/tandem-coder | wc -l; }
logs=$T/state/tandem/logs
for w in 1 2 3 4; do
    wait_for "as reviewer-1.$w (service reviewer)" "$logs/reviewer-1.log" 10
    wait_for "as coder-1.$w (service coder)" "$logs/coder-1.log" 10
done
[ "$(reviewers)" = 1 ] || fail "expected one reviewer process, found $(reviewers)"
[ "$(coders)" = 1 ] || fail "expected one coder process, found $(coders)"
[ ! -e "$logs/reviewer-2.log" ] || fail "a second reviewer process was started"
pass "--pool 4 with threads 4: one coder and one reviewer process, four workers each"

for r in a b c d; do
    tandem submit --detach --repo "$T/$r" "make the failing test pass" \
        >"$T/id.$r" 2>"$T/err.$r" || fail "submit to $r: $(cat "$T/err.$r")"
done
started 4
[ "$(reviewers)" = 1 ] || fail "the four builds did not all run in one reviewer"
pass "one reviewer process runs four sessions' builds at once"

# killed with four requests in hand: each is handed out again
old=$(pgrep -P "$SERVE_PID" -f bin/tandem-reviewer)
rm -f "$T"/started.*
kill -KILL "$old"
started 4
new=$(pgrep -P "$SERVE_PID" -f bin/tandem-reviewer)
[ -n "$new" ] && [ "$new" != "$old" ] || fail "the reviewer was not restarted"
touch "$T/gate"
for r in a b c d; do
    id=$(cat "$T/id.$r")
    run tandem submit --attach "$id"
    expect_rc 0 "task on $r after the reviewer was killed"
    approved "$T/$r/.tandem/sessions/$id"
done
pass "the reviewer killed with four requests: restarted, all four approved"

stop_serve
pass "SIGTERM stops the server and its threaded agents"

# skills_at_once 2: each build takes the first free mark run.1 .. run.3
# and holds it until a third build takes run.3 or 0.4 s pass; a third
# build at once would make run.3 (the limit stops it: it waits its turn)
rm -rf "$T/state/tandem/logs" "$T"/started.*
cat >"$T/bound-build" <<SH
#!/bin/sh
for s in 1 2 3; do mkdir "$T/run.\$s" 2>/dev/null && break; done
[ "\$s" = 3 ] && touch "$T/three"
[ "\$s" = 2 ] && touch "$T/two"
i=0
while [ \$i -lt 20 ] && [ ! -d "$T/run.3" ]; do sleep 0.02; i=\$((i + 1)); done
rmdir "$T/run.\$s"
exec make
SH
chmod +x "$T/bound-build"
serve_config "$T/bound.yaml" 2 "$T/bound-build"
for r in a b c d; do rm -rf "$T/$r"; repo "$r"; done
start_serve --config "$T/bound.yaml" --max-sessions 4 --pool 4
for r in a b c d; do
    tandem submit --detach --repo "$T/$r" "make the failing test pass" \
        >"$T/id.$r" 2>"$T/err.$r" || fail "submit to $r: $(cat "$T/err.$r")"
done
for r in a b c d; do
    run tandem submit --attach "$(cat "$T/id.$r")"
    expect_rc 0 "task on $r with two skills at once"
    approved "$T/$r/.tandem/sessions/$(cat "$T/id.$r")"
done
[ -e "$T/two" ] || fail "two builds never ran at once"
[ ! -e "$T/three" ] || fail "three builds ran at once with skills_at_once: 2"
stop_serve
pass "skills_at_once 2: two builds at once, never three, all four approved"

run "$BIN/tandem-coder" --connect ipc://x --threads 0
expect_rc 2 "--threads 0"
expect_in "$T/err" "--threads must be an integer 1..64"
run "$BIN/tandem-reviewer" --connect ipc://x --threads 65
expect_rc 2 "--threads 65"
run "$BIN/tandem-coder" --help
expect_in "$T/out" "--threads N"
pass "--threads out of range is a usage error; --help names it"
