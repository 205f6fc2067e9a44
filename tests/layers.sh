#!/usr/bin/env bash
# Checks that the source tree reads like the architecture: every file under sim/ and
# include/servesim/ sits in a layer folder, and includes only headers of its own layer or
# of a lower one; the engine and cost layers include no file-format header. Layers, lowest first (docs/architecture.md explains each):
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
# The engine and the cost model know no file format: no YAML, JSON or CSV header in them.
# The cost layer's readers of the catalog files are the exceptions, named here with the
# header each may include: the catalog (models/*.yaml), a model's config.json, and perf's
# engine settings (sv_parse_* of --set text, declared in yaml.h).
format_free=(engine cost)
format_allowed=("sim/cost/catalog.c yaml.h" "sim/cost/hfconfig.c cJSON.h" "sim/cost/perf.c yaml.h")
for l in "${format_free[@]}"; do
    for f in sim/"$l"/*.[ch] include/servesim/"$l"/*.h; do
        [ -e "$f" ] || continue
        while IFS= read -r inc; do
            h=$(basename "$inc")
            case "$h" in yaml.h | cJSON.h | jsonw_int.h | csv_int.h) ;; *) continue ;; esac
            ok=0
            for a in "${format_allowed[@]}"; do [ "$a" = "$f $h" ] && ok=1; done
            [ "$ok" -eq 1 ] && continue
            echo "layers: $f ($l) includes the format header $inc; the $l layer knows no file format"
            bad=1
        done < <(sed -n 's/^#include [<"]\([^">]*\)[">].*/\1/p' "$f")
    done
done
[ "$bad" -eq 0 ] && echo "layers: ok (${layers[*]}; ${format_free[*]} without format headers)"
exit "$bad"
