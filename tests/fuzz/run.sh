#!/usr/bin/env bash
# Run one fuzz target over its seeds and kept crash inputs (tests/fuzz/targets.sh).
#   run.sh replay BIN TARGET ROOT       BIN is the target with tests/fuzz/replay.c's main:
#                                       each input once (the ordinary test builds)
#   run.sh smoke BIN TARGET ROOT SECS   BIN is the libFuzzer build: fuzz for SECS seconds
#                                       from a fresh corpus of the seeds (the fuzz build's
#                                       ctest, tools/test); fails on any crash, leak,
#                                       timeout or out-of-memory input, left in a
#                                       temporary folder that is printed
set -uo pipefail
mode=$1 bin=$(cd "$(dirname "$2")" && pwd)/$(basename "$2") target=$3 root=$4
# shellcheck source=tests/fuzz/targets.sh
source "$root/tests/fuzz/targets.sh"
mapfile -t seeds < <(sv_fuzz_seeds "$root" "$target")
export SERVESIM_CATALOG="$root/models"
if [ "$mode" = replay ]; then
    [ ${#seeds[@]} -gt 0 ] || { echo "$target: no seed inputs" >&2; exit 1; }
    exec "$bin" "${seeds[@]}"
fi
secs=$5
work=$(mktemp -d "${TMPDIR:-/tmp}/servesim-$target-XXXXXX")
mkdir -p "$work/corpus"
for f in "${seeds[@]}"; do cp "$f" "$work/corpus/$(printf '%s' "$f" | cksum | cut -d' ' -f1)-$(basename "$f")"; done
(cd "$work" && "$bin" -max_total_time="$secs" -timeout=20 -rss_limit_mb=2048 -max_len=65536 \
    -print_final_stats=1 corpus) >"$work/log" 2>&1
rc=$?
execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$work/log" | grep -o '[0-9]*$' | tail -1)
found=$(find "$work" -maxdepth 1 -type f \( -name 'crash-*' -o -name 'leak-*' -o -name 'timeout-*' -o -name 'oom-*' \) | wc -l)
echo "$target: $secs s, ${execs:-?} executions, $found crash inputs (exit $rc)"
if [ "$rc" -ne 0 ] || [ "$found" -ne 0 ]; then
    grep -m5 -E 'ERROR|SUMMARY|runtime error' "$work/log"
    echo "inputs and log: $work"
    exit 1
fi
rm -rf "$work"
