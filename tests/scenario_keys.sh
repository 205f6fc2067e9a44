#!/usr/bin/env bash
# docs/scenarios.md's key tables are the settings schema's (sim/cluster/schema.c): every
# block between "<!-- keys SECTION -->" and "<!-- end keys -->" must equal
# `servesim help keys --markdown SECTION`, and every section the schema prints must have
# its block. With --write, the blocks are rewritten from the schema instead (what to run
# after adding or changing a key).
# Usage: scenario_keys.sh SERVESIM SRCDIR [--write]
set -u
bin=$1
doc="$2/docs/scenarios.md"
write=${3:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$bin" help keys --markdown >"$tmp/all" || { echo "FAIL servesim help keys --markdown"; exit 1; }
sed -n 's/^<!-- keys \(.*\) -->$/\1/p' "$tmp/all" >"$tmp/want"
sed -n 's/^<!-- keys \(.*\) -->$/\1/p' "$doc" >"$tmp/have"
if [ "$write" = "--write" ]; then
    # Each block of the file replaced by the schema's block of the same section.
    awk -v all="$tmp/all" '
        BEGIN { while ((getline l < all) > 0) {
                    if (l ~ /^<!-- keys /) { s = l; sub(/^<!-- keys /, "", s); sub(/ -->$/, "", s) }
                    blk[s] = blk[s] l "\n" } }
        /^<!-- keys / { s = $0; sub(/^<!-- keys /, "", s); sub(/ -->$/, "", s); printf "%s", blk[s]; skip = 1; next }
        skip && /^<!-- end keys -->$/ { skip = 0; next }
        !skip { print }' "$doc" >"$tmp/new" && cat "$tmp/new" >"$doc"
fi
fail=0
missing=$(comm -23 <(sort "$tmp/want") <(sort "$tmp/have") | tr '\n' ' ')
extra=$(comm -13 <(sort "$tmp/want") <(sort "$tmp/have") | tr '\n' ' ')
[ -z "$missing" ] || { echo "FAIL docs/scenarios.md has no key table for: $missing"; fail=1; }
[ -z "$extra" ] || { echo "FAIL docs/scenarios.md has key tables the schema lacks: $extra"; fail=1; }
n=0
while read -r s; do
    awk -v s="$s" '$0 == "<!-- keys " s " -->" {on = 1} on {print} on && /^<!-- end keys -->$/ {exit}' \
        "$doc" >"$tmp/doc"
    "$bin" help keys --markdown "$s" >"$tmp/gen"
    if ! cmp -s "$tmp/doc" "$tmp/gen"; then
        echo "FAIL docs/scenarios.md's '$s' table differs from the schema (run tests/scenario_keys.sh SERVESIM . --write):"
        diff "$tmp/gen" "$tmp/doc" | head -10
        fail=1
    fi
    n=$((n + 1))
done <"$tmp/have"
# servesim help keys lists every key of every table.
rows=$(grep -c '^| `' "$tmp/all")
keys=$("$bin" help keys | grep -c '^  [a-z]')

[ "$rows" -eq "$keys" ] || { echo "FAIL help keys lists $keys keys, the tables $rows "; fail=1; }
echo "$n tables compared"
[ "$fail" -eq 0 ]
