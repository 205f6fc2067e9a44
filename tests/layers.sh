#!/usr/bin/env bash
# Checks that the source tree reads like the architecture: every file under sim/ and
# include/servesim/ sits in a layer folder, and includes only headers of its own layer or
# of a lower one. Layers, lowest first (docs/architecture.md explains each):
set -euo pipefail
root=${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
layers=(base cost traffic metrics engine cluster studies report serve lab cli)
rank() {
    local i
    for i in "${!layers[@]}"; do [ "${layers[$i]}" = "$1" ] && { echo "$i"; return; }; done
    echo -1
}
bad=0
cd "$root"
for f in sim/*.[ch] include/servesim/*.h; do
    [ -e "$f" ] || continue
    echo "layers: $f sits outside the layer folders (${layers[*]})"
    bad=1
done
for f in sim/*/*.[ch] include/servesim/*/*.h; do
    own=$(basename "$(dirname "$f")")
    r=$(rank "$own")
    if [ "$r" -lt 0 ]; then
        echo "layers: $f is in '$own', which is not a layer (${layers[*]})"
        bad=1
        continue
    fi
    while IFS= read -r inc; do
        l=${inc%%/*}
        [ "$l" = servesim ] && { inc=${inc#servesim/}; l=${inc%%/*}; }
        case "$l" in ../*) continue ;; esac
        lr=$(rank "$l")
        if [ "$lr" -lt 0 ]; then
            echo "layers: $f includes \"$inc\", which is in no layer folder"
            bad=1
        elif [ "$lr" -gt "$r" ]; then
            echo "layers: $f ($own) includes $inc from the higher layer '$l'"
            bad=1
        fi
    done < <(sed -n 's/^#include "\([^"]*\)".*/\1/p' "$f")
done
[ "$bad" -eq 0 ] && echo "layers: ok (${layers[*]})"
exit "$bad"
