#!/bin/sh
# tandem serve runs a session in the repository a client named, and
# writes its journal, report and views there by path. Another local user
# who could move a directory on the way to it, or put a link in
# `.tandem`, could lead those writes anywhere the server's user may
# write. The server takes a task, an answer, or an earlier server's
# session only where nobody but its user and root can change the path:
# every directory from / to the repository its user's or root's, none
# that others may write in (a sticky one above the repository, as /tmp,
# is fine), and `.tandem` and `.tandem/sessions` its user's alone.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/serve_lib.sh"

serve_config "$T/serve.yaml" \
    "if grep -q 'return (double)sum / (double)count' stats.c; then while [ ! -e $T/gate ]; do sleep 0.02; done; fi; make"
mkdir "$T/open"
repo open/a
repo b
start_serve --config "$T/serve.yaml" --max-sessions 1

# ---- a task in a repository under a directory others may write in ------
chmod 0777 "$T/open"
run tandem submit --repo "$T/open/a" "make the failing test pass"
expect_rc 2 "a task under a directory anyone may write in"
expect_in "$T/err" "others may write in $T/open (mode 0777)"
expect_in "$T/err" "run the task as the repository's owner"
[ ! -e "$T/open/a/.tandem" ] || fail "a session was made in $T/open/a"
pass "a task whose repository another user could move is refused, naming the directory"

# the repository itself open to all, even sticky
chmod 0755 "$T/open"
chmod 01777 "$T/b"
run tandem submit --repo "$T/b" "make the failing test pass"
expect_rc 2 "a task in a repository anyone may write in"
expect_in "$T/err" "others may write in $T/b (mode 1777)"
[ ! -e "$T/b/.tandem" ] || fail "a session was made in $T/b"
chmod 0755 "$T/b"

# .tandem a link
ln -s "$T/elsewhere" "$T/b/.tandem"
run tandem submit --repo "$T/b" "make the failing test pass"
expect_rc 2 "a task in a repository whose .tandem is a link"
expect_in "$T/err" "$T/b/.tandem is a symbolic link"
[ ! -e "$T/elsewhere" ] || fail "the server wrote through the link"
rm "$T/b/.tandem"
pass "a repository others may write in, or whose .tandem is a link, is refused"

# ---- sticky above the repository is fine (as /tmp) ----------------------
chmod 01777 "$T/open"
run tandem submit --detach --repo "$T/open/a" "make the failing test pass"
expect_rc 0 "a task under a sticky directory"
sa=$(cat "$T/out")
run tandem submit --detach --repo "$T/b" "make the failing test pass"
expect_rc 0 "a second task, queued"
sb=$(cat "$T/out")
pass "a sticky directory above the repository is taken"

# ---- an earlier server's session, its repository opened up since -------
wait_for '"type":"proposal","attempt":2' "$T/open/a/.tandem/sessions/$sa/journal.jsonl" $((30 * SLOW))
expect_in "$T/b/.tandem/sessions/$sb/journal.jsonl" '"type":"task"'
kill -KILL "$SERVE_PID"
wait "$SERVE_PID" 2>/dev/null
SERVE_PID=
cp "$T/b/.tandem/sessions/$sb/journal.jsonl" "$T/b.journal"
chmod 0777 "$T/b"
touch "$T/gate"
: >"$T/serve.err"
start_serve --config "$T/serve.yaml" --max-sessions 1
wait_for '"type":"finish"' "$T/open/a/.tandem/sessions/$sa/journal.jsonl" $((30 * SLOW))
stop_serve
approved "$T/open/a/.tandem/sessions/$sa"
expect_in "$T/serve.err" "session $sb of an earlier server is not taken over"
expect_in "$T/serve.err" "others may write in $T/b (mode 0777)"
expect_in "$T/serve.err" "tandem resume --repo $T/b $sb"
cmp -s "$T/b.journal" "$T/b/.tandem/sessions/$sb/journal.jsonl" ||
    fail "the session in the opened repository was written to"
pass "an earlier server's session whose repository others may now write in is not taken over"

# mended: the next server takes it over
chmod 0755 "$T/b"
: >"$T/serve.err"
start_serve --config "$T/serve.yaml" --max-sessions 1
wait_for '"type":"finish"' "$T/b/.tandem/sessions/$sb/journal.jsonl" $((30 * SLOW))
stop_serve
approved "$T/b/.tandem/sessions/$sb"
pass "once mended, the next server takes the session over"
