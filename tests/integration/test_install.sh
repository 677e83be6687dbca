#!/bin/sh
# make install into a temporary DESTDIR: every file where it belongs,
# the man pages rendering without a warning, tandem(1) naming exactly the
# commands and options `tandem help` lists (so the page cannot drift),
# agents.yaml(5) naming every key of the example agents.yaml, and make
# uninstall removing it all.
. "$(dirname "$0")/lib.sh"

D=$T/dest
P=$D/usr/local

# ---- make install, make uninstall ----------------------------------

run make -s -C "$TOP" install DESTDIR="$D"
expect_rc 0 "make install DESTDIR=..."
# installed file, its source in the tree, its mode
while read -r dst src mode; do
    [ -f "$P/$dst" ] || fail "make install did not install $dst"
    cmp -s "$P/$dst" "$TOP/$src" || fail "$dst differs from $src"
    [ "$(stat -c %a "$P/$dst")" = "$mode" ] ||
        fail "$dst has mode $(stat -c %a "$P/$dst"), not $mode"
done <<EOF
bin/tandem bin/tandem 755
bin/tandem-coder bin/tandem-coder 755
bin/tandem-reviewer bin/tandem-reviewer 755
bin/tandem-sandbox-enter bin/tandem-sandbox-enter 755
share/man/man1/tandem.1 docs/man/tandem.1 644
share/man/man5/agents.yaml.5 docs/man/agents.yaml.5 644
share/bash-completion/completions/tandem tools/completion/tandem.bash 644
share/zsh/site-functions/_tandem tools/completion/_tandem 644
share/doc/tandem/agents.yaml agents.yaml 644
share/doc/tandem/LICENSE LICENSE 644
EOF
[ "$(find "$D" -type f | wc -l)" = 10 ] || {
    find "$D" -type f >&2
    fail "make install wrote files it does not list"
}
run "$P/bin/tandem" --version
expect_rc 0 "the installed tandem"
pass "make install puts the programs, man pages, completions, example and LICENSE under DESTDIR/usr/local"

run make -s -C "$TOP" install DESTDIR="$D" PREFIX=/opt/tandem
expect_rc 0 "make install PREFIX=/opt/tandem"
[ -f "$D/opt/tandem/share/man/man1/tandem.1" ] || fail "PREFIX not honoured"
run make -s -C "$TOP" uninstall DESTDIR="$D" PREFIX=/opt/tandem
run make -s -C "$TOP" uninstall DESTDIR="$D"
expect_rc 0 "make uninstall"
left=$(find "$D" -type f)
[ -z "$left" ] || fail "make uninstall left: $left"
[ ! -e "$P/share/doc/tandem" ] || fail "make uninstall left share/doc/tandem"
pass "PREFIX is honoured, and make uninstall removes every file"

# ---- the pages render cleanly --------------------------------------

for page in "$TOP/docs/man/tandem.1" "$TOP/docs/man/agents.yaml.5"; do
    name=$(basename "$page")
    if command -v groff >/dev/null 2>&1; then
        LC_ALL=C.UTF-8 groff -man -Tutf8 -ww -z "$page" >"$T/out" 2>"$T/err"
        RC=$?
        expect_rc 0 "groff on $name"
        [ -s "$T/err" ] && fail "groff warns about $name"
    fi
    if command -v man >/dev/null 2>&1; then
        MANWIDTH=80 man --warnings -E UTF-8 -l "$page" >"$T/out" 2>"$T/err"
        RC=$?
        expect_rc 0 "man -l $name"
        [ -s "$T/err" ] && fail "man warns about $name"
        expect_in "$T/out" "NAME"
        expect_in "$T/out" "SEE ALSO"
    fi
done
command -v groff >/dev/null 2>&1 || command -v man >/dev/null 2>&1 ||
    echo "note: neither groff nor man is installed; pages not rendered"
version=$("$BIN/tandem" --version | sed 's/^tandem //')
for page in tandem.1 agents.yaml.5; do
    grep -q "^\.TH .* \"tandem $version\"" "$TOP/docs/man/$page" ||
        fail "$page does not say tandem $version in .TH"
done
pass "tandem(1) and agents.yaml(5) render without a warning and name the version"

# ---- tandem(1) lists every command and option ----------------------

# The page as text: roff's escaped minus and font changes taken out.
sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' -e 's/\\(..//g' \
    "$TOP/docs/man/tandem.1" >"$T/tandem.1.txt"

# The lines of the section whose heading starts with words ("tandem
# run", "tandem sessions prune", "tandem-coder"): .SS to the next
# heading. The heading's words end at the first option, [ or operand.
section() {
    awk -v key="$1" '
        /^\.S[HS] / { on = 0 }
        /^\.SS / {
            h = $0; sub(/^\.SS +/, "", h); gsub(/"/, "", h)
            n = split(h, w, " "); k = ""
            for (i = 1; i <= n; i++) {
                if (w[i] ~ /^[-[A-Z]/) break
                k = k (k == "" ? "" : " ") w[i]
            }
            if (k == key) { on = 1; found = 1 }
            next
        }
        on
        END { exit !found }' "$T/tandem.1.txt"
}

# The options a help text (stdin) lists under "options:", one a line,
# without -h and --help (the page says once that every command has
# them).
help_options() {
    awk '/^options:/ { on = 1; next }
         on && /^$/ { on = 0 }
         on && /^  -/ {
             line = substr($0, 3); i = index(line, "  ")
             if (i) line = substr(line, 1, i - 1)
             n = split(line, w, /[ ,]+/)
             for (j = 1; j <= n; j++) if (w[j] ~ /^--?[A-Za-z]/) print w[j]
         }' | grep -v -x -e -h -e --help | sort -u
}

# The options a page section (stdin) gives .TP items to, one a line.
page_options() {
    awk 'tp {
             tp = 0; n = split($0, w, /[ ,"]+/)
             for (j = 2; j <= n; j++) if (w[j] ~ /^--?[A-Za-z]/) print w[j]
         }
         /^\.TP/ { tp = 1 }' | sort -u
}

# The subcommands a command's help (stdin) names: under "commands:", or
# after "tandem CMD" in its usage lines (`tandem sessions prune`).
help_subcommands() {
    awk -v cmd="$1" '
        /^commands:/ { on = 1; next }
        on && /^$/ { on = 0 }
        on && /^  [a-z]/ { print $1 }
        /^(usage:)? *tandem / {
            for (i = 1; i < NF; i++)
                if ($i == "tandem" && $(i + 1) == cmd && $(i + 2) ~ /^[a-z]+$/)
                    print $(i + 2)
        }' | sort -u
}

# check KEY HELPFILE: the page has a section KEY whose options are
# exactly those of the help text in HELPFILE.
check() {
    section "$1" >"$T/section" || fail "tandem.1 has no section for '$1'"
    help_options <"$2" >"$T/want"
    page_options <"$T/section" >"$T/have"
    missing=$(comm -23 "$T/want" "$T/have" | tr '\n' ' ')
    extra=$(comm -13 "$T/want" "$T/have" | tr '\n' ' ')
    [ -z "$missing" ] ||
        fail "tandem.1, section '$1', lacks options its help lists: $missing"
    [ -z "$extra" ] ||
        fail "tandem.1, section '$1', has options its help does not list: $extra"
    checked=$((checked + 1))
}

checked=0
"$BIN/tandem" --help >"$T/top"
cmds=$(sed -n '/^commands:/,/^$/s/^  \([a-z][a-z-]*\).*/\1/p' "$T/top")
[ -n "$cmds" ] || fail "no commands in tandem --help"
for cmd in $cmds; do
    if [ "$cmd" = help ]; then
        # `tandem help` takes no option; its section says what it does
        section "tandem help" >/dev/null || fail "tandem.1 has no 'tandem help'"
        continue
    fi
    "$BIN/tandem" help "$cmd" >"$T/help" || fail "tandem help $cmd failed"
    check "tandem $cmd" "$T/help"
    for sub in $(help_subcommands "$cmd" <"$T/help"); do
        "$BIN/tandem" "$cmd" "$sub" --help >"$T/subhelp" ||
            fail "tandem $cmd $sub --help failed"
        check "tandem $cmd $sub" "$T/subhelp"
    done
done
for agent in tandem-coder tandem-reviewer; do
    "$BIN/$agent" --help >"$T/help"
    check "$agent" "$T/help"
done
for opt in $(help_options <"$T/top") -h --help; do
    grep -q -F -w -e "$opt" "$T/tandem.1.txt" || fail "tandem.1 lacks $opt"
done
# and no section for a command tandem does not have
sed -n 's/^\.SS "*tandem \([a-z][a-z-]*\).*/\1/p' "$T/tandem.1.txt" |
    sort -u >"$T/page-cmds"
for cmd in $(cat "$T/page-cmds"); do
    echo "$cmds" | grep -q -x -F "$cmd" ||
        fail "tandem.1 has a section for 'tandem $cmd', which tandem does not list"
done
[ "$checked" -gt 15 ] || fail "only $checked sections were checked"
pass "tandem.1 has a section for each of the $checked commands, with exactly the options their help lists"

# ---- agents.yaml(5) covers every key -------------------------------

sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' -e 's/\\(..//g' \
    "$TOP/docs/man/agents.yaml.5" >"$T/agents.yaml.5.txt"
# The keys of the example: set ones, and commented-out ones with a
# value (`# after: [build]`), not prose that happens to hold a colon.
{
    sed -n 's/^ *\([a-z_][a-z_]*\):.*/\1/p' "$TOP/agents.yaml"
    sed -n -E 's/^ *# *([a-z_]+): (\[.*\]|\{.*\}|"[^"]*"|[^ ]+)( +#.*)?$/\1/p' \
        "$TOP/agents.yaml"
} | sort -u >"$T/keys"
[ "$(wc -l <"$T/keys")" -gt 50 ] || fail "too few keys found in agents.yaml"
for key in $(cat "$T/keys"); do
    grep -q -w -F -e "$key" "$T/agents.yaml.5.txt" ||
        fail "agents.yaml(5) does not describe '$key' (a key of agents.yaml)"
done
# Its first example loads (the models pointed at a closed local port,
# so no network is asked).
mkdir -p "$T/example"
awk '/^\.SH EXAMPLES/ { on = 1 } on && /^\.EE/ { exit } on && ex { print }
     on && /^\.EX/ { ex = 1 }' "$T/agents.yaml.5.txt" >"$T/example/agents.yaml"
expect_in "$T/example/agents.yaml" "version: 1"
run "$BIN/tandem" doctor --repo "$T/example" --llm openai:m \
    --base-url http://127.0.0.1:9/v1 --timeout 1
[ "$RC" = 0 ] || [ "$RC" = 1 ] || fail "the example does not load (exit $RC)"
expect_in "$T/out" "config                 ok"
pass "agents.yaml(5) describes every key of agents.yaml, and its example loads"
