#!/bin/sh
# tandem hook install|uninstall and the hook at work: git commit runs it;
# a rejected change is stopped, an approved one is committed silently, a
# commit that changes no file passes; a review that cannot be done stops
# the commit (exit 4) or, installed with --on-error pass, lets it through
# with a warning. Only tandem's own hook is written or removed, where git
# looks for hooks (core.hooksPath included).
. "$(dirname "$0")/lib.sh"

PATH=$BIN:$PATH
export PATH
export GIT_AUTHOR_NAME=t GIT_AUTHOR_EMAIL=t@example.com
export GIT_COMMITTER_NAME=t GIT_COMMITTER_EMAIL=t@example.com

# The demo as a git repository, with an untracked agents.yaml replaying
# CASSETTE (the hook finds REPO/agents.yaml as tandem review does).
git_demo() { # CASSETTE
    copy_demo
    rm -f "$T/demo/agents.yaml"
    (cd "$T/demo" && git init -q && git add -A && git commit -qm base) ||
        fail "cannot make the demo a git repository"
    demo_config "$1"
}
HALF='    return (double)(sum / (long)count);'
FIXED='    return (double)sum / (double)count;'
commit() { # ARGS...: git commit in the demo; $RC, $T/out, $T/err
    (cd "$T/demo" && git commit -q "$@") >"$T/out" 2>"$T/err"
    RC=$?
}
head_of() { git -C "$T/demo" rev-parse HEAD; }

# ---- install, and the hook at work ---------------------------------

git_demo "$TOP/examples/demo/cassette.json"
run tandem hook install --repo "$T/demo"
expect_rc 0 "hook install"
hook=$T/demo/.git/hooks/pre-commit
[ -x "$hook" ] || fail "no executable $hook"
expect_in "$hook" "# tandem-hook: written by 'tandem hook install'"
expect_in "$T/err" "wrote $T/demo/.git/hooks/pre-commit"
expect_not_in "$T/err" "not on PATH"
pass "hook install writes an executable, marked pre-commit hook"

# without tandem on PATH the hook would stop every commit: said at once
PATH=/usr/bin:/bin run "$BIN/tandem" hook install --repo "$T/demo"
expect_rc 0 "hook install, tandem not on PATH"
expect_in "$T/err" "warning: tandem is not on PATH"
pass "hook install warns when the hook cannot find tandem"

# a change whose test fails: rejected, the commit stopped
sed -i "s|^    return sum / count;|$HALF|" "$T/demo/stats.c"
(cd "$T/demo" && git add stats.c)
before=$(head_of)
commit -m "half fix"
[ "$RC" != 0 ] || fail "a commit with a failing test went through"
expect_in "$T/err" "rejected: required skill test failed (exit 2)"
[ "$(head_of)" = "$before" ] || fail "HEAD moved though the hook failed"
pass "a commit whose test fails is stopped, saying why"

# the right fix: approved, committed, nothing printed
git_demo "$FIX/cassette-review.json"
run tandem hook install --repo "$T/demo"
sed -i "s|^    return sum / count;|$FIXED|" "$T/demo/stats.c"
(cd "$T/demo" && git add stats.c)
commit -m "fix the mean"
expect_rc 0 "the right fix"
[ ! -s "$T/out" ] && [ ! -s "$T/err" ] ||
    fail "an approved commit printed something"
git -C "$T/demo" log -1 --format=%s | grep -q "^fix the mean$" ||
    fail "the approved change was not committed"
pass "an approved commit goes through silently"

# git commit -a: git runs the hook with GIT_INDEX_FILE naming the index
# being committed; a skill's own git (a test that makes a repository of
# its own) wrote into it, and was refused its lock: the commit was
# stopped, or took the skill's files. Skills see no git variable of the
# user's repository.
git_demo "$FIX/cassette-review.json"
{
    echo "skills:"
    echo "  build: {command: make, timeout_s: 60}"
    echo "  test: {command: make test, timeout_s: 60}"
    echo "  gitscratch:"
    echo "    command: 'env | grep ^GIT_ >&2; d=\$(mktemp -d) && cd \$d && git init -q && echo skill-junk >junk.txt && git add junk.txt'"
    echo "    required: true"
} | demo_config "$FIX/cassette-review.json" "build, test, gitscratch"
run tandem hook install --repo "$T/demo"
sed -i "s|^    return sum / count;|$FIXED|" "$T/demo/stats.c"
commit -a -m "fix the mean, all of it"
expect_rc 0 "git commit -a with a skill that uses git"
[ "$(git -C "$T/demo" show --format= --name-only HEAD)" = stats.c ] ||
    fail "the commit holds more than stats.c: $(git -C "$T/demo" show --stat HEAD)"
[ -z "$(git -C "$T/demo" status --porcelain --untracked-files=no)" ] ||
    fail "the index was left changed: $(git -C "$T/demo" status --short)"
pass "git commit -a: a skill's own git does not touch the commit's index"

# nothing to review: --amend of the message only, --allow-empty
commit --amend -m "fix the mean (reworded)"
expect_rc 0 "an amend of the message"
git -C "$T/demo" log -1 --format=%s | grep -q "reworded" ||
    fail "the amend did not happen"
commit --allow-empty -m "an empty commit"
expect_rc 0 "an empty commit"
git -C "$T/demo" log -1 --format=%s | grep -q "^an empty commit$" ||
    fail "the empty commit did not happen"
# as git runs a commit's hook: GIT_INDEX_FILE names the index it takes
run env GIT_INDEX_FILE="$T/demo/.git/index" "$BIN/tandem" review \
    --repo "$T/demo" --staged --allow-empty
expect_rc 0 "review --staged --allow-empty, nothing staged, in a commit"
expect_in "$T/err" "nothing to review: $T/demo has no staged changes; --allow-empty passes it"
run env GIT_INDEX_FILE="$T/demo/.git/index" "$BIN/tandem" review \
    --repo "$T/demo" --staged
expect_rc 2 "review --staged, nothing staged, no --allow-empty"
# outside a commit nothing staged is nothing looked at: not passed
run env -u GIT_INDEX_FILE "$BIN/tandem" review --repo "$T/demo" --staged \
    --allow-empty
expect_rc 2 "review --staged --allow-empty, nothing staged, no commit"
expect_in "$T/err" "has no staged changes (and no commit is being made: --allow-empty passes that only in a commit's hook)"
pass "a commit that changes no file passes (--amend, --allow-empty); outside a commit it does not"

# a review that cannot be done: exit 4 stops the commit; --on-error pass
# lets it through with a warning
echo '{"tandem_cassette": 1, "exchanges": []}' >"$T/empty.json"
demo_config "$T/empty.json"
echo "/* a comment */" >>"$T/demo/stats.c"
(cd "$T/demo" && git add stats.c)
before=$(head_of)
commit -m "unreviewable"
[ "$RC" != 0 ] || fail "an unreviewed commit went through (--on-error fail)"
expect_in "$T/err" "could not review:"
[ "$(head_of)" = "$before" ] || fail "HEAD moved though the review failed"
(cd "$T/demo" && sh .git/hooks/pre-commit) >"$T/out" 2>"$T/err"
RC=$?
expect_rc 4 "the hook itself when the review cannot be done"
run tandem hook install --repo "$T/demo" --on-error pass
expect_rc 0 "hook install --on-error pass"
commit -m "unreviewable, let through"
expect_rc 0 "--on-error pass"
expect_in "$T/err" "warning: could not review the change"
expect_in "$T/err" "--on-error pass lets it through unreviewed"
pass "a review that cannot be done stops the commit, or passes it with --on-error pass"

# ---- only tandem's own hook ----------------------------------------

printf '#!/bin/sh\necho mine\n' >"$hook"
run tandem hook install --repo "$T/demo"
expect_rc 2 "a foreign hook in the way"
expect_in "$T/err" "tandem hook install: $hook is another pre-commit hook, not tandem's; keep it"
expect_in "$T/err" "replace it with --force"
expect_in "$hook" "echo mine"
run tandem hook uninstall --repo "$T/demo"
expect_rc 0 "uninstall with a foreign hook"
expect_in "$T/err" "is not tandem's hook; left alone"
expect_in "$hook" "echo mine"
printf '#!/bin/sh\n# File generated by pre-commit: https://pre-commit.com\n' >"$hook"
run tandem hook install --repo "$T/demo"
expect_rc 2 "the pre-commit framework's hook in the way"
expect_in "$T/err" "add the hook id tandem-review to .pre-commit-config.yaml"
printf '#!/bin/sh\necho mine\n' >"$hook"
run tandem hook install --repo "$T/demo" --force
expect_rc 0 "hook install --force"
expect_in "$T/err" "replacing the hook that was there (--force)"
expect_in "$hook" "# tandem-hook:"
run tandem hook uninstall --repo "$T/demo"
expect_rc 0 "uninstall"
expect_in "$T/err" "removed $hook"
[ ! -e "$hook" ] || fail "uninstall left $hook"
run tandem hook uninstall --repo "$T/demo"
expect_rc 0 "uninstall with no hook"
expect_in "$T/err" "has no pre-commit hook; nothing to remove"
pass "only tandem's own hook is written or removed; --force replaces another"

# core.hooksPath, relative to the work tree, from a subdirectory
git -C "$T/demo" config core.hooksPath my-hooks
mkdir -p "$T/demo/sub"
run tandem hook install --repo "$T/demo/sub"
expect_rc 0 "hook install with core.hooksPath"
[ -x "$T/demo/my-hooks/pre-commit" ] || fail "core.hooksPath not honoured"
[ ! -e "$hook" ] || fail "wrote .git/hooks though core.hooksPath is set"
run tandem hook uninstall --repo "$T/demo"
expect_rc 0 "uninstall with core.hooksPath"
[ ! -e "$T/demo/my-hooks/pre-commit" ] || fail "uninstall left my-hooks/pre-commit"
# one outside the repository (a global core.hooksPath, shared by every
# repository): installed there without a word, the hook ran for all of
# them; now only with --force
git -C "$T/demo" config core.hooksPath "$T/shared-hooks"
run tandem hook install --repo "$T/demo"
expect_rc 2 "hook install into a hooks path outside the repository"
expect_in "$T/err" "outside the repository, so a hook there runs for every repository that uses that path"
[ ! -e "$T/shared-hooks/pre-commit" ] || fail "the shared hooks path got the hook"
run tandem hook install --force --repo "$T/demo"
expect_rc 0 "hook install --force into a shared hooks path"
[ -x "$T/shared-hooks/pre-commit" ] || fail "--force did not install it"
run tandem hook uninstall --repo "$T/demo"
git -C "$T/demo" config --unset core.hooksPath
pass "core.hooksPath is where the hook goes; one outside the repository only with --force"

# usage
mkdir -p "$T/plain"
run tandem hook install --repo "$T/plain"
expect_rc 2 "not a git repository"
expect_in "$T/err" "is not in a git repository"
expect_in "$T/err" "give one with --repo DIR"
run tandem hook install --on-error maybe --repo "$T/demo"
expect_rc 2 "a bad --on-error"
expect_in "$T/err" "--on-error must be fail (stop the commit) or pass (let it through), got \"maybe\""
run tandem hook
expect_rc 2 "no subcommand"
run tandem hook frob
expect_rc 2 "an unknown subcommand"
expect_in "$T/err" "tandem hook: unknown command 'frob'; use install or uninstall"
pass "usage errors name the fix"
