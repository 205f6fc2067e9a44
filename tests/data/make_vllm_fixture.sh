#!/usr/bin/env bash
# Regenerates vllm_result_llama8b.json, the stand-in for a real `vllm bench serve` result
# used by docs/compare.md and tests/cli_checks.sh. It is NOT a measurement: servesim runs
# the quickstart (Llama-3.1-8B, one H100) under a slower cost setting than the catalog's
# (memory efficiency 0.6, compute efficiency 0.45, 2.5 ms per step) for 50 requests, and
# the result is relabelled as vLLM would write it: backend "vllm", endpoint_type "openai",
# the Hugging Face model id, a fixed date, start times as absolute clock readings (a
# monotonic clock's seconds since boot, as the client's time.perf_counter() gives), and
# servesim's own block removed.
# Usage: tests/data/make_vllm_fixture.sh build/servesim
set -euo pipefail
bin=${1:-build/servesim}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
"$bin" run "$here/../../scenarios/quickstart.yaml" --quiet --json "$tmp" --detailed \
    --set seed=7 --set workload.num_requests=50 --set workload.rate=8 \
    --set hardware.memory_efficiency=0.6 --set hardware.compute_efficiency=0.45 \
    --set hardware.iteration_overhead_ms=2.5
python3 - "$tmp" "$here/vllm_result_llama8b.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
r.pop("servesim")
r.update(date="20261130-091502", endpoint_type="openai", backend="vllm", label=None,
         model_id="meta-llama/Llama-3.1-8B-Instruct",
         tokenizer_id="meta-llama/Llama-3.1-8B-Instruct")
r["start_times"] = [352817.5 + t for t in r["start_times"]]
json.dump(r, open(sys.argv[2], "w"))
PY
