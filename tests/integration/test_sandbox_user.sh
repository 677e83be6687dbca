#!/bin/sh
# A reviewer run by a user other than root makes its skills' sandboxes
# from its running one too (skills/holder.h), as root's does. bubblewrap
# run so maps the user to 0 in a first user namespace, mounts there, and
# runs its command in a second one; the enter program must join the one
# that owns the mounts, or every entry fails and falls back to a bwrap
# (the regression this checks). The skill runs as that user, as in a
# bwrap of its own. As root, the test runs tandem as nobody; as another
# user, as that user.
. "$(dirname "$0")/lib.sh"

DEMO_CASSETTE=$TOP/examples/demo/cassette.json
ENTERED="tr '\\\\0' ' ' </proc/1/cmdline | grep -q '[t]andem-sandbox-enter' && echo entered"

copy_demo
demo_config "$DEMO_CASSETTE" "build, test, inside, second" <<YAML
skills:
  build: {command: make, timeout_s: 60}
  test: {command: make test, timeout_s: 60}
  inside:
    required: false
    command: |
      $ENTERED
      echo "uid \$(id -u) gid \$(id -g)"
      grep -E '^(CapEff|NoNewPrivs):' /proc/self/status
      touch made-here && echo workspace-writable
      touch /rootfile.$$ 2>/dev/null && echo root-writable || echo root-read-only
      true
  second:
    required: false
    after: [inside]
    command: "$ENTERED; true"
YAML

if [ "$(id -u)" = 0 ]; then
    USER_ID=65534 GROUP_ID=65534
    AS="setpriv --reuid=$USER_ID --regid=$GROUP_ID --clear-groups --"
    # the user reaches its own directory only; what it writes is its own
    chmod 711 "$T"
    mkdir -p "$T/user"
    mv "$T/demo" "$T/user/demo"
    chown -R "$USER_ID:$GROUP_ID" "$T/user"
else
    USER_ID=$(id -u) GROUP_ID=$(id -g) AS=
    mkdir -p "$T/user"
    mv "$T/demo" "$T/user/demo"
fi
U=$T/user
mkdir -p "$U/tmp" "$U/home"
[ "$(id -u)" = 0 ] && chown "$USER_ID:$GROUP_ID" "$U/tmp" "$U/home"
# sanitizers report where the user may write; collected below
run $AS env HOME="$U/home" TMPDIR="$U/tmp" \
    ASAN_OPTIONS="log_path=$U/sanitizer:detect_leaks=1" \
    UBSAN_OPTIONS="log_path=$U/sanitizer:print_stacktrace=1" \
    TANDEM_TIMEOUT=120 "$BIN/tandem" run --repo "$U/demo" \
    "make the failing test pass"
for f in "$U"/sanitizer.*; do
    [ -e "$f" ] && mv "$f" "$T/"
done
expect_rc 0 "the demo approves as user $USER_ID"
dir=$(session_dir)
[ -n "$dir" ] || fail "no session directory in the output"
out=$(skill_output "$dir" inside)
for want in entered "uid $USER_ID gid $GROUP_ID" "CapEff:	0000000000000000" \
    "NoNewPrivs:	1" workspace-writable root-read-only; do
    case $out in *"$want"*) ;; *) fail "inside: lacks '$want': $out" ;; esac
done
case $(skill_output "$dir" second) in *entered*) ;;
*) fail "second: not entered: $(skill_output "$dir" second)" ;;
esac
expect_not_in "$dir/logs/reviewer-1.log" "in a sandbox of its own"
expect_not_in "$dir/logs/reviewer-1.log" "start a sandbox each"
pass "as user $USER_ID, skills enter the reviewer's sandbox and run as that user"
