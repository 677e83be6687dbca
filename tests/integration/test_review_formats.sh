#!/bin/sh
# tandem review --format sarif|rdjsonl|github on the demo: the findings
# (failing skills, the critique's issues, the gate's reason) in the
# formats CI reads, on stdout and nothing else there, whatever the exit
# code; fingerprints that do not change between runs; a review that could
# not be done says so; a format tandem does not know is exit 2.
. "$(dirname "$0")/lib.sh"

SCHEMAS=$FIX/schemas
check() { run /usr/bin/python3 "$TOP/tools/check-json" "$@"; }

copy_demo
rm -f "$T/demo/agents.yaml"
(cd "$T/demo" && git init -q && git add -A &&
    git -c user.email=t@example.com -c user.name=t commit -qm base) ||
    fail "cannot make the demo a git repository"
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
review() { # FORMAT [TASK]
    run tandem review --repo "$T/demo" --config "$T/review.yaml" \
        --format "$1" "${2:-make the failing test pass}"
}

# a half fix: the test fails and the reviewer finds the truncation
review_config "$TOP/examples/demo/cassette.json"
sed -i 's|^    return sum / count;|    return (double)(sum / (long)count);|' \
    "$T/demo/stats.c"

review github
expect_rc 1 "a half fix is rejected"
expect_in "$T/err" "rejected: required skill test failed (exit 2)"
[ "$(wc -l <"$T/out")" = 2 ] || fail "expected 2 annotations"
head -n 1 "$T/out" >"$T/line1"
expect_in "$T/line1" "::error file=Makefile,line=11,title=tandem%3A test failed::test (\`make test\`): fail, exit 2%0A"
expect_in "$T/line1" "%0AFAIL stats_mean({1,2,3,4}) = 2.000000, expected 2.500000%0A"
sed -n 2p "$T/out" >"$T/line2"
expect_in "$T/line2" "::warning file=stats.c,line=11,title=tandem%3A incorrect (major)::The division is still done in integers and only then converted to double, so the fraction is lost.%0AEvidence: FAIL stats_mean({1,2,3,4}) = 2.000000, expected 2.500000%0ASuggested fix: Convert before dividing: return (double)sum / (double)count;"
expect_not_in "$T/out" "### test"
pass "github: one workflow command per finding, escaped"

review rdjsonl
expect_rc 1 "a half fix is rejected"
[ "$(wc -l <"$T/out")" = 2 ] || fail "expected 2 diagnostics"
cp "$T/out" "$T/findings.rdjsonl"
check --lines "$SCHEMAS/rdjsonl.schema.json" "$T/findings.rdjsonl"
expect_rc 0 "every line is a reviewdog diagnostic"
expect_in "$T/findings.rdjsonl" '"location":{"path":"stats.c","range":{"start":{"line":11}}},"severity":"WARNING","source":{"name":"tandem"},"code":{"value":"issue/incorrect"}}'
expect_in "$T/findings.rdjsonl" '"severity":"ERROR","source":{"name":"tandem"},"code":{"value":"skill/test"}}'
pass "rdjsonl: one reviewdog diagnostic per line"

review sarif
expect_rc 1 "a half fix is rejected"
cp "$T/out" "$T/first.sarif"
check "$SCHEMAS/sarif-subset.schema.json" "$T/first.sarif"
expect_rc 0 "the SARIF has what code scanning reads"
/usr/bin/python3 - "$T/first.sarif" <<'PY' || fail "the SARIF's results are not right"
import json, sys
log = json.load(open(sys.argv[1]))
run = log["runs"][0]
rules = run["tool"]["driver"]["rules"]
ids = [r["id"] for r in rules]
assert len(ids) == len(set(ids)), ids
assert ids[:7] == ["issue/missing", "issue/unsupported", "issue/incorrect",
                   "issue/superfluous", "issue/safety", "issue/style",
                   "gate"], ids
got = [(r["ruleId"], r["level"],
        r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
        r["locations"][0]["physicalLocation"]["region"]["startLine"])
       for r in run["results"]]
assert got == [("skill/test", "error", "Makefile", 11),
               ("issue/incorrect", "warning", "stats.c", 11)], got
for r in run["results"]:
    assert ids[r["ruleIndex"]] == r["ruleId"], r
assert run["results"][1]["message"]["text"].startswith(
    "The division is still done in integers"), run["results"][1]
assert run["invocations"] == [{"executionSuccessful": True}]
PY
pass "sarif: rules with stable ids, results with level, place and fingerprint"

# the same review again: the same fingerprints, and stdout the same
# but for nothing (the session id is not in it)
review sarif
expect_rc 1 "the same half fix"
cmp -s "$T/out" "$T/first.sarif" || fail "a second run gave other SARIF"
pass "a second review of the same change gives the same SARIF"

# the right fix: approved (exit 0), the minor issue still reported
review_config "$FIX/cassette-review.json"
sed -i 's|^    return (double)(sum / (long)count);|    return (double)sum / (double)count;|' \
    "$T/demo/stats.c"
review github
expect_rc 0 "the right fix is approved"
[ "$(wc -l <"$T/out")" = 1 ] || fail "expected 1 annotation"
expect_in "$T/out" "::notice file=test_stats.c,line=30,title=tandem%3A missing (minor)::No test covers a single-element input.%0ASuggested fix: Add expect_near(\"stats_mean({7})\", ..., 7.0)."
review sarif
expect_rc 0 "the right fix is approved"
cp "$T/out" "$T/approved.sarif"
check "$SCHEMAS/sarif-subset.schema.json" "$T/approved.sarif"
expect_rc 0 "the approved review's SARIF"
expect_in "$T/approved.sarif" '"level": "note"'
pass "an approved change's minor issue is a note, and the exit code 0"

# stdout that cannot be written (a full disk): the findings or the report
# are lost, and the review says so and exits 1, never 0 (it exited 0, the
# SARIF lost, with a line in the log only); -q says it too
for how in "--format sarif" "--format sarif -q" "--json"; do
    tandem review --repo "$T/demo" --config "$T/review.yaml" $how \
        "make the failing test pass" >/dev/full 2>"$T/err"
    RC=$?
    expect_rc 1 "an approved review ($how) into a full disk"
    case $how in
    --json) what="the report" ;;
    *) what="the findings" ;;
    esac
    expect_in "$T/err" "tandem: cannot write $what on stdout: No space left on device; the output was lost (the session keeps it), exit 1"
    tail -n 1 "$T/err" | grep -q '^session .*: .*/$' ||
        fail "the last line on stderr is not the session's: $(tail -n 1 "$T/err")"
done
pass "an approved review whose findings cannot be written exits 1, saying so"

# a change that passes but touches a risky path waits (exit 3): the gate
# says why, as a warning
cat >>"$T/review.yaml" <<'YAML'
gate:
  risk_paths: ["*.c"]
  escalate: queue
YAML
review github
expect_rc 3 "a risky change waits for a person"
expect_in "$T/out" "::warning title=tandem%3A needs a person::the change passes"
expect_in "$T/out" "gate.risk_paths"
pass "a change that waits for a person says why (exit 3)"

# the reviewer cannot be asked: the review could not be done
echo '{"tandem_cassette": 1, "exchanges": []}' >"$T/empty.json"
review_config "$T/empty.json"
review sarif
expect_rc 4 "no answer from the reviewer"
expect_in "$T/err" "could not review: "
expect_in "$T/err" "(exit 4; --on-error pass lets a change through when the review cannot be done)"
cp "$T/out" "$T/failed.sarif"
check "$SCHEMAS/sarif-subset.schema.json" "$T/failed.sarif"
expect_rc 0 "the failed review's SARIF"
expect_in "$T/failed.sarif" '"executionSuccessful": false'
expect_in "$T/failed.sarif" "has no answer for the reviewer"
review github
expect_rc 4 "no answer from the reviewer"
expect_in "$T/out" "::error title=tandem%3A could not review::"
review rdjsonl
expect_rc 4 "no answer from the reviewer"
[ ! -s "$T/out" ] || fail "rdjsonl wrote something for a review not done"
pass "a review that could not be done says so (sarif, github) and exits 4"

# the same before a session exists (no key for the reviewer's model): the
# SARIF a job uploads says so too (it was an empty file)
cat >"$T/nokey.yaml" <<'YAML'
agents:
  reviewer:
    llm: {provider: anthropic, model: m}
    skills: [build, test]
YAML
run env -u ANTHROPIC_API_KEY "$BIN/tandem" review --repo "$T/demo" \
    --config "$T/nokey.yaml" --format sarif "make the failing test pass"
expect_rc 4 "no key, sarif"
cp "$T/out" "$T/nokey.sarif"
check "$SCHEMAS/sarif-subset.schema.json" "$T/nokey.sarif"
expect_rc 0 "the SARIF of a review with no key"
expect_in "$T/nokey.sarif" '"executionSuccessful": false'
expect_in "$T/nokey.sarif" "needs an API key"
run env -u ANTHROPIC_API_KEY "$BIN/tandem" review --repo "$T/demo" \
    --config "$T/nokey.yaml" --format github --on-error pass "x"
expect_rc 0 "no key, github, --on-error pass"
expect_in "$T/out" "::error title=tandem%3A could not review::"
pass "a review that could not be done before its session says so in its format too"

# --on-error pass: the same review fails open, with a warning
run tandem review --repo "$T/demo" --config "$T/review.yaml" --format github \
    --on-error pass "make the failing test pass"
expect_rc 0 "--on-error pass"
expect_in "$T/err" "tandem review: warning: could not review the change ("
expect_in "$T/err" "--on-error pass lets it through unreviewed"
expect_in "$T/out" "::error title=tandem%3A could not review::"
# ... but not when its findings, which say so, cannot be written
tandem review --repo "$T/demo" --config "$T/review.yaml" --format github \
    --on-error pass "make the failing test pass" >/dev/full 2>"$T/err"
RC=$?
expect_rc 1 "--on-error pass, the findings into a full disk"
expect_in "$T/err" "cannot write the findings on stdout"
run tandem review --repo "$T/demo" --config "$T/review.yaml" --format github \
    --on-error fail "make the failing test pass"
expect_rc 4 "--on-error fail"
run tandem review --repo "$T/demo" --config "$T/review.yaml" --on-error open
expect_rc 2 "a bad --on-error"
expect_in "$T/err" "tandem review: --on-error must be fail (exit 4) or pass (exit 0 with a warning), got \"open\""
pass "--on-error pass lets a review that could not be done through (exit 0, a warning)"

run tandem review --repo "$T/demo" --config "$T/review.yaml" --format checkstyle
expect_rc 2 "an unknown format"
expect_in "$T/err" "tandem review: --format: unknown format \"checkstyle\"; use sarif, rdjsonl or github"
[ ! -s "$T/out" ] || fail "a usage error printed on stdout"
pass "an unknown format is exit 2, naming the ones there are"

# a key the reviewer's model echoed in an issue's evidence or fix, past
# where the findings cut them (600 bytes): redacted before the cut, so
# no head of it is left in the document CI keeps (it was cut, then
# redacted, and the cut key was no longer recognised)
cat >"$T/echo-key.sh" <<'SH'
#!/bin/sh
cat >/dev/null
pad=$(printf '%0590d' 0)
cat <<JSON
{"verdict": "revise", "confidence": 0.9, "summary": "no",
 "issues": [{"type": "incorrect", "severity": "major", "file": "stats.c",
  "line": 11, "description": "d", "evidence": "$pad $TANDEM_TEST_KEY",
  "suggested_fix": "$pad $TANDEM_TEST_KEY"}]}
JSON
SH
cat >"$T/key.yaml" <<YAML
agents:
  reviewer:
    llm: {provider: command, command: [/bin/sh, $T/echo-key.sh],
          api_key_env: TANDEM_TEST_KEY}
    skills: [build]
skills:
  build: {command: make, timeout_s: 60}
YAML
git -C "$T/demo" checkout -q stats.c
sed -i 's|^    return sum / count;|    return (double)sum / (double)count;|' \
    "$T/demo/stats.c"
for format in sarif rdjsonl github; do
    TANDEM_TEST_KEY=sk-findings-0123456789abcdefghijklmnop run tandem review \
        --repo "$T/demo" --config "$T/key.yaml" --format $format "fix it"
    expect_rc 1 "$format: the reviewer asks for a revision"
    expect_in "$T/out" "Evidence: 000"
    expect_not_in "$T/out" "sk-find"
done
pass "a key the model echoed past the findings' cut leaves no part of it"

# a line past the end of its file (a model's guess, a tool's odd number):
# left out, the file kept; SARIF's region and GitHub's line= name lines
# of the file (code scanning refuses the upload otherwise)
cat >"$T/past-end.sh" <<'SH'
#!/bin/sh
cat >/dev/null
cat <<JSON
{"verdict": "revise", "confidence": 0.9, "summary": "no",
 "issues": [{"type": "incorrect", "severity": "major", "file": "stats.c",
  "line": 9999, "description": "past the end"},
  {"type": "style", "severity": "minor", "file": "stats.c",
  "line": 11, "description": "within the file"}]}
JSON
SH
cat >"$T/past-end.yaml" <<YAML
agents:
  reviewer:
    llm: {provider: command, command: [/bin/sh, $T/past-end.sh]}
    skills: [lint]
skills:
  lint: {command: "echo stats.c:8888:3: error: bad; echo stats.c:2:1: error: ok; exit 1", timeout_s: 60}
YAML
run tandem review --repo "$T/demo" --config "$T/past-end.yaml" \
    --format github "fix it"
expect_rc 1 "past the end: rejected"
expect_in "$T/out" "::warning file=stats.c,title=tandem%3A incorrect (major)::past the end"
expect_in "$T/out" "::notice file=stats.c,line=11,title=tandem%3A style (minor)::within the file"
expect_in "$T/out" "::error file=stats.c,line=2,col=1,title=tandem%3A lint failed::"
expect_not_in "$T/out" "9999"
expect_not_in "$T/out" "line=8888"
expect_in "$T/err" "the critique's issue 1 names line 9999 of stats.c, past the file's end; its line is left out"
run tandem review --repo "$T/demo" --config "$T/past-end.yaml" \
    --format sarif "fix it"
expect_rc 1 "past the end: rejected (sarif)"
cp "$T/out" "$T/past-end.sarif"
check "$SCHEMAS/sarif-subset.schema.json" "$T/past-end.sarif"
expect_rc 0 "the SARIF of a line past the end"
/usr/bin/python3 - "$T/past-end.sarif" <<'PY' || fail "a line past the end is in the SARIF"
import json, sys
run = json.load(open(sys.argv[1]))["runs"][0]
got = [(r["ruleId"], [(l["physicalLocation"]["artifactLocation"]["uri"],
                       l["physicalLocation"].get("region"))
                      for l in r["locations"]])
       for r in run["results"]]
assert got == [("skill/lint", [("stats.c", {"startLine": 2, "startColumn": 1})]),
               ("issue/incorrect", [("stats.c", None)]),
               ("issue/style", [("stats.c", {"startLine": 11})])], got
PY
pass "a line past its file's end is left out of the findings, the file kept"
