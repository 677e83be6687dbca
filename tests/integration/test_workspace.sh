#!/bin/sh
# What each attempt's checks run on: the repository's tracked files as
# the working tree has them, fresh for every attempt. Build outputs in the
# user's tree never stand in for what the change builds.
. "$(dirname "$0")/lib.sh"

# The demo as a git repository with a loose Makefile (test_stats does not
# depend on the library, as many test Makefiles miss a dependency) and a
# stale, untracked test_stats in the tree that always passes and is newer
# than test_stats.c, so make would not rebuild it: copied into the
# workspace, it would approve the first (wrong) fix.
git_demo() {
    copy_demo
    demo_config "$TOP/examples/demo/cassette.json"
    if [ -n "${1:-}" ]; then printf '%s\n' "$1" >>"$T/demo/agents.yaml"; fi
    [ "${2:-loose}" = loose ] && sed -i 's/^test: test_stats$/test: libstats.a test_stats/;
            s/^test_stats: test_stats.c libstats.a$/test_stats: test_stats.c/' \
        "$T/demo/Makefile"
    [ "${2:-loose}" != loose ] || grep -q '^test_stats: test_stats.c$' \
        "$T/demo/Makefile" || fail "the demo's Makefile changed; update this test"
    (cd "$T/demo" && git init -q && git add -A &&
        git -c user.name=t -c user.email=t@example.invalid commit -q -m base) ||
        fail "cannot make a git repository"
    printf '#!/bin/sh\necho "all tests passed"\n' >"$T/demo/test_stats"
    chmod 755 "$T/demo/test_stats"
    printf 'scratch\n' >"$T/demo/notes.txt"
}

git_demo
run tandem run --repo "$T/demo" "make the failing test pass"
expect_rc 0 "approved"
expect_in "$T/err" "workspace: 7 tracked files"
expect_in "$T/err" "2 untracked paths left out (workspace.include_untracked: true brings them in)"
expect_in "$T/err" "[1/3] revise: required skill test failed (exit 2)"
expect_in "$T/err" "approved after 2 iterations"
dir=$(session_dir)
expect_in "$dir/report.json" '"source": "git"'
expect_in "$dir/report.json" '"incremental": false'
expect_not_in "$dir/llm/attempt-1-proposal.json" "notes.txt"
# the user's tree is as it was
expect_in "$T/demo/test_stats" 'all tests passed'
(cd "$T/demo" && git diff --quiet) || fail "the user's tracked files changed"
pass "an untracked build output in the user's tree never reaches a workspace"

# uncommitted changes are part of the base
git_demo
rm "$T/demo/test_stats"
sed -i 's/return sum \/ count;/return (double)sum \/ (double)count;/' "$T/demo/stats.c"
run tandem run --repo "$T/demo" "make the failing test pass"
expect_rc 3 "the fix the cassette expects does not apply to the changed file"
expect_in "$T/err" "baseline: build pass, test pass, before any change"
expect_in "$T/err" "the SEARCH text was not found in stats.c"
pass "the user's uncommitted changes are in the base"

# include_untracked: the untracked files come in, and the run says so
git_demo 'workspace: {include_untracked: true}'
run tandem run --repo "$T/demo" "make the failing test pass"
expect_in "$T/err" "workspace: 9 files ("
expect_in "$T/err" "tracked, and 2 untracked (workspace.include_untracked)"
dir=$(session_dir)
expect_in "$dir/report.json" '"include_untracked": true'
pass "workspace.include_untracked brings untracked files in, and says so"

# incremental: build outputs stay between attempts; report and show say
# so (with the demo's own Makefile, which tracks its dependencies: with the
# loose one, attempt 2 would test attempt 1's binary, which is why it is
# an opt-in)
git_demo 'workspace: {incremental: true}' tracked-deps
rm "$T/demo/test_stats"
run tandem run --repo "$T/demo" "make the failing test pass"
expect_rc 0 "approved"
expect_in "$T/err" "build outputs stay between attempts (workspace.incremental)"
dir=$(session_dir)
expect_in "$dir/report.json" '"incremental": true'
run "$BIN/tandem" show --repo "$T/demo" "$(basename "$dir")"
expect_in "$T/out" "incremental: build outputs stayed between attempts"
pass "workspace.incremental is opt-in and reported"

# a sparse checkout: the files outside its cone are HEAD's as much as
# the others (a review and run --commit have them), so they are in the
# workspace, written from git's index, and the run says so; they were
# left out without a word, and a skill that needed one failed
git_demo
mkdir "$T/demo/in" "$T/demo/out"
echo a >"$T/demo/in/a"
echo b >"$T/demo/out/b"
(cd "$T/demo" && git add in out &&
    git -c user.name=t -c user.email=t@example.invalid commit -q -m dirs &&
    git sparse-checkout set in) || fail "cannot make a sparse checkout"
[ ! -e "$T/demo/out/b" ] || fail "git's sparse checkout left out/b in the tree"
demo_config "$TOP/examples/demo/cassette.json" "build, test, outside" <<'YAML'
skills:
  build: {command: make, timeout_s: 60}
  test: {command: make test, timeout_s: 60}
  outside: {command: "test -f out/b && grep -qx b out/b", timeout_s: 60}
YAML
run tandem run --repo "$T/demo" "make the failing test pass"
expect_rc 0 "approved, with out/b in every workspace"
expect_in "$T/err" "1 outside the sparse checkout, written from git's index"
[ ! -e "$T/demo/out/b" ] || fail "the user's sparse checkout was changed"
pass "a sparse checkout's files outside its cone are in the workspace"

# a partial clone's sparse checkout (git clone --filter=blob:none
# --sparse) lacks the blobs outside its cone: git fetched them from its
# remote to write them into the workspace, where tandem never fetches;
# they are left out, and the run says why
mv "$T/demo" "$T/origin"
git -C "$T/origin" config uploadpack.allowFilter true
git clone -q --filter=blob:none --sparse "file://$T/origin" "$T/demo" &&
    git -C "$T/demo" sparse-checkout set in || fail "cannot make a partial clone"
cp "$T/origin/agents.yaml" "$T/demo/agents.yaml"
blob=$(git -C "$T/demo" rev-parse HEAD:out/b)
git -C "$T/demo" rev-list --objects --missing=print HEAD | grep -qx "?$blob" ||
    fail "the partial clone has out/b's blob"
run tandem run --repo "$T/demo" "make the failing test pass"
expect_in "$T/err" "1 outside the sparse checkout left out: this partial clone does not have them, and tandem never fetches"
git -C "$T/demo" rev-list --objects --missing=print HEAD | grep -qx "?$blob" ||
    fail "tandem fetched out/b's blob from the partial clone's remote"
[ ! -e "$T/demo/out/b" ] || fail "the user's sparse checkout was changed"
# a review there needs HEAD's whole tree: a configuration error naming
# the fix, not exit 4 (a review that could not be done, which --on-error
# pass lets through)
echo "# changed" >>"$T/demo/in/$(ls "$T/demo/in" | head -n 1)"
run tandem review --repo "$T/demo"
expect_rc 2 "a review of a partial clone lacking blobs"
expect_in "$T/err" "this partial clone lacks files of the tree reviewed, and tandem never fetches"
git -C "$T/demo" rev-list --objects --missing=print HEAD | grep -qx "?$blob" ||
    fail "the review fetched out/b's blob from the partial clone's remote"
rm -rf "$T/origin"
pass "a partial clone's blobs outside its cone are never fetched; its review says what to do"

# a directory git does not track is taken whole, and the run says why
copy_demo
demo_config "$TOP/examples/demo/cassette.json"
run tandem run --repo "$T/demo" "make the failing test pass"
expect_rc 0 "approved"
expect_in "$T/err" "not in a git work tree, so every file is copied"
pass "a plain directory is copied whole"

# a tree over the workspace limit, taken whole: the message names the
# setting, as for git's files (it said only "the copy limit")
copy_demo
demo_config "$TOP/examples/demo/cassette.json" <<'YAML'
orchestrator:
  workspace_max_mb: 1
YAML
head -c 2000000 /dev/zero >"$T/demo/big.bin"
run tandem run --repo "$T/demo" "make the failing test pass"
[ "$RC" -ne 0 ] || fail "a tree over the limit was taken"
expect_in "$T/err" "raise orchestrator.workspace_max_mb"
pass "a whole tree over the workspace limit names the setting"

# the agents start once the workspace is made and hashed: before, its
# copy and hash ran on the thread that answers the agents, and on a
# large tree outlasted their heartbeats ("cannot reach ..., dropping it",
# even under review -q)
copy_demo
demo_config "$TOP/examples/demo/cassette.json"
run tandem run -v --repo "$T/demo" "make the failing test pass"
expect_rc 0 "a verbose run"
ws=$(grep -n "^tandem: workspace: " "$T/err" | head -n 1 | cut -d: -f1)
agent=$(grep -n "debug: started coder-1" "$T/err" | head -n 1 | cut -d: -f1)
[ -n "$ws" ] && [ -n "$agent" ] || fail "no workspace or agent start line: $(cat "$T/err")"
[ "$ws" -lt "$agent" ] || fail "the agents started before the workspace was made (lines $agent, $ws)"
pass "the agents start after the workspace is made and hashed"
