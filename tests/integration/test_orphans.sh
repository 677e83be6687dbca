#!/bin/sh
# An agent killed outright takes everything its job started with it: a
# skill and the processes the skill started (issue 10: they outlived the
# reviewer, escaped their timeout and raced the restarted reviewer in the
# same workspace), and the `command` provider's program and its children.
# The restarted agent's job finds none of them still running.
. "$(dirname "$0")/lib.sh"

# poll_gone WHAT PIDFILE...: poll until every pid named in the files is
# gone (a zombie counts as gone: it runs nothing, though kill -0 sees it).
poll_gone() {
    what=$1
    shift
    i=0
    for f in "$@"; do
        [ -s "$f" ] || fail "$what: $f was never written"
    done
    while :; do
        left=
        for f in "$@"; do
            p=$(cat "$f")
            if kill -0 "$p" 2>/dev/null &&
                ! grep -q '^State:.*Z' "/proc/$p/status" 2>/dev/null; then
                left="$left $p"
            fi
        done
        [ -z "$left" ] && return 0
        i=$((i + 1))
        if [ $i -gt 1000 ]; then
            ps -o pid,ppid,pgid,stat,args -p "$(echo $left | tr ' ' ,)" >&2
            fail "$what: still running:$left"
        fi
        sleep 0.01
    done
}

# A test skill whose first run starts a grandchild in the background,
# kills its own agent (its parent) and goes on running. Every later run
# first checks that no process of that first run is still alive, then
# runs the tests.
cat >"$T/skill.sh" <<SH
#!/bin/sh
if [ ! -e '$T/killed' ]; then
    : >'$T/killed'
    sleep 4701 &
    echo \$! >'$T/grandchild'
    echo \$\$ >'$T/skill'
    kill -9 \$PPID
    exec sleep 4702
fi
for f in '$T/grandchild' '$T/skill'; do
    p=\$(cat "\$f")
    if kill -0 "\$p" 2>/dev/null; then
        echo "\$f (\$p) still runs" >>'$T/race'
    fi
done
exec make test
SH
copy_demo
demo_config "$TOP/examples/demo/cassette.json" <<YAML
skills:
  build: {command: make, timeout_s: 60}
  test: {command: [sh, '$T/skill.sh'], timeout_s: 60, sandbox: none}
YAML
TANDEM_TIMEOUT=60 run tandem run --repo "$T/demo" "make the failing test pass"
[ -e "$T/killed" ] || fail "the reviewer was never killed"
[ ! -e "$T/race" ] || fail "the restarted reviewer ran its skills while the
killed one's still ran: $(cat "$T/race")"
poll_gone "the killed reviewer's skill" "$T/skill" "$T/grandchild"
expect_rc 0 "approved despite the crash"
expect_in "$T/err" "agent reviewer-1 was killed by signal 9"
# how many: the skill and its grandchild, or one when the grandchild,
# killed with the skill's group, is reaped by the once-a-second zombie
# sweep first (seen under valgrind on a loaded machine); poll_gone above
# proves both are gone either way
expect_in "$T/err" "it left running"
expect_in "$T/err" "approved after 2 iterations · 4 LLM calls"
dir=$(session_dir)
expect_no_leftovers "$dir"
pass "a reviewer killed during a skill takes the skill and its children along"

# The coder's model is a program (the command provider). Its first call
# starts a grandchild, kills the coder and goes on running; the coder's
# later calls check that none of that is still alive, then answer with
# the demo's coder answers. With two coders, the request goes to the
# other one at once: what the dead one left must be gone even so.
mkdir -p "$T/model"
cp "$FIX/command-demo/answer-1" "$T/model/answer-1"
cp "$FIX/command-demo/answer-3" "$T/model/answer-2"
cat >"$T/model/coder.sh" <<'SH'
#!/bin/sh
dir=$(dirname "$0")
cat >/dev/null
if [ ! -e "$dir/killed" ]; then
    : >"$dir/killed"
    sleep 4703 &
    echo $! >"$dir/grandchild"
    echo $$ >"$dir/program"
    kill -9 $PPID
    exec sleep 4704
fi
for f in "$dir/grandchild" "$dir/program"; do
    p=$(cat "$f")
    if kill -0 "$p" 2>/dev/null; then
        echo "$f ($p) still runs" >>"$dir/race"
    fi
done
n=$(cat "$dir/counter" 2>/dev/null || echo 0)
n=$((n + 1))
echo "$n" >"$dir/counter"
cat "$dir/answer-$n"
SH
copy_demo
cat >"$T/demo/agents.yaml" <<YAML
version: 1
agents:
  coder:
    count: 2
    llm: {provider: command, command: [/bin/sh, $T/model/coder.sh]}
  reviewer:
    llm: {provider: replay, cassette: "$TOP/examples/demo/cassette.json"}
    skills: [build, test]
skills:
  build: {command: make, timeout_s: 60}
  test: {command: make test, timeout_s: 60}
YAML
TANDEM_TIMEOUT=60 run tandem run --repo "$T/demo" "make the failing test pass"
[ -e "$T/model/killed" ] || fail "the coder was never killed"
[ ! -e "$T/model/race" ] || fail "the restarted coder ran its model while
the killed one's still ran: $(cat "$T/model/race")"
poll_gone "the killed coder's model program" "$T/model/program" \
    "$T/model/grandchild"
expect_rc 0 "approved despite the crash"
grep -q -E "agent coder-[12] was killed by signal 9" "$T/err" ||
    fail "no coder was killed"
expect_in "$T/out" "+    return (double)sum / (double)count;"
[ "$(cat "$T/model/counter")" = 2 ] ||
    fail "expected 2 answered calls of the program"
dir=$(session_dir)
expect_no_leftovers "$dir"
pass "a coder killed during its model program takes the program along"
