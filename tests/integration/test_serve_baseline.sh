#!/bin/sh
# tandem serve: tasks on the same tree share one baseline
# (gate.baseline_reuse_s). A skill that only the baseline runs (its paths
# match nothing the change touches; the baseline runs every skill) counts
# its runs in a file outside the workspace, so the count is the number of
# baselines that ran. The second task on a tree reuses the first's and
# says so (stderr, journal, report.json); a changed tree runs its own,
# and so do one that differs only in an empty directory, one whose
# file has another mode and one whose nested .git differs (a deep one
# keyed on a session thread's small stack, one too deep to key unshared);
# tasks that start together on a new tree run it once; a session resumed
# after SIGKILL replays its reused baseline and still says whose it is;
# with gate.baseline_reuse_s: 0 every task runs its own. While the gate file
# is missing, the counting skill holds its baseline back (it runs
# unsandboxed, so it sees this test's files).
. "$(dirname "$0")/lib.sh"

. "$(dirname "$0")/serve_lib.sh"

COUNTER=$T/baselines
GATE=$T/gate
touch "$GATE"

# config FILE [REUSE-SECONDS] [BUILD-COMMAND]
config() {
    cat >"$1" <<YAML
version: 1
gate:
  baseline_reuse_s: ${2:-600}
agents:
  coder:
    llm: {provider: replay, cassette: "$CASSETTE"}
  reviewer:
    llm: {provider: replay, cassette: "$CASSETTE"}
    skills: [count, build, test]
skills:
  count: {command: "echo ran >>$COUNTER; until [ -e $GATE ]; do sleep 0.01; done",
          sandbox: none,
          paths: ["nothing/matches/this"], timeout_s: 30}
  build: {command: "${3:-make}", required: true, timeout_s: 120${3:+,
          sandbox: none}}
  test: {command: make test, required: true, timeout_s: 60}
YAML
}

baselines() { if [ -e "$COUNTER" ]; then wc -l <"$COUNTER"; else echo 0; fi; }

# submit N REPO: one task, waited for; its stderr in $T/err.N
submit() {
    tandem submit --repo "$2" "make the failing test pass" \
        >"$T/out.$1" 2>"$T/err.$1" ||
        fail "task $1 exited $?: $(tail -5 "$T/err.$1")"
}

sid_of() { sed -n 's/^tandem: session \([^:]*\): make.*/\1/p' "$T/err.$1" | head -1; }

# reused_from DIR: the report's baseline.reused_from ("None" when null)
reused_from() {
    $PY -c 'import json, sys
print(json.load(open(sys.argv[1]))["baseline"]["reused_from"])' "$1/report.json"
}

# own_baselines I A J B N WHAT: task I on tree A runs baseline N, where
# the build passes; task J on tree B, whose bytes are A's but for WHAT,
# runs its own, N + 1, where the build fails (B's attempts fail to build
# too, so its exit code is not the point, its baseline is)
own_baselines() {
    submit "$1" "$T/$2"
    [ "$(baselines)" = "$5" ] || fail "tree $2 did not run its own baseline"
    expect_in "$T/err.$1" "build pass, test FAIL"
    tandem submit --repo "$T/$4" "make the failing test pass" \
        >"$T/out.$3" 2>"$T/err.$3"
    expect_not_in "$T/err.$3" "reused from"
    [ "$(baselines)" = $(($5 + 1)) ] || fail "tree $2's bytes with $6 reused its baseline"
    expect_in "$T/err.$3" "baseline: count pass, build FAIL"
}

# gen_rule DIR: gen.in, and a rule that fails when make regenerates
# gen.txt from it (that is, when gen.txt is older)
gen_rule() {
    echo in >"$1/gen.in"
    printf '\nstats.o: gen.txt\ngen.txt: gen.in\n\t@echo "gen.txt is older than gen.in"; exit 1\n' \
        >>"$1/Makefile"
}

config "$T/serve.yaml"
repo a
repo b
echo "/* another tree */" >>"$T/b/stats.h"

# ---- the second task on a tree reuses the first's baseline --------------
start_serve --config "$T/serve.yaml" --max-sessions 4 --pool 1
submit 1 "$T/a"
[ "$(baselines)" = 1 ] || fail "the first task ran $(baselines) baselines"
s1=$(sid_of 1)
expect_in "$T/err.1" "baseline: running the skills on the unmodified tree"
[ "$(reused_from "$T/a/.tandem/sessions/$s1")" = None ] ||
    fail "the first task's baseline says it was reused"
submit 2 "$T/a"
[ "$(baselines)" = 1 ] || fail "the second task on the same tree ran its own baseline"
s2=$(sid_of 2)
d2=$T/a/.tandem/sessions/$s2
expect_in "$T/err.2" "baseline: reused from $s1 (same tree)"
expect_not_in "$T/err.2" "baseline: running the skills"
expect_in "$T/err.2" "[2/3] approve"
[ "$(reused_from "$d2")" = "$s1" ] || fail "report.json: reused_from is $(reused_from "$d2"), not $s1"
expect_in "$d2/journal.jsonl" "\"reused_from\":\"$s1\""
# journaled as a fresh one is: the task id is this session's
grep '"type":"baseline"' "$d2/journal.jsonl" | grep -q "\"task_id\":\"$s2\"" ||
    fail "the reused baseline is journaled under another task id"
pass "a second task on the same tree reuses the first's baseline, and says so"

# ---- a changed tree runs its own ----------------------------------------
submit 3 "$T/b"
[ "$(baselines)" = 2 ] || fail "a changed tree did not run its own baseline"
[ "$(reused_from "$T/b/.tandem/sessions/$(sid_of 3)")" = None ] ||
    fail "the changed tree's baseline says it was reused"
expect_not_in "$T/err.3" "reused from"
pass "a task on a changed tree runs its own baseline"

# ---- tasks that start together on a new tree run it once ----------------
# the first baseline is held until the other two wait for it
for r in c d e; do
    repo $r
    echo "/* a third tree */" >>"$T/$r/stats.h"
    # one tree: the same mtimes too (a tree taken whole is keyed on them)
    touch -r "$T/c/stats.h" "$T/$r/stats.h"
done
rm "$GATE"
pids=
for i in 4 5 6; do
    r=$(echo c d e | cut -d' ' -f$((i - 3)))
    (submit $i "$T/$r") &
    pids="$pids $!"
done
wait_for "ran" "$COUNTER" 30
n=0
i=0
while [ "$n" != 2 ]; do
    n=$(cat "$T"/err.4 "$T"/err.5 "$T"/err.6 2>/dev/null |
        grep -c "baseline: waiting for session")
    i=$((i + 1))
    [ $i -gt $((3000 * SLOW)) ] && fail "$n tasks wait for the first one's baseline, not 2"
    sleep 0.01
done
touch "$GATE"
for p in $pids; do wait "$p" || fail "a task of the three failed"; done
[ "$(baselines)" = 3 ] || fail "three tasks on one new tree ran $(($(baselines) - 2)) baselines"
n=$(cat "$T"/err.4 "$T"/err.5 "$T"/err.6 | grep -c "baseline: reused from")
[ "$n" = 2 ] || fail "$n of the three tasks reused the baseline, not 2"
pass "three tasks starting together on a new tree: one runs the baseline, two wait for it"

# ---- an empty directory makes another tree ------------------------------
# Outside git a tree is taken whole, empty directories too, and a skill
# sees them (`mkdir build` fails when one is there), though the tree's
# hash lists files and links only: the directories are in the key.
repo g
repo h
mkdir "$T/h/build"
submit 9 "$T/g"
[ "$(baselines)" = 3 ] || fail "a copy of tree a ran its own baseline"
expect_in "$T/err.9" "baseline: reused from $s1 (same tree)"
submit 10 "$T/h"
[ "$(baselines)" = 4 ] || fail "a tree with one more, empty, directory reused another's baseline"
expect_not_in "$T/err.10" "reused from"
pass "a copy of a tree reuses its baseline; one more empty directory runs its own"

# ---- the same bytes with other modes make another tree -----------------
# The reviewer runs the skills in the workspace itself, where the files
# keep the user's modes, while the tree's hash has only the exec bit. A
# build that refuses world-writable files (in trees i and j alike) passes
# on i and fails on j, whose config.h is mode 0666: j must run its own
# baseline, not be told its build passed before the change.
for r in i j; do
    repo $r
    echo '#define STATS_VERSION 1' >"$T/$r/config.h"
    chmod 644 "$T/$r/config.h"
    printf '\nstats.o: modes\nmodes:\n\t@if find . -type f -perm -o+w | grep .; then echo "world-writable files (above)"; exit 1; fi\n.PHONY: modes\n' \
        >>"$T/$r/Makefile"
done
chmod 666 "$T/j/config.h"
own_baselines 11 i 12 j 5 "a world-writable file"
pass "the same bytes with a world-writable file run their own baseline"

# ---- a nested .git makes another tree -----------------------------------
# A tree taken whole keeps a vendored checkout's .git, and the skills
# read it in the workspace, but the tree's hash skips .git at every
# depth. Trees k and l differ only in vendor/lib/.git/HEAD, which the
# build checks: l must run its own baseline.
for r in k l; do
    repo $r
    mkdir -p "$T/$r/vendor/lib/.git"
    echo 'int x;' >"$T/$r/vendor/lib/x.c"
    printf '\nstats.o: vcheck\nvcheck:\n\t@grep -q good vendor/lib/.git/HEAD || { echo "vendor/lib is not at the good commit"; exit 1; }\n.PHONY: vcheck\n' \
        >>"$T/$r/Makefile"
done
echo good >"$T/k/vendor/lib/.git/HEAD"
echo bad >"$T/l/vendor/lib/.git/HEAD"
own_baselines 13 k 14 l 7 "another nested .git"
pass "a tree whose nested .git differs runs its own baseline"

# ---- the same bytes with a stale output make another tree ---------------
# A tree taken whole holds the user's build outputs with their mtimes,
# and make goes by them. Trees n and o hold the same bytes; in n, gen.txt
# is newer than gen.in (up to date), in o older (make regenerates it, and
# that fails): o must run its own baseline, not be told its build passed.
for r in n o; do
    repo $r
    gen_rule "$T/$r"
    echo out >"$T/$r/gen.txt"
    find "$T/$r" -exec touch -h -d '2026-01-01 00:00:00' {} +
    touch -d '2026-01-01 01:00:00' "$T/$r/gen.txt"
done
touch -d '2026-01-01 00:30:00' "$T/n/gen.in"
touch -d '2026-01-01 02:00:00' "$T/o/gen.in"
own_baselines 17 n 18 o 9 "a stale gen.txt"
pass "the same bytes with an output older than its source run their own baseline"
stop_serve

# ---- a deep nested .git on a session thread's stack ----------------------
# The nested .git is walked to make the key, on the session's thread:
# 2 MiB of stack under `ulimit -s unlimited` (glibc's default then), or
# as here. A 64 KiB buffer in each level's frame overflowed it 60
# directories down, and the whole server died with its sessions.
repo m
p=$T/m/vendor/lib/.git
i=0
while [ $i -lt 60 ]; do p=$p/d; i=$((i + 1)); done
mkdir -p "$p"
echo ref >"$p/HEAD"
stack=$(ulimit -Ss)
ulimit -Ss 2048
start_serve --config "$T/serve.yaml" --max-sessions 1 --pool 1
ulimit -Ss "$stack"
tandem submit --repo "$T/m" "make the failing test pass" >"$T/out.15" 2>"$T/err.15"
kill -0 "$SERVE_PID" 2>/dev/null ||
    fail "tandem serve died keying a deep nested .git: $(tail -3 "$T/serve.err")"
expect_in "$T/err.15" "approved after"
pass "a nested .git 60 directories deep is keyed on a session thread's 2 MiB stack"
# one past the walk's limit makes no key: the session runs its own
# baseline, unshared (it failed, while tandem run took the same tree)
repo n
p=$T/n/vendor/lib/.git
i=0
while [ $i -lt 70 ]; do p=$p/d; i=$((i + 1)); done
mkdir -p "$p"
tandem submit --repo "$T/n" "make the failing test pass" >"$T/out.16" 2>"$T/err.16"
expect_in "$T/err.16" "baseline: not shared with other sessions"
expect_in "$T/err.16" "approved after"
stop_serve
pass "a nested .git too deep for the key: the session runs its own baseline"

# ---- a resumed session keeps where its baseline came from --------------
# The build holds back the right fix (attempt 2) until $HOLD exists, so
# both sessions are still running when the server is killed: the second
# one with its reused baseline journaled. The next server resumes them;
# the second replays its baseline (none runs: the new server's cache is
# empty, so running one would count) and its report still names the
# first session.
HOLD=$T/hold
config "$T/held.yaml" 600 \
    "if grep -q 'return (double)sum / (double)count' stats.c; then until [ -e $HOLD ]; do sleep 0.02; done; fi; make"
rm -f "$COUNTER"
repo f
start_serve --config "$T/held.yaml" --max-sessions 4 --pool 1
journal_of() { echo "$T/f/.tandem/sessions/$1/journal.jsonl"; }
run tandem submit --detach --repo "$T/f" "make the failing test pass"
expect_rc 0 "the first task, detached"
k1=$(cat "$T/out")
wait_for '"type":"baseline"' "$(journal_of "$k1")" 30
run tandem submit --detach --repo "$T/f" "make the failing test pass"
expect_rc 0 "the second task, detached"
k2=$(cat "$T/out")
wait_for "\"reused_from\":\"$k1\"" "$(journal_of "$k2")" 30
[ "$(baselines)" = 1 ] || fail "two tasks on one tree ran $(baselines) baselines before the kill"
expect_not_in "$(journal_of "$k2")" '"type":"finish"'
kill -KILL "$SERVE_PID"
wait "$SERVE_PID" 2>/dev/null
SERVE_PID=
touch "$HOLD"
start_serve --config "$T/held.yaml" --max-sessions 4 --pool 1
for k in $k1 $k2; do
    wait_for '"type":"finish"' "$(journal_of "$k")" 60
    expect_in "$T/f/.tandem/sessions/$k/report.json" '"status": "approved"'
done
[ "$(baselines)" = 1 ] || fail "the resumed sessions ran $(($(baselines) - 1)) baselines again"
[ "$(reused_from "$T/f/.tandem/sessions/$k2")" = "$k1" ] ||
    fail "the resumed session's report.json: reused_from is $(reused_from "$T/f/.tandem/sessions/$k2"), not $k1"
[ "$(reused_from "$T/f/.tandem/sessions/$k1")" = None ] ||
    fail "the resumed first session's baseline says it was reused"
[ "$(grep -c '"type":"baseline"' "$(journal_of "$k2")")" = 1 ] ||
    fail "the resumed session journaled its baseline again"
stop_serve
pass "SIGKILL after a reused baseline was journaled: the resumed session replays it, and report.json still says whose it is"

# ---- gate.baseline_reuse_s: 0 -------------------------------------------
config "$T/off.yaml" 0
rm -f "$COUNTER"
start_serve --config "$T/off.yaml" --max-sessions 4 --pool 1
submit 7 "$T/a"
submit 8 "$T/a"
[ "$(baselines)" = 2 ] || fail "with gate.baseline_reuse_s: 0, two tasks ran $(baselines) baselines"
expect_not_in "$T/err.8" "reused from"
[ "$(reused_from "$T/a/.tandem/sessions/$(sid_of 8)")" = None ] ||
    fail "with reuse off, a baseline says it was reused"
stop_serve
pass "gate.baseline_reuse_s: 0 runs every task's own baseline"

# ---- git's files with untracked outputs brought in ----------------------
# With workspace.include_untracked, a git tree's untracked files come in,
# build outputs among them, with their mtimes: trees p and q are the same
# commit with the same untracked gen.txt, older than gen.in in q only
# (make regenerates it there, and that fails). q runs its own baseline.
config "$T/untracked.yaml"
printf 'workspace:\n  include_untracked: true\n' >>"$T/untracked.yaml"
rm -f "$COUNTER"
for r in p q; do
    repo $r
    gen_rule "$T/$r"
    (cd "$T/$r" && git init -q && git add -A &&
        git -c user.email=t@example.com -c user.name=t commit -qm base) ||
        fail "cannot make $r a git repository"
    echo out >"$T/$r/gen.txt"
    touch -d '2026-01-01 00:00:00' "$T/$r/gen.in"
    touch -d '2026-01-01 01:00:00' "$T/$r/gen.txt"
done
touch -d '2026-01-01 02:00:00' "$T/q/gen.in"
start_serve --config "$T/untracked.yaml" --max-sessions 4 --pool 1
own_baselines 19 p 20 q 1 "a stale untracked gen.txt"
stop_serve
pass "git's files with an untracked output older than its source run their own baseline"
