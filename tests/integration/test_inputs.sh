#!/bin/sh
# Files a person names (--config, --task-file, --diff) that cannot be
# what they claim: a FIFO, a device, a directory, a file too large, a
# config nested a megabyte deep. Each
# is exit 2 at once with a message naming the path and the fix, before
# anything starts; stdin still works, capped.
. "$(dirname "$0")/lib.sh"

# A regression here blocks (a FIFO waits for a writer forever): every
# tandem is killed after 10 s, which fails its exit-code check (124).
TANDEM_TIMEOUT=10

copy_demo
mkfifo "$T/fifo"
mkdir "$T/dir"
CONFIG_FIX="the config must be a regular file of at most 1 MiB"
TASK_FIX="give a regular file of at most 64 KiB, or - for stdin"

# a bad input must leave no session behind: nothing was started
expect_nothing_started() {
    [ ! -d "$T/demo/.tandem" ] || fail "a session was created for $1"
}

run tandem run --repo "$T/demo" --config "$T/fifo" "x"
expect_rc 2 "--config FIFO"
expect_in "$T/err" "$T/fifo is not a regular file (it is a FIFO); $CONFIG_FIX"
expect_nothing_started "--config FIFO"
pass "--config FIFO: exit 2, no wait for a writer"

run tandem run --repo "$T/demo" --config /dev/zero "x"
expect_rc 2 "--config /dev/zero"
expect_in "$T/err" "/dev/zero is not a regular file (it is a character device); $CONFIG_FIX"
pass "--config /dev/zero: exit 2"

run tandem run --repo "$T/demo" --config "$T/dir" "x"
expect_rc 2 "--config DIR"
expect_in "$T/err" "$T/dir is not a regular file (it is a directory); $CONFIG_FIX"
pass "--config DIR: exit 2"

# one byte over the cap, a comment all the way: refused from its size
head -c 1048577 /dev/zero | tr '\0' '#' >"$T/big.yaml"
run tandem run --repo "$T/demo" --config "$T/big.yaml" "x"
expect_rc 2 "--config over 1 MiB"
expect_in "$T/err" "$T/big.yaml is larger than 1048576 bytes; $CONFIG_FIX"
pass "--config over 1 MiB: exit 2"

# a megabyte of nesting kept libyaml busy for minutes: now refused at
# the 65th level, with its place
head -c 1048576 /dev/zero | tr '\0' '[' >"$T/deep.yaml"
run tandem run --repo "$T/demo" --config "$T/deep.yaml" "x"
expect_rc 2 "--config nested a megabyte deep"
expect_in "$T/err" "$T/deep.yaml:1:65: lists and mappings nested more than 64 levels deep; tandem reads nothing that deep, so flatten it"
expect_nothing_started "--config nested a megabyte deep"
pass "--config nested a megabyte deep: exit 2 at its place"

# the implicit REPO/agents.yaml is held to the same rules
mv "$T/demo/agents.yaml" "$T/agents.yaml.saved"
mkfifo "$T/demo/agents.yaml"
run tandem run --repo "$T/demo" "x"
expect_rc 2 "REPO/agents.yaml a FIFO"
expect_in "$T/err" "agents.yaml is not a regular file (it is a FIFO)"
rm "$T/demo/agents.yaml"
mv "$T/agents.yaml.saved" "$T/demo/agents.yaml"
expect_nothing_started "REPO/agents.yaml a FIFO"
pass "a FIFO as REPO/agents.yaml: exit 2"

run tandem run --repo "$T/demo" --task-file "$T/fifo"
expect_rc 2 "--task-file FIFO"
expect_in "$T/err" "--task-file: $T/fifo is not a regular file (it is a FIFO); $TASK_FIX"
pass "--task-file FIFO: exit 2, no wait for a writer"

run tandem run --repo "$T/demo" --task-file /dev/zero
expect_rc 2 "--task-file /dev/zero"
expect_in "$T/err" "--task-file: /dev/zero is not a regular file (it is a character device); $TASK_FIX"
run tandem run --repo "$T/demo" --task-file "$T/dir"
expect_rc 2 "--task-file DIR"
expect_in "$T/err" "--task-file: $T/dir is not a regular file (it is a directory); $TASK_FIX"
head -c 65537 /dev/zero | tr '\0' 'a' >"$T/big.txt"
run tandem run --repo "$T/demo" --task-file "$T/big.txt"
expect_rc 2 "--task-file over 64 KiB"
expect_in "$T/err" "--task-file: $T/big.txt is larger than 65536 bytes; $TASK_FIX"
expect_nothing_started "bad task files"
pass "--task-file /dev/zero, DIR, over 64 KiB: exit 2"

# stdin: endless is cut at the cap, a directory is an error (it was an
# empty task), and a task on stdin still runs
run tandem run --repo "$T/demo" --task-file - </dev/zero
expect_rc 2 "--task-file - from /dev/zero"
expect_in "$T/err" "--task-file -: stdin is larger than 65536 bytes"
run tandem run --repo "$T/demo" --task-file - <"$T/dir"
expect_rc 2 "--task-file - from a directory"
expect_in "$T/err" "--task-file -: cannot read stdin: Is a directory"
expect_nothing_started "bad stdin"
echo "make the failing test pass" |
    tandem run --repo "$T/demo" --task-file - >"$T/out" 2>"$T/err"
RC=$?
expect_rc 0 "a task on stdin"
expect_in "$(session_dir)/report.json" '"task": "make the failing test pass"'
pass "--task-file -: capped, and still read"

# a cassette named in the config: the agent would wait on a FIFO for
# ever; it is a configuration error before any agent starts
rm -rf "$T/demo/.tandem"
demo_config "$T/fifo"
run tandem run --repo "$T/demo" "x"
expect_rc 2 "cassette FIFO"
expect_in "$T/err" "agents.coder.llm.cassette: $T/fifo is not a regular file (it is a FIFO)"
expect_nothing_started "a FIFO as the cassette"
copy_demo
pass "a FIFO as the cassette: exit 2 before any agent starts"

run tandem review --repo "$T/demo" --diff "$T/fifo"
expect_rc 2 "--diff FIFO"
expect_in "$T/err" "--diff $T/fifo: $T/fifo is not a regular file (it is a FIFO)"
run tandem review --repo "$T/demo" --diff - </dev/zero
expect_rc 2 "--diff - from /dev/zero"
expect_in "$T/err" "--diff -: the diff on stdin is larger than 8388608 bytes"
pass "tandem review --diff FIFO and an endless stdin: exit 2"
