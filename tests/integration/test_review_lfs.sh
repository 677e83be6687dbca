#!/bin/sh
# tandem review (and run --commit) of a repository with Git LFS files:
# the export of the tree runs git-lfs's smudge filter, which fetched an
# object this machine lacks over its own HTTPS. A review never reaches
# the network, and writes nothing into the repository's .git: a file
# whose object is missing is its pointer file, as such a clone's own
# work tree holds it (a CI clone with GIT_LFS_SKIP_SMUDGE, git lfs pull
# --include), and the run says so; one whose object is here is written
# with its content. The LFS server here is a loopback port that takes
# connections and never answers (before, the review hung on it; then it
# failed, exit 2, on a file the change did not touch, and git-lfs wrote
# its log into .git/lfs/logs).
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
# config NAME COMMAND: $T/NAME.yaml, whose reviewer's skill runs COMMAND
config() {
    cat >"$T/$1.yaml" <<YAML
agents:
  coder:
    llm: {provider: command, command: 'cat >/dev/null; cat $T/coder.txt'}
  reviewer:
    llm: {provider: command, command: 'cat >/dev/null; printf "{\\"verdict\\": \\"approve\\", \\"confidence\\": 0.9, \\"issues\\": [], \\"summary\\": \\"fine\\"}"'}
    skills: [test]
skills:
  test:
    command: '$2'
    timeout_s: 60
YAML
}
# lfs.yaml: the skill checks both files have their content;
# missing.yaml: a.bin its content, b.bin its pointer
skills_config() {
    config "$1" "grep -qx \"real content A\" a.bin && $2 && grep -qx $3 t.txt"
}
skills_config lfs 'grep -qx "real content B" b.bin' two
skills_config missing "grep -qx \"oid sha256:$oid\" b.bin" two
printf 'two\n' >"$R/t.txt"
find "$R/.git/lfs" | sort >"$T/lfs.before"

# an object not here: that file is its pointer, the rest as before, no
# connection made, nothing written into .git/lfs (git-lfs's log of a
# failed fetch went to .git/lfs/logs)
TANDEM_TIMEOUT=20 run tandem review --repo "$R" --config "$T/missing.yaml" \
    "t is two"
expect_rc 0 "a Git LFS object this machine does not have, in a file not changed"
expect_in "$T/err" "tandem: workspace: 1 Git LFS file is its pointer file, not its content: its object is not on this machine, and tandem never fetches (git lfs fetch, or git lfs pull, brings it): b.bin"
expect_in "$T/err" "test pass"
expect_in "$(session_dir)/report.json" '"lfs_pointers": {'
/usr/bin/python3 -c 'import json, sys
w = json.load(open(sys.argv[1]))["workspace"]["lfs_pointers"]
assert w == {"files": 1, "named": ["b.bin"]}, w' "$(session_dir)/report.json" ||
    fail "report.json does not name b.bin as a pointer"
[ ! -s "$T/connections" ] ||
    fail "the review connected to the LFS server: $(cat "$T/connections")"
[ -f "$obj" ] && fail "the review fetched b.bin's object"
[ -e "$R/.git/lfs/logs" ] && fail "git-lfs wrote a log into .git/lfs/logs"
find "$R/.git/lfs" | sort | cmp -s "$T/lfs.before" - ||
    fail "the review wrote into .git/lfs: $(find "$R/.git/lfs" | sort | diff "$T/lfs.before" -)"
pass "a Git LFS object not on this machine: its file is its pointer, said, never fetched, nothing in .git"

# the caller's GIT_LFS_SKIP_SMUDGE (a CI job's) leaves a.bin, whose
# object is here, with its content: nothing need be fetched
GIT_LFS_SKIP_SMUDGE=1 TANDEM_TIMEOUT=20 run tandem review --repo "$R" \
    --config "$T/missing.yaml" "t is two"
expect_rc 0 "GIT_LFS_SKIP_SMUDGE in the environment"
pass "GIT_LFS_SKIP_SMUDGE: a Git LFS file whose object is here has its content"

# run --commit exports HEAD's tree the same way
git -C "$R" -c user.email=t@example.com -c user.name=t commit -qam two
printf 't.txt\n<<<<<<< SEARCH\ntwo\n=======\nthree\n>>>>>>> REPLACE\n' \
    >"$T/coder.txt"
skills_config missing "grep -qx \"oid sha256:$oid\" b.bin" three
GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.com GIT_COMMITTER_NAME=t \
    GIT_COMMITTER_EMAIL=t@example.com TANDEM_TIMEOUT=20 run tandem run \
    --commit --repo "$R" --config "$T/missing.yaml" "t is three"
expect_rc 0 "run --commit with a Git LFS object this machine does not have"
expect_in "$T/err" "tandem: workspace: 1 Git LFS file is its pointer file"
[ "$(git -C "$R" show HEAD:t.txt)" = three ] || fail "t.txt was not committed"
[ -e "$R/.git/lfs/logs" ] && fail "git-lfs wrote a log into .git/lfs/logs"
[ -f "$obj" ] && fail "run --commit fetched b.bin's object"
pass "run --commit: a Git LFS object not here leaves its file a pointer, said"

# with the object here, both files are reviewed with their content
mv "$T/b.object" "$obj"
printf 'two\n' >"$R/t.txt"
TANDEM_TIMEOUT=20 run tandem review --repo "$R" --config "$T/lfs.yaml" \
    "t is two"
expect_rc 0 "Git LFS objects on this machine"
expect_not_in "$T/err" "Git LFS"
[ ! -s "$T/connections" ] || fail "the review connected to the LFS server"
pass "Git LFS files whose objects are here are reviewed with their content"

# no_lfs_logs GIT_DIR WHAT: git-lfs wrote no log into GIT_DIR, nor into a
# submodule's repository under it (its log of a smudge that failed)
no_lfs_logs() {
    logs=$(find "$1" -path '*/lfs/logs*' | head -n 3)
    [ -z "$logs" ] || fail "$2 wrote git-lfs's log into the repository: $logs"
}
no_lfs_logs "$R/.git" "a review"

# a submodule's Git LFS file whose object is not here: the submodule's
# checkout (checkout-index of its own) ran git-lfs, which failed the
# review, exit 2, and wrote its log into .git/modules/sub/lfs/logs
S=$T/sub
M=$T/super
mkdir -p "$S" "$M"
(cd "$S" && git init -q && git lfs install --local >/dev/null &&
    git lfs track '*.bin' >/dev/null && printf 'sub S\n' >s.bin &&
    printf 'sub K\n' >k.bin && git add -A &&
    git -c user.email=t@example.com -c user.name=t commit -qm sub) ||
    fail "cannot make the submodule"
(cd "$M" && git init -q && printf 'one\n' >t.txt && git add t.txt &&
    git -c protocol.file.allow=always submodule add -q "$S" sub &&
    git -c user.email=t@example.com -c user.name=t commit -qm super &&
    git -C sub config lfs.url "http://127.0.0.1:$(cat "$T/port")/") ||
    fail "cannot make the superproject"
soid=$(git -C "$S" show HEAD:s.bin | sed -n 's/^oid sha256://p')
sobj=$M/.git/modules/sub/lfs/objects/$(echo "$soid" | cut -c1-2)
[ -d "$sobj" ] || fail "s.bin's object is not in the submodule's store"
rm -rf "$sobj"
# ...and its file a pointer in the submodule's work tree, as a clone
# without the object has it (with its content there, the review's git
# status of the submodule ran git-lfs's clean filter, which stored the
# object again, as any git status would)
git -C "$M/sub" show HEAD:s.bin >"$M/sub/s.bin"
printf 'two\n' >"$M/t.txt"
config sub "grep -qx \"sub K\" sub/k.bin && grep -qx \"oid sha256:$soid\" sub/s.bin"
find "$M/.git" | sort >"$T/super.before"
TANDEM_TIMEOUT=20 run tandem review --repo "$M" --config "$T/sub.yaml" \
    "t is two"
expect_rc 0 "a submodule's Git LFS object this machine does not have"
expect_in "$T/err" "tandem: workspace: 1 Git LFS file is its pointer file, not its content: its object is not on this machine, and tandem never fetches (git lfs fetch, or git lfs pull, brings it; in a submodule, run there: git -C sub lfs fetch): sub/s.bin"
expect_in "$T/err" "test pass"
/usr/bin/python3 -c 'import json, sys
w = json.load(open(sys.argv[1]))["workspace"]["lfs_pointers"]
assert w == {"files": 1, "named": ["sub/s.bin"]}, w' "$(session_dir)/report.json" ||
    fail "report.json does not name sub/s.bin as a pointer"
[ ! -s "$T/connections" ] ||
    fail "the review connected to the LFS server: $(cat "$T/connections")"
no_lfs_logs "$M/.git" "a review of a submodule's Git LFS file"
find "$M/.git" | sort | cmp -s "$T/super.before" - ||
    fail "the review wrote into .git: $(find "$M/.git" | sort | diff "$T/super.before" -)"
pass "a submodule's Git LFS object not here: its file is its pointer, said, nothing in .git"

# a change to a Git LFS file whose new object is not here: refused, exit
# 2, saying so (its checkout through git's filters ran git-lfs, whose
# fetch failed and wrote its log into .git/lfs/logs), staged or committed
printf 'new content A\n' >"$R/a.bin"
touch -d '1 hour ago' "$R/a.bin"
git -C "$R" add a.bin || fail "cannot stage a.bin"
noid=$(git -C "$R" show :a.bin | sed -n 's/^oid sha256://p')
nobj=$R/.git/lfs/objects/$(echo "$noid" | cut -c1-2)/$(echo "$noid" | cut -c3-4)/$noid
[ -f "$nobj" ] || fail "a.bin's new object is not where git-lfs keeps it"
rm "$nobj"
find "$R/.git/lfs" | sort >"$T/lfs.before"
lfs_refused() {
    expect_rc 2 "$1"
    [ ! -s "$T/connections" ] || fail "$1 connected to the LFS server"
    no_lfs_logs "$R/.git" "$1"
    find "$R/.git/lfs" | sort | cmp -s "$T/lfs.before" - ||
        fail "$1 wrote into .git/lfs: $(find "$R/.git/lfs" | sort | diff "$T/lfs.before" -)"
    expect_in "$T/err" "tandem: a.bin: a Git LFS file whose content after the change is not on this machine (its object is missing), and tandem never fetches, so the change cannot be reviewed: fetch it first (git lfs fetch), or leave it out of the change"
}
TANDEM_TIMEOUT=20 run tandem review --staged --repo "$R" \
    --config "$T/lfs.yaml" "a is new"
lfs_refused "a staged Git LFS file whose object is not here"
pass "a staged Git LFS file whose object is not here: refused, said, nothing in .git"

git -C "$R" -c user.email=t@example.com -c user.name=t commit -qm new ||
    fail "cannot commit a.bin"
rm -f "$nobj"
find "$R/.git/lfs" | sort >"$T/lfs.before"
PRE_COMMIT_FROM_REF=HEAD~1 PRE_COMMIT_TO_REF=HEAD TANDEM_TIMEOUT=20 \
    run tandem review --staged --repo "$R" --config "$T/lfs.yaml" "a is new"
lfs_refused "a committed Git LFS file whose object is not here"
pass "pre-commit's range: a Git LFS file whose new object is not here: refused, said, nothing in .git"

# a sparse checkout's files left out of it are written from git's index
# for a plain run: a Git LFS one whose object is not here ran git-lfs,
# which failed the run (exit 1, "cannot take the files outside the
# sparse checkout") and wrote its log into .git/lfs/logs; now it is its
# pointer, said, as an export's, and one whose object is here has its
# content
P=$T/sparse
mkdir -p "$P"
(cd "$P" && git init -q && git lfs install --local >/dev/null &&
    git lfs track '*.bin' >/dev/null && mkdir in out &&
    printf 'out A\n' >out/a.bin && printf 'out B\n' >out/b.bin &&
    printf 'one\n' >in/t.txt && git add -A &&
    git -c user.email=t@example.com -c user.name=t commit -qm base &&
    git sparse-checkout set in &&
    git config lfs.url "http://127.0.0.1:$(cat "$T/port")/") ||
    fail "cannot make the sparse checkout"
[ ! -e "$P/out/b.bin" ] || fail "out/b.bin is in the sparse checkout"
poid=$(git -C "$P" show HEAD:out/b.bin | sed -n 's/^oid sha256://p')
rm "$P/.git/lfs/objects/$(echo "$poid" | cut -c1-2)/$(echo "$poid" | cut -c3-4)/$poid" ||
    fail "out/b.bin's object is not where git-lfs keeps it"
printf 'in/t.txt\n<<<<<<< SEARCH\none\n=======\ntwo\n>>>>>>> REPLACE\n' \
    >"$T/coder.txt"
config sparse "grep -qx \"out A\" out/a.bin && grep -qx \"oid sha256:$poid\" out/b.bin"
find "$P/.git" | sort >"$T/sparse.before"
TANDEM_TIMEOUT=20 run tandem run --repo "$P" --config "$T/sparse.yaml" \
    "t is two"
expect_rc 0 "a sparse checkout's Git LFS object this machine does not have"
no_lfs_logs "$P/.git" "a run in a sparse checkout"
find "$P/.git" | sort | cmp -s "$T/sparse.before" - ||
    fail "the run wrote into .git: $(find "$P/.git" | sort | diff "$T/sparse.before" -)"
expect_in "$T/err" "tandem: workspace: 1 Git LFS file is its pointer file, not its content: its object is not on this machine, and tandem never fetches (git lfs fetch, or git lfs pull, brings it): out/b.bin"
expect_in "$T/err" "test pass"
/usr/bin/python3 -c 'import json, sys
w = json.load(open(sys.argv[1]))["workspace"]["lfs_pointers"]
assert w == {"files": 1, "named": ["out/b.bin"]}, w' "$(session_dir)/report.json" ||
    fail "report.json does not name out/b.bin as a pointer"
[ ! -s "$T/connections" ] || fail "the run connected to the LFS server"
pass "a sparse checkout's Git LFS object not here: its file is its pointer, said, nothing in .git"
