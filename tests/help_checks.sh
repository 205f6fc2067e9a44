#!/usr/bin/env bash
# Help that answers: every option a command's parser accepts is in that command's help
# (servesim CMD --help) and in its section of docs/servesim.1, and the help lists no
# option the parser does not take (the parsers check their names against the help tables
# as they run, so this runs each command rather than reading its source); every command has help; help lines stay short; a
# misspelled option of every command gets the right "did you mean"; and progress lines in
# a log are full lines, not '\r'-joined ones.
# Usage: help_checks.sh SERVESIM SRCDIR
set -u
bin=$1
src=$2
man="$src/docs/servesim.1"
pass=0
failn=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ok() { pass=$((pass + 1)); }
bad() {
    failn=$((failn + 1))
    echo "FAIL $*"
}

# The commands: those the overview lists (main.c runs no command its help table lacks).
cmds=$("$bin" help | awk '/^commands:/ {on = 1; next} /^$/ {on = 0} on {print $1}' | sort -u)
[ "$(echo "$cmds" | wc -w)" -ge 11 ] && ok || bad "commands: found only: $cmds"

# The parsers check the option names they compare against their command's help table as
# they run (sim/cli/help_int.h): an unknown option walks every comparison of a parser, and
# each listed option must reach its own branch. Either defect prints "internal:".
internal() { # ARGS...: the command must not report a parser/table mismatch
    "$@" >/dev/null 2>"$tmp/ierr" </dev/null
    if grep -q '^servesim: error: internal: ' "$tmp/ierr"; then
        bad "servesim ${*:2}: $(cat "$tmp/ierr")"
    else ok; fi
}
# The options a help text lists: the first word of its lines "  --option ...".
help_opts() { awk '/^  --[a-z]/ {print $1}' | sort -u; }

for c in $cmds; do
    if ! "$bin" "$c" --help >"$tmp/h" 2>"$tmp/err" || [ -s "$tmp/err" ]; then
        bad "$c --help: non-zero exit or stderr"
        continue
    fi
    grep -q "^usage: servesim $c " "$tmp/h" && grep -q '^example:$' "$tmp/h" && ok ||
        bad "$c --help: no usage line or no example"
    "$bin" help "$c" >"$tmp/h2" && "$bin" "$c" -h >"$tmp/h3" && cmp -s "$tmp/h" "$tmp/h2" &&
        cmp -s "$tmp/h" "$tmp/h3" && ok || bad "$c: help $c, $c -h and $c --help differ"
    long=$(awk 'length > 92' "$tmp/h")
    [ -z "$long" ] && ok || bad "$c --help: lines over 92 characters: $long"
    help_opts <"$tmp/h" >"$tmp/hopts"
    case $c in calibrate) pre="calibrate kernels" ;; *) pre=$c ;; esac
    # shellcheck disable=SC2086
    internal "$bin" $pre --zz-no-such-option
    # Each option alone: a missing value, a missing file, never "internal:".
    # shellcheck disable=SC2086
    while read -r o; do internal "$bin" $pre "$o"; done <"$tmp/hopts"
    # The manual page: a section ".SS NAME ..." holding every option (roff's \- as -).
    awk -v c="$c" '/^\.S[SH] / {on = ($0 ~ "^\\.SS \"?(\\\\fB)?" c "([ \"\\\\]|$)")} on' "$man" |
        sed 's/\\-/-/g; s/\\f[BIRP]//g' >"$tmp/mansec"
    if [ ! -s "$tmp/mansec" ]; then
        bad "$c: no section '.SS $c' in docs/servesim.1"
    else
        nm=""
        while read -r o; do grep -q -- "$o\b" "$tmp/mansec" || nm="$nm $o"; done <"$tmp/hopts"
        [ -z "$nm" ] && ok || bad "$c: docs/servesim.1 lacks:$nm"
    fi
    # A misspelling (two letters swapped) of each option is answered with the option.
    while read -r o; do
        [ ${#o} -ge 5 ] || continue
        typo="--${o:3:1}${o:2:1}${o:4}"
        case $c in
        calibrate) set -- calibrate kernels "$typo" ;;
        *) set -- "$c" "$typo" ;;
        esac
        "$bin" "$@" >/dev/null 2>"$tmp/err"
        grep -qx "servesim: error: $c: unknown option '$typo' (did you mean '$o'?)" "$tmp/err" && ok ||
            bad "$c $typo: wanted a suggestion of $o, got: $(cat "$tmp/err")"
    done <"$tmp/hopts"
done

# Options before the command: in the overview and in the manual page's OPTIONS.
"$bin" help >"$tmp/h"
help_opts <"$tmp/h" >"$tmp/hopts"
internal "$bin" --zz-no-such-option
while read -r o; do internal "$bin" "$o"; done <"$tmp/hopts"
sed 's/\\-/-/g; s/\\f[BIRP]//g' "$man" >"$tmp/man"
for o in $(cat "$tmp/hopts"); do grep -q -- "$o" "$tmp/man" && ok || bad "docs/servesim.1 lacks $o"; done
"$bin" --help | cmp -s - "$tmp/h" && ok || bad "--help and help differ"

# The manual page renders without warnings, when man is here.
if command -v man >/dev/null 2>&1 && command -v groff >/dev/null 2>&1; then
    out=$(MANWIDTH=80 man --warnings -l "$man" 2>&1 >/dev/null)
    [ -z "$out" ] && ok || bad "man -l docs/servesim.1 warns: $out"
fi

# Progress in a log: full lines, no '\r'; a quick sweep writes its final line only.
q="$src/scenarios/quickstart.yaml"
"$bin" sweep "$q" --vary workload.rate=4,8 --set workload.num_requests=20 --out "$tmp/sw" >/dev/null 2>"$tmp/err"
if ! grep -q $'\r' "$tmp/err" && grep -qx 'servesim sweep: 2/2 points' "$tmp/err"; then ok; else
    bad "sweep progress in a log: wanted the line 'servesim sweep: 2/2 points' and no CR:"
    cat -A "$tmp/err"
fi

# On a terminal (script(1) gives the command one): one line rewritten in place with '\r'.
if command -v script >/dev/null 2>&1; then
    script -qec "'$bin' sweep '$q' --vary workload.rate=4,8 --set workload.num_requests=20 --out '$tmp/swt'" /dev/null >"$tmp/tty" 2>&1
    if grep -q '^script: ' "$tmp/tty"; then
        echo "note: script(1) could not make a terminal; the terminal check is skipped"
    elif grep -q $'\rservesim sweep: 1/2 points\rservesim sweep: 2/2 points\r' "$tmp/tty"; then ok; else
        bad "sweep progress on a terminal: wanted '\\r' rewrites:"
        cat -A "$tmp/tty" | head -5
    fi
fi

echo "$pass passed, $failn failed"
[ "$failn" -eq 0 ]
