#!/bin/sh
# A sandboxed skill possesses none of the reviewer's keys. The session
# keyring (pam_keyinit makes one per login and links the user keyring
# into it; kinit, cifscreds and the like keep secrets there) is
# inherited across exec and into every namespace, and whoever possesses
# it reads its keys: model-written code run by `make test` read a key of
# the shell that started tandem, in a sandbox made from the reviewer's
# and in a bwrap of its own alike. Now each sandboxed skill starts in a
# new, empty session keyring; sandbox: none keeps the user's, as it keeps
# everything else of the user's.
. "$(dirname "$0")/lib.sh"

DEMO_CASSETTE=$TOP/examples/demo/cassette.json

# keyhelper add CMD...: join a new session keyring, add the key, run
# CMD; keyhelper read: what a skill finds of it
cat >"$T/keyhelper.c" <<'C'
#include <linux/keyctl.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    char buf[64];
    long id, n;

    if (argc == 2 && strcmp(argv[1], "read") == 0) {
        id = syscall(SYS_keyctl, KEYCTL_SEARCH, KEY_SPEC_SESSION_KEYRING,
                     "user", "tandem-test-key", 0);
        n = id < 0 ? -1
                   : syscall(SYS_keyctl, KEYCTL_READ, id, buf, sizeof(buf));
        if (n < 0)
            puts("key-not-read");
        else
            printf("key-read %.*s\n", (int)n, buf);
        return 0;
    }
    if (argc < 3 || strcmp(argv[1], "add") != 0)
        return 2;
    if (syscall(SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, "tandem-test") < 0 ||
        syscall(SYS_add_key, "user", "tandem-test-key", "KEYRING-SECRET-42",
                (size_t)17, KEY_SPEC_SESSION_KEYRING) < 0) {
        perror("keyhelper");
        return 77;
    }
    execvp(argv[2], argv + 2);
    perror(argv[2]);
    return 127;
}
C
cc -o "$T/keyhelper" "$T/keyhelper.c" || fail "cannot build the key helper"
if ! "$T/keyhelper" add true 2>/dev/null; then
    echo "ok - skipped: this kernel gives no keyrings"
    exit 0
fi

# run_with_key ENTER: the demo with a skill that looks for the key,
# sandboxed and not (ENTER: TANDEM_SANDBOX_ENTER, "" for the default)
run_with_key() {
    copy_demo
    cp "$T/keyhelper" "$T/demo/keyhelper"
    demo_config "$DEMO_CASSETTE" "build, test, boxed, open" <<'YAML'
skills:
  build: {command: make, timeout_s: 60}
  test: {command: make test, timeout_s: 60}
  boxed: {command: ./keyhelper read, required: false}
  open: {command: ./keyhelper read, required: false, sandbox: none}
YAML
    TANDEM_SANDBOX_ENTER=$1 TANDEM_TIMEOUT=120 run "$T/keyhelper" add \
        "$BIN/tandem" run --repo "$T/demo" "make the failing test pass"
    expect_rc 0 "the demo approves"
    dir=$(session_dir)
    [ "$(skill_output "$dir" boxed)" = key-not-read ] ||
        fail "a sandboxed skill read the session's key: $(skill_output "$dir" boxed)"
    [ "$(skill_output "$dir" open)" = "key-read KEYRING-SECRET-42" ] ||
        fail "sandbox: none lost the user's keyring: $(skill_output "$dir" open)"
}

run_with_key ""
expect_not_in "$dir/logs/reviewer-1.log" "in a sandbox of its own"
pass "a skill entered into the reviewer's sandbox possesses none of its keys"

run_with_key "$T/no-such-enter"
expect_in "$dir/logs/reviewer-1.log" "start a sandbox each"
pass "nor does one in a bwrap of its own; sandbox: none keeps the user's keys"
