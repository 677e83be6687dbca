#!/bin/sh
# Two hosts (issue 9): tandem serve in one network namespace, its coder
# and reviewer and a client in another, joined by a veth pair, over
# tcp:// with CURVE. The task is approved; an agent with an unknown key
# is refused; a client holding an agent's key cannot submit. Where the
# machine does not allow network namespaces (not root, no ip), the same
# runs over loopback, and the test says so (TANDEM_TEST_LOOPBACK=1
# forces that).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/serve_lib.sh"

K=$T/keys
mkdir -p "$K"
for name in orch agent ci rogue; do
    tandem keys generate --out "$K" --name $name >"$T/$name.pubkey" 2>/dev/null ||
        fail "tandem keys generate $name"
done
cat >"$K/authorized" <<EOF2
coder,reviewer $(cat "$T/agent.pubkey") build-host
client         $(cat "$T/ci.pubkey") ci
EOF2

# the network: two namespaces and a veth pair, or loopback
NS_A=tnd-a-$$ NS_B=tnd-b-$$ VA=tva$$ VB=tvb$$
IN_A= IN_B=
netns_cleanup() {
    ip netns del "$NS_A" 2>/dev/null
    ip netns del "$NS_B" 2>/dev/null
}
two_hosts_cleanup() {
    s=$?
    for p in $AGENTS; do kill "$p" 2>/dev/null; done
    [ -n "$SERVE_PID" ] && kill -KILL "$SERVE_PID" 2>/dev/null
    SERVE_PID=
    netns_cleanup
    (exit $s)
    serve_cleanup
}
AGENTS=
trap two_hosts_cleanup EXIT
if [ -z "${TANDEM_TEST_LOOPBACK:-}" ] && command -v ip >/dev/null 2>&1 &&
    ip netns add "$NS_A" 2>/dev/null &&
    ip netns add "$NS_B" 2>/dev/null &&
    ip link add "$VA" type veth peer name "$VB" 2>/dev/null &&
    ip link set "$VA" netns "$NS_A" && ip link set "$VB" netns "$NS_B" &&
    ip -n "$NS_A" addr add 10.231.7.1/24 dev "$VA" &&
    ip -n "$NS_B" addr add 10.231.7.2/24 dev "$VB" &&
    ip -n "$NS_A" link set "$VA" up && ip -n "$NS_B" link set "$VB" up &&
    ip -n "$NS_A" link set lo up && ip -n "$NS_B" link set lo up; then
    IN_A="ip netns exec $NS_A" IN_B="ip netns exec $NS_B"
    EP=tcp://10.231.7.1:5555
    echo "# two network namespaces joined by a veth pair: $EP"
else
    netns_cleanup
    port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    EP=tcp://127.0.0.1:$port
    echo "# network namespaces are not allowed here: over loopback, $EP"
fi

cat >"$T/server.yaml" <<YAML
version: 1
gate: {max_iterations: 3}
orchestrator:
  curve_key: "$K/orch.key"
  authorized_keys: "$K/authorized"
agents:
  coder:
    count: 0
    llm: {provider: replay, cassette: "$TOP/examples/demo/cassette.json"}
  reviewer:
    count: 0
    llm: {provider: replay, cassette: "$TOP/examples/demo/cassette.json"}
    skills: [build, test]
skills:
  build: {command: make, timeout_s: 60}
  test: {command: make test, timeout_s: 60}
YAML
SERVE_IN=$IN_A
start_serve --config "$T/server.yaml" --bind "$EP" --max-sessions 2
expect_in "$T/serve.err" "listening on $EP"
expect_in "$EPFILE" "server-key $(cat "$T/orch.pubkey")"
if [ -n "$IN_B" ]; then
    # another host indeed: the server is not on the agents' loopback
    $IN_B /usr/bin/python3 -c 'import socket, sys
s = socket.socket()
sys.exit(0 if s.connect_ex(("127.0.0.1", 5555)) != 0 else 1)' ||
        fail "the agents' namespace reaches the server on its own loopback"
fi

# the other host: a coder and a reviewer with their own key, as the
# README's two-host set-up starts them
for role in coder reviewer; do
    $IN_B "$BIN/tandem-$role" --connect "$EP" --server-key "$K/orch.pub" \
        --key "$K/agent.key" --config "$T/server.yaml" \
        >"$T/$role.log" 2>&1 &
    AGENTS="$AGENTS $!"
done
repo a
run $IN_B "$BIN/tandem" submit --connect "$EP" --server-key "$K/orch.pub" \
    --key "$K/ci.key" --repo "$T/a" "make the failing test pass"
expect_rc 0 "approved across the hosts"
expect_in "$T/out" "+    return (double)sum / (double)count;"
expect_in "$T/err" "[2/3] approve"
pass "a task submitted from the other host is approved by agents there, over CURVE"

# an agent with a key nobody listed is refused, its fingerprint logged
$IN_B "$BIN/tandem-reviewer" --connect "$EP" --server-key "$K/orch.pub" \
    --key "$K/rogue.key" --config "$T/server.yaml" >"$T/rogue.log" 2>&1 &
AGENTS="$AGENTS $!"
fp=$(cut -c1-12 "$T/rogue.pubkey")
wait_for "key $fp is not in the authorized keys" "$T/serve.err" 20
pass "an agent with an unknown key is refused"

# a client holding an agent's key (coder, reviewer) cannot submit
run $IN_B "$BIN/tandem" submit --connect "$EP" --server-key "$K/orch.pub" \
    --key "$K/agent.key" --repo "$T/a" "make the failing test pass"
expect_rc 2 "an agent's key submitting"
expect_in "$T/err" "lacks the client and the person role"
# and without a key a client is told what to give
run $IN_B "$BIN/tandem" submit --connect "$EP" --server-key "$K/orch.pub" \
    --repo "$T/a" "make the failing test pass"
expect_rc 2 "no key"
expect_in "$T/err" "give --key FILE"

# the repository a client names is the server's: a path the client's
# host lacks goes to the server, which judges it (it was refused on the
# client as "cannot resolve", so a client on another host could submit
# only where it had the same directory)
run $IN_B "$BIN/tandem" submit --connect "$EP" --server-key "$K/orch.pub" \
    --key "$K/ci.key" --repo "$T/only-on-the-server/app" "make it pass"
expect_rc 2 "a repository the server lacks"
expect_in "$T/err" "repo $T/only-on-the-server/app: No such file"
expect_not_in "$T/err" "cannot resolve"
stop_serve
pass "a client with a coder's key cannot submit; one without a key is told what to give"
pass "a repository path goes to the server to judge, not resolved on the client's host"
