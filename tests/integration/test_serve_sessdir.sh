#!/bin/sh
# tandem serve reads an ended session's journal and report from the
# repository a client named, for `tandem submit --attach ID` and for a
# task sent again under its id. The repository is its owner's: over
# CURVE, a key whose session ended could replace that session's
# directory (or .tandem, or .tandem/sessions) with a link to another
# key's session in another repository, and the server sent that
# session's report (its approved diff among it) to the attacker. The
# server opens .tandem, sessions and the session's directory one from
# the other, through no link, each its own user's and nobody else's to
# write in, and refuses, naming the path and why, when one is not. As
# root, "another user's" is a .tandem chowned to nobody.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/serve_lib.sh"

curve_serve_config "$T/serve.yaml" client:eve client:vic
repo a
repo v
CLIENT_SERVER_KEY=$K/orch.pub
export CLIENT_SERVER_KEY

# submit_as NAME REPO ID: client.py submits the task over CURVE with
# NAME's key, in REPO, proposing session ID
submit_as() {
    run env CLIENT_KEY="$K/$1.key" CLIENT_SESSION="$3" \
        $PY "$TOP/tests/agents/client.py" "$EP" submit "$2" \
        "make the failing test pass"
}

start_serve --config "$T/serve.yaml" --bind "$EP"
now=$(date -u +%Y%m%d-%H%M%S)
sid=$now-00000e5e
vid=$now-0000051c
submit_as eve "$T/a" "$sid"
expect_rc 0 "eve's task"
submit_as vic "$T/v" "$vid"
expect_rc 0 "the victim's task"
approved "$T/a/.tandem/sessions/$sid"
approved "$T/v/.tandem/sessions/$vid"
# what only the victim's report says
$PY - "$T/v/.tandem/sessions/$vid/report.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
r["final_diff_text"] = "VICTIM-SECRET\n" + r.get("final_diff_text", "")
json.dump(r, open(sys.argv[1], "w"))
PY

TANDEM_KEY=$K/eve.key
export TANDEM_KEY
run tandem submit --attach "$sid" --repo "$T/a"
expect_rc 0 "eve attaches to her own session"
expect_not_in "$T/out" VICTIM-SECRET

# no secret: the session's directory a link to the victim's
d=$T/a/.tandem/sessions/$sid
mv "$d" "$T/a/mine"
ln -s "$T/v/.tandem/sessions/$vid" "$d"
run tandem submit --attach "$sid" --repo "$T/a"
expect_rc 2 "eve attaches after she made her session a link to another's"
expect_in "$T/err" "session $sid is not read by this server"
expect_in "$T/err" "$d is a symbolic link"
expect_not_in "$T/out" VICTIM-SECRET
expect_not_in "$T/err" VICTIM-SECRET
expect_not_in "$T/out" "diff --git"
submit_as eve "$T/a" "$sid"
expect_rc 17 "eve sends her task again under its id, her session a link to another's"
expect_in "$T/err" "error: forbidden: session $sid is not read by this server"
expect_in "$T/err" "$d is a symbolic link"
expect_not_in "$T/out" VICTIM-SECRET
expect_not_in "$T/err" VICTIM-SECRET
pass "a session's directory made a link to another repository's session is refused, naming it"

# .tandem a link to a copy that leads there
rm "$d"
mv "$T/a/.tandem" "$T/a/tandem.mine"
mkdir -p "$T/x/sessions"
ln -s "$T/v/.tandem/sessions/$vid" "$T/x/sessions/$sid"
ln -s "$T/x" "$T/a/.tandem"
run tandem submit --attach "$sid" --repo "$T/a"
expect_rc 2 "eve attaches after she made .tandem a link"
expect_in "$T/err" "$T/a/.tandem is a symbolic link"
expect_not_in "$T/out" VICTIM-SECRET
expect_not_in "$T/err" VICTIM-SECRET
rm "$T/a/.tandem"
pass ".tandem made a link is refused, naming it"

# another user's .tandem (as root: chowned to nobody), holding the
# victim's session under eve's id
if [ "$(id -u)" = 0 ]; then
    mkdir -p "$T/a/.tandem/sessions"
    cp -R "$T/v/.tandem/sessions/$vid" "$T/a/.tandem/sessions/$sid"
    chown -R 65534:65534 "$T/a/.tandem"
    run tandem submit --attach "$sid" --repo "$T/a"
    expect_rc 2 "eve attaches with a .tandem of another user's"
    expect_in "$T/err" "$T/a/.tandem belongs to another user (uid 65534)"
    expect_not_in "$T/out" VICTIM-SECRET
    expect_not_in "$T/err" VICTIM-SECRET
    rm -rf "$T/a/.tandem"
    pass "a .tandem of another user's is refused, naming it"
else
    echo "ok - # SKIP a .tandem of another user's (needs root to chown)"
fi

# put back as the server made it: read again
mv "$T/a/tandem.mine" "$T/a/.tandem"
mv "$T/a/mine" "$d"
run tandem submit --attach "$sid" --repo "$T/a"
expect_rc 0 "eve attaches to her session as the server left it"
cmp -s "$T/out" "$d/final.diff" || fail "stdout is not the session's final.diff: $(cat "$T/err")"
pass "the session's own directory is read as before"
stop_serve
