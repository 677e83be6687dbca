#!/bin/sh
# The pre-commit framework (Debian's pre-commit, tools/install-deps) with
# tandem's .pre-commit-hooks.yaml: a throwaway repository whose
# .pre-commit-config.yaml points repo: at a local git checkout of tandem
# (made here from this tree's manifest) and uses the hook id
# tandem-review. Offline: language system runs bin/tandem, nothing is
# downloaded, and the reviewer replays a cassette. A commit with a
# failing test is stopped; a clean one passes; one that changes no file
# passes.
. "$(dirname "$0")/lib.sh"

if ! command -v pre-commit >/dev/null 2>&1; then
    fail "pre-commit is not installed (tools/install-deps installs it)"
fi
PATH=$BIN:$PATH
export PATH
export PRE_COMMIT_HOME=$T/pre-commit-cache
export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.com
export GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@example.com
export GIT_CONFIG_NOSYSTEM=1 HOME=$T/home
mkdir -p "$HOME"

# A checkout of tandem holding this tree's manifest, as the framework
# clones it.
src=$T/tandem-src
mkdir -p "$src"
cp "$TOP/.pre-commit-hooks.yaml" "$src/"
(cd "$src" && git init -q && git add -A && git commit -qm tandem) ||
    fail "cannot make the tandem checkout"
rev=$(git -C "$src" rev-parse HEAD)

# The demo as a git repository using the hook; an untracked agents.yaml
# replays CASSETTE (tandem review finds REPO/agents.yaml).
git_demo() { # CASSETTE
    copy_demo
    rm -f "$T/demo/agents.yaml"
    cat >"$T/demo/.pre-commit-config.yaml" <<YAML
repos:
  - repo: $src
    rev: $rev
    hooks:
      - id: tandem-review
YAML
    (cd "$T/demo" && git init -q && git add -A && git commit -qm base &&
        pre-commit install >/dev/null) ||
        fail "cannot make the demo a git repository with pre-commit"
    demo_config "$1"
}
commit() { # ARGS...: git commit in the demo; $RC, and in $T/out what
    # the framework printed (it mixes the hook's streams)
    (cd "$T/demo" && git commit "$@") >"$T/out" 2>&1
    RC=$?
}
head_of() { git -C "$T/demo" rev-parse HEAD; }

# pre-commit validates the manifest as the framework reads it
run pre-commit validate-manifest "$TOP/.pre-commit-hooks.yaml"
expect_rc 0 "pre-commit validate-manifest"
pass "the manifest is valid for pre-commit $(pre-commit --version | sed 's/.* //')"

# a change whose test fails: the commit is stopped
git_demo "$TOP/examples/demo/cassette.json"
sed -i 's|^    return sum / count;|    return (double)(sum / (long)count);|' \
    "$T/demo/stats.c"
(cd "$T/demo" && git add stats.c)
before=$(head_of)
commit -m "half fix"
[ "$RC" != 0 ] || fail "pre-commit let a commit with a failing test through"
expect_in "$T/out" "tandem review"
expect_in "$T/out" "Failed"
expect_in "$T/out" "rejected: required skill test failed (exit 2)"
[ "$(head_of)" = "$before" ] || fail "HEAD moved though the hook failed"
pass "pre-commit stops a commit whose test fails, with tandem's findings"

# the right fix: the commit passes
git_demo "$FIX/cassette-review.json"
sed -i 's|^    return sum / count;|    return (double)sum / (double)count;|' \
    "$T/demo/stats.c"
(cd "$T/demo" && git add stats.c)
commit -m "fix the mean"
expect_rc 0 "the right fix"
expect_in "$T/out" "tandem review"
expect_in "$T/out" "Passed"
git -C "$T/demo" log -1 --format=%s | grep -q "^fix the mean$" ||
    fail "the approved change was not committed"
pass "pre-commit lets a clean commit through"

# nothing to review: the framework still runs the hook (always_run), and
# tandem passes it
commit --amend -m "fix the mean (reworded)"
expect_rc 0 "an amend of the message"
expect_in "$T/out" "Passed"
commit --allow-empty -m "empty"
expect_rc 0 "an empty commit"
expect_in "$T/out" "Passed"
pass "pre-commit passes a commit that changes no file (--amend, --allow-empty)"

# In CI the framework runs outside a commit: `pre-commit run --all-files`
# on a clean checkout stages nothing, and an empty staged change there is
# no commit of no file (git sets GIT_INDEX_FILE only for a commit's
# hooks): the hook fails, saying how to run it, instead of passing a bad
# commit unreviewed (it said "Passed"). With --from-ref/--to-ref it
# reviews those commits as one change.
prun() { # ARGS...: pre-commit run in the demo, outside any commit
    (cd "$T/demo" && env -u GIT_INDEX_FILE pre-commit run "$@") \
        >"$T/out" 2>&1
    RC=$?
}
git_demo "$TOP/examples/demo/cassette.json"
sed -i 's|^    return sum / count;|    return (double)(sum / (long)count);|' \
    "$T/demo/stats.c"
(cd "$T/demo" && git commit -q --no-verify -am "half fix") ||
    fail "cannot commit the half fix"
prun --all-files
[ "$RC" != 0 ] || fail "pre-commit run --all-files passed a bad commit unreviewed"
expect_in "$T/out" "Failed"
expect_in "$T/out" "the pre-commit framework runs this hook outside a commit"
expect_in "$T/out" "pre-commit run --from-ref BASE --to-ref HEAD"
prun --from-ref HEAD~1 --to-ref HEAD
[ "$RC" != 0 ] || fail "pre-commit run --from-ref/--to-ref passed a bad commit"
expect_in "$T/out" "Failed"
expect_in "$T/out" "rejected: required skill test failed (exit 2)"
git_demo "$FIX/cassette-review.json"
sed -i 's|^    return sum / count;|    return (double)sum / (double)count;|' \
    "$T/demo/stats.c"
(cd "$T/demo" && git commit -q --no-verify -am "fix the mean") ||
    fail "cannot commit the fix"
prun --from-ref HEAD~1 --to-ref HEAD
expect_rc 0 "pre-commit run --from-ref/--to-ref on the right fix"
expect_in "$T/out" "Passed"
sid=$(ls "$T/demo/.tandem/sessions")
expect_in "$T/demo/.tandem/sessions/$sid/change.diff" \
    "+    return (double)sum / (double)count;"
pass "in CI (pre-commit run outside a commit) nothing staged fails; --from-ref/--to-ref reviews those commits"

# refs that name no commit are CI's to fix (exit 2), not a review that
# could not be done, which --on-error pass would have let through
(cd "$T/demo" && env -u GIT_INDEX_FILE PRE_COMMIT_FROM_REF=no-such-ref \
    PRE_COMMIT_TO_REF=HEAD "$BIN/tandem" review --staged --on-error pass -q \
    "review this change") >"$T/out" 2>&1
RC=$?
expect_rc 2 "--from-ref naming no commit, under --on-error pass"
expect_in "$T/out" "pre-commit's --from-ref no-such-ref --to-ref HEAD"
pass "refs that name no commit are exit 2, whatever --on-error says"

# --on-error pass: a commit whose review could not be done goes in, and
# the person committing is told (the framework hides a passing hook's
# output unless the hook is verbose: it said "Passed" alone, and the
# commit went in unreviewed unsaid)
git_demo "$FIX/cassette-review.json"
cat >"$T/demo/.pre-commit-config.yaml" <<YAML
repos:
  - repo: $src
    rev: $rev
    hooks:
      - id: tandem-review
        args: [--on-error, pass]
YAML
sed -i 's|provider: replay, cassette: "[^"]*"|provider: command, command: [false], max_retries: 0|' \
    "$T/demo/agents.yaml"
grep -q 'command: \[false\]' "$T/demo/agents.yaml" ||
    fail "no model that fails in $(cat "$T/demo/agents.yaml")"
(cd "$T/demo" && git add .pre-commit-config.yaml &&
    git commit -q --no-verify -m "on-error pass") ||
    fail "cannot commit the hook's arguments"
sed -i 's|^    return sum / count;|    return (double)sum / (double)count;|' \
    "$T/demo/stats.c"
(cd "$T/demo" && git add stats.c)
commit -m "fix the mean, the model down"
expect_rc 0 "a commit whose review could not be done, under --on-error pass"
expect_in "$T/out" "Passed"
expect_in "$T/out" "--on-error pass lets it through unreviewed"
pass "under --on-error pass a commit the review could not judge goes in, and says so"

# an approved commit under the verbose hook prints nothing of tandem's
git_demo "$FIX/cassette-review.json"
sed -i 's|^    return sum / count;|    return (double)sum / (double)count;|' \
    "$T/demo/stats.c"
(cd "$T/demo" && git add stats.c)
commit -m "fix the mean"
expect_rc 0 "the right fix, quietly"
expect_not_in "$T/out" "tandem: "
pass "an approved commit prints nothing of tandem's under the framework"
