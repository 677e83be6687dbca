#!/bin/sh
# Each sandboxed skill gets a sandbox of its own made from the reviewer's
# running one (skills/holder.h, bin/tandem-sandbox-enter) instead of a
# bubblewrap start (issue 8). Every guarantee of the sandbox is checked
# from inside a skill run that way; skills share nothing through it (not
# /tmp, not a process, not another workspace under the runtime
# directory); what a skill leaves running ends with it; network: true
# keeps the host's network; a holder that died is started again; a
# reviewer killed mid-audit leaves nothing behind; without the enter
# program, skills start a bwrap each, as before; a command cannot pass
# for the enter program failing, and a real failure falls back. Either
# way a skill's tmpfs are bounded (their pages are the host's memory,
# which no rlimit counts) and it cannot make a user namespace (in one it
# could mount a tmpfs of its own); as root, it reads no entry of /etc
# that others may not read.
. "$(dirname "$0")/lib.sh"

DEMO_CASSETTE=$TOP/examples/demo/cassette.json
RUNTIME=$TMPDIR/tandem-$(id -u)

# a host process no skill may see, and a file of the runtime directory
# (as another task's workspace would be) no skill may see either
sleep 3000.$$ &
HOST_SLEEP=$!
# as root, a file of /etc only root may read and a directory only root
# may enter (the sandbox runs as root too: only a cover keeps them
# unread); removed at the end
ETC_FILE=/etc/tandem-test-secret.$$
ETC_DIR=/etc/tandem-test-dir.$$
trap 'st=$?; kill $HOST_SLEEP 2>/dev/null; [ "$(id -u)" = 0 ] && rm -rf "$ETC_FILE" "$ETC_DIR"; (exit $st); cleanup' EXIT
mkdir -m 700 "$RUNTIME" && mkdir "$RUNTIME/other-task.$$"
echo secret >"$RUNTIME/other-task.$$/file"
if [ "$(id -u)" = 0 ]; then
    (umask 077 && echo etc-secret >"$ETC_FILE" && mkdir "$ETC_DIR" &&
        echo etc-inner >"$ETC_DIR/inner" && chmod 644 "$ETC_DIR/inner") ||
        fail "cannot make $ETC_FILE and $ETC_DIR"
fi

parent() { ps -o ppid= -p "$1" | tr -d ' '; }

# pid 1 of the skill's pid namespace is the enter program's init
ENTERED="tr '\\\\0' ' ' </proc/1/cmdline | grep -q '[t]andem-sandbox-enter' && echo entered"

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
      grep -q '^/usr/bin/[c]at \$\|^/bin/[c]at \$' /tmp/cmdlines && echo sees-holder
      $ENTERED
      echo "processes: \$(ls -d /proc/[0-9]* | wc -l)"
      echo "interfaces: \$(sed -n 's/^ *\\([^:]*\\):.*/\\1/p' /proc/net/dev | sort | tr '\\n' ' ')"
      python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(); socket.create_connection(s.getsockname(), 5); print("loopback-up")'
      unshare -m true 2>/dev/null && echo unshare-allowed || echo unshare-refused
      mount -t tmpfs none /tmp 2>/dev/null && echo mount-allowed || echo mount-refused
      cat "$RUNTIME/other-task.$$/file" 2>/dev/null && echo sees-other-task
      echo "beside the workspace: \$(ls -A ..)"
      touch /rootfile.$$ 2>/dev/null && echo root-writable || echo root-read-only
      touch /dev/devfile.$$ 2>/dev/null && echo dev-writable || echo dev-read-only
      env | grep -q TANDEM_SANDBOX_NONCE && echo sees-nonce
      tr '\\0' '\\n' </proc/1/environ 2>/dev/null | grep -q TANDEM_SANDBOX_NONCE && echo sees-init-nonce
      true
  bounds:
    required: false
    limits: {file_mb: 0}
    command: |
      $ENTERED
      for d in /tmp /var/tmp /dev/shm "\$HOME"; do
        size=\$((\$(stat -f -c '%b * %S' "\$d")))
        if [ "\$size" -le 1073741824 ]; then echo "bounded \$d"; else echo "unbounded \$d: \$size"; fi
      done
      python3 -c '
      import errno, os
      f = os.open("/tmp/big", os.O_CREAT | os.O_WRONLY)
      try:
          os.posix_fallocate(f, 0, (1 << 30) + (1 << 20))
          print("tmp-overfilled")
      except OSError as e:
          print("tmp-full" if e.errno == errno.ENOSPC else "tmp-error %s" % e)
      os.unlink("/tmp/big")'
      head -c 1048576 /dev/zero >/tmp/small && echo tmp-writable
      unshare -U true 2>/dev/null && echo userns-allowed || echo userns-refused
      true
  small:
    required: false
    limits: {memory_mb: 64}
    command: |
      $ENTERED
      echo "tmp bytes \$((\$(stat -f -c '%b * %S' /tmp)))"
      python3 -c '
      import ctypes
      libc = ctypes.CDLL(None, use_errno=True)
      ids = [libc.shmget(0, 48 << 20, 0o1600) for _ in range(2)]
      print("shm-two-of-48-MiB" if min(ids) >= 0 else "shm-refused")'
  etc:
    required: false
    command: |
      $ENTERED
      if grep -q etc-secret "$ETC_FILE" 2>/dev/null; then echo etc-file-read; else echo etc-file-covered; fi
      if grep -q etc-inner "$ETC_DIR/inner" 2>/dev/null; then echo etc-dir-read; else echo etc-dir-covered; fi
      grep -q . /etc/passwd && echo etc-passwd-read
      true
  first:
    required: false
    command: "sleep 4000.$$ & echo shared >/tmp/shared.$$; echo started; echo userns \$(readlink /proc/self/ns/user)"
  second:
    required: false
    after: [first]
    command: |
      cat /tmp/shared.$$ 2>/dev/null || echo not-shared
      if grep -q '[4]000\\.$$' /proc/[0-9]*/cmdline 2>/dev/null; then echo stray-alive; else echo stray-gone; fi
      echo userns \$(readlink /proc/self/ns/user)
  faker:
    required: false
    command: "echo \\"tandem-sandbox-enter: cannot join the sandbox's namespaces: faked\\"; exit 125"
  bwrap_faker:
    required: false
    command: "echo 'bwrap: pretend'; exit 1"
  after_faker:
    required: false
    after: [faker]
    command: "$ENTERED; true"
  leaver:
    required: false
    timeout_s: 1
    command: [setsid, sh, -c, "trap 'echo got-term; exit 3' TERM; echo waiting; sleep 30.$$ & wait"]
  nets:
    required: false
    network: true
    command: |
      $ENTERED
      echo "interfaces: \$(sed -n 's/^ *\\([^:]*\\):.*/\\1/p' /proc/net/dev | sort | tr '\\n' ' ')"
      true
  gate:
    required: false
    timeout_s: 60
    command: "i=0; while [ ! -e go ] && [ \$i -lt 6000 ]; do sleep 0.01; i=\$((i+1)); done; rm -f go; echo gate-open"
  later:
    required: false
    after: [gate]
    command: "$ENTERED; true"
  hang:
    required: false
    command: [sleep, "5000.$$"]
    timeout_s: 60
YAML
}

# ---- the guarantees, from inside a skill -------------------------------
copy_demo
config "build, test, inside, bounds, small, etc, first, second, nets, faker, bwrap_faker, after_faker, leaver"
TANDEM_TIMEOUT=120 run tandem run --repo "$T/demo" "make the failing test pass"
expect_rc 0 "the demo approves with the entered skills beside it"
dir=$(session_dir)
out=$(skill_output "$dir" inside)
for want in "CapInh:	0000000000000000" "CapPrm:	0000000000000000" \
    "CapEff:	0000000000000000" "CapBnd:	0000000000000000" \
    "CapAmb:	0000000000000000" "NoNewPrivs:	1" shadow-covered \
    "interfaces: lo " loopback-up unshare-refused mount-refused entered \
    "beside the workspace: workspace" root-read-only dev-read-only; do
    case $out in *"$want"*) ;; *) fail "inside: lacks '$want': $out" ;; esac
done
case $out in *sees-host* | *sees-reviewer* | *sees-holder* | *sees-other-task* | *nonce*)
    fail "inside: sees what is not its own: $out" ;;
esac
# its init, its shell, and the subshell, ls and wc counting them
n=$(echo "$out" | sed -n 's/^processes: //p')
[ -n "$n" ] && [ "$n" -le 5 ] || fail "inside: sees $n processes: $out"
pass "a skill has no capability, no new privileges, no other process, no other workspace, its own loopback only"

# expect_bounded OUT: a bounds skill's output says 1 GiB at most in each
# tmpfs, /tmp full past that but writable, no user namespace
expect_bounded() {
    for want in "bounded /tmp" "bounded /var/tmp" "bounded /dev/shm" \
        tmp-full tmp-writable userns-refused; do
        case $1 in *"$want"*) ;; *) fail "bounds: lacks '$want': $1" ;; esac
    done
    case $1 in *unbounded*) fail "bounds: a tmpfs past 1 GiB: $1" ;; esac
}
out=$(skill_output "$dir" bounds)
case $out in *entered*) ;; *) fail "bounds: not entered: $out" ;; esac
expect_bounded "$out"
# with limits.memory_mb under 1 GiB, that is each tmpfs's bound
out=$(skill_output "$dir" small)
b=$(echo "$out" | sed -n 's/^tmp bytes //p')
[ -n "$b" ] && [ "$b" -le $((64 << 20)) ] || fail "small: /tmp holds $b bytes, past limits.memory_mb 64: $out"
# and so is its System V shared memory, which no rlimit counts: two
# segments of 48 MiB are more than it may hold
case $out in *shm-refused*) ;; *) fail "small: 96 MiB of shared memory made: $out" ;; esac
pass "an entered skill's tmpfs hold 1 GiB each at most, or its memory limit, and it cannot make a user namespace"

# expect_etc_covered OUT: an etc skill's output, as root: neither the
# root-only file nor the root-only directory's file read, /etc still there
expect_etc_covered() {
    if [ "$(id -u)" != 0 ]; then
        echo "skip - /etc's root-only entries: the test makes them as root only (uid $(id -u))"
        return
    fi
    for want in etc-file-covered etc-dir-covered etc-passwd-read; do
        case $1 in *"$want"*) ;; *) fail "etc: lacks '$want': $1" ;; esac
    done
}
out=$(skill_output "$dir" etc)
case $out in *entered*) ;; *) fail "etc: not entered: $out" ;; esac
expect_etc_covered "$out"
pass "an entered skill run as root reads no entry of /etc only root may read"

# a command printing the enter program's words is not taken for it (it
# would run again, in a bwrap, and stop the holder): only the program
# knows the nonce its own lines carry
[ "$(baseline_field "$dir" faker status)" = fail ] &&
    [ "$(baseline_field "$dir" faker exit_code)" = 125 ] ||
    fail "faker: not its own failure: $(baseline_field "$dir" faker status) $(baseline_field "$dir" faker exit_code)"
case $(skill_output "$dir" after_faker) in *entered*) ;;
*) fail "after_faker: not entered: $(skill_output "$dir" after_faker)" ;;
esac
expect_not_in "$dir/logs/reviewer-1.log" "in a sandbox of its own"
expect_not_in "$dir/logs/reviewer-1.log" "starting another"
# nor for bwrap's own failure, which only a skill in a bwrap of its own
# can have (a review found this one read as an error)
[ "$(baseline_field "$dir" bwrap_faker status)" = fail ] &&
    [ "$(baseline_field "$dir" bwrap_faker exit_code)" = 1 ] ||
    fail "bwrap_faker: not its own failure: $(baseline_field "$dir" bwrap_faker status)"
pass "a command cannot pass for the enter program or bwrap failing"

# a command out of the process group the timeout signals still gets its
# TERM: the enter program passes it to the init, the init to the command
out=$(skill_output "$dir" leaver)
case $out in *waiting*got-term*) ;; *) fail "leaver: no TERM reached it: $out" ;; esac
pass "a TERM to the enter program reaches a command that left the group"

out=$(skill_output "$dir" nets)
case $out in *entered*) ;; *) fail "nets: not entered: $out" ;; esac
host_ifs=$(sed -n 's/^ *\([^:]*\):.*/\1/p' /proc/net/dev | sort | tr '\n' ' ')
case $out in *"interfaces: $host_ifs"*) ;; *) fail "nets: not the host's network ($host_ifs): $out" ;; esac
pass "a network: true skill keeps the host's network"

out=$(skill_output "$dir" second)
case $out in *not-shared*stray-gone*) ;;
*) fail "second: sees what the first left: $out" ;;
esac
pgrep -f "sleep 4000\.$$" >/dev/null && fail "a skill's stray outlived it"
# a user namespace each: no user keyring shared (the holder's root and
# /dev are read-only to both, above)
u1=$(skill_output "$dir" first | sed -n 's/^userns //p')
u2=$(skill_output "$dir" second | sed -n 's/^userns //p')
[ -n "$u1" ] && [ "$u1" != "$u2" ] || fail "first and second share a user namespace: '$u1' '$u2'"
expect_no_leftovers "$dir"
pass "a skill's /tmp and user namespace are its own, and what it leaves running ends with it"

# ---- a holder that died is started again ------------------------------
copy_demo
config "build, test, gate, later"
TANDEM_TIMEOUT=120 tandem run --repo "$T/demo" "make the failing test pass" \
    >"$T/out" 2>"$T/err" &
TANDEM_PID=$!
# the gate skill waits in every audit until the test lets it go; in the
# first, the holder is killed while it waits
holder= last= i=0
while kill -0 "$TANDEM_PID" 2>/dev/null; do
    i=$((i + 1))
    [ $i -gt 12000 ] && fail "the run did not end"
    waiter=$(pgrep -f '^/bin/bash -o pipefail -c i=0; while' | head -n 1)
    if [ -n "$waiter" ] && [ "$waiter" != "$last" ] &&
        ws=$(readlink "/proc/$waiter/cwd"); then
        if [ -z "$holder" ]; then
            # the waiting shell's parents: its init, the enter program,
            # the reviewer
            enter=$(parent "$(parent "$waiter")")
            [ "$(ps -o comm= -p "$enter")" = tandem-sandbox- ] ||
                fail "the gate was not entered: $(ps -o args= -p "$enter")"
            reviewer=$(parent "$enter")
            holder=$(pgrep -P "$reviewer" -f '^[^ ]*bwrap .*--info-fd')
            [ -n "$holder" ] || fail "the reviewer ($reviewer) runs no holder"
            kill -9 "$holder"
        fi
        touch "$ws/go"
        last=$waiter
    fi
    sleep 0.01
done
wait "$TANDEM_PID"
rc=$?
[ "$rc" -eq 0 ] || fail "the run with a holder killed ended $rc: $(tail -n 5 "$T/err")"
dir=$(session_dir)
case $(skill_output "$dir" later) in *entered*) ;;
*) fail "later: not entered after the holder died: $(skill_output "$dir" later)" ;;
esac
expect_in "$dir/logs/reviewer-1.log" "the reviewer's sandbox (bwrap $holder) ended; starting another"
pass "a holder that died is replaced, and skills keep their sandbox"

# ---- the reviewer killed mid-audit leaves nothing behind --------------
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
# sleep's parent is the init of its namespace, a child of the enter
# program, whose parent is the reviewer
init=$(parent "$sleeper")
enter=$(parent "$init")
reviewer=$(parent "$enter")
[ "$(ps -o comm= -p "$enter")" = tandem-sandbox- ] ||
    fail "the skill was not entered: its parent is $(ps -o args= -p "$enter")"
holders=$(pgrep -P "$reviewer" -f '^[^ ]*bwrap .*--info-fd' | tr '\n' ' ')
[ -n "$holders" ] || fail "the reviewer ($reviewer) has no holder"
kill -9 "$reviewer"
i=0
while :; do
    left=
    for p in $holders $sleeper $init $enter; do
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
config "build, test, inside, bounds, etc"
TANDEM_SANDBOX_ENTER=$T/absent TANDEM_TIMEOUT=120 run tandem run \
    --repo "$T/demo" "make the failing test pass"
expect_rc 0 "the demo approves without the enter program"
dir=$(session_dir)
out=$(skill_output "$dir" inside)
case $out in *entered*) fail "inside: entered without the program: $out" ;; esac
for want in "CapEff:	0000000000000000" "NoNewPrivs:	1" "interfaces: lo " \
    "beside the workspace: workspace"; do
    case $out in *"$want"*) ;; *) fail "inside (fallback): lacks '$want': $out" ;; esac
done
expect_in "$dir/logs/reviewer-1.log" "skills start a sandbox each, not one per reviewer"
expect_bounded "$(skill_output "$dir" bounds)"
expect_etc_covered "$(skill_output "$dir" etc)"
expect_no_leftovers "$dir"
pass "without tandem-sandbox-enter, each skill starts its own sandbox, its tmpfs bounded, no user namespace, /etc's root-only entries covered"

# ---- an entry that fails: that skill in a bwrap, then no more holders ----
# the enter program's own failure, nonce and all, as one that cannot
# join the holder tells it
cat >"$T/enter-fails" <<'SH'
#!/bin/sh
echo "tandem-sandbox-enter: $TANDEM_SANDBOX_NONCE: cannot join the sandbox's namespaces: refused by the test"
exit 125
SH
chmod +x "$T/enter-fails"
copy_demo
config "build, test, inside"
TANDEM_SANDBOX_ENTER=$T/enter-fails TANDEM_TIMEOUT=120 run tandem run \
    --repo "$T/demo" "make the failing test pass"
expect_rc 0 "the demo approves when no entry works"
dir=$(session_dir)
out=$(skill_output "$dir" inside)
case $out in *entered*) fail "inside: entered a holder that refuses: $out" ;; esac
case $out in *"NoNewPrivs:	1"*) ;; *) fail "inside: not sandboxed: $out" ;; esac
log=$dir/logs/reviewer-1.log
expect_in "$log" "tandem-sandbox-enter: cannot join the sandbox's namespaces: refused by the test; it runs in a sandbox of its own"
expect_in "$log" "skills start a sandbox each, not one per reviewer: tandem-sandbox-enter: cannot join"
grep -E 'tandem-sandbox-enter: [0-9a-f]{32}' "$log" "$dir/journal.jsonl" &&
    fail "the nonce reached the log or the journal"
pass "an entry that fails runs its skill in a bwrap; two holders so, and skills start a bwrap each"

# ---- the enter program cannot run the command: an error, told cleanly ----
# (the real enter program for every skill but the one running true)
cat >"$T/enter-cannot-run" <<SH
#!/bin/sh
for a; do last=\$a; done
if [ "\$last" = /usr/bin/true ]; then
    echo "tandem-sandbox-enter: \$TANDEM_SANDBOX_NONCE: cannot run '/usr/bin/true': Permission denied"
    exit 126
fi
exec "$BIN/tandem-sandbox-enter" "\$@"
SH
chmod +x "$T/enter-cannot-run"
copy_demo
config "build, test, cantrun"
cat >>"$T/demo/agents.yaml" <<'YAML'
  cantrun: {required: false, command: "true"}
YAML
TANDEM_SANDBOX_ENTER=$T/enter-cannot-run TANDEM_TIMEOUT=120 run tandem run \
    --repo "$T/demo" "make the failing test pass"
expect_rc 0 "the demo approves beside a skill that cannot run"
dir=$(session_dir)
[ "$(baseline_field "$dir" cantrun status)" = error ] ||
    fail "cantrun: not an error: $(baseline_field "$dir" cantrun status)"
# the line alone, the nonce taken out, nothing of it left behind
out=$(baseline_field "$dir" cantrun output)
first=$(printf '%s\n' "$out" | head -n 1)
[ "$first" = "tandem-sandbox-enter: cannot run '/usr/bin/true': Permission denied" ] ||
    fail "cantrun: first line: $first"
[ "$(printf '%s\n' "$out" | wc -l)" -eq 2 ] &&
    printf '%s\n' "$out" | tail -n 1 | grep -q '^\[tandem: cantrun ' ||
    fail "cantrun: more than its line and tandem's: $(printf '%s' "$out" | od -c | head -20)"
pass "the enter program's failure to run a command is an error, its line shown without the nonce"
