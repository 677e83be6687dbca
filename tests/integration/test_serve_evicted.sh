#!/bin/sh
# A task sent again under the id it proposed, after more sessions ended
# than the server keeps outcomes of (TND_ACCEPTED_ENDED_MAX, 1,024): the
# session is on disk in its repository, and the server answers its
# outcome from there (it refused the id as taken, though the task had
# run and its report was there), only to whom may follow it: over CURVE
# the key that submitted it (its task record's) or a person's key. The
# 1,024 newer outcomes are records written into the accepted list while
# no server runs. So does `tandem submit --attach ID`, whose request names
# the repository (--repo, default .): it said no such session ran, exit
# 2 for an approved change. A session there that has not ended goes on
# for its submitter's key only.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/serve_lib.sh"

curve_serve_config "$T/serve.yaml" client:ci client:ci2 person:ann
repo a
acc=$T/state/tandem/accepted.jsonl
CLIENT_SERVER_KEY=$K/orch.pub
export CLIENT_SERVER_KEY

# as_key NAME ID: client.py submits the task over CURVE with NAME's key,
# proposing session ID
as_key() {
    run env CLIENT_KEY="$K/$1.key" CLIENT_SESSION="$2" \
        $PY "$TOP/tests/agents/client.py" "$EP" submit "$T/a" \
        "make the failing test pass"
}

start_serve --config "$T/serve.yaml" --bind "$EP"
sid=$(date -u +%Y%m%d-%H%M%S)-00c0ffee
as_key ci "$sid"
expect_rc 0 "the task"
approved "$T/a/.tandem/sessions/$sid"
# a session of the same id not made by tandem serve (tandem run's):
# not one a submit follows
other=20261124-000000-0000dddd
cp -R "$T/a/.tandem/sessions/$sid" "$T/a/.tandem/sessions/$other"
sed -i 's/"served":true,//' "$T/a/.tandem/sessions/$other/journal.jsonl"
expect_not_in "$T/a/.tandem/sessions/$other/journal.jsonl" '"served"'
stop_serve

# 1,024 sessions ended after it
$PY - "$acc" "$T/a" <<'PY'
import json, sys
with open(sys.argv[1], "a") as f:
    for i in range(1024):
        f.write(json.dumps({"seq": 100000 + i, "time": "2026-11-24T00:00:00Z",
                            "type": "end", "session": "20261124-000001-%08x" % i,
                            "repo": sys.argv[2], "code": 0}) + "\n")
PY
start_serve --config "$T/serve.yaml" --bind "$EP"
expect_not_in "$acc" "$sid"
ls "$T/a/.tandem/sessions" >"$T/before"

as_key ci "$sid"
expect_rc 0 "the task sent again under its id, its outcome no longer kept"
expect_in "$T/out" "status: approved"
expect_not_in "$T/out" "session: "
expect_not_in "$T/err" "error:"
ls "$T/a/.tandem/sessions" | cmp -s - "$T/before" || fail "a session was made"
pass "a task sent again after 1,024 sessions ended gets its outcome from its repository"

as_key ci2 "$sid"
expect_rc 17 "another client key sends the task under that id"
expect_in "$T/err" "error: forbidden: session $sid was not submitted with this key"
expect_not_in "$T/out" "status:"
as_key ci "$other"
expect_rc 16 "a task under the id of a session tandem serve did not make"
expect_in "$T/err" "error: failed: session $other is in $T/a already"
ls "$T/a/.tandem/sessions" | cmp -s - "$T/before" || fail "a session was made"
pass "only its submitter's key follows it so; a session tandem serve did not make is not followed"

# ---- tandem submit --attach: the request names the repository ---------
d=$T/a/.tandem/sessions/$sid
TANDEM_KEY=$K/ci.key
export TANDEM_KEY
run tandem submit --attach "$sid" --repo "$T/a"
expect_rc 0 "its submitter attaches, its outcome no longer kept"
cmp -s "$T/out" "$d/final.diff" || fail "stdout is not the session's final.diff: $(cat "$T/err")"
cd "$T/a"
run tandem submit --attach "$sid"
cd "$T"
expect_rc 0 "its submitter attaches from the repository, without --repo"
# a key finds its own sessions on disk by the whole id only: a part
# would tell it of other keys' sessions there
part=$(echo "$sid" | cut -c1-17)
run tandem submit --attach "$part" --repo "$T/a"
expect_rc 2 "its submitter attaches by a part of the id"
expect_in "$T/err" "no session $part runs or waits in this server"
TANDEM_KEY=$K/ci2.key
run tandem submit --attach "$sid" --repo "$T/a"
expect_rc 2 "another client key attaches"
expect_in "$T/err" "session $sid was not submitted with this key"
expect_not_in "$T/out" "diff --git"
run tandem submit --attach "$part" --repo "$T/a"
expect_rc 2 "another client key attaches by a part of the id"
expect_not_in "$T/err" "$sid"
TANDEM_KEY=$K/ann.key
run tandem submit --attach "$part" --repo "$T/a"
expect_rc 0 "a person's key attaches by a part of the id"
cmp -s "$T/out" "$d/final.diff" || fail "stdout is not the session's final.diff: $(cat "$T/err")"
run tandem submit --attach "$other" --repo "$T/a"
expect_rc 2 "an attach to a session tandem serve did not make"
expect_in "$T/err" "no session $other runs or waits in this server"
pass "tandem submit --attach after 1,024 sessions ended gets the outcome from the repository, its submitter's or a person's key only"

# a session of ci's on disk that has not ended (its server killed once
# its task was journaled) and that this server does not know: sent again
# under its id, it goes on here for ci only; another client key is
# refused and nothing runs
open=20261124-000000-0000ffff
o=$T/a/.tandem/sessions/$open
mkdir -p "$o"
head -1 "$d/journal.jsonl" | sed "s/$sid/$open/" >"$o/journal.jsonl"
as_key ci2 "$open"
expect_rc 17 "another client key sends a task under the id of an open session"
expect_in "$T/err" "error: forbidden: session $open was not submitted with this key"
[ "$(wc -l <"$o/journal.jsonl")" = 1 ] || fail "another key's submit ran the session"
as_key ci "$open"
expect_rc 0 "its submitter sends its task again under the id of an open session"
expect_in "$T/out" "status: approved"
approved "$o"
pass "a session on disk not ended goes on for its submitter's key only"
stop_serve
