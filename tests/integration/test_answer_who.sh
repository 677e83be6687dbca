#!/bin/sh
# Who answered a served session is who the server's transport proved,
# never the server's own user: over CURVE the name the authorized keys
# give the answering key (else its fingerprint), journaled with the
# answer and shown in decisions.md and reflection.md; over ipc:// the
# account of the answering process (test_serve_answer.sh). And only a
# key with the person role answers: a pipeline's `client` key cannot
# approve its own task past the gate.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/serve_lib.sh"

K=$T/keys
mkdir -p "$K"
for name in orch ann ci ci2 ops stranger; do
    tandem keys generate --out "$K" --name $name >"$T/$name.pubkey" 2>/dev/null ||
        fail "tandem keys generate $name"
done
cat >"$K/authorized" <<EOF2
person $(cat "$T/ann.pubkey") ann-laptop
client $(cat "$T/ci.pubkey") ci
client $(cat "$T/ci2.pubkey") ci2
client,person $(cat "$T/ops.pubkey")
EOF2
port=$($PY -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
EP=tcp://127.0.0.1:$port

# one attempt, then a person: the demo's first proposal fails its test
serve_config "$T/one.yaml" make 1
cat >>"$T/one.yaml" <<YAML
orchestrator:
  curve_key: "$K/orch.key"
  authorized_keys: "$K/authorized"
YAML
repo a
repo b
start_serve --config "$T/one.yaml" --bind "$EP" --max-sessions 2

escalate() { # REPO: submit a task that waits for a person; sets SID
    TANDEM_KEY=$K/ci.key
    export TANDEM_KEY
    run tandem submit --repo "$T/$1" "make the failing test pass"
    expect_rc 3 "escalated in $1"
    SID=$(sed -n 's/^tandem: session \([^:]*\): make.*/\1/p' "$T/err" | head -1)
    [ -n "$SID" ] || fail "no session id in: $(cat "$T/err")"
}
me=$(id -un)

# ---- roles ------------------------------------------------------------------
escalate a
run tandem approve --repo "$T/a" "$SID"
expect_rc 2 "approve with the pipeline's client key"
expect_in "$T/err" "this key may not answer sessions"
expect_in "$T/err" "without the person role"
expect_not_in "$T/a/.tandem/sessions/$SID/journal.jsonl" '"type":"answer"'
run tandem submit --status
expect_rc 0 "status with the client key"
TANDEM_KEY=$K/ann.key
export TANDEM_KEY
run tandem submit --repo "$T/a" "another task"
expect_rc 2 "submit with the person key"
expect_in "$T/err" "this key may not submit tasks"
expect_in "$T/err" "without the client role"
pass "a client key cannot answer, a person key cannot submit"

# a key the server does not list: said at once, naming the key (it
# waited 10 s for an answer that never comes and asked whether the
# server runs)
TANDEM_KEY=$K/stranger.key
export TANDEM_KEY
start=$(date +%s)
run tandem submit --repo "$T/a" "another task"
took=$(($(date +%s) - start))
expect_rc 2 "submit with a key the server does not list"
expect_in "$T/err" "refused this client's key $(cat "$T/stranger.pubkey") (from $K/stranger.key): its authorized keys do not list it"
expect_not_in "$T/err" "is it running"
[ "$took" -lt $((5 * SLOW)) ] || fail "a refused key took ${took}s to be told"
run tandem budget --repo "$T/a" --iterations 1 "$SID"
expect_rc 2 "an answer with a key the server does not list"
expect_in "$T/err" "refused this client's key"
pass "a key the server does not list is told at once, by its public key"

# ---- a session is its submitter's -------------------------------------------
ci_fp=$(cut -c1-12 "$T/ci.pubkey")
expect_in "$T/a/.tandem/sessions/$SID/journal.jsonl" \
    "\"by\":{\"via\":\"curve\",\"user\":\"ci\",\"key\":\"$ci_fp\""
TANDEM_KEY=$K/ci2.key
export TANDEM_KEY
run tandem submit --attach "$SID"
expect_rc 2 "another pipeline's key attaches"
expect_in "$T/err" "session $SID was not submitted with this key"
expect_not_in "$T/out" "diff --git"
# a part of its id finds none of another key's sessions, and says no id
# (the refusal gave the whole id: a prefix at a time, a key learnt every
# other client's sessions)
part=$(echo "$SID" | cut -c1-17)
run tandem submit --attach "$part"
expect_rc 2 "another pipeline's key attaches by a part of the id"
expect_in "$T/err" "no session $part runs or waits in this server"
expect_not_in "$T/err" "$SID"
run tandem submit --status
expect_rc 0 "status with another pipeline's key"
expect_not_in "$T/out" "$SID"
TANDEM_KEY=$K/ci.key
export TANDEM_KEY
run tandem submit --attach "$SID"
expect_rc 3 "its submitter attaches to the session that waits"
run tandem submit --attach "$part"
expect_rc 3 "its submitter attaches by a part of the id"
TANDEM_KEY=$K/ann.key
export TANDEM_KEY
run tandem submit --attach "$SID"
expect_rc 3 "a person's key attaches"
pass "only the submitting key, or a person's, follows a session over CURVE"

# ---- a named key ----------------------------------------------------------
run tandem budget --repo "$T/a" --iterations 1 "$SID"
expect_rc 0 "budget over CURVE with ann's key"
d=$T/a/.tandem/sessions/$SID
ann_fp=$(cut -c1-12 "$T/ann.pubkey")
grep '"type":"answer"' "$d/journal.jsonl" >"$T/answer.json"
expect_in "$T/answer.json" '"via":"curve"'
expect_in "$T/answer.json" '"user":"ann-laptop"'
expect_in "$T/answer.json" "\"key\":\"$ann_fp\""
expect_in "$T/answer.json" '"address":"127.0.0.1"'
expect_not_in "$T/answer.json" "\"user\":\"$me\""
expect_in "$d/report.json" '"status": "approved"'
expect_in "$d/decisions.md" "a person answered budget (ann-laptop (CURVE key $ann_fp))"
expect_in "$d/reflection.md" "By ann-laptop (CURVE key $ann_fp), through tandem serve."
# report.json: the answer, and who gave it
python3 -c '
import json, sys
a = json.load(open(sys.argv[1]))["answers"]
assert len(a) == 1, a
a = a[0]
want = {"answer": "budget", "by": "command", "via": "curve",
        "user": "ann-laptop", "key": sys.argv[2], "address": "127.0.0.1",
        "iterations": 1, "text": None}
for k, v in want.items():
    assert a[k] == v, (k, a[k], v)
' "$d/report.json" "$ann_fp" || fail "report.json answers: $(cat "$d/report.json")"
pass "an answer over CURVE names the answering key's name, not the server's user"

# the answered session stays its submitter's (the task record says whose)
TANDEM_KEY=$K/ci2.key
export TANDEM_KEY
run tandem submit --attach "$SID"
expect_rc 2 "another pipeline's key attaches to the answered session"
expect_in "$T/err" "was not submitted with this key"
TANDEM_KEY=$K/ci.key
export TANDEM_KEY
run tandem submit --attach "$SID"
expect_rc 0 "its submitter attaches to the answered session"
pass "an answered session stays its submitter's"

# ---- a key its line gives no name -------------------------------------------
escalate b
TANDEM_KEY=$K/ops.key
export TANDEM_KEY
run tandem approve --repo "$T/b" "$SID"
expect_rc 0 "approve over CURVE with the unnamed key"
d=$T/b/.tandem/sessions/$SID
ci_fp=$(cut -c1-12 "$T/ops.pubkey")
grep '"type":"answer"' "$d/journal.jsonl" >"$T/answer.json"
expect_in "$T/answer.json" '"via":"curve"'
expect_in "$T/answer.json" "\"user\":\"$ci_fp\""
expect_in "$T/answer.json" "\"key\":\"$ci_fp\""
expect_not_in "$T/answer.json" "\"user\":\"$me\""
expect_in "$d/reflection.md" "By CURVE key $ci_fp, through tandem serve."
expect_in "$d/report.json" '"answer": "approve"'
expect_in "$d/report.json" "\"user\": \"$ci_fp\""
pass "a key with no name is named by its fingerprint"
stop_serve
