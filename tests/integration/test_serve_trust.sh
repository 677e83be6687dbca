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

# ...but not inside the git work tree the repository is in: git works in
# all of it, and another user may add names there
mkdir -p "$T/wt/open"
git -C "$T/wt" init -q
chmod 01777 "$T/wt/open"
repo wt/open/p
run tandem submit --detach --repo "$T/wt/open/p" "make the failing test pass"
expect_rc 2 "a task below a sticky directory inside its git work tree"
expect_in "$T/err" "others may write in $T/wt/open (mode 1777)"
[ ! -e "$T/wt/open/p/.tandem" ] || fail "a session was made in $T/wt/open/p"
pass "a sticky directory inside the git work tree above the repository is refused"

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

# ---- a link the client named, changed between the check and the use ---
# The server checks the real path of the repository a client sends; the
# session is made by that path, not by the path sent resolved again (a
# link on the way, in a directory another user may write in, changed in
# between led the session into a repository of theirs). The link here
# flips between a repository the server may act in and one it may not
# while the same client submits again and again.
mkdir "$T/flip"
repo flip/u
repo t
chmod 0777 "$T/flip"
start_serve --config "$T/serve.yaml" --max-sessions 1 --queue-max 200
mkdir "$T/d"
$PY - "$(cat "$EPFILE")" "$T/flip" "$T/t" "$T/serve.yaml" >"$T/race.out" 2>&1 <<'PY' ||
import ctypes, json, os, signal, sys, zmq
ep, flip, trusted, config = sys.argv[1:]
# the server's config, named the long way: resolving it, between the
# check of the repository and the making of the session, takes a while
base, name = os.path.split(config)
config = base + "/d/.." * ((900 - len(config)) // 6) + "/" + name
link, other = (flip + "/r").encode(), (flip + "/r.other").encode()
os.symlink(trusted, link)
os.symlink(flip + "/u", other)
libc = ctypes.CDLL(None, use_errno=True)
flipper = os.fork()
if flipper == 0:
    # the two links swapped (renameat2 RENAME_EXCHANGE) every 50 us or
    # so, in a process of its own, until the client is done
    libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    while libc.renameat2(-100, link, -100, other, 2) == 0:
        libc.usleep(50)
    os._exit(1)
s = zmq.Context.instance().socket(zmq.DEALER)
s.setsockopt(zmq.LINGER, 0)
s.connect(ep)
kinds = {}
try:
    for n in range(60):
        s.send_multipart([b"MDPC02", b"\x01", b"tandem.submit", json.dumps(
            {"tandem": 1, "type": "submit", "repo": link.decode(),
             "config": config, "detach": True,
             "task": "make the failing test pass"}).encode()])
        if not s.poll(20000):
            sys.exit("the server is silent")
        body = json.loads(s.recv_multipart()[3])
        kind = body.get("kind", body["type"])
        kinds[kind] = kinds.get(kind, 0) + 1
finally:
    os.kill(flipper, signal.SIGKILL)
    os.waitpid(flipper, 0)
print(kinds)
PY
    fail "the racing client: $(cat "$T/race.out")"
stop_serve
[ ! -e "$T/flip/u/.tandem" ] ||
    fail "a session was made in $T/flip/u, which the server may not act in ($(cat "$T/race.out"))"
expect_in "$T/race.out" "'accepted'"
pass "a task is made in the repository checked, not where a link sent leads later"

# ---- an earlier server's session, its path now through a link ----------
# Taken in a repository under a sticky directory (as /tmp), which its
# owner moved away since: another user may put a link of that name in
# the sticky directory, to where it went, and change it once the next
# server goes on with the session by that path. The path the session
# was taken in is checked, not where a link there leads.
serve_config "$T/held.yaml" \
    "while [ ! -e $T/held-gate ]; do sleep 0.02; done; make"
mkdir "$T/sticky" "$T/safe"
chmod 01777 "$T/sticky"
repo sticky/c
start_serve --config "$T/held.yaml" --max-sessions 1
run tandem submit --detach --repo "$T/sticky/c" "make the failing test pass"
expect_rc 0 "a task under a sticky directory, held at its build"
sc=$(cat "$T/out")
wait_for '"type":"task"' "$T/sticky/c/.tandem/sessions/$sc/journal.jsonl" $((30 * SLOW))
kill -KILL "$SERVE_PID"
wait "$SERVE_PID" 2>/dev/null
SERVE_PID=
mv "$T/sticky/c" "$T/safe/c"
ln -s "$T/safe/c" "$T/sticky/c"
cp "$T/safe/c/.tandem/sessions/$sc/journal.jsonl" "$T/c.journal"
: >"$T/serve.err"
start_serve --config "$T/held.yaml" --max-sessions 1
# its client, back for it, is told why it waits (it was told the session
# was accepted under another configuration), not where its repository is
run tandem submit --attach "$sc" --repo "$T/safe/c"
expect_rc 2 "attach to a session left for a path another user could change"
expect_in "$T/err" "another user could change the path to its repository"
expect_not_in "$T/err" "another configuration"
expect_not_in "$T/err" "$T/sticky"
stop_serve
expect_in "$T/serve.err" "session $sc of an earlier server is not taken over"
expect_in "$T/serve.err" "$T/sticky/c is a symbolic link"
cmp -s "$T/c.journal" "$T/safe/c/.tandem/sessions/$sc/journal.jsonl" ||
    fail "the session was gone on with through the link"
pass "an earlier server's session whose repository is now reached through a link is not taken over"
