#!/bin/sh
# tandem submit --review (issue 8): `tandem review` through a running
# server. The change is read when the server makes the session (git's
# staged changes, or the patch the client sends), so what is reviewed is
# what there was at submit time; the exit codes are review's, with the
# findings of a rejected change on stdout.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/serve_lib.sh"

FIXED='    return (double)sum / (double)count;'
review_config() { # FILE CASSETTE
    cat >"$1" <<YAML
version: 1
agents:
  coder:
    llm: {provider: replay, cassette: "$2"}
  reviewer:
    llm: {provider: replay, cassette: "$2"}
    skills: [build, test]
skills:
  build: {command: make, timeout_s: 60}
  test: {command: make test, timeout_s: 60}
YAML
}
review_config "$T/review.yaml" "$FIX/cassette-review.json"
repo a
(cd "$T/a" && git init -q && git add -A &&
    git -c user.email=t@example.com -c user.name=t commit -qm base) ||
    fail "cannot make the demo a git repository"
# a git that counts the server's exports of a tree (checkout-index -a;
# the files a change touches are checked out again, converted.c)
REAL_GIT=$(command -v git)
mkdir -p "$T/gitlog"
cat >"$T/gitlog/git" <<SH
#!/bin/sh
case " \$* " in *" checkout-index -a "*) echo export >>"$T/exports" ;; esac
exec "$REAL_GIT" "\$@"
SH
chmod +x "$T/gitlog/git"
PLAIN_PATH=$PATH
export PATH="$T/gitlog:$PATH"
start_serve --config "$T/review.yaml" --max-sessions 2
export PATH="$PLAIN_PATH"

# the staged fix is approved; what is staged is read at submit time
sed -i "s|^    return sum / count;|$FIXED|" "$T/a/stats.c"
(cd "$T/a" && git add stats.c)
run tandem submit --review --staged --repo "$T/a" "make the failing test pass"
expect_rc 0 "the staged fix through the server"
expect_in "$T/err" "[1/1] change: 1 hunk and file applied"
expect_in "$T/err" "approved after 1 iteration · 1 LLM call"
[ ! -s "$T/out" ] || fail "an approved review printed on stdout: $(cat "$T/out")"
sid=$(sed -n 's/^tandem: session \([^:]*\):.*/\1/p' "$T/err" | head -1)
d=$T/a/.tandem/sessions/$sid
expect_in "$d/change.diff" "+$FIXED"
expect_in "$d/journal.jsonl" '"served":true'
expect_in "$d/journal.jsonl" '"review":{"rev":"'
# the base is exported once, by the session: the hub thread that made
# the session exported it too, and threw it away (a large tree's
# checkout stalled the broker past the agents' heartbeats, and a model
# call in flight was asked, and paid, twice)
[ "$(wc -l <"$T/exports")" -eq 1 ] ||
    fail "the base was exported $(wc -l <"$T/exports") times for one review"
pass "submit --review --staged: the staged change, reviewed by the server"

# In a commit's hook git gives the index being committed in
# GIT_INDEX_FILE (git commit -a stages the work tree there). The server
# read the repository's own index: a harmless staged comment was approved
# and the broken edit beside it committed. The client now takes the
# change as its git sees it and sends it with its commit.
stop_serve
cat >"$T/yes.yaml" <<YAML
version: 1
agents:
  reviewer:
    llm: {provider: command, command: [cat, "$FIX/command-demo/answer-4"]}
    skills: [build, test]
skills:
  build: {command: make, timeout_s: 60}
  test: {command: make test, timeout_s: 60}
YAML
start_serve --config "$T/yes.yaml" --max-sessions 2
(cd "$T/a" && git -c user.email=t@example.com -c user.name=t commit -qm fix) ||
    fail "cannot commit the fix"
echo '/* a harmless comment */' >>"$T/a/stats.h"
(cd "$T/a" && git add stats.h)
sed -i 's|return best;|return -best;|' "$T/a/stats.c"
cp "$T/a/.git/index" "$T/commit.index"
(cd "$T/a" && GIT_INDEX_FILE="$T/commit.index" git add -A) ||
    fail "cannot stage into the commit's index"
export GIT_INDEX_FILE="$T/commit.index"
run tandem submit --review --staged --repo "$T/a" "pre-commit"
unset GIT_INDEX_FILE
expect_rc 1 "the index being committed holds a broken edit"
expect_in "$T/err" "rejected: required skill test failed"
(cd "$T/a" && git reset -q --hard && echo '/* staged */' >>stats.h &&
    git add stats.h) || fail "cannot put the repository back"
stop_serve
start_serve --config "$T/review.yaml" --max-sessions 2
pass "submit --review --staged in a commit's hook reviews the index being committed"

# a patch sent by the client: a half fix is rejected, findings on stdout
# (the critique the demo's recording holds for its half fix)
stop_serve
review_config "$T/half.yaml" "$TOP/examples/demo/cassette.json"
start_serve --config "$T/half.yaml" --max-sessions 2
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
repo b
run tandem submit --review --repo "$T/b" --diff - "make the failing test pass" \
    <"$T/half.diff"
expect_rc 1 "a half fix through the server"
expect_in "$T/err" "rejected: required skill test failed (exit 2)"
expect_in "$T/out" "### test (\`make test\`): fail, exit 2"
grep -q '^    return sum / count;$' "$T/b/stats.c" ||
    fail "the patch was applied to the user's tree"
# detached, and attached once it ended: the findings come all the same,
# from its report (attach gave the exit code and nothing on stdout)
run tandem submit --review --detach --repo "$T/b" --diff - \
    "make the failing test pass" <"$T/half.diff"
expect_rc 0 "a detached review"
hid=$(cat "$T/out")
wait_for '"type":"finish"' "$T/b/.tandem/sessions/$hid/journal.jsonl" 30
run tandem submit --attach "$hid"
expect_rc 1 "attach to a rejected review that ended"
expect_in "$T/out" "### test (\`make test\`): fail, exit 2"
expect_in "$T/b/.tandem/sessions/$hid/report.json" '"findings_text": "'
# its report gone (or too large for a reply): the findings cannot come,
# and the client says where they are (it exited 1 without a word)
mv "$T/b/.tandem/sessions/$hid/report.json" "$T/b/.tandem/sessions/$hid/report.away"
run tandem submit --attach "$hid"
expect_rc 1 "attach to a rejected review without its report"
expect_in "$T/err" "session $hid ended; its report did not come with the reply: read .tandem/sessions/$hid/report.json"
mv "$T/b/.tandem/sessions/$hid/report.away" "$T/b/.tandem/sessions/$hid/report.json"
pass "submit --review --diff -: the patch goes with the request; a rejected change prints its findings, to a client that attaches after its end too"

# what cannot be reviewed is said before anything runs
run tandem submit --review --staged --repo "$T/b"
expect_rc 2 "--staged outside git"
expect_in "$T/err" "is not a git repository"
run tandem submit --staged --repo "$T/a" "x"
expect_rc 2 "--staged without --review"
expect_in "$T/err" "--staged is for --review"
# a patch that is no diff: named as the user knows it, not by the
# server's copy of it, which is gone (a review found that path)
echo "garbage" >"$T/bad.diff"
run tandem submit --review --diff "$T/bad.diff" --repo "$T/a" "x"
expect_rc 2 "a garbage patch"
expect_in "$T/err" "the submitted diff: no file changes found"
expect_not_in "$T/err" "submitted-"
stop_serve
pass "a review the server cannot make is a usage error"

# a review the server could not do (its reviewer has no answer): 4, or 0
# with a warning under --on-error pass, as tandem review exits
echo '{"tandem_cassette": 1, "exchanges": []}' >"$T/empty.json"
review_config "$T/empty.yaml" "$T/empty.json"
start_serve --config "$T/empty.yaml" --max-sessions 2
run tandem submit --review --staged --repo "$T/a" "make the failing test pass"
expect_rc 4 "the server could not review"
run tandem submit --review --staged --repo "$T/a" --on-error pass \
    "make the failing test pass"
expect_rc 0 "the server could not review, --on-error pass"
expect_in "$T/err" "tandem submit: warning: could not review the change; --on-error pass lets it through unreviewed"
stop_serve
pass "submit --review: a review the server could not do is 4, or 0 under --on-error pass"

# no server answers where the endpoint says (a stale serve.endpoint, as a
# server killed with -9 leaves it; --connect to nobody): nothing was
# judged, exit 4, never 1, which says "rejected"
mkdir -p "$T/run/tandem" && chmod 700 "$T/run/tandem"
echo "ipc://$T/dead.sock" >"$EPFILE"
TANDEM_TIMEOUT=60 run tandem submit --review --staged --repo "$T/a" \
    "make the failing test pass"
expect_rc 4 "a stale serve.endpoint"
expect_in "$T/err" "no tandem serve runs for you: $EPFILE is left from one that stopped"
run tandem submit --repo "$T/a" "make the failing test pass"
expect_rc 2 "a task for a stale serve.endpoint"
expect_in "$T/err" "is left from one that stopped"
TANDEM_TIMEOUT=60 run tandem submit --review --staged --repo "$T/a" \
    --connect "ipc://$T/nobody.sock" --on-error pass "x"
expect_rc 0 "nobody at --connect, --on-error pass"
expect_in "$T/err" "--on-error pass lets it through unreviewed"
rm -f "$EPFILE"
run tandem submit --review --staged --repo "$T/a" --on-error open "x"
expect_rc 2 "a bad --on-error"
expect_in "$T/err" "tandem submit: --on-error must be fail (exit 4) or pass (exit 0 with a warning), got \"open\""
run tandem submit --repo "$T/a" --on-error pass "x"
expect_rc 2 "--on-error without --review"
expect_in "$T/err" "--on-error is for --review"
pass "submit --review: a server that does not answer is 4 (--on-error pass: 0)"
