#!/bin/sh
# A skill entered from the reviewer's running sandbox (skills/holder.h)
# writes its workspace and nothing beside it: the tmpfs that hides the
# roots (the reviewer's directory, the session's, other tasks'
# workspaces) holds only the way to the workspace, and is read-only once
# the workspace is bound back. Before, a skill could write there: a
# build's ../out "worked" and was lost with the sandbox. The enter
# program is run by hand, from a holder made here, with the roots out of
# any /tmp the skill has of its own (where a runtime directory under
# $XDG_RUNTIME_DIR, /run/user/UID, is): a reviewer's skill always gets a
# /tmp of its own, which would hide a root beneath it.
. "$(dirname "$0")/lib.sh"

command -v bwrap >/dev/null 2>&1 || {
    echo "skip - no bwrap"
    exit 0
}
ROOT=$T/root
WS=$ROOT/session/workspace
mkdir -p "$WS" "$ROOT/other-task"
echo secret >"$ROOT/other-task/file"

# the holder: the host read-only, the root writable, waiting on a pipe
mkfifo "$T/hold"
bwrap --unshare-user --unshare-pid --unshare-ipc --unshare-uts \
    --unshare-net --ro-bind / / --dev /dev --proc /proc --tmpfs /tmp \
    --bind "$ROOT" "$ROOT" --info-fd 3 -- cat <"$T/hold" 3>"$T/info" \
    2>"$T/holder.err" &
BG_PIDS="$BG_PIDS $!"
exec 4>"$T/hold" # keeps the holder waiting until the test ends
i=0
while ! grep -q child-pid "$T/info" 2>/dev/null; do
    i=$((i + 1))
    [ $i -gt 1000 ] && fail "the holder did not start: $(cat "$T/holder.err")"
    sleep 0.01
done
pid=$(sed -n 's/.*"child-pid": *\([0-9]*\).*/\1/p' "$T/info")
start=$(sed 's/.*) //' "/proc/$pid/stat" | cut -d ' ' -f 20)

run "$BIN/tandem-sandbox-enter" "$pid" "$start" --size 1048576 \
    --hide "$ROOT" --cover /var/tmp --workspace "$WS" -- /bin/sh -c '
    touch made-here && echo workspace-writable
    touch ../beside 2>/dev/null && echo beside-writable
    touch "$0/root-file" 2>/dev/null && echo root-writable
    mkdir "$0/other-task" 2>/dev/null && echo root-mkdir
    cat "$0/other-task/file" 2>/dev/null && echo sees-other-task
    touch /var/tmp/own && echo own-tmp-writable
    echo "beside the workspace: $(ls -A ..)"' "$ROOT"
expect_rc 0 "the enter program"
for want in workspace-writable own-tmp-writable "beside the workspace: workspace"; do
    grep -q "$want" "$T/out" || fail "lacks '$want': $(cat "$T/out" "$T/err")"
done
if grep -E 'beside-writable|root-writable|root-mkdir|sees-other-task' "$T/out"; then
    fail "a skill wrote beside its workspace, or saw another's"
fi
[ -e "$WS/made-here" ] || fail "the workspace's file is not on the host"
pass "a skill writes its workspace and its own tmpfs, nothing beside the workspace"

# a root hidden by a later cover is not remounted (its path names that
# cover): it still enters, and the cover stays the skill's own
run "$BIN/tandem-sandbox-enter" "$pid" "$start" --size 1048576 \
    --hide "$ROOT" --cover "$T" --workspace "$WS" -- /bin/sh -c '
    touch ../beside && echo own-cover-writable' "$ROOT"
expect_rc 0 "the enter program with the root beneath a cover"
grep -q own-cover-writable "$T/out" || fail "lacks own-cover-writable: $(cat "$T/out" "$T/err")"
[ -e "$ROOT/session/beside" ] && fail "the cover's file reached the host"
pass "a root beneath a later cover is left to that cover"
