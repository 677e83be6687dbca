# Helpers of the tandem serve tests, sourced after lib.sh: a private
# runtime and state directory, a server in the background (under
# valgrind with TANDEM_MEMCHECK=1), its config, fresh repositories, and
# polls with deadlines.

PY=/usr/bin/python3
SLOW=1 # waits are longer under valgrind
[ "${TANDEM_MEMCHECK:-0}" = 1 ] && SLOW=10
export XDG_RUNTIME_DIR=$T/run XDG_STATE_HOME=$T/state
mkdir -p "$T/run" "$T/state"
chmod 700 "$T/run" "$T/state"
EPFILE=$T/run/tandem/serve.endpoint
CASSETTE=$TOP/examples/demo/cassette.json
SERVE_PID=
SERVE_IN=

# serve_config FILE [BUILD-COMMAND] [ITERATIONS]: the server's
# agents.yaml (gate.max_iterations ITERATIONS, default 3); the build
# skill may be held back on a gate file (this test's, outside the
# workspace: that build runs unsandboxed).
serve_config() {
    cat >"$1" <<YAML
version: 1
gate:
  max_iterations: ${3:-3}
agents:
  coder:
    count: 2
    llm: {provider: replay, cassette: "$CASSETTE"}
  reviewer:
    count: 2
    llm: {provider: replay, cassette: "$CASSETTE"}
    skills: [build, test]
skills:
  build: {command: "${2:-make}", required: true, timeout_s: 120${2:+,
          sandbox: none}}
  test: {command: make test, required: true, timeout_s: 60}
YAML
}

# curve_serve_config FILE ROLE:NAME...: serve_config FILE for a server
# over CURVE on a free loopback tcp port (EP): keys in $K for orch and
# each NAME ($T/NAME.pubkey its public key), $K/authorized listing each
# with its ROLE (client, person).
curve_serve_config() {
    file=$1
    shift
    K=$T/keys
    mkdir -p "$K"
    : >"$K/authorized"
    for rn in orch "$@"; do
        name=${rn#*:}
        tandem keys generate --out "$K" --name "$name" \
            >"$T/$name.pubkey" 2>/dev/null ||
            fail "tandem keys generate $name"
        [ "$rn" = orch ] ||
            echo "${rn%%:*} $(cat "$T/$name.pubkey") $name" >>"$K/authorized"
    done
    port=$($PY -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    EP=tcp://127.0.0.1:$port
    serve_config "$file"
    cat >>"$file" <<YAML
orchestrator:
  curve_key: "$K/orch.key"
  authorized_keys: "$K/authorized"
YAML
}

# repo NAME: a fresh copy of the demo without its own config.
repo() {
    rm -rf "$T/$1"
    mkdir -p "$T/$1"
    (cd "$TOP/examples/demo" && tar cf - --exclude=.tandem \
        --exclude=agents.yaml .) | (cd "$T/$1" && tar xf -)
}

# start_serve ARGS...: a server in the background, up once it wrote its
# endpoint.
start_serve() {
    rm -f "$EPFILE"
    # not through lib.sh's tandem(): $! must be the server itself (its
    # valgrind options are tandem()'s: a forked child is silent until it
    # execs)
    if [ "${TANDEM_MEMCHECK:-0}" = 1 ]; then
        mkdir -p "$T/vg"
        $SERVE_IN valgrind -q --trace-children=yes \
            --trace-children-skip="$VG_SKIP" \
            --child-silent-after-fork=yes \
            --leak-check=full --errors-for-leak-kinds=definite \
            --show-leak-kinds=definite \
            --log-file="$T/vg/%p.log" "$BIN/tandem" serve "$@" \
            >>"$T/serve.out" 2>>"$T/serve.err" &
    else
        # SERVE_IN: a prefix that runs it elsewhere (ip netns exec NS)
        $SERVE_IN "$BIN/tandem" serve "$@" >>"$T/serve.out" 2>>"$T/serve.err" &
    fi
    SERVE_PID=$!
    i=0
    while [ ! -s "$EPFILE" ]; do
        i=$((i + 1))
        kill -0 "$SERVE_PID" 2>/dev/null || fail "tandem serve exited: $(cat "$T/serve.err")"
        [ $i -gt $((1000 * SLOW)) ] && fail "tandem serve did not write $EPFILE"
        sleep 0.01
    done
}

# stop_serve: SIGTERM, and it exits 0.
stop_serve() {
    kill -TERM "$SERVE_PID"
    wait "$SERVE_PID"
    rc=$?
    [ "$rc" = 0 ] || fail "tandem serve exited $rc after SIGTERM: $(tail -5 "$T/serve.err")"
    SERVE_PID=
}

serve_cleanup() {
    s=$?
    if [ -n "$SERVE_PID" ]; then kill -KILL "$SERVE_PID" 2>/dev/null; fi
    (exit $s) # cleanup exits with the status it finds
    cleanup
}
trap serve_cleanup EXIT

# status_says TEXT: poll tandem submit --status until it says TEXT.
status_says() {
    i=0
    until tandem submit --status 2>/dev/null | grep -F -q -- "$1"; do
        i=$((i + 1))
        [ $i -gt $((1000 * SLOW)) ] && fail "the server's status never said '$1'"
        sleep 0.01
    done
}

# start_serve_killed_at_accept CONFIG: a server (--pool 1) that strace
# kills at its first write to its accepted list ($T/state/tandem/
# accepted.jsonl, which a first server started and stopped here makes,
# so strace can follow writes to it): the moment a task is taken in.
start_serve_killed_at_accept() {
    command -v strace >/dev/null 2>&1 || fail "strace is missing (sh tools/install-deps)"
    start_serve --config "$1" --pool 1
    stop_serve
    [ -e "$T/state/tandem/accepted.jsonl" ] ||
        fail "no accepted list at $T/state/tandem/accepted.jsonl"
    # (LeakSanitizer cannot work under ptrace: it stops every process
    # strace follows with a fatal error at its exit)
    SERVE_IN="env ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0
        strace -f -qq -o /dev/null -P $T/state/tandem/accepted.jsonl
        -e trace=write,writev,pwrite64
        -e inject=write,writev,pwrite64:signal=KILL:when=1"
    start_serve --config "$1" --pool 1
    SERVE_IN=
}

# wait_for TEXT FILE SECONDS: poll until FILE holds TEXT.
wait_for() {
    i=0
    until grep -F -q -- "$1" "$2" 2>/dev/null; do
        i=$((i + 1))
        [ $i -gt $(($3 * 100 * SLOW)) ] && fail "timed out waiting for '$1' in $(basename "$2")"
        sleep 0.01
    done
}

# approved DIR: the session in DIR finished approved, complete on disk.
approved() {
    for f in journal.jsonl report.json final.diff attempt-1.diff attempt-2.diff; do
        [ -s "$1/$f" ] || fail "$1 lacks $f"
    done
    expect_in "$1/report.json" '"status": "approved"'
    expect_in "$1/report.json" '"llm_calls": 4'
    expect_in "$1/journal.jsonl" '"type":"finish","status":"approved"'
}

