#!/bin/sh
# tandem run --apply and --commit: the approved change goes into the
# user's tree only when it applies cleanly to the tree as it is at the
# end, and uncommitted work is never lost. The user edits the tree during
# the run: the build skill (sandbox: none) runs a script that edits
# $T/demo after the run took its snapshot, in a way the patch conflicts
# with, or not, and keeps a copy of the tree as the user left it.
. "$(dirname "$0")/lib.sh"

CASSETTE=$TOP/examples/demo/cassette.json

# The user's edits, made while the run goes on; $T/mode says which:
#   conflict  the line the patch changes (stats.c:11)
#   other     another file, and stats.c far from the hunk
#   readme    another file only
#   checkout  the branch "other" checked out (it breaks the build)
#   look      none: the tree the skill builds is kept, as $T/seen
#   kill      none: the run is killed (SIGKILL), once
# Each edit is made once, however often the skill runs; then the tree as
# the user left it (without .tandem/) is copied to $T/expected.
cat >"$T/edit.sh" <<SH
#!/bin/sh
mode=\$(cat '$T/mode')
case \$mode in
conflict)
    sed -i 's|^    return sum / count;\$|    return sum / count; /* mine */|' \
        '$T/demo/stats.c' ;;
other)
    sed -i 's|^    return best;\$|    return best; /* mine */|' \
        '$T/demo/stats.c' ;;
checkout)
    git -C '$T/demo' checkout -q other ;;
look)
    rm -rf '$T/seen' && mkdir '$T/seen' && cp -R . '$T/seen/' ;;
kill)
    if [ ! -e '$T/killed' ]; then
        touch '$T/killed'
        pkill -KILL -f -- '--repo $T/demo'
        sleep 60 # the agent running this dies with the run
    fi ;;
esac
case \$mode in
other | readme)
    grep -q 'my note' '$T/demo/README.md' ||
        echo 'my note' >>'$T/demo/README.md' ;;
esac
rm -rf '$T/expected' && mkdir '$T/expected' &&
    (cd '$T/demo' && tar cf - --exclude=.tandem .) |
    (cd '$T/expected' && tar xf -)
exec make
SH

# demo MODE: a fresh demo whose build skill edits it as MODE says.
demo() {
    copy_demo
    rm -rf "$T/expected"
    echo "$1" >"$T/mode"
    demo_config "$CASSETTE" <<YAML
skills:
  build: {command: [sh, '$T/edit.sh'], timeout_s: 60, sandbox: none}
  test: {command: make test, timeout_s: 60}
YAML
}

# apply_of: report.json's "apply", as one line of Python's repr
apply_of() {
    /usr/bin/python3 -c 'import json, sys
a = json.load(open(sys.argv[1]))["apply"]
print(a if a is None else (a["asked"], a["applied"], a["committed"],
      a["via"], a["paths"], a["why"] or ""))' "$(session_dir)/report.json"
}

# same_tree: $T/demo (without .tandem/) is byte for byte $T/expected
same_tree() {
    diff -r -x .tandem "$T/expected" "$T/demo" >"$T/tree.diff" ||
        fail "the tree changed: $(cat "$T/tree.diff")"
}

# ---- outside git: tandem's own applier ---------------------------------

demo conflict
run tandem run --apply --repo "$T/demo" "make the failing test pass"
expect_rc 5 "approved, not applied"
[ -d "$T/expected" ] || fail "the skill never edited the tree"
grep -q 'sum / count; /\* mine \*/' "$T/demo/stats.c" ||
    fail "the user's edit is gone"
same_tree
expect_in "$T/err" "tandem: not applied: the patch does not apply cleanly to the tree as it is now (stats.c:"
expect_in "$T/err" "your tree is as it was, and the approved patch is in $T/demo/.tandem/sessions/"
expect_in "$T/err" "/final.diff (exit 5)"
expect_in "$T/out" "+    return (double)sum / (double)count;" # stdout: the diff
apply_of >"$T/apply"
expect_in "$T/apply" "('apply', False, False, 'tandem', ['stats.c'], 'the patch does not apply cleanly"
pass "a conflicting edit made during the run: exit 5, the tree byte for byte as the user left it"

demo other
run tandem run --apply --repo "$T/demo" "make the failing test pass"
expect_rc 0 "approved and applied"
expect_in "$T/err" "tandem: applied the approved change to $T/demo: stats.c"
expect_in "$T/demo/stats.c" "    return (double)sum / (double)count;"
expect_in "$T/demo/stats.c" "    return best; /* mine */"
expect_in "$T/demo/README.md" "my note"
# the tree is what the user left plus the patch, nothing else
(cd "$T/expected" && git apply "$(session_dir)/final.diff") ||
    fail "final.diff does not apply to the user's tree"
same_tree
apply_of >"$T/apply"
expect_in "$T/apply" "('apply', True, False, 'tandem', ['stats.c'], '')"
pass "edits elsewhere made during the run: applied, the user's edits kept"

# without --apply the tree is left alone, whatever it holds
demo other
run tandem run --repo "$T/demo" "make the failing test pass"
expect_rc 0 "approved"
same_tree
[ "$(apply_of)" = None ] || fail "report.json's apply should be null"
pass "without --apply the tree is not touched"

# ---- in a git work tree: git apply, git commit -------------------------

# git_demo MODE: the demo committed, with a change to stats.h staged and
# one to test_stats.c not (both must stay as they are, out of any commit)
git_demo() {
    demo "$1"
    (cd "$T/demo" && git init -q && git config user.name t &&
        git config user.email t@example.invalid && git add -A &&
        git commit -q -m base &&
        echo '/* staged */' >>stats.h && git add stats.h &&
        echo '/* unstaged */' >>test_stats.c) >/dev/null ||
        fail "cannot make the git demo"
}

git_demo other
run tandem run --apply --repo "$T/demo" "make the failing test pass"
expect_rc 0 "approved and applied with git"
expect_in "$T/demo/stats.c" "    return (double)sum / (double)count;"
expect_in "$T/demo/stats.c" "    return best; /* mine */"
(cd "$T/expected" && git apply "$(session_dir)/final.diff") ||
    fail "final.diff does not apply to the user's tree"
same_tree
[ "$(cd "$T/demo" && git log --format=%s)" = base ] ||
    fail "--apply made a commit"
pass "git apply: an edit elsewhere in the same file, made during the run, is kept"

# killed while the change goes in: the session was approved for good
# before the tree was touched, so a resume finds it finished, and the
# change and final.diff are there. Before, the kill left the approval
# unjournaled, and the replay met its own change in the tree (a review
# found it escalating, the attempt diffs emptied). A git on PATH applies
# the patch, then waits to be killed.
git_demo other
REAL_GIT=$(command -v git)
mkdir -p "$T/slowgit"
cat >"$T/slowgit/git" <<SH
#!/bin/sh
case " \$* " in *" --check "*) check=1 ;; *) check= ;; esac
if [ "\$1" = apply ] && [ -z "\$check" ] && [ ! -e "$T/applied" ]; then
    "$REAL_GIT" "\$@"
    touch "$T/applied"
    sleep 60
fi
exec "$REAL_GIT" "\$@"
SH
chmod +x "$T/slowgit/git"
PATH="$T/slowgit:$PATH" "$BIN/tandem" run --apply --repo "$T/demo" \
    "make the failing test pass" >"$T/out" 2>"$T/err" &
pid=$!
i=0
until [ -e "$T/applied" ]; do
    i=$((i + 1))
    [ $i -gt 3000 ] && fail "the change never went in"
    kill -0 $pid 2>/dev/null || fail "tandem ended before applying: $(cat "$T/err")"
    sleep 0.01
done
kill -KILL $pid
wait $pid 2>/dev/null
pkill -f "$T/slowgit/git" 2>/dev/null
dir=$(ls -d "$T"/demo/.tandem/sessions/*/ | head -n 1)
dir=${dir%/}
expect_in "$dir/journal.jsonl" '"type":"finish","status":"approved"'
# and its report was written before the tree was touched, saying the
# change's fate is not known: before, the kill left no report.json,
# which no resume writes (a kill sweep found it)
expect_in "$dir/report.json" '"status": "approved"'
expect_in "$dir/report.json" "not known: tandem stopped while it put the change into the tree"
run tandem resume --repo "$T/demo" "$(basename "$dir")"
expect_rc 0 "the resume of a session killed while applying"
expect_in "$T/err" "already finished: approved"
expect_in "$T/demo/stats.c" "    return (double)sum / (double)count;"
[ -s "$dir/final.diff" ] || fail "final.diff is missing"
pass "killed while the change went in: the session is approved, the change, final.diff and a report there"

git_demo readme
run tandem run --commit --repo "$T/demo" "make the failing test pass"
expect_rc 0 "approved and committed"
expect_in "$T/err" "tandem: committed the approved change as "
(cd "$T/demo" && git log --format=%s -2) >"$T/log"
expect_in "$T/log" "The cast came after the integer division, so the"
expect_in "$T/log" "base"
(cd "$T/demo" && git show --name-only --format=%b HEAD) >"$T/show"
expect_in "$T/show" "Tandem-Session: $(basename "$(session_dir)")"
expect_in "$T/show" "stats.c"
expect_not_in "$T/show" "stats.h"
expect_not_in "$T/show" "README.md"
(cd "$T/demo" && git status --porcelain --untracked-files=no) >"$T/status"
expect_in "$T/status" "M  stats.h"      # still staged, not committed
expect_in "$T/status" " M test_stats.c" # still unstaged
expect_in "$T/status" " M README.md"    # edited during the run
# the committed stats.c is HEAD~'s plus the patch and nothing else
(cd "$T/demo" && git diff HEAD~ HEAD) >"$T/committed.diff"
expect_in "$T/committed.diff" "+    return (double)sum / (double)count;"
[ "$(grep -c '^[-+] ' "$T/committed.diff")" = 2 ] ||
    fail "the commit holds more than the patch: $(cat "$T/committed.diff")"
apply_of >"$T/apply"
expect_in "$T/apply" "('commit', True, True, 'git', ['stats.c'], '')"
pass "--commit: only the patch's files are committed; staged and unstaged work stays as it was"

# no identity for git: said before anything (it changed the tree, then
# failed to commit, and the next run was refused for the change it left)
git_demo readme
(cd "$T/demo" && git config --unset user.name && git config --unset user.email)
mkdir -p "$T/nohome"
cp "$T/demo/stats.c" "$T/stats.before"
run env -u GIT_AUTHOR_NAME -u GIT_AUTHOR_EMAIL -u GIT_COMMITTER_NAME \
    -u GIT_COMMITTER_EMAIL -u EMAIL HOME="$T/nohome" XDG_CONFIG_HOME="$T/nohome" \
    GIT_CONFIG_NOSYSTEM=1 "$BIN/tandem" run --commit --repo "$T/demo" \
    "make the failing test pass"
expect_rc 2 "--commit without an identity"
expect_in "$T/err" "--commit needs git to know who commits, and it does not (no author identity); set it with git config user.name"
cmp -s "$T/demo/stats.c" "$T/stats.before" || fail "stats.c changed"
[ ! -e "$T/demo/.tandem/sessions" ] || fail "a session was made"
pass "--commit without a git identity: exit 2 before a session, the tree as it was"

# a file git checks out converted (eol=crlf): the patch is of the
# checkout (CRLF), which git cannot apply to the file as git stores it
# (LF); the commit's file is made the way a commit of the user's would
# be (it was exit 5, "run with --apply and commit it yourself")
git_demo look
(cd "$T/demo" && printf 'stats.c text eol=crlf\n' >.gitattributes &&
    git add .gitattributes && git commit -qm crlf && rm stats.c &&
    git checkout -q stats.c) || fail "cannot check stats.c out as CRLF"
head_before=$(git -C "$T/demo" rev-parse HEAD)
run tandem run --commit --repo "$T/demo" "make the failing test pass"
expect_rc 0 "--commit of a file checked out converted"
[ "$(git -C "$T/demo" rev-parse HEAD~1)" = "$head_before" ] ||
    fail "no commit on the one before"
git -C "$T/demo" show HEAD:stats.c >"$T/committed.c"
expect_in "$T/committed.c" "    return (double)sum / (double)count;"
if grep -q "$(printf '\r')" "$T/committed.c"; then
    fail "the commit holds CR: $(cat -A "$T/committed.c" | head -3)"
fi
grep -q "(double)count;$(printf '\r')\$" "$T/demo/stats.c" ||
    fail "the work tree's line is not CRLF: $(cat -A "$T/demo/stats.c" | grep count)"
[ -z "$(git -C "$T/demo" status --porcelain -- stats.c)" ] ||
    fail "stats.c differs from the commit: $(git -C "$T/demo" status --porcelain)"
pass "--commit of a file git converts on checkout commits it as git stores it"

# a patch git cannot make the commit's files of, either way (a filter
# that fails when the commit's index is not the repository's: git status
# works, the commit's git add does not): nothing is changed, and it says
# what to do
git_demo look
(cd "$T/demo" && printf 'stats.c filter=broken\n' >.gitattributes &&
    git add .gitattributes && git commit -qm broken &&
    git config filter.broken.smudge 'sed "s/\$/\r/"' &&
    git config filter.broken.clean \
        'sh -c "[ -z \"\$GIT_INDEX_FILE\" ] && sed \"s/\r\$//\""' &&
    git config filter.broken.required true && rm stats.c &&
    git checkout -q stats.c) || fail "cannot set a filter"
cp "$T/demo/stats.c" "$T/stats.before"
head_before=$(git -C "$T/demo" rev-parse HEAD)
run tandem run --commit --repo "$T/demo" "make the failing test pass"
expect_rc 5 "--commit that git cannot commit"
expect_in "$T/err" "git cannot make the commit's files of the patch, so nothing was changed"
expect_in "$T/err" "run with --apply and commit it yourself"
cmp -s "$T/demo/stats.c" "$T/stats.before" || fail "stats.c changed"
[ "$(git -C "$T/demo" rev-parse HEAD)" = "$head_before" ] || fail "HEAD moved"
pass "--commit that git cannot commit changes nothing, and says what to do"

# broken_head: HEAD's Makefile does not build; the work tree's, mended
# and not committed, does (the user's staged and unstaged work kept)
broken_head() {
    (cd "$T/demo" && git stash -q &&
        printf '\n$(error HEAD does not build)\n' >>Makefile &&
        git commit -q -am 'breaks the build' && git stash pop -q --index &&
        sed -i '/HEAD does not build/d' Makefile) ||
        fail "cannot mend the Makefile in the work tree"
}

# --commit audits the tree it commits onto: HEAD's, without the user's
# uncommitted changes. It audited the work tree's files, so a Makefile
# the user had mended, uncommitted, made the build pass, and the commit,
# on HEAD's broken Makefile, did not build (exit 0, committed).
git_demo look
broken_head
run tandem run --commit --repo "$T/demo" "make the failing test pass"
[ -f "$T/seen/Makefile" ] || fail "the build skill never ran: $(cat "$T/err")"
expect_in "$T/seen/Makefile" "HEAD does not build"
expect_not_in "$T/seen/stats.h" "/* staged */"
expect_not_in "$T/seen/test_stats.c" "/* unstaged */"
expect_in "$T/err" "the tree of the commit --commit builds on, without your uncommitted changes ("
[ "$(cd "$T/demo" && git log --format=%s -1)" = "breaks the build" ] ||
    fail "a commit was made on a tree whose build fails: $(cd "$T/demo" && git log --oneline)"
expect_in "$T/demo/Makefile" "test: " # the user's mended Makefile, as it was
expect_not_in "$T/demo/Makefile" "HEAD does not build"
pass "--commit audits HEAD's tree, not the work tree's uncommitted changes"

# and so does its resume: the task record says the base is HEAD's tree,
# and the workspace record which commit (a resume took the work tree's
# files, mended Makefile and all)
git_demo kill
rm -f "$T/killed"
broken_head
run tandem run --commit --repo "$T/demo" "make the failing test pass"
[ -e "$T/killed" ] || fail "the run was never killed: $(cat "$T/err")"
echo look >"$T/mode"
dir=$(ls -d "$T"/demo/.tandem/sessions/*/ | head -n 1)
dir=${dir%/}
expect_in "$dir/journal.jsonl" '"on_head":true'
run tandem resume --repo "$T/demo" "$(basename "$dir")"
[ -f "$T/seen/Makefile" ] || fail "the resume ran no skill: $(cat "$T/err")"
expect_in "$T/seen/Makefile" "HEAD does not build"
expect_not_in "$T/seen/stats.h" "/* staged */"
pass "the resume of a --commit run audits the same commit's tree"

# HEAD moved during the run: a checkout of another branch, whose tree
# nobody audited (it does not build). --commit committed the patch onto
# it, exit 0; now it commits only onto the commit the change was
# audited on
git_demo checkout
(cd "$T/demo" && git stash -q && git checkout -q -b other &&
    printf '\n$(error this branch does not build)\n' >>Makefile &&
    git commit -q -am 'breaks the build' && git checkout -q - &&
    git stash pop -q --index) || fail "cannot make the other branch"
base=$(cd "$T/demo" && git rev-parse HEAD)
run tandem run --commit --repo "$T/demo" "make the failing test pass"
expect_rc 5 "approved, HEAD moved: not committed"
[ "$(cd "$T/demo" && git rev-parse --abbrev-ref HEAD)" = other ] ||
    fail "the run never checked out the other branch"
same_tree
[ "$(cd "$T/demo" && git log --format=%s)" = "$(printf 'breaks the build\nbase')" ] ||
    fail "a commit was made: $(cd "$T/demo" && git log --oneline)"
expect_in "$T/err" "tandem: not applied: HEAD moved while the run went on (from $(echo "$base" | cut -c1-12) to "
apply_of >"$T/apply"
expect_in "$T/apply" "('commit', False, False, 'git', ['stats.c'], 'HEAD moved"
pass "--commit after a checkout during the run: exit 5, nothing applied or committed"

git_demo conflict
run tandem run --commit --repo "$T/demo" "make the failing test pass"
expect_rc 5 "approved, not committed"
same_tree
[ "$(cd "$T/demo" && git log --format=%s)" = base ] ||
    fail "a commit was made"
expect_in "$T/err" "tandem: not applied: stats.c has changes of yours that are not committed"
apply_of >"$T/apply"
expect_in "$T/apply" "('commit', False, False, 'git', ['stats.c'],"
pass "--commit with changes of the user's in the patch's file: exit 5, nothing applied or committed"

git_demo conflict
run tandem run --apply --repo "$T/demo" "make the failing test pass"
expect_rc 5 "approved, not applied"
same_tree
expect_in "$T/err" "'git apply' failed"
pass "git apply --check refuses a conflicting edit; the tree is untouched"

# ---- refused before anything starts ------------------------------------

demo other
rm -rf "$T/demo/.tandem"
run tandem run --commit --repo "$T/demo" "make the failing test pass"
expect_rc 2 "--commit outside a git work tree"
expect_in "$T/err" "--commit commits the approved change with git, but $T/demo is not in a git work tree; use --apply"
[ ! -e "$T/demo/.tandem/sessions" ] || fail "a session was made"
[ ! -e "$T/expected" ] || fail "the run started"
pass "--commit outside a git work tree is exit 2 before the run"

# a repository with no commit yet, its files untracked: the run worked on
# HEAD's tree, empty, and failed "make found no Makefile ... fix
# skills.build in agents.yaml"; it is the missing commit, said up front
(cd "$T/demo" && git init -q && git config user.name t &&
    git config user.email t@example.invalid) || fail "cannot git init"
run tandem run --commit --repo "$T/demo" "make the failing test pass"
expect_rc 2 "--commit with no commit yet"
expect_in "$T/err" "--commit works on the tree of the commit HEAD names, and HEAD in $T/demo has no commit yet, so the run would see none of your files; make a first commit (git add, then git commit), or run without --commit"
expect_not_in "$T/err" "skills.build"
[ ! -e "$T/demo/.tandem/sessions" ] || fail "a session was made"
pass "--commit in a repository with no commit yet is exit 2 before the run, saying so"

run tandem review --apply --repo "$T/demo"
expect_rc 2 "review --apply"
expect_in "$T/err" "tandem review: --apply is for tandem run: a review judges a change that is already in your tree"
run tandem review --commit --repo "$T/demo"
expect_rc 2 "review --commit"
pass "tandem review refuses --apply and --commit"
