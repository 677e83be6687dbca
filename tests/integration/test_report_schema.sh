#!/bin/sh
# docs/report.schema.json: a real report matches it, and a report with a
# key renamed, a value of the wrong type, a key missing or a value out of
# its set does not, each named by its place. (lib.sh checks every
# report.json each integration test leaves against the same schema.)
. "$(dirname "$0")/lib.sh"

SCHEMA=$TOP/docs/report.schema.json
check() { run /usr/bin/python3 "$TOP/tools/check-json" "$@"; }

copy_demo
run tandem run --repo "$T/demo" "make the failing test pass"
expect_rc 0 "the demo is approved"
report=$(session_dir)/report.json
check "$SCHEMA" "$report"
expect_rc 0 "the demo's report"
pass "a real report matches the schema"

# break FILE PYTHON: a copy of the report with one change made by PYTHON
# (on the parsed document r), in $T/broken.json
broken() {
    /usr/bin/python3 - "$report" "$T/broken.json" "$1" <<'PY' ||
import json, sys
r = json.load(open(sys.argv[1]))
exec(sys.argv[3])
json.dump(r, open(sys.argv[2], "w"), indent=2)
PY
        fail "cannot make a broken report"
}

# each: the change, and what the error must name
while IFS='|' read -r change says; do
    broken "$change"
    check "$SCHEMA" "$T/broken.json"
    expect_rc 1 "$change"
    expect_in "$T/out" "$says"
    expect_in "$T/out" "1 document does not match"
done <<'CASES'
r["llm_call"] = r.pop("llm_calls")|$: Additional properties are not allowed ('llm_call' was unexpected)
r["iterations"] = "2"|$.iterations: '2' is not of type 'integer'
del r["attempts"][0]["skills"][0]["regression"]; r["attempts"][0]["skills"][0]["regresion"] = True|$.attempts[0].skills[0]: Additional properties are not allowed ('regresion' was unexpected)
r["status"] = "aproved"|$.status: 'aproved' is not one of
del r["tokens"]["estimated"]|$.tokens: 'estimated' is a required property
r["by_role"]["coder"]["prompt_tokens"] = r["by_role"]["coder"].pop("prompt")|$.by_role.coder: 'prompt' is a required property
r["attempts"][1]["critique"]["issues"][0]["severity"] = "huge"|$.attempts[1].critique.issues[0].severity: 'huge' is not one of
r["attempts"][0]["failure_signature"] = 12345|$.attempts[0].failure_signature: 12345 is not of type 'string', 'null'
r["attempts"][0]["failure_signature"] = "not hex"|$.attempts[0].failure_signature: 'not hex' does not match
r["tandem"] = 2|$.tandem: 1 was expected
CASES
pass "a renamed key, a wrong type, a missing key or a value out of its set fails"

# the checker itself: not JSON, and a schema that is no schema
printf '{"tandem": 1,' >"$T/torn.json"
check "$SCHEMA" "$T/torn.json"
expect_rc 1 "a torn report"
expect_in "$T/out" "torn.json: not JSON"
echo '{"type": 12}' >"$T/bad.schema.json"
check "$T/bad.schema.json" "$report"
expect_rc 2 "a broken schema"
expect_in "$T/err" "bad.schema.json is not a usable JSON Schema"
pass "a torn report fails, and a broken schema is a usage error"
