#!/usr/bin/env bash
# The batch-size trade-off against published measurements: TensorRT-LLM's static-batch
# runs of LLaMA-2 7B FP8 on one H100 (tests/data/llama-2-7b/trtllm-v0.5-static.yaml, the
# figures and their source in docs/lab.md, "The batch-size table"). Each simulated figure
# within the stated band of the measured one. Usage: batch_measured.sh SERVESIM SRCDIR
set -u
bin=$1
src=$2
scen="$src/tests/data/llama-2-7b/trtllm-v0.5-static.yaml"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fails=0
# check NAME MEASURED LO_PCT HI_PCT KEY -- SETS...: servesim's KEY from the JSON within
# [LO, HI] percent of MEASURED
check() {
    local name=$1 measured=$2 lo=$3 hi=$4 key=$5
    shift 6
    "$bin" run "$scen" --quiet --json "$tmp/r.json" "$@" 2>"$tmp/err" ||
        { echo "FAIL $name: $(cat "$tmp/err")"; fails=$((fails + 1)); return; }
    local v
    v=$(sed -n "s/.*\"$key\": *\([0-9.eE+-]*\).*/\1/p" "$tmp/r.json" | head -1)
    if ! awk -v v="$v" -v m="$measured" -v lo="$lo" -v hi="$hi" \
        'BEGIN { e = 100 * (v / m - 1); exit !(v != "" && e >= lo && e <= hi) }'; then
        echo "FAIL $name: servesim $key = '$v', measured $measured, wanted within [$lo%, $hi%]"
        fails=$((fails + 1))
    fi
}
check batch64_out_tok_s 9193 -5 10 output_throughput --
check batch768_out_tok_s 19694 -12 5 output_throughput -- --set engine.max_num_seqs=768 \
    --set engine.max_num_batched_tokens=131072 --set workload.num_requests=2304
b1="--set engine.max_num_seqs=1 --set workload.num_requests=3 --set workload.output.value=2 --set workload.max_concurrency=1"
# shellcheck disable=SC2086
check batch1_ttft_128 7 -45 -20 median_ttft_ms -- $b1
# shellcheck disable=SC2086
check batch1_ttft_2048 36 -35 -15 median_ttft_ms -- $b1 --set workload.input.value=2048
[ "$fails" -eq 0 ] || exit 1
echo "batch_measured: all checks passed"
