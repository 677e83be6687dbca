#!/bin/sh
# tandem lessons: list, show and forget the lessons bank a repository keeps
# in .tandem/lessons.json; ids by unique prefix; a corrupt bank is an
# error naming the file (exit 1); usage errors exit 2.
. "$(dirname "$0")/lib.sh"

R=$T/repo
mkdir -p "$R/.tandem"
BANK=$R/.tandem/lessons.json
cat >"$BANK" <<'JSON'
{
  "tandem_lessons": 1,
  "lessons": [
    {"id": "3fa2c01b", "task_type": "fix",
     "mistake": "divided two ints before casting\nso the mean lost its fraction",
     "correction": "cast the sum to double before dividing",
     "paths": ["tests/test_stats.c", "stats.c"],
     "created": "2026-11-22T01:44:28.123Z",
     "times_applied": 2, "effectiveness": 0.65},
    {"id": "3fb00000", "task_type": "test",
     "mistake": "compared doubles with ==",
     "correction": "compare with a tolerance",
     "created": "2026-11-23T10:00:00Z"},
    {"id": "9c0ffee1", "task_type": "docs",
     "mistake": "README example \u001b[31mdid not run",
     "correction": "run every example before documenting it",
     "paths": ["README.md"], "created": "2026-11-24T08:30:00Z",
     "times_applied": 1, "effectiveness": 0.35}
  ]
}
JSON

run tandem lessons list --repo "$R"
expect_rc 0 "list"
expect_in "$T/out" "ID        TYPE      EFFECT  APPLIED  CREATED (UTC)     MISTAKE"
expect_in "$T/out" "3fa2c01b  fix       0.65    2        2026-11-22 01:44  divided two ints before casting"
expect_in "$T/out" "3fb00000  test      0.50    0        2026-11-23 10:00  compared doubles with =="
expect_in "$T/out" "9c0ffee1  docs      0.35    1        2026-11-24 08:30  README example ?[31mdid not run"
expect_not_in "$T/out" "so the mean"
[ "$(wc -l <"$T/out")" = 4 ] || fail "list: expected a header and 3 rows"
pass "list prints a table, one line per lesson, control characters defused"

run tandem lessons show 3fa2 --repo "$R"
expect_rc 0 "show by prefix"
expect_in "$T/out" "id             3fa2c01b"
expect_in "$T/out" "task type      fix"
expect_in "$T/out" "effectiveness  0.65"
expect_in "$T/out" "times applied  2"
expect_in "$T/out" "created        2026-11-22T01:44:28.123Z"
expect_in "$T/out" "paths          stats.c"
expect_in "$T/out" "               tests/test_stats.c"
expect_in "$T/out" "  so the mean lost its fraction"
expect_in "$T/out" "  cast the sum to double before dividing"
(cd "$R" && tandem lessons show 3FB00000) >"$T/out" 2>"$T/err" ||
    fail "show with the full id (any case) from inside the repository"
expect_in "$T/out" "  compared doubles with =="
pass "show prints one lesson in full, by a unique prefix or the whole id"

cp "$BANK" "$T/bank.before"
run tandem lessons show 3f --repo "$R"
expect_rc 2 "ambiguous prefix"
expect_in "$T/err" "'3f' is the start of 2 lesson ids; give more of it"
run tandem lessons forget 3f --repo "$R"
expect_rc 2 "ambiguous forget"
run tandem lessons show 77 --repo "$R"
expect_rc 2 "unknown id"
expect_in "$T/err" "no lesson has an id starting with '77'"
run tandem lessons forget 77 --repo "$R"
expect_rc 2 "unknown forget"
cmp -s "$BANK" "$T/bank.before" || fail "a refused forget changed the bank"
pass "an ambiguous or unknown id is a usage error (exit 2), the bank untouched"

run tandem lessons forget 9c --repo "$R"
expect_rc 0 "forget"
expect_in "$T/out" "forgot lesson 9c0ffee1"
run tandem lessons list --repo "$R"
expect_rc 0 "list after forget"
expect_not_in "$T/out" "9c0ffee1"
expect_in "$T/out" "3fa2c01b"
expect_in "$T/out" "3fb00000"
grep -q '"tandem_lessons": 1' "$BANK" || fail "the bank was not rewritten"
grep -q '"effectiveness": 0.65' "$BANK" || fail "a record was lost"
ls "$R/.tandem" | grep -q tmp && fail "a temporary file was left behind"
[ -f "$R/.tandem/.gitignore" ] || fail "no .tandem/.gitignore"
pass "forget removes the lesson and saves the bank whole"

run tandem lessons list --repo "$T"
expect_rc 0 "no bank"
expect_in "$T/out" "no lessons yet"
pass "a repository without a bank has no lessons"

# a bank past 100 lessons (merged or edited by hand) is read whole:
# every load trimmed it to 100, so list hid 20, show said one was not
# there, and forget of one saved the trimmed bank: 21 gone
mkdir -p "$T/big/.tandem"
python3 - "$T/big/.tandem/lessons.json" <<'PY'
import json, sys
L = [{"id": "%08x" % (0x20000000 + i), "task_type": "fix",
      "mistake": "mistake %d" % i, "correction": "c%d" % i,
      "created": "2026-01-01T00:%02d:00Z" % (i % 60),
      "effectiveness": 0.3 if i < 20 else 0.6} for i in range(120)]
json.dump({"tandem_lessons": 1, "lessons": L}, open(sys.argv[1], "w"))
PY
run tandem lessons list --repo "$T/big"
[ "$(wc -l <"$T/out")" = 121 ] || fail "list: $(wc -l <"$T/out") lines, not 121"
run tandem lessons show 20000000 --repo "$T/big"
expect_rc 0 "show of a lesson past the 100th"
run tandem lessons forget 20000077 --repo "$T/big"
expect_rc 0 "forget"
python3 -c 'import json, sys
sys.exit(len(json.load(open(sys.argv[1]))["lessons"]) != 119)' \
    "$T/big/.tandem/lessons.json" || fail "forget of one did not leave 119"
pass "a bank past its bound is read whole; forget removes the one asked"

printf '{"tandem_lessons": 1, "lessons": [{"id": "abcd", "task_type": "fix",
  "mistake": "m", "correction": "c", "created": "2026-01-01T00:00:00Z",
  "effectiveness": 7}]}\n' >"$BANK"
for sub in list "show abcd" "forget abcd"; do
    # shellcheck disable=SC2086
    run tandem lessons $sub --repo "$R"
    expect_rc 1 "corrupt bank: $sub"
    expect_in "$T/err" "$BANK: lessons[0]: field 'effectiveness' must be a number 0..1"
done
grep -q abcd "$BANK" || fail "forget changed a corrupt bank"
printf '{"tandem_lessons": 1, "lessons": [' >"$BANK"
run tandem lessons list --repo "$R"
expect_rc 1 "truncated bank"
expect_in "$T/err" "$BANK: JSON text ends early"
pass "a corrupt bank fails (exit 1) naming the file and the field"

run tandem lessons --help
expect_rc 0 "lessons --help"
expect_in "$T/out" "usage: tandem lessons COMMAND [options]"
for sub in list show forget; do
    run tandem lessons $sub --help
    expect_rc 0 "lessons $sub --help"
    expect_in "$T/out" "usage: tandem lessons $sub"
    expect_in "$T/out" "--repo DIR"
done
run tandem help lessons
expect_rc 0 "help lessons"
expect_in "$T/out" "forget ID"
run tandem --help
expect_in "$T/out" "lessons COMMAND"
pass "help for lessons and each of its commands"

run tandem lessons
expect_rc 2 "no subcommand"
expect_in "$T/err" "usage: tandem lessons"
run tandem lessons frob
expect_rc 2 "unknown subcommand"
expect_in "$T/err" "unknown command 'frob'"
run tandem lessons list --bogus
expect_rc 2 "unknown option"
expect_in "$T/err" "unknown option '--bogus'"
run tandem lessons show --repo "$R"
expect_rc 2 "no id"
expect_in "$T/err" "which lesson?"
run tandem lessons list extra --repo "$R"
expect_rc 2 "extra argument"
run tandem lessons list --repo "$T/nowhere"
expect_rc 2 "missing repository"
expect_in "$T/err" "is not a directory"
pass "usage errors exit 2"

# The loop learns: a task that fails and then passes leaves a lesson, and
# the next task of the same kind gets it in the coder's prompt; its
# effectiveness follows the outcome.
copy_demo
run tandem run --repo "$T/demo" "make the failing test pass"
expect_rc 0 "the first run"
[ -s "$T/demo/.tandem/lessons.json" ] || fail "no lesson was stored"
expect_in "$T/demo/.tandem/lessons.json" '"task_type": "fix"'
expect_in "$T/demo/.tandem/lessons.json" "required skill test failed"
expect_in "$T/demo/.tandem/lessons.json" '"stats.c"'
start_fakellm "$FIX/demo-openai.json"
run tandem run --repo "$T/demo" --llm openai:fake-model \
    --base-url "$FAKE_URL/v1" "make the failing test pass"
expect_rc 0 "the second run"
expect_in "$T/err" "using 1 lesson from earlier tasks here"
head -n 1 "$FAKE_LOG" | grep -q "Lessons from earlier tasks in this repository" ||
    fail "the coder's first prompt lacks the lesson"
run "$BIN/tandem" lessons list --repo "$T/demo"
expect_rc 0 "list"
expect_in "$T/out" "0.65"
pass "a fail-then-pass task leaves a lesson the next task's coder sees"

# Lessons are credited for the coder that got them, once. A review has no
# coder: it counted the bank's lessons as applied, and moved their
# effectiveness with each verdict. An answer to a waiting session
# credited the lessons relevant when it was given, even ones learned
# after the session ran; now the session's first run journals the ids it
# gave, and the answer that ends it credits those.
lesson_json() { # ID: the bank with one "fix" lesson of that id
    printf '{"tandem_lessons":1,"lessons":[{"id":"%s","task_type":"fix",' "$1"
    printf '"mistake":"m","correction":"c","created":"2026-01-01T00:00:00Z"}]}\n'
}
copy_demo
(cd "$T/demo" && git init -q && git add -A &&
    git -c user.name=t -c user.email=t@t commit -qm base) >/dev/null
mkdir -p "$T/demo/.tandem"
lesson_json aaaa1111 >"$T/demo/.tandem/lessons.json"
cp "$T/demo/.tandem/lessons.json" "$T/bank.before"
sed -i 's|^    return sum / count;|    return (double)sum / (double)count;|' "$T/demo/stats.c"
cat >"$T/review.yaml" <<YAML
version: 1
agents:
  reviewer:
    llm: {provider: command, command: [cat, "$FIX/command-demo/answer-4"]}
    skills: [build]
skills:
  build: {command: make, timeout_s: 60}
YAML
run tandem review --repo "$T/demo" --config "$T/review.yaml" "fix the mean"
expect_rc 0 "the review"
expect_not_in "$T/err" "lesson"
cmp -s "$T/demo/.tandem/lessons.json" "$T/bank.before" ||
    fail "a review changed the bank: $(cat "$T/demo/.tandem/lessons.json")"

copy_demo
mkdir -p "$T/demo/.tandem"
sed -i 's/^  max_iterations: 3$/  max_iterations: 1\n  escalate: queue/' "$T/demo/agents.yaml"
run tandem run --repo "$T/demo" "make the failing test pass"
expect_rc 3 "escalated with no lesson in the bank"
sid=$(basename "$(session_dir)")
lesson_json bbbb2222 >"$T/demo/.tandem/lessons.json"
run tandem reject "$sid" --repo "$T/demo" -m "not this"
expect_rc 1 "rejected"
expect_not_in "$T/err" "using 1 lesson"
run tandem lessons show bbbb2222 --repo "$T/demo"
expect_in "$T/out" "times applied  0"

lesson_json cccc3333 >"$T/demo/.tandem/lessons.json"
run tandem run --repo "$T/demo" "make the failing test pass"
expect_rc 3 "escalated with a lesson"
expect_in "$T/err" "using 1 lesson from earlier tasks here"
sid=$(basename "$(session_dir)")
run tandem approve "$sid" --repo "$T/demo"
expect_rc 0 "approved"
run tandem lessons show cccc3333 --repo "$T/demo"
expect_in "$T/out" "times applied  1"
expect_in "$T/out" "effectiveness  0.65"
pass "lessons are credited once, for the session whose coder got them; a review credits none"
