#!/bin/sh
# bash and zsh completion (tools/completion/): commands, each command's
# options from its own help, option values, and session ids from
# REPO/.tandem/sessions/ of two real runs. bash runs the completion
# function as bash would and the test reads COMPREPLY; zsh (when
# installed) runs it with its completion builtins replaced by ones that
# print what they are given.
. "$(dirname "$0")/lib.sh"

PATH=$BIN:$PATH
export PATH

# Two sessions of the demo.
copy_demo
for i in 1 2; do
    run tandem run -q --repo "$T/demo" "make the failing test pass"
    expect_rc 0 "demo run $i"
done
set -- $(ls "$T/demo/.tandem/sessions")
[ $# = 2 ] || fail "expected two sessions, got: $*"
ID1=$1
ID2=$2
TAIL1=$(echo "$ID1" | sed 's/.*-//')
mkdir -p "$T/cwd/somedir"

# ---- bash ----------------------------------------------------------

cat >"$T/comp.bash" <<'EOF'
. "$1"
shift
COMP_WORDS=("$@")
COMP_CWORD=$(($# - 1))
COMP_LINE="$*"
COMP_POINT=${#COMP_LINE}
COMPREPLY=()
case $1 in
tandem-*) _tandem_agent ;;
*) _tandem ;;
esac
printf '%s\n' "${COMPREPLY[@]}"
EOF

# comp WORD...: complete the last word (run in $T/cwd); the candidates,
# one a line, in $T/out.
comp() {
    (cd "$T/cwd" && bash "$T/comp.bash" "$TOP/tools/completion/tandem.bash" \
        "$@") >"$T/out" 2>"$T/err" || fail "completion failed: $*"
    [ -s "$T/err" ] && fail "completion wrote to stderr: $*"
    sort -o "$T/out" "$T/out"
}

# expect_words WORD...: $T/out is exactly these words (none: empty).
expect_words() {
    : >"$T/want"
    [ $# = 0 ] || printf '%s\n' "$@" | sort >"$T/want"
    sed -i '/^$/d' "$T/out"
    cmp -s "$T/want" "$T/out" ||
        fail "expected: $* -- got: $(tr '\n' ' ' <"$T/out")"
}

comp tandem ru
expect_words run
comp tandem ''
for c in run review doctor init resume approve reject guide budget sessions \
    show stats watch lessons help; do
    grep -q -x "$c" "$T/out" || fail "tandem <TAB> lacks $c"
done
comp tandem in
expect_words init
comp tandem --
expect_words --help --version
pass "bash: commands"

comp tandem run --
expect_words --repo --config --llm --base-url --task-file --record \
    --json --keep-workspace --insecure --apply --commit --quiet --verbose --help
comp tandem review --st
expect_words --staged
comp tandem init --
expect_words --repo --force --help
comp tandem sessions ''
expect_words prune
comp tandem sessions prune --
expect_words --repo --older-than --waiting --dry-run --help
comp tandem lessons ''
expect_words forget list show
comp tandem lessons show --
expect_words --repo --help
comp tandem help i
expect_words init
comp tandem-reviewer --me
expect_words --member
pass "bash: each command's options and subcommands, from its help"

comp tandem run --repo ''
expect_words somedir
comp tandem run --repo = ''
expect_words somedir
comp tandem run --repo=s
expect_words --repo=somedir
comp tandem run --llm an
expect_words anthropic:
comp tandem run --task-file ''
expect_words somedir
comp tandem reject -m ''
expect_words
comp tandem run -q ''
expect_words
pass "bash: option values by their kind"

comp tandem show --repo "$T/demo" ''
expect_words "$ID1" "$ID2"
comp tandem approve --repo = "$T/demo" 2
expect_words "$ID1" "$ID2"
comp tandem show --repo "$T/demo" "$TAIL1"
expect_words "$ID1"
comp tandem show --repo "$T/demo" "$ID1" ''
expect_words
comp tandem show ''
expect_words
(cd "$T/demo" && bash "$T/comp.bash" "$TOP/tools/completion/tandem.bash" \
    tandem budget '') | sort >"$T/out"
expect_words "$ID1" "$ID2"
comp tandem lessons show --repo "$T/demo" ''
expect_words
comp tandem frob ''
expect_words
pass "bash: session ids from --repo or the current directory, by prefix or a unique part"

# ---- zsh -----------------------------------------------------------

if ! command -v zsh >/dev/null 2>&1; then
    echo "note: zsh is not installed; its completion was not tried"
    exit 0
fi
zsh -n "$TOP/tools/completion/_tandem" || fail "_tandem does not parse"
cat >"$T/comp.zsh" <<'EOF'
# compsys's builtins, printing the candidates they are given
_describe() {
  local a e
  local -a arr
  while [[ $1 == -* ]]; do [[ $1 == -t ]] && shift; shift; done
  shift
  for a in "$@"; do
    arr=("${(@P)a}")
    for e in "${arr[@]}"; do print -r -- "${e%%:*}"; done
  done
}
compadd() { while [[ $1 != -- ]]; do shift; done; shift; print -rl -- "$@"; }
_files() { print -r -- "_files $*"; }
_message() { :; }
compset() { :; }
file=$1
shift
words=("$@")
CURRENT=$#
service=${words[1]}
source "$file"
EOF

zcomp() {
    (cd "$T/cwd" && zsh -f "$T/comp.zsh" "$TOP/tools/completion/_tandem" \
        "$@") >"$T/out" 2>"$T/err" || fail "zsh completion failed: $*"
    [ -s "$T/err" ] && fail "zsh completion wrote to stderr: $*"
    sort -o "$T/out" "$T/out"
}

zcomp tandem ''
grep -q -x init "$T/out" || fail "zsh: tandem <TAB> lacks init"
grep -q -x run "$T/out" || fail "zsh: tandem <TAB> lacks run"
zcomp tandem run --
expect_words --repo --config --llm --base-url --task-file --record \
    --json --keep-workspace --insecure --apply --commit -q --quiet -v --verbose -h \
    --help
zcomp tandem sessions ''
expect_words prune
zcomp tandem run --repo ''
expect_words "_files -/"
zcomp tandem run --llm ''
expect_words openai: anthropic: ollama: command: replay:
zcomp tandem show --repo "$T/demo" ''
expect_words "$ID1" "$ID2"
zcomp tandem show --repo="$T/demo" "$TAIL1"
expect_words "$ID1"
zcomp tandem show --repo "$T/demo" "$ID1" ''
expect_words
zcomp tandem-coder --
grep -q -x -- --connect "$T/out" || fail "zsh: tandem-coder lacks --connect"
pass "zsh: commands, options, values and session ids"
