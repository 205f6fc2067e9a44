#!/usr/bin/env bash
# tools/tp-step: the Llama-2-70B H100 decode step composed from Vidur's tables. The measured
# columns are sums of the tables' rows, checked by hand here; the model's columns follow the
# cost model and are only required to be there.
#   tests/tp_step.sh SERVESIM ROOT
set -euo pipefail
bin=$1
root=$2
out=$("$root/tools/tp-step" "$bin")
fail=0
# batch 1, TP 2: GEMMs 80 x (0.032 + 0.025 + 0.156 + 0.081) = 23.52 ms (Llama-2-70b-hf.csv,
# num_tokens 1, 2 workers); small ops 80 x 0.025 = 2.00 ms; all-reduces 160 x 7 us = 1.12 ms
# (the median of the 2-GPU rows at 10, 18 and 26 KiB: 7, 11 and 7 us).
# batch 1, TP 8: GEMMs 80 x 0.0875 = 7.00 ms; small ops 80 x 0.017 = 1.36 ms.
for want in "1 2 | 23.52 2.00 1.12 |" "1 8 | 7.00 1.36 "; do
    if echo "$out" | tr -s ' ' | grep -qF -- "$want"; then
        echo "ok   $want"
    else
        echo "FAIL tools/tp-step lacks '$want'"
        fail=1
    fi
done
rows=$(echo "$out" | grep -cE '^ +(1|64) +[248] \|')
[ "$rows" = 6 ] && echo "ok   6 rows" || { echo "FAIL tools/tp-step: $rows rows, expected 6"; fail=1; }
if "$root/tools/tp-step" "$bin" --set nosuchkey=1 >/dev/null 2>&1; then
    echo "FAIL tools/tp-step accepted an unknown --set key"
    fail=1
fi
exit $fail
