#!/bin/sh
# The command provider: the demo with a shell script as the model, and
# what a user sees when the program fails, asks for a retry, hangs or
# says nothing.
. "$(dirname "$0")/lib.sh"

# command_config LLM_YAML: both agents use the llm mapping LLM_YAML.
command_config() {
    cat >"$T/demo/agents.yaml" <<YAML
version: 1
agents:
  coder:
    llm: $1
  reviewer:
    llm: $1
    skills: [build, test]
skills:
  build: {command: make, timeout_s: 60}
  test: {command: make test, timeout_s: 60}
YAML
}

# The model: saves its input as prompt-N and prints answer-N, N counting
# calls across both agents (they take turns, so a plain counter is safe).
# With fail-first present, the first call exits 75 instead.
mkdir -p "$T/model"
cp "$FIX"/command-demo/answer-* "$T/model/"
cat >"$T/model/answer.sh" <<'SH'
#!/bin/sh
dir=$(dirname "$0")
n=$(cat "$dir/counter" 2>/dev/null || echo 0)
n=$((n + 1))
echo "$n" >"$dir/counter"
cat >"$dir/prompt-$n"
if [ -e "$dir/fail-first" ]; then
    rm -f "$dir/fail-first"
    echo "answer.sh: the model is busy, try later" >&2
    exit 75
fi
echo "answer.sh: answering call $n" >&2
cat "$dir/answer-$n"
SH

copy_demo
command_config "{provider: command, command: [/bin/sh, $T/model/answer.sh]}"
run tandem run --repo "$T/demo" "make the failing test pass"
expect_rc 0 "approved through the command provider"
expect_in "$T/out" "+    return (double)sum / (double)count;"
expect_in "$T/err" "approved after 2 iterations · 4 LLM calls"
[ "$(cat "$T/model/counter")" = 4 ] || fail "expected 4 calls of the program"
# stdin: the system prompt, a line ---, the user prompt
head -n 1 "$T/model/prompt-1" | grep -q '^You are the coder' ||
    fail "prompt-1 does not start with the coder's system prompt"
[ "$(grep -c '^---$' "$T/model/prompt-1")" -ge 1 ] ||
    fail "prompt-1 has no --- line"
sed '1,/^---$/d' "$T/model/prompt-1" >"$T/user-1"
expect_in "$T/user-1" "make the failing test pass"
expect_not_in "$T/user-1" "You are the coder"
dir=$(session_dir)
expect_in "$dir/report.json" '"estimated": true'
pass "the demo runs with a program as the model; stdin is SYSTEM --- USER"

# A failing program: the error names it, its status and its stderr.
copy_demo
command_config "{provider: command, command: 'echo \"quota exhausted for account 42\" >&2; exit 3'}"
run tandem run --repo "$T/demo" "make the failing test pass"
expect_rc 1 "exit 3"
expect_in "$T/err" "exited with status 3"
expect_in "$T/err" "quota exhausted for account 42"
expect_in "$T/err" "echo \"quota exhausted"
pass "a non-zero exit names the program, the status and its stderr"

# A program that wraps a provider reads that provider's key variable,
# which the config does not name, and may print it in an error: it went
# in clear to stderr, report.json, the journal and the agents' logs
copy_demo
command_config "{provider: command, command: 'echo \"auth failed for \$OPENAI_API_KEY\" >&2; exit 3', max_retries: 0}"
OPENAI_API_KEY=sk-OAIKEY-0123456789SECRET ANTHROPIC_API_KEY=sk-ant-ANTKEY-0123456789 \
    run tandem run --repo "$T/demo" "make the failing test pass"
expect_rc 1 "the wrapper's failure"
expect_in "$T/err" "auth failed for [redacted]"
dir=$(session_dir)
if grep -r -q -F "0123456789SECRET" "$T/err" "$T/out" "$dir"; then
    fail "the key reached: $(grep -r -l -F "0123456789SECRET" "$T/err" "$dir" | head -3)"
fi
pass "a provider's key a command model prints is redacted"

# Exit 75 (EX_TEMPFAIL) is retried; the answers then arrive.
copy_demo
rm -f "$T/model/counter" "$T/model"/prompt-*
: >"$T/model/fail-first"
# the retried call takes the counter one further: shift the answers
for i in 4 3 2 1; do mv "$T/model/answer-$i" "$T/model/answer-$((i + 1))"; done
command_config "{provider: command, command: [/bin/sh, $T/model/answer.sh]}"
run tandem run --repo "$T/demo" "make the failing test pass"
expect_rc 0 "approved after a retry"
dir=$(session_dir)
expect_in "$dir/logs/coder-1.log" "exited with status 75 (EX_TEMPFAIL"
expect_in "$dir/logs/coder-1.log" "the model is busy, try later"
expect_in "$dir/logs/coder-1.log" "retry 1 of 3"
expect_in "$dir/report.json" '"retries": 1'
pass "exit 75 is retried"

# A program that never answers is stopped at the timeout, with its
# children, and the run ends in bounded time.
copy_demo
cat >"$T/model/slow.sh" <<'SH'
#!/bin/sh
sleep 37
SH
command_config "{provider: command, command: [/bin/sh, $T/model/slow.sh], timeout_s: 1, max_retries: 0}"
start=$(date +%s)
run tandem run --repo "$T/demo" "make the failing test pass"
took=$(($(date +%s) - start))
expect_rc 1 "timeout"
expect_in "$T/err" "gave no answer within 1.0s and was stopped"
[ "$took" -lt 20 ] || fail "the timeout took ${took}s"
if pgrep -f "$T/model/slow.sh" >/dev/null 2>&1; then
    fail "the slow program outlived the run"
fi
pass "a hanging program times out (${took}s) and is killed"

# An empty answer is an error.
copy_demo
command_config "{provider: command, command: 'cat >/dev/null; echo nothing to say >&2', max_retries: 0}"
run tandem run --repo "$T/demo" "make the failing test pass"
expect_rc 1 "empty answer"
expect_in "$T/err" "exited 0 but printed no answer on stdout"
expect_in "$T/err" "nothing to say"
pass "an empty answer fails with a clear error"
