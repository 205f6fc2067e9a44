#!/usr/bin/env bash
# The run-length prefix cache against the per-block one, whole runs: servesim and
# servesim_refcache (the same program with tests/pcache_ref.c as its cache) run the same
# randomised scenarios (shared system prompts under chunked prefill and preemption, with
# cache-aware routing or not; multi-turn sessions; a disaggregated decode pool that caches)
# and must write the same summary and JSON, byte for byte.
#   tests/pcache_ref.sh SERVESIM SERVESIM_REFCACHE SOURCE_DIR
set -u
bin=$1
ref=$2
root=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
runs=0

# A scenario's text for seed $1 and variant $2: the engine or pools, then the workload.
scenario() {
    local s=$1 v=$2
    local tokens=$((1000 + (s * 617) % 3000)) prompts=$((5 + (s * 37) % 60))
    local mem=$(((s * 13) % 4 == 0 ? 30 : 50)) chunk=$((1024 * (1 + s % 4)))
    echo "model: llama-3.1-8b"
    echo "seed: $s"
    if [ "$v" = disagg ]; then
        echo "pools:"
        echo "  - {name: prefill, role: prefill, gpu: h100-sxm, replicas: 1}"
        echo "  - {name: decode, role: decode, gpu: h100-sxm, replicas: 2, gpu_memory_utilization: 0.$mem}"
        echo "disaggregation: {kv_link: {kind: infiniband}}"
    else
        echo "hardware: {gpu: h100-sxm, replicas: 2, gpu_memory_utilization: 0.$mem}"
        echo "engine: {max_num_seqs: 128, max_num_batched_tokens: $chunk}"
        # odd seeds: the router asks each replica how much of a prompt it holds
        if [ $((s % 2)) -eq 1 ]; then echo "router: prefix-affinity"; fi
    fi
    echo "workload:"
    echo "  input: {dist: lognormal, mean: 400, std: 300, min: 8, max: 3000}"
    echo "  output: {dist: lognormal, mean: 200, std: 150, min: 8, max: 1500}"
    if [ "$v" = shared ]; then
        echo "  num_requests: 4000"
        echo "  rate: $((20 + s * 7 % 50))"
        echo "  shared_prefix: {tokens: $tokens, prompts: $prompts, share: 0.9}"
    else # multi-turn sessions; a disaggregated pool gets fewer, slower
        echo "  rate: $([ "$v" = disagg ] && echo 3 || echo 4)"
        echo "  shared_prefix: {tokens: $tokens, prompts: $prompts}"
        echo "  sessions:"
        echo "    count: $([ "$v" = disagg ] && echo 200 || echo 300)"
        echo "    turns: {dist: uniform, min: 2, max: 10}"
        echo "    think_time_ms: {dist: lognormal, mean: 5000, std: 4000, min: 500, max: 60000}"
        echo "    message: {dist: lognormal, mean: 150, std: 120, min: 4, max: 1500}"
    fi
}

for s in 1 2 3 4 5 6 7 8; do
    for v in shared sessions disagg; do
        f="$tmp/$v-$s.yaml"
        scenario "$s" "$v" >"$f"
        "$bin" run "$f" --json "$tmp/a.json" >"$tmp/a.txt" 2>"$tmp/a.err"
        ra=$?
        "$ref" run "$f" --json "$tmp/b.json" >"$tmp/b.txt" 2>"$tmp/b.err"
        rb=$?
        runs=$((runs + 1))
        if [ $ra -ne 0 ] || [ $rb -ne 0 ]; then
            echo "pcache_ref: FAIL: $v seed $s: exit $ra and $rb: $(head -c 300 "$tmp/a.err")"
            fail=1
        elif ! cmp -s "$tmp/a.json" "$tmp/b.json" || ! cmp -s "$tmp/a.txt" "$tmp/b.txt"; then
            echo "pcache_ref: FAIL: $v seed $s: the outputs differ"
            diff "$tmp/a.txt" "$tmp/b.txt" | head -20
            fail=1
        elif ! grep -q '"prefix_cache_hits": *[1-9]' "$tmp/a.json"; then
            echo "pcache_ref: FAIL: $v seed $s: no prefix cache hits (the scenario tests nothing)"
            fail=1
        fi
    done
done
[ $fail -eq 0 ] && echo "pcache_ref: ok ($runs runs identical)"
exit $fail
