#!/bin/sh
# The sandboxed skills of one audit enter one running sandbox per shape
# (skills/holder.h) instead of starting bubblewrap each (issue 8). Every
# guarantee of the sandbox is checked from inside a skill run that way;
# two skills share the sandbox's /tmp but not what the first left
# running; network: true and false skills get a holder each, when three
# skills or more need it (fewer start a bwrap each); a reviewer
# killed mid-audit leaves no holder behind; without the enter program,
# skills start a bwrap each, as before.
. "$(dirname "$0")/lib.sh"

DEMO_CASSETTE=$TOP/examples/demo/cassette.json

# a host process no skill may see
sleep 3000.$$ &
HOST_SLEEP=$!
trap 'st=$?; kill $HOST_SLEEP 2>/dev/null; (exit $st); cleanup' EXIT

# config SKILLS: the demo's agents.yaml with these reviewer skills and
# the skills below
config() {
    demo_config "$DEMO_CASSETTE" "$1" <<YAML
skills:
  build: {command: make, timeout_s: 60}
  test: {command: make test, timeout_s: 60}
  inside:
    required: false
    command: |
      grep -E '^(CapInh|CapPrm|CapEff|CapBnd|CapAmb|NoNewPrivs):' /proc/self/status
      if grep -q . /etc/shadow 2>/dev/null; then echo shadow-readable; else echo shadow-covered; fi
      for f in /proc/[0-9]*/cmdline; do tr '\\0' ' ' <\$f; echo; done >/tmp/cmdlines
      grep -q '[3]000\\.$$' /tmp/cmdlines && echo sees-host
      grep -q 'tandem-[r]eviewer' /tmp/cmdlines && echo sees-reviewer
      grep -q '^/usr/bin/[c]at \$\|^/bin/[c]at \$' /tmp/cmdlines && echo entered
      echo "interfaces: \$(sed -n 's/^ *\\([^:]*\\):.*/\\1/p' /proc/net/dev | sort | tr '\\n' ' ')"
      unshare -m true 2>/dev/null && echo unshare-allowed || echo unshare-refused
      mount -t tmpfs none /tmp 2>/dev/null && echo mount-allowed || echo mount-refused
      true
  first:
    required: false
    command: "sleep 4000.$$ & echo shared >/tmp/shared.$$; echo started"
  second:
    required: false
    after: [first]
    command: |
      cat /tmp/shared.$$ 2>/dev/null || echo not-shared
      if grep -q '[4]000\\.$$' /proc/[0-9]*/cmdline 2>/dev/null; then echo stray-alive; else echo stray-gone; fi
  nets:
    required: false
    network: true
    command: |
      grep -q '^/usr/bin/[c]at \$\|^/bin/[c]at \$' /tmp/cmdlines 2>/dev/null && echo same-sandbox-as-inside
      echo "interfaces: \$(sed -n 's/^ *\\([^:]*\\):.*/\\1/p' /proc/net/dev | sort | tr '\\n' ' ')"
      for f in /proc/[0-9]*/cmdline; do tr '\\0' ' ' <\$f; echo; done | grep -q '^/usr/bin/[c]at \$\|^/bin/[c]at \$' && echo entered
      true
  nets2:
    required: false
    network: true
    command: "true"
  nets3:
    required: false
    network: true
    command: "true"
  hang:
    required: false
    command: [sleep, "5000.$$"]
    timeout_s: 60
YAML
}

# ---- the guarantees, from inside an entered skill -----------------------
copy_demo
config "build, test, inside, first, second, nets, nets2, nets3"
TANDEM_TIMEOUT=120 run tandem run --repo "$T/demo" "make the failing test pass"
expect_rc 0 "the demo approves with the entered skills beside it"
dir=$(session_dir)
out=$(skill_output "$dir" inside)
for want in "CapInh:	0000000000000000" "CapPrm:	0000000000000000" \
    "CapEff:	0000000000000000" "CapBnd:	0000000000000000" \
    "CapAmb:	0000000000000000" "NoNewPrivs:	1" shadow-covered \
    "interfaces: lo " unshare-refused mount-refused entered; do
    case $out in *"$want"*) ;; *) fail "inside: lacks '$want': $out" ;; esac
done
case $out in *sees-host* | *sees-reviewer*) fail "inside: sees the host: $out" ;; esac
pass "an entered skill has no capability, no new privileges, no host process, no network, no mount"

out=$(skill_output "$dir" nets)
case $out in *entered*) ;; *) fail "nets: not entered: $out" ;; esac
case $out in *same-sandbox-as-inside*) fail "nets shares the network:false sandbox: $out" ;; esac
host_ifs=$(sed -n 's/^ *\([^:]*\):.*/\1/p' /proc/net/dev | sort | tr '\n' ' ')
case $out in *"interfaces: $host_ifs"*) ;; *) fail "nets: not the host's network ($host_ifs): $out" ;; esac
pass "a network: true skill enters a sandbox of its own shape, with the host's network"

[ "$(skill_output "$dir" second | head -n 1)" = shared ] ||
    fail "second: $(skill_output "$dir" second)"
if grep -q "skills. process limits" "$dir/logs/reviewer-1.log"; then
    echo "# no pids cgroup here: a stray lives until the audit's end"
else
    case $(skill_output "$dir" second) in *stray-gone*) ;;
    *) fail "second: the first skill's stray survived: $(skill_output "$dir" second)" ;;
    esac
fi
pgrep -f "sleep 4000\.$$" >/dev/null && fail "a skill's stray outlived the audit"
expect_no_leftovers "$dir"
pass "two skills of an audit share its sandbox's /tmp, not the first one's strays"

# ---- a shape fewer than three skills need gets no holder -----------------
# (a holder is a bwrap start, a handshake and processes held for the
# audit: for two skills no cheaper than a bwrap each)
copy_demo
config "build, test, inside, nets, nets2"
TANDEM_TIMEOUT=120 run tandem run --repo "$T/demo" "make the failing test pass"
expect_rc 0 "the demo approves with one network: true skill"
dir=$(session_dir)
case $(skill_output "$dir" inside) in *entered*) ;;
*) fail "inside: not entered: $(skill_output "$dir" inside)" ;;
esac
case $(skill_output "$dir" nets) in
*entered*) fail "nets, one of two of its shape, was entered: $(skill_output "$dir" nets)" ;;
*interfaces:*) ;;
*) fail "nets did not run: $(skill_output "$dir" nets)" ;;
esac
expect_no_leftovers "$dir"
pass "two skills of a shape start a sandbox each; three enter theirs"

# ---- the reviewer killed mid-audit leaves no holder ---------------------
copy_demo
config "build, test, hang, nets"
TANDEM_TIMEOUT=120 tandem run --repo "$T/demo" "make the failing test pass" \
    >"$T/out" 2>"$T/err" &
TANDEM_PID=$!
i=0
while ! sleeper=$(pgrep -f "^/[a-z/]*sleep 5000\.$$" | head -n 1) || [ -z "$sleeper" ]; do
    i=$((i + 1))
    [ $i -gt 6000 ] && fail "the hanging skill never started"
    sleep 0.01
done
# sleep's parent is the enter program, whose parent is the reviewer
enter=$(ps -o ppid= -p "$sleeper" | tr -d ' ')
reviewer=$(ps -o ppid= -p "$enter" | tr -d ' ')
[ "$(ps -o comm= -p "$enter")" = tandem-sandbox- ] ||
    fail "the skill was not entered: its parent is $(ps -o args= -p "$enter")"
holders=$(pgrep -P "$reviewer" bwrap | tr '\n' ' ')
[ -n "$holders" ] || fail "the reviewer ($reviewer) has no holder"
kill -9 "$reviewer"
i=0
while :; do
    left=
    for p in $holders $sleeper $enter; do
        if kill -0 "$p" 2>/dev/null &&
            ! grep -q '^State:.*Z' "/proc/$p/status" 2>/dev/null; then
            left="$left $p"
        fi
    done
    [ -z "$left" ] && break
    i=$((i + 1))
    [ $i -gt 1000 ] && fail "still running after the reviewer died:$left"
    sleep 0.01
done
kill "$TANDEM_PID" 2>/dev/null
wait "$TANDEM_PID" 2>/dev/null
pkill -f "^/[a-z/]*sleep 5000\.$$" 2>/dev/null
pass "a reviewer killed mid-audit leaves no sandbox and no skill behind"

# ---- no enter program: a bwrap each, as before ---------------------------
copy_demo
config "build, test, inside"
TANDEM_SANDBOX_ENTER=$T/absent TANDEM_TIMEOUT=120 run tandem run \
    --repo "$T/demo" "make the failing test pass"
expect_rc 0 "the demo approves without the enter program"
dir=$(session_dir)
out=$(skill_output "$dir" inside)
case $out in *entered*) fail "inside: entered without the program: $out" ;; esac
for want in "CapEff:	0000000000000000" "NoNewPrivs:	1" "interfaces: lo "; do
    case $out in *"$want"*) ;; *) fail "inside (fallback): lacks '$want': $out" ;; esac
done
expect_in "$dir/logs/reviewer-1.log" "skills start a sandbox each, not one per audit"
expect_no_leftovers "$dir"
pass "without tandem-sandbox-enter, each skill starts its own sandbox"
