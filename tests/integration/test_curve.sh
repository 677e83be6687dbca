#!/bin/sh
# CURVE on a tcp:// endpoint: tandem's own agents connect with the
# orchestrator's key and the demo is approved; a key that is not listed
# is refused, with its fingerprint in the log; a key listed for the coder
# cannot register as a reviewer; a client may not drive the agents; and
# a tcp:// endpoint beyond loopback without CURVE is refused unless
# orchestrator.insecure says so.
. "$(dirname "$0")/lib.sh"

K=$T/keys
mkdir -p "$K"
for name in orch agent rogue coderonly mallory; do
    tandem keys generate --out "$K" --name $name >"$T/$name.pubkey" 2>/dev/null ||
        fail "tandem keys generate $name"
done
[ "$(stat -c %a "$K/orch.key")" = 600 ] || fail "orch.key is not mode 600"
pass "tandem keys generate writes NAME.key (0600) and NAME.pub"

cat >"$K/authorized" <<EOF2
# who may connect
coder,reviewer $(cat "$T/agent.pubkey") agent
coder $(cat "$T/coderonly.pubkey") coder-only
client $(cat "$T/mallory.pubkey") mallory
EOF2

port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
EP=tcp://127.0.0.1:$port

# tandem's own agents over CURVE
copy_demo
demo_config "$TOP/examples/demo/cassette.json" <<YAML
orchestrator:
  endpoint: "$EP"
  curve_key: "$K/orch.key"
  authorized_keys: "$K/authorized"
YAML
run tandem run --repo "$T/demo" "make the failing test pass"
expect_rc 0 "approved over CURVE"
expect_in "$T/out" "+    return (double)sum / (double)count;"
expect_in "$(session_dir)/report.json" '"insecure_endpoint": null'
pass "tandem's own agents connect over CURVE with the orchestrator's key"

# strangers: an unlisted key, and a coder key posing as a reviewer
copy_demo
demo_config "$TOP/examples/demo/cassette.json" <<YAML
orchestrator:
  endpoint: "$EP"
  curve_key: "$K/orch.key"
  authorized_keys: "$K/authorized"
  request_timeout_s: 6
gate: {baseline: false}
YAML
sed -i 's/^  coder:$/  coder:\n    count: 0/' "$T/demo/agents.yaml"
"$BIN/tandem-coder" --connect "$EP" --server-key "$K/orch.pub" \
    --key "$K/rogue.key" --config "$T/demo/agents.yaml" \
    --heartbeat 1000 >"$T/rogue.log" 2>&1 &
ROGUE=$!
"$BIN/tandem-reviewer" --connect "$EP" --server-key "$K/orch.pub" \
    --key "$K/coderonly.key" --config "$T/demo/agents.yaml" \
    --heartbeat 1000 >"$T/poser.log" 2>&1 &
POSER=$!
TANDEM_TIMEOUT=60 run tandem run --repo "$T/demo" "make the failing test pass"
# the agent whose key is not listed is told so at the handshake, and
# leaves saying so (it reconnected every few seconds for ever, saying
# the broker was silent)
i=0
while kill -0 $ROGUE 2>/dev/null; do
    i=$((i + 1))
    [ $i -gt 1000 ] && fail "the agent with an unlisted key did not leave: $(cat "$T/rogue.log")"
    sleep 0.01
done
wait $ROGUE
[ $? -ne 0 ] || fail "the agent with an unlisted key exited 0"
expect_in "$T/rogue.log" "refused this agent's key $(cat "$T/rogue.pubkey"): its authorized keys do not list it"
kill $POSER 2>/dev/null
wait $POSER 2>/dev/null
expect_rc 1 "no coder could register"
fp=$(cut -c1-12 "$T/rogue.pubkey")
expect_in "$T/err" "key $fp is not in the authorized keys"
expect_in "$T/err" "its key's roles (coder) do not include service reviewer"
# the agent whose READY is refused says so and waits longer each time
# (it reconnected ten times a second, for ever, saying nothing)
expect_in "$T/poser.log" "refused this agent as"
n=$(grep -c "do not include service reviewer" "$T/err")
[ "$n" -le 5 ] || fail "the refused agent came back $n times in a few seconds"
expect_in "$T/err" "no reply from the coder within 6 s"
pass "an unlisted key and a coder key posing as a reviewer are refused"

# a key that may only submit connects under an agent's name. With
# ROUTER_HANDOVER it took that agent's connection at its handshake: it
# got the coder's request (the repository's files) without sending a
# thing, and its forged reply was journaled as the coder's proposal (a
# review found both). Over CURVE the broker has no handover: the name is
# the agent's while its connection lives, and a message under it from
# another key is refused anyway (the broker keeps each agent's key)
copy_demo
demo_config "$TOP/examples/demo/cassette.json" <<YAML
orchestrator:
  endpoint: "$EP"
  curve_key: "$K/orch.key"
  authorized_keys: "$K/authorized"
  heartbeat_ms: 300
skills:
  build: {command: "sleep 1; make", timeout_s: 60}
  test: {command: make test, timeout_s: 60}
YAML
cat >"$T/mallory.py" <<'PY'
import json, sys, time, zmq
ep, server_pub, keyfile, name, mode = sys.argv[1:6]
def read(path):
    return dict(l.split(" = ", 1) for l in open(path).read().splitlines()
                if " = " in l)
keys = read(keyfile)
s = zmq.Context.instance().socket(zmq.DEALER)
s.setsockopt(zmq.LINGER, 0)
s.curve_serverkey = read(server_pub)["public-key"].encode()
s.curve_publickey = keys["public-key"].encode()
s.curve_secretkey = keys["secret-key"].encode()
s.setsockopt(zmq.ROUTING_ID, name.encode())
s.connect(ep)
end = time.time() + 30
while time.time() < end:
    if mode == "talk":
        s.send_multipart([b"MDPW02", b"\x05"])
    if s.poll(200):
        f = s.recv_multipart()
        if len(f) >= 5 and f[1] == b"\x02":
            print("got a request: %d bytes" % len(f[-1]))
            sys.stdout.flush()
            req = json.loads(f[-1])
            reply = {"tandem": 1, "type": "code_reply",
                     "task_id": req["task_id"], "attempt": req["attempt"],
                     "rationale": "forged by mallory",
                     "edits": [{"kind": "write", "path": "PWNED.txt",
                                "replace": "forged\n"}]}
            s.send_multipart([b"MDPW02", b"\x04", f[2], b"",
                              json.dumps(reply).encode()])
PY
for mode in listen talk; do
    rm -rf "$T/demo/.tandem"
    "$BIN/tandem" run --verbose --repo "$T/demo" "make the failing test pass" \
        >"$T/out" 2>"$T/err" &
    pid=$!
    i=0
    until grep -q "agent coder-1 ready" "$T/err"; do
        i=$((i + 1))
        [ $i -gt 300 ] && fail "coder-1 never registered"
        sleep 0.05
    done
    /usr/bin/python3 "$T/mallory.py" "$EP" "$K/orch.pub" "$K/mallory.key" \
        coder-1 $mode >"$T/mallory.out" 2>&1 &
    mallory=$!
    wait $pid
    RC=$?
    kill $mallory 2>/dev/null
    wait $mallory 2>/dev/null
    expect_rc 0 "approved beside an impostor that would $mode"
    expect_not_in "$T/mallory.out" "got a request"
    d=$(session_dir)
    expect_not_in "$d/journal.jsonl" "forged by mallory"
    [ ! -e "$T/demo/PWNED.txt" ] || fail "the forged edit reached the tree"
done
pass "a client key under an agent's name gets nothing; the agent answers"

# beyond loopback without CURVE: refused, unless insecure
copy_demo
demo_config "$TOP/examples/demo/cassette.json" <<YAML
orchestrator: {endpoint: "tcp://0.0.0.0:$port"}
YAML
run tandem run --repo "$T/demo" "make the failing test pass"
expect_rc 2 "open tcp refused"
expect_in "$T/err" "accepts connections from other hosts without CURVE"
expect_in "$T/err" "orchestrator.insecure: true"
expect_not_in "$T/err" "coder: proposing"
sed -i "s|endpoint: \"tcp://0.0.0.0:$port\"|endpoint: \"tcp://0.0.0.0:$port\", insecure: true|" \
    "$T/demo/agents.yaml"
run tandem run --repo "$T/demo" "make the failing test pass"
expect_rc 0 "insecure allowed"
expect_in "$T/err" "has no CURVE: anyone who can connect may act as an agent"
expect_in "$(session_dir)/report.json" "\"insecure_endpoint\": \"tcp://0.0.0.0:$port\""
pass "a tcp:// endpoint beyond loopback needs CURVE or orchestrator.insecure"

# --insecure says the same on the command line, for run and for serve,
# and a resume keeps it; every served session's report says so too
copy_demo
demo_config "$TOP/examples/demo/cassette.json" <<YAML
orchestrator: {endpoint: "tcp://0.0.0.0:$port"}
YAML
run tandem run --insecure --repo "$T/demo" "make the failing test pass"
expect_rc 0 "--insecure"
expect_in "$T/err" "has no CURVE: anyone who can connect may act as an agent"
d=$(session_dir)
expect_in "$d/report.json" "\"insecure_endpoint\": \"tcp://0.0.0.0:$port\""
expect_in "$d/journal.jsonl" '"insecure":true'
run tandem resume --repo "$T/demo" "$(basename "$d")"
expect_in "$T/err" "already finished"

export XDG_RUNTIME_DIR=$T/run XDG_STATE_HOME=$T/state
mkdir -p "$T/run" "$T/state" && chmod 700 "$T/run" "$T/state"
sed -i '/^orchestrator:/d' "$T/demo/agents.yaml"
"$BIN/tandem" serve --config "$T/demo/agents.yaml" --bind "tcp://0.0.0.0:$port" \
    >"$T/serve.out" 2>"$T/serve.err" &
srv=$!
wait "$srv"
[ $? = 2 ] || fail "serve on an open tcp:// without CURVE did not exit 2"
expect_in "$T/serve.err" "accepts connections from other hosts without CURVE"
# on loopback too: every local user could submit there, as the server's
# user, in any repository it can read (a server that starts is killed)
TANDEM_TIMEOUT=20 run tandem serve --config "$T/demo/agents.yaml" \
    --bind "tcp://127.0.0.1:$port"
expect_rc 2 "serve on a loopback tcp:// without CURVE"
expect_in "$T/err" "every user of this host can connect to a loopback port"
expect_in "$T/err" "--insecure"
"$BIN/tandem" serve --insecure --config "$T/demo/agents.yaml" \
    --bind "tcp://0.0.0.0:$port" >"$T/serve.out" 2>"$T/serve.err" &
srv=$!
wait_for_file "$T/run/tandem/serve.endpoint" 20
rm -rf "$T/demo/.tandem"
run tandem submit --connect "tcp://127.0.0.1:$port" --repo "$T/demo" \
    "make the failing test pass"
kill -TERM $srv
wait $srv
expect_rc 0 "submitted to an insecure server"
expect_in "$T/serve.err" "has no CURVE"
expect_in "$(ls -d "$T"/demo/.tandem/sessions/*)/report.json" \
    "\"insecure_endpoint\": \"tcp://0.0.0.0:$port\""
pass "--insecure allows it for run (kept by resume) and serve, and every report says so"

# Strangers who can reach the port hold a descriptor each until their
# handshake ends: ~1,100 connections that never spoke made a run under
# the usual soft limit of 1,024 open files fail ("Too many open files").
# The soft limit is raised for a tcp:// endpoint, and a handshake must
# end within 5 s.
copy_demo
demo_config "$TOP/examples/demo/cassette.json" <<YAML
orchestrator:
  endpoint: "$EP"
  curve_key: "$K/orch.key"
  authorized_keys: "$K/authorized"
skills:
  build: {command: make, timeout_s: 60}
  test:
    command: "touch '$T/testing'; while [ ! -e '$T/go' ]; do sleep 0.05; done; make test"
    timeout_s: 120
    sandbox: none  # waits on a file of the test's
YAML
rm -f "$T/testing" "$T/go" "$T/held"
(ulimit -S -n 1024 && exec "$BIN/tandem" run --repo "$T/demo" \
    "make the failing test pass" >"$T/out" 2>"$T/err") &
pid=$!
wait_for_file "$T/testing" 60
soft=$(awk '/Max open files/ {print $4}' "/proc/$pid/limits")
[ "$soft" -gt 1024 ] || fail "the soft limit of open files stayed $soft"
/usr/bin/python3 - "$port" "$T/held" "$T/go" <<'PY' &
import os, resource, socket, sys, time
resource.setrlimit(resource.RLIMIT_NOFILE, (4096, 4096))
port, held, go = int(sys.argv[1]), sys.argv[2], sys.argv[3]
socks = [socket.create_connection(("127.0.0.1", port)) for _ in range(1100)]
open(held, "w").close()
while not os.path.exists(go):
    time.sleep(0.05)
PY
holder=$!
wait_for_file "$T/held" 60
touch "$T/go"
wait $pid
RC=$?
wait $holder
expect_rc 0 "approved while 1,100 strangers held connections"
expect_not_in "$T/err" "Too many open files"
pass "strangers holding connections to a tcp:// endpoint cannot starve a run of descriptors"

# a key removed from the authorized keys while tandem serve runs: its
# agent is disconnected and refused at once (it served on, and its key
# was admitted, until the server restarted); tandem's own agents go on
cp "$K/authorized" "$K/authorized.kept"
copy_demo
port=$(/usr/bin/python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
EP=tcp://127.0.0.1:$port
demo_config "$TOP/examples/demo/cassette.json" <<YAML
orchestrator:
  curve_key: "$K/orch.key"
  authorized_keys: "$K/authorized"
  heartbeat_ms: 300
YAML
sed -i 's/^  coder:$/  coder:\n    count: 0/' "$T/demo/agents.yaml"
mkdir -p "$T/srun" "$T/sstate"
chmod 700 "$T/srun" "$T/sstate"
XDG_RUNTIME_DIR=$T/srun XDG_STATE_HOME=$T/sstate "$BIN/tandem" serve -v \
    --config "$T/demo/agents.yaml" --bind "$EP" --pool 1 >"$T/srv.out" \
    2>"$T/srv.err" &
SRV=$!
"$BIN/tandem-coder" --connect "$EP" --server-key "$K/orch.pub" \
    --key "$K/agent.key" --config "$T/demo/agents.yaml" \
    --heartbeat 300 >"$T/agent.log" 2>&1 &
AGENT=$!
BG_PIDS="$BG_PIDS $SRV $AGENT"
i=0
until grep -q "ready for service coder" "$T/srv.err"; do
    i=$((i + 1))
    [ $i -gt 3000 ] && fail "the agent never registered: $(cat "$T/srv.err")"
    sleep 0.01
done
grep -v " agent$" "$K/authorized.kept" >"$K/authorized.new"
mv "$K/authorized.new" "$K/authorized"
i=0
while kill -0 $AGENT 2>/dev/null; do
    i=$((i + 1))
    [ $i -gt 3000 ] && fail "the agent of a removed key stayed: $(cat "$T/agent.log")"
    sleep 0.01
done
wait $AGENT
expect_in "$T/srv.err" "its key is no longer in the authorized keys for its service"
expect_in "$T/agent.log" "refused this agent's key $(cat "$T/agent.pubkey")"
kill -TERM $SRV
wait $SRV
rc=$?
[ $rc = 0 ] || fail "tandem serve exited $rc: $(cat "$T/srv.err")"
cp "$K/authorized.kept" "$K/authorized"
pass "a key removed from the authorized keys is refused without a restart, its agent disconnected"
