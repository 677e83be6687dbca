#!/bin/sh
# tandem submit that loses its server while it follows a session: it
# waits --reconnect-s for the next to take the session up, each time it
# is lost; with --reconnect-s 0 it leaves at once.
. "$(dirname "$0")/lib.sh"

. "$(dirname "$0")/serve_lib.sh"

# the build holds every session back until $T/gate exists
serve_config "$T/gated.yaml" "while [ ! -e $T/gate ]; do sleep 0.02; done; make"

# kill_serve: SIGKILL, as a crash.
kill_serve() {
    kill -KILL "$SERVE_PID"
    wait "$SERVE_PID" 2>/dev/null
    SERVE_PID=
}

# follow REPO TAG RECONNECT-S: a submit in REPO following its session in
# the background (stdout, stderr, exit code in $T/out.TAG, err.TAG,
# rc.TAG; its pid in $follower), returned once it has the session's id
# (in $sid): its task record comes before the server's answer, and a
# kill between them leaves a client that cannot ask for it.
follow() {
    (tandem submit --reconnect-s "$3" --repo "$T/$1" "make the failing test pass" \
        >"$T/out.$2" 2>"$T/err.$2"; echo $? >"$T/rc.$2") &
    follower=$!
    i=0
    until [ -d "$T/$1/.tandem/sessions" ] && [ -n "$(ls "$T/$1/.tandem/sessions")" ]; do
        i=$((i + 1))
        [ $i -gt $((1000 * SLOW)) ] && fail "no session made"
        sleep 0.01
    done
    sid=$(ls "$T/$1/.tandem/sessions")
    wait_for "tandem: session $sid" "$T/err.$2" 30
}

# ---- lost twice: the wait for the second is --reconnect-s too ----------
# (the deadline was the first loss's: once the session had gone on past
# it, the second loss gave up at once)
repo a
start_serve --config "$T/gated.yaml" --max-sessions 1
follow a f 10
kill_serve
start_serve --config "$T/gated.yaml" --max-sessions 1
wait_for "took session $sid up again" "$T/err.f" 20
# the session goes on past the wait a loss allows, then is lost again
# (10 s: a restart on a busy machine may take a few)
sleep 11
kill -0 $follower 2>/dev/null || fail "the follower left: $(cat "$T/err.f")"
kill_serve
start_serve --config "$T/gated.yaml" --max-sessions 1
i=0
until [ "$(grep -c "took session $sid up again" "$T/err.f")" = 2 ]; do
    i=$((i + 1))
    [ $i -gt $((2000 * SLOW)) ] && fail "not taken up again twice: $(cat "$T/err.f")"
    sleep 0.01
done
touch "$T/gate"
wait $follower
[ "$(cat "$T/rc.f")" = 0 ] || fail "the follower exited $(cat "$T/rc.f"): $(tail -5 "$T/err.f")"
cmp -s "$T/a/.tandem/sessions/$sid/final.diff" "$T/out.f" ||
    fail "the follower's stdout is not its session's final.diff"
# alone in the server, running or about to: nothing is ahead of it (a
# running session in a full server was said to wait behind one)
expect_not_in "$T/err.f" "waits: "
stop_serve
pass "a server lost twice under a session: each loss is waited for --reconnect-s"

# ---- --reconnect-s 0: exit 1 at once -----------------------------------
# (it waited 15 s of silence, as if the connection had not ended)
rm -f "$T/gate"
repo b
start_serve --config "$T/gated.yaml" --max-sessions 1
follow b z 0
kill_serve
i=0
while kill -0 $follower 2>/dev/null; do
    i=$((i + 1))
    [ $i -gt $((500 * SLOW)) ] && fail "--reconnect-s 0 still waits 5 s after the server was lost: $(cat "$T/err.z")"
    sleep 0.01
done
wait $follower
[ "$(cat "$T/rc.z")" = 1 ] || fail "--reconnect-s 0 exited $(cat "$T/rc.z")"
expect_in "$T/err.z" "lost tandem serve at ipc://$T/run/tandem/serve.sock"
expect_in "$T/err.z" "session $sid is on disk"
expect_not_in "$T/err.z" "waiting up to"
pass "--reconnect-s 0: a lost server ends the wait at once, exit 1"

# ---- a server that is stopping is asked again, backing off --------------
# A fake server (MDP/Client as PROTOCOL.md says) accepts the task, cuts
# the line, and then answers every attach "stopping", as a draining
# server does; the client waits --reconnect-s 6 for the next server. It
# sent an attach every 200 ms (~30 in 6 s, ~150 over a 30 s drain); it
# now doubles the wait up to 2 s: about 7.
cat >"$T/stopping.py" <<'PY'
import json, sys, zmq
ep, log = sys.argv[1], sys.argv[2]
ctx = zmq.Context()
def bound():
    r = ctx.socket(zmq.ROUTER)
    r.setsockopt(zmq.LINGER, 0)
    r.bind(ep)
    return r
def reply(r, who, final, body):
    r.send_multipart([who, b"MDPC02", b"\x03" if final else b"\x02",
                      b"tandem.submit", json.dumps(body).encode()])
r = bound()
who = r.recv_multipart()[0]
reply(r, who, False, {"tandem": 1, "type": "accepted",
                      "session": "20991231-000000-0000abcd",
                      "dir": "/nowhere", "queued": 0})
r.close()  # the line is cut
r = bound()
n = 0
with open(log, "w") as out:
    while r.poll(12000):
        f = r.recv_multipart()
        n += 1
        print("attach %d %s" % (n, json.loads(f[-1]).get("session")), file=out, flush=True)
        reply(r, f[0], True, {"tandem": 1, "type": "error", "kind": "stopping",
                              "error": "tandem serve is stopping"})
PY
$PY "$T/stopping.py" "ipc://$T/stopping.sock" "$T/attaches" &
fake=$!
i=0
until [ -S "$T/stopping.sock" ]; do
    i=$((i + 1))
    [ $i -gt 500 ] && fail "the fake server did not bind"
    sleep 0.01
done
run tandem submit --connect "ipc://$T/stopping.sock" --reconnect-s 6 --repo "$T/b" "x"
kill $fake 2>/dev/null
wait $fake 2>/dev/null
expect_rc 1 "waiting on a stopping server"
expect_in "$T/err" "tandem serve is stopping"
expect_in "$T/err" "no tandem serve took session 20991231-000000-0000abcd up again in 6 s"
expect_in "$T/attaches" "attach 1 20991231-000000-0000abcd"
n=$(wc -l <"$T/attaches")
[ "$n" -le 10 ] || fail "$n attaches in 6 s to a stopping server"
[ "$n" -ge 3 ] || fail "only $n attaches in 6 s: it stopped asking"
pass "a server that is stopping is asked again less and less often"

# ---- a signal while watch asks a server for its status is watch's -------
# A fake server holds the user's serve.lock and never answers. watch
# --server asks it every second, each ask waiting up to 10 s; a SIGTERM
# that came during an ask was taken by the ask, and watch went on with
# every later ask giving up at once.
cat >"$T/mute.py" <<'PY'
import fcntl, os, sys, zmq
d, log = sys.argv[1], sys.argv[2]
os.makedirs(d, mode=0o700, exist_ok=True)
lock = open(os.path.join(d, "serve.lock"), "w")
fcntl.flock(lock, fcntl.LOCK_EX)
ctx = zmq.Context()
r = ctx.socket(zmq.ROUTER)
r.setsockopt(zmq.LINGER, 0)
r.bind("ipc://%s/mute.sock" % d)
with open(os.path.join(d, "serve.endpoint"), "w") as f:
    f.write("ipc://%s/mute.sock\n" % d)
with open(log, "w") as out:
    while r.poll(30000):
        r.recv_multipart()
        print("asked", file=out, flush=True)
PY
rm -f "$EPFILE"
$PY "$T/mute.py" "$T/run/tandem" "$T/asked" &
fake=$!
i=0
until [ -s "$EPFILE" ]; do
    i=$((i + 1))
    [ $i -gt 500 ] && fail "the fake server did not write its endpoint"
    sleep 0.01
done
(cd / && exec "$BIN/tandem" watch --server --plain --for 60) >"$T/watch.out" 2>&1 &
watcher=$!
wait_for "asked" "$T/asked" 20
kill -TERM $watcher
i=0
while kill -0 $watcher 2>/dev/null; do
    i=$((i + 1))
    [ $i -gt $((300 * SLOW)) ] && { kill -KILL $watcher; fail "watch went on for 3 s after a SIGTERM during its ask"; }
    sleep 0.01
done
wait $watcher
rc=$?
kill $fake 2>/dev/null
wait $fake 2>/dev/null
[ "$rc" = 143 ] || fail "watch exited $rc after SIGTERM, not 143"
pass "a signal that comes while watch asks the server is watch's"
