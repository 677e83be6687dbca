#!/bin/sh
# tandem submit --apply and --commit: a served session's approved change
# goes into the client's own tree, by the client (the server applies
# nothing a request asks), with tandem run's rules: all of it or nothing,
# and a commit holding the audited patch on the commit the server
# audited (HEAD's tree, not the work tree's files).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/serve_lib.sh"

FIXED='    return (double)sum / (double)count;'
serve_config "$T/serve.yaml"
start_serve --config "$T/serve.yaml" --max-sessions 2

# a git demo: committed, with stats.h staged and test_stats.c not (both
# stay as they are, out of any commit)
git_repo() { # NAME
    repo "$1"
    (cd "$T/$1" && git init -q && git config user.name t &&
        git config user.email t@example.invalid && git add -A &&
        git commit -q -m base && echo '/* staged */' >>stats.h &&
        git add stats.h && echo '/* unstaged */' >>test_stats.c) ||
        fail "cannot make the git repository $1"
}

# ---- --apply ---------------------------------------------------------------
repo a
run tandem submit --apply --repo "$T/a" "make the failing test pass"
expect_rc 0 "submit --apply"
expect_in "$T/a/stats.c" "$FIXED"
expect_in "$T/err" "tandem submit: applied the approved change to $T/a: stats.c"
expect_in "$T/out" "+$FIXED"
pass "submit --apply: the approved change is in the tree"

# the change no longer fits the tree: exit 5, the tree as it was
repo b
run tandem submit --detach --repo "$T/b" "make the failing test pass"
expect_rc 0 "detached"
sid=$(cat "$T/out")
wait_for '"type":"finish"' "$T/b/.tandem/sessions/$sid/journal.jsonl" 30
sed -i 's|^    return sum / count;$|    return sum / count; /* mine */|' "$T/b/stats.c"
cp "$T/b/stats.c" "$T/stats.mine"
run tandem submit --attach "$sid" --apply --repo "$T/b"
expect_rc 5 "attach --apply to a change that no longer applies"
expect_in "$T/err" "tandem submit: not applied: the patch does not apply cleanly"
cmp -s "$T/b/stats.c" "$T/stats.mine" || fail "the user's stats.c changed"
# another repository than the session's: nothing written there
repo c
run tandem submit --attach "$sid" --apply --repo "$T/c"
expect_rc 5 "attach --apply from another repository"
expect_in "$T/err" "is of $T/b, not of the repository here ($T/c)"
expect_not_in "$T/c/stats.c" "$FIXED"
pass "submit --attach ID --apply: exit 5 and nothing written when the change does not fit, or the repository is another"

# ---- --commit -------------------------------------------------------------
git_repo d
run tandem submit --commit --repo "$T/d" "make the failing test pass"
expect_rc 0 "submit --commit"
expect_in "$T/err" "tandem submit: committed the approved change as "
(cd "$T/d" && git show --name-only --format=%b HEAD) >"$T/show"
expect_in "$T/show" "Tandem-Session: "
expect_in "$T/show" "stats.c"
expect_not_in "$T/show" "stats.h"
(cd "$T/d" && git status --porcelain --untracked-files=no) >"$T/status"
expect_in "$T/status" "M  stats.h"
expect_in "$T/status" " M test_stats.c"
sid=$(sed -n 's/^tandem: session \([^:]*\): make.*/\1/p' "$T/err" | head -1)
expect_in "$T/d/.tandem/sessions/$sid/journal.jsonl" '"on_head":true'
expect_in "$T/d/.tandem/sessions/$sid/report.json" '"commit": "'
pass "submit --commit: the patch committed on the commit the server audited; staged and unstaged work stays"

# a session submitted without --commit audited the work tree's files, not
# a commit: it is not committed
git_repo e
run tandem submit --detach --repo "$T/e" "make the failing test pass"
sid=$(cat "$T/out")
wait_for '"type":"finish"' "$T/e/.tandem/sessions/$sid/journal.jsonl" 30
run tandem submit --attach "$sid" --commit --repo "$T/e"
expect_rc 5 "attach --commit to a session submitted without it"
expect_in "$T/err" "was not submitted with --commit"
[ "$(cd "$T/e" && git log --format=%s)" = base ] || fail "a commit was made"
expect_not_in "$T/e/stats.c" "$FIXED"
pass "attach --commit to a session submitted without --commit: exit 5, nothing written"

# ---- refused before anything is sent -----------------------------------------
run tandem submit --commit --repo "$T/a" "make the failing test pass"
expect_rc 2 "--commit outside a git work tree"
expect_in "$T/err" "not in a git work tree"
run tandem submit --apply --review --repo "$T/d"
expect_rc 2 "--apply with --review"
expect_in "$T/err" "--apply is for a task"
run tandem submit --commit --detach --repo "$T/d" "make the failing test pass"
expect_rc 2 "--commit with --detach"
expect_in "$T/err" "apply it when you attach"
pass "submit --apply/--commit: refused with --review, --detach, or --commit outside git"

stop_serve
