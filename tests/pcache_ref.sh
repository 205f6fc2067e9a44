#!/usr/bin/env bash
# The run-length prefix cache against the per-block one, whole runs: servesim and
# servesim_refcache (the same program with tests/pcache_ref.c as its cache) run the same
# randomised scenarios (shared system prompts under chunked prefill and preemption,
# multi-turn sessions, a disaggregated decode pool that caches) and must write the same
# summary and JSON, byte for byte.
#   tests/pcache_ref.sh SERVESIM SERVESIM_REFCACHE SOURCE_DIR
set -u
bin=$1
ref=$2
root=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0
runs=0

# A scenario's text for seed $1 and variant $2.
scenario() {
    local s=$1 v=$2
    local tokens=$((1000 + (s * 617) % 3000)) prompts=$((5 + (s * 37) % 60))
    local mem=$(((s * 13) % 4 == 0 ? 30 : 50)) chunk=$((1024 * (1 + s % 4)))
    case $v in
    shared)
        cat <<YAML
model: llama-3.1-8b
seed: $s
hardware: {gpu: h100-sxm, replicas: 2, gpu_memory_utilization: 0.$mem}
engine: {max_num_seqs: 128, max_num_batched_tokens: $chunk}
workload:
  num_requests: 4000
  rate: $((20 + s * 7 % 50))
  input: {dist: lognormal, mean: 300, std: 200, min: 8, max: 3000}
  output: {dist: lognormal, mean: 200, std: 150, min: 8, max: 1500}
  shared_prefix: {tokens: $tokens, prompts: $prompts, share: 0.9}
YAML
        ;;
    sessions)
        cat <<YAML
model: llama-3.1-8b
seed: $s
hardware: {gpu: h100-sxm, replicas: 2, gpu_memory_utilization: 0.$mem}
engine: {max_num_seqs: 128, max_num_batched_tokens: $chunk}
workload:
  rate: 4
  input: {dist: lognormal, mean: 400, std: 300, min: 8, max: 3000}
  output: {dist: lognormal, mean: 250, std: 150, min: 8, max: 1500}
  shared_prefix: {tokens: $tokens, prompts: $prompts}
  sessions:
    count: 300
    turns: {dist: uniform, min: 2, max: 10}
    think_time_ms: {dist: lognormal, mean: 5000, std: 4000, min: 500, max: 60000}
    message: {dist: lognormal, mean: 150, std: 120, min: 4, max: 1500}
YAML
        ;;
    disagg)
        cat <<YAML
model: llama-3.1-8b
seed: $s
pools:
  - {name: prefill, role: prefill, gpu: h100-sxm, replicas: 1}
  - {name: decode, role: decode, gpu: h100-sxm, replicas: 2, gpu_memory_utilization: 0.$mem}
disaggregation: {kv_link: {kind: infiniband}}
workload:
  rate: 3
  input: {dist: lognormal, mean: 600, std: 400, min: 8, max: 4000}
  output: {dist: lognormal, mean: 200, std: 150, min: 8, max: 1500}
  shared_prefix: {tokens: $tokens, prompts: $prompts}
  sessions:
    count: 200
    turns: {dist: uniform, min: 2, max: 8}
    think_time_ms: {dist: lognormal, mean: 3000, std: 2000, min: 500, max: 30000}
    message: {dist: lognormal, mean: 150, std: 120, min: 4, max: 1500}
YAML
        ;;
    esac
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
