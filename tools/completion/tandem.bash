# bash completion for tandem(1), tandem-coder and tandem-reviewer.
#
# Installed by `make install` as share/bash-completion/completions/tandem
# (bash-completion loads it on first use); or source it from ~/.bashrc.
#
# The commands and options come from the program being completed: its
# `tandem help COMMAND` (the "commands:" and "options:" lists), so they
# are always the ones that tandem takes. An option's value is completed
# by what its help names it: DIR a directory, FILE a file, PROVIDER:MODEL
# a provider. A session ID is completed from REPO/.tandem/sessions/ (the
# --repo on the line, else the current directory): ids that start with
# the word, else the one id that contains it, as tandem accepts.

# The command names of a help text (stdin): "  NAME ..." under "commands:".
_tandem_help_commands()
{
    sed -n '/^commands:/,/^$/s/^  \([a-z][a-z-]*\).*/\1/p'
}

# The options of a help text (stdin), one "OPTION ARG" (ARG empty for a
# flag) per line: the option column of the lines under "options:".
_tandem_help_options()
{
    awk '/^options:/ { on = 1; next }
         on && /^$/ { on = 0 }
         on && /^  -/ {
             n = 0; arg = ""
             for (i = 1; i <= NF; i++) {
                 f = $i; sub(/,$/, "", f)
                 if (f ~ /^--?[A-Za-z]/) { opt[++n] = f; continue }
                 if (f ~ /^[A-Z][A-Z:_]*$/) { arg = f; continue }
                 break
             }
             for (j = 1; j <= n; j++) print opt[j], arg
         }'
}

# The subcommands of cmd's help text (stdin): its "commands:" list, and
# the word after "tandem cmd" in its usage lines when it is one
# (`tandem sessions prune`).
_tandem_help_subcommands()
{
    local cmd=$1
    awk -v cmd="$cmd" '
        /^commands:/ { on = 1; next }
        on && /^$/ { on = 0 }
        on && /^  [a-z]/ { print $1 }
        /^(usage:)? *tandem / {
            for (i = 1; i < NF; i++)
                if ($i == "tandem" && $(i + 1) == cmd && $(i + 2) ~ /^[a-z]+$/)
                    print $(i + 2)
        }' | sort -u
}

# The session ids of repo, one per line.
_tandem_sessions()
{
    local d
    for d in "$1"/.tandem/sessions/*/; do
        [ -d "$d" ] || continue
        d=${d%/}
        printf '%s\n' "${d##*/}"
    done
}

# COMPREPLY: the ids of repo starting with cur, else the one containing it.
_tandem_complete_id()
{
    local repo=$1 cur=$2 id ids found=
    ids=$(_tandem_sessions "$repo")
    COMPREPLY=($(compgen -W "$ids" -- "$cur"))
    [ ${#COMPREPLY[@]} -gt 0 ] || [ -z "$cur" ] && return
    for id in $ids; do
        case $id in
        *"$cur"*)
            [ -n "$found" ] && return
            found=$id
            ;;
        esac
    done
    [ -n "$found" ] && COMPREPLY=("$found")
}

# COMPREPLY: a value for an option whose help names it arg.
_tandem_complete_value()
{
    local arg=$1 cur=$2
    case $arg in
    DIR)
        compopt -o filenames 2>/dev/null
        COMPREPLY=($(compgen -d -- "$cur"))
        ;;
    FILE)
        compopt -o filenames 2>/dev/null
        COMPREPLY=($(compgen -f -- "$cur"))
        ;;
    *:MODEL)
        compopt -o nospace 2>/dev/null
        COMPREPLY=($(compgen -W "openai: anthropic: ollama: command: replay:" \
            -- "$cur"))
        ;;
    esac
}

# The ARG of option opt in an options list ("OPTION ARG" lines); fails
# when opt is no option there or takes no value.
_tandem_option_arg()
{
    local o a
    while read -r o a; do
        if [ "$o" = "$1" ]; then
            [ -n "$a" ] && printf '%s\n' "$a"
            [ -n "$a" ]
            return
        fi
    done <<<"$2"
    return 1
}

_tandem()
{
    local cur=${COMP_WORDS[COMP_CWORD]} prev= prog=${COMP_WORDS[0]}
    local cmd= sub= subs= help= opts= repo=. operands=0 i w arg
    COMPREPLY=()
    [ "$COMP_CWORD" -gt 0 ] && prev=${COMP_WORDS[COMP_CWORD - 1]}
    case $prog in "~/"*) prog=$HOME/${prog#"~/"} ;; esac
    command -v "$prog" >/dev/null 2>&1 || prog=tandem

    if [ "$COMP_CWORD" -le 1 ]; then
        case $cur in
        -*) COMPREPLY=($(compgen -W "$("$prog" --help 2>/dev/null |
            _tandem_help_options | cut -d' ' -f1)" -- "$cur")) ;;
        *) COMPREPLY=($(compgen -W "$("$prog" --help 2>/dev/null |
            _tandem_help_commands)" -- "$cur")) ;;
        esac
        return 0
    fi
    cmd=${COMP_WORDS[1]}
    if [ "$cmd" = help ]; then
        [ "$COMP_CWORD" -eq 2 ] &&
            COMPREPLY=($(compgen -W "$("$prog" --help 2>/dev/null |
                _tandem_help_commands)" -- "$cur"))
        return 0
    fi
    help=$("$prog" help "$cmd" 2>/dev/null) || return 0
    subs=$(printf '%s\n' "$help" | _tandem_help_subcommands "$cmd")
    opts=$(printf '%s\n' "$help" | _tandem_help_options)

    # What is on the line already: --repo, the subcommand, operands.
    for ((i = 2; i < COMP_CWORD; i++)); do
        w=${COMP_WORDS[i]}
        case $w in
        =) continue ;;
        -*)
            if arg=$(_tandem_option_arg "$w" "$opts"); then
                [ "${COMP_WORDS[i + 1]}" = "=" ] && i=$((i + 1))
                i=$((i + 1))
                [ "$w" = --repo ] && repo=${COMP_WORDS[i]}
            fi
            continue
            ;;
        esac
        if [ -z "$sub" ] && [ "$operands" -eq 0 ] &&
            printf '%s\n' "$subs" | grep -qxF -- "$w"; then
            sub=$w
            opts=$("$prog" "$cmd" "$sub" --help 2>/dev/null |
                _tandem_help_options)
        else
            operands=$((operands + 1))
        fi
    done

    # A value: `--opt VALUE` or `--opt=VALUE` (bash makes '=' a word of
    # its own unless COMP_WORDBREAKS was changed to leave it out).
    [ "$prev" = "=" ] && [ "$COMP_CWORD" -gt 2 ] &&
        prev=${COMP_WORDS[COMP_CWORD - 2]}
    if [[ $prev == -* ]] && arg=$(_tandem_option_arg "$prev" "$opts"); then
        [ "$cur" = "=" ] && cur=
        _tandem_complete_value "$arg" "$cur"
        return 0
    fi
    if [[ $cur == --*=* ]] &&
        arg=$(_tandem_option_arg "${cur%%=*}" "$opts"); then
        _tandem_complete_value "$arg" "${cur#*=}"
        COMPREPLY=("${COMPREPLY[@]/#/${cur%%=*}=}")
        return 0
    fi
    case $cur in
    -*)
        COMPREPLY=($(compgen -W "$(printf '%s\n' "$opts" | cut -d' ' -f1)" \
            -- "$cur"))
        return 0
        ;;
    esac
    if [ -n "$subs" ]; then
        # lessons takes a subcommand (its IDs are lessons, not sessions);
        # sessions may take prune.
        [ -z "$sub" ] && [ "$operands" -eq 0 ] &&
            COMPREPLY=($(compgen -W "$subs" -- "$cur"))
        return 0
    fi
    # A command whose usage takes a session ID: one.
    if [ "$operands" -eq 0 ] &&
        printf '%s\n' "$help" | grep -q "^usage: tandem $cmd .*ID"; then
        _tandem_complete_id "$repo" "$cur"
    fi
    return 0
}

# tandem-coder and tandem-reviewer: their options, files and providers.
_tandem_agent()
{
    local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
    local opts arg
    COMPREPLY=()
    opts=$("${COMP_WORDS[0]}" --help 2>/dev/null | _tandem_help_options)
    if arg=$(_tandem_option_arg "$prev" "$opts"); then
        _tandem_complete_value "$arg" "$cur"
    elif [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$(printf '%s\n' "$opts" | cut -d' ' -f1)" \
            -- "$cur"))
    fi
    return 0
}

complete -F _tandem tandem
complete -F _tandem_agent tandem-coder tandem-reviewer
