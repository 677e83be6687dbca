#!/bin/sh
# tandem review: an existing change through the reviewer and the gate,
# with no coder: git changes (all, or staged only) against HEAD, or a
# patch file; rejected changes print their findings; the user's tree and
# git state are never touched.
. "$(dirname "$0")/lib.sh"

review_config() { # CASSETTE
    cat >"$T/review.yaml" <<YAML
agents:
  reviewer:
    llm: {provider: replay, cassette: "$1"}
    skills: [build, test]
skills:
  build: {command: make, timeout_s: 60}
  test: {command: make test, timeout_s: 60}
YAML
}
git_demo() {
    copy_demo
    rm -f "$T/demo/agents.yaml"
    (cd "$T/demo" && git init -q && git add -A &&
        git -c user.email=t@example.com -c user.name=t commit -qm base) ||
        fail "cannot make the demo a git repository"
}
FIXED='    return (double)sum / (double)count;'

# git changes against HEAD: the right fix is approved
git_demo
review_config "$FIX/cassette-review.json"
sed -i "s|^    return sum / count;|$FIXED|" "$T/demo/stats.c"
(cd "$T/demo" && git status --porcelain) >"$T/before"
run tandem review --repo "$T/demo" --config "$T/review.yaml" \
    "make the failing test pass"
expect_rc 0 "the right fix"
expect_in "$T/err" "[1/1] change: 1 hunk and file applied"
expect_in "$T/err" "approved after 1 iteration · 1 LLM call"
[ ! -s "$T/out" ] || fail "an approved review printed on stdout"
dir=$(session_dir)
expect_in "$dir/report.json" '"status": "approved"'
expect_in "$dir/change.diff" "+$FIXED"
expect_in "$dir/journal.jsonl" '"review":{"rev":"'
(cd "$T/demo" && git status --porcelain) >"$T/after"
cmp -s "$T/before" "$T/after" || fail "the review changed the git state"
grep -q "^$FIXED\$" "$T/demo/stats.c" || fail "the user's change was lost"
expect_no_leftovers "$dir"
pass "git changes against HEAD are reviewed and approved"

# the user's diff settings do not change what is reviewed: with
# diff.mnemonicPrefix every file read as a rename (exit 2); with
# diff.noprefix a path under a/ was another file; a textconv driver and
# diff.submodule=log would have fed the parser something else
git_demo
review_config "$FIX/cassette-review.json"
(cd "$T/demo" && git config diff.mnemonicPrefix true &&
    git config diff.suppressBlankEmpty true &&
    git config diff.submodule log && git config diff.upper.textconv 'tr a-z A-Z' &&
    echo 'stats.c diff=upper' >.git/info/attributes) ||
    fail "cannot configure git's diff"
sed -i "s|^    return sum / count;|$FIXED|" "$T/demo/stats.c"
run tandem review --repo "$T/demo" --config "$T/review.yaml" "fix"
expect_rc 0 "the right fix, under the user's diff settings"
expect_in "$(session_dir)/change.diff" "--- a/stats.c"
expect_in "$(session_dir)/change.diff" "+$FIXED"
pass "the user's diff settings (prefixes, textconv, blank lines) do not change the diff reviewed"


# -q: an approved change prints nothing at all
run tandem review -q --repo "$T/demo" --config "$T/review.yaml" \
    "make the failing test pass"
expect_rc 0 "the right fix, -q"
[ ! -s "$T/out" ] || fail "review -q printed on stdout"
[ ! -s "$T/err" ] || fail "review -q printed on stderr"
pass "review -q says nothing when the change is approved"

# --staged: only what a commit would take
run tandem review --repo "$T/demo" --config "$T/review.yaml" --staged
expect_rc 2 "nothing staged"
expect_in "$T/err" "nothing to review: $T/demo has no staged changes"
(cd "$T/demo" && git add stats.c)
run tandem review --repo "$T/demo" --config "$T/review.yaml" --staged \
    "make the failing test pass"
expect_rc 0 "the staged fix"
pass "--staged reviews the staged changes"

# a patch file: a half fix is rejected, the findings on stdout
copy_demo
review_config "$TOP/examples/demo/cassette.json"
cat >"$T/half.diff" <<'DIFF'
diff --git a/stats.c b/stats.c
--- a/stats.c
+++ b/stats.c
@@ -8,5 +8,5 @@
         return 0.0;
     for (size_t i = 0; i < count; i++)
         sum += values[i];
-    return sum / count;
+    return (double)(sum / (long)count);
 }
DIFF
run tandem review --repo "$T/demo" --config "$T/review.yaml" \
    --diff "$T/half.diff" "make the failing test pass"
expect_rc 1 "a half fix"
expect_in "$T/err" "[1/1] reject: required skill test failed (exit 2)"
expect_in "$T/err" "rejected: required skill test failed (exit 2)"
expect_in "$T/out" "### test (\`make test\`): fail, exit 2"
expect_in "$T/out" "FAIL stats_mean({1,2,3,4}) = 2.000000, expected 2.500000"
expect_in "$T/out" "Suggested fix: Convert before dividing"
grep -q '^    return sum / count;$' "$T/demo/stats.c" ||
    fail "the patch was applied to the user's tree"
pass "a patch that fails its tests is rejected with the findings"

# the findings on stdout carry a skill's output, but none of its escape
# codes: a review found `tandem review` writing them to the terminal
printf '%s\n' "printf 'bad \\033]0;PWNED\\007 \\033[2J end\\n'" "exit 1" \
    >"$T/demo/noisy.sh"
cat >"$T/esc.yaml" <<YAML
agents:
  reviewer:
    llm: {provider: command, command: [cat, "$FIX/command-demo/answer-2"]}
    skills: [noisy]
skills:
  noisy: {command: [sh, noisy.sh]}
YAML
run tandem review --repo "$T/demo" --config "$T/esc.yaml" \
    --diff "$T/half.diff" "make the failing test pass"
expect_rc 1 "a skill that prints escape codes"
expect_in "$T/out" "### noisy"
expect_in "$T/out" "bad ?]0;PWNED? ?[2J end"
if LC_ALL=C grep -q "$(printf '\033')" "$T/out"; then
    fail "an escape code reached stdout"
fi
pass "the findings on stdout carry no escape codes"

# a patch that does not apply is rejected, saying where
sed 's/sum += values\[i\];/sum += values[j];/' "$T/half.diff" >"$T/stale.diff"
run tandem review --repo "$T/demo" --config "$T/review.yaml" \
    --diff "$T/stale.diff"
expect_rc 1 "a stale patch"
expect_in "$T/err" "the proposal could not be applied"
expect_in "$T/err" "stats.c"
pass "a patch that does not apply is rejected"

# bad input: clear errors, exit 2, nothing started
echo "not a diff at all" >"$T/garbage"
run tandem review --repo "$T/demo" --config "$T/review.yaml" \
    --diff - <"$T/garbage"
expect_rc 2 "garbage on stdin"
expect_in "$T/err" "the diff on stdin: no file changes found (is it a unified diff?)"
run tandem review --repo "$T/demo" --config "$T/review.yaml" \
    --diff "$T/missing.diff"
expect_rc 2 "a missing patch file"
expect_in "$T/err" "--diff $T/missing.diff"
run tandem review --repo "$T/demo" --config "$T/review.yaml"
expect_rc 2 "not a git repository"
expect_in "$T/err" "is not a git repository with a commit (review a patch with --diff FILE instead)"
run tandem review --repo "$T/demo" --diff "$T/half.diff" --staged
expect_rc 2 "--diff with --staged"
expect_in "$T/err" "--staged picks git's staged changes; it cannot go with --diff"
# names without a/ and b/ (diff -u, svn diff): git apply reads them one
# directory down; it was reviewed, then rejected (exit 1) for that
printf -- '--- stats.c\n+++ stats.c\n@@ -1 +1 @@\n-#include "stats.h"\n+#include "stats.h" /* x */\n' >"$T/p0.diff"
run tandem review --repo "$T/demo" --config "$T/review.yaml" --diff "$T/p0.diff"
expect_rc 2 "a patch without a/ and b/"
expect_in "$T/err" "--diff $T/p0.diff: line 1: the file name 'stats.c' has no a/ and b/ directory before it"
expect_in "$T/err" "make the patch with git diff"
pass "bad input is refused with the fix"

# a review that could not be done says why on one line of words: its
# line breaks were '?' ("its configuration is wrong?  last lines"); a
# reviewer program that exits 2 after two lines on stderr (a cassette
# that is no cassette is exit 2 before anything starts: test_config_errors)
printf '#!/bin/sh\necho "reviewer: cannot start" >&2\necho "reviewer: its configuration is wrong" >&2\nexit 2\n' >"$T/bad-reviewer"
chmod +x "$T/bad-reviewer"
sed "s|^  reviewer:|  reviewer:\\n    command: $T/bad-reviewer|" "$T/review.yaml" >"$T/bad.yaml"
run tandem review --repo "$T/demo" --config "$T/bad.yaml" --diff "$T/half.diff"
expect_rc 4 "a reviewer that cannot start"
expect_in "$T/err" "could not review: agent reviewer-1 exited with status 2: its configuration is wrong "
expect_not_in "$T/err" "wrong?"
pass "a review that could not be done says why without '?' for line breaks"

# a review waiting for a person takes approve or reject only
copy_demo
review_config "$FIX/cassette-review.json"
cat >>"$T/review.yaml" <<'YAML'
gate:
  risk_paths: ["*.c"]
  escalate: queue
YAML
printf 'diff --git a/stats.c b/stats.c\n--- a/stats.c\n+++ b/stats.c\n@@ -10,3 +10,3 @@\n         sum += values[i];\n-    return sum / count;\n+%s\n }\n' "$FIXED" >"$T/fix.diff"
run tandem review --repo "$T/demo" --config "$T/review.yaml" \
    --diff "$T/fix.diff" "make the failing test pass"
expect_rc 3 "a risky change waits"
id=$(basename "$(session_dir)")
run "$BIN/tandem" guide --repo "$T/demo" "$id" -m "try harder"
expect_rc 2 "no coder to guide"
expect_in "$T/err" "is a review: there is no coder to guide"
run "$BIN/tandem" approve --repo "$T/demo" "$id"
expect_rc 0 "a person approves the review"
expect_in "$T/err" "approved"
pass "a risky change under review waits for a person"

# stats keep reviews apart from runs: a review is no task
run "$BIN/tandem" stats --repo "$T/demo" --json
expect_rc 0 "stats"
expect_in "$T/out" '"runs": 0'
/usr/bin/python3 -c '
import json, sys
s = json.load(open(sys.argv[1]))
r = s["reviews"]
assert r["sessions"] == s["sessions"] > 0, s
assert r["approved"] + r["rejected"] >= 1, r
assert s["by_state"] == {}, s["by_state"]
' "$T/out" || fail "stats did not count the reviews apart: $(cat "$T/out")"
run "$BIN/tandem" stats --repo "$T/demo"
expect_in "$T/out" "the figures below are the 0 runs'"
pass "stats count reviews apart from runs"

# a hunk goes where its header says: the same lines earlier in the file
# are not it (the review audited line 4 changed where line 8 was), and
# lines added to a file that was empty are reviewed (it was refused)
git_demo
review_config "$FIX/cassette-review.json"
printf 'A\nB\nA\nB\nA\nB\nA\nB\nA\n' >"$T/demo/rep.txt"
: >"$T/demo/empty.py"
(cd "$T/demo" && git add rep.txt empty.py &&
    git -c user.email=t@example.com -c user.name=t commit -qm rep) ||
    fail "cannot commit rep.txt"
sed -i "s|^    return sum / count;|$FIXED|" "$T/demo/stats.c"
sed -i '8s/B/C/' "$T/demo/rep.txt"
echo 'VERSION = 1' >"$T/demo/empty.py"
run tandem review --repo "$T/demo" --config "$T/review.yaml" \
    "make the failing test pass"
expect_rc 0 "a change with a repeated context"
dir=$(session_dir)
expect_in "$dir/change.diff" "@@ -5,5 +5,5 @@"
expect_in "$dir/attempt-1.diff" "@@ -5,5 +5,5 @@"
expect_not_in "$dir/attempt-1.diff" "@@ -1,7 +1,7 @@"
expect_in "$dir/attempt-1.diff" "+VERSION = 1"
pass "each hunk is audited where its header puts it; an empty file gains lines"

# a name git quotes, a mode change alone, a new symbolic link
git_demo
review_config "$FIX/cassette-review.json"
echo a >"$T/demo/ü.txt"
(cd "$T/demo" && git add ü.txt &&
    git -c user.email=t@example.com -c user.name=t commit -qm u) ||
    fail "cannot commit ü.txt"
echo b >"$T/demo/ü.txt"
sed -i "s|^    return sum / count;|$FIXED|" "$T/demo/stats.c"
run tandem review --repo "$T/demo" --config "$T/review.yaml" \
    "make the failing test pass"
expect_rc 0 "a change to ü.txt (it read as a rename)"
expect_in "$(session_dir)/attempt-1.diff" "+b"
(cd "$T/demo" && git checkout -q -- . && ln -s /etc/passwd link.txt &&
    git add link.txt)
run tandem review --repo "$T/demo" --config "$T/review.yaml" --staged
expect_rc 2 "a new symbolic link"
expect_in "$T/err" "a symbolic link (new file mode 120000)"
pass "quoted names are reviewed; a link is refused"

# modes: the tree audited is the one committed. The suite runs a script;
# a change that takes its execute bit away is rejected (the mode was
# dropped, and a review approved a commit whose `make test` could not
# run it), alone or beside an edit; a new executable script the suite
# runs is approved (it was made 0644, and failed to run)
git_demo
(cd "$T/demo" && sed -i "s|^    return sum / count;|$FIXED|" stats.c &&
    printf '#!/bin/sh\nexec ./test_stats\n' >check.sh && chmod +x check.sh &&
    sed -i 's|^\t./test_stats$|\t./check.sh|' Makefile && git add -A &&
    git -c user.email=t@example.com -c user.name=t commit -qm check) ||
    fail "cannot make the suite run a script"
grep -q check.sh "$T/demo/Makefile" || fail "the Makefile does not run check.sh"
# the critique a failing test asks for: a rejection
cat >"$T/reject.json" <<'JSON'
{"tandem_cassette": 1, "exchanges": [{"role": "reviewer", "attempt": 1,
 "call": 1, "answer": "{\"verdict\": \"revise\", \"confidence\": 0.9, \"issues\": [{\"type\": \"incorrect\", \"severity\": \"major\", \"file\": \"Makefile\", \"line\": 11, \"description\": \"The suite's script cannot run.\", \"evidence\": \"Permission denied\", \"suggested_fix\": \"Keep check.sh executable.\"}], \"summary\": \"The tests do not run.\"}",
 "usage": {"prompt_tokens": 1, "completion_tokens": 1}}]}
JSON
cat >"$T/modes.yaml" <<YAML
gate: {critique: on_trigger, check_paths: []}
agents:
  reviewer:
    llm: {provider: replay, cassette: "$T/reject.json"}
    skills: [build, test]
skills:
  build: {command: make, timeout_s: 60}
  test: {command: make test, timeout_s: 60}
YAML
(cd "$T/demo" && chmod -x check.sh && git add check.sh)
run tandem review --repo "$T/demo" --config "$T/modes.yaml" --staged
expect_rc 1 "the suite's script made not executable"
expect_in "$T/err" "change: 0 hunks and files applied, and the mode of 1 file"
expect_in "$(session_dir)/attempt-1.diff" "old mode 100755"
expect_in "$(session_dir)/attempt-1.diff" "new mode 100644"
(cd "$T/demo" && sed -i '1i /* stats */' stats.c && git add stats.c)
run tandem review --repo "$T/demo" --config "$T/modes.yaml" --staged
expect_rc 1 "an edit, and the suite's script made not executable"
(cd "$T/demo" && git reset -q --hard &&
    printf '#!/bin/sh\nexec ./test_stats\n' >run.sh && chmod +x run.sh &&
    sed -i 's|^\t./check.sh$|\t./run.sh|' Makefile && git add -A)
run tandem review --repo "$T/demo" --config "$T/modes.yaml" --staged
expect_rc 0 "a new executable script the suite runs"
expect_in "$(session_dir)/attempt-1.diff" "new file mode 100755"
[ -x "$T/demo/run.sh" ] && [ -x "$T/demo/check.sh" ] ||
    fail "the review changed the user's modes"
pass "a change's modes are audited: a script the suite runs made not executable is rejected, a new executable one approved"

# a name an edit cannot carry (a backslash, a tab; .git/ in a patch) is
# refused when the change is loaded, a usage error naming it (exit 2),
# never a review that could not be done (exit 4), which --on-error pass
# let through with the rest of the change unreviewed
(cd "$T/demo" && git reset -q && rm -f link.txt &&
    sed -i "s|^    return sum / count;|$FIXED|" stats.c && git add stats.c)
for kind in backslash tab; do
    case $kind in
    backslash) name='innocent\name.txt' shown=$name ;;
    tab) name=$(printf 'tab\tname.txt') shown='tab?name.txt' ;;
    esac
    echo x >"$T/demo/$name"
    (cd "$T/demo" && git add -- "$name") || fail "cannot stage $name"
    run tandem review --repo "$T/demo" --config "$T/review.yaml" --staged \
        --on-error pass --format github "make the failing test pass"
    expect_rc 2 "a staged file whose name holds a $kind, --on-error pass"
    expect_in "$T/err" "the git changes: '$shown' cannot be reviewed: path contains a control character or a backslash; rename it, or leave it out of the change"
    [ ! -s "$T/out" ] || fail "a refused change wrote findings on stdout"
    (cd "$T/demo" && git rm -q --cached -- "$name" && rm -f -- "$name")
done
# a name that is not UTF-8 (Latin-1): the refusal said "line 1: bytes
# that are not UTF-8", not which file; it names it as git quotes it, why
# (file names travel in JSON, UTF-8 only) and what to do. The same file
# in a patch of git's own, its name quoted, went on to a review, rejected
name=$(printf 'lat\351.txt')
echo a >"$T/demo/$name"
(cd "$T/demo" && git add -- "$name" && git diff --cached >"$T/latin1.diff") ||
    fail "cannot stage a Latin-1 name"
run tandem review --repo "$T/demo" --config "$T/review.yaml" --staged
expect_rc 2 "a staged file whose name is not UTF-8"
expect_in "$T/err" 'the git changes: "lat\351.txt" cannot be reviewed: its name is not UTF-8, and tandem carries file names in JSON bodies, which hold UTF-8 only; rename it to a UTF-8 name (git mv), or leave it out'
(cd "$T/demo" && git rm -q --cached -- "$name" && rm -f -- "$name")
run tandem review --repo "$T/demo" --config "$T/review.yaml" --diff "$T/latin1.diff"
expect_rc 2 "a patch of a file whose name is not UTF-8"
expect_in "$T/err" "--diff $T/latin1.diff: \"lat\\351.txt\" cannot be reviewed: its name is not UTF-8"
pass "a file whose name is not UTF-8 is refused by its name, with the fix"

printf -- '--- /dev/null\n+++ b/.git/hooks/post-checkout\n@@ -0,0 +1 @@\n+rm -rf ~\n' \
    >"$T/hook.diff"
run tandem review --repo "$T/demo" --config "$T/review.yaml" \
    --diff "$T/hook.diff" --on-error pass
expect_rc 2 "a patch that writes into .git/"
expect_in "$T/err" "'.git/hooks/post-checkout' cannot be reviewed"
pass "a path an edit cannot hold is a usage error when the change is loaded"

# a tree checked out with CRLF (eol=crlf, core.autocrlf): git diff gives
# the lines as git stores them (LF); each hunk still goes in, and the
# lines it puts there end in CRLF as the file's do (every hunk was
# refused)
git_demo
review_config "$FIX/cassette-review.json"
printf '*.c text eol=crlf\n' >"$T/demo/.gitattributes"
(cd "$T/demo" && git add .gitattributes &&
    git -c user.email=t@example.com -c user.name=t commit -qm crlf &&
    rm stats.c && git checkout stats.c) || fail "cannot check out with CRLF"
grep -q "$(printf '\r')" "$T/demo/stats.c" || fail "stats.c is not CRLF"
sed -i "s|^    return sum / count;\r|$FIXED\r|" "$T/demo/stats.c"
run tandem review --repo "$T/demo" --config "$T/review.yaml" \
    "make the failing test pass"
expect_rc 0 "a change in a CRLF checkout"
grep -q "^+$FIXED$(printf '\r')\$" "$(session_dir)/attempt-1.diff" ||
    fail "the line put in does not end in CRLF: $(cat -A "$(session_dir)/attempt-1.diff")"
pass "a CRLF checkout is reviewed, its line ends kept"

# the same change as a patch file, git's own (git diff > p): git apply
# in that tree applies it, and the check against git apply, made
# without the repository's attributes, rejected it ("Make the patch
# with git diff")
(cd "$T/demo" && git diff >"$T/crlf.diff" && git stash -q) ||
    fail "cannot make the patch"
run tandem review --repo "$T/demo" --config "$T/review.yaml" \
    --diff "$T/crlf.diff" "make the failing test pass"
expect_rc 0 "git diff's patch of a CRLF checkout"
pass "git diff's patch of a CRLF checkout is read as git apply reads it there"

# a file under a clean/smudge filter: git's diff is of what git stores
# (the clean side), the base as a checkout writes it (smudged); a staged
# change was rejected, "conf.txt does not hold at line 1 the lines the
# hunk changes", whatever it did. The tree reviewed is the change's
# checkout, and no object is written into the repository for it.
R=$T/filtered
mkdir -p "$R"
printf 'a=1\nkey=SECRET\nb=2\n' >"$R/conf.txt"
printf 'conf.txt filter=redact\n' >"$R/.gitattributes"
cat >"$T/filtered.yaml" <<YAML
agents:
  reviewer:
    llm: {provider: command, command: 'cat >/dev/null; printf "{\\"verdict\\": \\"approve\\", \\"confidence\\": 0.9, \\"issues\\": [], \\"summary\\": \\"fine\\"}"'}
    skills: [test]
skills:
  test:
    command: 'cat conf.txt; grep -qx key=SECRET conf.txt && grep -qx b=3 conf.txt'
    timeout_s: 60
YAML
(cd "$R" && git init -q && git config filter.redact.clean 'sed s/SECRET/xxx/' &&
    git config filter.redact.smudge 'sed s/xxx/SECRET/' && git add -A &&
    git -c user.email=t@example.com -c user.name=t commit -qm base) ||
    fail "cannot make the filtered repository"
[ "$(git -C "$R" show HEAD:conf.txt | sed -n 2p)" = key=xxx ] ||
    fail "the filter did not clean"
sed -i 's/^b=2$/b=3/' "$R/conf.txt"
(cd "$R" && git add conf.txt)
objects=$(find "$R/.git/objects" -type f | wc -l)
run tandem review --repo "$R" --config "$T/filtered.yaml" --staged "b is 3"
expect_rc 0 "a staged change to a file under a smudge filter"
expect_not_in "$T/err" "does not hold"
expect_in "$(session_dir)/attempt-1.diff" "+b=3"
run tandem review --repo "$R" --config "$T/filtered.yaml" "b is 3"
expect_rc 0 "an uncommitted change to a file under a smudge filter"
[ "$(find "$R/.git/objects" -type f | wc -l)" = "$objects" ] ||
    fail "the review wrote objects into the repository"
pass "a change to a file under a clean/smudge filter is reviewed as its checkout"

# git diff's patch of it (unstaged) is of the clean side too, against a
# work tree that holds the smudged one: git apply refuses it there, and
# so does a review, but it said the diff "was not made against this
# tree" and rejected the change (exit 1); it is a usage error, naming
# the file and the reviews that apply it as a checkout writes it
sed -i 's/^b=3$/b=4/' "$R/conf.txt"
(cd "$R" && git diff >"$T/filtered.diff")
expect_in "$T/filtered.diff" " key=xxx"
run tandem review --repo "$R" --config "$T/filtered.yaml" \
    --diff "$T/filtered.diff" "b is 4"
expect_rc 2 "git's patch of a file under a smudge filter"
expect_in "$T/err" "conf.txt is converted by git on checkout"
expect_in "$T/err" "tandem review --staged"
expect_not_in "$T/err" "not made against this tree"
# a patch of the file as checked out holds, and is reviewed
sed -i 's/^b=4$/b=3/' "$R/conf.txt"
printf 'a=2\nkey=SECRET\nb=3\n' >"$T/conf.new"
(cd "$R" && diff -u --label a/conf.txt --label b/conf.txt conf.txt \
    "$T/conf.new" >"$T/plain.diff"; true)
expect_in "$T/plain.diff" " key=SECRET"
run tandem review --repo "$R" --config "$T/filtered.yaml" \
    --diff "$T/plain.diff" "a is 2"
expect_rc 0 "a patch of the file as checked out"
pass "git's patch of a file git converts on checkout is refused, naming what to review"

# a filter .gitattributes names, required, whose program is not on this
# machine: the export failed, a review that could not be done (exit 4),
# which --on-error pass let through unreviewed, though it is the
# repository's setting to fix; a usage error now, naming it
(cd "$R" && git config filter.redact.required true &&
    git config filter.redact.smudge tandem-no-such-filter-program) ||
    fail "cannot configure the filter"
run tandem review --repo "$R" --config "$T/filtered.yaml" --staged \
    --on-error pass "b is 3"
expect_rc 2 "a required filter whose program is missing"
expect_in "$T/err" "conf.txt: smudge filter redact failed"
expect_in "$T/err" "filter.redact"
(cd "$R" && git config --unset filter.redact.required &&
    git config filter.redact.smudge 'sed s/xxx/SECRET/') ||
    fail "cannot restore the filter"
pass "a required filter that cannot run is the repository's to fix (exit 2)"

# a submodule: checkout-index writes it as an empty directory, so a
# build that needs its files failed on every change. Its recorded commit
# is checked out from its repository on this machine (the work tree's,
# or .git/modules when deinit'd); one not initialised stays empty, said.
S=$T/sub
mkdir -p "$S"
printf 'lib\n' >"$S/lib.txt"
(cd "$S" && git init -q && git add -A &&
    git -c user.email=t@example.com -c user.name=t commit -qm sub) ||
    fail "cannot make the submodule"
R=$T/super
mkdir -p "$R"
printf 'one\n' >"$R/a.txt"
(cd "$R" && git init -q && git add a.txt &&
    git -c protocol.file.allow=always submodule add -q "$S" sub &&
    git -c user.email=t@example.com -c user.name=t commit -qm super) ||
    fail "cannot make the superproject"
sed -e "s|cat conf.txt.*|test -f sub/lib.txt \&\& ! test -e sub/.git'|" \
    "$T/filtered.yaml" >"$T/super.yaml"
printf 'two\n' >>"$R/a.txt"
(cd "$R" && git add a.txt)
run tandem review --repo "$R" --config "$T/super.yaml" --staged "two"
expect_rc 0 "a change in a repository with a submodule"
expect_not_in "$T/err" "submodule"
# a commit's hook in a linked worktree has GIT_DIR: in the submodule's
# directory it named the superproject, whose commit it is not
run env GIT_DIR="$R/.git" "$BIN/tandem" review --repo "$R" \
    --config "$T/super.yaml" --staged "two"
expect_rc 0 "a change beside a submodule, GIT_DIR set"
expect_not_in "$T/err" "submodule"
# a submodule with changes of its own, not committed there: git's diff
# of the superproject gave its line as "Subproject commit ID-dirty", read
# as an edit of a file "sub", and every review of the work tree was
# rejected ("edit 1 changes sub, which does not exist"). A commit of the
# superproject takes none of them: the change is the rest, as for an
# untracked file.
printf 'changed in the submodule\n' >>"$R/sub/lib.txt"
run tandem review --repo "$R" --config "$T/super.yaml" "two"
expect_rc 0 "a change beside a submodule with uncommitted changes"
expect_not_in "$(session_dir)/change.diff" "Subproject"
expect_in "$(session_dir)/change.diff" "+two"
# ... and they are said to be left out: beside a change, and when they
# are all there is (it said "nothing to review: no uncommitted changes"
# with no word of the submodule); --staged takes the index alone
expect_in "$T/err" "workspace: the submodule sub has changes of its own, which a review of $R leaves out (a commit of it takes none of them): review them in the submodule itself (tandem review --repo $R/sub)"
# a review through a server: the client reads the change, and says it
# (the server sees only the diff); said before any server is asked
TANDEM_TIMEOUT=30 run tandem submit --review --repo "$R" \
    --connect "ipc://$T/nobody.sock" "two"
expect_rc 4 "submit --review with no server, a submodule with changes of its own"
expect_in "$T/err" "tandem submit: workspace: the submodule sub has changes of its own, which a review of $R leaves out"
run tandem review --repo "$R" --config "$T/super.yaml" --staged "two"
expect_rc 0 "staged changes beside a submodule with uncommitted changes"
expect_not_in "$T/err" "submodule"
(cd "$R" && git stash -q) || fail "cannot stash a.txt"
run tandem review --repo "$R" --config "$T/super.yaml" "two"
expect_rc 2 "a submodule's own changes alone"
expect_in "$T/err" "nothing to review: $R has no uncommitted changes; its submodule sub has changes of its own, which a review of $R leaves out (a commit of it takes none of them): review them in the submodule itself (tandem review --repo $R/sub)"
(cd "$R" && git stash pop -q && git add a.txt) || fail "cannot restore a.txt"
(cd "$R/sub" && git checkout -q -- lib.txt) || fail "cannot restore sub"
run tandem review --repo "$R" --config "$T/super.yaml" "two"
expect_rc 0 "a change beside a clean submodule"
expect_not_in "$T/err" "changes of its own"
(cd "$R" && git submodule deinit -q -f sub) || fail "cannot deinit"
run tandem review --repo "$R" --config "$T/super.yaml" --staged "two"
expect_rc 0 "a change beside a submodule deinit'd, in .git/modules"
git clone -q "$R" "$T/clone" || fail "cannot clone"
printf 'two\n' >>"$T/clone/a.txt"
(cd "$T/clone" && git add a.txt)
run tandem review --repo "$T/clone" --config "$T/super.yaml" --staged "two"
expect_rc 1 "a change beside a submodule not initialised"
expect_in "$T/err" "workspace: submodule sub is not initialised, so its directory is empty (git submodule update --init sub would fetch it; tandem never fetches)"
pass "a submodule's files are in the tree reviewed, or said missing"

# many submodules with changes of their own: named up to five, the rest
# counted
M=$T/many
mkdir -p "$M"
(cd "$M" && git init -q && for i in 1 2 3 4 5 6 7; do
    git -c protocol.file.allow=always submodule add -q "$S" "s$i" || exit 1
done && git -c user.email=t@example.com -c user.name=t commit -qm many) ||
    fail "cannot make a superproject of seven submodules"
for i in 1 2 3 4 5 6 7; do echo x >>"$M/s$i/lib.txt"; done
run tandem review --repo "$M" --config "$T/super.yaml" "x"
expect_rc 2 "seven submodules' own changes alone"
expect_in "$T/err" "its submodules s1, s2, s3, s4, s5 and 2 more have changes of their own, which a review of $M leaves out (a commit of it takes none of them): review them in each submodule (tandem review --repo $M/s1, and so on)"
for i in 3 4 5 6 7; do (cd "$M/s$i" && git checkout -q -- lib.txt); done
run tandem review --repo "$M" --config "$T/super.yaml" "x"
expect_in "$T/err" "its submodules s1 and s2 have changes of their own"
pass "the submodules with changes of their own, not reviewed, are named"

# the base is the commit as a checkout writes it: .gitattributes
# export-ignore and export-subst are for archives, not for the tree the
# skills judge (git archive left the tests out, so a change that broke
# them passed a suite of none)
R=$T/attr
mkdir -p "$R/tests"
printf 'add() { echo $(($1 + $2)); }\n' >"$R/calc.sh"
printf '. ./calc.sh\n[ "$(add 2 2)" = 4 ] || { echo "FAIL add 2 2"; exit 1; }\n' \
    >"$R/tests/add.sh"
printf '/tests export-ignore\nversion.txt export-subst\n' >"$R/.gitattributes"
printf '$Format:%%H$\n' >"$R/version.txt"
cat >"$T/attr.yaml" <<YAML
agents:
  reviewer:
    llm: {provider: command, command: 'cat >/dev/null; printf "{\\"verdict\\": \\"approve\\", \\"confidence\\": 0.9, \\"issues\\": [], \\"summary\\": \\"fine\\"}"'}
    skills: [test]
skills:
  test:
    command: 'grep -qx "[\$]Format:%H[\$]" version.txt || exit 7; for t in tests/*.sh; do [ -f "\$t" ] || continue; sh "\$t" || exit 1; done'
    timeout_s: 60
YAML
(cd "$R" && git init -q && git add -A &&
    git -c user.email=t@example.com -c user.name=t commit -qm base) ||
    fail "cannot make the repository"
sed -i 's/\$1 + \$2/$1 - $2/' "$R/calc.sh"
(cd "$R" && git add calc.sh)
run tandem review --repo "$R" --config "$T/attr.yaml" --staged "tidy add"
expect_rc 1 "a change that breaks tests a .gitattributes keeps out of archives"
expect_in "$T/out" "FAIL add 2 2"
pass "the base holds what export-ignore and export-subst would change"

# a change a person approved passes the next review of it on the same
# commit: the hook's commit after `tandem approve` escalated again, and
# only --no-verify got it in. Not a gate's approval, not another change,
# not another base.
git_demo
review_config "$FIX/cassette-review.json"
cat >>"$T/review.yaml" <<'YAML'
gate:
  risk_paths: ["*.c"]
  escalate: queue
YAML
sed -i "s|^    return sum / count;|$FIXED|" "$T/demo/stats.c"
(cd "$T/demo" && git add stats.c)
run tandem review --repo "$T/demo" --config "$T/review.yaml" --staged "make the failing test pass"
expect_rc 3 "a risky staged change waits for a person"
id=$(basename "$(session_dir)")
run tandem review --repo "$T/demo" --config "$T/review.yaml" --staged "make the failing test pass"
expect_rc 3 "not approved yet: asked again"
run "$BIN/tandem" approve --repo "$T/demo" "$id"
expect_rc 0 "a person approves it"
n=$(ls "$T/demo/.tandem/sessions" | wc -l)
run tandem review --repo "$T/demo" --config "$T/review.yaml" --staged "make the failing test pass"
expect_rc 0 "the change a person approved"
expect_in "$T/err" "a person approved this change on this commit in session $id: it passes"
[ "$(ls "$T/demo/.tandem/sessions" | wc -l)" = "$n" ] || fail "a session was made"
run tandem review -q --repo "$T/demo" --config "$T/review.yaml" --staged "make the failing test pass"
expect_rc 0 "the same, -q"
[ ! -s "$T/err" ] || fail "-q said: $(cat "$T/err")"
# another change: reviewed again
sed -i 's|^    return (double)sum / (double)count;|    return (double)sum / (double)count + 0;|' "$T/demo/stats.c"
(cd "$T/demo" && git add stats.c)
run tandem review --repo "$T/demo" --config "$T/review.yaml" --staged "make the failing test pass"
[ "$RC" -ne 0 ] || fail "another change passed on an earlier approval"
expect_not_in "$T/err" "a person approved this change"
pass "a change a person approved passes its next review on the same commit"

# the first commit of a repository: no HEAD yet, so every staged file is
# new on an empty base (it was exit 2 whatever --on-error said, and the
# hook stopped a new repository's first commit)
R=$T/first
mkdir -p "$R"
printf 'echo ok\n' >"$R/check.sh"
printf 'hello\n' >"$R/README"
(cd "$R" && git init -q && git add check.sh README) || fail "cannot make the repository"
sed 's|^    command: .*|    command: sh check.sh|' "$T/attr.yaml" >"$T/first.yaml"
run tandem review --repo "$R" --config "$T/first.yaml" --staged "first commit"
expect_rc 0 "the first commit, staged"
expect_in "$T/err" "[1/1] change: 2 hunks and files applied"
expect_in "$(session_dir)/change.diff" "+++ b/check.sh"
[ -z "$(cd "$R" && git log --oneline 2>/dev/null)" ] || fail "a commit was made"
# a branch whose commit is lost is no first commit: nothing reviewed
# against an empty base (it was, and approved the whole tree)
(cd "$R" && git -c user.email=t@example.com -c user.name=t commit -qm first &&
    ref=$(git symbolic-ref HEAD) &&
    echo 1111111111111111111111111111111111111111 >".git/$ref" &&
    printf 'more\n' >>README && git add README) || fail "cannot lose the commit"
run tandem review --repo "$R" --config "$T/first.yaml" --staged "x"
expect_rc 2 "a branch whose commit is lost"
expect_not_in "$T/err" "hunks and files applied"
pass "a repository's first commit is reviewed on an empty base; a lost commit is not a first one"

# git failing (a damaged repository) is a review that could not be done
# (exit 4, as the README says; it was exit 2, which --on-error does not
# change), and the message names git's command, not its -c option
git_demo
review_config "$FIX/cassette-review.json"
sed -i "s|^    return sum / count;|$FIXED|" "$T/demo/stats.c"
obj=$(cd "$T/demo" && git rev-parse HEAD:stats.c)
rm -f "$T/demo/.git/objects/$(echo "$obj" | cut -c1-2)/$(echo "$obj" | cut -c3-)"
run tandem review --repo "$T/demo" --config "$T/review.yaml" "make the failing test pass"
expect_rc 4 "git cannot read the repository"
expect_in "$T/err" "could not review: 'git diff' failed"
run tandem review --on-error pass --repo "$T/demo" --config "$T/review.yaml" "make the failing test pass"
expect_rc 0 "the same under --on-error pass"
mkdir -p "$T/plain"
run tandem review --repo "$T/plain" --config "$T/review.yaml" "x"
expect_rc 2 "not a git repository"
expect_in "$T/err" "is not a git repository with a commit"
pass "git failing is could-not-review (4); no repository at all is a usage error (2)"

# a staged line that is not UTF-8 (Latin-1): refused, whatever --on-error
# says; it was audited as U+FFFD while the commit kept the byte
git_demo
review_config "$FIX/cassette-review.json"
printf '/* caf\351 */\n' >>"$T/demo/stats.c"
(cd "$T/demo" && git add stats.c)
run tandem review --repo "$T/demo" --config "$T/review.yaml" --staged \
    --on-error pass "x"
expect_rc 2 "a Latin-1 line"
expect_in "$T/err" "b/stats.c: bytes that are not UTF-8"
pass "a change whose lines are not UTF-8 is refused, not audited as something else"

# a line added to a file over the 4 MiB a file of a change may be: the
# review rejected the change (exit 1, "the proposal could not be applied:
# big.txt is larger than 4194304 bytes") though nothing was judged; it
# is refused when the change is loaded, as the file created whole is
git_demo
review_config "$FIX/cassette-review.json"
yes 'a line of a large generated file' | head -c 5000000 >"$T/demo/big.txt"
(cd "$T/demo" && git add big.txt &&
    git -c user.email=t@example.com -c user.name=t commit -qm big) ||
    fail "cannot commit big.txt"
echo 'one more line' >>"$T/demo/big.txt"
run tandem review --repo "$T/demo" --config "$T/review.yaml" --on-error pass "x"
expect_rc 2 "an edit of a file over 4 MiB"
expect_in "$T/err" "the git changes: big.txt is too large to review (4883 KiB"
expect_in "$T/err" "git commit --no-verify"
pass "an edit of a file too large for a review is refused, naming it, not rejected"

# a file just under the limit that the edit takes over it: rejected (exit
# 1, "edit 1 makes big.txt larger than 4194304 bytes"), nothing judged
git_demo
review_config "$FIX/cassette-review.json"
yes 'a line of a large generated file' | head -c 4194000 >"$T/demo/big.txt"
(cd "$T/demo" && git add big.txt &&
    git -c user.email=t@example.com -c user.name=t commit -qm big) ||
    fail "cannot commit big.txt"
yes 'one more line' | head -c 2000 >>"$T/demo/big.txt"
run tandem review --repo "$T/demo" --config "$T/review.yaml" --on-error pass "x"
expect_rc 2 "an edit that takes a file over 4 MiB"
expect_in "$T/err" "the git changes: big.txt is too large to review once edited (4098 KiB"
pass "an edit that takes a file past the limit is refused, naming it, not rejected"

# a tracked file whose name no manifest can carry (a line break), which
# the change does not touch: every review failed (exit 4, which --on-error
# pass lets through), naming no file; now it is left out of what goes to
# reviewers on other hosts, and said
git_demo
review_config "$FIX/cassette-review.json"
(cd "$T/demo" && printf 'x\n' >"$(printf 'new\nline.txt')" && git add -A &&
    git -c user.email=t@example.com -c user.name=t commit -qm odd) ||
    fail "cannot commit a file with a line break in its name"
sed -i "s|^    return sum / count;|$FIXED|" "$T/demo/stats.c"
run tandem review --repo "$T/demo" --config "$T/review.yaml" "fix"
expect_rc 0 "a change beside a file whose name holds a line break"
expect_in "$T/err" "left out of the tree sent to reviewers on other hosts"
pass "a file whose name no manifest carries is left out of the tree sent, and said"

# .tandem a file: the user's to remove, exit 2 (it was 4, "could not
# review", which --on-error pass lets through)
git_demo
review_config "$FIX/cassette-review.json"
echo x >"$T/demo/.tandem"
sed -i "s|^    return sum / count;|$FIXED|" "$T/demo/stats.c"
run tandem review --repo "$T/demo" --config "$T/review.yaml" --on-error pass "fix"
expect_rc 2 ".tandem a file"
expect_in "$T/err" ".tandem is a file, not a directory"
pass ".tandem that is no directory is a usage error, not a review that could not be done"

# A patch is reviewed as git apply reads it. `diff -ruN` dates the side
# of a file that is not there 1970-01-01: a header deleted while stats.c
# still includes it was reviewed as an emptied file and approved (the
# model below approves anything); a file created was refused. And a patch
# tandem reads otherwise than git apply (a new file's hunk without its
# ---/+++ lines, which git creates with the hunk's lines and tandem read
# as an empty file) is rejected, saying so, not approved as another tree.
copy_demo
rm -f "$T/demo/agents.yaml"
cat >"$T/yes.yaml" <<YAML
agents:
  reviewer:
    llm: {provider: command, command: [cat, "$FIX/command-demo/answer-4"]}
    skills: [build]
skills:
  build: {command: make, timeout_s: 60}
YAML
echo '/* nothing left in here */' >"$T/demo/compat.h"
sed -i '1i #include "compat.h"' "$T/demo/stats.c"
rm -rf "$T/old" "$T/new"
mkdir "$T/old" "$T/new"
cp "$T/demo/compat.h" "$T/old/"
(cd "$T" && diff -ruN old new >"$T/gone.diff")
expect_in "$T/gone.diff" "1970-01-01 00:00:00"
run tandem review --repo "$T/demo" --config "$T/yes.yaml" --diff "$T/gone.diff" "drop compat.h"
expect_rc 1 "a header deleted that stats.c still includes"
expect_in "$T/err" "rejected: required skill build failed"
rm -rf "$T/old" "$T/new"
mkdir "$T/old" "$T/new"
echo 'int extra;' >"$T/new/extra.c"
(cd "$T" && diff -ruN old new >"$T/new.diff")
run tandem review --repo "$T/demo" --config "$T/yes.yaml" --diff "$T/new.diff" "add extra.c"
expect_rc 0 "a file created by diff -ruN"
expect_in "$(session_dir)/attempt-1.diff" "+++ b/extra.c"
printf '%s\n' "diff --git a/local.mk b/local.mk" "new file mode 100644" \
    "@@ -0,0 +1 @@" '+$(error this tree does not build)' >"$T/headless.diff"
run tandem review --repo "$T/demo" --config "$T/yes.yaml" --diff "$T/headless.diff" "add local.mk"
expect_rc 1 "a patch git apply reads otherwise"
expect_in "$T/err" "git apply does not make of this patch the tree tandem reviewed (local.mk: git apply writes other bytes, from line 1 on)"
pass "a patch is reviewed as git apply reads it: diff -N's dates, and no other reading approved"

# --repo a subdirectory of the git work tree: git's changes and HEAD's
# tree are the whole tree's, so the skills ran at the top of the export,
# where the subdirectory's Makefile is not, and a harmless change was
# rejected ("no makefile found"); said now, naming the top (exit 2)
rm -rf "$T/mono"
mkdir -p "$T/mono"
copy_demo
rm -f "$T/demo/agents.yaml"
mv "$T/demo" "$T/mono/sub"
(cd "$T/mono" && git init -q && git add -A &&
    git -c user.email=t@example.com -c user.name=t commit -qm base &&
    echo '/* ok */' >>sub/stats.h && git add sub/stats.h) ||
    fail "cannot make a repository with a subdirectory"
run tandem review --staged --repo "$T/mono/sub" --config "$T/yes.yaml" "a comment"
expect_rc 2 "a review from a subdirectory"
expect_in "$T/err" "$T/mono/sub is the directory sub/ of the git work tree $T/mono"
expect_in "$T/err" "with --repo $T/mono"
cat >"$T/coder.yaml" <<YAML
agents:
  coder:
    llm: {provider: replay, cassette: "$TOP/examples/demo/cassette.json"}
  reviewer:
    llm: {provider: command, command: [cat, "$FIX/command-demo/answer-4"]}
YAML
run tandem run --commit --repo "$T/mono/sub" --config "$T/coder.yaml" "a comment"
expect_rc 2 "run --commit from a subdirectory"
expect_in "$T/err" "is the directory sub/ of the git work tree"
pass "a review of git changes, and run --commit, from a subdirectory say to give the top"

# --repo a bare repository, or a .git directory: a review could not be
# done (exit 4, which --on-error pass lets through), and a run took
# git's files (config, hooks) as the tree, sent them to the model and
# applied an edit of them there. A usage error now, before any session.
git clone -q --bare "$T/mono" "$T/bare.git" || fail "cannot make a bare repository"
run tandem review --staged --repo "$T/bare.git" --config "$T/yes.yaml" \
    --on-error pass "a comment"
expect_rc 2 "a review of a bare repository"
expect_in "$T/err" "$T/bare.git is inside a git repository's own directory (a bare repository, or .git)"
for dir in "$T/bare.git" "$T/bare.git/hooks" "$T/mono/.git"; do
    run tandem run --apply --repo "$dir" --config "$T/coder.yaml" "a comment"
    expect_rc 2 "a run in $dir"
    expect_in "$T/err" "$dir is inside a git repository's own directory"
    [ ! -e "$dir/.tandem" ] || fail "a session was made in $dir"
done
pass "a bare repository or a .git directory as --repo is refused, before any session"

# a commit that makes a file a directory, or a directory a file: both
# were rejected ("Not a directory", "is a directory") though git commits
# them and nothing was judged
git_demo
(cd "$T/demo" && echo v1 >notes && mkdir olddir && echo x >olddir/f &&
    git add -A && git -c user.email=t@example.com -c user.name=t commit -qm notes &&
    git rm -q notes && mkdir notes && echo hi >notes/index.md &&
    git rm -q -r olddir && echo file >olddir && git add -A) ||
    fail "cannot stage the trades"
run tandem review --staged --repo "$T/demo" --config "$T/yes.yaml" "notes become a directory"
expect_rc 0 "a file and a directory trade places"
expect_in "$(session_dir)/attempt-1.diff" "+++ b/notes/index.md"
expect_in "$(session_dir)/attempt-1.diff" "+++ b/olddir"
pass "a change that makes a file a directory, and a directory a file, is reviewed"

# Without git the patch cannot be checked against git apply: the review
# could not be done (exit 4); it went on with tandem's own reading, and a
# patch git reads otherwise was approved
copy_demo
rm -f "$T/demo/agents.yaml"
mkdir -p "$T/nogit"
# (and what lib.sh's tandem() runs it with under TANDEM_MEMCHECK=1)
for tool in sh cat true mkdir timeout valgrind valgrind.bin; do
    if command -v $tool >/dev/null 2>&1; then
        ln -sf "$(command -v $tool)" "$T/nogit/$tool"
    fi
done
cat >"$T/nogit.yaml" <<YAML
agents:
  reviewer:
    llm: {provider: command, command: [cat, "$FIX/command-demo/answer-4"]}
    skills: [ok]
skills:
  ok: {command: "true", sandbox: none}
YAML
PATH=$T/nogit run tandem review --repo "$T/demo" --config "$T/nogit.yaml" \
    --diff "$T/headless.diff" "add local.mk"
expect_rc 4 "no git to check the patch with"
expect_in "$T/err" "cannot check the patch against git apply"
pass "a patch that cannot be checked against git apply is not reviewed (exit 4)"
