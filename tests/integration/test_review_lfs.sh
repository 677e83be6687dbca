#!/bin/sh
# tandem review of a repository with Git LFS files: the export of the
# tree runs git-lfs's smudge filter, which fetched an object this
# machine lacks over its own HTTPS. A review never reaches the network:
# a missing object is said at once, naming the file and the fix, and a
# present one is reviewed with its content. The LFS server here is a
# loopback port that takes connections and never answers (before, the
# review hung on it).
. "$(dirname "$0")/lib.sh"

if ! command -v git-lfs >/dev/null 2>&1; then
    echo "note: git-lfs is not installed (tools/install-deps installs it);" \
        "the Git LFS review was not tried"
    exit 0
fi

# the server: counts the connections made to it, answers none
cat >"$T/silent.py" <<'PY'
import os, socket, sys
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(16)
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write(str(s.getsockname()[1]))
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
held = []
while True:
    c, _ = s.accept()
    held.append(c)
    with open(sys.argv[2], "a") as f:
        f.write("connection\n")
PY
: >"$T/connections"
/usr/bin/python3 "$T/silent.py" "$T/port" "$T/connections" &
BG_PIDS="$BG_PIDS $!"
wait_for_file "$T/port" 10

R=$T/lfs
mkdir -p "$R"
(cd "$R" && git init -q && git lfs install --local >/dev/null &&
    git lfs track '*.bin' >/dev/null &&
    printf 'real content A\n' >a.bin && printf 'real content B\n' >b.bin &&
    printf 'one\n' >t.txt && touch -d '1 hour ago' a.bin b.bin t.txt &&
    git add -A &&
    git -c user.email=t@example.com -c user.name=t commit -qm base &&
    git config lfs.url "http://127.0.0.1:$(cat "$T/port")/") ||
    fail "cannot make the LFS repository"
git -C "$R" show HEAD:a.bin | grep -q '^version https://git-lfs' ||
    fail "a.bin is not stored as an LFS pointer"
oid=$(git -C "$R" show HEAD:b.bin | sed -n 's/^oid sha256://p')
obj=$R/.git/lfs/objects/$(echo "$oid" | cut -c1-2)/$(echo "$oid" | cut -c3-4)/$oid
[ -f "$obj" ] || fail "b.bin's object is not where git-lfs keeps it"
mv "$obj" "$T/b.object"
# git reads b.bin again (through git-lfs's clean filter, which stores its
# object) only where the index cannot tell it unchanged: the files are
# older than the index, so no git diff of the review does
git -C "$R" diff --quiet HEAD -- b.bin && [ ! -f "$obj" ] ||
    fail "git diff put b.bin's object back"
cat >"$T/lfs.yaml" <<YAML
agents:
  reviewer:
    llm: {provider: command, command: 'cat >/dev/null; printf "{\\"verdict\\": \\"approve\\", \\"confidence\\": 0.9, \\"issues\\": [], \\"summary\\": \\"fine\\"}"'}
    skills: [test]
skills:
  test:
    command: 'grep -qx "real content A" a.bin && grep -qx "real content B" b.bin && grep -qx two t.txt'
    timeout_s: 60
YAML
printf 'two\n' >"$R/t.txt"

# an object not here: said at once, no connection made
TANDEM_TIMEOUT=20 run tandem review --repo "$R" --config "$T/lfs.yaml" \
    "t is two"
expect_rc 2 "a Git LFS object this machine does not have"
expect_in "$T/err" "tandem: b.bin is a Git LFS file whose object is not on this machine"
expect_in "$T/err" "git lfs fetch"
[ ! -s "$T/connections" ] ||
    fail "the review connected to the LFS server: $(cat "$T/connections")"
[ -f "$obj" ] && fail "the review fetched b.bin's object"
pass "a Git LFS object not on this machine is said at once, never fetched"

# with the object here, both files are reviewed with their content
mv "$T/b.object" "$obj"
TANDEM_TIMEOUT=20 run tandem review --repo "$R" --config "$T/lfs.yaml" \
    "t is two"
expect_rc 0 "Git LFS objects on this machine"
[ ! -s "$T/connections" ] || fail "the review connected to the LFS server"
pass "Git LFS files whose objects are here are reviewed with their content"
